/*
 * test_json.c — collkit_util.h's writers and test hook: the JSON writer
 * (layouts, nesting, escaping, numbers, non-finite as null, write errors),
 * the Chrome trace file (its exact lines, which colldraw reads one by one),
 * and COLLKIT_FAULT (parsing, matching, and a child process stopped or
 * killed at exactly the Nth hit, once-file included). No MPI.
 */
#define _POSIX_C_SOURCE 200809L   /* setenv, open_memstream, fmemopen */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "collkit_util.h"
#include "check.h"

/* What a writer wrote, as a string (freed by the caller). */
typedef struct { FILE *f; char *buf; size_t len; } sink;
static void sink_open(sink *s) { s->buf = NULL; s->len = 0; s->f = open_memstream(&s->buf, &s->len); }
static char *sink_close(sink *s) { fclose(s->f); return s->buf; }

static void test_compact(void)
{
    sink s;
    sink_open(&s);
    ck_json j;
    ck_json_open(&j, s.f, CK_JSON_COMPACT);
    ck_json_str(&j, "type", "epoch");
    ck_json_int(&j, "n", -3);
    ck_json_uint(&j, "big", 18446744073709551615ull);
    ck_json_num(&j, "loss", 0.1);
    ck_json_num(&j, "nan", NAN);
    ck_json_num(&j, "inf", -INFINITY);
    ck_json_bool(&j, "ok", 1);
    ck_json_null(&j, "none");
    ck_json_obj(&j, "per");
    ck_json_arr(&j, "labels");
    ck_json_str(&j, NULL, "a\"b\\c\nd\te\x01" "f\xc3\xa9");
    ck_json_str(&j, NULL, NULL);
    ck_json_end(&j);
    ck_json_end(&j);
    ck_json_end(&j);
    CHECK(!ck_json_failed(&j), "no failure");
    char *out = sink_close(&s);
    const char *want = "{\"type\":\"epoch\",\"n\":-3,\"big\":18446744073709551615,\"loss\":0.1,\"nan\":null,"
                       "\"inf\":null,\"ok\":true,\"none\":null,\"per\":{\"labels\":[\"a\\\"b\\\\c\\nd\\te\\u0001f\xc3\xa9\",\"\"]}}\n";
    CHECK(!strcmp(out, want), "compact record:\n got %s\nwant %s", out, want);
    free(out);
}

static void test_spaced(void)
{
    /* collbench --json's layout: a line per row, two spaces a level */
    sink s;
    sink_open(&s);
    ck_json j;
    ck_json_open(&j, s.f, CK_JSON_SPACED);
    ck_json_break(&j);
    ck_json_int(&j, "ranks", 4);
    ck_json_str(&j, "op", "sum");
    ck_json_break(&j);
    ck_json_obj(&j, "model");
    ck_json_num_g(&j, "alpha_us", 1.5, 6);
    ck_json_num_g(&j, "beta", NAN, 6);
    ck_json_end(&j);
    ck_json_break(&j);
    ck_json_arr(&j, "results");
    for (int i = 0; i < 2; i++) {
        ck_json_break(&j);
        ck_json_obj(&j, NULL);
        ck_json_num_f(&j, "time_us", 12.34567, 3);
        ck_json_end(&j);
    }
    ck_json_break(&j);
    ck_json_end(&j);
    ck_json_arr(&j, "empty");
    ck_json_break(&j);
    ck_json_end(&j);
    ck_json_break(&j);
    ck_json_end(&j);
    char *out = sink_close(&s);
    const char *want = "{\n  \"ranks\": 4, \"op\": \"sum\",\n  \"model\": {\"alpha_us\": 1.5, \"beta\": null},\n"
                       "  \"results\": [\n    {\"time_us\": 12.346},\n    {\"time_us\": 12.346}\n  ], \"empty\": [\n  ]\n}\n";
    CHECK(!strcmp(out, want), "spaced file:\n got [%s]\nwant [%s]", out, want);
    free(out);
}

static void test_errors(void)
{
    /* a full device: the writes fail, and the writer says so */
    char tiny[8];
    FILE *f = fmemopen(tiny, sizeof tiny, "w");
    setvbuf(f, NULL, _IONBF, 0);
    ck_json j;
    ck_json_open(&j, f, CK_JSON_COMPACT);
    ck_json_str(&j, "a long key", "a longer value than eight bytes");
    ck_json_end(&j);
    CHECK(ck_json_failed(&j), "a write past the end of the file is a failure");
    fclose(f);

    sink s;
    sink_open(&s);
    ck_json_open(&j, s.f, CK_JSON_COMPACT);
    for (int i = 0; i < CK_JSON_MAX_DEPTH + 1; i++) ck_json_obj(&j, "x");
    CHECK(ck_json_failed(&j), "nesting deeper than the writer counts is a failure");
    ck_json_open(&j, s.f, CK_JSON_COMPACT);
    ck_json_end(&j);
    CHECK(!ck_json_failed(&j), "open and end: fine");
    ck_json_end(&j);
    CHECK(ck_json_failed(&j), "an end with nothing open is a failure");
    free(sink_close(&s));
}

static void test_chrome(void)
{
    sink s;
    sink_open(&s);
    ck_chrome c;
    ck_chrome_open(&c, s.f, "ms");
    ck_json_str(&c.j, "program", "tagtrain");
    ck_json_int(&c.j, "ranks", 2);
    ck_chrome_events(&c);
    ck_chrome_meta_str(&c, "process_name", 0, -1, "name", "rank 0");
    ck_chrome_meta_int(&c, "thread_sort_index", 1, 3, "sort_index", 1002);
    ck_json *a = ck_chrome_complete(&c, "layer 3", "layer", 0, 1, 12345, 6000);
    ck_json_uint(a, "bytes", 64);
    ck_chrome_event_end(&c);
    a = ck_chrome_instant(&c, "bucket 2 launched", "launch", 1, 1, -1500);
    ck_json_int(a, "call", 7);
    ck_chrome_event_end(&c);
    CHECK(ck_chrome_close(&c) == 0, "closed without a failure");
    char *out = sink_close(&s);
    const char *want =
        "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"program\":\"tagtrain\",\"ranks\":2},\n"
        "\"traceEvents\":[\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"rank 0\"}},\n"
        "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":3,\"args\":{\"sort_index\":1002}},\n"
        "{\"name\":\"layer 3\",\"cat\":\"layer\",\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":12.345,\"dur\":6.000,"
        "\"args\":{\"bytes\":64}},\n"
        "{\"name\":\"bucket 2 launched\",\"cat\":\"launch\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":-1.500,"
        "\"args\":{\"call\":7}}\n"
        "]}\n";
    CHECK(!strcmp(out, want), "trace file:\n got [%s]\nwant [%s]", out, want);
    free(out);

    sink_open(&s);
    ck_chrome_open(&c, s.f, "ns");
    ck_chrome_events(&c);
    ck_chrome_close(&c);
    out = sink_close(&s);
    CHECK(!strcmp(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{},\n\"traceEvents\":[\n]}\n"), "an empty trace: [%s]", out);
    free(out);
}

static void test_fault_parse(void)
{
    ck_fault_spec f;
    char err[256];
    CHECK(ck_fault_parse("shm/3:2:KILL", &f, err, sizeof err) == 0 && !strcmp(f.hook, "shm/3") && f.rank == 2 &&
              f.sig == SIGKILL && f.nth == 1 && !f.once[0], "shm/3:2:KILL: %s", err);
    CHECK(ck_fault_parse("phase/train (epoch 3):1:STOP:2:once=/tmp/a:b", &f, err, sizeof err) == 0 &&
              !strcmp(f.hook, "phase/train (epoch 3)") && f.rank == 1 && f.sig == SIGSTOP && f.nth == 2 &&
              !strcmp(f.once, "/tmp/a:b"), "a phase, N and a once-file holding a colon: %s", err);
    CHECK(ck_fault_parse("ckpt/write:*:KILL:3", &f, err, sizeof err) == 0 && f.rank == -1 && f.nth == 3,
          "any rank, the third hit: %s", err);
    CHECK(ck_fault_parse("ckpt/epoch:0:KILL:once=/x", &f, err, sizeof err) == 0 && f.nth == 1 && !strcmp(f.once, "/x"),
          "a once-file without N: %s", err);
    static const struct { const char *spec, *says; } bad[] = {
        {"", "HOOK:RANK:SIG"}, {"shm/3", "HOOK:RANK:SIG"}, {"shm/3:2", "HOOK:RANK:SIG"},
        {"shm/9:0:KILL", "no hook named 'shm/9'"}, {"load:0:KILL", "no hook named 'load'"},
        {"ckpt/write:x:KILL", "neither a rank nor *"}, {"ckpt/write:-1:KILL", "neither a rank nor *"},
        {"ckpt/write:0:TERM", "neither STOP nor KILL"}, {"ckpt/write:0:KILL:0", "at least 1"},
        {"ckpt/write:0:KILL:two", "at least 1"}, {"ckpt/write:0:KILL:2:later=x", "once=FILE"},
        {"ckpt/write:0:KILL:once=", "once=FILE"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(ck_fault_parse(bad[i].spec, &f, err, sizeof err) == -1 && strstr(err, bad[i].says),
              "'%s' refused saying '%s': [%s]", bad[i].spec, bad[i].says, err);
    }
    ck_fault_parse("phase/train:1:STOP", &f, err, sizeof err);
    CHECK(ck_fault_matches(&f, "phase/train (epoch 2)", 1), "a phase matches by the start of its name");
    CHECK(!ck_fault_matches(&f, "phase/train (epoch 2)", 0), "another rank does not match");
    CHECK(!ck_fault_matches(&f, "phase/load", 1), "another phase does not match");
    ck_fault_parse("shm/3:*:KILL", &f, err, sizeof err);
    CHECK(ck_fault_matches(&f, "shm/3", 5) && !ck_fault_matches(&f, "shm/30", 5) && !ck_fault_matches(&f, "shm/2", 5),
          "an exact hook matches itself only, on any rank with *");
    size_t n;
    const ck_fault_hook *h = ck_fault_hooks(&n);
    int shm = 0;
    for (size_t i = 0; i < n; i++) shm += !strncmp(h[i].name, "shm/", 4) && h[i].where && h[i].where[0];
    CHECK(n >= 10 && shm == 5, "the table lists the hooks, each with its moment (%zu, %d shm)", n, shm);
}

/* Run `hits` passes of `point` as rank `rank` in a child under COLLKIT_FAULT=spec;
 * how it ended: the signal that ended it, 100 + the hits passed when it
 * exited, or -SIG when it stopped (then it is killed). */
static int child_run(const char *spec, const char *point, int rank, int hits)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("COLLKIT_FAULT", spec, 1);
        int i = 0;
        for (; i < hits; i++) ck_fault_point(point, rank);
        _exit(100 + i);
    }
    int st;
    waitpid(pid, &st, WUNTRACED);
    if (WIFSTOPPED(st)) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return -SIGSTOP;
    }
    return WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st);
}

static void test_fault_point(void)
{
    CHECK(child_run("shm/3:1:KILL", "shm/3", 1, 4) == SIGKILL, "killed at the first hit");
    CHECK(child_run("shm/3:0:KILL", "shm/3", 1, 4) == 104, "another rank runs on");
    CHECK(child_run("shm/3:1:KILL", "shm/2", 1, 4) == 104, "another point runs on");
    CHECK(child_run("phase/save:2:STOP", "phase/save (epoch 2)", 2, 3) == -SIGSTOP, "stopped entering the phase");
    CHECK(child_run("ckpt/write:*:KILL:3", "ckpt/write", 5, 2) == 102, "two hits of three: runs on");
    CHECK(child_run("ckpt/write:*:KILL:3", "ckpt/write", 5, 3) == SIGKILL, "the third hit kills");
    CHECK(child_run("shm/3:1:TERM", "shm/3", 1, 1) == 2, "a malformed COLLKIT_FAULT: exit status 2");
    char once[] = "/tmp/collkit-fault-XXXXXX";
    int fd = mkstemp(once);
    if (fd >= 0) close(fd);
    unlink(once);
    char spec[128];
    snprintf(spec, sizeof spec, "ckpt/epoch:0:KILL:once=%s", once);
    CHECK(child_run(spec, "ckpt/epoch", 0, 2) == SIGKILL, "the run that creates the once-file is killed");
    CHECK(access(once, F_OK) == 0, "and the file is there");
    CHECK(child_run(spec, "ckpt/epoch", 0, 2) == 102, "the next run (the file there) runs on");
    unlink(once);
}

int main(void)
{
    test_compact();
    test_spaced();
    test_errors();
    test_chrome();
    test_fault_parse();
    test_fault_point();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
