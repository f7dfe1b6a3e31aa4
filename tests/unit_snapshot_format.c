/* The snapshot byte layout: fields at the offsets
   docs/reference/snapshot-format.md gives, little-endian, and every header
   or entry change refused. */
#include <string.h>
#include <xxhash.h>

#include "check.h"
#include "rmadht.h"
#include "snapshot_format.h"

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void header(void) {
  struct snap_header h = {SNAP_VERSION, SNAP_HASH_CUSTOM, 24, 40,
                          UINT64_C(0x0102030405060708)};
  unsigned char b[SNAP_HEADER_BYTES];
  snap_header_encode(&h, b);
  CHECK(memcmp(b, "RMADHTSN", 8) == 0);
  CHECK(le(b + 8, 4) == 1 && le(b + 12, 4) == 1);
  CHECK(le(b + 16, 8) == 24 && le(b + 24, 8) == 40);
  CHECK(b[32] == 0x08 && b[39] == 0x01); /* little-endian count */
  CHECK(le(b + 40, 8) == XXH3_64bits(b, 40));

  struct snap_header d;
  CHECK_RC(snap_header_decode(b, &d), RMADHT_OK);
  CHECK(d.version == 1 && d.hash == 1 && d.key_size == 24 &&
        d.value_size == 40 && d.count == h.count);

  /* Any single flipped bit anywhere in the header is refused. */
  for (int i = 0; i < SNAP_HEADER_BYTES * 8; i++) {
    b[i / 8] ^= (unsigned char)(1u << (i % 8));
    CHECK_RC(snap_header_decode(b, &d), RMADHT_ERR_FORMAT);
    b[i / 8] ^= (unsigned char)(1u << (i % 8));
  }
  /* Other versions and unknown hash identities, correctly sealed. */
  h.version = 2;
  snap_header_encode(&h, b);
  CHECK_RC(snap_header_decode(b, &d), RMADHT_ERR_FORMAT);
  h.version = SNAP_VERSION;
  h.hash = 7;
  snap_header_encode(&h, b);
  CHECK_RC(snap_header_decode(b, &d), RMADHT_ERR_FORMAT);
}

static void entry(void) {
  enum { K = 5, V = 11 };
  CHECK(snap_entry_bytes(K, V) == K + V + 8);
  CHECK(snap_entry_bytes(UINT64_MAX, 1) == 0);
  CHECK(snap_entry_bytes(UINT64_MAX - 3, 0) == 0);
  unsigned char key[K] = "abcde", val[V] = "0123456789", e[K + V + 8];
  snap_entry_encode(e, key, K, val, V);
  CHECK(memcmp(e, key, K) == 0 && memcmp(e + K, val, V) == 0);
  CHECK(le(e + K + V, 8) == XXH3_64bits(e, K + V));
  CHECK(snap_entry_valid(e, K, V));
  for (int i = 0; i < (K + V + 8) * 8; i++) {
    e[i / 8] ^= (unsigned char)(1u << (i % 8));
    CHECK(!snap_entry_valid(e, K, V));
    e[i / 8] ^= (unsigned char)(1u << (i % 8));
  }
}

int main(void) {
  header();
  entry();
  return check_finish("unit_snapshot_format");
}
