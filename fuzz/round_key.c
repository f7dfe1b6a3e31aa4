/* Fuzz target: the cache's key rounding and encoding (round.c).
   Input: two doubles x and y, a digit count as a signed byte (in range or
   not), a flags byte (bit 0: log10 mode, bit 1: use the third double as the
   zero floor), and up to 4 more doubles for a row.  Checked against an
   oracle that shares no code with round.c: printf's correctly rounded %e
   digits (C11 7.21.6.1). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "round.h"

struct key {
  unsigned xclass, log, qclass;
  int exp;
  uint64_t sig;
};

static struct key parse(const unsigned char *b) {
  struct key k;
  k.xclass = b[0] & 3u;
  k.log = (b[0] >> 2) & 1u;
  k.qclass = (b[0] >> 3) & 3u;
  FUZZ_CHECK((b[0] >> 5) == 0 && k.xclass != 3 && k.qclass != 3);
  k.exp = (int16_t)(uint16_t)(b[1] | b[2] << 8);
  k.sig = 0;
  for (int i = 0; i < 7; i++) k.sig |= (uint64_t)b[3 + i] << (8 * i);
  return k;
}

static uint64_t pow10u(int d) {
  uint64_t p = 1;
  while (d--) p *= 10;
  return p;
}

/* The decimal printf rounds a > 0 to: sig * 10^exp, digits digits. */
static void oracle(double a, int digits, uint64_t *sig, int *exp) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.*e", digits - 1, a);
  char *e = strchr(buf, 'e');
  FUZZ_CHECK(e);
  uint64_t s = 0;
  for (char *c = buf; c < e; c++)
    if (*c >= '0' && *c <= '9') s = s * 10 + (uint64_t)(*c - '0');
  *sig = s;
  *exp = atoi(e + 1) - (digits - 1);
}

/* Encodes into a buffer of exactly ROUND_KEY_BYTES on the heap, filled
   with a marker first, so that a write past it or a failing call that
   writes anyway are both caught. */
static int encode(double x, int digits, int lg, double zb,
                  unsigned char out[ROUND_KEY_BYTES]) {
  unsigned char *b = malloc(ROUND_KEY_BYTES);
  memset(b, 0xA5, ROUND_KEY_BYTES);
  int rc = round_encode(x, digits, lg, zb, b);
  FUZZ_CHECK(rc == 0 || rc == -1);
  if (rc)
    for (int i = 0; i < ROUND_KEY_BYTES; i++) FUZZ_CHECK(b[i] == 0xA5);
  memcpy(out, b, ROUND_KEY_BYTES);
  free(b);
  return rc;
}

static void check_one(double x, int digits, int lg, double zb,
                      unsigned char key[ROUND_KEY_BYTES]) {
  int rc = encode(x, digits, lg, zb, key);
  int ok = isfinite(x) && digits >= 1 && digits <= ROUND_MAX_DIGITS;
  FUZZ_CHECK(rc == (ok ? 0 : -1));
  if (rc) return;
  unsigned char again[ROUND_KEY_BYTES];
  FUZZ_CHECK(encode(x, digits, lg, zb, again) == 0);
  FUZZ_CHECK(memcmp(key, again, ROUND_KEY_BYTES) == 0);

  struct key k = parse(key);
  double a = fabs(x);
  unsigned xclass = (a == 0 || a < zb) ? 0 : x > 0 ? 1 : 2;
  FUZZ_CHECK(k.xclass == xclass && k.log == (lg != 0));
  /* -x differs only in the sign of x (and of q in raw mode). */
  FUZZ_CHECK(encode(-x, digits, lg, zb, again) == 0);
  struct key m = parse(again);
  FUZZ_CHECK(m.exp == k.exp && m.sig == k.sig && m.log == k.log);
  FUZZ_CHECK(m.xclass == (xclass == 0 ? 0 : 3 - xclass));
  FUZZ_CHECK(m.qclass == (lg || k.qclass == 0 ? k.qclass : 3 - k.qclass));
  if (xclass == 0) {
    FUZZ_CHECK(k.qclass == 0 && k.sig == 0 && k.exp == 0);
    return;
  }
  double q = lg ? log10(a) : x;
  FUZZ_CHECK(k.qclass == (q == 0 ? 0u : q > 0 ? 1u : 2u));
  if (k.qclass == 0) {
    FUZZ_CHECK(k.sig == 0 && k.exp == 0);
    return;
  }
  FUZZ_CHECK(k.sig >= pow10u(digits - 1) && k.sig < pow10u(digits));
  uint64_t sig;
  int exp;
  oracle(fabs(q), digits, &sig, &exp);
  FUZZ_CHECK(k.sig == sig && k.exp == exp);
  /* Idempotent in raw mode: the rounded decimal, read back as a double
     (exact enough at <= 15 digits in the normal range), keys the same. */
  if (!lg) {
    char buf[64];
    snprintf(buf, sizeof buf, "%s%llue%d", x < 0 ? "-" : "",
             (unsigned long long)k.sig, k.exp);
    double r = strtod(buf, NULL);
    if (isfinite(r) && fabs(r) >= DBL_MIN && !(fabs(r) < zb)) {
      FUZZ_CHECK(encode(r, digits, lg, zb, again) == 0);
      FUZZ_CHECK(memcmp(key, again, ROUND_KEY_BYTES) == 0);
    }
  }
}

static double get_double(const uint8_t *p) {
  double d;
  memcpy(&d, p, sizeof d);
  return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 18) return 0;
  double x = get_double(data), y = get_double(data + 8);
  int digits = (int8_t)data[16];
  int lg = data[17] & 1;
  double zb = 0;
  size_t at = 18;
  if ((data[17] & 2) && size >= at + 8) {
    zb = get_double(data + at);
    at += 8;
  }
  unsigned char kx[ROUND_KEY_BYTES], ky[ROUND_KEY_BYTES], kz[ROUND_KEY_BYTES];
  check_one(x, digits, lg, zb, kx);
  check_one(y, digits, lg, zb, ky);
  /* 0.0 and -0.0 alike. */
  if (x == 0) {
    check_one(signbit(x) ? 0.0 : -0.0, digits, lg, zb, kz);
    if (digits >= 1 && digits <= ROUND_MAX_DIGITS)
      FUZZ_CHECK(memcmp(kx, kz, ROUND_KEY_BYTES) == 0);
  }
  /* Two inputs key alike exactly when they round alike. */
  if (isfinite(x) && isfinite(y) && digits >= 1 &&
      digits <= ROUND_MAX_DIGITS) {
    double ax = fabs(x), ay = fabs(y);
    int zx = ax == 0 || ax < zb, zy = ay == 0 || ay < zb;
    int same_class = zx == zy && (zx || (x > 0) == (y > 0));
    int same = same_class;
    if (same && !zx) {
      double qx = lg ? log10(ax) : x, qy = lg ? log10(ay) : y;
      uint64_t sx = 0, sy = 0;
      int ex = 0, ey = 0;
      if (qx != 0) oracle(fabs(qx), digits, &sx, &ex);
      if (qy != 0) oracle(fabs(qy), digits, &sy, &ey);
      same = (qx == 0) == (qy == 0) && (qx > 0) == (qy > 0) && sx == sy &&
             ex == ey;
    }
    FUZZ_CHECK(same == (memcmp(kx, ky, ROUND_KEY_BYTES) == 0));
  }
  /* A row keys as its inputs one by one; any bad input fails the row. */
  size_t n = (size - at) / 8;
  if (n > 4) n = 4;
  if (n) {
    double row[4];
    int dg[4];
    unsigned char lgs[4];
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
      row[i] = get_double(data + at + 8 * i);
      dg[i] = digits;
      lgs[i] = (unsigned char)lg;
      bad |= !isfinite(row[i]);
    }
    bad |= digits < 1 || digits > ROUND_MAX_DIGITS;
    unsigned char *key = malloc(n * ROUND_KEY_BYTES);
    int rc = round_encode_row(row, n, dg, lgs, zb, key);
    FUZZ_CHECK(rc == (bad ? -1 : 0));
    for (size_t i = 0; !bad && i < n; i++) {
      FUZZ_CHECK(encode(row[i], digits, lg, zb, kz) == 0);
      FUZZ_CHECK(memcmp(key + i * ROUND_KEY_BYTES, kz, ROUND_KEY_BYTES) == 0);
    }
    free(key);
  }
  return 0;
}
