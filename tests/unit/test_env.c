/*
 * test_env — the library's numeric COLLKIT_* variables (COLLKIT_TIMEOUT,
 * COLLKIT_CHUNK, COLLKIT_SHM_HEAP): a good value is taken; a value it cannot
 * use (abc, nan, an empty string, 0 for the chunk) keeps the default, never
 * 0 = "watchdog off", and rank 0 names it once per variable, not once per
 * communicator; the other ranks say nothing.
 */
#define _POSIX_C_SOURCE 200809L   /* setenv, unsetenv, dup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collkit.h"
#include "check.h"

/* stderr into a temporary file while a communicator is created; what was
 * written there comes back in out. */
static ck_comm *create_capturing(unsigned mem, char *out, size_t cap)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    if (!tmp || saved < 0 || dup2(fileno(tmp), 2) < 0) {
        printf("cannot capture stderr\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ck_comm *c = NULL;
    int rc = ck_comm_create(MPI_COMM_WORLD, mem, &c);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    size_t n = 0;
    rewind(tmp);
    if (cap) n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    if (rc != CK_SUCCESS) {
        printf("ck_comm_create: %s\n", ck_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fputs(out, stderr);   /* shown in the test's log as well */
    return c;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle)) n++;
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    check_rank = rank;
    char said[4096];
    ck_comm *c;
    unsetenv("COLLKIT_TIMEOUT");
    unsetenv("COLLKIT_CHUNK");
    unsetenv("COLLKIT_SHM_HEAP");

    /* Unset: the defaults, nothing said. */
    c = create_capturing(CK_MEM_HOST, said, sizeof said);
    const double timeout0 = ck_comm_config(c)->timeout_s;
    const size_t chunk0 = ck_comm_config(c)->chunk_bytes;
    CHECK(timeout0 == 30 && chunk0 == 256 * 1024 && !*said, "defaults: %g s, %zu B, said [%s]", timeout0, chunk0, said);
    ck_comm_destroy(c);

    /* Good values are taken. */
    setenv("COLLKIT_TIMEOUT", "2.5", 1);
    setenv("COLLKIT_CHUNK", "64K", 1);
    c = create_capturing(CK_MEM_HOST, said, sizeof said);
    CHECK(ck_comm_config(c)->timeout_s == 2.5 && ck_comm_config(c)->chunk_bytes == 65536 && !*said,
          "good values: %g s, %zu B, said [%s]", ck_comm_config(c)->timeout_s, ck_comm_config(c)->chunk_bytes, said);
    ck_comm_destroy(c);
    setenv("COLLKIT_TIMEOUT", "0", 1);
    c = create_capturing(CK_MEM_HOST, said, sizeof said);
    CHECK(ck_comm_config(c)->timeout_s == 0 && !*said, "COLLKIT_TIMEOUT=0 is off, as documented");
    ck_comm_destroy(c);

    /* Values it cannot use: the defaults, named by rank 0 (once). */
    setenv("COLLKIT_TIMEOUT", "abc", 1);
    setenv("COLLKIT_CHUNK", "lots", 1);
    c = create_capturing(CK_MEM_HOST, said, sizeof said);
    CHECK(ck_comm_config(c)->timeout_s == timeout0, "COLLKIT_TIMEOUT=abc keeps %g s (got %g: atof's 0 is 'off')",
          timeout0, ck_comm_config(c)->timeout_s);
    CHECK(ck_comm_config(c)->chunk_bytes == chunk0, "COLLKIT_CHUNK=lots keeps %zu B", chunk0);
    if (rank == 0) {
        CHECK(strstr(said, "collkit: COLLKIT_TIMEOUT=abc: expected a number; the watchdog stays at 30 s\n") &&
              strstr(said, "collkit: COLLKIT_CHUNK=lots: expected a number with an optional K, M or G suffix "
                           "(x1024), e.g. 64K; the chunk stays 262144 B\n") && count(said, "\n") == 2,
              "rank 0 names both: [%s]", said);
    } else {
        CHECK(!*said, "rank %d says nothing: [%s]", rank, said);
    }
    ck_comm_destroy(c);
    /* Another communicator, other bad values: not said again. */
    setenv("COLLKIT_TIMEOUT", "nan", 1);
    setenv("COLLKIT_CHUNK", "0", 1);
    c = create_capturing(CK_MEM_HOST, said, sizeof said);
    CHECK(ck_comm_config(c)->timeout_s == timeout0 && ck_comm_config(c)->chunk_bytes == chunk0 && !*said,
          "nan and 0: the defaults, said once per variable (%g s, %zu B, [%s])", ck_comm_config(c)->timeout_s,
          ck_comm_config(c)->chunk_bytes, said);
    ck_comm_destroy(c);
    setenv("COLLKIT_TIMEOUT", "", 1);
    c = create_capturing(CK_MEM_HOST, said, sizeof said);
    CHECK(ck_comm_config(c)->timeout_s == timeout0, "an empty COLLKIT_TIMEOUT keeps %g s (got %g)", timeout0,
          ck_comm_config(c)->timeout_s);
    ck_comm_destroy(c);
    unsetenv("COLLKIT_TIMEOUT");
    unsetenv("COLLKIT_CHUNK");

    /* The shm transport's heap: named the same way. */
    setenv("COLLKIT_SHM_HEAP", "big", 1);
    c = create_capturing(CK_MEM_SHM, said, sizeof said);
    if (rank == 0)
        CHECK(strstr(said, "collkit: COLLKIT_SHM_HEAP=big: expected a number with an optional K, M or G suffix "
                           "(x1024), e.g. 64K; the heap stays 8G\n"), "rank 0 names COLLKIT_SHM_HEAP: [%s]", said);
    else
        CHECK(!strstr(said, "COLLKIT_SHM_HEAP"), "rank %d says nothing: [%s]", rank, said);
    ck_comm_destroy(c);
    unsetenv("COLLKIT_SHM_HEAP");

    int f = failed, all;
    MPI_Allreduce(&f, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d: %d passed, %d failed\n", rank, passed, failed);
    MPI_Finalize();
    return all ? 1 : 0;
}
