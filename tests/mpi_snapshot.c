/* Snapshots: dump and restore in every mode, into other table sizes and rank
   counts, and every kind of bad file refused with the same error on every
   rank and the table left as it was.  Built twice: as mpi_snapshot against
   the library's snapshot code, and as mpi_snapshot_chunks against that code
   rebuilt with SNAP_CHUNK_BYTES 4000 (tests/CMakeLists.txt), where the same
   files take many chunks. */
#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

enum { KS = 24, VS = 40, NKEYS = 800, EB = KS + VS + 8, HB = 48 };
#define SENTINEL 1000000u /* ids of keys never in a file */

static int rank, nranks;

static rmadht *make_table(MPI_Comm comm, enum rmadht_mode mode, size_t bytes,
                          size_t ks, size_t vs) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, ks, vs);
  cfg.mode = mode;
  cfg.bytes_per_rank = bytes;
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(comm, &cfg, &t), RMADHT_OK);
  return t;
}

/* Writes ids [from, from + n) with this version, spread over the ranks of
   comm in one batch, and makes them visible everywhere. */
static void fill(rmadht *t, MPI_Comm comm, uint64_t from, uint64_t n,
                 uint64_t version) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  unsigned char *keys = malloc(n * KS), *vals = malloc(n * VS);
  int *status = malloc(n * sizeof *status);
  size_t m = 0;
  for (uint64_t id = from + (uint64_t)r; id < from + n; id += (uint64_t)p, m++) {
    make_key(keys + m * KS, KS, id);
    make_value(vals + m * VS, VS, id, version);
  }
  CHECK_RC(rmadht_write_batch(t, m, keys, vals, status), RMADHT_OK);
  for (size_t i = 0; i < m; i++)
    CHECK(status[i] == RMADHT_OK || status[i] == RMADHT_EVICTED);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(comm);
  free(keys);
  free(vals);
  free(status);
}

/* How many of ids [from, from + n) this rank finds, read in one batch; a
   found value must be the version expected for its id. */
static uint64_t found(rmadht *t, uint64_t from, uint64_t n,
                      uint64_t (*version)(uint64_t id)) {
  unsigned char *keys = malloc(n * KS), *vals = malloc(n * VS);
  int *status = malloc(n * sizeof *status);
  for (uint64_t i = 0; i < n; i++) make_key(keys + i * KS, KS, from + i);
  CHECK_RC(rmadht_read_batch(t, n, keys, vals, status), RMADHT_OK);
  uint64_t hits = 0;
  for (uint64_t i = 0; i < n; i++) {
    CHECK(status[i] == RMADHT_OK || status[i] == RMADHT_NOT_FOUND);
    if (status[i] != RMADHT_OK) continue;
    hits++;
    CHECK(value_ok(vals + i * VS, VS, from + i, version(from + i)));
  }
  free(keys);
  free(vals);
  free(status);
  return hits;
}

/* Ids below NKEYS: every seventh was overwritten (version 2), every
   eleventh removed (version 0, never written: found() fails if it finds
   one). */
static int removed(uint64_t id) { return id % 11 == 0; }
static uint64_t version_of(uint64_t id) {
  return removed(id) ? 0 : id % 7 == 0 ? 2 : 1;
}
static uint64_t version_one(uint64_t id) {
  (void)id;
  return 1;
}
static uint64_t sentinel_version(uint64_t id) {
  (void)id;
  return 0;
}
static uint64_t live_keys(void) { return NKEYS - (NKEYS + 10) / 11; }

/* The same code on every rank of comm. */
static int same_everywhere(MPI_Comm comm, int rc) {
  int lo, hi;
  MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, comm);
  return lo == hi;
}

static long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

/* The two builds of this test may run at once: their files differ. */
#ifdef SNAP_CHUNK_BYTES
#define SNAP_PREFIX "snapshot_chunks"
#else
#define SNAP_PREFIX "snapshot"
#endif

static void snap_path(char *buf, size_t len, const char *what) {
  snprintf(buf, len, SNAP_PREFIX "_n%d_%s.bin", nranks, what);
}

/* Rewrites this rank's ids divisible by 7 with version 2, in one batch. */
static void fill_sevenths(rmadht *t) {
  unsigned char keys[NKEYS / 7 + 1][KS], vals[NKEYS / 7 + 1][VS];
  int status[NKEYS / 7 + 1];
  size_t m = 0;
  for (uint64_t id = (uint64_t)rank; id < NKEYS; id += (uint64_t)nranks)
    if (id % 7 == 0) {
      make_key(keys[m], KS, id);
      make_value(vals[m++], VS, id, 2);
    }
  CHECK_RC(rmadht_write_batch(t, m, keys, vals, status), RMADHT_OK);
  for (size_t i = 0; i < m; i++) CHECK(status[i] == RMADHT_OK);
}

/* A table in mode with the standard content, dumped to path; a second
   table of another size, in mode `into`, restores it. */
static void round_trip(enum rmadht_mode mode, enum rmadht_mode into,
                       const char *path) {
  rmadht *a = make_table(MPI_COMM_WORLD, mode, 1 << 20, KS, VS);
  if (!a) return;
  fill(a, MPI_COMM_WORLD, 0, NKEYS, 1);
  /* Overwrites and removes, so a stale copy or a tombstone in the dump
     would show. */
  fill_sevenths(a);
  unsigned char key[KS];
  for (uint64_t id = (uint64_t)rank; id < NKEYS; id += (uint64_t)nranks) {
    make_key(key, KS, id);
    if (removed(id)) CHECK_RC(rmadht_remove(a, key), RMADHT_OK);
  }
  CHECK_RC(rmadht_flush(a), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);

  int rc = rmadht_dump(a, path);
  CHECK_RC(rc, RMADHT_OK);
  CHECK(same_everywhere(MPI_COMM_WORLD, rc));
  /* One entry per live key, nothing else. */
  if (rank == 0) CHECK(file_size(path) == HB + (long)live_keys() * EB);
  /* Dumping leaves the source table as it was. */
  CHECK(found(a, 0, NKEYS, version_of) == live_keys());
  CHECK_RC(rmadht_free(&a), RMADHT_OK);

  rmadht *b = make_table(MPI_COMM_WORLD, into, 3 << 20, KS, VS);
  if (!b) return;
  CHECK_RC(rmadht_restore(b, path), RMADHT_OK);
  CHECK(found(b, 0, NKEYS, version_of) == live_keys());
  CHECK_RC(rmadht_free(&b), RMADHT_OK);
}

/* A table too small for the snapshot keeps what fits, all of it right. */
static void restore_smaller(const char *path) {
  /* 32 KiB in all past four ranks: 8 KiB a rank would hold every key at
     16 ranks. */
  size_t bytes = nranks > CTEST_MAX_RANKS
                     ? ((size_t)32 << 10) / (size_t)nranks
                     : (size_t)8 << 10;
  rmadht *t = make_table(MPI_COMM_WORLD, RMADHT_LOCK_FREE, bytes, KS, VS);
  if (!t) return;
  CHECK_RC(rmadht_restore(t, path), RMADHT_OK);
  uint64_t hits = found(t, 0, NKEYS, version_of);
  rmadht_info info;
  rmadht_get_info(t, &info);
  CHECK(hits > 0 && hits <= info.slots_per_rank * (uint64_t)nranks);
  CHECK(hits < live_keys());
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* A snapshot of P ranks restored into tables over halves of the ranks,
   and one written by the first half restored into all P ranks. */
static void restore_subcomm(const char *path, const char *half_path) {
  MPI_Comm half;
  int first = rank < (nranks + 1) / 2;
  MPI_Comm_split(MPI_COMM_WORLD, first, rank, &half);
  rmadht *t = make_table(half, RMADHT_FINE_LOCK, 2 << 20, KS, VS);
  if (t) {
    CHECK_RC(rmadht_restore(t, path), RMADHT_OK);
    CHECK(found(t, 0, NKEYS, version_of) == live_keys());
    if (first) CHECK_RC(rmadht_dump(t, half_path), RMADHT_OK);
    CHECK_RC(rmadht_free(&t), RMADHT_OK);
  }
  MPI_Comm_free(&half);
  MPI_Barrier(MPI_COMM_WORLD);
  rmadht *all = make_table(MPI_COMM_WORLD, RMADHT_COARSE_LOCK, 1 << 20, KS, VS);
  if (all) {
    CHECK_RC(rmadht_restore(all, half_path), RMADHT_OK);
    CHECK(found(all, 0, NKEYS, version_of) == live_keys());
    CHECK_RC(rmadht_free(&all), RMADHT_OK);
  }
}

static uint64_t first_byte_hash(const void *key, size_t len, void *arg) {
  (void)arg;
  uint64_t h = 0;
  memcpy(&h, key, len < 8 ? len : 8);
  return h * UINT64_C(0x9E3779B97F4A7C15);
}

static int header_byte(const char *path, long at) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, at, SEEK_SET);
  int c = fgetc(f);
  fclose(f);
  return c;
}

/* An empty table dumps a bare header; a table with a custom hash says so
   in the header, and its file restores into a table hashing with XXH3. */
static void empty_and_custom(const char *path) {
  rmadht *t = make_table(MPI_COMM_WORLD, RMADHT_LOCK_FREE, 1 << 20, KS, VS);
  if (!t) return;
  CHECK_RC(rmadht_dump(t, path), RMADHT_OK);
  if (rank == 0) CHECK(file_size(path) == HB && header_byte(path, 12) == 0);
  fill(t, MPI_COMM_WORLD, SENTINEL, 50, 0);
  CHECK_RC(rmadht_restore(t, path), RMADHT_OK);
  CHECK(found(t, SENTINEL, 50, sentinel_version) == 50);
  CHECK_RC(rmadht_dump(t, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_restore(t, NULL), RMADHT_ERR_ARG);
  CHECK_RC(rmadht_dump(NULL, path), RMADHT_ERR_ARG);

  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  cfg.bytes_per_rank = 1 << 20;
  cfg.hash = first_byte_hash;
  rmadht *c = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (c) {
    fill(c, MPI_COMM_WORLD, 0, 300, 1);
    CHECK_RC(rmadht_dump(c, path), RMADHT_OK);
    if (rank == 0) CHECK(header_byte(path, 12) == 1);
    CHECK_RC(rmadht_restore(t, path), RMADHT_OK);
    CHECK(found(t, 0, 300, version_one) == 300);
    CHECK_RC(rmadht_free(&c), RMADHT_OK);
  }
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* ---- bad files, made by rank 0 from a good one ---- */

static unsigned char *good;
static long good_len;

static void load_good(const char *path) {
  good_len = file_size(path);
  good = malloc((size_t)good_len);
  FILE *f = fopen(path, "rb");
  CHECK(f && fread(good, 1, (size_t)good_len, f) == (size_t)good_len);
  if (f) fclose(f);
}

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrites the header checksum as docs/reference/snapshot-format.md defines it, so a
   change to a field is seen as that change and not as corruption. */
static void reseal(unsigned char *h) { put_le(h + 40, XXH3_64bits(h, 40), 8); }

enum edit {
  MISSING, EMPTY, FOREIGN, VERSION, KEY_SIZE, VALUE_SIZE, TRUNC_HEADER,
  TRUNC_ENTRY, FLIP_MAGIC, FLIP_COUNT, FLIP_FIRST_KEY, FLIP_LAST_VALUE,
  FLIP_LAST_CHECK, COUNT_LOW, COUNT_HIGH, TAIL, NEDITS
};

static void write_variant(const char *path, enum edit e) {
  unsigned char *b = malloc((size_t)good_len + EB);
  memcpy(b, good, (size_t)good_len);
  long len = good_len;
  uint64_t count = (uint64_t)(good_len - HB) / EB;
  switch (e) {
    case MISSING: free(b); return;
    case EMPTY: len = 0; break;
    case FOREIGN:
      for (long i = 0; i < len; i++) b[i] = (unsigned char)("not a table\n"[i % 12]);
      break;
    case VERSION: put_le(b + 8, 2, 4); reseal(b); break;
    case KEY_SIZE: put_le(b + 16, KS + 8, 8); reseal(b); break;
    case VALUE_SIZE: put_le(b + 24, VS - 8, 8); reseal(b); break;
    case TRUNC_HEADER: len = HB - 5; break;
    case TRUNC_ENTRY: len = good_len - 10; break;
    case FLIP_MAGIC: b[2] ^= 0x20; break;
    case FLIP_COUNT: b[32] ^= 0x01; break;
    case FLIP_FIRST_KEY: b[HB + 3] ^= 0x40; break;
    case FLIP_LAST_VALUE: b[good_len - 8 - 1] ^= 0x01; break;
    case FLIP_LAST_CHECK: b[good_len - 1] ^= 0x80; break;
    case COUNT_LOW: put_le(b + 32, count - 1, 8); reseal(b); break;
    case COUNT_HIGH: put_le(b + 32, count + 1, 8); reseal(b); break;
    case TAIL: memset(b + len, 0, EB); len += EB; break;
    case NEDITS: break;
  }
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(b, 1, (size_t)len, f) == (size_t)len);
  if (f) fclose(f);
  free(b);
}

/* Every edit, or (entries_only) just those found by reading the entries. */
static void bad_files(const char *good_path, int entries_only) {
  if (rank == 0) load_good(good_path);
  rmadht *t = make_table(MPI_COMM_WORLD, RMADHT_LOCK_FREE, 1 << 20, KS, VS);
  if (!t) return;
  fill(t, MPI_COMM_WORLD, SENTINEL, 200, 0);
  rmadht_stats before, after;
  CHECK_RC(rmadht_get_stats_global(t, &before), RMADHT_OK);
  char path[128];
  for (int e = 0; e < NEDITS; e++) {
    if (entries_only && e != FLIP_FIRST_KEY && e != FLIP_LAST_VALUE &&
        e != FLIP_LAST_CHECK)
      continue;
    snap_path(path, sizeof path, "bad");
    if (e == MISSING) snprintf(path, sizeof path, "no/such/dir/snapshot");
    if (rank == 0) write_variant(path, (enum edit)e);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = rmadht_restore(t, path);
    int want = e == MISSING ? RMADHT_ERR_FILE : RMADHT_ERR_FORMAT;
    if (rc != want) fprintf(stderr, "rank %d: bad file %d: %d\n", rank, e, rc);
    CHECK_RC(rc, want);
    CHECK(same_everywhere(MPI_COMM_WORLD, rc));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  /* Untouched: no write at all, the sentinels intact, no file key. */
  CHECK_RC(rmadht_get_stats_global(t, &after), RMADHT_OK);
  CHECK(after.writes == before.writes);
  CHECK(found(t, SENTINEL, 200, sentinel_version) == 200);
  CHECK(found(t, 0, NKEYS, version_of) == 0);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);

  /* A good file for other key or value sizes is foreign to this table. */
  rmadht *k = make_table(MPI_COMM_WORLD, RMADHT_LOCK_FREE, 1 << 20, KS + 1, VS);
  if (k) {
    CHECK_RC(rmadht_restore(k, good_path), RMADHT_ERR_FORMAT);
    CHECK_RC(rmadht_free(&k), RMADHT_OK);
  }
  rmadht *v = make_table(MPI_COMM_WORLD, RMADHT_COARSE_LOCK, 1 << 20, KS, VS + 8);
  if (v) {
    CHECK_RC(rmadht_restore(v, good_path), RMADHT_ERR_FORMAT);
    CHECK_RC(rmadht_free(&v), RMADHT_OK);
  }
  if (rank == 0) {
    snap_path(path, sizeof path, "bad");
    remove(path);
    free(good);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  char path[128];
#ifdef SNAP_CHUNK_BYTES
  /* Chunks of 55 entries: many rounds of collective writes and reads, ranks
     with different round counts, restore reading twice. */
  snap_path(path, sizeof path, "chunks");
  round_trip(RMADHT_LOCK_FREE, RMADHT_FINE_LOCK, path);
  restore_smaller(path);
  bad_files(path, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) remove(path);
#else
  const enum rmadht_mode modes[] = {RMADHT_LOCK_FREE, RMADHT_FINE_LOCK,
                                    RMADHT_COARSE_LOCK};
  for (int m = 0; m < 3; m++) {
    snap_path(path, sizeof path, rmadht_mode_name(modes[m]));
    round_trip(modes[m], modes[(m + 1) % 3], path);
  }
  snap_path(path, sizeof path, "lockfree");
  restore_smaller(path);
  char half[128];
  snap_path(half, sizeof half, "half");
  restore_subcomm(path, half);
  bad_files(path, 0);
  char empty[128];
  snap_path(empty, sizeof empty, "empty");
  empty_and_custom(empty);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    for (int m = 0; m < 3; m++) {
      snap_path(path, sizeof path, rmadht_mode_name(modes[m]));
      remove(path);
    }
    remove(empty);
    remove(half);
  }
#endif
  int rc = check_finish("mpi_snapshot");
  MPI_Finalize();
  return rc;
}
