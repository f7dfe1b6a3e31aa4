/* Fuzz target: the snapshot entry decoder (src/snapshot_format.c).
   Byte 0 and 1 give the key and value sizes (0..255 each), the rest is the
   entry; byte 2 bit 0 asks to seal it (recompute its checksum) so that
   both verdicts are reached.  snap_entry_valid must accept exactly the
   entries snap_entry_encode makes of their key and value, and read no byte
   outside the entry. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "snapshot_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  size_t ks = data[0], vs = data[1];
  int seal = data[2] & 1;
  data += 3;
  size -= 3;
  uint64_t n = snap_entry_bytes(ks, vs);
  FUZZ_CHECK(n == ks + vs + SNAP_CHECK_BYTES);
  if (size < n) return 0;
  /* Exactly one entry on the heap, so a read past it is caught. */
  unsigned char *e = malloc(n), *made = malloc(n);
  memcpy(e, data, n);
  if (seal) snap_entry_encode(e, data, ks, data + ks, vs);
  int valid = snap_entry_valid(e, ks, vs);
  FUZZ_CHECK(valid == 0 || valid == 1);
  snap_entry_encode(made, e, ks, e + ks, vs);
  FUZZ_CHECK(valid == (memcmp(made, e, n) == 0));
  if (seal) FUZZ_CHECK(valid);
  FUZZ_CHECK(snap_entry_valid(made, ks, vs));
  free(e);
  free(made);
  return 0;
}
