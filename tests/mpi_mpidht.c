/* A program written for MPI-DHT's API, built against <LUCX/MPI/DHT.h>
   alone: writes with their (proc, index) and reads from every rank, misses,
   the eviction code, concurrent accumulates from every rank (none lost),
   the callback's refusal, a file round trip into a table of another size,
   foreign and missing files, the checksum retries DHT_free sums, the
   printed statistics, and bad arguments that return a code and lose
   nothing. */
#define _POSIX_C_SOURCE 200809L /* setenv, dup2: to catch what rank 0 prints */
#include <LUCX/MPI/DHT.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* check.h's CHECK_RC explains rmadht's codes; these are MPI-DHT's. */
#define EXPECT(call, expect)                                                 \
  do {                                                                       \
    int got_ = (call);                                                       \
    CHECK(got_ == (expect));                                                 \
    if (got_ != (expect))                                                    \
      fprintf(stderr, "  %s returned %d, expected %d\n", #call, got_,        \
              (int)(expect));                                                \
  } while (0)

#define KEY_BYTES 16
#define DATA_BYTES 24
#define NKEYS 200   /* per rank */
#define BUCKETS 1000 /* per rank */
#define ADDS 100    /* accumulates per rank */

static int rank, nranks;

static uint64_t fnv(int len, const void *key) {
  const unsigned char *p = key;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (int i = 0; i < len; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
  return h;
}

/* Every key in one place: its candidates fill, then writes evict. */
static uint64_t one_place(int len, const void *key) {
  (void)len;
  (void)key;
  return 42;
}

static void make_key(unsigned char *k, int owner, int i) {
  memset(k, 0, KEY_BYTES);
  memcpy(k, &owner, sizeof owner);
  memcpy(k + 4, &i, sizeof i);
}
static void make_data(unsigned char *d, int owner, int i, int version) {
  for (int b = 0; b < DATA_BYTES; b++)
    d[b] = (unsigned char)(owner * 13 + i * 5 + version * 7 + b);
}

static int all(int x) { /* 1 when x is 1 on every rank */
  int r = 0;
  MPI_Allreduce(&x, &r, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return r;
}

static DHT *make(unsigned int buckets, uint64_t (*hash)(int, const void *)) {
  DHT_init_t init = {.key_size = KEY_BYTES, .data_size = DATA_BYTES,
                     .bucket_count = buckets, .hash_func = hash,
                     .comm = MPI_COMM_WORLD};
  DHT *d = DHT_create(&init);
  CHECK(all(d != NULL));
  if (!d) MPI_Abort(MPI_COMM_WORLD, 1);
  return d;
}

/* Every rank reads every rank's keys at version. */
static void read_all(DHT *d, int version) {
  unsigned char k[KEY_BYTES], want[DATA_BYTES], got[DATA_BYTES];
  int ok = 1;
  for (int owner = 0; owner < nranks; owner++)
    for (int i = 0; i < NKEYS; i++) {
      make_key(k, owner, i);
      make_data(want, owner, i, version);
      ok &= DHT_read(d, k, got) == DHT_SUCCESS &&
            memcmp(got, want, DATA_BYTES) == 0;
    }
  CHECK(ok);
}

static void writes_and_reads(void) {
  DHT *d = make(BUCKETS, fnv);
  CHECK(d->bucket_count >= BUCKETS && d->comm_size == nranks &&
        d->key_size == KEY_BYTES && d->data_size == DATA_BYTES &&
        d->hash_func == fnv);
  unsigned char k[KEY_BYTES], v[DATA_BYTES];
  uint32_t proc[NKEYS], index[NKEYS];
  int ok = 1;
  for (int i = 0; i < NKEYS; i++) {
    make_key(k, rank, i);
    make_data(v, rank, i, 0);
    ok &= DHT_write(d, k, v, &proc[i], &index[i]) == DHT_SUCCESS;
    ok &= proc[i] < (uint32_t)nranks && index[i] < d->bucket_count;
  }
  CHECK(ok);
  /* A rewrite keeps the place; proc and index may be NULL. */
  ok = 1;
  for (int i = 0; i < NKEYS; i++) {
    uint32_t p2, i2;
    make_key(k, rank, i);
    make_data(v, rank, i, 1);
    ok &= DHT_write(d, k, v, &p2, &i2) == DHT_SUCCESS && p2 == proc[i] &&
          i2 == index[i];
    ok &= DHT_write(d, k, v, NULL, NULL) == DHT_SUCCESS;
  }
  CHECK(ok);
  MPI_Barrier(MPI_COMM_WORLD);
  read_all(d, 1);

  /* A miss leaves the destination alone. */
  unsigned char got[DATA_BYTES];
  memset(got, 0xab, sizeof got);
  make_key(k, nranks + 1, 7);
  EXPECT(DHT_read(d, k, got), DHT_READ_MISS);
  CHECK(got[0] == 0xab && got[DATA_BYTES - 1] == 0xab);

  /* Bad arguments: a code, no crash, nothing lost. */
  make_key(k, rank, 0);
  EXPECT(DHT_write(NULL, k, v, NULL, NULL), DHT_UCX_ERROR);
  EXPECT(DHT_write(d, NULL, v, NULL, NULL), DHT_UCX_ERROR);
  EXPECT(DHT_write(d, k, NULL, NULL, NULL), DHT_UCX_ERROR);
  EXPECT(DHT_read(NULL, k, got), DHT_UCX_ERROR);
  EXPECT(DHT_read(d, NULL, got), DHT_UCX_ERROR);
  EXPECT(DHT_read(d, k, NULL), DHT_UCX_ERROR);
  EXPECT(DHT_write_accumulate(NULL, k, 0, NULL, NULL, NULL, NULL),
           DHT_UCX_ERROR);
  /* No callback set yet. */
  EXPECT(DHT_write_accumulate(d, k, 0, NULL, NULL, NULL, NULL),
           DHT_UCX_ERROR);
  DHT_set_accumulate_callback(NULL, NULL);
  EXPECT(DHT_to_file(NULL, "x"), DHT_UCX_ERROR);
  EXPECT(DHT_from_file(NULL, "x"), DHT_UCX_ERROR);
  EXPECT(DHT_print_statistics(NULL), DHT_UCX_ERROR);
  EXPECT(DHT_free(NULL, NULL), DHT_UCX_ERROR);
  MPI_Barrier(MPI_COMM_WORLD);
  read_all(d, 1);

  /* No entry was ever torn: no retries; the sum on every rank. */
  uint32_t retries = 12345;
  EXPECT(DHT_free(d, &retries), DHT_SUCCESS);
  CHECK(retries == 0);
}

static void bad_create(void) {
  CHECK(DHT_create(NULL) == NULL);
  DHT_init_t init = {.key_size = KEY_BYTES, .data_size = DATA_BYTES,
                     .bucket_count = 10, .hash_func = fnv,
                     .comm = MPI_COMM_NULL};
  CHECK(DHT_create(&init) == NULL);
  /* A bad size on one rank fails every rank. */
  init.comm = MPI_COMM_WORLD;
  init.key_size = rank == nranks - 1 ? 0 : KEY_BYTES;
  CHECK(DHT_create(&init) == NULL);
  init.key_size = KEY_BYTES;
  init.data_size = -3;
  CHECK(DHT_create(&init) == NULL);
}

/* Every rank's keys share one place, so the ranks take turns: a rank's
   last key is there when it reads it only if no other rank wrote since
   (with all writing at once, 16 ranks between emulated hosts evicted one
   before its writer read it back). */
static void evictions(void) {
  DHT *d = make(16, one_place);
  unsigned char k[KEY_BYTES], v[DATA_BYTES], got[DATA_BYTES];
  for (int turn = 0; turn < nranks; turn++) {
    if (turn == rank) {
      int evicted = 0, other = 0;
      /* More keys than one key's candidates can hold. */
      for (int i = 0; i < 64; i++) {
        make_key(k, rank, i);
        make_data(v, rank, i, 0);
        int rc = DHT_write(d, k, v, NULL, NULL);
        evicted += rc == DHT_WRITE_SUCCESS_WITH_EVICTION;
        other += rc != DHT_SUCCESS && rc != DHT_WRITE_SUCCESS_WITH_EVICTION;
      }
      CHECK(evicted > 0 && other == 0);
      /* The last key written is there; some early one is gone. */
      make_key(k, rank, 63);
      make_data(v, rank, 63, 0);
      CHECK(DHT_read(d, k, got) == DHT_SUCCESS && !memcmp(got, v, DATA_BYTES));
      int misses = 0;
      for (int i = 0; i < 64; i++) {
        make_key(k, rank, i);
        misses += DHT_read(d, k, got) == DHT_READ_MISS;
      }
      CHECK(misses > 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  EXPECT(DHT_free(d, NULL), DHT_SUCCESS);
}

static int add_counter(int in_size, void *in, int out_size, void *out) {
  if (in_size != sizeof(uint64_t) || out_size != DATA_BYTES) return 1;
  uint64_t c, add;
  memcpy(&c, out, sizeof c);
  memcpy(&add, in, sizeof add);
  c += add;
  memcpy(out, &c, sizeof c);
  return 0;
}

static int refuse(int in_size, void *in, int out_size, void *out) {
  (void)in_size;
  (void)in;
  (void)out_size;
  (void)out;
  return 7;
}

static void accumulate(void) {
  DHT *d = make(BUCKETS, fnv);
  DHT_set_accumulate_callback(d, add_counter);
  CHECK(d->accumulate_callback == add_counter);
  unsigned char k[KEY_BYTES], got[DATA_BYTES];
  make_key(k, -1, -1); /* one key every rank adds to at once */
  uint64_t one = 1;
  int ok = 1;
  uint32_t proc = UINT32_MAX, index = UINT32_MAX;
  for (int i = 0; i < ADDS; i++) {
    int ret = -1;
    ok &= DHT_write_accumulate(d, k, sizeof one, &one, &proc, &index, &ret) ==
              DHT_SUCCESS &&
          ret == 0;
  }
  CHECK(ok && proc < (uint32_t)nranks && index < d->bucket_count);
  MPI_Barrier(MPI_COMM_WORLD);
  uint64_t count = 0;
  EXPECT(DHT_read(d, k, got), DHT_SUCCESS);
  memcpy(&count, got, sizeof count);
  CHECK(count == (uint64_t)ADDS * nranks);
  MPI_Barrier(MPI_COMM_WORLD);

  /* A refusing callback writes nothing and says so. */
  DHT_set_accumulate_callback(d, refuse);
  int ret = 0;
  uint32_t p2 = 0, i2 = 0;
  EXPECT(DHT_write_accumulate(d, k, 0, NULL, &p2, &i2, &ret), DHT_SUCCESS);
  CHECK(ret == 7 && p2 == proc && i2 == index);
  unsigned char fresh[KEY_BYTES];
  make_key(fresh, rank, 999);
  EXPECT(DHT_write_accumulate(d, fresh, 0, NULL, &p2, &i2, &ret),
           DHT_SUCCESS);
  CHECK(ret == 7 && p2 == UINT32_MAX && i2 == UINT32_MAX);
  EXPECT(DHT_read(d, fresh, got), DHT_READ_MISS);
  /* A new key's bucket starts as zeros. */
  DHT_set_accumulate_callback(d, add_counter);
  uint64_t five = 5;
  EXPECT(DHT_write_accumulate(d, fresh, sizeof five, &five, NULL, NULL,
                                NULL),
           DHT_SUCCESS);
  EXPECT(DHT_read(d, fresh, got), DHT_SUCCESS);
  memcpy(&count, got, sizeof count);
  CHECK(count == 5);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT(DHT_free(d, NULL), DHT_SUCCESS);
}

static void files(void) {
  char path[64], foreign[64];
  snprintf(path, sizeof path, "mpi_mpidht_%d.dht", nranks);
  snprintf(foreign, sizeof foreign, "mpi_mpidht_%d.foreign", nranks);
  DHT *d = make(BUCKETS, fnv);
  unsigned char k[KEY_BYTES], v[DATA_BYTES];
  for (int i = 0; i < NKEYS; i++) {
    make_key(k, rank, i);
    make_data(v, rank, i, 2);
    DHT_write(d, k, v, NULL, NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT(DHT_to_file(d, path), DHT_SUCCESS);
  EXPECT(DHT_to_file(d, "/nonexistent-dir/x.dht"), DHT_FILE_IO_ERROR);
  EXPECT(DHT_free(d, NULL), DHT_SUCCESS);

  /* Into a table of another size. */
  d = make(3 * BUCKETS, fnv);
  EXPECT(DHT_from_file(d, path), DHT_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  read_all(d, 2);
  if (rank == 0) {
    FILE *f = fopen(foreign, "wb");
    CHECK(f != NULL);
    if (f) {
      fputs("this is no table, just some text long enough to be read", f);
      fclose(f);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT(DHT_from_file(d, foreign), DHT_WRONG_FILE);
  EXPECT(DHT_from_file(d, "mpi_mpidht_missing.dht"), DHT_FILE_IO_ERROR);
  MPI_Barrier(MPI_COMM_WORLD);
  read_all(d, 2); /* the bad files changed nothing */
  EXPECT(DHT_free(d, NULL), DHT_SUCCESS);

  /* A table of other sizes refuses the file. */
  DHT_init_t init = {.key_size = KEY_BYTES, .data_size = DATA_BYTES + 8,
                     .bucket_count = BUCKETS, .hash_func = fnv,
                     .comm = MPI_COMM_WORLD};
  d = DHT_create(&init);
  CHECK(d != NULL);
  if (d) {
    EXPECT(DHT_from_file(d, path), DHT_WRONG_FILE);
    EXPECT(DHT_free(d, NULL), DHT_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    remove(path);
    remove(foreign);
  }
}

/* Silent by default; with RMADHT_MPIDHT_STATISTICS rank 0 prints the
   period's counts per rank and their sums. */
static void statistics(void) {
  DHT *d = make(BUCKETS, fnv);
  unsigned char k[KEY_BYTES], v[DATA_BYTES];
  for (int i = 0; i < 3; i++) {
    make_key(k, rank, i);
    make_data(v, rank, i, 0);
    DHT_write(d, k, v, NULL, NULL);
    DHT_read(d, k, v);
  }
  char out[64];
  snprintf(out, sizeof out, "mpi_mpidht_%d.out", nranks);
  /* Loud first: the silent call after it must not print, and the loud
     one sees the period's counts. */
  for (int loud = 1; loud >= 0; loud--) {
    FILE *f = NULL;
    int saved = -1;
    if (rank == 0) {
      if (loud) setenv("RMADHT_MPIDHT_STATISTICS", "1", 1);
      fflush(stdout);
      f = fopen(out, "w+");
      saved = dup(1);
      CHECK(f && saved >= 0 && dup2(fileno(f), 1) == 1);
    }
    EXPECT(DHT_print_statistics(d), DHT_SUCCESS);
    if (rank == 0) {
      fflush(stdout);
      dup2(saved, 1);
      close(saved);
      unsetenv("RMADHT_MPIDHT_STATISTICS");
      char buf[8192] = {0};
      rewind(f);
      size_t n = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
      remove(out);
      if (!loud) {
        CHECK(n == 0);
      } else {
        /* Every rank wrote 3 keys and read them; all landed somewhere. */
        char sum[160];
        long long w = 3LL * nranks;
        snprintf(sum, sizeof sum, "%-11s|%-11lld|%-11lld||%-11lld|%-11lld|%-11d|%-11d\n",
                 "sum", w, (long long)d->bucket_count * nranks - w, w, w, 0, 0);
        CHECK(strstr(buf, "w_access") != NULL);
        CHECK(strstr(buf, sum) != NULL);
      }
    }
  }
  EXPECT(DHT_free(d, NULL), DHT_SUCCESS);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  writes_and_reads();
  bad_create();
  evictions();
  accumulate();
  files();
  statistics();
  int rc = check_finish("mpi_mpidht");
  MPI_Finalize();
  return rc;
}
