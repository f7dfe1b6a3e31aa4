/* Slot layout and validation; the format is described in slot.h. */
#include "slot.h"

#include <xxhash.h>

#include "rmadht.h"

/* The front region for groups groups, rounded so that groups start on a
   cache line. */
static size_t front_size(uint64_t groups, unsigned front_words) {
  if (front_words == 0) return 0;
  return ((size_t)groups * 4u * front_words + 63) & ~(size_t)63;
}

int slot_layout_init(struct slot_layout *l, size_t key_size,
                     size_t value_size, size_t bytes_per_rank,
                     unsigned front_words) {
  size_t raw = SLOT_HEADER + key_size;
  if (raw < key_size || raw + value_size < raw || raw + value_size + 7 < raw)
    return RMADHT_ERR_SIZE;
  raw += value_size;
  l->key_size = key_size;
  l->value_size = value_size;
  l->slot_size = (raw + 7) & ~(size_t)7;
  if (l->slot_size > SIZE_MAX / SLOT_GROUP) return RMADHT_ERR_SIZE;
  l->group_bytes = SLOT_GROUP * l->slot_size;
  /* slot_size is a multiple of 8 up to SIZE_MAX / 8, so this cannot wrap. */
  size_t per_group = l->group_bytes + 4u * front_words;
  uint64_t groups = bytes_per_rank / per_group;
  if (groups > UINT32_MAX) groups = UINT32_MAX; /* placement uses 32 bits */
  while (groups > 0 &&
         front_size(groups, front_words) + groups * l->group_bytes >
             bytes_per_rank)
    groups--;
  if (groups == 0) return RMADHT_ERR_SIZE;
  l->groups = groups;
  l->front_bytes = front_size(groups, front_words);
  l->window_bytes = l->front_bytes + (size_t)groups * l->group_bytes;
  return RMADHT_OK;
}

uint64_t slot_checksum(const struct slot_layout *l, const unsigned char *s) {
  /* The header words seed the hash of key and value, so one pass covers
     everything but claim and the checksum itself. */
  uint64_t seed = slot_get64(s, SLOT_OFF_STAMP) ^
                  ((uint64_t)slot_get32(s, SLOT_OFF_VER) *
                   UINT64_C(0x9E3779B97F4A7C15));
  return XXH3_64bits_withSeed(s + SLOT_HEADER, l->key_size + l->value_size,
                              seed);
}

enum slot_kind slot_classify(const struct slot_layout *l,
                             const unsigned char *s) {
  if (slot_get64(s, SLOT_OFF_STAMP) == 0) return SLOT_EMPTY;
  if (slot_checksum(l, s) != slot_get64(s, SLOT_OFF_CHECK)) return SLOT_TORN;
  switch (slot_get64(s, SLOT_OFF_STAMP) & 3u) {
    case STAMP_LIVE: return SLOT_LIVE;
    case STAMP_TOMB: return SLOT_TOMB;
    default: return SLOT_TORN;
  }
}

void slot_fill(const struct slot_layout *l, unsigned char *s, uint32_t claim,
               uint64_t epoch, unsigned state, const void *key,
               const void *value) {
  uint64_t stamp = epoch << 2 | state;
  memcpy(s + SLOT_OFF_CLAIM, &claim, 4);
  memcpy(s + SLOT_OFF_VER, &claim, 4);
  memcpy(s + SLOT_OFF_STAMP, &stamp, 8);
  memcpy(s + SLOT_HEADER, key, l->key_size);
  if (value)
    memcpy(s + SLOT_HEADER + l->key_size, value, l->value_size);
  else
    memset(s + SLOT_HEADER + l->key_size, 0, l->value_size);
  size_t used = SLOT_HEADER + l->key_size + l->value_size;
  memset(s + used, 0, l->slot_size - used);
  uint64_t check = slot_checksum(l, s);
  memcpy(s + SLOT_OFF_CHECK, &check, 8);
}
