/* A program written for POET's current DHT API, built against
   rmadht/poet/DHT.h alone (found as "DHT.h", as POET includes it): writes
   with locations read back by location, concurrent appends of locations by
   DHT_write_accumulate from every rank, the callback's return and refusal,
   zeroed buckets for new and evicted keys, the candidate factor and
   DHT_flush, the counters DHT_free sums, and a file round trip into a
   table of another size. */
#define _POSIX_C_SOURCE 200809L /* setenv, dup2: to catch what rank 0 prints */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "DHT.h"
#include "check.h"

#define KEY_BYTES 24
#define DATA_BYTES 40
#define NKEYS 300 /* per rank */

static int rank, nranks;

/* The flushes this rank waits in, the library's calls among them. */
static long flushes;
int MPI_Win_flush(int target, MPI_Win win) {
  flushes++;
  return PMPI_Win_flush(target, win);
}

/* The members POET reads, with POET's types. */
_Static_assert(_Generic(((DHT *)0)->key_size, int: 1, default: 0) &&
                   _Generic(((DHT *)0)->data_size, int: 1, default: 0),
               "POET reads int key_size and data_size");

static uint64_t fnv_hash(int key_size, const void *key) {
  const unsigned char *p = key;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (int i = 0; i < key_size; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
  return h;
}

/* Every key in one place, so that its candidates fill and evict. */
static uint64_t same_hash(int key_size, const void *key) {
  (void)key_size;
  (void)key;
  return 7;
}

static void make_key(unsigned char *k, int owner, int i) {
  memset(k, 0, KEY_BYTES);
  memcpy(k, &owner, sizeof owner);
  memcpy(k + 8, &i, sizeof i);
}
static void make_data(unsigned char *d, int owner, int i, int version) {
  for (int b = 0; b < DATA_BYTES; b++)
    d[b] = (unsigned char)(owner * 31 + i * 7 + version * 3 + b);
}

static int agreed(int x) { /* 1 when x is 1 on every rank */
  int all = 0;
  MPI_Allreduce(&x, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

static long sum_to_root(long x) {
  long s = 0;
  MPI_Reduce(&x, &s, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  return s;
}

/* The free's counters are the sums of what each rank saw, on rank 0. */
static void free_and_check(DHT *d, long evictions, long misses) {
  int ev = -1, miss = -1;
  long want_ev = sum_to_root(evictions), want_miss = sum_to_root(misses);
  CHECK(DHT_free(d, &ev, &miss) == DHT_SUCCESS);
  if (evictions < 0) want_ev = ev; /* not counted by the caller */
  if (rank == 0)
    CHECK(ev == want_ev && miss == want_miss);
  else
    CHECK(ev == 0 && miss == 0);
}

/* Sends what this rank writes to fd into path; returns the fd to give
   back to restore_fd. */
static int redirect_fd(int fd, const char *path) {
  fflush(fd == 1 ? stdout : stderr);
  int saved = dup(fd);
  FILE *f = fopen(path, "w");
  CHECK(f && saved >= 0 && dup2(fileno(f), fd) == fd);
  if (f) fclose(f);
  return saved;
}

/* Gives fd back and returns the first line written to path ("" when
   none) in line; removes path. */
static void restore_fd(int fd, int saved, const char *path, char *line,
                       int len) {
  fflush(fd == 1 ? stdout : stderr);
  dup2(saved, fd);
  close(saved);
  line[0] = 0;
  FILE *f = fopen(path, "r");
  if (f && !fgets(line, len, f)) line[0] = 0;
  if (f) fclose(f);
  remove(path);
}

/* DHT_print_statistics with printing asked for (or not) in rank 0's
   environment; returns the w_access of the printed sum row on rank 0, -1
   when rank 0 printed nothing, 0 elsewhere. */
static long print_statistics(DHT *d, int wanted, const char *path) {
  long w_access = -1;
  int saved = -1;
  if (rank == 0) {
    if (wanted)
      setenv("RMADHT_POET_STATISTICS", "1", 1);
    else
      unsetenv("RMADHT_POET_STATISTICS");
    saved = redirect_fd(1, path);
  }
  CHECK(DHT_print_statistics(d) == DHT_SUCCESS);
  if (rank != 0) return 0;
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  unsetenv("RMADHT_POET_STATISTICS");
  FILE *f = fopen(path, "r");
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "sum", 3) == 0) sscanf(line, "sum |%ld", &w_access);
  if (f) fclose(f);
  remove(path);
  return w_access;
}

/* A create that fails returns NULL on every rank, and, since POET does not
   check, one rank (the lowest that failed itself) says why on stderr,
   naming the call and, in the line, want. */
static void create_fails(uint64_t buckets, unsigned int data_size,
                         const char *want) {
  char path[64], line[512];
  snprintf(path, sizeof path, "poet_dht_stderr_%d.txt", rank);
  int saved = redirect_fd(2, path);
  DHT *d = DHT_create(MPI_COMM_WORLD, buckets, data_size, KEY_BYTES, fnv_hash);
  restore_fd(2, saved, path, line, sizeof line);
  CHECK(agreed(d == NULL));
  int said = line[0] != 0, speakers = 0;
  MPI_Allreduce(&said, &speakers, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(speakers == 1);
  if (rank == 0) {
    CHECK(strstr(line, "DHT_create") != NULL);
    CHECK(strstr(line, want) != NULL);
  }
}

/* ---- the proximity table's bucket: a count and a list of locations ---- */

#define PAIRS_PER_RANK 24
#define APPEND_KEYS 3
#define CB_OK 0
#define CB_ALREADY_IN 1
#define CB_FULL 2

struct pair {
  uint32_t proc, index;
};
#define MAX_RANKS 16
#define MAX_PAIRS (MAX_RANKS * PAIRS_PER_RANK + 1) /* room left on 16 */
#define BUCKET_BYTES (sizeof(uint32_t) + MAX_PAIRS * sizeof(struct pair) + 8)

/* POET's PHT callback, in its shape: append the location unless present or
   full; the trailing 8 bytes are the read counter of POET_PHT_ADD. */
static int append_location(int in_size, void *in, int out_size, void *out) {
  CHECK(in_size == (int)sizeof(struct pair));
  CHECK(out_size == (int)BUCKET_BYTES);
  uint32_t count;
  memcpy(&count, out, sizeof count);
  struct pair p, *list = (struct pair *)((char *)out + sizeof count);
  memcpy(&p, in, sizeof p);
  if (count == MAX_PAIRS) return CB_FULL;
  for (uint32_t i = 0; i < count; i++)
    if (list[i].proc == p.proc && list[i].index == p.index)
      return CB_ALREADY_IN;
  memcpy(&list[count], &p, sizeof p);
  count++;
  memcpy(out, &count, sizeof count);
  return CB_OK;
}

/* POET_PHT_ADD's counter: no input, the bucket's last 8 bytes + 1. */
static int increment_counter(int in_size, void *in, int out_size, void *out) {
  (void)in_size;
  (void)in;
  uint64_t n;
  memcpy(&n, (char *)out + out_size - 8, 8);
  n++;
  memcpy((char *)out + out_size - 8, &n, 8);
  return 0;
}

/* Changes the bucket, then refuses: nothing may be written. */
static int scribble_and_refuse(int in_size, void *in, int out_size,
                               void *out) {
  (void)in_size;
  (void)in;
  memset(out, 0xAB, (size_t)out_size);
  return 42;
}

/* Records whether the bucket it got was all zeros, then stores a mark. */
static int zero_seen;
static int check_zero_then_mark(int in_size, void *in, int out_size,
                                void *out) {
  (void)in_size;
  (void)in;
  const unsigned char *b = out;
  zero_seen = 1;
  for (int i = 0; i < out_size; i++) zero_seen &= b[i] == 0;
  memset(out, 0x5A, (size_t)out_size);
  return 0;
}

static void test_accumulate(void) {
  unsigned char key[KEY_BYTES], bucket[BUCKET_BYTES];
  DHT *pht = DHT_create(MPI_COMM_WORLD, 512, BUCKET_BYTES, KEY_BYTES,
                        fnv_hash);
  CHECK(pht != NULL);
  if (!pht) MPI_Abort(MPI_COMM_WORLD, 1);
  int ret = -1;

  /* No callback set yet: refused, nothing run. */
  make_key(key, -1, 0);
  CHECK(DHT_write_accumulate(pht, key, 0, NULL, NULL, NULL, &ret) ==
        DHT_MPI_ERROR);
  DHT_set_accumulate_callback(pht, append_location);
  CHECK(pht->accumulate_callback == append_location);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Every rank appends its own locations to the same keys at once. */
  for (int i = 0; i < PAIRS_PER_RANK; i++)
    for (int k = 0; k < APPEND_KEYS; k++) {
      struct pair p = {(uint32_t)rank, (uint32_t)(1000 * k + i)};
      uint32_t proc = UINT32_MAX, index = UINT32_MAX;
      make_key(key, -1, k);
      CHECK(DHT_write_accumulate(pht, key, sizeof p, &p, &proc, &index,
                                 &ret) == DHT_SUCCESS);
      CHECK(ret == CB_OK);
      CHECK(proc < (uint32_t)nranks && index != UINT32_MAX);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  /* None lost, none twice. */
  for (int k = 0; k < APPEND_KEYS; k++) {
    make_key(key, -1, k);
    CHECK(DHT_read(pht, key, bucket) == DHT_SUCCESS);
    uint32_t count;
    memcpy(&count, bucket, sizeof count);
    CHECK(count == (uint32_t)(nranks * PAIRS_PER_RANK));
    struct pair *list = (struct pair *)(bucket + sizeof count);
    int seen[MAX_RANKS][PAIRS_PER_RANK] = {{0}};
    for (uint32_t i = 0; i < count && i < MAX_PAIRS; i++) {
      uint32_t at = list[i].index - (uint32_t)(1000 * k);
      if (list[i].proc < (uint32_t)nranks && at < PAIRS_PER_RANK)
        seen[list[i].proc][at]++;
    }
    for (int r = 0; r < nranks; r++)
      for (int i = 0; i < PAIRS_PER_RANK; i++) CHECK(seen[r][i] == 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* The callback's own code reaches the caller: already in. */
  struct pair mine = {(uint32_t)rank, 0};
  make_key(key, -1, 0);
  CHECK(DHT_write_accumulate(pht, key, sizeof mine, &mine, NULL, NULL,
                             &ret) == DHT_SUCCESS);
  CHECK(ret == CB_ALREADY_IN);

  /* A refusing callback writes nothing, even after changing the bucket;
     the key's place is still reported, as it is there. */
  unsigned char before[BUCKET_BYTES], after[BUCKET_BYTES];
  CHECK(DHT_read(pht, key, before) == DHT_SUCCESS);
  int (*saved)(int, void *, int, void *) = pht->accumulate_callback;
  pht->accumulate_callback = scribble_and_refuse; /* as POET_PHT_ADD does */
  uint32_t proc = UINT32_MAX, index = UINT32_MAX;
  CHECK(DHT_write_accumulate(pht, key, 0, NULL, &proc, &index, &ret) ==
        DHT_SUCCESS);
  CHECK(ret == 42);
  CHECK(proc < (uint32_t)nranks && index != UINT32_MAX);
  CHECK(DHT_read(pht, key, after) == DHT_SUCCESS);
  CHECK(memcmp(before, after, sizeof before) == 0);
  /* Refused on an absent key: nothing written, no place. */
  make_key(key, rank, 77);
  CHECK(DHT_write_accumulate(pht, key, 0, NULL, &proc, &index, &ret) ==
        DHT_SUCCESS);
  CHECK(ret == 42 && proc == UINT32_MAX && index == UINT32_MAX);
  CHECK(DHT_read(pht, key, after) == DHT_READ_MISS);
  pht->accumulate_callback = saved;
  MPI_Barrier(MPI_COMM_WORLD);

  /* POET_PHT_ADD's read counter: no input, NULL places, every rank at
     once; exact. */
  DHT_set_accumulate_callback(pht, increment_counter);
  make_key(key, -2, 0);
  for (int i = 0; i < 50; i++)
    CHECK(DHT_write_accumulate(pht, key, 0, NULL, NULL, NULL, &ret) ==
              DHT_SUCCESS &&
          ret == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  uint64_t n = 0;
  CHECK(DHT_read(pht, key, bucket) == DHT_SUCCESS);
  memcpy(&n, bucket + BUCKET_BYTES - 8, 8);
  CHECK(n == (uint64_t)(50 * nranks));

  /* A new key's bucket is zeros. */
  DHT_set_accumulate_callback(pht, check_zero_then_mark);
  make_key(key, rank, 99);
  zero_seen = 0;
  CHECK(DHT_write_accumulate(pht, key, 0, NULL, NULL, NULL, &ret) ==
        DHT_SUCCESS);
  CHECK(zero_seen == 1);
  CHECK(DHT_read(pht, key, bucket) == DHT_SUCCESS && bucket[0] == 0x5A);
  /* Not zeros once it is there. */
  CHECK(DHT_write_accumulate(pht, key, 0, NULL, NULL, NULL, &ret) ==
        DHT_SUCCESS);
  CHECK(zero_seen == 0);
  char out[64];
  snprintf(out, sizeof out, "poet_dht_stats_n%d.txt", nranks);
  CHECK(print_statistics(pht, 0, out) == (rank == 0 ? -1 : 0)); /* silent */
  free_and_check(pht, 0, 1);
}

/* Keys that all share one place: writes evict, an accumulate on an
   evicted key sees zeros, and the candidate factor rises. */
static void test_evictions(void) {
  DHT *d = DHT_create(MPI_COMM_WORLD, 1000, DATA_BYTES, KEY_BYTES, same_hash);
  CHECK(d != NULL);
  if (!d) MPI_Abort(MPI_COMM_WORLD, 1);
  CHECK(DHT_get_used_idx_factor(d, 0) == 0.0f); /* nothing written */
  unsigned char key[KEY_BYTES], data[DATA_BYTES];
  long evictions = 0, misses = 0;
  if (rank == 0)
    for (int i = 0; i < 60; i++) {
      make_key(key, 0, i);
      make_data(data, 0, i, 0);
      int rc = DHT_write(d, key, data, NULL, NULL);
      CHECK(rc == DHT_SUCCESS || rc == DHT_WRITE_SUCCESS_WITH_EVICTION);
      evictions += rc == DHT_WRITE_SUCCESS_WITH_EVICTION;
    }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(rank != 0 || evictions > 0);
  float f = DHT_get_used_idx_factor(d, 1);
  float lo = f, hi = f;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_FLOAT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi);   /* the same on every rank */
  CHECK(f > 2.0f);   /* full candidates: POET would flush */
  CHECK(DHT_get_used_idx_factor(d, 0) == 0.0f); /* reset */

  /* The first keys were evicted: an accumulate sees zeros. */
  int found_evicted = 0;
  unsigned char got[DATA_BYTES];
  for (int i = 0; i < 60 && !found_evicted; i++) {
    make_key(key, 0, i);
    int rc = DHT_read(d, key, got);
    misses += rc == DHT_READ_MISS;
    if (rc == DHT_READ_MISS && rank == 0) {
      DHT_set_accumulate_callback(d, check_zero_then_mark);
      int ret = -1;
      zero_seen = 0;
      rc = DHT_write_accumulate(d, key, 0, NULL, NULL, NULL, &ret);
      CHECK(rc == DHT_SUCCESS || rc == DHT_WRITE_SUCCESS_WITH_EVICTION);
      evictions += rc == DHT_WRITE_SUCCESS_WITH_EVICTION;
      CHECK(zero_seen == 1 && ret == 0);
      found_evicted = 1;
    }
  }
  CHECK(rank != 0 || found_evicted);
  MPI_Barrier(MPI_COMM_WORLD);
  free_and_check(d, evictions, misses);
}

/* POET reads a cell's key and writes it on a miss: on the RMA path that
   write waits twice, for the claim and for the put, as POET's own does,
   and leaves the last compare-and-swap outstanding (dht_stored); on the
   node-local path it waits for nothing.  One rank writes at a time: two
   writers choosing one free slot at once is a race one of them loses and
   reads again for, which is not what is counted here. */
static void test_write_waits(void) {
  DHT *d = DHT_create(MPI_COMM_WORLD, 2000, DATA_BYTES, KEY_BYTES, fnv_hash);
  CHECK(d != NULL);
  if (!d) return;
  unsigned char key[KEY_BYTES], data[DATA_BYTES], got[DATA_BYTES];
  long most = 0, misses = 0;
  for (int writer = 0; writer < nranks; writer++) {
    for (int i = 0; i < 64 && writer == rank; i++) {
      make_key(key, nranks + 1 + rank, i);
      make_data(data, rank, i, 0);
      CHECK(DHT_read(d, key, got) == DHT_READ_MISS);
      misses++;
      long before = flushes;
      CHECK(DHT_write(d, key, data, NULL, NULL) == DHT_SUCCESS);
      if (flushes - before > most) most = flushes - before;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK(most <= 2);
  MPI_Barrier(MPI_COMM_WORLD);
  free_and_check(d, 0, misses);
}

/* POET empties its tables once this factor reaches 2, which its own DHT
   reports at about half full with new keys: below 2 well under that, above
   it well over, and above it on an overfilled table of a single group (8
   slots a rank) too. */
static float fill_factor(DHT *d, long from, long to) {
  unsigned char key[KEY_BYTES], data[DATA_BYTES];
  for (long i = from; i < to; i++) {
    make_key(key, rank, (int)i);
    make_data(data, rank, (int)i, 0);
    int rc = DHT_write(d, key, data, NULL, NULL);
    CHECK(rc == DHT_SUCCESS || rc == DHT_WRITE_SUCCESS_WITH_EVICTION);
  }
  return DHT_get_used_idx_factor(d, 1);
}

static void test_factor(void) {
  const long buckets = 4000; /* per rank, as every rank writes as many */
  DHT *d = DHT_create(MPI_COMM_WORLD, (uint64_t)buckets, DATA_BYTES,
                      KEY_BYTES, fnv_hash);
  CHECK(d != NULL);
  if (!d) MPI_Abort(MPI_COMM_WORLD, 1);
  float low = fill_factor(d, 0, buckets / 5);                  /* 0-20 % */
  float mid = fill_factor(d, buckets / 5, buckets * 2 / 5);    /* -40 % */
  float high = fill_factor(d, buckets * 2 / 5, buckets * 7 / 10);
  float over = fill_factor(d, buckets * 7 / 10, buckets * 3 / 2);
  CHECK(low >= 1.0f && low < 1.3f);
  CHECK(mid > low && mid < 2.0f);
  CHECK(high > 2.0f);   /* 40-70 %: POET's own reports about 2.2 */
  CHECK(over > high);   /* at most POET's candidate count, 7 here */
  CHECK(over <= 7.0f);
  free_and_check(d, -1, 0);
  /* A table of one group a rank: its keys have 8 candidates, not 16. */
  d = DHT_create(MPI_COMM_WORLD, 8, DATA_BYTES, KEY_BYTES, fnv_hash);
  CHECK(d != NULL);
  if (!d) MPI_Abort(MPI_COMM_WORLD, 1);
  CHECK(fill_factor(d, 0, 2) < 2.0f);
  CHECK(fill_factor(d, 2, 100) > 2.0f);
  free_and_check(d, -1, 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks > MAX_RANKS) { /* the appends' bookkeeping holds 16 ranks */
    if (rank == 0) printf("mpi_poet_dht: skipped, more than 16 ranks\n");
    MPI_Finalize();
    return 0;
  }
  char path[64];
  snprintf(path, sizeof path, "poet_dht_n%d.dht", nranks);
  unsigned char key[KEY_BYTES], data[DATA_BYTES], got[DATA_BYTES];
  static uint32_t procs[NKEYS], indices[NKEYS];
  long misses = 0;

  DHT *d = DHT_create(MPI_COMM_WORLD, 2000, DATA_BYTES, KEY_BYTES, fnv_hash);
  CHECK(d != NULL);
  if (!d) MPI_Abort(MPI_COMM_WORLD, 1);
  /* POET's proximity table sizes its buffers from these. */
  CHECK(d->key_size == KEY_BYTES && d->data_size == DATA_BYTES);

  /* Writes report where the entry went; read back by key and place. */
  for (int i = 0; i < NKEYS; i++) {
    make_key(key, rank, i);
    make_data(data, rank, i, 0);
    procs[i] = indices[i] = UINT32_MAX;
    CHECK(DHT_write(d, key, data, &procs[i], &indices[i]) == DHT_SUCCESS);
    CHECK(procs[i] < (uint32_t)nranks && indices[i] != UINT32_MAX);
    CHECK(DHT_read_location(d, procs[i], indices[i], got) == DHT_SUCCESS);
    CHECK(memcmp(got, data, DATA_BYTES) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < nranks; r++)
    for (int i = 0; i < NKEYS; i++) {
      make_key(key, r, i);
      make_data(data, r, i, 0);
      CHECK(DHT_read(d, key, got) == DHT_SUCCESS &&
            memcmp(got, data, DATA_BYTES) == 0);
    }
  make_key(key, nranks, 0); /* nobody wrote it */
  CHECK(DHT_read(d, key, got) == DHT_READ_MISS);
  misses++;
  MPI_Barrier(MPI_COMM_WORLD); /* every rank has read the first versions */

  /* A rewrite keeps its place and the place shows the new data. */
  for (int i = 0; i < NKEYS; i += 3) {
    uint32_t proc, index;
    make_key(key, rank, i);
    make_data(data, rank, i, 1);
    CHECK(DHT_write(d, key, data, &proc, &index) == DHT_SUCCESS);
    CHECK(proc == procs[i] && index == indices[i]);
    CHECK(DHT_read_location(d, proc, index, got) == DHT_SUCCESS &&
          memcmp(got, data, DATA_BYTES) == 0);
  }
  /* Places outside the table. */
  CHECK(DHT_read_location(d, (uint32_t)nranks, 0, got) == DHT_MPI_ERROR);
  CHECK(DHT_read_location(d, 0, UINT32_MAX, got) == DHT_MPI_ERROR);
  float f = DHT_get_used_idx_factor(d, 0);
  /* Under a fifth full: POET keeps such a table (it empties at 2). */
  CHECK(f >= 1.0f && f < 2.0f);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Dump, restore into a table of another size, check every entry. */
  CHECK(DHT_to_file(d, path) == DHT_SUCCESS);
  CHECK(DHT_to_file(d, "no/such/dir/t.dht") == DHT_FILE_IO_ERROR);
  DHT *big = DHT_create(MPI_COMM_WORLD, 5000, DATA_BYTES, KEY_BYTES,
                        fnv_hash);
  CHECK(big != NULL);
  if (!big) MPI_Abort(MPI_COMM_WORLD, 1);
  CHECK(DHT_from_file(big, path) == DHT_SUCCESS);
  for (int r = 0; r < nranks; r++)
    for (int i = 0; i < NKEYS; i++) {
      make_key(key, r, i);
      make_data(data, r, i, i % 3 == 0);
      CHECK(DHT_read(big, key, got) == DHT_SUCCESS &&
            memcmp(got, data, DATA_BYTES) == 0);
    }
  CHECK(DHT_from_file(big, "no/such/file.dht") == DHT_FILE_IO_ERROR);
  free_and_check(big, 0, 0);
  DHT *other = DHT_create(MPI_COMM_WORLD, 1000, DATA_BYTES + 8, KEY_BYTES,
                          fnv_hash);
  CHECK(other != NULL);
  if (other) {
    CHECK(DHT_from_file(other, path) == DHT_WRONG_FILE);
    free_and_check(other, 0, 0);
  }

  /* DHT_flush empties every rank's part; places then read as misses. */
  CHECK(DHT_flush(d) == DHT_SUCCESS);
  CHECK(DHT_get_used_idx_factor(d, 0) == 0.0f);
  for (int i = 0; i < NKEYS; i += 7) {
    make_key(key, rank, i);
    CHECK(DHT_read(d, key, got) == DHT_READ_MISS);
    misses++;
    memset(got, 0xEE, DATA_BYTES);
    CHECK(DHT_read_location(d, procs[i], indices[i], got) == DHT_READ_MISS);
    CHECK(got[0] == 0 && memcmp(got, got + 1, DATA_BYTES - 1) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* Usable again after the flush. */
  make_key(key, rank, 0);
  make_data(data, rank, 0, 2);
  CHECK(DHT_write(d, key, data, NULL, NULL) == DHT_SUCCESS);
  CHECK(DHT_read(d, key, got) == DHT_SUCCESS &&
        memcmp(got, data, DATA_BYTES) == 0);
  /* Rank 0 prints the writes of all ranks: NKEYS, every third again, and
     one after the flush. */
  char out[64];
  snprintf(out, sizeof out, "poet_dht_stats_n%d.txt", nranks);
  long w = print_statistics(d, 1, out);
  CHECK(rank != 0 || w == (long)nranks * (NKEYS + NKEYS / 3 + 1));
  CHECK(print_statistics(d, 1, out) == 0); /* the counts started again */
  free_and_check(d, 0, misses);

  test_write_waits();
  test_accumulate();
  test_evictions();
  test_factor();

  /* Bad sizes fail on every rank with NULL, and so does a table whose
     indices would not fit in 32 bits. */
  create_fails(1000, 0, "invalid argument");
  create_fails(UINT64_C(1) << 33, DATA_BYTES, "2^32");
  /* A NULL table is an error, not a crash. */
  CHECK(DHT_write(NULL, key, data, NULL, NULL) == DHT_MPI_ERROR);
  CHECK(DHT_read(NULL, key, got) == DHT_MPI_ERROR);
  CHECK(DHT_read_location(NULL, 0, 0, got) == DHT_MPI_ERROR);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) remove(path);
  int rc = check_finish("mpi_poet_dht");
  MPI_Finalize();
  return rc;
}
