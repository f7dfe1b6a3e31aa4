/*
 * Entry locations: where a write put an entry, read back in one round trip,
 * and emptying a table.
 *
 * A location is (table identifier, owner rank << SLOT_BITS | slot index),
 * the slot index being group * SLOT_GROUP + j.  The identifier, agreed at
 * create (config.c), makes a location of another table an error rather
 * than a read of an unrelated slot.  A read by location returns the key
 * stored there with the value: the slot may have been overwritten, evicted
 * or removed since, and only the key tells (POET's read by index does not
 * check, and can return an unrelated entry).
 */
#include <stdatomic.h>
#include <string.h>

#include "config.h"
#include "memo.h"
#include "protocol.h"
#include "rma.h"
#include "write_queue.h"

/* Slot indices per rank stay below 2^35 (2^32 groups of 8). */
#define SLOT_BITS 36

void location_make(const rmadht *t, int rank, uint64_t slot,
                   rmadht_location *loc) {
  loc->opaque[0] = t->id;
  loc->opaque[1] = (uint64_t)rank << SLOT_BITS | slot;
}

int rmadht_location_split(const rmadht *t, const rmadht_location *loc,
                          int *rank, uint64_t *slot) {
  if (!t || !loc) return RMADHT_ERR_ARG;
  uint64_t r = loc->opaque[1] >> SLOT_BITS;
  uint64_t s = loc->opaque[1] & ((UINT64_C(1) << SLOT_BITS) - 1);
  if (loc->opaque[0] != t->id || r >= (uint64_t)t->nranks ||
      s >= t->layout.groups * SLOT_GROUP)
    return RMADHT_ERR_LOCATION;
  if (rank) *rank = (int)r;
  if (slot) *slot = s;
  return RMADHT_OK;
}

int rmadht_location_join(const rmadht *t, int rank, uint64_t slot,
                         rmadht_location *loc) {
  if (!t || !loc) return RMADHT_ERR_ARG;
  if (rank < 0 || rank >= t->nranks || slot >= t->layout.groups * SLOT_GROUP)
    return RMADHT_ERR_LOCATION;
  location_make(t, rank, slot, loc);
  return RMADHT_OK;
}

/* The copy of item k's slot. */
static unsigned char *copy_of(rmadht *t, int k) {
  return t->scratch->cand + (size_t)k * t->layout.slot_size;
}

/* Issues the get of item k's slot (RMA path; coarse-lock mode under the
   owner's lock, which the caller holds). */
static int get_item(rmadht *t, int k, int rank, uint64_t slot) {
  batch_touch(t, rank);
  return rma_get_slot(t, rank, slot, copy_of(t, k));
}

/* Copies item k's slot on the node-local path. */
static void load_item(rmadht *t, int k, int rank, uint64_t slot) {
  const unsigned char *src =
      t->peer[rank] + slot_group_disp(&t->layout, slot / SLOT_GROUP) +
      (size_t)(slot % SLOT_GROUP) * t->layout.slot_size;
  memcpy(copy_of(t, k), src, t->layout.slot_size);
  atomic_thread_fence(memory_order_acquire);
}

/* Judges item k's copy: 1 to read it again (torn, retries left). */
static int judge(rmadht *t, int k, unsigned char *key, unsigned char *value,
                 int *status) {
  const struct slot_layout *l = &t->layout;
  const unsigned char *c = copy_of(t, k);
  enum slot_kind kind = slot_classify(l, c);
  if (kind == SLOT_TORN && t->scratch->tries[k]++ < READ_RETRIES) {
    t->stats.checksum_retries++;
    return 1;
  }
  if (kind != SLOT_LIVE) {
    if (kind == SLOT_TORN) t->stats.invalidations++;
    t->stats.misses++;
    *status = RMADHT_NOT_FOUND;
    return 0;
  }
  if (key) memcpy(key, slot_key(c), l->key_size);
  memcpy(value, slot_value(l, c), l->value_size);
  t->stats.hits++;
  *status = RMADHT_OK;
  return 0;
}

/* Coarse-lock mode has no lock_all epoch: the gets of each target run
   under its shared lock, one round trip per target. */
static int get_coarse(rmadht *t, int ntodo, const int *todo, const int *rank,
                      const uint64_t *slot) {
  unsigned char done[BATCH_CHUNK] = {0};
  for (int a = 0; a < ntodo; a++) {
    if (done[a]) continue;
    int r = rank[todo[a]];
    int rc = rmadht_mpi(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, t->win));
    if (rc) return rc;
    for (int b = a; b < ntodo && !rc; b++)
      if (!done[b] && rank[todo[b]] == r) {
        done[b] = 1;
        rc = get_item(t, todo[b], r, slot[todo[b]]);
      }
    int urc = rma_unlock(t, r);
    batch_forget_touched(t);
    if (rc || urc) return rc ? rc : urc;
  }
  return RMADHT_OK;
}

/* At most BATCH_CHUNK items. */
static int read_chunk(rmadht *t, size_t n, const rmadht_location *locs,
                      unsigned char *keys, unsigned char *values,
                      int *status) {
  struct scratch *s = t->scratch;
  size_t ks = t->layout.key_size, vs = t->layout.value_size;
  int rank[BATCH_CHUNK], ntodo = 0;
  uint64_t slot[BATCH_CHUNK];
  for (int k = 0; k < (int)n; k++) {
    s->tries[k] = 0;
    status[k] = rmadht_location_split(t, &locs[k], &rank[k], &slot[k]);
    if (status[k] == RMADHT_OK) s->todo[ntodo++] = k;
  }
  t->stats.reads += (uint64_t)ntodo;
  for (unsigned attempt = 0; ntodo > 0; attempt++) {
    if (attempt && t->peer) protocol_backoff(t, attempt);
    int rc = RMADHT_OK;
    if (t->peer) {
      for (int a = 0; a < ntodo; a++)
        load_item(t, s->todo[a], rank[s->todo[a]], slot[s->todo[a]]);
    } else if (t->mode == RMADHT_COARSE_LOCK) {
      rc = get_coarse(t, ntodo, s->todo, rank, slot);
    } else {
      for (int a = 0; a < ntodo && !rc; a++)
        rc = get_item(t, s->todo[a], rank[s->todo[a]], slot[s->todo[a]]);
      int frc = batch_flush_touched(t);
      if (!rc) rc = frc;
    }
    if (rc) return rc;
    int nleft = 0;
    for (int a = 0; a < ntodo; a++) {
      int k = s->todo[a];
      if (judge(t, k, keys ? keys + k * ks : NULL, values + k * vs,
                &status[k]))
        s->todo[nleft++] = k;
    }
    ntodo = nleft;
  }
  return RMADHT_OK;
}

int rmadht_read_loc_batch(rmadht *t, size_t n, const rmadht_location *locs,
                          void *keys, void *values, int *status) {
  if (!t) return RMADHT_ERR_ARG;
  if (n == 0) return RMADHT_OK;
  if (!locs || !values || !status) return RMADHT_ERR_ARG;
  int qrc = wq_send(t);
  if (qrc) return qrc;
  size_t ks = t->layout.key_size, vs = t->layout.value_size;
  for (size_t at = 0; at < n; at += BATCH_CHUNK) {
    size_t m = n - at < BATCH_CHUNK ? n - at : BATCH_CHUNK;
    int rc = read_chunk(t, m, locs + at,
                        keys ? (unsigned char *)keys + at * ks : NULL,
                        (unsigned char *)values + at * vs, status + at);
    if (rc) return rc;
  }
  return RMADHT_OK;
}

int rmadht_read_loc(rmadht *t, const rmadht_location *loc, void *key,
                    void *value) {
  if (!t || !loc || !value) return RMADHT_ERR_ARG;
  int rc = wq_send(t);
  if (rc) return rc;
  int status;
  rc = read_chunk(t, 1, loc, key, value, &status);
  return rc ? rc : status;
}

int rmadht_clear(rmadht *t) {
  if (!t) return RMADHT_ERR_ARG;
  /* Every rank's puts are complete once every rank has flushed: the
     agreement doubles as the barrier. */
  int rc = config_agree_rc(t->comm, rmadht_flush(t));
  if (rc) return rc;
  /* Claim words restart from 0: a copy taken before could match them
     again with other content. */
  memo_clear(t);
  /* All zero is "never written" for slots, "free" for locks and "no key"
     for tags. */
  if (t->mode == RMADHT_COARSE_LOCK) {
    rc = rmadht_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t->rank, 0, t->win));
    if (!rc) {
      memset(t->base, 0, t->layout.window_bytes);
      rc = rmadht_mpi(MPI_Win_unlock(t->rank, t->win));
    }
  } else {
    memset(t->base, 0, t->layout.window_bytes);
    rc = rmadht_mpi(MPI_Win_sync(t->win));
  }
  /* No rank may read before every rank has emptied its part. */
  return config_agree_rc(t->comm, rc);
}
