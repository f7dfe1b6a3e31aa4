/*
 * POET's DHT API (include/rmadht_poet.h) over an rmadht table in lock-free
 * mode: argument and code translation, and the two counters POET keeps.
 */
#include <limits.h>
#include <stdlib.h>
#include <xxhash.h>

#include "internal.h"
#include "rmadht_poet.h"

struct rmadht_poet {
  rmadht *table;
  uint64_t (*hash_func)(int, void *);
  uint64_t evictions, read_misses; /* this rank's, summed by DHT_free */
};

/* POET's hash takes (key_size, key).  Its result is mixed once more
   because rmadht takes the owner from the high bits and a group from the
   low bits, while POET only ever reduced the hash modulo the rank count:
   a hash that is fine for that (a key's first eight bytes, say) would put
   every key on rank 0.  The mix is a function of the user's hash alone, so
   keys with equal hashes still share their place. */
static uint64_t poet_hash(const void *key, size_t len, void *arg) {
  const DHT *d = arg;
  /* POET's signature has no const; the key is only read. */
  uint64_t h = d->hash_func((int)len, (void *)(uintptr_t)key);
  return XXH3_64bits(&h, sizeof h);
}

/* Table memory for a bucket count: whole groups of SLOT_GROUP slots, and
   room for the node-local path's tags, so that at least size_per_process
   buckets exist on either path.  0 when it overflows, which rmadht_create
   then refuses on every rank. */
static size_t bytes_for(unsigned int buckets, int data_size, int key_size) {
  struct slot_layout l;
  if (data_size <= 0 || key_size <= 0 ||
      slot_layout_init(&l, (size_t)key_size, (size_t)data_size, SIZE_MAX, 0))
    return 0;
  size_t groups = buckets / SLOT_GROUP + (buckets % SLOT_GROUP != 0);
  if (groups == 0) groups = 1;
  size_t per_group = l.group_bytes + 4 * FRONT_TAGS;
  if (groups > (SIZE_MAX - 64) / per_group) return 0;
  return groups * per_group + 64;
}

DHT *DHT_create(MPI_Comm comm, unsigned int size_per_process, int data_size,
                int key_size, uint64_t (*hash_func)(int, void *)) {
  DHT *d = calloc(1, sizeof *d);
  rmadht_config cfg;
  rmadht_config_default(&cfg, key_size > 0 ? (size_t)key_size : 0,
                        data_size > 0 ? (size_t)data_size : 0);
  cfg.bytes_per_rank = bytes_for(size_per_process, data_size, key_size);
  cfg.mode = RMADHT_LOCK_FREE;
  if (d && hash_func) {
    d->hash_func = hash_func;
    cfg.hash = poet_hash;
    cfg.hash_arg = d;
  }
  /* A rank that could not allocate still takes part in the collective
     create, with a configuration it refuses, so every rank fails alike. */
  if (!d) cfg.key_size = 0;
  rmadht *t = NULL;
  if (rmadht_create(comm, &cfg, &t) != RMADHT_OK) {
    free(d);
    return NULL;
  }
  d->table = t;
  return d;
}

int DHT_read(DHT *table, void *key, void *destination) {
  if (!table) return DHT_MPI_ERROR;
  int rc = rmadht_read(table->table, key, destination);
  if (rc == RMADHT_OK) return DHT_SUCCESS;
  if (rc == RMADHT_NOT_FOUND) {
    table->read_misses++;
    return DHT_READ_ERROR;
  }
  return DHT_MPI_ERROR;
}

int DHT_write(DHT *table, void *key, void *data) {
  if (!table) return DHT_MPI_ERROR;
  int rc = rmadht_write(table->table, key, data);
  if (rc != RMADHT_OK && rc != RMADHT_EVICTED) return DHT_MPI_ERROR;
  /* POET's write is complete when it returns (its unlock); rmadht's
     lock-free put completes lazily, so complete it here. */
  if (rmadht_flush(table->table) != RMADHT_OK) return DHT_MPI_ERROR;
  if (rc == RMADHT_EVICTED) {
    table->evictions++;
    return DHT_WRITE_SUCCESS_WITH_COLLISION;
  }
  return DHT_SUCCESS;
}

static int clamp_int(uint64_t v) { return v > INT_MAX ? INT_MAX : (int)v; }

int DHT_free(DHT *table, int *collision_counter, int *readerror_counter) {
  if (!table) return DHT_MPI_ERROR;
  uint64_t mine[2] = {table->evictions, table->read_misses}, sum[2] = {0, 0};
  int rc = MPI_Reduce(mine, sum, 2, MPI_UINT64_T, MPI_SUM, 0,
                      table->table->comm) == MPI_SUCCESS
               ? DHT_SUCCESS
               : DHT_MPI_ERROR;
  /* POET's counters are int; a sum beyond that saturates. */
  if (collision_counter) *collision_counter = clamp_int(sum[0]);
  if (readerror_counter) *readerror_counter = clamp_int(sum[1]);
  if (rmadht_free(&table->table) != RMADHT_OK) rc = DHT_MPI_ERROR;
  free(table);
  return rc;
}

int DHT_to_file(DHT *table, const char *filename) {
  if (!table) return DHT_MPI_ERROR;
  switch (rmadht_dump(table->table, filename)) {
    case RMADHT_OK: return DHT_SUCCESS;
    case RMADHT_ERR_FILE: return DHT_FILE_IO_ERROR;
    case RMADHT_ERR_IO: return DHT_FILE_WRITE_ERROR;
    default: return DHT_MPI_ERROR;
  }
}

int DHT_from_file(DHT *table, const char *filename) {
  if (!table) return DHT_MPI_ERROR;
  switch (rmadht_restore(table->table, filename)) {
    case RMADHT_OK: return DHT_SUCCESS;
    case RMADHT_ERR_FILE: return DHT_FILE_IO_ERROR;
    case RMADHT_ERR_FORMAT: return DHT_WRONG_FILE;
    default: return DHT_MPI_ERROR;
  }
}
