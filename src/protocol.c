/* Protocol steps shared by every mode (see protocol.h). */
#include "protocol.h"
#include "rma.h"

#include <string.h>

uint64_t protocol_slot_disp(const rmadht *t, int i, int c) {
  const struct place *p = &t->scratch->place[i];
  return slot_group_disp(&t->layout, p->group[c / SLOT_GROUP]) +
         (uint64_t)(c % SLOT_GROUP) * t->layout.slot_size;
}

static inline const unsigned char *cand_slot(rmadht *t, int i, int c) {
  return batch_cand(t, i) + (size_t)c * t->layout.slot_size;
}

int protocol_read_result(rmadht *t, int i, int nslots,
                         const unsigned char *key, unsigned char *value,
                         int may_retry, int *status) {
  struct scratch *s = t->scratch;
  int c = search_key(&t->layout, batch_cand(t, i), nslots, key, -1);
  if (c >= 0) {
    memcpy(value, slot_value(&t->layout, cand_slot(t, i, c)),
           t->layout.value_size);
    *status = RMADHT_OK;
    t->stats.hits++;
    return 0;
  }
  if (c == SEARCH_TORN) {
    if (may_retry && s->tries[i]++ < READ_RETRIES) {
      t->stats.checksum_retries++;
      return 1;
    }
    t->stats.invalidations++;
  }
  *status = RMADHT_NOT_FOUND;
  t->stats.misses++;
  return 0;
}

/* Slot index (group * SLOT_GROUP + j) on the owner of candidate c of item
   i, as locations carry it. */
static uint64_t slot_index(const rmadht *t, int i, int c) {
  return t->scratch->place[i].group[c / SLOT_GROUP] * SLOT_GROUP +
         (uint64_t)(c % SLOT_GROUP);
}

static void record_location(rmadht *t, int i, int c) {
  const struct write_src *src = t->scratch->src;
  if (src->locs)
    location_make(t, t->scratch->place[i].rank, slot_index(t, i, c),
                  &src->locs[i]);
}

/* Runs item i's update function on the key's value in the copy, and sets
   s->value[i] and *own (the key's slot, or SEARCH_NONE) for a write. */
static enum decision decide_update(rmadht *t, int i, const unsigned char *key,
                                   int locked, int *own, int *status) {
  struct scratch *s = t->scratch;
  const struct write_src *src = s->src;
  size_t vs = t->layout.value_size;
  int nslots = protocol_nslots(t, i);
  int c = search_key(&t->layout, batch_cand(t, i), nslots, key, -1);
  /* A torn copy of the key may be its newest value: never take it for
     absent, or an update could start again from zeros. */
  if (c == SEARCH_TORN) {
    if (!locked) return DECIDE_AGAIN;
    c = SEARCH_NONE;
  }
  unsigned char *v = s->made + (size_t)i * vs;
  if (c >= 0)
    memcpy(v, slot_value(&t->layout, cand_slot(t, i, c)), vs);
  else
    memset(v, 0, vs);
  switch (src->fn(src->arg, src->first + (size_t)i, key, v, c >= 0)) {
    case RMADHT_UPDATE_KEEP:
      /* The copy is the linearisation point: nothing to claim. */
      if (c >= 0) record_location(t, i, c);
      *status = c >= 0 ? RMADHT_OK : RMADHT_NOT_FOUND;
      return DECIDE_DONE;
    case RMADHT_UPDATE_STORE:
      s->value[i] = v;
      break;
    case RMADHT_UPDATE_REMOVE:
      if (c < 0) {
        *status = RMADHT_NOT_FOUND;
        return DECIDE_DONE;
      }
      s->value[i] = NULL;
      break;
    default:
      *status = RMADHT_ERR_ARG;
      return DECIDE_DONE;
  }
  /* The claim compares only the chosen slot's claim word, so the value
     must come from a completed write of it: a slot in flight may still
     show the value its writer is replacing.  While the key is absent, a
     candidate being written may be another updater inserting it. */
  if (!locked && (c >= 0 ? slot_inflight(cand_slot(t, i, c))
                         : search_busy(&t->layout, batch_cand(t, i), nslots)))
    return DECIDE_AGAIN;
  *own = c;
  return DECIDE_WRITE;
}

enum decision protocol_decide(rmadht *t, int i, const unsigned char *key,
                              int locked, int *status) {
  struct scratch *s = t->scratch;
  const struct write_src *src = s->src;
  int ngroups = s->place[i].ngroups, nslots = ngroups * SLOT_GROUP;
  const unsigned char *cand = batch_cand(t, i);
  int c, own = SEARCH_NONE, update = src->fn && !s->removed[i];
  if (update) {
    enum decision d = decide_update(t, i, key, locked, &own, status);
    if (d != DECIDE_WRITE) return d;
  } else {
    s->value[i] = src->values
                      ? src->values + (size_t)i * t->layout.value_size
                      : NULL;
  }
  if (s->value[i]) {
    enum choice_kind kind;
    uint64_t top;
    int home[2] = {place_home(&s->place[i], 0), place_home(&s->place[i], 1)};
    c = choose_slot(&t->layout, cand, ngroups, home, key, &kind, &top);
    if (top > t->clock) t->clock = top;
    /* An update inserting its key takes the first never-claimed slot, so
       that two updaters inserting it at once meet on one claim word
       (search_unclaimed). */
    int fresh = update && own < 0 ? search_unclaimed(&t->layout, cand, nslots)
                                  : SEARCH_NONE;
    if (fresh >= 0) {
      c = fresh;
      kind = CHOICE_FREE;
    }
    s->kind[i] = (unsigned char)kind;
    s->probes[i] = 1u + (uint32_t)search_others(&t->layout, cand, nslots, key);
  } else {
    c = own >= 0 ? own : search_key(&t->layout, cand, nslots, key, -1);
    if (c < 0) {
      /* A remove that already took one copy of a duplicated key is done. */
      *status = s->removed[i] ? RMADHT_OK : RMADHT_NOT_FOUND;
      return DECIDE_DONE;
    }
  }
  s->slot[i] = c;
  s->expect[i] = slot_get32(cand_slot(t, i, c), SLOT_OFF_CLAIM);
  return DECIDE_WRITE;
}

/* A fingerprint of the claim and ver words of item i's candidates in its
   copy: any write that starts or ends on one of them changes it. */
static uint64_t busy_mark(rmadht *t, int i) {
  const unsigned char *cand = batch_cand(t, i);
  uint64_t h = 0;
  for (int c = 0; c < protocol_nslots(t, i); c++) {
    const unsigned char *slot = cand + (size_t)c * t->layout.slot_size;
    h = (h ^ slot_get32(slot, SLOT_OFF_CLAIM)) * UINT64_C(0x100000001B3);
    h = (h ^ slot_get32(slot, SLOT_OFF_VER)) * UINT64_C(0x100000001B3);
  }
  return h;
}

/* Why a write that loses races needs no bound on its retries: a claim is
   lost only to a compare-and-swap that won, so every lost round is
   another write's completion, and the randomised backoff spreads the
   losers so that each retry has a fair chance against the others (with n
   writers on one slot, O(n) expected retries each).  A busy slot is
   different: it waits on one other writer, which may have stopped; only
   the absence of any change for STALL_SECONDS tells that apart from
   others winning, so only that fails the write. */
int protocol_must_wait(rmadht *t, int i, enum decision d) {
  return d == DECIDE_AGAIN ||
         !slot_claimable(&t->layout, cand_slot(t, i, t->scratch->slot[i]));
}

int protocol_give_up(rmadht *t, int i, int busy, int *status) {
  struct scratch *s = t->scratch;
  if (!busy) {
    s->tries[i]++;
    return 0;
  }
  s->waits[i]++;
  uint64_t mark = busy_mark(t, i);
  double now = MPI_Wtime();
  if (s->busy_since[i] < 0 || mark != s->busy_mark[i]) {
    s->busy_mark[i] = mark;
    s->busy_since[i] = now;
    return 0;
  }
  if (now - s->busy_since[i] < STALL_SECONDS) return 0;
  *status = RMADHT_ERR_CONTENDED;
  return 1;
}

void protocol_pause(rmadht *t, int i, int busy) {
  const struct scratch *s = t->scratch;
  if (busy)
    protocol_backoff(t, s->waits[i] < BUSY_PAUSE ? s->waits[i] : BUSY_PAUSE);
  else
    protocol_backoff(t, s->tries[i]);
}

void protocol_image(rmadht *t, int i, const unsigned char *key,
                    uint32_t claim, unsigned char *image, int *status) {
  struct scratch *s = t->scratch;
  const unsigned char *value = s->value[i];
  slot_fill(&t->layout, image, claim, ++t->clock,
            value ? STAMP_LIVE : STAMP_TOMB, key, value);
  *status = RMADHT_OK;
  if (!value) {
    if (!s->removed[i]) t->stats.removes++;
    s->removed[i] = 1;
    return;
  }
  t->stats.write_probes += s->probes[i];
  record_location(t, i, s->slot[i]);
  if (s->kind[i] == CHOICE_EVICT) {
    t->stats.evictions++;
    *status = RMADHT_EVICTED;
  }
}

int protocol_put_locked(rmadht *t, int i, const unsigned char *key,
                        int *status, int *ntodo) {
  struct scratch *s = t->scratch;
  if (protocol_decide(t, i, key, 1, status) != DECIDE_WRITE) return RMADHT_OK;
  unsigned char *image = batch_image(t, i);
  protocol_image(t, i, key, slot_next_claim(s->expect[i]), image, status);
  int rank = s->place[i].rank;
  int rc = rma_put(t, rank, protocol_slot_disp(t, i, s->slot[i]),
                   t->layout.slot_size, image);
  if (rc) return rc;
  batch_touch(t, rank);
  if (!s->value[i] && protocol_more_copies(t, i, key))
    protocol_requeue(t, ntodo, i);
  return RMADHT_OK;
}

int protocol_more_copies(rmadht *t, int i, const unsigned char *key) {
  int nslots = t->scratch->place[i].ngroups * SLOT_GROUP;
  return search_key(&t->layout, batch_cand(t, i), nslots, key,
                    t->scratch->slot[i]) >= 0;
}

void protocol_requeue(rmadht *t, int *ntodo, int i) {
  int *todo = t->scratch->todo;
  int k = *ntodo;
  while (k > 0 && todo[k - 1] > i) {
    todo[k] = todo[k - 1];
    k--;
  }
  todo[k] = i;
  (*ntodo)++;
}

/* Where the network cannot reach memory by itself (TCP, or any network
   without RDMA), the MPI emulates one-sided operations with messages that
   the target's MPI applies when it next enters the library.  A rank that
   waits here for a lock another rank holds may itself be the target of
   that rank's outstanding operations: spinning outside MPI would starve
   them, so the holder never releases (measured between two hosts with
   Open MPI's osc/ucx and osc/pt2pt: fine-lock writes livelocked).  An
   MPI_Iprobe per turn drives the progress engine of every MPI here. */
void protocol_backoff(rmadht *t, unsigned attempt) {
  uint64_t *x = &t->scratch->rng;
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  /* Never shorter than the deterministic 2^attempt us it replaces (fine
     locks on oversubscribed MPICH slowed with shorter pauses), but up to
     twice that, so that ranks that lost together spread out. */
  unsigned base = 1u << (attempt < LOST_PAUSE ? attempt : LOST_PAUSE);
  double until = MPI_Wtime() + 1e-6 * (double)(base + *x % base);
  int flag;
  do {
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, t->comm, &flag, MPI_STATUS_IGNORE);
  } while (MPI_Wtime() < until);
}
