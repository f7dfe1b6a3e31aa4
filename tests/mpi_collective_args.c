/*
 * Every collective entry point with a bad argument on the last rank only:
 * every rank must return the same error, and none may be left waiting in
 * the call (ctest's timeout ends a hang as a failure).  A NULL table or
 * cache handle is the documented exception (rmadht.h) and is not tried.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "rmadht_cache.h"

static int rank, nranks, last;

/* Every rank's code equals expect: one failing check per rank, from the
   minimum and maximum of the codes, so that a rank that diverged shows. */
#define CHECK_ALL(call, expect)                                            \
  do {                                                                     \
    int got_ = (call), lo_, hi_;                                           \
    MPI_Allreduce(&got_, &lo_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);       \
    MPI_Allreduce(&got_, &hi_, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);       \
    CHECK_RC(got_, expect);                                                \
    CHECK(lo_ == hi_);                                                     \
  } while (0)

static rmadht_config table_config(void) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, 16, 24);
  cfg.bytes_per_rank = (size_t)1 << 20;
  return cfg;
}

static void create_args(void) {
  rmadht_config cfg = table_config();
  rmadht *t = NULL;
  CHECK_ALL(rmadht_create(MPI_COMM_WORLD, &cfg, rank == last ? NULL : &t),
            RMADHT_ERR_ARG);
  CHECK(t == NULL);
  CHECK_ALL(rmadht_create(MPI_COMM_WORLD, rank == last ? NULL : &cfg, &t),
            RMADHT_ERR_ARG);
  CHECK(t == NULL);

  /* Bad fields, one at a time. */
  for (int field = 0; field < 5; field++) {
    cfg = table_config();
    int expect = RMADHT_ERR_ARG;
    if (rank == last) {
      switch (field) {
        case 0: cfg.key_size = 0; break;
        case 1: cfg.value_size = 0; break;
        case 2: cfg.mode = (enum rmadht_mode)7; break;
        case 3: cfg.node_local = 2; break;
        case 4: cfg.bytes_per_rank = 8; break; /* below one group */
      }
    }
    if (field == 4) expect = RMADHT_ERR_SIZE;
    CHECK_ALL(rmadht_create(MPI_COMM_WORLD, &cfg, &t), expect);
    CHECK(t == NULL);
  }
  /* Good on every rank alone, but not alike. */
  if (nranks > 1) {
    cfg = table_config();
    if (rank == last) cfg.bytes_per_rank *= 2;
    CHECK_ALL(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_ERR_MISMATCH);
    CHECK(t == NULL);
  }
}

static void table_args(void) {
  rmadht_config cfg = table_config();
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_OK);
  if (!t) return;
  unsigned char key[16] = {1}, value[24] = {2};
  CHECK(rmadht_write(t, key, value) >= 0);
  /* Complete it: a lock-free write's put may wait at the writer until its
     next synchronisation (Open MPI's osc/pt2pt holds it), and the other
     ranks' writes of the same key wait for it to land. */
  CHECK_RC(rmadht_flush(t), RMADHT_OK);

  rmadht_stats s;
  CHECK_ALL(rmadht_get_stats_global(t, rank == last ? NULL : &s),
            RMADHT_ERR_ARG);

  char path[64], other[64];
  snprintf(path, sizeof path, "collective_args_n%d.bin", nranks);
  snprintf(other, sizeof other, "collective_args_n%d_other.bin", nranks);
  const char *bad[2] = {NULL, ""};
  for (int i = 0; i < 2; i++) {
    CHECK_ALL(rmadht_dump(t, rank == last ? bad[i] : path), RMADHT_ERR_ARG);
    CHECK_ALL(rmadht_restore(t, rank == last ? bad[i] : path),
              RMADHT_ERR_ARG);
  }
  if (nranks > 1) {
    /* MPI_File_open needs one file on every rank. */
    CHECK_ALL(rmadht_dump(t, rank == last ? other : path),
              RMADHT_ERR_MISMATCH);
    CHECK_ALL(rmadht_restore(t, rank == last ? other : path),
              RMADHT_ERR_MISMATCH);
  }
  /* None of the refused calls wrote a file, and the table still works. */
  FILE *f = fopen(path, "rb");
  CHECK(f == NULL);
  if (f) fclose(f);
  CHECK_ALL(rmadht_dump(t, path), RMADHT_OK);
  CHECK_ALL(rmadht_restore(t, path), RMADHT_OK);
  CHECK_ALL(rmadht_get_stats_global(t, &s), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) remove(path);
  CHECK_ALL(rmadht_free(&t), RMADHT_OK);
}

static rmadht_cache_config cache_config(int *digits) {
  rmadht_cache_config cfg;
  rmadht_cache_config_default(&cfg, 3, 2);
  for (int i = 0; i < 3; i++) digits[i] = 5;
  cfg.digits = digits;
  cfg.bytes_per_rank = (size_t)1 << 20;
  return cfg;
}

static void cache_create_args(void) {
  int digits[3];
  rmadht_cache_config cfg = cache_config(digits);
  rmadht_cache *c = NULL;
  CHECK_ALL(rmadht_cache_create(MPI_COMM_WORLD, &cfg, rank == last ? NULL : &c),
            RMADHT_ERR_ARG);
  CHECK(c == NULL);
  CHECK_ALL(rmadht_cache_create(MPI_COMM_WORLD, rank == last ? NULL : &cfg,
                                &c),
            RMADHT_ERR_ARG);
  CHECK(c == NULL);
  for (int field = 0; field < 6; field++) {
    cfg = cache_config(digits);
    int expect = RMADHT_ERR_ARG;
    if (rank == last) {
      switch (field) {
        case 0: cfg.n_inputs = 0; break;
        case 1: cfg.n_outputs = 0; break;
        case 2: cfg.zero_below = NAN; break;
        case 3: digits[1] = 16; break;
        case 4: cfg.mode = (enum rmadht_mode)7; break; /* the table's check */
        case 5: cfg.bytes_per_rank = 8; break;         /* likewise */
      }
    }
    if (field == 5) expect = RMADHT_ERR_SIZE;
    CHECK_ALL(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), expect);
    CHECK(c == NULL);
  }
  if (nranks > 1) {
    cfg = cache_config(digits);
    if (rank == last) digits[2] = 6;
    CHECK_ALL(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c),
              RMADHT_ERR_MISMATCH);
    CHECK(c == NULL);
  }
}

static void cache_args(void) {
  int digits[3];
  rmadht_cache_config cfg = cache_config(digits);
  rmadht_cache *c = NULL;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  rmadht_cache_stats s;
  CHECK_ALL(rmadht_cache_get_stats_global(c, rank == last ? NULL : &s),
            RMADHT_ERR_ARG);
  CHECK_ALL(rmadht_cache_get_stats_global(c, &s), RMADHT_OK);
  CHECK_ALL(rmadht_cache_free(&c), RMADHT_OK);
  CHECK(c == NULL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  last = nranks - 1;
  create_args();
  table_args();
  cache_create_args();
  cache_args();
  int rc = check_finish("mpi_collective_args");
  MPI_Finalize();
  return rc;
}
