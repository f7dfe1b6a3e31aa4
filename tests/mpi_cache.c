/*
 * The surrogate cache over several ranks: rows stored on one rank hit on
 * every rank, inputs within the rounding hit the same entry and get back
 * the exact inputs stored, non-finite rows miss and are counted, and bad
 * arguments fail alike on every rank.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rmadht_cache.h"

#define NIN 3
#define NOUT 2
#define ROWS 300 /* per rank */

static int rank, nranks;

static rmadht_cache_config small_config(const int *digits,
                                        const unsigned char *lg) {
  rmadht_cache_config cfg;
  rmadht_cache_config_default(&cfg, NIN, NOUT);
  cfg.digits = digits;
  cfg.log10 = lg;
  cfg.bytes_per_rank = (size_t)4 << 20;
  return cfg;
}

/* Row i of rank r: distinct at 5 digits, spread over decades. */
static void make_row(int r, int i, double *in, double *out) {
  in[0] = (1.0 + r * ROWS + i) * 1e-3;
  in[1] = -(2.0 + i) * pow(10.0, i % 9 - 6);
  in[2] = (i % 4 == 0) ? 0.0 : 1e-14 * (1 + r); /* below the floor: 0 */
  out[0] = in[0] * 2;
  out[1] = in[1] + in[0];
}

static void test_bad_args(void) {
  int digits[NIN] = {5, 5, 5};
  rmadht_cache *c = (rmadht_cache *)&digits; /* must be set to NULL */
  rmadht_cache_config cfg = small_config(digits, NULL);

  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, NULL, &c), RMADHT_ERR_ARG);
  CHECK(c == NULL);
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, NULL), RMADHT_ERR_ARG);
  cfg.n_inputs = 0;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_ARG);
  cfg = small_config(digits, NULL);
  cfg.n_outputs = 0;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_ARG);
  cfg = small_config(digits, NULL);
  cfg.zero_below = NAN;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_ARG);
  cfg.zero_below = -1;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_ARG);
  cfg.zero_below = INFINITY;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_ARG);
  cfg = small_config(digits, NULL);
  for (int bad = 0; bad < 2; bad++) {
    digits[1] = bad ? 16 : 0;
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_ARG);
  }
  /* A bad value on one rank only fails every rank. */
  digits[1] = rank == nranks - 1 ? 0 : 5;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_ARG);
  /* Rounding that differs across ranks would split the keys. */
  if (nranks > 1) {
    digits[1] = rank == 0 ? 6 : 5;
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c),
             RMADHT_ERR_MISMATCH);
    digits[1] = 5;
    unsigned char lg[NIN] = {1, 1, (unsigned char)(rank == 0)};
    cfg.log10 = lg;
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c),
             RMADHT_ERR_MISMATCH);
    cfg.log10 = NULL;
  }
  digits[1] = 5;
  /* The table's own checks come through: not one group fits. */
  cfg.bytes_per_rank = 64;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_SIZE);
  CHECK(c == NULL);

  cfg = small_config(digits, NULL);
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  double in[NIN] = {1, 2, 3}, out[NOUT];
  unsigned char hit;
  rmadht_cache_stats st;
  rmadht *t = NULL;
  CHECK_RC(rmadht_cache_lookup(NULL, 1, in, out, &hit), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_lookup(c, 1, NULL, out, &hit), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_lookup(c, 1, in, NULL, &hit), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_lookup(c, 1, in, out, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_lookup(c, 0, NULL, NULL, NULL), RMADHT_OK);
  CHECK_RC(rmadht_cache_store(NULL, 1, in, out), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_store(c, 1, NULL, out), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_store(c, 1, in, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_store(c, 0, NULL, NULL), RMADHT_OK);
  CHECK_RC(rmadht_cache_get_stats(NULL, &st), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_get_stats(c, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_get_table(c, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_get_table(NULL, &t), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_get_stats(c, &st), RMADHT_OK);
  CHECK(st.lookups == 0 && st.stores == 0);
  CHECK_RC(rmadht_cache_free(NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
  CHECK(c == NULL);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_ERR_ARG);
}

static void test_across_ranks(void) {
  int digits[NIN] = {5, 5, 5};
  unsigned char lg[NIN] = {0, 1, 1};
  rmadht_cache_config cfg = small_config(digits, lg);
  rmadht_cache *c = NULL;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  rmadht *t = NULL;
  CHECK_RC(rmadht_cache_get_table(c, &t), RMADHT_OK);
  rmadht_info info;
  CHECK_RC(rmadht_get_info(t, &info), RMADHT_OK);
  CHECK(info.key_size == NIN * 10 && info.value_size == 8 * (NIN + NOUT));

  static double in[ROWS * NIN], out[ROWS * NOUT];
  for (int i = 0; i < ROWS; i++)
    make_row(rank, i, in + i * NIN, out + i * NOUT);
  CHECK_RC(rmadht_cache_store(c, ROWS, in, out), RMADHT_OK);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Every rank finds every rank's rows, queried with noise far inside the
     5 digits, and gets back the exact inputs that were stored. */
  int n = ROWS * nranks;
  double *q = malloc(sizeof(double) * n * NIN);
  double *want_in = malloc(sizeof(double) * n * NIN);
  double *want_out = malloc(sizeof(double) * n * NOUT);
  double *got = malloc(sizeof(double) * n * NOUT);
  double *got_in = malloc(sizeof(double) * n * NIN);
  unsigned char *hit = malloc(n);
  for (int r = 0; r < nranks; r++)
    for (int i = 0; i < ROWS; i++) {
      int k = r * ROWS + i;
      make_row(r, i, want_in + k * NIN, want_out + k * NOUT);
      for (int j = 0; j < NIN; j++)
        q[k * NIN + j] = want_in[k * NIN + j] * (1 + 1e-9);
    }
  CHECK_RC(rmadht_cache_lookup_inputs(c, n, q, got, got_in, hit), RMADHT_OK);
  int hits = 0, exact = 0;
  for (int k = 0; k < n; k++) {
    hits += hit[k];
    exact += hit[k] && memcmp(got + k * NOUT, want_out + k * NOUT,
                              sizeof(double) * NOUT) == 0 &&
             memcmp(got_in + k * NIN, want_in + k * NIN,
                    sizeof(double) * NIN) == 0;
  }
  CHECK(hits == n);
  CHECK(exact == n);

  /* A change in the 5th digit of a raw input misses; the same relative
     change at 1e-5 on a log input changes log10 only in its 6th digit. */
  double moved[2][NIN];
  memcpy(moved[0], want_in, sizeof moved[0]);
  memcpy(moved[1], want_in, sizeof moved[1]);
  moved[0][0] *= 1.001;
  moved[1][1] *= 1.00001;
  unsigned char h2[2];
  double o2[2 * NOUT];
  CHECK_RC(rmadht_cache_lookup(c, 2, &moved[0][0], o2, h2), RMADHT_OK);
  CHECK(h2[0] == 0 && isnan(o2[0]) && isnan(o2[1]));
  CHECK(h2[1] == 1 && o2[2] == want_out[0]);

  /* Non-finite rows: miss on lookup, skipped on store, counted. */
  rmadht_cache_stats before, after;
  CHECK_RC(rmadht_cache_get_stats(c, &before), RMADHT_OK);
  double bad[3][NIN] = {{NAN, 1, 1}, {1, INFINITY, 1}, {1, 1, -INFINITY}};
  double bad_out[3 * NOUT] = {1, 2, 3, 4, 5, 6};
  unsigned char h3[3] = {1, 1, 1};
  CHECK_RC(rmadht_cache_store(c, 3, &bad[0][0], bad_out), RMADHT_OK);
  CHECK_RC(rmadht_cache_lookup(c, 3, &bad[0][0], bad_out, h3), RMADHT_OK);
  CHECK(!h3[0] && !h3[1] && !h3[2] && isnan(bad_out[5]));
  CHECK_RC(rmadht_cache_get_stats(c, &after), RMADHT_OK);
  CHECK(after.nonfinite == before.nonfinite + 6);
  CHECK(after.stores == before.stores);
  CHECK(after.lookups == before.lookups + 3);
  CHECK(after.lookup_hits == before.lookup_hits);
  CHECK(after.table.writes == before.table.writes);

  /* -0.0 finds what 0.0 stored; a negative input is another key. */
  double z[2][NIN] = {{0.5, 0.0, 7}, {0.5, -0.0, 7}}, zo[NOUT] = {rank, 1};
  double neg[NIN] = {-0.5, -0.0, 7}, zg[2 * NOUT];
  if (rank == 0) CHECK_RC(rmadht_cache_store(c, 1, z[0], zo), RMADHT_OK);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_RC(rmadht_cache_lookup(c, 2, &z[0][0], zg, h2), RMADHT_OK);
  CHECK(h2[0] && h2[1] && zg[0] == 0 && zg[2] == 0);
  CHECK_RC(rmadht_cache_lookup(c, 1, neg, zg, h2), RMADHT_OK);
  CHECK(!h2[0]);

  /* Counters: this rank's, and the sum over all ranks. */
  rmadht_cache_stats st, sum;
  CHECK_RC(rmadht_cache_get_stats(c, &st), RMADHT_OK);
  CHECK(st.stores + st.dropped == ROWS + (rank == 0));
  CHECK(st.lookups == (uint64_t)n + 2 + 3 + 2 + 1);
  CHECK(st.lookup_hits == (uint64_t)n + 1 + 2);
  CHECK(st.table.reads == (uint64_t)n + 2 + 2 + 1);
  CHECK_RC(rmadht_cache_get_stats_global(c, &sum), RMADHT_OK);
  CHECK(sum.lookups == st.lookups * (uint64_t)nranks);
  CHECK(sum.nonfinite == 6 * (uint64_t)nranks);
  CHECK(sum.table.reads == st.table.reads * (uint64_t)nranks);

  free(q);
  free(want_in);
  free(want_out);
  free(got);
  free(got_in);
  free(hit);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}

/* Defaults (7 digits of log10, every input) in fine-lock mode, rows past
   one chunk of the cache, and a table that evicts. */
static void test_defaults_large(void) {
  rmadht_cache_config cfg;
  rmadht_cache_config_default(&cfg, 1, 1);
  cfg.mode = RMADHT_FINE_LOCK;
  cfg.bytes_per_rank = (size_t)1 << 20;
  rmadht_cache *c = NULL;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  enum { N = 2500 };
  static double in[N], out[N], got[N];
  static unsigned char hit[N];
  for (int i = 0; i < N; i++) {
    in[i] = (rank + 1) * 1e-5 * (1 + i * 1e-5);
    out[i] = i;
  }
  CHECK_RC(rmadht_cache_store(c, N, in, out), RMADHT_OK);
  CHECK_RC(rmadht_cache_lookup(c, N, in, got, hit), RMADHT_OK);
  int ok = 0;
  for (int i = 0; i < N; i++) ok += hit[i] && got[i] == out[i];
  CHECK(ok == N);
  rmadht_cache_stats st;
  CHECK_RC(rmadht_cache_get_stats(c, &st), RMADHT_OK);
  CHECK(st.lookups == N && st.lookup_hits == N && st.stores == N);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  test_bad_args();
  test_across_ranks();
  test_defaults_large();
  int rc = check_finish("mpi_cache");
  MPI_Finalize();
  return rc;
}
