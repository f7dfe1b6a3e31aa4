/*
 * Slot layout: the bytes of one table entry in a rank's window, and how a
 * reader decides what a copy of them holds.
 *
 *   offset  size  field
 *   0       4     claim   writers' atomic word (32-bit compare-and-swap)
 *   4       4     ver     the claim value the last complete write took
 *   8       8     stamp   write epoch << 2 | state (0 = never written)
 *   16      8     check   XXH3-64 of ver, stamp, key and value
 *   24      K     key
 *   24+K    V     value, then zero padding to a multiple of 8
 *
 * A slot is self-validating: whatever protocol wrote it, a copy taken at any
 * moment is either consistent (check matches) or recognisably torn.  That is
 * what lets lock-free readers, snapshots and the node-local path read
 * slots without locks.  claim is outside the checksum because it moves
 * independently: a writer bumps it atomically to own the slot, then writes
 * every other field with ver set to the claim it took, ver last (on the RMA
 * path a put of the rest, a flush, then a compare-and-swap of ver; on the
 * node-local path stores that end with a release store of ver).
 *
 * Slots come in groups of SLOT_GROUP contiguous slots; a key has two
 * candidate groups on its owner rank (see place.c).  Per-group words sit in
 * front of all groups, the region rounded to 64 bytes so groups start on a
 * cache line:
 *   - fine-lock mode: one 32-bit lock word per group;
 *   - lock-free mode: SLOT_GROUP 32-bit tags per group, tag j being the
 *     key fingerprint of slot j (place.c), 0 when it holds no key.  A
 *     node-local reader scans 32 contiguous bytes instead of 16 slots and
 *     copies only the slots whose tag matches; a single RMA read fetches
 *     both groups' tags with the key's two home slots (lockfree.c).  Tags
 *     are hints: the slot's checksum and key still decide, so a tag that
 *     is stale for a moment costs a miss during a write, never a wrong
 *     value.  A writer's tag lands before its ver says the write is done.
 */
#ifndef RMADHT_SLOT_H
#define RMADHT_SLOT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SLOT_GROUP 8         /* slots per candidate group */
#define SLOT_HEADER 24       /* bytes before the key */
#define SLOT_OFF_CLAIM 0
#define SLOT_OFF_VER 4
#define SLOT_OFF_STAMP 8
#define SLOT_OFF_CHECK 16

/* States kept in the two low bits of stamp. */
#define STAMP_LIVE 1u
#define STAMP_TOMB 2u

/* What a copy of a slot holds, judged on its content alone. */
enum slot_kind {
  SLOT_EMPTY, /* never completely written (stamp 0) */
  SLOT_LIVE,  /* consistent, holds a key and value */
  SLOT_TOMB,  /* consistent, removed: free for writers, skipped by reads */
  SLOT_TORN   /* checksum mismatch: a write landed partly */
};

struct slot_layout {
  size_t key_size, value_size;
  size_t slot_size;     /* header + key + value, rounded up to 8 */
  size_t group_bytes;   /* SLOT_GROUP * slot_size */
  uint64_t groups;      /* groups per rank */
  size_t front_bytes;   /* per-group words in front of the groups */
  size_t window_bytes;  /* front_bytes + groups * group_bytes */
};

/* Per-group words in front of the groups, for slot_layout_init. */
#define FRONT_NONE 0
#define FRONT_LOCK 1          /* fine-lock mode */
#define FRONT_TAGS SLOT_GROUP /* lock-free mode */

/* Computes the layout of a window of at most bytes_per_rank bytes with
   front_words 32-bit words per group in front.  Returns 0, or
   RMADHT_ERR_SIZE when sizes overflow or not one group fits. */
int slot_layout_init(struct slot_layout *l, size_t key_size,
                     size_t value_size, size_t bytes_per_rank,
                     unsigned front_words);

/* Window displacement of group g's first slot, of its lock word and of
   its tags. */
static inline uint64_t slot_group_disp(const struct slot_layout *l,
                                       uint64_t g) {
  return l->front_bytes + g * l->group_bytes;
}
static inline uint64_t slot_lock_disp(uint64_t g) { return g * 4u; }
static inline uint64_t slot_tags_disp(uint64_t g) {
  return g * (4u * SLOT_GROUP);
}

static inline uint32_t slot_get32(const unsigned char *s, size_t off) {
  uint32_t v;
  memcpy(&v, s + off, 4);
  return v;
}
static inline uint64_t slot_get64(const unsigned char *s, size_t off) {
  uint64_t v;
  memcpy(&v, s + off, 8);
  return v;
}
static inline const unsigned char *slot_key(const unsigned char *s) {
  return s + SLOT_HEADER;
}
static inline const unsigned char *slot_value(const struct slot_layout *l,
                                              const unsigned char *s) {
  return s + SLOT_HEADER + l->key_size;
}
static inline uint64_t slot_epoch(const unsigned char *s) {
  return slot_get64(s, SLOT_OFF_STAMP) >> 2;
}

/* The claim value after c; never 0, which marks a slot never claimed. */
static inline uint32_t slot_next_claim(uint32_t c) {
  return c + 1u ? c + 1u : 1u;
}

/* A writer owns the slot (claim moved on) but its put has not landed: the
   content may still be the consistent previous entry, or torn. */
static inline int slot_inflight(const unsigned char *s) {
  return slot_get32(s, SLOT_OFF_CLAIM) != slot_get32(s, SLOT_OFF_VER);
}

uint64_t slot_checksum(const struct slot_layout *l, const unsigned char *s);
enum slot_kind slot_classify(const struct slot_layout *l,
                             const unsigned char *s);

/* Whether a lock-free writer may claim the slot of this copy now: never
   claimed, or its last write done (claim == ver and the copy consistent).
   Not while another write to it is in flight or landing, whose remaining
   bytes would otherwise mix with ours and could leave it torn for good
   (docs/explanation/lockfree-protocol.md).  A claimed slot with stamp 0 is a
   first write whose ver
   has landed before its stamp: landing, not empty. */
static inline int slot_claimable(const struct slot_layout *l,
                                 const unsigned char *s) {
  if (slot_get32(s, SLOT_OFF_CLAIM) == 0) return 1;
  if (slot_inflight(s)) return 0;
  enum slot_kind k = slot_classify(l, s);
  return k == SLOT_LIVE || k == SLOT_TOMB;
}

/* Writes a complete slot image into s: claim and ver set to claim, the
   stamp from epoch and state, key, value (NULL: zeros, for tombstones) and
   the checksum. */
void slot_fill(const struct slot_layout *l, unsigned char *s, uint32_t claim,
               uint64_t epoch, unsigned state, const void *key,
               const void *value);

#endif
