/* Reads, writes, overwrites, removes, misses, batches and round trips in
   every mode and path, with keys owned by every rank. */
#include <stdlib.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

enum { KS = 80, VS = 104, NKEYS = 300 };

static void run_variant(const struct variant *var, int rank, int nranks) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  variant_config(&cfg, var);
  cfg.bytes_per_rank = 4 << 20;
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_OK);
  if (!t) return;
  enum rmadht_mode mode = var->mode;
  /* The node-local path, which waits for no round trip at all, applies
     exactly when asked for and every rank shares one node. */
  rmadht_info info;
  CHECK_RC(rmadht_get_info(t, &info), RMADHT_OK);
  CHECK(info.node_local == variant_node_local(var));
  /* Spanning nodes, it reads the ranks on this node by loads instead. */
  CHECK(info.node_loads == variant_node_loads(var));
  int rma_lockfree = mode == RMADHT_LOCK_FREE && !info.node_local;
  unsigned char key[KS], val[VS], out[VS];
  rmadht_stats st0, st1;

  /* Each rank writes its own keys (ids rank, rank + P, ...); every rank
     learns where each went. */
  int mine[NKEYS], owner[NKEYS];
  for (int i = 0; i < NKEYS; i++) mine[i] = -1;
  for (uint64_t id = (uint64_t)rank; id < NKEYS; id += (uint64_t)nranks) {
    make_key(key, KS, id);
    make_value(val, VS, id, 1);
    rmadht_location loc;
    uint64_t slot;
    CHECK_RC(rmadht_write_loc(t, key, val, &loc), RMADHT_OK);
    CHECK_RC(rmadht_location_split(t, &loc, &mine[id], &slot), RMADHT_OK);
  }
  MPI_Allreduce(mine, owner, NKEYS, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  unsigned char *near = malloc((size_t)nranks);
  int one_node;
  ranks_on_node(near, &one_node);
  int far_keys = 0;
  for (int i = 0; i < NKEYS; i++) far_keys += owner[i] < 0 || !near[owner[i]];
  free(near);
  /* A write waits for at most three round trips in lock-free mode on the
     RMA path (get, claim, put and flush; src/lockfree.c). */
  rmadht_get_stats(t, &st0);
  make_key(key, KS, 100000 + (uint64_t)rank);
  make_value(val, VS, 100000 + (uint64_t)rank, 1);
  CHECK_RC(rmadht_write(t, key, val), RMADHT_OK);
  rmadht_get_stats(t, &st1);
  if (rma_lockfree) CHECK(st1.round_trips - st0.round_trips <= 3);
  if (info.node_local) CHECK(st1.round_trips == st0.round_trips);
  CHECK(st1.writes == st0.writes + 1);
  CHECK_RC(rmadht_read(t, key, out), RMADHT_OK); /* read your own write */
  CHECK(value_ok(out, VS, 100000 + (uint64_t)rank, 1));
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Every rank reads every key, one round trip each in lock-free mode
     (none for a key on this node read by loads). */
  rmadht_get_stats(t, &st0);
  for (uint64_t id = 0; id < NKEYS; id++) {
    make_key(key, KS, id);
    CHECK_RC(rmadht_read(t, key, out), RMADHT_OK);
    CHECK(value_ok(out, VS, id, 1));
  }
  rmadht_get_stats(t, &st1);
  CHECK(st1.reads - st0.reads == NKEYS);
  CHECK(st1.hits - st0.hits == NKEYS);
  if (info.node_local)
    CHECK(st1.round_trips == st0.round_trips);
  else if (info.node_loads)
    CHECK(st1.round_trips - st0.round_trips == (uint64_t)far_keys);
  else if (mode != RMADHT_FINE_LOCK)
    CHECK(st1.round_trips - st0.round_trips == NKEYS);

  /* Misses leave the output untouched. */
  memset(out, 0xAB, VS);
  make_key(key, KS, 999999);
  CHECK_RC(rmadht_read(t, key, out), RMADHT_NOT_FOUND);
  CHECK(out[0] == 0xAB && out[VS - 1] == 0xAB);
  CHECK_RC(rmadht_remove(t, key), RMADHT_NOT_FOUND);

  /* Batch reads equal single reads, hits and misses mixed, and cost one
     round trip per target in lock-free mode. */
  enum { NB = 300 };
  unsigned char *keys = malloc((size_t)NB * KS), *vals = malloc((size_t)NB * VS);
  int *status = malloc(NB * sizeof(int));
  for (int i = 0; i < NB; i++)
    make_key(keys + (size_t)i * KS, KS, (uint64_t)(i % 2 ? i : NKEYS + i));
  rmadht_get_stats(t, &st0);
  CHECK_RC(rmadht_read_batch(t, NB, keys, vals, status), RMADHT_OK);
  rmadht_get_stats(t, &st1);
  for (int i = 0; i < NB; i++) {
    CHECK(status[i] == (i % 2 ? RMADHT_OK : RMADHT_NOT_FOUND));
    if (i % 2) CHECK(value_ok(vals + (size_t)i * VS, VS, (uint64_t)i, 1));
  }
  if (rma_lockfree) /* two chunks of at most 256 items */
    CHECK(st1.round_trips - st0.round_trips <= 2 * (uint64_t)nranks);
  if (info.node_local) CHECK(st1.round_trips == st0.round_trips);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Overwrites by a batch, later duplicates winning; then removes. */
  if (rank == 0) {
    for (int i = 0; i < NB; i++) {
      uint64_t id = (uint64_t)(i % 100);
      make_key(keys + (size_t)i * KS, KS, id);
      make_value(vals + (size_t)i * VS, VS, id, 2 + (uint64_t)(i / 100));
    }
    CHECK_RC(rmadht_write_batch(t, NB, keys, vals, status), RMADHT_OK);
    for (int i = 0; i < NB; i++) CHECK(status[i] == RMADHT_OK);
    for (uint64_t id = 100; id < 150; id++) {
      make_key(key, KS, id);
      CHECK_RC(rmadht_remove(t, key), RMADHT_OK);
      CHECK_RC(rmadht_remove(t, key), RMADHT_NOT_FOUND);
    }
    CHECK_RC(rmadht_flush(t), RMADHT_OK);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (uint64_t id = 0; id < 200; id++) {
    make_key(key, KS, id);
    int rc = rmadht_read(t, key, out);
    if (id < 100) {
      CHECK(rc == RMADHT_OK && value_ok(out, VS, id, 4)); /* last of 3 */
    } else if (id < 150) {
      CHECK(rc == RMADHT_NOT_FOUND);
    } else {
      CHECK(rc == RMADHT_OK && value_ok(out, VS, id, 1));
    }
  }
  /* A removed key can be written again (tombstones are reused). */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == nranks - 1) {
    make_key(key, KS, 120);
    make_value(val, VS, 120, 9);
    CHECK_RC(rmadht_write(t, key, val), RMADHT_OK);
    CHECK_RC(rmadht_flush(t), RMADHT_OK);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  make_key(key, KS, 120);
  CHECK_RC(rmadht_read(t, key, out), RMADHT_OK);
  CHECK(value_ok(out, VS, 120, 9));

  /* The global counters are every rank's own, summed. */
  rmadht_get_stats(t, &st1);
  rmadht_stats g;
  CHECK_RC(rmadht_get_stats_global(t, &g), RMADHT_OK);
  uint64_t local[3] = {st1.reads, st1.writes, st1.hits}, sum[3];
  MPI_Allreduce(local, sum, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECK(g.reads == sum[0] && g.writes == sum[1] && g.hits == sum[2]);
  if (rank == 0) CHECK(g.removes == 50);
  free(keys);
  free(vals);
  free(status);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
  CHECK(t == NULL);
}

/* A lock-free table over every rank but the first: between hosts with 2
   ranks each, one node then holds one of its ranks and another two, and
   every rank must still make the same collective calls at create (POET's
   workers, the master left out, are such a table). */
static void uneven_nodes(int rank) {
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank > 0, rank, &sub);
  if (rank > 0) {
    rmadht_config cfg;
    rmadht_config_default(&cfg, KS, VS);
    cfg.bytes_per_rank = 1 << 20;
    rmadht *t = NULL;
    CHECK_RC(rmadht_create(sub, &cfg, &t), RMADHT_OK);
    unsigned char key[KS], val[VS], out[VS];
    for (uint64_t id = 0; t && id < 50; id++) {
      make_key(key, KS, 7000 + id + 100 * (uint64_t)rank);
      make_value(val, VS, id, 1);
      CHECK_RC(rmadht_write(t, key, val), RMADHT_OK);
      CHECK_RC(rmadht_read(t, key, out), RMADHT_OK);
      CHECK(value_ok(out, VS, id, 1));
    }
    if (t) CHECK_RC(rmadht_free(&t), RMADHT_OK);
  }
  MPI_Comm_free(&sub);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  for (int v = 0; v < N_VARIANTS; v++)
    run_variant(&test_variants[v], rank, nranks);
  uneven_nodes(rank);
  int rc = check_finish("mpi_basic");
  MPI_Finalize();
  return rc;
}
