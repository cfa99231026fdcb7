/*
 * test_devstep — the GPU-free decisions of tagtrain --device cuda
 * (trainer/devstep.h), on any machine:
 *   - --device takes cpu and cuda only;
 *   - --algo must take device buffers: ring, twoshot, auto pass, mpi (host
 *     only) and an unknown name are refused with the names that can run;
 *   - auto picks nccl only with NCCL in the build and no two ranks on one
 *     GPU (ids compared), else ring with the reason (which ranks share what);
 *     a named algorithm is taken as given;
 *   - the device model's plug-in loads where the build has CUDA (GPU or
 *     not), and says "no CUDA" where it has none;
 *   - devstep_available says yes, or no with a reason (no GPU here, or no
 *     CUDA in this build) — never an empty one.
 */
#include <stdio.h>
#include <string.h>
#include "devstep.h"
#include "check.h"

enum { ID = 16 };

int main(void)
{
    char err[1024], note[256];
    CHECK(devstep_parse_device("cpu") == 0 && devstep_parse_device("cuda") == 1, "cpu, cuda");
    CHECK(devstep_parse_device("gpu") == -1 && devstep_parse_device("") == -1 && devstep_parse_device("CUDA") == -1,
          "only cpu and cuda");

    CHECK(!devstep_check_algo("ring", err, sizeof err) && !devstep_check_algo("auto", err, sizeof err) &&
          !devstep_check_algo("ring_pipelined", err, sizeof err), "ring, ring_pipelined, auto take device buffers");
    err[0] = '\0';
    CHECK(devstep_check_algo("mpi", err, sizeof err) == -1 && strstr(err, "'mpi' runs on host buffers") &&
          strstr(err, "ring"), "mpi refused, the device algorithms named: %s", err);
    err[0] = '\0';
    CHECK(devstep_check_algo("nope", err, sizeof err) == -1 && strstr(err, "unknown algorithm 'nope'"),
          "an unknown name: %s", err);
    CHECK(devstep_check_algo("ring,tree", err, sizeof err) == -1, "one algorithm, not a list");

    /* Four ranks on four GPUs; on two (0 and 2 share); on one. */
    const char four[4][ID] = {"0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:00.0"};
    const char two[4][ID] = {"0000:01:00.0", "0000:02:00.0", "0000:01:00.0", "0000:02:00.0"};
    const char *a = devstep_pick_algo("auto", 1, four[0], ID, 4, note, sizeof note);
    CHECK(!strcmp(a, "nccl") && strstr(note, "nccl"), "4 GPUs with NCCL: %s (%s)", a, note);
    a = devstep_pick_algo("auto", 1, two[0], ID, 4, note, sizeof note);
    CHECK(!strcmp(a, "ring") && strstr(note, "ranks 0 and 2 share GPU 0000:01:00.0"), "shared GPUs: %s (%s)", a,
          note);
    a = devstep_pick_algo("auto", 0, four[0], ID, 4, note, sizeof note);
    CHECK(!strcmp(a, "ring") && strstr(note, "no NCCL"), "no NCCL: %s (%s)", a, note);
    a = devstep_pick_algo("auto", 1, two[0], ID, 1, note, sizeof note);
    CHECK(!strcmp(a, "nccl"), "one rank has its GPU to itself: %s (%s)", a, note);
    a = devstep_pick_algo("twoshot", 1, two[0], ID, 4, note, sizeof note);
    CHECK(!strcmp(a, "twoshot") && !note[0], "a named algorithm as given: %s (%s)", a, note);

    /* The plug-in loads where this build has CUDA (every symbol it needs is
     * there: cuBLAS, the CUDA runtime, its own optimizer), GPU or not. */
    err[0] = '\0';
    int ld = devstep_load(err, sizeof err);
#ifdef COLLKIT_HAVE_CUDA
    CHECK(ld == 0, "lib/libtagtrain_cuda.so does not load: %s", err);
#else
    CHECK(ld == -1 && strstr(err, "no CUDA"), "a build without CUDA: %d, '%s'", ld, err);
#endif
    err[0] = '\0';
    int av = devstep_available(err, sizeof err);
    CHECK(av == 0 || (av == -1 && strlen(err) > 10), "devstep_available: %d, reason '%s'", av, err);
    printf("devstep_available: %s\n", av ? err : "a GPU");

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
