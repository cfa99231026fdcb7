/*
 * collkit_util.h — the small things every collkit tool needs the same way:
 *
 *   ck_is_print_rank   which rank prints, before (or without) MPI_Init
 *   ck_parse_size      "64M", "4K", "1G", "12" -> a number, with the reason
 *   ck_parse_int         when it is rejected (negative, empty, junk, too large)
 *   ck_parse_double    "2.5", "1e-3" -> a finite number in a range (seconds,
 *                        model parameters): no NaN, no inf, no hex
 *   ck_opt_parse       one table of options drives parsing, --help and the
 *   ck_opt_help          comparison of two configurations (ck_opt_differs)
 *   ck_fnv1a64         FNV-1a 64-bit hash (checkpoints, feature buckets,
 *                      cross-rank agreement on names)
 *   ck_sbuf            printf-style appends into a fixed buffer that never
 *                      overflows (diagnosis and error messages)
 *   ck_stdout_done     a tool's last word on its standard output: was all
 *                      of it written?
 *
 * No MPI, no allocation: the dataset tools link it without MPI. Parsers never
 * print; they fill `err` so the caller can say it once, from one rank.
 */
#ifndef COLLKIT_UTIL_H
#define COLLKIT_UTIL_H

#include <stdarg.h>
#include <stdio.h>   /* FILE */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ print rank */

/* This process's rank in the job as the launcher put it in the environment
 * (Open MPI, PMIx, MPICH/Hydra and Intel MPI, MVAPICH, Cray PALS, Slurm), or -1
 * outside any launcher. Valid before MPI_Init, which is when the tools parse
 * their arguments. */
int ck_launcher_rank(void);
/* 1 on the rank that speaks for the job: rank 0, or a process started
 * without a launcher. */
int ck_is_print_rank(void);

/* ------------------------------------------------------------ numbers */

/* A non-negative integer with an optional binary suffix: K, M or G (x1024,
 * either case, optionally followed by i), then an optional B: "8", "64K",
 * "16MiB", "1G". Rejects empty strings, signs, white space, anything after
 * the suffix, and values above max (or above 2^64 - 1). Returns 0, or -1 with
 * the reason in err ("bad size suffix 'X' (use K, M or G)"). */
int ck_parse_size(const char *s, uint64_t max, uint64_t *out, char *err, size_t errlen);
/* A plain decimal integer (optional sign, no suffix) in [lo, hi]. Returns 0,
 * or -1 with the reason in err ("expected an integer", "must be between ..."). */
int ck_parse_int(const char *s, long long lo, long long hi, long long *out, char *err, size_t errlen);
/* A finite decimal number in [lo, hi]: digits with an optional point and
 * fraction, an optional exponent (e or E, optionally signed), a leading '-'
 * or '+': "30", "0.5", ".5", "2e-3". Rejects empty strings, white space, nan,
 * inf, hexadecimal, anything after the number, and values outside [lo, hi]
 * (1e999 included). Returns 0, or -1 with the reason in err ("not a finite
 * number", "must be between 0 and 1e+06", "must be at least 0" when hi is
 * DBL_MAX, "too large"). */
int ck_parse_double(const char *s, double lo, double hi, double *out, char *err, size_t errlen);

/* ------------------------------------------------------------ options */

/* One table of options drives a tool's parsing, its --help and any
 * comparison of configurations (tagtrain's resume check): each option is
 * written once, with its field, its range and its help. A table is an array
 * ending with an entry whose name is NULL; CK_OPT_HEADING rows are headings
 * of --help. Values: "--name VALUE", "--name=VALUE", and "-x VALUE" for an
 * option with a short name. The last value given wins. */
typedef enum {
    CK_OPT_HEADING,   /* no option: `name` is a heading line of --help */
    CK_OPT_FLAG,      /* takes no value: the int field becomes 1 */
    CK_OPT_STR,       /* const char *: the value itself (argv's memory) */
    CK_OPT_INT,       /* int in [lo, hi] (ck_parse_int) */
    CK_OPT_DOUBLE,    /* double in [lo, hi] (ck_parse_double) */
    CK_OPT_FLOAT,     /* float in [lo, hi] (ck_parse_double) */
    CK_OPT_SIZE,      /* uint64_t with an optional K/M/G suffix, at most hi (ck_parse_size) */
    CK_OPT_CHOICE,    /* int: the index of the value in `choices` ("mpi|shm|cuda-ipc") */
    CK_OPT_CUSTOM,    /* parse(value, field, err, cap): 0, or -1 with the reason */
} ck_opt_type;

/* Bits of ck_opt.flags. */
enum {
    CK_OPT_MODEL = 1u << 0,   /* part of the model's configuration (tagtrain: a resumed run keeps it) */
    CK_OPT_HIDE  = 1u << 1,   /* parsed, not shown by --help (test hooks) */
    CK_OPT_USER  = 1u << 8,   /* the first bit a tool may give a meaning of its own */
};

typedef struct ck_opt {
    const char *name;       /* "--lr"; NULL ends the table */
    char        short_name; /* 'n' for -n, or 0 */
    ck_opt_type type;
    size_t      off;        /* offsetof(the tool's options struct, field) */
    size_t      size;       /* CK_OPT_CUSTOM: the field's bytes (for ck_opt_differs); else 0 */
    double      lo, hi;     /* CK_OPT_INT, DOUBLE, FLOAT: the range; CK_OPT_SIZE: hi is the most */
    const char *choices;    /* CK_OPT_CHOICE: the values, '|' between them */
    int       (*parse)(const char *value, void *field, char *err, size_t cap);   /* CK_OPT_CUSTOM */
    const char *arg;        /* the value's name in --help: "F", "FILE" (default: from the type) */
    const char *help;       /* --help's text; '\n' starts a continuation line. "%D" stands for
                               the field's value in the defaults given to ck_opt_help */
    unsigned    flags;      /* CK_OPT_MODEL, CK_OPT_HIDE, a tool's own bits */
} ck_opt;

/* What ck_opt_parse returns: the exit status a tool ends with when it is not
 * CK_OPT_RUN. */
enum { CK_OPT_RUN = 0, CK_OPT_HELP = 1, CK_OPT_BAD = 2 };

/* Parse argv[1..argc-1] into the struct at dst (which holds the defaults).
 * given, when not NULL, has one slot per table row: the value given for it
 * (the last one; "1" for a flag), or NULL when the option was not given.
 * Returns CK_OPT_RUN; CK_OPT_HELP for --help or -h (the caller prints
 * ck_opt_help and exits 0); or CK_OPT_BAD with the reason in err ("--lr
 * 'x': not a finite number", "unknown option '--lx'", "--lr needs a value",
 * "unexpected argument 'x'"; an option named as it was given, "-n '0': ..."
 * for -n): the caller prints it once and exits 2. Never prints. */
int ck_opt_parse(const ck_opt *tab, int argc, char **argv, void *dst, const char **given, char *err, size_t cap);

/* --help's option rows: "  --name ARG" then the help text in a column
 * (continuation lines aligned under it), headings as they are. defaults
 * (a struct like dst, holding the defaults; NULL for none) fills "%D". */
void ck_opt_help(FILE *f, const ck_opt *tab, const void *defaults);

/* The row of the table for an option name ("--lr" or "lr"), or NULL. */
const ck_opt *ck_opt_find(const ck_opt *tab, const char *name);

/* Whether the field option o sets differs between two structs a and b
 * (bytes compared; a CK_OPT_CUSTOM row compares its `size` bytes). */
int ck_opt_differs(const ck_opt *o, const void *a, const void *b);

/* ------------------------------------------------------------ hash */

/* FNV-1a, 64 bits (Fowler, Noll, Vo): fast, good enough to bucket features
 * and to notice that two ranks hold different bytes; not cryptographic. Chain
 * pieces with ck_fnv1a64_update, starting from CK_FNV1A64_INIT. */
#define CK_FNV1A64_INIT 0xcbf29ce484222325ull
uint64_t ck_fnv1a64_update(uint64_t h, const void *data, size_t n);
uint64_t ck_fnv1a64(const void *data, size_t n);

/* ------------------------------------------------------------ string builder */

/* Appends into buf[cap]: always NUL-terminated, never past cap; what does not
 * fit is dropped and `truncated` says so. len is the length written. */
typedef struct ck_sbuf {
    char  *buf;
    size_t cap, len;
    int    truncated;
} ck_sbuf;

void ck_sbuf_init(ck_sbuf *b, char *buf, size_t cap);
void ck_sbuf_add(ck_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ck_sbuf_vadd(ck_sbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Append sep unless the buffer is still empty: joins clauses with "; ". */
void ck_sbuf_sep(ck_sbuf *b, const char *sep);

/* ------------------------------------------------------------ output */

/* Flush standard output and say whether everything written to it arrived: a
 * full disk or a closed pipe makes a tool's report incomplete, which is an
 * error, not a success. 0, or 1 after "PROG: cannot write standard output:
 * REASON" on stderr; the exit status of a tool whose work is otherwise done. */
int ck_stdout_done(const char *prog);

/* The rule for a tool's output files (--csv, --json, --save-model, --trace):
 * a file that already holds something (a non-empty regular file) is the
 * user's, and is written over only when they said so (--overwrite); an empty
 * file, a device (/dev/null) or a path with nothing there is free. A path
 * that could not be written anyway (an empty name, a folder that does not
 * exist or takes no new file, a file without write permission) is refused
 * too. Checked before the work starts, so a refusal costs nothing. 0 when
 * path may be written; -1 with "PATH exists (N bytes): ..." (or what else
 * is wrong, after PATH) in why. */
int ck_output_free(const char *path, int overwrite, char *why, size_t cap);

/* Open an output file for writing (created, or emptied): as fopen(path, "w"),
 * except that a FIFO no program reads is refused at once ("a FIFO that no
 * program reads") instead of waiting forever. NULL with the reason in why. */
FILE *ck_output_open(const char *path, char *why, size_t cap);

/* Whether two output paths name one file ("out.csv" and "./out.csv", a link
 * to it): a tool asked to write both would leave only the last one written.
 * A device (/dev/null) given twice is no clash. */
int ck_output_same(const char *a, const char *b);

/* ------------------------------------------------------------ input */

/* The rule for the files a user names as a tool's input (collverify
 * --results, collbench --model, colldraw --gantt): a regular file, a
 * pipe or FIFO (process substitution: <(...)) or /dev/null is opened for
 * reading; a directory, a socket or any other device (/dev/zero would never
 * end) is refused, and a FIFO nothing writes to reads as empty instead of
 * waiting forever. The stream, or NULL with the reason in why ("a directory,
 * not a file", "No such file or directory"). */
FILE *ck_input_open(const char *path, char *why, size_t cap);

/* ------------------------------------------------------------ plug-ins */

/* Open a plug-in (a shared library the program loads only when it needs it:
 * the CUDA parts, so that a program built with CUDA still starts on a
 * machine without it) with dlopen(RTLD_NOW | RTLD_LOCAL): FILE in lib/ beside
 * the program's bin/ folder (a build, a student kit) when it is there, else
 * by name through the program's run path and LD_LIBRARY_PATH. The handle,
 * or NULL with the loader's reason in why (e.g. "libcudart.so.13: cannot
 * open shared object file"). */
void *ck_plugin_open(const char *file, char *why, size_t whylen);

/* ------------------------------------------------------------ JSON */

/* The one JSON writer of the kit (tagtrain's --log records and --metrics,
 * tagpredict --json, collbench --json, the Chrome traces below): streamed
 * into a FILE, keys and values in the order given, strings escaped, a
 * number that is NaN or infinite written as null (JSON has no NaN), so a
 * reader never meets "-nan".
 *
 *   ck_json j;
 *   ck_json_open(&j, f, CK_JSON_COMPACT);   "{"
 *   ck_json_str(&j, "type", "epoch");  ck_json_num(&j, "loss", x);
 *   ck_json_obj(&j, "per_class"); ... ck_json_end(&j);       nested object
 *   ck_json_arr(&j, "labels"); ck_json_str(&j, NULL, "a"); ck_json_end(&j);
 *   ck_json_end(&j);                        the outermost "}" ends the line
 *   if (ck_json_failed(&j)) ...             a write failed (disk full, closed pipe)
 *
 * Inside an array the key is NULL. Two layouts: CK_JSON_COMPACT ("," and
 * ":", one record a line) and CK_JSON_SPACED (", " and ": ", for a file
 * people read). ck_json_break puts the next member (or the closing bracket)
 * on a line of its own, indented two spaces a level when spaced. */
#define CK_JSON_MAX_DEPTH 8
enum { CK_JSON_COMPACT = 0, CK_JSON_SPACED = 1 };

typedef struct ck_json {
    FILE *f;
    int   depth;
    int   count[CK_JSON_MAX_DEPTH];   /* members written at each level (for the commas) */
    char  close[CK_JSON_MAX_DEPTH];   /* '}' or ']' */
    int   spaced;                     /* CK_JSON_SPACED */
    int   brk;                        /* a line break is due before the next member or bracket */
    int   failed;                     /* a write failed, or the nesting went wrong */
} ck_json;

void ck_json_open(ck_json *j, FILE *f, int layout);
void ck_json_str(ck_json *j, const char *key, const char *v);   /* NULL writes "" */
void ck_json_int(ck_json *j, const char *key, long long v);
void ck_json_uint(ck_json *j, const char *key, unsigned long long v);
void ck_json_num(ck_json *j, const char *key, double v);               /* %.9g; NaN/Inf -> null */
void ck_json_num_g(ck_json *j, const char *key, double v, int digits);   /* %.<digits>g; NaN/Inf -> null */
void ck_json_num_f(ck_json *j, const char *key, double v, int decimals); /* %.<decimals>f; NaN/Inf -> null */
void ck_json_bool(ck_json *j, const char *key, int v);
void ck_json_null(ck_json *j, const char *key);
/* A value already written as JSON text (a number in a format of the caller's). */
void ck_json_raw(ck_json *j, const char *key, const char *text);
void ck_json_obj(ck_json *j, const char *key);
void ck_json_arr(ck_json *j, const char *key);
void ck_json_end(ck_json *j);     /* closes the innermost; the outermost ends the line */
void ck_json_break(ck_json *j);
/* 1 when a write failed (or ferror on the FILE) or the nesting was wrong
 * (deeper than CK_JSON_MAX_DEPTH, an end with nothing open), else 0. The
 * FILE's own flush and close are still the caller's to check. */
int  ck_json_failed(const ck_json *j);

/* ------------------------------------------------------------ Chrome trace */

/* A Chrome trace-event file (opens in https://ui.perfetto.dev or
 * chrome://tracing; colldraw --gantt draws it), one event a line so that a
 * reader going line by line finds each whole:
 *
 *   {"displayTimeUnit":"ms","otherData":{...},
 *   "traceEvents":[
 *   {"name":"process_name","ph":"M","pid":0,"args":{"name":"rank 0"}},
 *   {"name":"layer 3","cat":"layer","ph":"X","pid":0,"tid":0,"ts":12.345,"dur":6.000,"args":{...}}
 *   ]}
 *
 *   ck_chrome c;
 *   ck_chrome_open(&c, f, "ms");  ck_json_str(&c.j, "program", "tagtrain"); ...   otherData
 *   ck_chrome_events(&c);
 *   ck_chrome_meta_str(&c, "process_name", 0, -1, "name", "rank 0");
 *   ck_json *a = ck_chrome_complete(&c, "layer 3", "layer", 0, 0, t0_ns, dur_ns);
 *   ck_json_int(a, "step", 3);  ck_chrome_event_end(&c);                           args
 *   if (ck_chrome_close(&c)) ... a write failed
 *
 * Times are integer nanoseconds, written as microseconds with three
 * decimals ("ts":12.345): rounding cannot break the nesting of events. */
typedef struct ck_chrome {
    ck_json j;
} ck_chrome;

/* {"displayTimeUnit":UNIT,"otherData":{ : the caller adds otherData's members to c->j. */
void ck_chrome_open(ck_chrome *c, FILE *f, const char *unit);
/* Ends otherData and opens the event list. */
void ck_chrome_events(ck_chrome *c);
/* A metadata event: {"name":WHAT,"ph":"M","pid":PID,"tid":TID,"args":{KEY:VALUE}}
 * ("process_name", "thread_name", "process_sort_index" ...); tid < 0: none. */
void ck_chrome_meta_str(ck_chrome *c, const char *what, int pid, int tid, const char *key, const char *value);
void ck_chrome_meta_int(ck_chrome *c, const char *what, int pid, int tid, const char *key, long long value);
/* A complete ("X") or instant ("i", thread scope) event, left open at its
 * "args":{ for the caller's members; ck_chrome_event_end closes it. */
ck_json *ck_chrome_complete(ck_chrome *c, const char *name, const char *cat, int pid, int tid, long long ts_ns,
                            long long dur_ns);
ck_json *ck_chrome_instant(ck_chrome *c, const char *name, const char *cat, int pid, int tid, long long ts_ns);
void ck_chrome_event_end(ck_chrome *c);
/* Closes the list and the file's object: 0, or -1 when a write failed. */
int  ck_chrome_close(ck_chrome *c);

/* ------------------------------------------------------------ fault injection */

/* The one test hook of the kit (tests/faults, tests/trainer/kill.sh): the
 * environment variable
 *
 *     COLLKIT_FAULT=HOOK:RANK:SIG[:N][:once=FILE]
 *
 * makes rank RANK (a number, or * for any) send itself SIG (STOP or KILL)
 * the Nth time (default 1, and only then) it passes the point HOOK; with
 * once=FILE only in the run that creates FILE (a job restarted after the
 * fault runs on). Standard output and error are flushed first. The hooks
 * (the table in fault.c, ck_fault_hooks):
 *
 *   phase/PHASE   tagtrain entering a phase whose name starts with PHASE
 *                 ("phase/load", "phase/train (epoch 2)", "phase/save")
 *   shm/1 .. 5    the shm transport's setup: 1 its segment made, 2 every
 *                 rank's made, 3 the descriptors gathered, 4 the peers'
 *                 segments mapped, 5 all agreed
 *   ckpt/write, ckpt/rename, ckpt/between, ckpt/epoch
 *                 tagtrain's checkpoint: after the first array is written,
 *                 before the rename into place, between the two files of a
 *                 save (best, then last), at the end of an epoch's training
 *
 * A COLLKIT_FAULT that names no hook, or is otherwise malformed, is an error
 * at the first point passed: "COLLKIT_FAULT=...: REASON" and exit status 2. */
typedef struct ck_fault_hook {
    const char *name;     /* "shm/3"; a family's prefix ("phase/") when prefix */
    int         prefix;   /* a point matches every hook that starts with it */
    const char *where;    /* the moment, in words */
} ck_fault_hook;
const ck_fault_hook *ck_fault_hooks(size_t *n);

typedef struct ck_fault_spec {
    char hook[96];
    int  rank;          /* -1: any rank */
    int  sig;           /* SIGSTOP or SIGKILL */
    long nth;           /* >= 1 */
    char once[512];     /* "" or the file whose creation arms the fault */
} ck_fault_spec;
/* Parse a COLLKIT_FAULT value: 0, or -1 with the reason in err. */
int ck_fault_parse(const char *spec, ck_fault_spec *out, char *err, size_t errlen);
/* Whether the point `point` (a full name: "phase/train (epoch 2)") passed
 * by `rank` is the spec's hook, for any N. */
int ck_fault_matches(const ck_fault_spec *f, const char *point, int rank);
/* The point: raise the fault when COLLKIT_FAULT names it for this rank and
 * this is its Nth time. `point` must belong to a hook of the table. */
void ck_fault_point(const char *point, int rank);

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_UTIL_H */
