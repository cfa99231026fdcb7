/*
 * options.c — collbench's command line, in nccl-tests' spelling where it has
 * one (-b -e -f -n -w -c -d -o). Parsed before MPI starts, identically on
 * every rank, so a bad option stops every rank with the same exit code 2 and
 * only rank 0 prints the message.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collbench.h"
#include "collcheck.h"   /* cc_parse_seed */
#include "collkit_util.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: mpirun -np P collbench [options]\n"
"Times all-reduce algorithms from the collkit registry, like nccl-tests' all_reduce_perf.\n"
"\n"
"sizes and iterations\n"
"  -b, --minbytes SIZE     smallest message (default 8); SIZE takes K, M, G (x1024), e.g. 64M\n"
"  -e, --maxbytes SIZE     largest message (default 64M)\n"
"  -f, --stepfactor N      multiply the size by N each step (default 2, at least 2)\n"
"  -n, --iters N           timed iterations per size (default 20)\n"
"  -w, --warmup_iters N    untimed iterations first (default 5)\n"
"      --time-budget S     stop timing a size after about S seconds (at least 3 iterations)\n"
"what to run\n"
"      --coll C            allreduce (default), reduce_scatter or allgather: the collective swept;\n"
"                          busbw = algbw * (p-1)/p for the two halves (nccl-tests' factor)\n"
"      --algo LIST         comma-separated registry names, or all (default all); --algo list prints them\n"
"  -d, --dtype T           f32 f64 i32 i64 bf16 (default f32)\n"
"  -o, --op OP             sum prod min max avg (default sum)\n"
"      --place P           out, in or both (out-of-place / in-place; default both)\n"
"  -c, --check 0|1         check each result with the checker's inputs, #wrong column (default 1;\n"
"                          --paired checks every timed call whatever -c says)\n"
"      --device D          host or cuda (default host)\n"
"      --transport T       mpi (host, default), shm (host buffers the ranks of one node share;\n"
"                          adds oneshot and twoshot) or cuda-ipc (the same as --device cuda)\n"
"      --chunk SIZE        pipeline chunk of the chunked algorithms (default: the library's, 256K)\n"
"modes\n"
"      --pingpong          ranks 0 and 1 ping-pong over the sizes; fits alpha and beta, times gamma and memcpy\n"
"      --extrapolate       print the model for p = 2 .. --pmax (default 4096) and the crossover sizes\n"
"      --paired            --algo A,B timed against each other: ABBA order, slowest rank per call,\n"
"                          median speed t(A)/t(B) per size with quartiles (out-of-place); with\n"
"                          --coll, two algorithms of that collective\n"
"      --seed S            another set of the checker's inputs (default 0)\n"
"      --results FILE      --paired: write every timed call's record (time, result digest, traffic)\n"
"                          for collverify to check outside this process\n"
"      --pmax N            largest p for --extrapolate\n"
"      --every-p           --extrapolate at every p from 2 to --pmax, not only the powers of two\n"
"      --gpus              print the number of CUDA devices this process can use (CUDA_VISIBLE_DEVICES\n"
"                          honoured) and exit: 0; 3 with the reason when there is none; 1 when a\n"
"                          device is there and does not work (CUDA's message). No mpirun needed\n"
"model and output\n"
"      --model M           auto (calibrate first, default), none, or a file written by --save-model\n"
"      --save-model FILE   write the fitted alpha, beta, gamma (ping-pong or auto calibration)\n"
"      --csv FILE          results as CSV\n"
"      --json FILE         results as JSON\n"
"      --trace FILE        run one extra traced call per size and write a Chrome trace (Perfetto)\n"
"      --trace-capacity N  events kept per rank (default 200000)\n"
"      --overwrite         write over existing --csv, --json, --save-model, --trace and --results\n"
"                          files (a file that holds something is refused otherwise, before\n"
"                          anything runs; two of these naming one file are refused always)\n"
"  -h, --help\n");
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    if (ck_is_print_rank()) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "collbench: error: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n(collbench --help lists the options)\n");
        va_end(ap);
    }
    return 2;
}

/* "64M" -> 67108864: binary units, as nccl-tests takes them, and an optional
 * trailing B ("64MB"). Up to 1 TiB, far beyond any buffer this can allocate. */
static int parse_size(const char *opt, const char *s, size_t *out)
{
    char err[128];
    uint64_t v;
    if (ck_parse_size(s, 1ull << 40, &v, err, sizeof err)) return fail("%s '%s': %s", opt, s, err);
    *out = (size_t)v;
    return 0;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char err[128];
    long long v;
    if (ck_parse_int(s, lo, hi, &v, err, sizeof err)) return fail("%s '%s': %s", opt, s, err);
    *out = (int)v;
    return 0;
}

/* The registry decides which names exist and says what is wrong. */
static int parse_algos(const char *spec, bm_opts *o)
{
    char err[1024];
    if (!strcmp(spec, "list")) { o->mode = BM_MODE_LIST; return 0; }
    if (ck_coll_algo_parse_list(o->coll, spec, o->mem, o->algos, BM_MAX_ALGOS, &o->nalgos, err, sizeof err))
        return fail("--algo: %s", err);
    return 0;
}

int bm_parse_args(int argc, char **argv, bm_opts *o)
{
    enum { O_ALGO = 256, O_PLACE, O_CSV, O_JSON, O_MODEL, O_SAVE, O_TRACE, O_TRACECAP, O_PING, O_EXTRAP,
           O_PMAX, O_DEVICE, O_BUDGET, O_CHUNK, O_PAIRED, O_TRANSPORT, O_EVERYP, O_GPUS, O_SEED, O_RESULTS, O_OVERWRITE, O_COLL };
    static const struct option lo[] = {
        {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'}, {"stepfactor", 1, 0, 'f'},
        {"iters", 1, 0, 'n'}, {"warmup_iters", 1, 0, 'w'}, {"check", 1, 0, 'c'},
        {"dtype", 1, 0, 'd'}, {"op", 1, 0, 'o'}, {"help", 0, 0, 'h'},
        {"algo", 1, 0, O_ALGO}, {"place", 1, 0, O_PLACE}, {"csv", 1, 0, O_CSV}, {"json", 1, 0, O_JSON},
        {"model", 1, 0, O_MODEL}, {"save-model", 1, 0, O_SAVE}, {"trace", 1, 0, O_TRACE},
        {"trace-capacity", 1, 0, O_TRACECAP}, {"pingpong", 0, 0, O_PING}, {"extrapolate", 0, 0, O_EXTRAP},
        {"pmax", 1, 0, O_PMAX}, {"device", 1, 0, O_DEVICE}, {"time-budget", 1, 0, O_BUDGET},
        {"chunk", 1, 0, O_CHUNK}, {"paired", 0, 0, O_PAIRED}, {"transport", 1, 0, O_TRANSPORT},
        {"every-p", 0, 0, O_EVERYP}, {"gpus", 0, 0, O_GPUS}, {"seed", 1, 0, O_SEED}, {"results", 1, 0, O_RESULTS},
        {"overwrite", 0, 0, O_OVERWRITE},
        {"coll", 1, 0, O_COLL},
        {0, 0, 0, 0}};
    const char *algo_spec = "all", *transport = NULL;
    int rc, tmp = 0;
    memset(o, 0, sizeof *o);
    o->mode = BM_MODE_SWEEP;
    o->minbytes = 8;
    o->maxbytes = 64u << 20;
    o->factor = 2;
    o->iters = 20;
    o->warmup = 5;
    o->check = 1;
    o->dtype = CK_F32;
    o->op = CK_SUM;
    o->place = BM_PLACE_OUT | BM_PLACE_IN;
    o->mem = CK_MEM_HOST;
    o->model = "auto";
    o->trace_capacity = 200000;
    o->extrap_pmax = 4096;

    opterr = 0;   /* our own messages, on rank 0 only */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":b:e:f:n:w:c:d:o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'b': if ((rc = parse_size("-b", optarg, &o->minbytes))) return rc; break;
        case 'e': if ((rc = parse_size("-e", optarg, &o->maxbytes))) return rc; break;
        case 'f': if ((rc = parse_int("-f", optarg, 2, 1 << 20, &o->factor))) return rc; break;
        case 'n': if ((rc = parse_int("-n", optarg, 1, 1 << 24, &o->iters))) return rc; break;
        case 'w': if ((rc = parse_int("-w", optarg, 0, 1 << 24, &o->warmup))) return rc; break;
        case 'c': if ((rc = parse_int("-c", optarg, 0, 1, &o->check))) return rc; break;
        case 'd':
            if (ck_dtype_parse(optarg, &o->dtype)) return fail("-d '%s': unknown dtype (f32 f64 i32 i64 bf16)", optarg);
            break;
        case 'o':
            if (ck_op_parse(optarg, &o->op)) return fail("-o '%s': unknown op (sum prod min max avg)", optarg);
            break;
        case 'h': if (ck_is_print_rank()) usage(stdout); return 1;
        case O_ALGO: algo_spec = optarg; break;
        case O_COLL:
            if (ck_coll_parse(optarg, &o->coll))
                return fail("--coll '%s': expected allreduce, reduce_scatter or allgather", optarg);
            break;
        case O_PLACE:
            if (!strcmp(optarg, "out")) o->place = BM_PLACE_OUT;
            else if (!strcmp(optarg, "in")) o->place = BM_PLACE_IN;
            else if (!strcmp(optarg, "both")) o->place = BM_PLACE_OUT | BM_PLACE_IN;
            else return fail("--place '%s': expected out, in or both", optarg);
            break;
        case O_CSV: o->csv = optarg; break;
        case O_JSON: o->json = optarg; break;
        case O_MODEL: o->model = optarg; break;
        case O_SAVE: o->save_model = optarg; break;
        case O_TRACE: o->trace = optarg; break;
        case O_OVERWRITE: o->overwrite = 1; break;
        case O_TRACECAP:
            if ((rc = parse_int("--trace-capacity", optarg, 16, 1 << 22, &tmp))) return rc;
            o->trace_capacity = (size_t)tmp;
            break;
        case O_PING: o->mode = BM_MODE_PINGPONG; break;
        case O_EXTRAP: o->mode = BM_MODE_EXTRAPOLATE; break;
        case O_GPUS: o->mode = BM_MODE_GPUS; break;
        case O_PAIRED: o->mode = BM_MODE_PAIRED; break;
        case O_PMAX: if ((rc = parse_int("--pmax", optarg, 2, 1 << 20, &o->extrap_pmax))) return rc; break;
        case O_EVERYP: o->extrap_every_p = 1; break;
        case O_RESULTS: o->results = optarg; break;
        case O_SEED:
            if (cc_parse_seed(optarg, &o->seed)) return fail("--seed '%s': want an integer from 0 to 2^64-1", optarg);
            break;
        case O_DEVICE:
            if (!strcmp(optarg, "host")) o->mem = CK_MEM_HOST;
            else if (!strcmp(optarg, "cuda")) o->mem = CK_MEM_CUDA;
            else return fail("--device '%s': expected host or cuda", optarg);
            break;
        case O_TRANSPORT:
            if (strcmp(optarg, "mpi") && strcmp(optarg, "shm") && strcmp(optarg, "cuda-ipc") && strcmp(optarg, "cuda"))
                return fail("--transport '%s': expected mpi, shm or cuda-ipc", optarg);
            transport = optarg;
            break;
        case O_CHUNK:
            if ((rc = parse_size("--chunk", optarg, &o->chunk))) return rc;
            if (o->chunk == 0) return fail("--chunk must be at least 1 byte");
            break;
        case O_BUDGET: {
            char err[128];
            if (ck_parse_double(optarg, 0, 1e6, &o->time_budget, err, sizeof err))
                return fail("--time-budget '%s': %s (want seconds, 0 = none)", optarg, err);
            break;
        }
        case ':': return fail("option %s needs a value", argv[optind - 1]);
        default:
            if (optopt) return fail("unknown option -%c", optopt);
            return fail("unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) return fail("unexpected argument '%s'", argv[optind]);
    if (transport) {
        /* shm and mpi move host buffers, cuda-ipc device buffers */
        int dev = !strcmp(transport, "cuda-ipc") || !strcmp(transport, "cuda");
        if (o->mem == CK_MEM_CUDA && !dev) return fail("--transport %s moves host buffers, not --device cuda", transport);
        o->mem = dev ? CK_MEM_CUDA : !strcmp(transport, "shm") ? CK_MEM_HOST | CK_MEM_SHM : CK_MEM_HOST;
    }
    if (o->minbytes > o->maxbytes)
        return fail("-b %zu is larger than -e %zu: the smallest size must not exceed the largest", o->minbytes, o->maxbytes);
    if (o->op == CK_AVG && !ck_dtype_is_float(o->dtype))
        return fail("-o avg is defined for floating types only, not %s", ck_dtype_name(o->dtype));
    if (o->mode == BM_MODE_PINGPONG && o->minbytes == 0)
        return fail("--pingpong needs -b of at least 1 byte");
    if ((rc = parse_algos(algo_spec, o))) return rc;
    if (o->mode == BM_MODE_PAIRED && o->nalgos != 2)
        return fail("--paired compares exactly two algorithms: --algo A,B (got %d)", o->nalgos);
    if (o->results && o->mode != BM_MODE_PAIRED) return fail("--results works with --paired only");
    if (o->trace && o->mode != BM_MODE_SWEEP) return fail("--trace works with the all-reduce sweep only");
    if (o->json && o->mode != BM_MODE_SWEEP) return fail("--json works with the all-reduce sweep only (use --csv)");
    if (o->extrap_every_p && o->mode != BM_MODE_EXTRAPOLATE) return fail("--every-p works with --extrapolate only");
    /* The output files: a user's file is never replaced unasked (ck_output_free).
     * --results is checked by collbench itself (collbench.c): collverify
     * parses the same options, and there the file is its input. Rank 0
     * writes them, so only its file system is asked (another node may not
     * have the folder); the others end with the job when it exits. */
    if (!ck_is_print_rank()) return 0;
    const char *outs[4][2] = {{"--csv", o->csv}, {"--json", o->json}, {"--save-model", o->save_model},
                              {"--trace", o->trace}};
    for (int i = 0; i < 4; i++) {
        char why[1200];
        if (outs[i][1] && ck_output_free(outs[i][1], o->overwrite, why, sizeof why)) return fail("%s %s", outs[i][0], why);
    }
    const char *all[5][2] = {{"--csv", o->csv}, {"--json", o->json}, {"--save-model", o->save_model},
                             {"--trace", o->trace}, {"--results", o->results}};
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (all[i][1] && all[j][1] && ck_output_same(all[i][1], all[j][1]))
                return fail("%s and %s name one file (%s): give each its own", all[i][0], all[j][0], all[j][1]);
    return 0;
}
