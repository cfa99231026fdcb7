/*
 * registry.c — all-reduce algorithms by name. The built-in ones come from
 * collectives/algos/algos.def; programs add their own with ck_register_algo.
 */
#include <stdlib.h>
#include <string.h>
#include "collkit_algo.h"

#define CK_ALGO(name) extern const ck_algo ck_algo_##name;
#include "algos.def"
#undef CK_ALGO

#define MAX_ALGOS 64
static const ck_algo *table[MAX_ALGOS];
static int ntable = -1;

static void init_builtin(void)
{
    if (ntable >= 0) return;
    ntable = 0;
#define CK_ALGO(name) table[ntable++] = &ck_algo_##name;
#include "algos.def"
#undef CK_ALGO
}

int ck_register_algo(const ck_algo *a)
{
    init_builtin();
    if (!a || !a->name || !a->run || !a->mem) return CK_ERR_INVALID_ARG;
    if (ck_algo_find(a->name) || ntable == MAX_ALGOS) return CK_ERR_INVALID_ARG;
    table[ntable++] = a;
    return CK_SUCCESS;
}

void ck_register_algo_or_exit(const ck_algo *a, const char *file)
{
    const ck_algo *old = a && a->name ? ck_algo_find(a->name) : NULL;
    if (ck_register_algo(a) == CK_SUCCESS) return;
    if (old)
        fprintf(stderr, "collkit: %s: cannot register algorithm '%s': an algorithm of that name is already "
                "registered (%s: %s); give yours another .name\n", file, a->name, old->name,
                old->summary ? old->summary : "");
    else
        fprintf(stderr, "collkit: %s: cannot register algorithm '%s': a descriptor needs .name, .mem and .run%s\n",
                file, a && a->name ? a->name : "(no name)", ntable == MAX_ALGOS ? " (or the registry is full)" : "");
    exit(2);
}

const ck_algo *ck_algo_find(const char *name)
{
    init_builtin();
    for (int i = 0; name && i < ntable; i++)
        if (!strcmp(table[i]->name, name)) return table[i];
    return NULL;
}

int ck_algo_count(void) { init_builtin(); return ntable; }
const ck_algo *ck_algo_at(int i) { init_builtin(); return (i >= 0 && i < ntable) ? table[i] : NULL; }

static const char *mem_names(unsigned mem)
{
    switch (mem & (CK_MEM_HOST | CK_MEM_CUDA)) {
    case CK_MEM_HOST: return "host";
    case CK_MEM_CUDA: return "cuda";
    case CK_MEM_HOST | CK_MEM_CUDA: return "host,cuda";
    default: return "-";
    }
}

void ck_algo_print_table(FILE *out)
{
    init_builtin();
    fprintf(out, "%-16s %-10s %-26s %s\n", "algorithm", "memory", "bytes sent per rank", "summary");
    for (int i = 0; i < ntable; i++) {
        const ck_algo *a = table[i];
        fprintf(out, "%-16s %-10s %-26s %s\n", a->name, mem_names(a->mem),
                a->bytes_formula ? a->bytes_formula : "-", a->summary ? a->summary : "");
    }
    fprintf(out, "(n = message bytes, p = ranks; reference algorithms are not counted)\n");
}

static void print_names(FILE *out, unsigned mem)
{
    fprintf(out, "known algorithms:");
    for (int i = 0; i < ntable; i++)
        if (table[i]->mem & mem) fprintf(out, " %s", table[i]->name);
    fprintf(out, "\n");
}

int ck_algo_parse_list(const char *spec, unsigned mem, const ck_algo **out, int max, int *n)
{
    init_builtin();
    *n = 0;
    if (!spec || !*spec) { fprintf(stderr, "error: empty --algo\n"); print_names(stderr, mem); return CK_ERR_INVALID_ARG; }
    if (!strcmp(spec, "all")) {
        for (int i = 0; i < ntable && *n < max; i++)
            if (table[i]->mem & mem) out[(*n)++] = table[i];
        return CK_SUCCESS;
    }
    char buf[1024];
    if (strlen(spec) >= sizeof buf) { fprintf(stderr, "error: --algo list too long\n"); return CK_ERR_INVALID_ARG; }
    strcpy(buf, spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const ck_algo *a = ck_algo_find(tok);
        if (!a) {
            fprintf(stderr, "error: unknown algorithm '%s'\n", tok);
            print_names(stderr, mem);
            return CK_ERR_INVALID_ARG;
        }
        if (!(a->mem & mem)) {
            fprintf(stderr, "error: algorithm '%s' does not run on %s buffers\n", tok, mem_names(mem));
            print_names(stderr, mem);
            return CK_ERR_INVALID_ARG;
        }
        if (*n == max) { fprintf(stderr, "error: too many algorithms in --algo (max %d)\n", max); return CK_ERR_INVALID_ARG; }
        out[(*n)++] = a;
    }
    return CK_SUCCESS;
}
