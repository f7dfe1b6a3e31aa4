/*
 * The optional progress thread (rmadht_config.progress_us).  With
 * MPI_THREAD_MULTIPLE: every variant creates a table with the thread, the
 * last rank writes keys and then computes without any MPI call while rank
 * 0 reads them, every read returns the written value, and rmadht_free
 * joins the thread (the test ends).  Without it (run with the argument
 * "single"): creating a table with the thread fails on every rank with
 * RMADHT_ERR_ARG and a detail that names MPI_THREAD_MULTIPLE, creates
 * nothing, and a table without the thread still works.  Either way, out of
 * range and differing values are refused on every rank.  How long reads
 * wait is measured by rmadht-progress, not asserted here.
 */
#include <string.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

enum { KS = 16, VS = 40, KEYS = 200 };

static int rank, nranks;

static rmadht_config config(const struct variant *v, int progress_us) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  cfg.bytes_per_rank = (size_t)256 << 10;
  variant_config(&cfg, v);
  cfg.progress_us = progress_us;
  return cfg;
}

/* Rank 0 reads the last rank's keys while the last rank computes for
   `seconds` outside MPI; every read must find the written value. */
static void reads_while_busy(rmadht *t, double seconds) {
  int last = nranks - 1;
  unsigned char key[KS], val[VS];
  if (rank == last)
    for (uint64_t i = 0; i < KEYS; i++) {
      make_key(key, KS, i);
      make_value(val, VS, i, 1);
      int rc = rmadht_write(t, key, val);
      CHECK(rc == RMADHT_OK || rc == RMADHT_EVICTED);
    }
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == last) {
    volatile double x = 1;
    double end = check_clock() + seconds;
    while (check_clock() < end) x = x * 1.0000001 + 1e-9;
  } else if (rank == 0) {
    double end = check_clock() + seconds;
    long reads = 0, good = 0;
    for (uint64_t i = 0; check_clock() < end; i = (i + 1) % KEYS, reads++) {
      make_key(key, KS, i);
      int rc = rmadht_read(t, key, val);
      good += rc == RMADHT_OK && value_ok(val, VS, i, 1);
    }
    CHECK(reads > 0);
    CHECK(good == reads);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Refused values: the same error on every rank and no table. */
static void refused(const struct variant *v, int provided) {
  int bad[] = {-1, 1000001};
  for (int i = 0; i < 2; i++) {
    rmadht_config cfg = config(v, bad[i]);
    rmadht *t = (rmadht *)&cfg;
    CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_ERR_ARG);
    CHECK(t == NULL);
  }
  if (nranks > 1) { /* only rank 0 asks for the thread */
    rmadht_config cfg = config(v, rank == 0 ? 100 : 0);
    rmadht *t = (rmadht *)&cfg;
    CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t),
             provided == MPI_THREAD_MULTIPLE ? RMADHT_ERR_MISMATCH
                                             : RMADHT_ERR_ARG);
    CHECK(t == NULL);
  }
}

int main(int argc, char **argv) {
  int single = argc > 1 && strcmp(argv[1], "single") == 0;
  int provided;
  MPI_Init_thread(&argc, &argv,
                  single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (!single && provided != MPI_THREAD_MULTIPLE && rank == 0)
    printf("mpi_progress: no MPI_THREAD_MULTIPLE here; checking the "
           "error instead\n");

  for (int vi = 0; vi < N_VARIANTS; vi++) {
    const struct variant *v = &test_variants[vi];
    refused(v, provided);
    rmadht_config cfg = config(v, 50);
    rmadht *t = NULL;
    int rc = rmadht_create(MPI_COMM_WORLD, &cfg, &t);
    if (provided == MPI_THREAD_MULTIPLE && rc == RMADHT_ERR_MPI &&
        strstr(rmadht_error_detail(), "osc/pt2pt")) {
      /* Open MPI's osc/pt2pt, the component for TCP between hosts, makes
         no window under MPI_THREAD_MULTIPLE: the error must say so and
         name the window call. */
      CHECK(strncmp(rmadht_error_detail(), "MPI_Win_allocate", 16) == 0);
      CHECK(strstr(rmadht_error_detail(), "MPI_THREAD_MULTIPLE") != NULL);
      CHECK(t == NULL);
      continue;
    }
    if (provided == MPI_THREAD_MULTIPLE) {
      CHECK_RC(rc, RMADHT_OK);
      if (rc) continue;
      reads_while_busy(t, 0.3);
      CHECK_RC(rmadht_free(&t), RMADHT_OK);
      CHECK(t == NULL);
    } else {
      CHECK_RC(rc, RMADHT_ERR_ARG);
      CHECK(t == NULL);
      CHECK(strstr(rmadht_error_detail(), "MPI_THREAD_MULTIPLE") != NULL);
      CHECK(strstr(rmadht_error_detail(), "MPI_Init_thread") != NULL);
      /* Nothing was left behind: the same table without the thread works. */
      cfg.progress_us = 0;
      CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_OK);
      if (!t) continue;
      reads_while_busy(t, 0.05);
      CHECK_RC(rmadht_free(&t), RMADHT_OK);
    }
  }
  int rc = check_finish(single ? "mpi_progress single" : "mpi_progress");
  MPI_Finalize();
  return rc;
}
