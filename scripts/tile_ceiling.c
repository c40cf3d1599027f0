/* What one core allows an AVX-512 f32 register tile like src/exec/kernels/gemm.rs's: FMAs
 * alone, FMAs with a 6x4 tile's four vector loads per step, and whole MRxNV tiles (NV vectors
 * of a packed rhs row against MR broadcast lhs elements per step) over cache-resident operands.
 *
 *     gcc -O3 -mavx512f -o /tmp/tile_ceiling scripts/tile_ceiling.c && /tmp/tile_ceiling
 *
 * Prints GFLOP/s per line; docs/performance.md compares the tile with them. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static float line_block[64 * 64] __attribute__((aligned(64)));

static void fmas(int loads) {
    __m512 acc[24];
    for (int i = 0; i < 24; i++) acc[i] = _mm512_set1_ps(i * 0.001f);
    __m512 b[4] = {_mm512_set1_ps(0.9999f), _mm512_set1_ps(1e-4f), _mm512_set1_ps(2e-4f), _mm512_set1_ps(3e-4f)};
    long n = 50000000;
    double t0 = now();
    for (long k = 0; k < n; k++) {
        if (loads) {
            const float *p = line_block + (k & 63) * 64;
            for (int v = 0; v < 4; v++) b[v] = _mm512_load_ps(p + 16 * v);
        }
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(0.5f + i / 4), b[i % 4], acc[i]);
    }
    double s = now() - t0;
    float sum = 0;
    for (int i = 0; i < 24; i++) sum += _mm512_reduce_add_ps(acc[i]);
    printf("24 FMAs per step, %s: %.1f GFLOP/s (%g)\n", loads ? "4 vector loads" : "no loads", n * 24.0 * 32 / s / 1e9, sum);
}

#define TILE(MR, NV)                                                                              \
    static void tile_##MR##_##NV(const float *a, const float *b, int depth, float *c, int rows) { \
        for (int r = 0; r + MR <= rows; r += MR) {                                                \
            __m512 s[MR][NV];                                                                     \
            for (int i = 0; i < MR; i++)                                                          \
                for (int v = 0; v < NV; v++) s[i][v] = _mm512_setzero_ps();                       \
            const float *rows_a = a + (long)r * depth;                                            \
            for (int p = 0; p < depth; p++) {                                                     \
                __m512 bv[NV];                                                                    \
                for (int v = 0; v < NV; v++) bv[v] = _mm512_load_ps(b + p * 64 + v * 16);         \
                _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                           \
                    __m512 x = _mm512_set1_ps(rows_a[i * depth + p]);                             \
                    for (int v = 0; v < NV; v++) s[i][v] = _mm512_fmadd_ps(x, bv[v], s[i][v]);    \
                }                                                                                 \
            }                                                                                     \
            for (int i = 0; i < MR; i++)                                                          \
                for (int v = 0; v < NV; v++) _mm512_storeu_ps(c + (long)(r + i) * 64 + v * 16, s[i][v]); \
        }                                                                                         \
    }
TILE(6, 4)
TILE(8, 3)
TILE(9, 3)
TILE(12, 2)
TILE(14, 2)

int main(void) {
    fmas(0);
    fmas(1);
    int depth = 512, rows = 504, reps = 250;
    float *a = aligned_alloc(64, sizeof(float) * rows * depth);
    float *b = aligned_alloc(64, sizeof(float) * depth * 64);
    float *c = aligned_alloc(64, sizeof(float) * rows * 64);
    for (long i = 0; i < (long)rows * depth; i++) a[i] = 1e-3f * (i % 7);
    for (int i = 0; i < depth * 64; i++) b[i] = 1e-3f * (i % 5);
#define TIME(MR, NV)                                                                               \
    {                                                                                              \
        double t0 = now();                                                                         \
        for (int it = 0; it < reps; it++) tile_##MR##_##NV(a, b, depth, c, rows);                  \
        double s = now() - t0;                                                                     \
        printf("%dx%d tile, depth %d: %.1f GFLOP/s\n", MR, NV, depth, 2.0 * (rows / MR * MR) * depth * 16 * NV * reps / s / 1e9); \
    }
    TIME(6, 4) TIME(8, 3) TIME(9, 3) TIME(12, 2) TIME(14, 2)
    return c[0] == 12345.0f;
}
