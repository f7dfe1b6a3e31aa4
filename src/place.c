/*
 * Addressing: from a key to its owner rank and two candidate groups.
 *
 * The MPI-DHT of Lübke et al. 2024 (sect. 3.1) derived several bucket
 * indices from overlapping bytes of one hash, so a key's candidates were
 * correlated and keys collided at low load.
 * Here the owner comes from the high 32 bits of the hash, the first group
 * from the low 32 bits and the second group from a rehash of the whole
 * hash, each reduced to its range by a multiply-shift (no modulo bias worth
 * the name, no division).  Two independent choices with groups of eight
 * slots hold a half-full table without losing a key (docs/explanation/design.md).
 */
#include <xxhash.h>

#include "internal.h"

static inline uint64_t reduce32(uint32_t x, uint64_t range) {
  return ((uint64_t)x * range) >> 32;
}

uint64_t rmadht_hash(const rmadht *t, const void *key) {
  size_t len = t->layout.key_size;
  return t->hash ? t->hash(key, len, t->hash_arg) : XXH3_64bits(key, len);
}

void place_from_hash(uint64_t h, int nranks, uint64_t groups,
                     struct place *p) {
  p->rank = (int)reduce32((uint32_t)(h >> 32), (uint64_t)nranks);
  p->group[0] = reduce32((uint32_t)h, groups);
  /* A user hash may be weak in its low bits: derive the second choice from
     all 64 bits through xxHash, and never let it equal the first.  The
     fingerprint takes the rehash's other half, which no choice uses, so
     keys sharing a group still differ in it. */
  uint64_t h2 = XXH3_64bits_withSeed(&h, sizeof h, UINT64_C(0x5eed));
  p->tag = (uint32_t)(h2 >> 32) | 1u;
  if (groups == 1) {
    p->ngroups = 1;
    p->group[1] = p->group[0];
    return;
  }
  p->group[1] = (p->group[0] + 1 + reduce32((uint32_t)h2, groups - 1)) % groups;
  p->ngroups = 2;
}

void rmadht_place(const rmadht *t, const void *key, struct place *p) {
  place_from_hash(rmadht_hash(t, key), t->nranks, t->layout.groups, p);
}
