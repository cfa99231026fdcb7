/*
 * json.c — see json.h.
 */
#include <math.h>
#include "json.h"

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* The comma and the key before a member. */
static void member(json *j, const char *key)
{
    if (j->count[j->depth]++) fputc(',', j->f);
    if (key) {
        put_string(j->f, key);
        fputc(':', j->f);
    }
}

static void open_level(json *j, char open, char close)
{
    fputc(open, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
    j->count[j->depth] = 0;
    j->close[j->depth] = close;
}

void json_open(json *j, FILE *f)
{
    j->f = f;
    j->depth = -1;
    open_level(j, '{', '}');
}

void json_str(json *j, const char *key, const char *v) { member(j, key); put_string(j->f, v ? v : ""); }
void json_int(json *j, const char *key, long long v) { member(j, key); fprintf(j->f, "%lld", v); }
void json_bool(json *j, const char *key, int v) { member(j, key); fputs(v ? "true" : "false", j->f); }

void json_num(json *j, const char *key, double v)
{
    member(j, key);
    if (isfinite(v)) fprintf(j->f, "%.9g", v);
    else fputs("null", j->f);
}

void json_obj(json *j, const char *key) { member(j, key); open_level(j, '{', '}'); }
void json_arr(json *j, const char *key) { member(j, key); open_level(j, '[', ']'); }

void json_end(json *j)
{
    fputc(j->close[j->depth], j->f);
    if (j->depth == 0) fputc('\n', j->f);
    if (j->depth > 0) j->depth--;
}
