/*
 * rmadht-snapshot-bench: dump and restore throughput.
 *
 * Fills a table of --mib MiB per rank to --fill of its slots, dumps it to
 * --path, restores the file into a fresh table of the same size, checks a
 * sample of keys, and prints one JSON object on rank 0.  MB are 10^6 bytes
 * of snapshot file; each time is the slowest rank's.
 *
 *   mpiexec -n 2 rmadht-snapshot-bench --mib 192 --path /tmp/snap.bin
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmadht.h"

struct options {
  size_t mib, key_size, value_size;
  double fill;
  const char *path;
};

static int parse(int argc, char **argv, struct options *o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    if (!strcmp(a, "--mib")) o->mib = strtoul(v, NULL, 10);
    else if (!strcmp(a, "--key")) o->key_size = strtoul(v, NULL, 10);
    else if (!strcmp(a, "--value")) o->value_size = strtoul(v, NULL, 10);
    else if (!strcmp(a, "--fill")) o->fill = strtod(v, NULL);
    else if (!strcmp(a, "--path")) o->path = v;
    else return -1;
  }
  if (argc % 2 == 0 || o->key_size < 8 || o->value_size == 0 || o->mib == 0 ||
      o->fill <= 0 || o->fill > 1)
    return -1;
  return 0;
}

/* Key i of rank r: unique over ranks, the rest of the bytes a pattern. */
static void make_key(unsigned char *k, size_t len, int r, uint64_t i) {
  uint64_t id = (uint64_t)r << 40 | i;
  for (size_t j = 0; j < len; j++) k[j] = (unsigned char)(id * 31u + j);
  memcpy(k, &id, 8);
}
static void make_value(unsigned char *v, size_t len, uint64_t seed) {
  for (size_t j = 0; j < len; j++) v[j] = (unsigned char)(seed >> (j % 8 * 8));
}

static rmadht *create(const struct options *o) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, o->key_size, o->value_size);
  cfg.bytes_per_rank = o->mib << 20;
  rmadht *t = NULL;
  return rmadht_create(MPI_COMM_WORLD, &cfg, &t) == RMADHT_OK ? t : NULL;
}

enum { BATCH = 4096 };

static int fill(rmadht *t, const struct options *o, int rank, uint64_t n) {
  unsigned char *keys = malloc(BATCH * o->key_size);
  unsigned char *vals = malloc(BATCH * o->value_size);
  int *status = malloc(BATCH * sizeof *status);
  int rc = keys && vals && status ? RMADHT_OK : RMADHT_ERR_NOMEM;
  for (uint64_t at = 0; !rc && at < n; at += BATCH) {
    size_t m = n - at < BATCH ? (size_t)(n - at) : BATCH;
    for (size_t i = 0; i < m; i++) {
      make_key(keys + i * o->key_size, o->key_size, rank, at + i);
      make_value(vals + i * o->value_size, o->value_size, at + i);
    }
    rc = rmadht_write_batch(t, m, keys, vals, status);
  }
  if (!rc) rc = rmadht_flush(t);
  free(keys);
  free(vals);
  free(status);
  return rc;
}

/* Reads back the first keys this rank wrote; returns the hits. */
static uint64_t sample(rmadht *t, const struct options *o, int rank,
                       uint64_t n) {
  unsigned char *k = malloc(o->key_size), *v = malloc(o->value_size);
  unsigned char *want = malloc(o->value_size);
  uint64_t hits = 0;
  for (uint64_t i = 0; i < n; i++) {
    make_key(k, o->key_size, rank, i);
    make_value(want, o->value_size, i);
    if (rmadht_read(t, k, v) == RMADHT_OK &&
        !memcmp(v, want, o->value_size))
      hits++;
  }
  free(k);
  free(v);
  free(want);
  return hits;
}

/* Wall time of a collective call, the slowest rank's. */
static double timed(int (*call)(rmadht *, const char *), rmadht *t,
                    const char *path, int *rc) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  *rc = call(t, path);
  double dt = MPI_Wtime() - t0, max;
  MPI_Allreduce(&dt, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

static long file_bytes(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  struct options o = {192, 16, 48, 0.5, "rmadht_snapshot_bench.bin"};
  if (parse(argc, argv, &o)) {
    if (rank == 0)
      fprintf(stderr, "usage: %s [--mib N] [--key N>=8] [--value N] "
                      "[--fill 0..1] [--path FILE]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  rmadht *a = create(&o);
  if (!a) {
    if (rank == 0) fprintf(stderr, "rmadht_create failed\n");
    MPI_Finalize();
    return 1;
  }
  rmadht_info info;
  rmadht_get_info(a, &info);
  uint64_t n = (uint64_t)(o.fill * (double)info.slots_per_rank);
  int rc = fill(a, &o, rank, n), any;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  rc = any;

  int drc = 0, rrc = 0;
  double dump_s = rc ? 0 : timed(rmadht_dump, a, o.path, &drc);
  rmadht_free(&a);
  rmadht *b = create(&o);
  double restore_s = b && !drc ? timed(rmadht_restore, b, o.path, &rrc) : 0;
  uint64_t probe = n < 10000 ? n : 10000, hits = 0, all_hits = 0;
  if (b && !rrc) hits = sample(b, &o, rank, probe);
  MPI_Reduce(&hits, &all_hits, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);

  if (rank == 0) {
    long bytes = file_bytes(o.path);
    uint64_t eb = o.key_size + o.value_size + 8;
    double entries = bytes > 48 ? (double)((uint64_t)(bytes - 48) / eb) : 0;
    printf("{\"bench\": \"snapshot\", \"ranks\": %d, \"table_mb\": %.1f, "
           "\"key_size\": %zu, \"value_size\": %zu, \"entries\": %.0f, "
           "\"file_mb\": %.1f, \"dump_s\": %.3f, \"dump_mb_s\": %.1f, "
           "\"dump_entries_s\": %.0f, \"restore_s\": %.3f, "
           "\"restore_mb_s\": %.1f, \"restore_entries_s\": %.0f, "
           "\"sample_hits\": %llu, \"sample\": %llu, \"fill_rc\": %d, "
           "\"dump_rc\": %d, \"restore_rc\": %d}\n",
           nranks, (double)(o.mib << 20) * nranks / 1e6, o.key_size,
           o.value_size, entries, bytes / 1e6, dump_s, bytes / 1e6 / dump_s,
           entries / dump_s, restore_s, bytes / 1e6 / restore_s,
           entries / restore_s, (unsigned long long)all_hits,
           (unsigned long long)probe * (unsigned long long)nranks, rc, drc,
           rrc);
  }
  if (b) rmadht_free(&b);
  if (rank == 0) remove(o.path);
  MPI_Finalize();
  return rc || drc || rrc;
}
