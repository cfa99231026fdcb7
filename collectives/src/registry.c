/*
 * registry.c — algorithms by name, one registry per collective. The
 * built-in ones come from collectives/algos/algos.def (all-reduce),
 * reduce_scatter.def and allgather.def; programs add their own with
 * ck_register_algo, which files a descriptor under its .coll.
 */
#include <stdlib.h>
#include <string.h>
#include "collkit_algo.h"
#include "collkit_util.h"
#include "collkit_isolate.h"

#define CK_ALGO(name) extern const ck_algo ck_algo_##name;
#include "algos.def"
#undef CK_ALGO
#define CK_ALGO(name) extern const ck_algo ck_rs_##name;
#include "reduce_scatter.def"
#undef CK_ALGO
#define CK_ALGO(name) extern const ck_algo ck_ag_##name;
#include "allgather.def"
#undef CK_ALGO

/* hier.c: "hier.RS[-AG].AR", the hierarchical all-reduce of the parts
 * named, made the first time a name asks for it. */
const ck_algo *ck_hier_compose(const char *name);

#define MAX_ALGOS 64
static struct registry {
    const ck_algo *table[MAX_ALGOS];
    int n;
} regs[CK_NUM_COLLS];
static int initialised;

static void init_builtin(void)
{
    if (initialised) return;
    initialised = 1;
#define CK_ALGO(name) regs[CK_COLL_ALLREDUCE].table[regs[CK_COLL_ALLREDUCE].n++] = &ck_algo_##name;
#include "algos.def"
#undef CK_ALGO
#define CK_ALGO(name) regs[CK_COLL_REDUCE_SCATTER].table[regs[CK_COLL_REDUCE_SCATTER].n++] = &ck_rs_##name;
#include "reduce_scatter.def"
#undef CK_ALGO
#define CK_ALGO(name) regs[CK_COLL_ALLGATHER].table[regs[CK_COLL_ALLGATHER].n++] = &ck_ag_##name;
#include "allgather.def"
#undef CK_ALGO
}

/* The registry of a collective, NULL for a value that names none. */
static struct registry *reg_of(ck_coll coll)
{
    init_builtin();
    return (unsigned)coll < CK_NUM_COLLS ? &regs[coll] : NULL;
}

static const char *const coll_names[CK_NUM_COLLS] = {"allreduce", "reduce_scatter", "allgather"};

const char *ck_coll_name(ck_coll coll) { return (unsigned)coll < CK_NUM_COLLS ? coll_names[coll] : "?"; }

int ck_coll_parse(const char *s, ck_coll *out)
{
    for (int c = 0; s && c < CK_NUM_COLLS; c++)
        if (!strcmp(s, coll_names[c])) {
            *out = (ck_coll)c;
            return CK_SUCCESS;
        }
    return CK_ERR_INVALID_ARG;
}

/* A name the tools can take back from a command line and write in a results
 * file: 1 to 63 letters, digits, '_', '.' or '-' (no ',' that --algo A,B
 * would split, no space or newline that a results line would), and none of
 * the words --algo gives a meaning of its own. */
static int good_name(const char *name)
{
    const size_t n = strlen(name);
    if (n == 0 || n > 63 || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n)
        return 0;
    return strcmp(name, "all") && strcmp(name, "list") && strcmp(name, "auto");
}

int ck_register_algo(const ck_algo *a)
{
    if (!a || !a->name || !good_name(a->name) || !a->run || !a->mem ||
        (a->mem & ~(unsigned)(CK_MEM_HOST | CK_MEM_CUDA | CK_MEM_SHM)))
        return CK_ERR_INVALID_ARG;
    struct registry *g = reg_of(a->coll);
    if (!g || ck_coll_algo_find(a->coll, a->name) || g->n == MAX_ALGOS) return CK_ERR_INVALID_ARG;
    g->table[g->n++] = a;
    return CK_SUCCESS;
}

/* The trusted program of an isolated grading (plugin/isolate_host.c) runs a
 * built-in through its channel too, so that a speed part times the reference
 * as it times the student's file: the proxy takes the built-in's place. */
int ck_replace_algo(const ck_algo *a)
{
    struct registry *g = a && a->name && a->run ? reg_of(a->coll) : NULL;
    for (int i = 0; g && i < g->n; i++)
        if (!strcmp(g->table[i]->name, a->name)) {
            g->table[i] = a;
            return CK_SUCCESS;
        }
    return CK_ERR_INVALID_ARG;
}

void ck_register_algo_or_exit(const ck_algo *a, const char *file)
{
    const ck_algo *old = a && a->name ? ck_coll_algo_find(a->coll, a->name) : NULL;
    if (ck_register_algo(a) == CK_SUCCESS) return;
    if (!ck_is_print_rank()) exit(2);   /* every rank stops; one says why */
    if (old)
        fprintf(stderr, "collkit: %s: cannot register algorithm '%s': an algorithm of that name is already "
                "registered (%s %s: %s); give yours another .name\n", file, a->name, ck_coll_name(a->coll),
                old->name, old->summary ? old->summary : "");
    else
        fprintf(stderr, "collkit: %s: cannot register algorithm '%s': a descriptor needs .name (1 to 63 letters, "
                "digits, '_', '.' or '-'; not all, list or auto), .mem (CK_MEM_HOST, CK_MEM_CUDA, CK_MEM_SHM), .run "
                "and a known .coll (or the registry is full)\n", file, a && a->name ? a->name : "(no name)");
    exit(2);
}

const ck_algo *ck_coll_algo_find(ck_coll coll, const char *name)
{
    const struct registry *g = reg_of(coll);
    for (int i = 0; g && name && i < g->n; i++)
        if (!strcmp(g->table[i]->name, name)) return g->table[i];
    return coll == CK_COLL_ALLREDUCE && name && !strncmp(name, "hier.", 5) ? ck_hier_compose(name) : NULL;
}

int ck_coll_algo_count(ck_coll coll)
{
    const struct registry *g = reg_of(coll);
    return g ? g->n : 0;
}

const ck_algo *ck_coll_algo_at(ck_coll coll, int i)
{
    const struct registry *g = reg_of(coll);
    return g && i >= 0 && i < g->n ? g->table[i] : NULL;
}

const ck_algo *ck_algo_find(const char *name) { return ck_coll_algo_find(CK_COLL_ALLREDUCE, name); }
int ck_algo_count(void) { return ck_coll_algo_count(CK_COLL_ALLREDUCE); }
const ck_algo *ck_algo_at(int i) { return ck_coll_algo_at(CK_COLL_ALLREDUCE, i); }

/* "host", "shm,cuda", ...: the memory kinds of a mask, in a fixed order. */
static const char *mem_names(unsigned mem)
{
    static const char *const names[8] = {"-", "host", "cuda", "host,cuda", "shm", "host,shm", "shm,cuda",
                                         "host,shm,cuda"};
    return names[mem & (CK_MEM_HOST | CK_MEM_CUDA | CK_MEM_SHM)];
}

void ck_coll_algo_print_table(ck_coll coll, FILE *out)
{
    const struct registry *g = reg_of(coll);
    fprintf(out, "%-16s %-10s %-26s %s\n", "algorithm", "memory", "bytes sent per rank", "summary");
    for (int i = 0; g && i < g->n; i++) {
        const ck_algo *a = g->table[i];
        fprintf(out, "%-16s %-10s %-26s %s\n", a->name, mem_names(a->mem),
                a->bytes_formula ? a->bytes_formula : "-", a->summary ? a->summary : "");
    }
    fprintf(out, "(n = message bytes, p = ranks; reference algorithms are not counted; memory host: the mpi and shm\n"
                 " transports, shm: the shm transport only (--transport shm), cuda: CUDA IPC (--device cuda))\n");
}

/* "mpi naive ring ...": the names that run on `mem`, after what went wrong. */
static int list_error(ck_sbuf *e, const struct registry *g, unsigned mem)
{
    ck_sbuf_add(e, " (known algorithms:");
    for (int i = 0; i < g->n; i++)
        if (g->table[i]->mem & mem) ck_sbuf_add(e, " %s", g->table[i]->name);
    ck_sbuf_add(e, ")");
    return CK_ERR_INVALID_ARG;
}

int ck_coll_algo_parse_list(ck_coll coll, const char *spec, unsigned mem, const ck_algo **out, int max, int *n,
                            char *err, size_t errlen)
{
    ck_sbuf e;
    ck_sbuf_init(&e, err, errlen);
    const struct registry *g = reg_of(coll);
    *n = 0;
    if (!g) {
        ck_sbuf_add(&e, "no collective numbered %d", (int)coll);
        return CK_ERR_INVALID_ARG;
    }
    if (!spec || !*spec) {
        ck_sbuf_add(&e, "empty algorithm list");
        return list_error(&e, g, mem);
    }
    if (!strcmp(spec, "all")) {
        for (int i = 0; i < g->n; i++) {
            if (!(g->table[i]->mem & mem)) continue;
            if (*n == max) goto too_many;
            out[(*n)++] = g->table[i];
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
        const ck_algo *a = ck_coll_algo_find(coll, tok);
        if (!a) {
            ck_sbuf_add(&e, "unknown algorithm '%s'", tok);
            return list_error(&e, g, mem);
        }
        if (!(a->mem & mem)) {
            ck_sbuf_add(&e, "algorithm '%s' runs on %s buffers, not %s", tok, mem_names(a->mem), mem_names(mem));
            return list_error(&e, g, mem);
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
    return list_error(&e, g, mem);
too_many:
    ck_sbuf_add(&e, "too many algorithms (at most %d)", max);
    *n = 0;
    return CK_ERR_INVALID_ARG;
}

void ck_algo_print_table(FILE *out) { ck_coll_algo_print_table(CK_COLL_ALLREDUCE, out); }

int ck_algo_parse_list(const char *spec, unsigned mem, const ck_algo **out, int max, int *n, char *err, size_t errlen)
{
    return ck_coll_algo_parse_list(CK_COLL_ALLREDUCE, spec, mem, out, max, n, err, errlen);
}
