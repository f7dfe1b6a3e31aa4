/* Fuzz target: the snapshot header decoder (src/snapshot_format.c).
   The first 48 bytes are decoded twice: as they come, where nearly every
   input fails the checksum, and sealed (checksum recomputed), so that the
   fuzzer reaches the field checks.  A header that decodes must encode back
   to the same bytes; one that does not must say RMADHT_ERR_FORMAT. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "fuzz_check.h"
#include "rmadht.h"
#include "snapshot_format.h"

static void decode(const unsigned char *in) {
  struct snap_header h;
  int rc = snap_header_decode(in, &h);
  FUZZ_CHECK(rc == RMADHT_OK || rc == RMADHT_ERR_FORMAT);
  if (rc != RMADHT_OK) return;
  FUZZ_CHECK(memcmp(in, SNAP_MAGIC, 8) == 0);
  FUZZ_CHECK(h.version == SNAP_VERSION);
  FUZZ_CHECK(h.hash == SNAP_HASH_XXH3 || h.hash == SNAP_HASH_CUSTOM);
  unsigned char again[SNAP_HEADER_BYTES];
  snap_header_encode(&h, again);
  FUZZ_CHECK(memcmp(again, in, SNAP_HEADER_BYTES) == 0);
  /* The entry size restore derives from the header: exact, or 0 when the
     sizes overflow, never a wrapped small number. */
  uint64_t e = snap_entry_bytes(h.key_size, h.value_size);
  if (h.value_size <= UINT64_MAX - SNAP_CHECK_BYTES &&
      h.key_size <= UINT64_MAX - SNAP_CHECK_BYTES - h.value_size)
    FUZZ_CHECK(e == h.key_size + h.value_size + SNAP_CHECK_BYTES);
  else
    FUZZ_CHECK(e == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < SNAP_HEADER_BYTES) return 0;
  /* Exactly a header's bytes on the heap, so a read past it is caught. */
  unsigned char *in = malloc(SNAP_HEADER_BYTES);
  memcpy(in, data, SNAP_HEADER_BYTES);
  decode(in);
  uint64_t check = XXH3_64bits(in, 40);
  for (int i = 0; i < 8; i++) in[40 + i] = (unsigned char)(check >> (8 * i));
  decode(in);
  free(in);
  return 0;
}
