/*
 * POET's 2021 DHT API (include/rmadht_poet.h, De Lucia et al. 2021,
 * Appendix A) over a poet_table.  The header renames the calls to
 * rmadht_poet2021_*, so these definitions never clash with the current
 * dialect's (dht_*.c).
 */
#include <stdlib.h>

#include "poet_table.h"
#include "rmadht_poet.h"

struct rmadht_poet2021 {
  struct poet_table p;
  uint64_t (*hash_func)(int, void *);
};

static uint64_t poet_hash(const void *key, size_t len, void *arg) {
  const DHT *d = arg;
  /* The 2021 signature has no const; the key is only read. */
  return poet_mix(d->hash_func((int)len, (void *)(uintptr_t)key));
}

POET_EXPORT DHT *DHT_create(MPI_Comm comm, unsigned int size_per_process,
                            int data_size, int key_size,
                            uint64_t (*hash_func)(int, void *)) {
  DHT *d = calloc(1, sizeof *d);
  struct poet_table scratch;
  if (d) d->hash_func = hash_func;
  if (poet_table_create(d ? &d->p : &scratch, d != NULL, comm,
                        size_per_process, UINT64_MAX, data_size, key_size,
                        hash_func ? poet_hash : NULL, d) != RMADHT_OK) {
    free(d);
    return NULL;
  }
  return d;
}

POET_EXPORT int DHT_read(DHT *table, void *key, void *destination) {
  if (!table) return DHT_MPI_ERROR;
  int rc = rmadht_read(table->p.t, key, destination);
  if (rc == RMADHT_OK) return DHT_SUCCESS;
  if (rc == RMADHT_NOT_FOUND) {
    table->p.read_misses++;
    return DHT_READ_ERROR;
  }
  return DHT_MPI_ERROR;
}

POET_EXPORT int DHT_write(DHT *table, void *key, void *data) {
  if (!table) return DHT_MPI_ERROR;
  int rc = rmadht_write(table->p.t, key, data);
  if (rc != RMADHT_OK && rc != RMADHT_EVICTED) return DHT_MPI_ERROR;
  /* Complete when it returns, as POET's own is: dht_stored (dht_table.c)
     says why no flush is needed for that. */
  if (rc == RMADHT_EVICTED) {
    table->p.evictions++;
    return DHT_WRITE_SUCCESS_WITH_COLLISION;
  }
  return DHT_SUCCESS;
}

POET_EXPORT int DHT_free(DHT *table, int *collision_counter,
                         int *readerror_counter) {
  if (!table) return DHT_MPI_ERROR;
  int rc = poet_table_free(&table->p, collision_counter, readerror_counter);
  free(table);
  return rc == RMADHT_OK ? DHT_SUCCESS : DHT_MPI_ERROR;
}

POET_EXPORT int DHT_to_file(DHT *table, const char *filename) {
  if (!table) return DHT_MPI_ERROR;
  switch (rmadht_dump(table->p.t, filename)) {
    case RMADHT_OK: return DHT_SUCCESS;
    case RMADHT_ERR_FILE: return DHT_FILE_IO_ERROR;
    case RMADHT_ERR_IO: return DHT_FILE_WRITE_ERROR;
    default: return DHT_MPI_ERROR;
  }
}

POET_EXPORT int DHT_from_file(DHT *table, const char *filename) {
  if (!table) return DHT_MPI_ERROR;
  switch (rmadht_restore(table->p.t, filename)) {
    case RMADHT_OK: return DHT_SUCCESS;
    case RMADHT_ERR_FILE: return DHT_FILE_IO_ERROR;
    case RMADHT_ERR_FORMAT: return DHT_WRONG_FILE;
    default: return DHT_MPI_ERROR;
  }
}
