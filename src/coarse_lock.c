/*
 * Coarse-lock protocol, as in POET: every operation holds MPI_Win_lock on
 * the owner's whole window, shared to read and exclusive to write.  There is
 * no lock_all epoch in this mode, since MPI forbids MPI_Win_lock inside one.
 *
 * Batches take each target's lock once for all its items.
 * read:  lock shared, gets, unlock (1 round trip per target, the gets
 *        one message, rma.h).
 * write: lock exclusive, gets, flush (1), puts, unlock (2); an update is
 *        this write, its value made under the lock (protocol.c).
 * The exclusive lock makes the slot choice atomic; the claim and ver words
 * are still advanced so the slot format is the same in every mode.
 */
#include "protocol.h"
#include "rma.h"

/* Sorts item indices list[0, n) by target rank, keeping their order within
   a rank, so callers can walk one run of items per target. */
static void by_rank(rmadht *t, int *list, int n) {
  const struct place *pl = t->scratch->place;
  for (int a = 1; a < n; a++) { /* insertion sort: stable, n <= 256 */
    int v = list[a], b = a;
    while (b > 0 && pl[list[b - 1]].rank > pl[v].rank) {
      list[b] = list[b - 1];
      b--;
    }
    list[b] = v;
  }
}

static int coarse_read(rmadht *t, size_t n, const unsigned char *keys,
                       unsigned char *values, int *status) {
  struct scratch *s = t->scratch;
  size_t ks = t->layout.key_size, vs = t->layout.value_size;
  batch_place(t, n, keys);
  by_rank(t, s->todo, (int)n);
  for (int a = 0, b; a < (int)n; a = b) {
    int rank = s->place[s->todo[a]].rank;
    for (b = a; b < (int)n && s->place[s->todo[b]].rank == rank; b++) {
    }
    int rc = rmadht_mpi(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, t->win));
    if (rc) return rc;
    for (int k = a; k < b && !rc; k++) rc = batch_get_candidates(t, s->todo[k], 1);
    int urc = rma_unlock(t, rank);
    batch_forget_touched(t); /* the unlock completed the gets */
    if (rc || urc) return rc ? rc : urc;
    for (int k = a; k < b; k++) {
      int i = s->todo[k];
      protocol_read_result(t, i, protocol_nslots(t, i), keys + i * ks,
                           values + i * vs, 0, &status[i]);
    }
  }
  return RMADHT_OK;
}

/* One target's share of a wave, under its exclusive lock. */
static int write_target(rmadht *t, int rank, const int *items, int n,
                        const unsigned char *keys, int *status, int *ntodo) {
  size_t ks = t->layout.key_size;
  int rc = rmadht_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, t->win));
  if (rc) return rc;
  for (int k = 0; k < n && !rc; k++) rc = batch_get_candidates(t, items[k], 1);
  if (!rc) rc = rma_flush(t, rank);
  for (int k = 0; k < n && !rc; k++) {
    int i = items[k];
    rc = protocol_put_locked(t, i, keys + i * ks, &status[i], ntodo);
  }
  int urc = rma_unlock(t, rank);
  batch_forget_touched(t);
  return rc ? rc : urc;
}

static int coarse_write(rmadht *t, size_t n, const unsigned char *keys,
                        const struct write_src *src, int *status) {
  struct scratch *s = t->scratch;
  batch_place_write(t, n, keys, src);
  int ntodo = (int)n;
  while (ntodo > 0) {
    int nwave = batch_select_wave(t, &ntodo);
    by_rank(t, s->wave, nwave);
    for (int a = 0, b; a < nwave; a = b) {
      int rank = s->place[s->wave[a]].rank;
      for (b = a; b < nwave && s->place[s->wave[b]].rank == rank; b++) {
      }
      int rc = write_target(t, rank, s->wave + a, b - a, keys, status,
                            &ntodo);
      if (rc) return rc;
    }
  }
  return RMADHT_OK;
}

static int coarse_flush(rmadht *t) {
  (void)t; /* every unlock completed its puts */
  return RMADHT_OK;
}

const struct protocol rmadht_coarse_protocol = {coarse_read, coarse_write,
                                                coarse_flush};
