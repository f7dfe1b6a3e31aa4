/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmadht-reference-driver: rmadht-bench's workload on the reference table,
 * the MPI-DHT of Lübke et al. 2024 (sobc/MPI-DHT), so that the two are
 * compared on the same keys, the same hosts and the same counters.
 *
 * It is built against one of the reference's variants (its libraries
 * nolock, coarse, fine and accumulate: the consistency mode is chosen at
 * link time there) by bench/reference/build.sh, never as part of rmadht.
 * The workload is rmadht-bench's (bench/workload.c): 80-byte keys, 104-byte
 * values, ids uniform over 712,500, the same seeds per rank; N writes and
 * then N reads of the same keys per rank, then rmadht-bench's cache phase:
 * N fresh keys, each read and, if missed, written (POET's pattern).  The
 * one-sided calls are counted by the benchmark's wrappers
 * (bench/rma_count.c), and rank 0 prints one
 * JSON line per phase with the fields rmadht-bench prints, so that
 * tools/bench_table.py and tools/latency_model.py read both alike.
 *
 *   mpiexec -n P rmadht-reference-driver-VARIANT MODE N [MB]
 *
 * MODE is the name the line carries (lockfree, coarse, fine, accumulate);
 * MB the table's memory per rank (256, as rmadht-bench).
 */
#include <LUCX/MPI/DHT.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "rma_count.h"
#include "workload.h"

enum { KEY = 80, VALUE = 104, DISTINCT = 712500 };

/* The reference's own test program hashes with XXH3 as well. */
static uint64_t hash(int len, const void *key) { return XXH3_64bits(key, (size_t)len); }

enum kind { READ, WRITE, CACHE };

/* Runs one phase; returns 0, or 1 after a failed call (on this rank). */
static int phase(DHT *t, const char *mode, const char *name, enum kind kind,
                 size_t n, const unsigned char *keys, const unsigned char *vals) {
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  unsigned char key[KEY], value[VALUE], out[VALUE];
  uint64_t local[4] = {0, 0, 0, 0}; /* hits, evictions, failures, ops */
  struct rma_count before, after;
  MPI_Barrier(MPI_COMM_WORLD);
  rma_count_get(&before);
  double t0 = MPI_Wtime();
  for (size_t i = 0; i < n && !local[2]; i++) {
    /* DHT_write takes non-const pointers: hand it copies. */
    memcpy(key, keys + i * KEY, KEY);
    int st = DHT_READ_MISS;
    if (kind != WRITE) {
      st = DHT_read(t, key, out);
      local[0] += st == DHT_SUCCESS;
      local[3]++;
    }
    if (kind == WRITE || (kind == CACHE && st == DHT_READ_MISS)) {
      memcpy(value, vals + i * VALUE, VALUE);
      st = DHT_write(t, key, value, NULL, NULL);
      local[1] += st == DHT_WRITE_SUCCESS_WITH_EVICTION;
      local[3]++;
    }
    if (st == DHT_UCX_ERROR || st > 0) {
      fprintf(stderr, "rank %d: %s %zu returned %d\n", rank, name, i, st);
      local[2] = 1;
    }
  }
  double secs = MPI_Wtime() - t0, slowest;
  rma_count_get(&after);
  /* The counters are uint64_t fields only: subtract and sum them as such. */
  enum { FIELDS = sizeof(struct rma_count) / sizeof(uint64_t) };
  uint64_t delta[FIELDS], total[FIELDS], sum[4];
  memcpy(delta, &after, sizeof delta);
  const uint64_t *b = (const uint64_t *)&before;
  for (int i = 0; i < FIELDS; i++) delta[i] -= b[i];
  MPI_Allreduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(local, sum, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(delta, total, FIELDS, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (sum[2]) return 1;
  if (rank) return 0;
  struct rma_count r;
  memcpy(&r, total, sizeof r);
  double ops = (double)sum[3], reads = kind == WRITE ? 0.0 : (double)n * nranks;
  uint64_t moves = r.gets + r.puts + r.atomics;
  printf("{\"implementation\": \"reference\", \"mode\": \"%s\", \"path\": \"rma\", "
         "\"distribution\": \"uniform\", \"phase\": \"%s\", \"ranks\": %d, "
         "\"batch\": 1, \"ops\": %.0f, \"seconds\": %.4f, \"mops\": %.3f, ",
         mode, name, nranks, ops, slowest, ops / slowest / 1e6);
  if (kind == WRITE)
    printf("\"hit_rate\": null, ");
  else
    printf("\"hit_rate\": %.4f, ", (double)sum[0] / reads);
  printf("\"round_trips_per_op\": %.4f, \"evictions\": %llu, \"checksum_retries\": 0, "
         "\"gets_per_op\": %.4f, \"bytes_got_per_op\": %.1f, \"puts_per_op\": %.4f, "
         "\"bytes_put_per_op\": %.1f, \"atomics_per_op\": %.4f, "
         "\"bytes_atomic_per_op\": %.1f, \"syncs_per_op\": %.4f, \"locks_per_op\": %.4f, "
         "\"blocks_per_op\": %.4f, \"remote_share\": %.4f}\n",
         (double)(r.syncs + r.locks) / ops, (unsigned long long)sum[1],
         (double)r.gets / ops, (double)r.get_bytes / ops, (double)r.puts / ops,
         (double)r.put_bytes / ops, (double)r.atomics / ops,
         (double)r.atomic_bytes / ops, (double)r.syncs / ops, (double)r.locks / ops,
         (double)r.blocks / ops, moves ? (double)r.remote / (double)moves : 0.0);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
  size_t mb = argc > 3 ? strtoul(argv[3], NULL, 10) : 256;
  if (argc < 3 || n == 0 || mb == 0) {
    if (rank == 0)
      fprintf(stderr, "usage: %s MODE N [MB]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  unsigned char *keys = malloc(n * KEY), *vals = malloc(n * VALUE);
  unsigned char *ckeys = malloc(n * KEY), *cvals = malloc(n * VALUE);
  uint64_t *ids = malloc(n * sizeof *ids);
  int failed = !keys || !vals || !ckeys || !cvals || !ids;
  if (!failed) {
    /* rmadht-bench's ids and seeds for the write phase and for the cache
       phase, whose ids start at 3 * DISTINCT (bench/rmadht_bench.c). */
    draw_ids(ids, n, DISTINCT, NULL, (uint64_t)rank * 7919 + 1);
    for (size_t i = 0; i < n; i++) {
      key_of(keys + i * KEY, KEY, ids[i]);
      value_of(vals + i * VALUE, VALUE, ids[i]);
    }
    draw_ids(ids, n, DISTINCT, NULL, (uint64_t)rank * 7919 + 4);
    for (size_t i = 0; i < n; i++) {
      key_of(ckeys + i * KEY, KEY, ids[i] + 3 * DISTINCT);
      value_of(cvals + i * VALUE, VALUE, ids[i] + 3 * DISTINCT);
    }
  }
  /* A bucket: a flag byte, key, value, and a 4-byte checksum or lock. */
  size_t bucket = 1 + KEY + VALUE + 4;
  DHT_init_t init = {.key_size = KEY, .data_size = VALUE,
                     .bucket_count = (unsigned)((mb << 20) / bucket),
                     .hash_func = hash, .comm = MPI_COMM_WORLD};
  int all_failed;
  MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  DHT *t = all_failed ? NULL : DHT_create(&init);
  int rc = t == NULL;
  if (rc && rank == 0) fprintf(stderr, "%s\n", all_failed ? "out of memory" : "DHT_create failed");
  if (!rc) rc = phase(t, argv[1], "write", WRITE, n, keys, vals);
  if (!rc) rc = phase(t, argv[1], "read", READ, n, keys, vals);
  if (!rc) rc = phase(t, argv[1], "cache", CACHE, n, ckeys, cvals);
  if (t) DHT_free(t, NULL);
  free(keys);
  free(vals);
  free(ckeys);
  free(cvals);
  free(ids);
  MPI_Finalize();
  return rc;
}
