/* ranks: 2 */
/* An application written for POET's DHT API, built against rmadht_poet.h
   alone: keys of rounded chemistry inputs, values of outputs, its own hash
   function, the eviction and read-miss counters, and a file round trip into
   a table of another size. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rmadht_poet.h"

#define NIN 9   /* key: input variables */
#define NOUT 12 /* value: output variables */
#define NCELLS 600

static int rank, nranks;
static unsigned long hash_calls;

/* FNV-1a, the kind of hash an application brings along. */
static uint64_t fnv_hash(int key_size, void *key) {
  const unsigned char *p = key;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (int i = 0; i < key_size; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
  hash_calls++;
  return h;
}

/* Every key in one place: shows the user's hash decides placement. */
static uint64_t same_hash(int key_size, void *key) {
  (void)key_size;
  (void)key;
  return 42;
}

static void cell_key(double *k, int cell) {
  for (int i = 0; i < NIN; i++) k[i] = cell * 0.001 + i;
}
static void cell_value(double *v, int cell) {
  for (int i = 0; i < NOUT; i++) v[i] = cell * 1.5 - i;
}

/* Writes cells [0, n) spread over the ranks; returns the collisions seen. */
static int write_cells(DHT *d, int n) {
  double k[NIN], v[NOUT];
  int collisions = 0;
  for (int c = rank; c < n; c += nranks) {
    cell_key(k, c);
    cell_value(v, c);
    int rc = DHT_write(d, k, v);
    CHECK(rc == DHT_SUCCESS || rc == DHT_WRITE_SUCCESS_WITH_COLLISION);
    collisions += rc == DHT_WRITE_SUCCESS_WITH_COLLISION;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return collisions;
}

/* Reads cells [0, n); returns the hits, each checked. */
static int read_cells(DHT *d, int n) {
  double k[NIN], v[NOUT], want[NOUT];
  int hits = 0;
  for (int c = 0; c < n; c++) {
    cell_key(k, c);
    int rc = DHT_read(d, k, v);
    CHECK(rc == DHT_SUCCESS || rc == DHT_READ_ERROR);
    if (rc != DHT_SUCCESS) continue;
    hits++;
    cell_value(want, c);
    CHECK(memcmp(v, want, sizeof v) == 0);
  }
  return hits;
}

static int sum_to_root(int x) {
  int s = 0;
  MPI_Reduce(&x, &s, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  return s;
}

static void free_and_check(DHT *d, int collisions, int misses) {
  int coll = -1, miss = -1;
  int want_coll = sum_to_root(collisions), want_miss = sum_to_root(misses);
  CHECK(DHT_free(d, &coll, &miss) == DHT_SUCCESS);
  if (rank == 0) {
    CHECK(coll == want_coll);
    CHECK(miss == want_miss);
  } else {
    CHECK(coll == 0 && miss == 0);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  char path[64];
  snprintf(path, sizeof path, "poet_app_n%d.dht", nranks);
  const int ks = NIN * sizeof(double), vs = NOUT * sizeof(double);

  /* Fill, read everything back from every rank, miss on new inputs. */
  DHT *d = DHT_create(MPI_COMM_WORLD, 1000, vs, ks, fnv_hash);
  CHECK(d != NULL);
  if (!d) MPI_Abort(MPI_COMM_WORLD, 1);
  int collisions = write_cells(d, NCELLS);
  CHECK(read_cells(d, NCELLS) == NCELLS);
  int misses = NCELLS + 40 - read_cells(d, NCELLS + 40); /* 40 new cells */
  CHECK(misses == 40);
  CHECK(hash_calls > 0);

  /* Dump, then restart into a table four times larger. */
  CHECK(DHT_to_file(d, path) == DHT_SUCCESS);
  CHECK(DHT_to_file(d, "no/such/dir/table.dht") == DHT_FILE_IO_ERROR);
  free_and_check(d, collisions, misses);

  DHT *big = DHT_create(MPI_COMM_WORLD, 4000, vs, ks, fnv_hash);
  CHECK(big != NULL);
  if (!big) MPI_Abort(MPI_COMM_WORLD, 1);
  CHECK(DHT_from_file(big, path) == DHT_SUCCESS);
  CHECK(read_cells(big, NCELLS) == NCELLS);
  CHECK(DHT_from_file(big, "no/such/file.dht") == DHT_FILE_IO_ERROR);
  free_and_check(big, 0, 0);

  /* Other output size: the file is not for this table. */
  DHT *other = DHT_create(MPI_COMM_WORLD, 1000, vs + 8, ks, fnv_hash);
  CHECK(other != NULL);
  if (other) {
    CHECK(DHT_from_file(other, path) == DHT_WRONG_FILE);
    free_and_check(other, 0, 0);
  }

  /* A table of 8 buckets per rank evicts, and counts it. */
  DHT *tiny = DHT_create(MPI_COMM_WORLD, 8, vs, ks, fnv_hash);
  CHECK(tiny != NULL);
  if (tiny) {
    collisions = write_cells(tiny, 200);
    CHECK(sum_to_root(collisions) > 0 || rank != 0);
    int hits = read_cells(tiny, 200);
    CHECK(hits > 0 && hits <= 8 * nranks);
    free_and_check(tiny, collisions, 200 - hits);
  }

  /* With one hash value for all keys, they share one key's two groups. */
  DHT *one = DHT_create(MPI_COMM_WORLD, 1000, vs, ks, same_hash);
  CHECK(one != NULL);
  if (one) {
    collisions = write_cells(one, 100);
    int hits = read_cells(one, 100);
    CHECK(hits <= 16);
    free_and_check(one, collisions, 100 - hits);
  }

  /* Invalid arguments fail on every rank with NULL. */
  CHECK(DHT_create(MPI_COMM_WORLD, 1000, 0, ks, fnv_hash) == NULL);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) remove(path);
  int rc = check_finish("mpi_poet_app");
  MPI_Finalize();
  return rc;
}
