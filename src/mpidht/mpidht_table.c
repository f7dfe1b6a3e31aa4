/*
 * MPI-DHT's API (LUCX/MPI/DHT.h) over a poet_table: create and free, write
 * and read by key, files.
 */
#include <stdlib.h>

#include "mpidht_state.h"

/* MPI-DHT hands its hash (key_size, key); its MPI variants take the owner
   from the bits above a rank shift and the candidate indices from the
   bytes below, so a hash fit for them may still be weak in the bits rmadht
   uses: mix it once more, as the POET dialects do. */
static uint64_t mpidht_hash(const void *key, size_t len, void *arg) {
  const struct rmadht_mpidht_state *s = arg;
  return poet_mix(s->hash_func((int)len, key));
}

static void state_free(struct rmadht_mpidht_state *s) {
  if (s) free(s->landed);
  free(s);
}

static uint32_t clamp_u32(uint64_t v) {
  return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

MPIDHT_EXPORT DHT *DHT_create(const DHT_init_t *init) {
  /* No communicator to agree over: fail here, as rmadht_create does. */
  if (!init || init->comm == MPI_COMM_NULL) return NULL;
  int ranks = 0;
  if (MPI_Comm_size(init->comm, &ranks) != MPI_SUCCESS) return NULL;
  DHT *d = calloc(1, sizeof *d);
  struct rmadht_mpidht_state *s = calloc(1, sizeof *s);
  if (s) s->landed = calloc((size_t)ranks, sizeof *s->landed);
  int ok = d && s && s->landed && init->key_size > 0 && init->data_size > 0;
  struct poet_table scratch;
  if (s) s->hash_func = init->hash_func;
  /* An index is a uint32_t and bucket_count an unsigned int: no more
     slots per rank than both can hold.  A rank that failed here still
     takes part in every collective call of the create (ok 0), so that all
     ranks fail alike. */
  if (poet_table_create(ok ? &s->p : &scratch, ok, init->comm,
                        init->bucket_count, UINT32_MAX,
                        ok ? init->data_size : 0, ok ? init->key_size : 0,
                        init->hash_func ? mpidht_hash : NULL,
                        s) != RMADHT_OK) {
    state_free(s);
    free(d);
    return NULL;
  }
  rmadht_info info;
  if (rmadht_get_info(s->p.t, &info) != RMADHT_OK) {
    /* Cannot fail on a live table; free collectively all the same. */
    poet_table_free(&s->p, NULL, NULL);
    state_free(s);
    free(d);
    return NULL;
  }
  d->data_size = init->data_size;
  d->key_size = init->key_size;
  d->bucket_count = (unsigned int)info.slots_per_rank;
  d->comm = init->comm;
  d->comm_size = ranks;
  d->hash_func = init->hash_func;
  d->rmadht = s;
  return d;
}

MPIDHT_EXPORT int DHT_free(DHT *table, uint32_t *chksum_retries) {
  struct rmadht_mpidht_state *s = mpidht_state(table);
  if (!s) return DHT_UCX_ERROR;
  rmadht_stats st;
  uint64_t mine = 0, sum = 0;
  if (rmadht_get_stats(s->p.t, &st) == RMADHT_OK) mine = st.checksum_retries;
  /* MPI-DHT's documentation promises the total; every rank gets it. */
  int rc = MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, s->p.comm) ==
                   MPI_SUCCESS
               ? RMADHT_OK
               : RMADHT_ERR_MPI;
  if (chksum_retries) *chksum_retries = clamp_u32(sum);
  int rc2 = poet_table_free(&s->p, NULL, NULL);
  state_free(s);
  free(table);
  return rc || rc2 ? DHT_UCX_ERROR : DHT_SUCCESS;
}

void mpidht_place(struct rmadht_mpidht_state *s, const rmadht_location *loc,
                  uint32_t *proc, uint32_t *index) {
  int rank = -1;
  uint64_t slot = UINT32_MAX;
  if (!loc || rmadht_location_split(s->p.t, loc, &rank, &slot) != RMADHT_OK)
    rank = -1, slot = UINT32_MAX;
  if (proc) *proc = rank < 0 ? UINT32_MAX : (uint32_t)rank;
  if (index) *index = (uint32_t)slot;
}

int mpidht_stored(DHT *table, int evicted, const rmadht_location *loc,
                  uint32_t *proc, uint32_t *index) {
  struct rmadht_mpidht_state *s = table->rmadht;
  /* MPI-DHT's write is complete when it returns (its flush); rmadht's
     lock-free put completes lazily, so complete it here. */
  if (rmadht_flush(s->p.t) != RMADHT_OK) return DHT_UCX_ERROR;
  uint32_t owner, slot;
  mpidht_place(s, loc, &owner, &slot);
  if (owner < (uint32_t)table->comm_size) s->landed[owner]++;
  if (proc) *proc = owner;
  if (index) *index = slot;
  if (!evicted) return DHT_SUCCESS;
  s->p.evictions++;
  s->period.evictions++;
  return DHT_WRITE_SUCCESS_WITH_EVICTION;
}

MPIDHT_EXPORT int DHT_write(DHT *table, void *key, void *data, uint32_t *proc,
                            uint32_t *index) {
  struct rmadht_mpidht_state *s = mpidht_state(table);
  if (!s || !key || !data) return DHT_UCX_ERROR;
  s->period.w_access++;
  rmadht_location loc;
  int rc = rmadht_write_loc(s->p.t, key, data, &loc);
  if (rc != RMADHT_OK && rc != RMADHT_EVICTED) return DHT_UCX_ERROR;
  return mpidht_stored(table, rc == RMADHT_EVICTED, &loc, proc, index);
}

MPIDHT_EXPORT int DHT_read(DHT *table, const void *key, void *destination) {
  struct rmadht_mpidht_state *s = mpidht_state(table);
  if (!s || !key || !destination) return DHT_UCX_ERROR;
  s->period.r_access++;
  rmadht_stats before, after;
  int counted = rmadht_get_stats(s->p.t, &before) == RMADHT_OK;
  int rc = rmadht_read(s->p.t, key, destination);
  counted = counted && rmadht_get_stats(s->p.t, &after) == RMADHT_OK;
  if (counted) table->chksum_retries = clamp_u32(after.checksum_retries);
  if (rc == RMADHT_OK) return DHT_SUCCESS;
  if (rc != RMADHT_NOT_FOUND) return DHT_UCX_ERROR;
  s->p.read_misses++;
  s->period.read_misses++;
  /* The key's entry stayed torn through rmadht's re-reads: what MPI-DHT's
     lock-free variant reports when a checksum fails again on its retry. */
  if (counted && after.invalidations > before.invalidations)
    return DHT_READ_CORRUPT;
  return DHT_READ_MISS;
}

static const struct poet_file_codes file_codes = {
    DHT_SUCCESS,          DHT_UCX_ERROR,  DHT_FILE_IO_ERROR,
    DHT_FILE_WRITE_ERROR, DHT_WRONG_FILE, DHT_NO_MEM};

MPIDHT_EXPORT int DHT_to_file(DHT *table, const char *filename) {
  struct rmadht_mpidht_state *s = mpidht_state(table);
  if (!s) return DHT_UCX_ERROR;
  return poet_file_code(rmadht_dump(s->p.t, filename), 1, &file_codes);
}

/* A restore writes every entry of the file through the write path, as
   MPI-DHT's design does with DHT_write; its evictions count. */
MPIDHT_EXPORT int DHT_from_file(DHT *table, const char *filename) {
  struct rmadht_mpidht_state *s = mpidht_state(table);
  if (!s) return DHT_UCX_ERROR;
  rmadht_stats before, after;
  int rc = poet_table_restore(&s->p, filename, &before, &after);
  s->period.evictions += after.evictions - before.evictions;
  return poet_file_code(rc, 0, &file_codes);
}
