#include "local_table.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "internal.h"
#include "search.h"

struct local_table {
  struct slot_layout l;
  unsigned char *mem;
  unsigned char *cand, *image;
  uint64_t clock;
};

struct local_table *local_create(size_t key_size, size_t value_size,
                                 size_t bytes) {
  struct local_table *t = calloc(1, sizeof *t);
  if (!t || slot_layout_init(&t->l, key_size, value_size, bytes, FRONT_TAGS)) {
    free(t);
    return NULL;
  }
  t->mem = calloc(1, t->l.window_bytes);
  t->cand = malloc(2 * t->l.group_bytes);
  t->image = malloc(t->l.slot_size);
  if (!t->mem || !t->cand || !t->image) {
    local_free(t);
    return NULL;
  }
  /* Write every page now, as rmadht_create does with its window, so the
     timed phases do not pay page faults.  Volatile, because GCC turns a
     malloc and a memset to zero into a calloc, which leaves fresh pages
     unmapped: measured, a third of the write phase went to faults. */
  for (size_t at = 0; at < t->l.window_bytes; at += 4096)
    ((volatile unsigned char *)t->mem)[at] = 0;
  return t;
}

void local_free(struct local_table *t) {
  if (!t) return;
  free(t->mem);
  free(t->cand);
  free(t->image);
  free(t);
}

/* The copy of both candidate groups a writer decides on. */
static void fetch(struct local_table *t, const void *key, struct place *p) {
  place_from_hash(XXH3_64bits(key, t->l.key_size), 1, t->l.groups, p);
  for (int g = 0; g < p->ngroups; g++)
    memcpy(t->cand + (size_t)g * t->l.group_bytes,
           t->mem + slot_group_disp(&t->l, p->group[g]), t->l.group_bytes);
}

/* As the node-local path reads: copy the slots whose tag matches, judge
   the copies. */
int local_read(struct local_table *t, const void *key, void *value) {
  struct place p;
  place_from_hash(XXH3_64bits(key, t->l.key_size), 1, t->l.groups, &p);
  const unsigned char *group[2], *tags[2];
  for (int g = 0; g < p.ngroups; g++) {
    group[g] = t->mem + slot_group_disp(&t->l, p.group[g]);
    tags[g] = t->mem + slot_tags_disp(p.group[g]);
  }
  int k = search_gather(&t->l, group, tags, p.ngroups, p.tag, t->cand);
  int c = search_key(&t->l, t->cand, k, key, -1);
  if (c < 0) return RMADHT_NOT_FOUND;
  memcpy(value, slot_value(&t->l, t->cand + (size_t)c * t->l.slot_size),
         t->l.value_size);
  return RMADHT_OK;
}

int local_write(struct local_table *t, const void *key, const void *value) {
  struct place p;
  fetch(t, key, &p);
  enum choice_kind kind;
  uint64_t top;
  int home[2] = {place_home(&p, 0), place_home(&p, 1)};
  int c = choose_slot(&t->l, t->cand, p.ngroups, home, key, &kind, &top);
  if (top > t->clock) t->clock = top;
  unsigned char *slot = t->mem + slot_group_disp(&t->l, p.group[c / SLOT_GROUP]) +
                        (size_t)(c % SLOT_GROUP) * t->l.slot_size;
  /* The claim, as a plain compare-and-set. */
  uint32_t seen = slot_get32(t->cand + (size_t)c * t->l.slot_size, SLOT_OFF_CLAIM);
  if (slot_get32(slot, SLOT_OFF_CLAIM) != seen) return RMADHT_ERR_CONTENDED;
  slot_fill(&t->l, t->image, slot_next_claim(seen), ++t->clock, STAMP_LIVE,
            key, value);
  memcpy(slot, t->image, t->l.slot_size);
  memcpy(t->mem + slot_tags_disp(p.group[c / SLOT_GROUP]) +
             4u * (size_t)(c % SLOT_GROUP),
         &p.tag, 4);
  return kind == CHOICE_EVICT ? RMADHT_EVICTED : RMADHT_OK;
}
