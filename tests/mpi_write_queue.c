/*
 * Queued single writes (rmadht_config.write_queue) on the RMA path: a
 * queued write waits for no round trip until the queue is full; this rank
 * reads its own queued writes at once; every other call is ordered after
 * them; after rmadht_flush and a barrier every rank reads every write;
 * rmadht_clear and rmadht_dump send the queue first.  In every mode.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

enum { KS = 16, VS = 24, QUEUE = 8, PER_RANK = 3 * QUEUE + 5 };

static rmadht *create(enum rmadht_mode mode, int queue) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  cfg.mode = mode;
  cfg.node_local = 0;
  cfg.bytes_per_rank = 1 << 20;
  cfg.write_queue = queue;
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_OK);
  return t;
}

static uint64_t stat_of(const rmadht *t, int which) {
  rmadht_stats s;
  CHECK_RC(rmadht_get_stats(t, &s), RMADHT_OK);
  return which ? s.writes : s.round_trips;
}
#define ROUND_TRIPS(t) stat_of(t, 0)
#define WRITES(t) stat_of(t, 1)

/* Adds one to an 8-byte counter at the start of the value. */
static int add_one(void *arg, size_t item, const void *key, void *value,
                   int found) {
  (void)arg;
  (void)item;
  (void)key;
  uint64_t c = 0;
  if (found) memcpy(&c, value, 8);
  c++;
  memcpy(value, &c, 8);
  return RMADHT_UPDATE_STORE;
}

/* Writes that wait for nothing until the queue fills, and are read back
   from the queue at once. */
static void queued(rmadht *t, int rank) {
  unsigned char k[KS], v[VS], got[VS];
  uint64_t base = (uint64_t)rank << 32;
  uint64_t rt = ROUND_TRIPS(t), w = WRITES(t);
  for (uint64_t i = 0; i < QUEUE - 1; i++) {
    make_key(k, KS, base + i);
    make_value(v, VS, base + i, 0);
    CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
    CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
    CHECK(!memcmp(got, v, VS));
  }
  CHECK(ROUND_TRIPS(t) == rt); /* nothing sent: no wait */
  CHECK(WRITES(t) == w);       /* counted once sent */
  /* The newest queued write of a key is the one read. */
  make_key(k, KS, base);
  make_value(v, VS, base, 1);
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK); /* fills it: sent */
  CHECK(WRITES(t) == w + QUEUE);
  CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
  CHECK(!memcmp(got, v, VS));
}

/* Every other call comes after the queued writes. */
static void ordered(rmadht *t, int rank) {
  unsigned char k[KS], v[VS], got[VS];
  uint64_t id = ((uint64_t)rank << 32) + 1000;
  make_key(k, KS, id);
  make_value(v, VS, id, 0);
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  CHECK_RC(rmadht_remove(t, k), RMADHT_OK); /* found: the write went first */
  CHECK_RC(rmadht_read(t, k, got), RMADHT_NOT_FOUND);

  memset(v, 0, VS); /* a counter at 0 */
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  CHECK_RC(rmadht_update(t, k, add_one, NULL, NULL), RMADHT_OK);
  CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
  uint64_t c = 0;
  memcpy(&c, got, 8);
  CHECK(c == 1);

  make_value(v, VS, id, 2);
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  int status = -1;
  CHECK_RC(rmadht_read_batch(t, 1, k, got, &status), RMADHT_OK);
  CHECK(status == RMADHT_OK && !memcmp(got, v, VS));

  make_value(v, VS, id, 3);
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  rmadht_location loc;
  unsigned char v4[VS];
  make_value(v4, VS, id, 4);
  CHECK_RC(rmadht_write(t, k, v4), RMADHT_OK);
  unsigned char v5[VS], back[KS];
  make_value(v5, VS, id, 5);
  /* write_loc sends the queue, then stores v5 over v4 in its slot. */
  CHECK_RC(rmadht_write_loc(t, k, v5, &loc), RMADHT_OK);
  CHECK_RC(rmadht_read_loc(t, &loc, back, got), RMADHT_OK);
  CHECK(!memcmp(back, k, KS) && !memcmp(got, v5, VS));

  make_value(v, VS, id, 6);
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  CHECK_RC(rmadht_write_batch(t, 1, k, v5, &status), RMADHT_OK);
  CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
  CHECK(!memcmp(got, v5, VS)); /* the batch, issued later, wins */
}

/* Each rank's writes reach every rank once it has flushed. */
static void visible(rmadht *t, int rank, int nranks) {
  unsigned char k[KS], v[VS], got[VS];
  for (uint64_t i = 0; i < PER_RANK; i++) {
    make_key(k, KS, ((uint64_t)rank << 40) + i);
    make_value(v, VS, ((uint64_t)rank << 40) + i, rank);
    CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  }
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < nranks; r++)
    for (uint64_t i = 0; i < PER_RANK; i++) {
      make_key(k, KS, ((uint64_t)r << 40) + i);
      make_value(v, VS, ((uint64_t)r << 40) + i, r);
      CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
      CHECK(!memcmp(got, v, VS));
    }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* rmadht_clear sends the queue before it empties the table. */
static void cleared(rmadht *t, int rank) {
  unsigned char k[KS], v[VS], got[VS];
  make_key(k, KS, ((uint64_t)rank << 32) + 2000);
  make_value(v, VS, 2000, 0);
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  CHECK_RC(rmadht_clear(t), RMADHT_OK);
  CHECK_RC(rmadht_read(t, k, got), RMADHT_NOT_FOUND);
}

/* rmadht_dump sends the queue first: a queued write is in the file. */
static void dumped(int rank, int nranks) {
  char path[64];
  snprintf(path, sizeof path, "write_queue_n%d.bin", nranks);
  rmadht *t = create(RMADHT_LOCK_FREE, QUEUE);
  rmadht *u = create(RMADHT_LOCK_FREE, 0);
  if (!t || !u) return;
  unsigned char k[KS], v[VS], got[VS];
  make_key(k, KS, ((uint64_t)rank << 32) + 3000);
  make_value(v, VS, 3000, rank);
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  rmadht_stats sum;
  CHECK_RC(rmadht_get_stats_global(t, &sum), RMADHT_OK);
  CHECK(sum.writes == 0); /* still queued on every rank */
  CHECK_RC(rmadht_dump(t, path), RMADHT_OK);
  CHECK_RC(rmadht_restore(u, path), RMADHT_OK);
  CHECK_RC(rmadht_read(u, k, got), RMADHT_OK);
  CHECK(!memcmp(got, v, VS));
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
  CHECK_RC(rmadht_free(&u), RMADHT_OK);
  if (rank == 0) remove(path);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  /* A queue too long is a bad argument on every rank. */
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  cfg.write_queue = 4097;
  rmadht *bad = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &bad), RMADHT_ERR_ARG);
  CHECK(bad == NULL);
  cfg.write_queue = -1;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &bad), RMADHT_ERR_ARG);

  const enum rmadht_mode modes[] = {RMADHT_LOCK_FREE, RMADHT_FINE_LOCK,
                                    RMADHT_COARSE_LOCK};
  for (int m = 0; m < 3; m++) {
    rmadht *t = create(modes[m], QUEUE);
    if (!t) continue;
    queued(t, rank);
    ordered(t, rank);
    visible(t, rank, nranks);
    cleared(t, rank);
    CHECK_RC(rmadht_free(&t), RMADHT_OK);
  }
  dumped(rank, nranks);
  return check_finish("mpi_write_queue") | (MPI_Finalize() != MPI_SUCCESS);
}
