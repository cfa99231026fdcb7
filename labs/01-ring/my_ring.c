/*
 * Lab 01 — your ring all-reduce.
 *
 * This program is collcheck with one more algorithm in the registry:
 * `my_ring`, defined below. Fill in the two TODO blocks (HANDOUT.md, steps 2
 * and 3), then run:
 *     mpirun -np 4 build/bin/lab01_ring --algo my_ring --quick
 *
 * Rules: use only the collkit.h point-to-point layer (ck_sendrecv,
 * ck_reduce_local, ck_copy, ck_scratch, ck_block, ck_step). No MPI calls.
 */
#include "collkit_algo.h"
#include "collcheck.h"

static int my_ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);               /* bytes per element */
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    const char *in = sendbuf;                          /* this rank's input (== out when in place) */
    char *out = recvbuf;                               /* where the result must end up */

    if (p == 1) return ck_copy(comm, out, in, count * es);

    /* Scratch for one received block: block 0 is the largest (ck_block). */
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);
    char *tmp = ck_scratch(comm, max_len * es);
    if (!tmp) return CK_ERR_NOMEM;

    /* The skeleton only copies the input: the checker will tell you what is
     * missing. Keep this line until TODO 1 writes every block it should. */
    int rc = ck_copy(comm, out, in, count * es);
    if (rc) return rc;

    /* TODO 1 — reduce-scatter. For s = 0 .. p-2:
     *   ck_step(comm, s, "reduce-scatter");
     *   send block (r - s) mod p to `right`, receive block (r - s - 1) mod p
     *   from `left` into tmp (one ck_sendrecv; use s as the tag), then
     *   out[block] = in[block] op tmp  with ck_reduce_local.
     * ck_block(count, p, b, &offset, &len) gives block b in elements. */

    /* TODO 2 — all-gather. For s = 0 .. p-2:
     *   ck_step(comm, p - 1 + s, "all-gather");
     *   send block (r + 1 - s) mod p from out, receive block (r - s) mod p
     *   straight into out. */

    (void)right; (void)left; (void)tmp; (void)op;
    return CK_SUCCESS;
}

static ck_algo my_ring = {
    .name = "my_ring",
    .summary = "lab 01: your ring all-reduce",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .run = my_ring_run,
};

int main(int argc, char **argv)
{
    /* Your ring must send exactly what the library's ring sends: every block
     * but (r+1) in reduce-scatter and every block but (r+2) in all-gather.
     * The checker compares this with the bytes your ranks actually send. */
    my_ring.bytes_sent = ck_algo_find("ring")->bytes_sent;
    if (ck_register_algo(&my_ring) != CK_SUCCESS) return 2;
    return collcheck_main(argc, argv);
}
