/*
 * Fine-lock protocol: a readers/writer lock word per slot group, as in
 * Lübke et al. 2024, sect. 3.2, driven by MPI atomics inside the lock_all
 * epoch.
 *
 * The lock word is 32-bit: bit 31 marks a writer, the rest count readers.
 *   reader: fetch-and-add 1; if a writer held it, subtract 1 and retry.
 *   writer: compare-and-swap 0 -> bit 31; on failure retry.
 *   release: add (unsigned wrap-around) -1 or 2^31.
 * 32 bits because Open MPI 4.1.4 crashes in a 64-bit compare-and-swap to
 * another rank.  An item takes both its groups or neither, and waits for
 * nothing while holding a lock, so batches cannot deadlock.
 *
 * read:  lock (1) get (2) unlock (3) round trips.
 * write: lock (1) get (2) put (3) unlock (4): the put must be complete
 *        before the lock is released, and MPI orders neither.  An update
 *        is this write, its value made under the lock by the caller's
 *        function (protocol.c).
 * Releases are flushed at once: a reader that went on to compute for an
 * hour must not hold a writer up for an hour.
 */
#include "protocol.h"
#include "rma.h"

#define LOCK_WRITER UINT32_C(0x80000000)

/* Operands live in static storage: MPI may read an origin buffer until the
   operation completes at the next flush. */
static const uint32_t ZERO = 0, ONE = 1, MINUS_ONE = UINT32_MAX,
                      WRITER = LOCK_WRITER;

static int lock_op(rmadht *t, int rank, uint64_t group, const uint32_t *add,
                   uint32_t *old) {
  MPI_Aint disp = (MPI_Aint)slot_lock_disp(group);
  int rc = rmadht_mpi(
      old ? MPI_Fetch_and_op(add, old, MPI_UINT32_T, rank, disp, MPI_SUM,
                             t->win)
          : MPI_Accumulate(add, 1, MPI_UINT32_T, rank, disp, 1, MPI_UINT32_T,
                           MPI_SUM, t->win));
  return rc ? rc : batch_atomic(t, rank);
}

/* Adds *add to both lock words of item i (release or undo). */
static int lock_add_both(rmadht *t, int i, const uint32_t *add) {
  const struct place *p = &t->scratch->place[i];
  for (int g = 0; g < p->ngroups; g++) {
    int rc = lock_op(t, p->rank, p->group[g], add, NULL);
    if (rc) return rc;
  }
  return RMADHT_OK;
}

/* Takes read locks for the todo items; moves those that met a writer back
   to todo after undoing, the rest into wave.  One round trip. */
static int lock_readers(rmadht *t, int *ntodo, int *nwave) {
  struct scratch *s = t->scratch;
  for (int k = 0; k < *ntodo; k++) {
    const struct place *p = &s->place[s->todo[k]];
    for (int g = 0; g < p->ngroups; g++) {
      int rc = lock_op(t, p->rank, p->group[g], &ONE, &s->lock_old[s->todo[k]][g]);
      if (rc) return rc;
    }
  }
  int rc = batch_flush_touched(t);
  if (rc) return rc;
  int nleft = 0;
  *nwave = 0;
  for (int k = 0; k < *ntodo; k++) {
    int i = s->todo[k];
    int blocked = 0;
    for (int g = 0; g < s->place[i].ngroups; g++)
      blocked |= (s->lock_old[i][g] & LOCK_WRITER) != 0;
    if (blocked) {
      rc = lock_add_both(t, i, &MINUS_ONE);
      if (rc) return rc;
      s->todo[nleft++] = i;
    } else {
      s->wave[(*nwave)++] = i;
    }
  }
  *ntodo = nleft;
  return RMADHT_OK;
}

static int fine_read(rmadht *t, size_t n, const unsigned char *keys,
                     unsigned char *values, int *status) {
  struct scratch *s = t->scratch;
  size_t ks = t->layout.key_size, vs = t->layout.value_size;
  batch_place(t, n, keys);
  int ntodo = (int)n;
  for (unsigned attempt = 0; ntodo > 0; attempt++) {
    if (attempt) protocol_backoff(t, attempt);
    int nwave, rc = lock_readers(t, &ntodo, &nwave);
    if (rc) return rc;
    for (int w = 0; w < nwave; w++) {
      rc = batch_get_candidates(t, s->wave[w], 1);
      if (rc) return rc;
    }
    rc = batch_flush_touched(t);
    if (rc) return rc;
    for (int w = 0; w < nwave; w++) {
      int i = s->wave[w];
      protocol_read_result(t, i, protocol_nslots(t, i), keys + i * ks,
                           values + i * vs, 0, &status[i]);
      rc = lock_add_both(t, i, &MINUS_ONE);
      if (rc) return rc;
    }
    rc = batch_flush_touched(t);
    if (rc) return rc;
  }
  return RMADHT_OK;
}

/* Tries write locks on both groups of each wave item; items that did not
   get both release what they got and return to todo.  One round trip. */
static int lock_writers(rmadht *t, int *nwave, int *ntodo) {
  struct scratch *s = t->scratch;
  for (int w = 0; w < *nwave; w++) {
    int i = s->wave[w];
    const struct place *p = &s->place[i];
    for (int g = 0; g < p->ngroups; g++) {
      int rc = rmadht_mpi(MPI_Compare_and_swap(
          &WRITER, &ZERO, &s->lock_old[i][g], MPI_UINT32_T, p->rank,
          (MPI_Aint)slot_lock_disp(p->group[g]), t->win));
      if (!rc) rc = batch_atomic(t, p->rank);
      if (rc) return rc;
    }
  }
  int rc = batch_flush_touched(t);
  if (rc) return rc;
  int nheld = 0;
  for (int w = 0; w < *nwave; w++) {
    int i = s->wave[w];
    const struct place *p = &s->place[i];
    int got = 0;
    for (int g = 0; g < p->ngroups; g++) got += s->lock_old[i][g] == 0;
    if (got == p->ngroups) {
      s->wave[nheld++] = i;
      continue;
    }
    for (int g = 0; g < p->ngroups; g++) {
      if (s->lock_old[i][g] != 0) continue;
      rc = lock_op(t, p->rank, p->group[g], &WRITER, NULL);
      if (rc) return rc;
    }
    protocol_requeue(t, ntodo, i);
  }
  *nwave = nheld;
  return RMADHT_OK;
}

static int fine_write(rmadht *t, size_t n, const unsigned char *keys,
                      const struct write_src *src, int *status) {
  struct scratch *s = t->scratch;
  size_t ks = t->layout.key_size;
  batch_place_write(t, n, keys, src);
  int ntodo = (int)n;
  for (unsigned attempt = 0; ntodo > 0; attempt++) {
    int nwave = batch_select_wave(t, &ntodo);
    int rc = lock_writers(t, &nwave, &ntodo);
    if (rc) return rc;
    for (int w = 0; w < nwave; w++) {
      rc = batch_get_candidates(t, s->wave[w], 1);
      if (rc) return rc;
    }
    rc = batch_flush_touched(t);
    if (rc) return rc;
    for (int w = 0; w < nwave; w++) {
      int i = s->wave[w];
      rc = protocol_put_locked(t, i, keys + i * ks, &status[i], &ntodo);
      if (rc) return rc;
    }
    rc = batch_flush_touched(t);
    if (rc) return rc;
    for (int w = 0; w < nwave; w++) {
      rc = lock_add_both(t, s->wave[w], &WRITER);
      if (rc) return rc;
    }
    rc = batch_flush_touched(t);
    if (rc) return rc;
    if (ntodo > 0) protocol_backoff(t, attempt);
  }
  return RMADHT_OK;
}

static int fine_flush(rmadht *t) {
  (void)t; /* every fine-lock write completes before it returns */
  return RMADHT_OK;
}

const struct protocol rmadht_fine_protocol = {fine_read, fine_write,
                                              fine_flush};
