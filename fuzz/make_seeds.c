/* Writes the seed corpus into fuzz/corpus/<target>/ (run by
   fuzz/make_seeds.sh): valid snapshots made by the library itself, and a
   few broken ones, each input laid out as its target reads it. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmadht.h"
#include "snapshot_format.h"

static const char *dir;

static void save(const char *target, const char *name, const void *a,
                 size_t na, const void *b, size_t nb) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s/%s", dir, target, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(a, 1, na, f) != na || (nb && fwrite(b, 1, nb, f) != nb) ||
      fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
}

/* A snapshot of n entries of 8-byte keys and 16-byte values, as
   rmadht_dump writes it; returns its bytes (caller frees). */
static unsigned char *snapshot(int n, size_t *len) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, 8, 16);
  cfg.bytes_per_rank = 1 << 20;
  rmadht *t;
  if (rmadht_create(MPI_COMM_SELF, &cfg, &t)) exit(1);
  for (int i = 0; i < n; i++) {
    unsigned char k[8] = {'k', 'e', 'y', (unsigned char)i}, v[16] = {0};
    snprintf((char *)v, sizeof v, "value %d", i);
    rmadht_write(t, k, v);
  }
  const char *tmp = "/tmp/rmadht-fuzz-seed.snap";
  if (rmadht_dump(t, tmp)) exit(1);
  rmadht_free(&t);
  FILE *f = fopen(tmp, "rb");
  unsigned char *buf = malloc(48 + (size_t)n * 32);
  *len = fread(buf, 1, 48 + (size_t)n * 32, f);
  fclose(f);
  remove(tmp);
  return buf;
}

static void restore_seeds(void) {
  const unsigned char raw = 0, repair_all = 7;
  size_t n0, n3, n12;
  unsigned char *s0 = snapshot(0, &n0), *s3 = snapshot(3, &n3),
                *s12 = snapshot(12, &n12);
  save("restore", "empty", &raw, 1, s0, n0);
  save("restore", "three", &raw, 1, s3, n3);
  save("restore", "twelve", &raw, 1, s12, n12);
  save("restore", "twelve-truncated", &repair_all, 1, s12, n12 - 5);
  save("restore", "three-tail", &repair_all, 1, s3, n3);
  s3[60] ^= 1; /* a flipped byte in the first entry */
  save("restore", "three-flipped", &raw, 1, s3, n3);
  save("restore", "short", &raw, 1, "RMADHTSN", 8);
  save("snap_header", "three", s3, 48, NULL, 0);
  save("snap_header", "empty", s0, 48, NULL, 0);
  struct snap_header h = {2, 0, 8, 16, 1};
  unsigned char b[48];
  snap_header_encode(&h, b);
  save("snap_header", "version2", b, 48, NULL, 0);
  h = (struct snap_header){1, 1, UINT64_MAX, 16, 1};
  snap_header_encode(&h, b);
  save("snap_header", "huge-key", b, 48, NULL, 0);
  free(s0);
  free(s3);
  free(s12);
}

static void entry_seeds(void) {
  unsigned char e[3 + 8 + 16 + 8] = {8, 16, 0};
  snap_entry_encode(e + 3, "key00001", 8, "value-of-key-001", 16);
  save("snap_entry", "valid", e, sizeof e, NULL, 0);
  e[5] ^= 0x40;
  save("snap_entry", "flipped", e, sizeof e, NULL, 0);
  unsigned char z[3 + 8] = {0, 0, 1};
  save("snap_entry", "empty-key-value", z, sizeof z, NULL, 0);
}

static void round_seed(const char *name, double x, double y, int digits,
                       int flags, double zero_below) {
  unsigned char b[18 + 8 + 16];
  memcpy(b, &x, 8);
  memcpy(b + 8, &y, 8);
  b[16] = (unsigned char)(signed char)digits;
  b[17] = (unsigned char)flags;
  memcpy(b + 18, &zero_below, 8);
  memcpy(b + 26, &y, 8);
  memcpy(b + 34, &x, 8);
  save("round_key", name, b, sizeof b, NULL, 0);
}

static void round_seeds(void) {
  round_seed("plain", 1.2345678, 1.2345679, 5, 0, 0);
  round_seed("log", 3.3e-5, 3.30001e-5, 5, 1, 0);
  round_seed("tie", 2.5, 0.125, 1, 0, 0);
  round_seed("zeros", 0.0, -0.0, 3, 2, 1e-12);
  round_seed("subnormal", 4.9e-324, 2.2e-310, 15, 0, 0);
  round_seed("huge", 1.7976931348623157e308, -1e300, 2, 1, 0);
  round_seed("nan-inf", NAN, INFINITY, 5, 0, 0);
  round_seed("digits0", 1.0, 2.0, 0, 0, 0);
  round_seed("digits16", 1.0, 2.0, 16, 0, 0);
  round_seed("digits-neg", 1.0, 2.0, -3, 1, 0);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s fuzz/corpus\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  MPI_Init(&argc, &argv);
  restore_seeds();
  entry_seeds();
  round_seeds();
  MPI_Finalize();
  return 0;
}
