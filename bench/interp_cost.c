/*
 * What an interpolating lookup costs per row, against PHREEQC's 0.5-1.25 ms
 * per reacting cell: the whole lookup of rows that miss their exact key and
 * are interpolated, the exact read alone (the same rows in a cache without
 * interpolation), and the mathematics alone (the estimator and its
 * leave-one-out error on neighbours already in memory).  The rest, whole
 * minus exact minus mathematics, is fetching the neighbours: the bucket
 * read, the location read and the check for stale locations.
 *
 *   mpiexec -n N rmadht-interp-cost [n_inputs n_outputs rows_per_rank]
 *
 * Every rank stores 20 rows in each of its buckets, then looks up rows
 * between them, in batches of 1024; figures are medians over repetitions,
 * per row, on rank 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "rmadht_cache.h"

#define PER_BUCKET 20
#define BATCH 1024
#define REPS 7

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* Bucket b of this rank: input 0 centred on 1.0 + 0.1 * b (one neighbour
   key at 2 digits each), the others within [1.00, 1.04). */
static void make_row(int b, unsigned *seed, int nin, double *x) {
  for (int i = 0; i < nin; i++) {
    *seed = *seed * 1103515245u + 12345u;
    double r = ((*seed >> 8) & 0xffff) / 65536.0;
    x[i] = (i == 0 ? 1.0 + 0.1 * b : 1.0) + 0.04 * r;
  }
}

static void f(const double *x, int nin, int nout, double *y) {
  for (int o = 0; o < nout; o++) {
    double s = o;
    for (int i = 0; i < nin; i++) s += (1 + (i + o) % 3) * x[i];
    y[o] = s + 0.01 * x[0] * x[nin - 1];
  }
}

static rmadht_cache *make_cache(enum rmadht_interp_method method, int nin,
                                int nout, int *digits, int *ndigits,
                                double *tol) {
  rmadht_cache_config cfg;
  rmadht_cache_config_default(&cfg, (size_t)nin, (size_t)nout);
  static unsigned char no_log[64];
  cfg.digits = digits;
  cfg.log10 = no_log;
  cfg.bytes_per_rank = (size_t)64 << 20;
  cfg.interp.method = method;
  cfg.interp.digits = ndigits;
  cfg.interp.tolerance = tol;
  cfg.interp.max_neighbours = PER_BUCKET;
  cfg.interp.min_neighbours = 5;
  cfg.interp.radius = 2.0 * sqrt((double)nin);
  rmadht_cache *c = NULL;
  if (rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c) != RMADHT_OK) return NULL;
  return c;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int nin = argc > 1 ? atoi(argv[1]) : 9, nout = argc > 2 ? atoi(argv[2]) : 9;
  int rows = argc > 3 ? atoi(argv[3]) : 4096;
  if (nin < 1 || nin > 64 || nout < 1 || nout > 64 || rows < BATCH) {
    if (rank == 0) fprintf(stderr, "bad arguments\n");
    MPI_Finalize();
    return 1;
  }
  int buckets = rows / PER_BUCKET;
  int *digits = malloc((size_t)nin * sizeof *digits);
  int *ndigits = malloc((size_t)nin * sizeof *ndigits);
  double *tol = malloc((size_t)nout * sizeof *tol);
  for (int i = 0; i < nin; i++) {
    digits[i] = 6;
    ndigits[i] = 2;
  }
  for (int o = 0; o < nout; o++) tol[o] = 0.2;
  /* This rank's buckets start after the other ranks' so that their keys
     are spread over all ranks' memory alike. */
  int first = rank * buckets;
  size_t ns = (size_t)buckets * PER_BUCKET;
  double *xs = malloc(ns * (size_t)nin * sizeof *xs);
  double *ys = malloc(ns * (size_t)nout * sizeof *ys);
  double *q = malloc((size_t)BATCH * (size_t)nin * sizeof *q);
  double *out = malloc((size_t)BATCH * (size_t)nout * sizeof *out);
  unsigned char *st = malloc(BATCH);
  unsigned seed = 12345u + (unsigned)rank;
  for (size_t j = 0; j < ns; j++) {
    make_row(first + (int)(j / PER_BUCKET), &seed, nin, xs + j * (size_t)nin);
    f(xs + j * (size_t)nin, nin, nout, ys + j * (size_t)nout);
  }
  /* One batch of queries spread over this rank's buckets. */
  for (int j = 0; j < BATCH; j++)
    make_row(first + j % buckets, &seed, nin, q + (size_t)j * (size_t)nin);

  const char *names[2] = {"idw", "linear"};
  double whole[2], served_frac[2], exact = 0, math[2];
  for (int m = 0; m < 3; m++) {
    enum rmadht_interp_method method =
        m == 0 ? RMADHT_INTERP_NONE
               : m == 1 ? RMADHT_INTERP_IDW : RMADHT_INTERP_LINEAR;
    rmadht_cache *c = make_cache(method, nin, nout, digits, ndigits, tol);
    if (!c) { /* creation fails on every rank alike */
      if (rank == 0) fprintf(stderr, "cannot create the cache\n");
      MPI_Finalize();
      return 1;
    }
    for (size_t at = 0; at < ns; at += BATCH) {
      size_t k = ns - at < BATCH ? ns - at : BATCH;
      rmadht_cache_store(c, k, xs + at * (size_t)nin, ys + at * (size_t)nout);
    }
    rmadht_cache_flush(c);
    MPI_Barrier(MPI_COMM_WORLD);
    double t, tr[REPS];
    size_t served = 0;
    for (int r = 0; r < REPS; r++) {
      double t0 = MPI_Wtime();
      rmadht_cache_lookup(c, BATCH, q, out, st);
      tr[r] = (MPI_Wtime() - t0) / BATCH;
    }
    t = median(tr, REPS);
    for (int j = 0; j < BATCH; j++) served += st[j] == RMADHT_CACHE_INTERPOLATED;
    if (m == 0)
      exact = t;
    else {
      whole[m - 1] = t;
      served_frac[m - 1] = (double)served / BATCH;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rmadht_cache_free(&c);
  }

  /* The mathematics alone, on one bucket's neighbours relative to one
     query, scaled by the cell width 0.1 as the lookup scales them. */
  size_t k = PER_BUCKET, d = (size_t)nin, mo = (size_t)nout;
  double *u = malloc(k * d * sizeof *u), *y = malloc(k * mo * sizeof *y);
  double *est = malloc(2 * mo * sizeof *est);
  double *work = malloc(interp_work_doubles(k, d, mo) * sizeof *work);
  for (size_t j = 0; j < k; j++) {
    for (size_t i = 0; i < d; i++)
      u[j * d + i] = (xs[j * d + i] - q[i]) / 0.1;
    memcpy(y + j * mo, ys + j * mo, mo * sizeof *y);
  }
  for (int m = 0; m < 2; m++) {
    double tr[REPS];
    for (int r = 0; r < REPS; r++) {
      double t0 = MPI_Wtime();
      for (int it = 0; it < 2000; it++) {
        if (m == 0)
          interp_idw(k, d, u, mo, y, est, est + mo, work);
        else
          interp_linear(k, d, u, mo, y, est, est + mo, work);
      }
      tr[r] = (MPI_Wtime() - t0) / 2000;
    }
    math[m] = median(tr, REPS);
  }
  if (rank == 0) {
    printf("interp_cost: %d ranks, %d inputs, %d outputs, %d neighbours per "
           "key, batches of %d rows, medians of %d\n",
           nranks, nin, nout, PER_BUCKET, BATCH, REPS);
    printf("exact lookup (all miss), no interpolation: %8.2f us/row\n",
           exact * 1e6);
    for (int m = 0; m < 2; m++)
      printf("%-6s whole %8.2f us/row = exact %6.2f + fetch %6.2f + "
             "mathematics %6.2f; served %.0f%%\n",
             names[m], whole[m] * 1e6, exact * 1e6,
             (whole[m] - exact - math[m]) * 1e6, math[m] * 1e6,
             100 * served_frac[m]);
  }
  free(digits);
  free(ndigits);
  free(tol);
  free(xs);
  free(ys);
  free(q);
  free(out);
  free(st);
  free(u);
  free(y);
  free(est);
  free(work);
  MPI_Finalize();
  return 0;
}
