/*
 * POET's current DHT API (include/rmadht/poet/DHT.h) over a poet_table:
 * create and free, write and read by key and by location, emptying, files.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dht_state.h"

static uint64_t poet_hash(const void *key, size_t len, void *arg) {
  const struct rmadht_poet_dht *s = arg;
  return poet_mix(s->hash_func((int)len, key));
}

POET_EXPORT DHT *DHT_create(MPI_Comm comm, uint64_t size_per_process,
                            unsigned int data_size, unsigned int key_size,
                            uint64_t (*hash_func)(int, const void *)) {
  DHT *d = calloc(1, sizeof *d);
  struct rmadht_poet_dht *s = calloc(1, sizeof *s);
  struct poet_table scratch;
  int ok = d && s && data_size <= INT_MAX && key_size <= INT_MAX;
  if (s) s->hash_func = hash_func;
  /* An index is a uint32_t: no more slots per rank than it can name. */
  if (poet_table_create(s ? &s->p : &scratch, ok, comm, size_per_process,
                        UINT64_C(1) << 32, ok ? data_size : 0,
                        ok ? key_size : 0, hash_func ? poet_hash : NULL,
                        s) != RMADHT_OK) {
    free(s);
    free(d);
    return NULL;
  }
  dht_probes_init(s, size_per_process);
  s->data_size = data_size;
  d->data_size = (int)data_size;
  d->key_size = (int)key_size;
  d->rmadht = s;
  return d;
}

POET_EXPORT int DHT_free(DHT *table, int *eviction_counter,
                         int *readerror_counter) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return DHT_MPI_ERROR;
  int rc = poet_table_free(&s->p, eviction_counter, readerror_counter);
  free(s);
  free(table);
  return rc == RMADHT_OK ? DHT_SUCCESS : DHT_MPI_ERROR;
}

void dht_place(struct rmadht_poet_dht *s, const rmadht_location *loc,
               uint32_t *proc, uint32_t *index) {
  int rank = -1;
  uint64_t slot = UINT32_MAX;
  if (!loc || rmadht_location_split(s->p.t, loc, &rank, &slot) != RMADHT_OK)
    rank = -1, slot = UINT32_MAX;
  if (proc) *proc = rank < 0 ? UINT32_MAX : (uint32_t)rank;
  if (index) *index = (uint32_t)slot;
}

POET_EXPORT int DHT_write(DHT *table, void *key, void *data, uint32_t *proc,
                          uint32_t *index) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return DHT_MPI_ERROR;
  s->period.w_access++;
  rmadht_location loc;
  uint64_t probes = dht_probes_now(s);
  int rc = rmadht_write_loc(s->p.t, key, data, &loc);
  if (rc != RMADHT_OK && rc != RMADHT_EVICTED) return DHT_MPI_ERROR;
  dht_count_call(s, probes, -1);
  return dht_stored(s, rc == RMADHT_EVICTED, &loc, proc, index);
}

int dht_stored(struct rmadht_poet_dht *s, int evicted,
               const rmadht_location *loc, uint32_t *proc, uint32_t *index) {
  /* POET's write is complete when it returns (its unlock).  rmadht's is
     in place by then but for the compare-and-swap of the slot's ver word,
     left outstanding (design.md, "Round trips and messages"); no flush
     waits for it here, which would make every write wait a third time.
     POET's tables take the node-local path on a node, which leaves
     nothing outstanding, and between nodes both MPIs apply the operation
     at once (mpi_mpi_faults checks it), before any later read that
     arrives at the target.  A read in between sees the slot torn and
     reads again, or counts a miss. */
  dht_place(s, loc, proc, index);
  if (!evicted) return DHT_SUCCESS;
  s->p.evictions++;
  s->period.evictions++;
  return DHT_WRITE_SUCCESS_WITH_EVICTION;
}

POET_EXPORT int DHT_read(DHT *table, const void *key, void *destination) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return DHT_MPI_ERROR;
  s->period.r_access++;
  int rc = rmadht_read(s->p.t, key, destination);
  if (rc == RMADHT_OK) return DHT_SUCCESS;
  if (rc != RMADHT_NOT_FOUND) return DHT_MPI_ERROR;
  s->p.read_misses++;
  s->period.read_misses++;
  return DHT_READ_MISS;
}

POET_EXPORT int DHT_read_location(DHT *table, uint32_t proc, uint32_t index,
                                  void *destination) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return DHT_MPI_ERROR;
  s->period.r_access++;
  rmadht_location loc;
  if (proc > INT_MAX ||
      rmadht_location_join(s->p.t, (int)proc, index, &loc) != RMADHT_OK)
    return DHT_MPI_ERROR;
  /* POET's signature has no room for the key found there: an entry that
     replaced the one written at this place reads as a hit. */
  switch (rmadht_read_loc(s->p.t, &loc, NULL, destination)) {
    case RMADHT_OK: return DHT_SUCCESS;
    case RMADHT_NOT_FOUND:
      /* What POET's read of an empty bucket copies; its proximity table
         does not look at the return. */
      memset(destination, 0, s->data_size);
      return DHT_READ_MISS;
    default: return DHT_MPI_ERROR;
  }
}

POET_EXPORT int DHT_flush(DHT *table) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return DHT_MPI_ERROR;
  if (rmadht_clear(s->p.t) != RMADHT_OK) return DHT_MPI_ERROR;
  dht_reset_probes(s, 1);
  return DHT_SUCCESS;
}

static const struct poet_file_codes file_codes = {
    DHT_SUCCESS,          DHT_MPI_ERROR,  DHT_FILE_IO_ERROR,
    DHT_FILE_WRITE_ERROR, DHT_WRONG_FILE, DHT_MPI_ERROR};

POET_EXPORT int DHT_to_file(DHT *table, const char *filename) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return DHT_MPI_ERROR;
  return poet_file_code(rmadht_dump(s->p.t, filename), 1, &file_codes);
}

/* A restore writes every entry of the file through the write path, so its
   evictions count as POET's (whose DHT_from_file calls DHT_write). */
POET_EXPORT int DHT_from_file(DHT *table, const char *filename) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return DHT_MPI_ERROR;
  rmadht_stats before, after;
  int rc = poet_table_restore(&s->p, filename, &before, &after);
  s->period.evictions += after.evictions - before.evictions;
  dht_count_restore(s, &before, &after);
  return poet_file_code(rc, 0, &file_codes);
}
