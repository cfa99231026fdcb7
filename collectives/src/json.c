/*
 * json.c — see collkit_util.h: the JSON writer and the Chrome trace-event
 * file written with it.
 */
#include <math.h>
#include <stdio.h>
#include "collkit_util.h"

/* ------------------------------------------------------------ JSON */

/* Every write goes through these: the first failure is remembered, so the
 * caller asks once at the end instead of after every member. */
static void put_c(ck_json *j, int c)
{
    if (fputc(c, j->f) == EOF) j->failed = 1;
}

static void put_s(ck_json *j, const char *s)
{
    if (fputs(s, j->f) == EOF) j->failed = 1;
}

static void put_string(ck_json *j, const char *s)
{
    char esc[8];
    put_c(j, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') snprintf(esc, sizeof esc, "\\%c", *p);
        else if (*p == '\n') snprintf(esc, sizeof esc, "\\n");
        else if (*p == '\t') snprintf(esc, sizeof esc, "\\t");
        else if (*p < 0x20) snprintf(esc, sizeof esc, "\\u%04x", *p);
        else { put_c(j, *p); continue; }   /* UTF-8 passes as it is */
        put_s(j, esc);
    }
    put_c(j, '"');
}

/* A due line break: the newline, then two spaces a level (spaced layout). */
static void line_break(ck_json *j, int level)
{
    if (!j->brk) return;
    j->brk = 0;
    put_c(j, '\n');
    for (int i = 0; j->spaced && i < 2 * level; i++) put_c(j, ' ');
}

/* The comma and the key before a member. */
static void member(ck_json *j, const char *key)
{
    if (j->depth < 0) { j->failed = 1; return; }   /* after the outermost end */
    if (j->count[j->depth]++) {
        put_c(j, ',');
        if (j->spaced && !j->brk) put_c(j, ' ');
    }
    line_break(j, j->depth + 1);
    if (key) {
        put_string(j, key);
        put_s(j, j->spaced ? ": " : ":");
    }
}

static void open_level(ck_json *j, char open, char close)
{
    put_c(j, open);
    if (j->depth + 1 < CK_JSON_MAX_DEPTH) j->depth++;
    else j->failed = 1;   /* deeper than the writer counts: the commas would be wrong */
    j->count[j->depth] = 0;
    j->close[j->depth] = close;
}

void ck_json_open(ck_json *j, FILE *f, int layout)
{
    *j = (ck_json){.f = f, .depth = -1, .spaced = layout == CK_JSON_SPACED};
    open_level(j, '{', '}');
}

void ck_json_str(ck_json *j, const char *key, const char *v) { member(j, key); put_string(j, v ? v : ""); }
void ck_json_bool(ck_json *j, const char *key, int v) { member(j, key); put_s(j, v ? "true" : "false"); }
void ck_json_null(ck_json *j, const char *key) { member(j, key); put_s(j, "null"); }
void ck_json_raw(ck_json *j, const char *key, const char *text) { member(j, key); put_s(j, text); }

void ck_json_int(ck_json *j, const char *key, long long v)
{
    member(j, key);
    if (fprintf(j->f, "%lld", v) < 0) j->failed = 1;
}

void ck_json_uint(ck_json *j, const char *key, unsigned long long v)
{
    member(j, key);
    if (fprintf(j->f, "%llu", v) < 0) j->failed = 1;
}

/* A number as printf's %.<prec><conv> ('g' or 'f'); null when not finite. */
static void number(ck_json *j, const char *key, double v, int prec, char conv)
{
    member(j, key);
    if (!isfinite(v)) put_s(j, "null");
    else if ((conv == 'g' ? fprintf(j->f, "%.*g", prec, v) : fprintf(j->f, "%.*f", prec, v)) < 0) j->failed = 1;
}

void ck_json_num(ck_json *j, const char *key, double v) { number(j, key, v, 9, 'g'); }
void ck_json_num_g(ck_json *j, const char *key, double v, int digits) { number(j, key, v, digits, 'g'); }
void ck_json_num_f(ck_json *j, const char *key, double v, int decimals) { number(j, key, v, decimals, 'f'); }

void ck_json_obj(ck_json *j, const char *key) { member(j, key); open_level(j, '{', '}'); }
void ck_json_arr(ck_json *j, const char *key) { member(j, key); open_level(j, '[', ']'); }
void ck_json_break(ck_json *j) { j->brk = 1; }

void ck_json_end(ck_json *j)
{
    if (j->depth < 0) { j->failed = 1; return; }
    line_break(j, j->depth);
    put_c(j, j->close[j->depth]);
    if (j->depth == 0) put_c(j, '\n');
    j->depth--;
}

int ck_json_failed(const ck_json *j) { return j->failed || ferror(j->f) ? 1 : 0; }

/* ------------------------------------------------------------ Chrome trace */

void ck_chrome_open(ck_chrome *c, FILE *f, const char *unit)
{
    ck_json_open(&c->j, f, CK_JSON_COMPACT);
    ck_json_str(&c->j, "displayTimeUnit", unit);
    ck_json_obj(&c->j, "otherData");
}

void ck_chrome_events(ck_chrome *c)
{
    ck_json_end(&c->j);   /* otherData */
    ck_json_break(&c->j);
    ck_json_arr(&c->j, "traceEvents");
}

/* {"name":NAME : the front every event shares, on a line of its own. */
static ck_json *event(ck_chrome *c, const char *name)
{
    ck_json *j = &c->j;
    ck_json_break(j);
    ck_json_obj(j, NULL);
    ck_json_str(j, "name", name);
    return j;
}

/* A metadata event up to its "args":{ */
static ck_json *meta(ck_chrome *c, const char *what, int pid, int tid)
{
    ck_json *j = event(c, what);
    ck_json_str(j, "ph", "M");
    ck_json_int(j, "pid", pid);
    if (tid >= 0) ck_json_int(j, "tid", tid);
    ck_json_obj(j, "args");
    return j;
}

void ck_chrome_meta_str(ck_chrome *c, const char *what, int pid, int tid, const char *key, const char *value)
{
    ck_json_str(meta(c, what, pid, tid), key, value);
    ck_chrome_event_end(c);
}

void ck_chrome_meta_int(ck_chrome *c, const char *what, int pid, int tid, const char *key, long long value)
{
    ck_json_int(meta(c, what, pid, tid), key, value);
    ck_chrome_event_end(c);
}

/* Nanoseconds as microseconds with three decimals, exactly. */
static void micros(ck_json *j, const char *key, long long ns)
{
    char text[32];
    unsigned long long a = ns < 0 ? 0ull - (unsigned long long)ns : (unsigned long long)ns;
    snprintf(text, sizeof text, "%s%llu.%03llu", ns < 0 ? "-" : "", a / 1000, a % 1000);
    ck_json_raw(j, key, text);
}

static ck_json *timed(ck_chrome *c, const char *name, const char *cat, const char *ph, int pid, int tid,
                      long long ts_ns)
{
    ck_json *j = event(c, name);
    ck_json_str(j, "cat", cat);
    ck_json_str(j, "ph", ph);
    if (ph[0] == 'i') ck_json_str(j, "s", "t");   /* an instant on its thread's lane */
    ck_json_int(j, "pid", pid);
    ck_json_int(j, "tid", tid);
    micros(j, "ts", ts_ns);
    return j;
}

ck_json *ck_chrome_complete(ck_chrome *c, const char *name, const char *cat, int pid, int tid, long long ts_ns,
                            long long dur_ns)
{
    ck_json *j = timed(c, name, cat, "X", pid, tid, ts_ns);
    micros(j, "dur", dur_ns);
    ck_json_obj(j, "args");
    return j;
}

ck_json *ck_chrome_instant(ck_chrome *c, const char *name, const char *cat, int pid, int tid, long long ts_ns)
{
    ck_json *j = timed(c, name, cat, "i", pid, tid, ts_ns);
    ck_json_obj(j, "args");
    return j;
}

void ck_chrome_event_end(ck_chrome *c)
{
    ck_json_end(&c->j);   /* args */
    ck_json_end(&c->j);   /* the event */
}

int ck_chrome_close(ck_chrome *c)
{
    ck_json_break(&c->j);
    ck_json_end(&c->j);   /* traceEvents */
    ck_json_end(&c->j);   /* the file's object, and its newline */
    return ck_json_failed(&c->j) ? -1 : 0;
}
