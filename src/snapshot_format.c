/* Encoding and checking snapshot bytes; the layout is in snapshot_format.h. */
#include "snapshot_format.h"

#include <string.h>
#include <xxhash.h>

#include "rmadht.h"

/* Byte by byte, so the file is little-endian on any host and no field
   needs alignment. */
static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

enum {
  OFF_MAGIC = 0,
  OFF_VERSION = 8,
  OFF_HASH = 12,
  OFF_KEY = 16,
  OFF_VALUE = 24,
  OFF_COUNT = 32,
  OFF_CHECK = 40
};

void snap_header_encode(const struct snap_header *h,
                        unsigned char out[SNAP_HEADER_BYTES]) {
  memcpy(out + OFF_MAGIC, SNAP_MAGIC, 8);
  put_le(out + OFF_VERSION, h->version, 4);
  put_le(out + OFF_HASH, h->hash, 4);
  put_le(out + OFF_KEY, h->key_size, 8);
  put_le(out + OFF_VALUE, h->value_size, 8);
  put_le(out + OFF_COUNT, h->count, 8);
  put_le(out + OFF_CHECK, XXH3_64bits(out, OFF_CHECK), 8);
}

int snap_header_decode(const unsigned char in[SNAP_HEADER_BYTES],
                       struct snap_header *h) {
  if (memcmp(in + OFF_MAGIC, SNAP_MAGIC, 8) != 0) return RMADHT_ERR_FORMAT;
  if (get_le(in + OFF_CHECK, 8) != XXH3_64bits(in, OFF_CHECK))
    return RMADHT_ERR_FORMAT;
  h->version = (uint32_t)get_le(in + OFF_VERSION, 4);
  h->hash = (uint32_t)get_le(in + OFF_HASH, 4);
  h->key_size = get_le(in + OFF_KEY, 8);
  h->value_size = get_le(in + OFF_VALUE, 8);
  h->count = get_le(in + OFF_COUNT, 8);
  if (h->version != SNAP_VERSION) return RMADHT_ERR_FORMAT;
  if (h->hash != SNAP_HASH_XXH3 && h->hash != SNAP_HASH_CUSTOM)
    return RMADHT_ERR_FORMAT;
  return RMADHT_OK;
}

uint64_t snap_entry_bytes(uint64_t key_size, uint64_t value_size) {
  uint64_t kv = key_size + value_size;
  if (kv < key_size || kv + SNAP_CHECK_BYTES < kv) return 0;
  return kv + SNAP_CHECK_BYTES;
}

void snap_entry_encode(unsigned char *entry, const void *key, size_t key_size,
                       const void *value, size_t value_size) {
  memcpy(entry, key, key_size);
  memcpy(entry + key_size, value, value_size);
  put_le(entry + key_size + value_size,
         XXH3_64bits(entry, key_size + value_size), 8);
}

int snap_entry_valid(const unsigned char *entry, size_t key_size,
                     size_t value_size) {
  size_t kv = key_size + value_size;
  return get_le(entry + kv, 8) == XXH3_64bits(entry, kv);
}
