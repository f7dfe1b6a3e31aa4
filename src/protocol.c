/* Protocol steps shared by every mode (see protocol.h). */
#include "protocol.h"

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

int protocol_decide(rmadht *t, int i, const unsigned char *key,
                    const unsigned char *value, int *status) {
  struct scratch *s = t->scratch;
  int ngroups = s->place[i].ngroups;
  const unsigned char *cand = batch_cand(t, i);
  int c;
  if (value) {
    enum choice_kind kind;
    uint64_t top;
    c = choose_slot(&t->layout, cand, ngroups, key, &kind, &top);
    if (top > t->clock) t->clock = top;
    s->kind[i] = (unsigned char)kind;
  } else {
    c = search_key(&t->layout, cand, ngroups * SLOT_GROUP, key, -1);
    if (c < 0) {
      /* A remove that already took one copy of a duplicated key is done. */
      *status = s->removed[i] ? RMADHT_OK : RMADHT_NOT_FOUND;
      return 0;
    }
  }
  s->slot[i] = c;
  s->expect[i] = slot_get32(cand_slot(t, i, c), SLOT_OFF_CLAIM);
  return 1;
}

void protocol_image(rmadht *t, int i, const unsigned char *key,
                    const unsigned char *value, uint32_t claim,
                    unsigned char *image, int *status) {
  struct scratch *s = t->scratch;
  slot_fill(&t->layout, image, claim, ++t->clock,
            value ? STAMP_LIVE : STAMP_TOMB, key, value);
  *status = RMADHT_OK;
  if (!value) {
    if (!s->removed[i]) t->stats.removes++;
    s->removed[i] = 1;
  } else if (s->kind[i] == CHOICE_EVICT) {
    t->stats.evictions++;
    *status = RMADHT_EVICTED;
  }
}

int protocol_put_locked(rmadht *t, int i, const unsigned char *key,
                        const unsigned char *value, int *status,
                        int *ntodo) {
  struct scratch *s = t->scratch;
  if (!protocol_decide(t, i, key, value, status)) return RMADHT_OK;
  unsigned char *image = batch_image(t, i);
  protocol_image(t, i, key, value, slot_next_claim(s->expect[i]), image,
                 status);
  int rank = s->place[i].rank;
  int rc = rmadht_mpi(MPI_Put(image, (int)t->layout.slot_size, MPI_BYTE,
                              rank,
                              (MPI_Aint)protocol_slot_disp(t, i, s->slot[i]),
                              (int)t->layout.slot_size, MPI_BYTE, t->win));
  if (rc) return rc;
  batch_touch(t, rank);
  if (!value && protocol_more_copies(t, i, key)) protocol_requeue(t, ntodo, i);
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

void protocol_backoff(unsigned attempt) {
  double wait = 1e-6 * (double)(1u << (attempt < 10 ? attempt : 10));
  double until = MPI_Wtime() + wait;
  while (MPI_Wtime() < until) {
  }
}
