/*
 * rng.h — the trainer's random numbers: splitmix64 to derive seeds, then
 * xorshift64* streams. Every stream is a pure function of (seed, purpose,
 * rank, epoch), never of how many numbers an earlier epoch drew, so a run
 * resumed at an epoch boundary draws exactly what the uninterrupted run drew,
 * and a checkpoint only needs the seed and the epoch to restore every stream.
 */
#ifndef TRAINER_RNG_H
#define TRAINER_RNG_H

#include <math.h>
#include <stdint.h>
#include <stddef.h>

typedef struct { uint64_t s; } rng_t;

static inline uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Streams of the trainer; the purpose keeps them from ever coinciding. */
enum { RNG_INIT = 1, RNG_SHUFFLE = 2, RNG_DROPOUT = 3 };

static inline rng_t rng_stream(uint64_t seed, uint64_t purpose, uint64_t rank, uint64_t epoch)
{
    uint64_t x = splitmix64(seed);
    x = splitmix64(x ^ purpose);
    x = splitmix64(x ^ (rank + 1) * 0xd1b54a32d192ed03ull);
    x = splitmix64(x ^ (epoch + 1) * 0x8cb92ba72f3d8dd7ull);
    return (rng_t){x ? x : 1};   /* xorshift state must be non-zero */
}

static inline uint64_t rng_next(rng_t *r)
{
    uint64_t x = r->s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, 1) with 24 random bits: exactly representable as float. */
static inline float rng_uniform(rng_t *r) { return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f); }

/* Uniform integer in [0, n): multiply-high, bias below 2^-32 for n < 2^32. */
static inline size_t rng_below(rng_t *r, size_t n)
{
    return (size_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Standard normal by Box-Muller (one of the pair is used; init only). */
static inline float rng_normal(rng_t *r)
{
    double u1 = ((double)(rng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

#endif
