/*
 * registry.c — all-reduce algorithms by name. The built-in ones come from
 * collectives/algos/algos.def; programs add their own with ck_register_algo.
 */
#include <stdlib.h>
#include <string.h>
#include "collkit_algo.h"
#include "collkit_util.h"

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
    if (!ck_is_print_rank()) exit(2);   /* every rank stops; one says why */
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

/* "host", "shm,cuda", ...: the memory kinds of a mask, in a fixed order. */
static const char *mem_names(unsigned mem)
{
    static const char *const names[8] = {"-", "host", "cuda", "host,cuda", "shm", "host,shm", "shm,cuda",
                                         "host,shm,cuda"};
    return names[mem & (CK_MEM_HOST | CK_MEM_CUDA | CK_MEM_SHM)];
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
    fprintf(out, "(n = message bytes, p = ranks; reference algorithms are not counted; memory host: the mpi and shm\n"
                 " transports, shm: the shm transport only (--transport shm), cuda: CUDA IPC (--device cuda))\n");
}

/* "mpi naive ring ...": the names that run on `mem`, after what went wrong. */
static int list_error(ck_sbuf *e, unsigned mem)
{
    ck_sbuf_add(e, " (known algorithms:");
    for (int i = 0; i < ntable; i++)
        if (table[i]->mem & mem) ck_sbuf_add(e, " %s", table[i]->name);
    ck_sbuf_add(e, ")");
    return CK_ERR_INVALID_ARG;
}

int ck_algo_parse_list(const char *spec, unsigned mem, const ck_algo **out, int max, int *n,
                       char *err, size_t errlen)
{
    ck_sbuf e;
    ck_sbuf_init(&e, err, errlen);
    init_builtin();
    *n = 0;
    if (!spec || !*spec) {
        ck_sbuf_add(&e, "empty algorithm list");
        return list_error(&e, mem);
    }
    if (!strcmp(spec, "all")) {
        for (int i = 0; i < ntable; i++) {
            if (!(table[i]->mem & mem)) continue;
            if (*n == max) goto too_many;
            out[(*n)++] = table[i];
        }
        if (!*n) ck_sbuf_add(&e, "no algorithm runs on %s buffers", mem_names(mem));
        return *n ? CK_SUCCESS : CK_ERR_INVALID_ARG;
    }
    char buf[1024];
    if (strlen(spec) >= sizeof buf) {
        ck_sbuf_add(&e, "algorithm list too long (at most %zu characters)", sizeof buf - 1);
        return CK_ERR_INVALID_ARG;
    }
    strcpy(buf, spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const ck_algo *a = ck_algo_find(tok);
        if (!a) {
            ck_sbuf_add(&e, "unknown algorithm '%s'", tok);
            return list_error(&e, mem);
        }
        if (!(a->mem & mem)) {
            ck_sbuf_add(&e, "algorithm '%s' runs on %s buffers, not %s", tok, mem_names(a->mem), mem_names(mem));
            return list_error(&e, mem);
        }
        for (int i = 0; i < *n; i++)
            if (out[i] == a) {
                ck_sbuf_add(&e, "algorithm '%s' given twice", tok);
                return CK_ERR_INVALID_ARG;
            }
        if (*n == max) goto too_many;
        out[(*n)++] = a;
    }
    if (*n) return CK_SUCCESS;
    ck_sbuf_add(&e, "no algorithm named in '%s'", spec);   /* only commas */
    return list_error(&e, mem);
too_many:
    ck_sbuf_add(&e, "too many algorithms (at most %d)", max);
    *n = 0;
    return CK_ERR_INVALID_ARG;
}
