/*
 * Reading a copy of a key's candidate slots: where the key is (readers) and
 * where a write should go (writers).  Pure functions of the copy, shared by
 * every protocol and by the unit tests.
 */
#ifndef RMADHT_SEARCH_H
#define RMADHT_SEARCH_H

#include "slot.h"

#define SEARCH_TORN (-2) /* the key may be there, but its slot is torn */
#define SEARCH_NONE (-1)

/* Index of the newest consistent live slot holding key among nslots
   candidates, other than slot skip (-1: none), SEARCH_TORN if none but a
   slot with the key's bytes failed its checksum, else SEARCH_NONE. */
int search_key(const struct slot_layout *l, const unsigned char *cand,
               int nslots, const void *key, int skip);

/* The candidates (g * SLOT_GROUP + j) of ngroups groups whose tag, in
   tags[g] (slot.h), is tag; returns how many, at most 2 * SLOT_GROUP. */
int search_tags(const unsigned char *const *tags, int ngroups, uint32_t tag,
                int *hits);

/* Candidate hit (g * SLOT_GROUP + j) of search_tags in the groups group. */
static inline const unsigned char *search_hit_slot(
    const struct slot_layout *l, const unsigned char *const *group, int hit) {
  return group[hit / SLOT_GROUP] + (size_t)(hit % SLOT_GROUP) * l->slot_size;
}

/* Copies to dst the slots of ngroups groups whose tag is tag; returns how
   many.  group[g] points to a group's SLOT_GROUP slots and tags[g] to its
   SLOT_GROUP tags (slot.h), in live memory that writers may be changing:
   tags are only hints, search_key on the copies decides. */
int search_gather(const struct slot_layout *l,
                  const unsigned char *const *group,
                  const unsigned char *const *tags, int ngroups, uint32_t tag,
                  unsigned char *dst);

/* Whether a writer may take slot s as free: never claimed, or a
   completed tombstone. */
int search_free(const struct slot_layout *l, const unsigned char *s);

/* The largest epoch among nslots candidates, whatever their state: a
   writer's Lamport clock must pass it. */
uint64_t search_top_epoch(const struct slot_layout *l,
                          const unsigned char *cand, int nslots);

enum choice_kind {
  CHOICE_UPDATE, /* the key's own slot */
  CHOICE_FREE,   /* never used, or removed */
  CHOICE_EVICT   /* the least recently written other key */
};

/* The group a write of a new key takes among ngroups (at most 2), given
   each group's free slots and whether its home slot is free: a group
   whose home is free first, then the one with more free slots (the first
   on a tie); -1 when no group has a free slot.  choose_slot's rule, also
   applied by a reader that knows the groups by their tags (lockfree.c). */
int search_pick_group(int ngroups, const int *nfree, const int *home_free);

/* Picks the slot a write of key should take among ngroups groups of
   SLOT_GROUP candidates: the key's newest slot; else a free slot, the
   key's home slot in a group (home[g], a candidate index) if one is free,
   in the group with more free slots (two choices keep groups balanced);
   else the intact slot with the oldest epoch; else, last, a slot another
   writer holds (in flight or torn).  Also returns the largest epoch seen,
   for the writer's Lamport clock. */
int choose_slot(const struct slot_layout *l, const unsigned char *cand,
                int ngroups, const int *home, const void *key,
                enum choice_kind *kind, uint64_t *max_epoch);

/* For an update inserting an absent key: the first candidate never
   claimed (claim 0), in candidate order, or SEARCH_NONE.  Slots are claimed
   once and never become unclaimed again, so two updaters that each saw the
   key absent cannot both succeed in taking different such slots: the one
   that reads later sees the other's slot claimed (see protocol.c). */
int search_unclaimed(const struct slot_layout *l, const unsigned char *cand,
                     int nslots);

/* Whether any of nslots candidates is being written: claimed but not
   claimable (slot.h), that is in flight, torn, or a first write whose ver
   landed before its stamp. */
int search_busy(const struct slot_layout *l, const unsigned char *cand,
                int nslots);

/* The number of candidates whose state says live and whose key is not
   key (the checksum unchecked: this only counts, for write_probes). */
int search_others(const struct slot_layout *l, const unsigned char *cand,
                  int nslots, const void *key);

#endif
