/* The roofline check for solvers/numba_fused.py: the same fused step in C, on the seed data.
 *
 *   gcc -O3 -march=native -mprefer-vector-width=512 -ffast-math docs/roofline/fused.c -o /tmp/fused -lm
 *   /tmp/fused 1000 1000000      # n, steps: prints w, b and the µs per step
 *
 * -ffast-math lets the compiler split the two sums across SIMD lanes, as numba's fastmath=True does; gcc 12
 * uses 256-bit vectors unless told otherwise (0.26 against 0.15 µs a step at n = 1,000 on an AVX-512 Xeon).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    long steps = argc > 2 ? atol(argv[2]) : 1000000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), lr = 1e-4;
    for (int i = 0; i < n; i++) {
        x[i] = 100.0 * i / n; /* solvers/problem.py: seed_x (n = 1000 is arange(100, step=0.1)) */
        y[i] = x[i] + 20 * sin(x[i] / 10) + 15;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    double w = 0, b = 0;
    for (long step = 0; step < steps; step++) {
        double sum_residual = 0, sum_residual_x = 0;
        for (int i = 0; i < n; i++) {
            double residual = y[i] - (w * x[i] + b);
            sum_residual += residual;
            sum_residual_x += residual * x[i];
        }
        w += lr * 2.0 / n * sum_residual_x;
        b += lr * 2.0 / n * sum_residual;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (end.tv_sec - start.tv_sec) + 1e-9 * (end.tv_nsec - start.tv_nsec);
    printf("w %.9g b %.9g us_per_step %.4f\n", w, b, seconds / steps * 1e6);
    return 0;
}
