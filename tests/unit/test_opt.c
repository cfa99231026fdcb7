/*
 * test_opt.c — the option table (collkit_util.h: ck_opt_*): values of every
 * type land in their fields, bad values and unknown options are refused with
 * the reason, --help is told apart, the last value wins, --help's rows show
 * the defaults, and two configurations are compared field by field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../check.h"
#include "collkit_util.h"

typedef struct {
    int quiet, n, mode;
    double lr;
    float drop;
    uint64_t bytes;
    const char *file;
    int pair[2];
} opts;

static int parse_pair(const char *v, void *field, char *err, size_t cap)
{
    int *p = field;
    if (sscanf(v, "%d,%d", &p[0], &p[1]) != 2) {
        snprintf(err, cap, "want A,B");
        return -1;
    }
    return 0;
}

static const ck_opt table[] = {
    {.name = "things", .type = CK_OPT_HEADING},
    {"--quiet", 'q', CK_OPT_FLAG, offsetof(opts, quiet), .help = "say less"},
    {"--count", 'n', CK_OPT_INT, offsetof(opts, n), .lo = 1, .hi = 100, .help = "how many (%D)", .flags = CK_OPT_MODEL},
    {"--mode", 0, CK_OPT_CHOICE, offsetof(opts, mode), .choices = "mpi|shm|cuda-ipc", .help = "transport (%D)"},
    {"--lr", 0, CK_OPT_DOUBLE, offsetof(opts, lr), .lo = 0, .hi = 10, .arg = "F", .help = "rate\nsecond line",
     .flags = CK_OPT_MODEL},
    {"--dropout", 0, CK_OPT_FLOAT, offsetof(opts, drop), .lo = 0, .hi = 0.99, .help = "(%D)"},
    {"--bytes", 'b', CK_OPT_SIZE, offsetof(opts, bytes), .hi = 1 << 30, .help = "size"},
    {"--a-very-long-option-name", 0, CK_OPT_STR, offsetof(opts, file), .arg = "FILE", .help = "where"},
    {"--pair", 0, CK_OPT_CUSTOM, offsetof(opts, pair), .size = sizeof(int[2]), .parse = parse_pair, .help = "two",
     .flags = CK_OPT_MODEL},
    {"--secret", 0, CK_OPT_FLAG, offsetof(opts, quiet), .flags = CK_OPT_HIDE},
    {NULL},
};
enum { NROWS = sizeof table / sizeof table[0] };

static int run(opts *o, const char **given, char *err, int argc, ...)
{
    char *argv[32] = {"prog"};
    va_list ap;
    va_start(ap, argc);
    for (int i = 1; i < argc; i++) argv[i] = va_arg(ap, char *);
    va_end(ap);
    *o = (opts){.n = 7, .mode = 1, .lr = 0.5, .drop = 0.25f};
    if (given) memset(given, 0, NROWS * sizeof *given);
    return ck_opt_parse(table, argc, argv, o, given, err, 256);
}

int main(void)
{
    opts o;
    char err[256];
    const char *given[NROWS];

    CHECK(run(&o, given, err, 1) == CK_OPT_RUN && o.n == 7 && o.mode == 1 && !given[2], "no arguments: defaults kept");
    CHECK(run(&o, given, err, 15, "--quiet", "-n", "12", "--mode", "cuda-ipc", "--lr=2.5", "--dropout", "0.5",
              "-b", "4K", "--a-very-long-option-name", "x.csv", "--pair", "3,4") == CK_OPT_RUN,
          "every type parses: %s", err);
    CHECK(o.quiet == 1 && o.n == 12 && o.mode == 2 && o.lr == 2.5 && o.drop == 0.5f && o.bytes == 4096 &&
              !strcmp(o.file, "x.csv") && o.pair[0] == 3 && o.pair[1] == 4,
          "values in their fields");
    CHECK(given[1] && !strcmp(given[1], "1") && given[2] && !strcmp(given[2], "12") && !given[9],
          "given[] records what was given, row by row");
    CHECK(run(&o, given, err, 5, "-n", "3", "--count", "9") == CK_OPT_RUN && o.n == 9 && !strcmp(given[2], "9"),
          "the last value wins");

    CHECK(run(&o, NULL, err, 3, "--count", "0") == CK_OPT_BAD && strstr(err, "--count '0'") && strstr(err, "between"),
          "out of range named: %s", err);
    CHECK(run(&o, NULL, err, 3, "-n", "0") == CK_OPT_BAD && strstr(err, "-n '0'") && !strstr(err, "--count"),
          "a short option is named as it was given: %s", err);
    CHECK(run(&o, NULL, err, 2, "-n") == CK_OPT_BAD && !strcmp(err, "-n needs a value"), "short, no value: %s", err);
    CHECK(run(&o, NULL, err, 3, "--mode", "tcp") == CK_OPT_BAD && strstr(err, "want mpi, shm or cuda-ipc"),
          "a bad choice lists the choices: %s", err);
    CHECK(run(&o, NULL, err, 2, "--lx") == CK_OPT_BAD && strstr(err, "unknown option '--lx'"), "unknown: %s", err);
    CHECK(run(&o, NULL, err, 2, "--lr") == CK_OPT_BAD && strstr(err, "--lr needs a value"), "missing value: %s", err);
    CHECK(run(&o, NULL, err, 2, "stray") == CK_OPT_BAD && strstr(err, "unexpected argument 'stray'"), "stray: %s", err);
    CHECK(run(&o, NULL, err, 2, "--quiet=1") == CK_OPT_BAD && strstr(err, "takes no value"), "flag value: %s", err);
    CHECK(run(&o, NULL, err, 3, "--lr", "nan") == CK_OPT_BAD && strstr(err, "--lr 'nan'"), "nan: %s", err);
    CHECK(run(&o, NULL, err, 3, "--pair", "3") == CK_OPT_BAD && strstr(err, "want A,B"), "custom's reason: %s", err);
    CHECK(run(&o, NULL, err, 3, "-b", "2G") == CK_OPT_BAD, "a size above hi is refused: %s", err);
    CHECK(run(&o, NULL, err, 4, "-n", "5", "-h") == CK_OPT_HELP && run(&o, NULL, err, 2, "--help") == CK_OPT_HELP,
          "--help and -h");
    CHECK(ck_opt_find(table, "--lr") == &table[4] && ck_opt_find(table, "lr") == &table[4] &&
              !ck_opt_find(table, "things") && !ck_opt_find(table, "--nope"),
          "ck_opt_find by name, headings are not options");

    opts a = {.n = 1, .lr = 0.5, .pair = {1, 2}}, b = a;
    CHECK(!ck_opt_differs(&table[2], &a, &b) && !ck_opt_differs(&table[8], &a, &b), "same configuration");
    b.pair[1] = 3;
    b.file = "y";
    CHECK(ck_opt_differs(&table[8], &a, &b) && !ck_opt_differs(&table[2], &a, &b), "a custom field's bytes compared");
    CHECK(ck_opt_differs(&table[7], &a, &b), "a string set on one side only differs");

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    opts d = {.n = 7, .mode = 1, .lr = 0.5, .drop = 0.25f};
    ck_opt_help(f, table, &d);
    fclose(f);
    CHECK(strstr(text, "things\n") && strstr(text, "  -n, --count N") && strstr(text, "how many (7)") &&
              strstr(text, "transport (shm)") && strstr(text, "(0.25)"),
          "--help shows headings, short names and defaults:\n%s", text);
    CHECK(strstr(text, "rate\n                       second line") != NULL, "continuation lines aligned:\n%s", text);
    CHECK(strstr(text, "--a-very-long-option-name FILE\n                       where") != NULL,
          "a long head on a line of its own:\n%s", text);
    CHECK(!strstr(text, "--secret"), "hidden rows are not shown");
    free(text);

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
