/*
 * The snapshot file format: a fixed header followed by entries, all
 * integers little-endian whatever the machine, so that a file moves between
 * machines and other tools can read it (docs/reference/snapshot-format.md has
 * the table).
 *
 *   header, 48 bytes
 *   offset  size  field
 *   0       8     magic        "RMADHTSN"
 *   8       4     version      SNAP_VERSION
 *   12      4     hash         0: XXH3-64 placement, 1: a custom hash
 *   16      8     key_size     bytes
 *   24      8     value_size   bytes
 *   32      8     count        entries that follow
 *   40      8     check        XXH3-64 of bytes 0..39
 *
 *   entry i at 48 + i * (key_size + value_size + 8)
 *   0       K     key
 *   K       V     value
 *   K+V     8     check        XXH3-64 of key and value
 *
 * The file is exactly 48 + count * (K + V + 8) bytes long.  Entries are in
 * no particular order and hold each key once.  The hash identity is a
 * record, not a constraint: restore re-hashes every key with the receiving
 * table's hash.
 */
#ifndef RMADHT_SNAPSHOT_FORMAT_H
#define RMADHT_SNAPSHOT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define SNAP_MAGIC "RMADHTSN" /* 8 bytes, no terminator in the file */
#define SNAP_VERSION 1u
#define SNAP_HEADER_BYTES 48
#define SNAP_CHECK_BYTES 8

enum snap_hash { SNAP_HASH_XXH3 = 0, SNAP_HASH_CUSTOM = 1 };

struct snap_header {
  uint32_t version;
  uint32_t hash; /* enum snap_hash */
  uint64_t key_size, value_size, count;
};

/* Writes the header's bytes, magic and checksum included. */
void snap_header_encode(const struct snap_header *h,
                        unsigned char out[SNAP_HEADER_BYTES]);

/* Reads and checks a header: RMADHT_OK, or RMADHT_ERR_FORMAT when the
   magic, checksum, version or hash identity is wrong.  The sizes and count
   are for the caller to compare with its table and the file length. */
int snap_header_decode(const unsigned char in[SNAP_HEADER_BYTES],
                       struct snap_header *h);

/* Bytes of one entry, 0 when the sizes overflow. */
uint64_t snap_entry_bytes(uint64_t key_size, uint64_t value_size);

/* Fills one entry from a key and a value (which may sit apart, as in a
   slot or in two batch arrays). */
void snap_entry_encode(unsigned char *entry, const void *key, size_t key_size,
                       const void *value, size_t value_size);

/* Whether an entry's checksum matches its key and value. */
int snap_entry_valid(const unsigned char *entry, size_t key_size,
                     size_t value_size);

#endif
