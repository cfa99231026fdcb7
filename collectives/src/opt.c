/*
 * opt.c — the option table (collkit_util.h: ck_opt_parse, ck_opt_help,
 * ck_opt_find, ck_opt_differs).
 *
 * Why a table. A tool's option used to be written in several places: the
 * parser's chain of strcmp, the list of options that take a value, the
 * --help text, and (tagtrain) the list of options that are part of the
 * model's configuration and the function comparing two configurations. They
 * drift apart: an option added to the parser and forgotten in the help, a
 * configuration field compared by hand. One row per option, holding where
 * its value goes, what it may be and what --help says about it, leaves one
 * place to add an option and nothing to forget.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "collkit_util.h"

static int is_end(const ck_opt *o) { return o->name == NULL; }
static int takes_value(const ck_opt *o) { return o->type != CK_OPT_FLAG && o->type != CK_OPT_HEADING; }

const ck_opt *ck_opt_find(const ck_opt *tab, const char *name)
{
    if (!tab || !name) return NULL;
    const char *bare = name[0] == '-' && name[1] == '-' ? name + 2 : name;
    for (const ck_opt *o = tab; !is_end(o); o++)
        if (o->type != CK_OPT_HEADING && !strcmp(o->name + 2, bare)) return o;
    return NULL;
}

static const ck_opt *find_short(const ck_opt *tab, char c)
{
    for (const ck_opt *o = tab; !is_end(o); o++)
        if (o->type != CK_OPT_HEADING && o->short_name == c) return o;
    return NULL;
}

/* The index of v among "a|b|c", or -1. */
static int choice_index(const char *choices, const char *v)
{
    size_t n = strlen(v);
    int k = 0;
    for (const char *p = choices; *p; k++) {
        size_t len = strcspn(p, "|");
        if (len == n && !strncmp(p, v, n)) return k;
        p += len;
        if (*p == '|') p++;
    }
    return -1;
}

/* "mpi|shm|cuda-ipc" -> "mpi, shm or cuda-ipc" */
static void choice_list(const char *choices, ck_sbuf *b)
{
    int n = 1;
    for (const char *p = choices; *p; p++) n += *p == '|';
    int k = 0;
    for (const char *p = choices; *p; k++) {
        size_t len = strcspn(p, "|");
        ck_sbuf_add(b, "%s%.*s", k == 0 ? "" : k == n - 1 ? " or " : ", ", (int)len, p);
        p += len;
        if (*p == '|') p++;
    }
}

/* Store one value in its field: 0, or -1 with "NAME 'VALUE': why" in err,
 * NAME as the user spelled it ("-b" or "--minbytes"). */
static int store(const ck_opt *o, const char *spelled, const char *v, void *dst, char *err, size_t cap)
{
    void *field = (char *)dst + o->off;
    char why[200] = "";
    int rc = 0;
    long long i;
    double d;
    uint64_t u;
    switch (o->type) {
    case CK_OPT_FLAG: *(int *)field = 1; return 0;
    case CK_OPT_STR: *(const char **)field = v; return 0;
    case CK_OPT_INT:
        if (!(rc = ck_parse_int(v, (long long)o->lo, (long long)o->hi, &i, why, sizeof why))) *(int *)field = (int)i;
        break;
    case CK_OPT_DOUBLE:
        if (!(rc = ck_parse_double(v, o->lo, o->hi, &d, why, sizeof why))) *(double *)field = d;
        break;
    case CK_OPT_FLOAT:
        if (!(rc = ck_parse_double(v, o->lo, o->hi, &d, why, sizeof why))) *(float *)field = (float)d;
        break;
    case CK_OPT_SIZE:
        if (!(rc = ck_parse_size(v, o->hi > 0 ? (uint64_t)o->hi : UINT64_MAX, &u, why, sizeof why)))
            *(uint64_t *)field = u;
        break;
    case CK_OPT_CHOICE: {
        int k = choice_index(o->choices, v);
        if (k < 0) {
            ck_sbuf b;
            ck_sbuf_init(&b, why, sizeof why);
            ck_sbuf_add(&b, "want ");
            choice_list(o->choices, &b);
            rc = -1;
        } else *(int *)field = k;
        break;
    }
    case CK_OPT_CUSTOM: rc = o->parse ? o->parse(v, field, why, sizeof why) : -1; break;
    case CK_OPT_HEADING: rc = -1; break;
    }
    if (rc) snprintf(err, cap, "%s '%s': %s", spelled, v, why[0] ? why : "not a valid value");
    return rc ? -1 : 0;
}

static int bad(char *err, size_t cap, const char *fmt, const char *a)
{
    snprintf(err, cap, fmt, a);
    return CK_OPT_BAD;
}

int ck_opt_parse(const ck_opt *tab, int argc, char **argv, void *dst, const char **given, char *err, size_t cap)
{
    if (cap) err[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL, *spelled = a;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return CK_OPT_HELP;
        const ck_opt *o = NULL;
        char name[128];
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            /* --name or --name=value */
            size_t n = strcspn(a, "=");
            if (n >= sizeof name) return bad(err, cap, "unknown option '%s'", a);
            memcpy(name, a, n);
            name[n] = '\0';
            if (a[n] == '=') v = a + n + 1;
            o = ck_opt_find(tab, name);
            if (!o) return bad(err, cap, "unknown option '%s'", name);
            spelled = o->name;
        } else if (a[0] == '-' && a[1] && !a[2]) {
            o = find_short(tab, a[1]);
            if (!o) return bad(err, cap, "unknown option '%s'", a);
        } else {
            return bad(err, cap, "unexpected argument '%s'", a);
        }
        if (!takes_value(o) && v) return bad(err, cap, "%s takes no value", spelled);
        if (takes_value(o) && !v) {
            if (i + 1 >= argc) return bad(err, cap, "%s needs a value", spelled);
            v = argv[++i];
        }
        if (store(o, spelled, v ? v : "1", dst, err, cap)) return CK_OPT_BAD;
        if (given) given[o - tab] = v ? v : "1";
    }
    return CK_OPT_RUN;
}

/* The field's value in defaults, as --help shows a default. */
static void show_value(const ck_opt *o, const void *defaults, ck_sbuf *b)
{
    const void *field = (const char *)defaults + o->off;
    switch (o->type) {
    case CK_OPT_FLAG: ck_sbuf_add(b, "%s", *(const int *)field ? "on" : "off"); break;
    case CK_OPT_STR: ck_sbuf_add(b, "%s", *(const char *const *)field ? *(const char *const *)field : "none"); break;
    case CK_OPT_INT: ck_sbuf_add(b, "%d", *(const int *)field); break;
    case CK_OPT_DOUBLE: ck_sbuf_add(b, "%g", *(const double *)field); break;
    case CK_OPT_FLOAT: ck_sbuf_add(b, "%g", (double)*(const float *)field); break;
    case CK_OPT_SIZE: ck_sbuf_add(b, "%llu", (unsigned long long)*(const uint64_t *)field); break;
    case CK_OPT_CHOICE: {
        int k = *(const int *)field;
        const char *p = o->choices;
        for (; k > 0 && *p; k--) p += strcspn(p, "|") + (p[strcspn(p, "|")] == '|');
        ck_sbuf_add(b, "%.*s", (int)strcspn(p, "|"), p);
        break;
    }
    case CK_OPT_CUSTOM:
    case CK_OPT_HEADING: ck_sbuf_add(b, "?"); break;
    }
}

static const char *default_arg(const ck_opt *o)
{
    switch (o->type) {
    case CK_OPT_INT: return "N";
    case CK_OPT_DOUBLE:
    case CK_OPT_FLOAT: return "X";
    case CK_OPT_SIZE: return "BYTES";
    case CK_OPT_CHOICE: return o->choices;
    default: return "VALUE";
    }
}

/* The option's help text with "%D" filled, in out. */
static void help_text(const ck_opt *o, const void *defaults, char *out, size_t cap)
{
    ck_sbuf b;
    ck_sbuf_init(&b, out, cap);
    for (const char *p = o->help ? o->help : ""; *p; p++) {
        if (p[0] == '%' && p[1] == 'D' && defaults) {
            show_value(o, defaults, &b);
            p++;
        } else ck_sbuf_add(&b, "%c", *p);
    }
}

enum { HELP_COLUMN = 23 };

void ck_opt_help(FILE *f, const ck_opt *tab, const void *defaults)
{
    for (const ck_opt *o = tab; !is_end(o); o++) {
        if (o->flags & CK_OPT_HIDE) continue;
        if (o->type == CK_OPT_HEADING) {
            fprintf(f, "%s\n", o->name);
            continue;
        }
        char head[160], text[2048];
        ck_sbuf b;
        ck_sbuf_init(&b, head, sizeof head);
        ck_sbuf_add(&b, "  ");
        if (o->short_name) ck_sbuf_add(&b, "-%c, ", o->short_name);
        ck_sbuf_add(&b, "%s", o->name);
        if (takes_value(o)) ck_sbuf_add(&b, " %s", o->arg ? o->arg : default_arg(o));
        help_text(o, defaults, text, sizeof text);
        /* A long head takes a line of its own; the text starts in the column. */
        if (b.len + 1 > HELP_COLUMN) fprintf(f, "%s\n%*s", head, HELP_COLUMN, "");
        else fprintf(f, "%-*s", HELP_COLUMN, head);
        for (const char *p = text; *p; p++) {
            fputc(*p, f);
            if (*p == '\n' && p[1]) fprintf(f, "%*s", HELP_COLUMN, "");
        }
        fputc('\n', f);
    }
}

static size_t field_size(const ck_opt *o)
{
    switch (o->type) {
    case CK_OPT_FLAG:
    case CK_OPT_INT:
    case CK_OPT_CHOICE: return sizeof(int);
    case CK_OPT_STR: return sizeof(const char *);
    case CK_OPT_DOUBLE: return sizeof(double);
    case CK_OPT_FLOAT: return sizeof(float);
    case CK_OPT_SIZE: return sizeof(uint64_t);
    case CK_OPT_CUSTOM: return o->size;
    case CK_OPT_HEADING: return 0;
    }
    return 0;
}

int ck_opt_differs(const ck_opt *o, const void *a, const void *b)
{
    size_t n = field_size(o);
    if (o->type == CK_OPT_STR) {
        const char *x = *(const char *const *)((const char *)a + o->off);
        const char *y = *(const char *const *)((const char *)b + o->off);
        return (x == NULL) != (y == NULL) || (x && strcmp(x, y));
    }
    return n && memcmp((const char *)a + o->off, (const char *)b + o->off, n) != 0;
}
