/*
 * Every bad input: NULL pointers, zero and overflowing sizes, bad modes, a
 * table below one group, MPI_COMM_NULL; parameters that differ across
 * ranks; a bad argument on one rank only.  Each must give a clear error,
 * the same on every rank where the contract says so, without hanging,
 * without creating a table, and leaving a working table working.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

enum { KS = 16, VS = 40 }; /* slot 80 bytes, group 640 */

static int rank, nranks;

static uint64_t other_hash(const void *key, size_t len, void *arg) {
  (void)arg;
  uint64_t h = 1469598103934665603u; /* FNV-1a: any function will do */
  const unsigned char *k = key;
  for (size_t i = 0; i < len; i++) h = (h ^ k[i]) * 1099511628211u;
  return h;
}

static rmadht_config good_config(void) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  cfg.bytes_per_rank = (size_t)64 << 10;
  return cfg;
}

/* Checks that every rank got the same code. */
static void check_same_everywhere(int rc) {
  int lo, hi;
  MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi);
}

/* Collective: rmadht_create with this rank's cfg (NULL allowed) and out
   (pass_out 0: NULL).  Expects `expect` here; a failed create must leave
   *out NULL; a created table is freed. */
static int try_create(MPI_Comm comm, const rmadht_config *cfg, int pass_out,
                      int expect) {
  static char sentinel;
  rmadht *t = (rmadht *)(void *)&sentinel; /* create must overwrite it */
  int rc = rmadht_create(comm, cfg, pass_out ? &t : NULL);
  CHECK_RC(rc, expect);
  if (pass_out) {
    if (rc == RMADHT_OK) {
      CHECK(t != NULL && t != (rmadht *)(void *)&sentinel);
      if (t && t != (rmadht *)(void *)&sentinel) CHECK_RC(rmadht_free(&t), RMADHT_OK);
    } else {
      CHECK(t == NULL);
    }
  }
  return rc;
}

/* ------------------------------------------------------------------ */

static void test_bad_config_everywhere(void) {
  rmadht_config cfg = good_config();

  /* The good configuration works, in every mode: the baseline. */
  for (int m = 0; m < 3; m++) {
    cfg = good_config();
    cfg.mode = (enum rmadht_mode)m;
    check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_OK));
  }

  /* NULL configuration and NULL output. */
  check_same_everywhere(try_create(MPI_COMM_WORLD, NULL, 1, RMADHT_ERR_ARG));
  cfg = good_config();
  check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 0, RMADHT_ERR_ARG));
  check_same_everywhere(try_create(MPI_COMM_WORLD, NULL, 0, RMADHT_ERR_ARG));

  /* MPI_COMM_NULL: refused before any communication. */
  cfg = good_config();
  check_same_everywhere(try_create(MPI_COMM_NULL, &cfg, 1, RMADHT_ERR_ARG));

  /* Zero sizes. */
  cfg = good_config();
  cfg.key_size = 0;
  check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_ARG));
  cfg = good_config();
  cfg.value_size = 0;
  check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_ARG));
  cfg = good_config();
  cfg.key_size = cfg.value_size = 0;
  check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_ARG));

  /* Modes outside the enumeration. */
  const int bad_modes[] = {3, 4, -1, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; i++) {
    cfg = good_config();
    cfg.mode = (enum rmadht_mode)bad_modes[i];
    check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_ARG));
  }

  /* node_local is a flag; RMA and node-local both work in every mode. */
  const int bad_flags[] = {2, -1, INT_MAX};
  for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
    cfg = good_config();
    cfg.node_local = bad_flags[i];
    check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_ARG));
  }
  for (int m = 0; m < 3; m++) {
    cfg = good_config();
    cfg.mode = (enum rmadht_mode)m;
    cfg.node_local = 0;
    check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_OK));
  }

  /* gather outside enum rmadht_gather. */
  const int bad_gathers[] = {3, -1, INT_MAX};
  for (size_t i = 0; i < sizeof bad_gathers / sizeof bad_gathers[0]; i++) {
    cfg = good_config();
    cfg.gather = bad_gathers[i];
    check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_ARG));
  }

  /* Below one group: 8 slots of 80 bytes, plus 64 bytes of tags in
     lock-free mode and of lock words in fine-lock mode. */
  const size_t small[] = {0, 1, 80, 639};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
    for (int m = 0; m < 3; m++) {
      cfg = good_config();
      cfg.mode = (enum rmadht_mode)m;
      cfg.bytes_per_rank = small[i];
      check_same_everywhere(
          try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_SIZE));
    }
  }
  cfg = good_config();
  cfg.bytes_per_rank = 640; /* exactly one group: enough for coarse locks */
  cfg.mode = RMADHT_COARSE_LOCK;
  check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_OK));
  for (int m = 0; m < 2; m++) {
    cfg.mode = m ? RMADHT_FINE_LOCK : RMADHT_LOCK_FREE;
    cfg.bytes_per_rank = 640;
    check_same_everywhere(
        try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_SIZE));
    cfg.bytes_per_rank = 640 + 64;
    check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_OK));
  }

  /* Sizes whose sum or product overflows, or a group beyond one MPI count
     (int), with a budget that would otherwise allow them. */
  const size_t huge[][2] = {
      {SIZE_MAX, 1},         {1, SIZE_MAX},
      {SIZE_MAX / 2, SIZE_MAX / 2 + 2},
      {SIZE_MAX / 8, 8},     {(size_t)INT32_MAX, 1},
      {INT32_MAX / 4, INT32_MAX / 4}, /* each allowed, the group not */
      {(size_t)1 << 28, (size_t)1 << 28},
  };
  for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    cfg = good_config();
    cfg.key_size = huge[i][0];
    cfg.value_size = huge[i][1];
    cfg.bytes_per_rank = SIZE_MAX;
    check_same_everywhere(
        try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_ERR_SIZE));
  }
}

/* ------------------------------------------------------------------ */

/* Every rank passes cfg except `odd`, which passes *oddcfg: every rank must
   return `expect` (RMADHT_OK when there is only one rank and the odd
   configuration is valid). */
static void one_rank_differs(int odd, const rmadht_config *oddcfg,
                             int expect) {
  rmadht_config cfg = good_config();
  int rc = try_create(MPI_COMM_WORLD, rank == odd ? oddcfg : &cfg, 1, expect);
  check_same_everywhere(rc);
}

static void test_mismatch(void) {
  int last = nranks - 1;
  /* With one rank nothing can differ: the odd configuration is simply
     the configuration. */
  int mism = nranks > 1 ? RMADHT_ERR_MISMATCH : RMADHT_OK;
  rmadht_config c;

  for (int odd = 0; odd < nranks; odd += last > 0 ? last : 1) {
    c = good_config();
    c.key_size = KS + 1;
    one_rank_differs(odd, &c, mism);
    c = good_config();
    c.value_size = VS - 8;
    one_rank_differs(odd, &c, mism);
    c = good_config();
    c.bytes_per_rank *= 2;
    one_rank_differs(odd, &c, mism);
    c = good_config();
    c.bytes_per_rank += 1; /* same group count, still a different request */
    one_rank_differs(odd, &c, mism);
    c = good_config();
    c.mode = RMADHT_FINE_LOCK;
    one_rank_differs(odd, &c, mism);
    c = good_config();
    c.mode = RMADHT_COARSE_LOCK;
    one_rank_differs(odd, &c, mism);
    c = good_config();
    c.node_local = 0; /* one rank on RMA, the others on loads and stores */
    one_rank_differs(odd, &c, mism);
    c = good_config();
    c.hash = other_hash; /* custom on one rank, default on the others */
    one_rank_differs(odd, &c, mism);
    /* Swapped sizes keep the slot size but not the layout. */
    c = good_config();
    c.key_size = VS;
    c.value_size = KS;
    one_rank_differs(odd, &c, mism);
  }

  /* Default hash on one rank, custom on all others. */
  {
    rmadht_config cfg = good_config(), def = good_config();
    cfg.hash = other_hash;
    int rc = try_create(MPI_COMM_WORLD, rank == 0 ? &def : &cfg, 1, mism);
    check_same_everywhere(rc);
  }
  /* Only the presence of a custom hash is compared (functions cannot be
     compared across processes): a different hash_arg is accepted. */
  {
    rmadht_config cfg = good_config();
    cfg.hash = other_hash;
    cfg.hash_arg = &rank; /* a different address on every rank */
    check_same_everywhere(try_create(MPI_COMM_WORLD, &cfg, 1, RMADHT_OK));
  }

  /* Every rank different at once. */
  c = good_config();
  c.key_size = KS + (size_t)rank;
  check_same_everywhere(try_create(MPI_COMM_WORLD, &c, 1, mism));

  /* Over a sub-communicator: only its members take part, and a mismatch
     in one half does not disturb the other. */
  if (nranks >= 4) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hrank;
    MPI_Comm_rank(half, &hrank);
    c = good_config();
    if (rank % 2 == 0 && hrank == 0) c.value_size = VS + 8;
    try_create(half, &c, 1, rank % 2 == 0 ? RMADHT_ERR_MISMATCH : RMADHT_OK);
    MPI_Comm_free(&half);
  }
}

/* ------------------------------------------------------------------ */

static void test_bad_arg_one_rank(void) {
  int last = nranks - 1;
  rmadht_config c;

  /* Each rank checks alone, then one allreduce spreads the gravest error:
     the rank that failed and every other rank return that error, and no
     table exists anywhere. */
  for (int odd = 0; odd < nranks; odd += last > 0 ? last : 1) {
    rmadht_config good = good_config();
    int rc;
    /* NULL configuration on one rank. */
    rc = try_create(MPI_COMM_WORLD, rank == odd ? NULL : &good, 1,
                    RMADHT_ERR_ARG);
    check_same_everywhere(rc);
    /* NULL output on one rank. */
    rc = try_create(MPI_COMM_WORLD, &good, rank != odd, RMADHT_ERR_ARG);
    check_same_everywhere(rc);
    /* Zero key size, zero value size, bad mode on one rank. */
    c = good_config();
    c.key_size = 0;
    one_rank_differs(odd, &c, RMADHT_ERR_ARG);
    c = good_config();
    c.value_size = 0;
    one_rank_differs(odd, &c, RMADHT_ERR_ARG);
    c = good_config();
    c.mode = (enum rmadht_mode)7;
    one_rank_differs(odd, &c, RMADHT_ERR_ARG);
    /* Too small, or overflowing, on one rank. */
    c = good_config();
    c.bytes_per_rank = 100;
    one_rank_differs(odd, &c, RMADHT_ERR_SIZE);
    c = good_config();
    c.key_size = SIZE_MAX;
    one_rank_differs(odd, &c, RMADHT_ERR_SIZE);
  }

  if (nranks >= 2) {
    /* Two ranks with two different errors: everyone gets the gravest
       (the most negative code), ERR_SIZE over ERR_ARG. */
    c = good_config();
    if (rank == 0) c.key_size = 0;            /* RMADHT_ERR_ARG  */
    if (rank == last) c.bytes_per_rank = 10;  /* RMADHT_ERR_SIZE */
    check_same_everywhere(
        try_create(MPI_COMM_WORLD, &c, 1, RMADHT_ERR_SIZE));
    /* A local error outranks a mismatch elsewhere: the rank with the
       error could not even report its sizes. */
    c = good_config();
    if (rank == 0) c.value_size = 0;
    if (rank == last) c.key_size = KS + 4;
    check_same_everywhere(try_create(MPI_COMM_WORLD, &c, 1, RMADHT_ERR_ARG));
  }

  /* Many failed creates in a row leak nothing that stops later ones; then
     repeated create/free cycles keep working. */
  c = good_config();
  if (rank == 0) c.key_size = KS + 1;
  for (int i = 0; i < 50; i++)
    try_create(MPI_COMM_WORLD, &c, 1, nranks > 1 ? RMADHT_ERR_MISMATCH : RMADHT_OK);
  c = good_config();
  if (rank == 0) c.mode = (enum rmadht_mode)9;
  for (int i = 0; i < 50; i++)
    try_create(MPI_COMM_WORLD, &c, 1, RMADHT_ERR_ARG);
  c = good_config();
  for (int i = 0; i < 4; i++)
    try_create(MPI_COMM_WORLD, &c, 1, RMADHT_OK);
}

/* ------------------------------------------------------------------ */

static void test_null_table_args(enum rmadht_mode mode) {
  rmadht_config cfg = good_config();
  cfg.mode = mode;
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_OK);
  if (!t) return;
  unsigned char key[KS], val[VS], out[VS];
  unsigned char keys[2 * KS], vals[2 * VS];
  int status[2] = {12345, 12345};
  rmadht_stats st;
  rmadht_info info;
  make_key(key, KS, (uint64_t)rank);
  make_value(val, VS, (uint64_t)rank, 1);
  memcpy(keys, key, KS);
  memcpy(keys + KS, key, KS);
  memcpy(vals, val, VS);
  memcpy(vals + VS, val, VS);

  /* NULL table. */
  CHECK_RC(rmadht_write(NULL, key, val), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_read(NULL, key, out), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_remove(NULL, key), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_read_batch(NULL, 2, keys, vals, status), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_write_batch(NULL, 2, keys, vals, status), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_read_batch(NULL, 0, keys, vals, status), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_flush(NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_get_stats(NULL, &st), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_get_stats_global(NULL, &st), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_get_info(NULL, &info), RMADHT_ERR_ARG);

  /* NULL key, value or output. */
  CHECK_RC(rmadht_write(t, NULL, val), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_write(t, key, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_write(t, NULL, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_read(t, NULL, out), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_read(t, key, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_remove(t, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_read_batch(t, 2, NULL, vals, status), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_read_batch(t, 2, keys, NULL, status), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_read_batch(t, 2, keys, vals, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_write_batch(t, 2, NULL, vals, status), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_write_batch(t, 2, keys, NULL, status), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_write_batch(t, 2, keys, vals, NULL), RMADHT_ERR_ARG);
  CHECK(status[0] == 12345 && status[1] == 12345); /* untouched */
  CHECK_RC(rmadht_get_stats(t, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_get_info(t, NULL), RMADHT_ERR_ARG);
  /* An empty batch is a no-op whatever its pointers. */
  CHECK_RC(rmadht_read_batch(t, 0, NULL, NULL, NULL), RMADHT_OK);
  CHECK_RC(rmadht_write_batch(t, 0, NULL, NULL, NULL), RMADHT_OK);

  /* Nothing above touched the table or its counters. */
  CHECK_RC(rmadht_get_stats(t, &st), RMADHT_OK);
  CHECK(st.reads == 0 && st.writes == 0 && st.removes == 0 &&
        st.hits == 0 && st.misses == 0 && st.round_trips == 0);
  CHECK_RC(rmadht_read(t, key, out), RMADHT_NOT_FOUND);

  /* Collective with NULL on every rank: the allreduce still happens, so
     the call returns instead of leaving ranks in it. */
  CHECK_RC(rmadht_get_stats_global(t, NULL), RMADHT_ERR_ARG);
  /* NULL on one rank only: every rank gets the error, nobody hangs, and
     the others' sums are left untouched; then a good call sums. */
  rmadht_stats g;
  memset(&g, 0xFF, sizeof g);
  CHECK_RC(rmadht_get_stats_global(t, rank == 0 ? NULL : &g), RMADHT_ERR_ARG);
  if (rank != 0) CHECK(g.reads == UINT64_MAX);
  CHECK_RC(rmadht_get_stats_global(t, &g), RMADHT_OK);
  CHECK(g.reads == (uint64_t)nranks); /* one miss each */

  /* The table still works after all that. */
  CHECK_RC(rmadht_write(t, key, val), RMADHT_OK);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < nranks; r++) {
    make_key(key, KS, (uint64_t)r);
    CHECK_RC(rmadht_read(t, key, out), RMADHT_OK);
    CHECK(value_ok(out, VS, (uint64_t)r, 1));
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* rmadht_free: NULL handle pointer, NULL handle, and it clears the
     caller's pointer so a second free is a clean error. */
  CHECK_RC(rmadht_free(NULL), RMADHT_ERR_ARG);
  rmadht *none = NULL;
  CHECK_RC(rmadht_free(&none), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
  CHECK(t == NULL);
  CHECK_RC(rmadht_free(&t), RMADHT_ERR_ARG);
}

/* ------------------------------------------------------------------ */

static void test_messages(void) {
  const int codes[] = {RMADHT_OK,           RMADHT_NOT_FOUND,
                       RMADHT_EVICTED,      RMADHT_ERR_ARG,
                       RMADHT_ERR_SIZE,     RMADHT_ERR_MISMATCH,
                       RMADHT_ERR_NOMEM,    RMADHT_ERR_MPI,
                       RMADHT_ERR_REMOTE,   RMADHT_ERR_CONTENDED,
                       RMADHT_ERR_FILE,     RMADHT_ERR_FORMAT,
                       RMADHT_ERR_IO};
  enum { NC = sizeof codes / sizeof codes[0] };
  /* The contract: OK is 0, outcomes positive, errors negative. */
  CHECK(RMADHT_OK == 0 && RMADHT_NOT_FOUND > 0 && RMADHT_EVICTED > 0);
  for (int i = 3; i < NC; i++) CHECK(codes[i] < 0);
  const char *unknown = rmadht_strerror(INT_MIN);
  CHECK(unknown != NULL && unknown[0] != '\0');
  for (int i = 0; i < NC; i++) {
    const char *m = rmadht_strerror(codes[i]);
    CHECK(m != NULL && m[0] != '\0');
    if (!m) continue;
    CHECK(strcmp(m, unknown) != 0); /* every code has its own message */
    for (int j = 0; j < i; j++) {
      CHECK(codes[i] != codes[j]);
      CHECK(strcmp(m, rmadht_strerror(codes[j])) != 0);
    }
  }
  const int others[] = {3, 100, -11, -100, INT_MAX, INT_MIN + 1};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    CHECK(rmadht_strerror(others[i]) != NULL);

  const char *names[3];
  for (int m = 0; m < 3; m++) {
    names[m] = rmadht_mode_name((enum rmadht_mode)m);
    CHECK(names[m] != NULL);
  }
  CHECK(names[0] && names[1] && names[2] && strcmp(names[0], names[1]) &&
        strcmp(names[1], names[2]) && strcmp(names[0], names[2]));
  CHECK(rmadht_mode_name((enum rmadht_mode)5) != NULL);

  /* Defaults, and a NULL config is ignored rather than dereferenced. */
  rmadht_config cfg;
  memset(&cfg, 0x5A, sizeof cfg);
  rmadht_config_default(&cfg, 3, 5);
  CHECK(cfg.key_size == 3 && cfg.value_size == 5);
  CHECK(cfg.mode == RMADHT_LOCK_FREE && cfg.hash == NULL &&
        cfg.hash_arg == NULL);
  CHECK(cfg.bytes_per_rank == (size_t)64 << 20);
  rmadht_config_default(NULL, 3, 5);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  test_messages();
  test_bad_config_everywhere();
  test_mismatch();
  test_bad_arg_one_rank();
  for (int m = 0; m < 3; m++) test_null_table_args((enum rmadht_mode)m);
  int rc = check_finish("mpi_errors");
  MPI_Finalize();
  return rc;
}
