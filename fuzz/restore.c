/* Fuzz target: rmadht_restore on a whole file (src/snapshot_restore.c).
   MPI is started once, as a singleton, with one table of 8-byte keys and
   16-byte values holding a few entries.  Each input becomes the file; byte
   0 chooses how much of it to repair first, so that the fuzzer gets past
   the checksums to the structure: bit 0 sets the header's key and value
   sizes to the table's, bit 1 recomputes the header checksum, bit 2 every
   whole entry's checksum.  Then either restore succeeds, the file is a
   valid snapshot by an independent reading, and every key reads back the
   value of its last entry; or it returns RMADHT_ERR_FORMAT, the file is
   not valid, and the table is as it was (no write made, the entries still
   there). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "fuzz_check.h"
#include "rmadht.h"

enum { K = 8, V = 16, E = K + V + 8, H = 48, PREFILL = 16 };

static rmadht *table;
static char path[64];

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}
static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void prefill_key(int i, unsigned char *k, unsigned char *v) {
  memset(k, 0, K);
  memset(v, 0, V);
  memcpy(k, "pre", 3);
  k[7] = (unsigned char)i;
  v[0] = (unsigned char)(i * 7 + 1);
}

static void make_table(void) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, K, V);
  cfg.bytes_per_rank = 1 << 20;
  FUZZ_CHECK(rmadht_create(MPI_COMM_WORLD, &cfg, &table) == RMADHT_OK);
  for (int i = 0; i < PREFILL; i++) {
    unsigned char k[K], v[V];
    prefill_key(i, k, v);
    FUZZ_CHECK(rmadht_write(table, k, v) == RMADHT_OK);
  }
  FUZZ_CHECK(rmadht_flush(table) == RMADHT_OK);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  MPI_Init(NULL, NULL);
  snprintf(path, sizeof path, "/tmp/rmadht-fuzz-restore-%ld.snap",
           (long)getpid());
  make_table();
  return 0;
}

/* The format as docs/reference/snapshot-format.md states it, read without
   the library's code. */
static int file_valid(const unsigned char *f, size_t n) {
  if (n < H || memcmp(f, "RMADHTSN", 8) != 0) return 0;
  if (le(f + 40, 8) != XXH3_64bits(f, 40)) return 0;
  if (le(f + 8, 4) != 1 || le(f + 12, 4) > 1) return 0;
  if (le(f + 16, 8) != K || le(f + 24, 8) != V) return 0;
  if ((n - H) % E != 0 || le(f + 32, 8) != (n - H) / E) return 0;
  for (size_t at = H; at < n; at += E)
    if (le(f + at + K + V, 8) != XXH3_64bits(f + at, K + V)) return 0;
  return 1;
}

static void repair(unsigned char *f, size_t n, unsigned how) {
  if (n < H) return;
  if (how & 1) {
    put_le(f + 16, K, 8);
    put_le(f + 24, V, 8);
  }
  if (how & 2) put_le(f + 40, XXH3_64bits(f, 40), 8);
  if (how & 4)
    for (size_t at = H; at + E <= n; at += E)
      put_le(f + at + K + V, XXH3_64bits(f + at, K + V), 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  size_t n = size - 1;
  unsigned char *f = malloc(n ? n : 1);
  memcpy(f, data + 1, n);
  repair(f, n, data[0]);
  FILE *out = fopen(path, "wb");
  FUZZ_CHECK(out && fwrite(f, 1, n, out) == n && fclose(out) == 0);

  rmadht_stats before, after;
  rmadht_get_stats(table, &before);
  int rc = rmadht_restore(table, path);
  rmadht_get_stats(table, &after);
  int valid = file_valid(f, n);
  if (rc == RMADHT_OK) {
    FUZZ_CHECK(valid);
    /* Eviction is a legitimate outcome in a full group; 1 MiB holds these
       few hundred entries without one, so every key must be there. */
    FUZZ_CHECK(after.evictions == before.evictions);
    for (size_t at = H; at < n; at += E) {
      int last = 1;
      for (size_t later = at + E; later < n; later += E)
        if (memcmp(f + later, f + at, K) == 0) last = 0;
      if (!last) continue;
      unsigned char got[V];
      FUZZ_CHECK(rmadht_read(table, f + at, got) == RMADHT_OK);
      FUZZ_CHECK(memcmp(got, f + at + K, V) == 0);
    }
    /* Back to the prefilled table for the next input. */
    FUZZ_CHECK(rmadht_free(&table) == RMADHT_OK);
    make_table();
  } else {
    FUZZ_CHECK(rc == RMADHT_ERR_FORMAT);
    FUZZ_CHECK(!valid);
    FUZZ_CHECK(after.writes == before.writes &&
               after.removes == before.removes);
    for (int i = 0; i < PREFILL; i++) {
      unsigned char k[K], v[V], got[V];
      prefill_key(i, k, v);
      FUZZ_CHECK(rmadht_read(table, k, got) == RMADHT_OK);
      FUZZ_CHECK(memcmp(got, v, V) == 0);
    }
  }
  unlink(path);
  free(f);
  return 0;
}
