/* Searching a copy of candidate slots (see search.h). */
#include "search.h"

static inline const unsigned char *nth(const struct slot_layout *l,
                                       const unsigned char *cand, int i) {
  return cand + (size_t)i * l->slot_size;
}

static inline int same_key(const struct slot_layout *l,
                           const unsigned char *s, const void *key) {
  return memcmp(slot_key(s), key, l->key_size) == 0;
}

int search_key(const struct slot_layout *l, const unsigned char *cand,
               int nslots, const void *key, int skip) {
  int best = SEARCH_NONE, torn = 0;
  uint64_t best_epoch = 0;
  for (int i = 0; i < nslots; i++) {
    const unsigned char *s = nth(l, cand, i);
    /* Comparing the key first means only a match pays for a checksum. */
    if (i == skip || slot_get32(s, SLOT_OFF_CLAIM) == 0 || !same_key(l, s, key))
      continue;
    enum slot_kind k = slot_classify(l, s);
    if (k == SLOT_TORN) {
      torn = 1;
    } else if (k == SLOT_LIVE && (best < 0 || slot_epoch(s) > best_epoch)) {
      /* Two writers racing to insert one key can both succeed in
         different slots; the later write is the value. */
      best = i;
      best_epoch = slot_epoch(s);
    }
  }
  return best >= 0 ? best : torn ? SEARCH_TORN : SEARCH_NONE;
}

int search_tags(const unsigned char *const *tags, int ngroups, uint32_t tag,
                int *hits) {
  int k = 0;
  for (int g = 0; g < ngroups; g++)
    for (int j = 0; j < SLOT_GROUP; j++)
      if (slot_get32(tags[g], 4u * (size_t)j) == tag)
        hits[k++] = g * SLOT_GROUP + j;
  return k;
}

int search_gather(const struct slot_layout *l,
                  const unsigned char *const *group,
                  const unsigned char *const *tags, int ngroups, uint32_t tag,
                  unsigned char *dst) {
  int hits[2 * SLOT_GROUP];
  int k = search_tags(tags, ngroups, tag, hits);
  for (int h = 0; h < k; h++)
    memcpy(dst + (size_t)h * l->slot_size, search_hit_slot(l, group, hits[h]),
           l->slot_size);
  return k;
}

/* A tombstone's checksum is verified: one whose state bits say removed
   but whose checksum fails is a write landing over it, not a free slot. */
int search_free(const struct slot_layout *l, const unsigned char *s) {
  if (slot_get32(s, SLOT_OFF_CLAIM) == 0) return 1;
  return !slot_inflight(s) &&
         (slot_get64(s, SLOT_OFF_STAMP) & 3u) == STAMP_TOMB &&
         slot_classify(l, s) == SLOT_TOMB;
}

uint64_t search_top_epoch(const struct slot_layout *l,
                          const unsigned char *cand, int nslots) {
  uint64_t top = 0;
  for (int i = 0; i < nslots; i++) {
    uint64_t e = slot_epoch(nth(l, cand, i));
    if (e > top) top = e;
  }
  return top;
}

/* A key away from home costs every single read of it a second round trip,
   so a free home outweighs any difference in free slots. */
int search_pick_group(int ngroups, const int *nfree, const int *home_free) {
  int best = -1, best_score = 0;
  for (int g = 0; g < ngroups; g++) {
    int score = nfree[g];
    if (score > 0 && home_free[g]) score += 2 * SLOT_GROUP;
    if (score > best_score) {
      best_score = score;
      best = g;
    }
  }
  return best;
}

int choose_slot(const struct slot_layout *l, const unsigned char *cand,
                int ngroups, const int *home, const void *key,
                enum choice_kind *kind, uint64_t *max_epoch) {
  int nslots = ngroups * SLOT_GROUP;
  *max_epoch = search_top_epoch(l, cand, nslots);

  int own = search_key(l, cand, nslots, key, -1);
  if (own >= 0) {
    *kind = CHOICE_UPDATE;
    return own;
  }

  int nfree[2] = {0, 0}, home_free[2] = {0, 0};
  for (int g = 0; g < ngroups; g++) {
    for (int j = 0; j < SLOT_GROUP; j++)
      nfree[g] += search_free(l, nth(l, cand, g * SLOT_GROUP + j));
    home_free[g] = search_free(l, nth(l, cand, home[g]));
  }
  int best_group = search_pick_group(ngroups, nfree, home_free);
  *kind = CHOICE_FREE;
  if (best_group >= 0) {
    if (home_free[best_group]) return home[best_group];
    for (int j = 0; j < SLOT_GROUP; j++) {
      int i = best_group * SLOT_GROUP + j;
      if (search_free(l, nth(l, cand, i))) return i;
    }
  }

  /* Full: evict the intact entry written longest ago.  Slots another
     writer holds right now come last: in flight, or torn because a write
     is landing, since overwriting them loses that writer's entry or mixes
     two writes. */
  int oldest = -1, oldest_busy = -1;
  uint64_t oldest_epoch = UINT64_MAX, oldest_busy_epoch = UINT64_MAX;
  for (int i = 0; i < nslots; i++) {
    const unsigned char *s = nth(l, cand, i);
    uint64_t e = slot_epoch(s);
    if (slot_inflight(s) || slot_classify(l, s) == SLOT_TORN) {
      if (e < oldest_busy_epoch) oldest_busy_epoch = e, oldest_busy = i;
    } else if (e < oldest_epoch) {
      oldest_epoch = e, oldest = i;
    }
  }
  *kind = CHOICE_EVICT;
  return oldest >= 0 ? oldest : oldest_busy;
}

int search_unclaimed(const struct slot_layout *l, const unsigned char *cand,
                     int nslots) {
  for (int i = 0; i < nslots; i++)
    if (slot_get32(nth(l, cand, i), SLOT_OFF_CLAIM) == 0) return i;
  return SEARCH_NONE;
}

int search_busy(const struct slot_layout *l, const unsigned char *cand,
                int nslots) {
  for (int i = 0; i < nslots; i++)
    if (!slot_claimable(l, nth(l, cand, i))) return 1;
  return 0;
}

int search_others(const struct slot_layout *l, const unsigned char *cand,
                  int nslots, const void *key) {
  int k = 0;
  for (int i = 0; i < nslots; i++) {
    const unsigned char *s = nth(l, cand, i);
    k += (slot_get64(s, SLOT_OFF_STAMP) & 3u) == STAMP_LIVE &&
         !same_key(l, s, key);
  }
  return k;
}
