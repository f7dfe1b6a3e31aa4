/*
 * Rounding to significant digits and the key bytes built from it.  The
 * oracle for exactness is printf's %e, which glibc rounds exactly (ties to
 * even), and strtod, which converts decimals back exactly.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rmadht.h"
#include "round.h"

static void printf_round(double a, int digits, uint64_t *sig, int *exp) {
  char buf[64], *c;
  uint64_t s = 0;
  snprintf(buf, sizeof buf, "%.*e", digits - 1, a);
  for (c = buf; *c != 'e'; c++)
    if (*c >= '0' && *c <= '9') s = s * 10 + (uint64_t)(*c - '0');
  *sig = s;
  *exp = atoi(c + 1) - (digits - 1);
}

/* The double nearest sig * 10^exp. */
static double decimal(uint64_t sig, int exp) {
  char buf[64];
  snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)sig, exp);
  return strtod(buf, NULL);
}

static int same_round(double a, int digits, uint64_t sig, int exp) {
  uint64_t s;
  int e;
  round_decimal(a, digits, &s, &e);
  if (s != sig || e != exp)
    fprintf(stderr, "round(%.17g, %d) = %llue%d, expected %llue%d\n", a,
            digits, (unsigned long long)s, e, (unsigned long long)sig, exp);
  return s == sig && e == exp;
}

static int key_eq(double x, double y, int digits, int lg, double floor_) {
  unsigned char kx[ROUND_KEY_BYTES], ky[ROUND_KEY_BYTES];
  if (round_encode(x, digits, lg, floor_, kx) != 0) return 0;
  if (round_encode(y, digits, lg, floor_, ky) != 0) return 0;
  return memcmp(kx, ky, ROUND_KEY_BYTES) == 0;
}

/* Deterministic pseudo-random numbers, same on every run. */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double uniform(void) { return (double)(next() >> 11) * 0x1p-53; }

/* A positive double with a random mantissa and decimal exponent in
   [lo, hi]. */
static double random_magnitude(int lo, int hi) {
  int e = lo + (int)(next() % (uint64_t)(hi - lo + 1));
  return (1.0 + 9.0 * uniform()) * pow(10.0, e);
}

static void test_boundaries(void) {
  /* 9.99995 is stored as 9.99995000000000011..., above the midpoint, so it
     carries into the next decade; the double just below the midpoint does
     not. */
  CHECK(same_round(9.99995, 5, 10000, -3));
  CHECK(same_round(nextafter(9.99995, 0), 5, 99999, -4));
  CHECK(same_round(9.99994999, 5, 99999, -4));
  CHECK(same_round(99999.5, 5, 10000, 1));
  CHECK(same_round(99999.49, 5, 99999, 0));
  /* 2.675 is stored below the midpoint: 2.67, unlike a naive x*100. */
  CHECK(same_round(2.675, 3, 267, -2));
  /* Exact ties go to the even digit, as printf does. */
  CHECK(same_round(0.125, 2, 12, -2));
  CHECK(same_round(0.375, 2, 38, -2));
  CHECK(same_round(2.5, 1, 2, 0));
  CHECK(same_round(3.5, 1, 4, 0));
  CHECK(same_round(1.5, 1, 2, 0));
  /* The digits limits. */
  CHECK(same_round(1.0 / 3.0, 15, 333333333333333u, -15));
  CHECK(same_round(123456.0, 1, 1, 5));
}

static void test_decades(void) {
  for (int d = 1; d <= ROUND_MAX_DIGITS; d++) {
    uint64_t one = 1;
    for (int i = 1; i < d; i++) one *= 10;
    for (int e = -30; e <= 30; e++) {
      double p = decimal(1, e);
      CHECK(same_round(p, d, one, e - (d - 1)));
      /* Just below a power of ten rounds up to it at any digits. */
      CHECK(same_round(nextafter(p, 0), d, one, e - (d - 1)));
    }
  }
}

static void test_extremes(void) {
  CHECK(same_round(DBL_MAX, 5, 17977, 304));
  CHECK(same_round(DBL_MIN, 5, 22251, -312));
  CHECK(same_round(4.9406564584124654e-324, 3, 494, -326));
  CHECK(same_round(1e300, 7, 1000000, 294));
  CHECK(same_round(1.234567e-300, 4, 1235, -303));
  CHECK(same_round(1e23, 15, 100000000000000u, 9));
  unsigned char k[ROUND_KEY_BYTES];
  CHECK(round_encode(-DBL_MAX, 15, 0, 0, k) == 0 && (k[0] & 3) == 2);
  CHECK(round_encode(DBL_MAX, 15, 1, 0, k) == 0);
  CHECK(round_encode(4.9406564584124654e-324, 15, 1, 0, k) == 0);
}

/* Against printf's correctly rounded digits, in and out of the range of
   exact powers of ten, and just around the midpoints between two
   neighbouring results. */
static void test_against_printf(void) {
  int bad = 0;
  for (int i = 0; i < 200000; i++) {
    int d = 1 + (int)(next() % ROUND_MAX_DIGITS);
    double a = random_magnitude(-320, 307);
    if (!isfinite(a) || a == 0) continue;
    uint64_t s1, s2;
    int e1, e2;
    round_decimal(a, d, &s1, &e1);
    printf_round(a, d, &s2, &e2);
    bad += s1 != s2 || e1 != e2;
  }
  CHECK(bad == 0);
  bad = 0;
  for (int i = 0; i < 50000; i++) {
    int d = 1 + (int)(next() % ROUND_MAX_DIGITS);
    uint64_t s;
    int e;
    round_decimal(random_magnitude(-40, 40), d, &s, &e);
    /* The doubles on either side of sig + 1/2 units. */
    char buf[64];
    snprintf(buf, sizeof buf, "%llu5e%d", (unsigned long long)s, e - 1);
    double mid = strtod(buf, NULL);
    double around[4] = {nextafter(mid, 0), mid, nextafter(mid, INFINITY),
                        nextafter(nextafter(mid, 0), 0)};
    for (int j = 0; j < 4; j++) {
      uint64_t s1, s2;
      int e1, e2;
      round_decimal(around[j], d, &s1, &e1);
      printf_round(around[j], d, &s2, &e2);
      bad += s1 != s2 || e1 != e2;
    }
  }
  CHECK(bad == 0);
}

static void test_properties(void) {
  int bad_idem = 0, bad_half = 0;
  for (int i = 0; i < 100000; i++) {
    int d = 1 + (int)(next() % ROUND_MAX_DIGITS);
    int lg = (int)(next() & 1);
    double x = random_magnitude(-300, 300) * ((next() & 1) ? -1 : 1);
    unsigned char k1[ROUND_KEY_BYTES], k2[ROUND_KEY_BYTES];
    uint64_t s;
    int e;
    round_decimal(fabs(x), d, &s, &e);
    /* Idempotent: the rounded value rounds to itself. */
    double r = copysign(decimal(s, e), x);
    round_encode(x, d, 0, 0, k1);
    round_encode(r, d, 0, 0, k2);
    bad_idem += memcmp(k1, k2, ROUND_KEY_BYTES) != 0;
    /* Anything within half a unit of the last digit gives r's key.  Below
       the decade's first significand the unit is ten times smaller; the
       margin stays clear of the double nearest the midpoint. */
    double unit = decimal(1, e);
    int low_edge = s == (uint64_t)pow(10.0, d - 1);
    double t = (uniform() - 0.5) * (d == 15 ? 0.4 : 0.9);
    if (t < 0 && low_edge) t /= 10;
    double y = copysign(fabs(r) + t * unit, x);
    bad_half += !key_eq(r, y, d, 0, 0);
    /* In log10 mode: x, and 10 to the power of its rounded logarithm, give
       one key.  Past 12 digits the pow/log round trip itself can move a
       logarithm near 0 by more than half a unit. */
    if (lg && d <= 12) {
      double q = log10(fabs(x));
      round_decimal(fabs(q), d, &s, &e);
      double xr = copysign(pow(10.0, copysign(decimal(s, e), q)), x);
      round_encode(x, d, 1, 0, k1);
      round_encode(xr, d, 1, 0, k2);
      bad_idem += memcmp(k1, k2, ROUND_KEY_BYTES) != 0;
    }
  }
  CHECK(bad_idem == 0);
  CHECK(bad_half == 0);
}

static void test_signs_zero_floor(void) {
  unsigned char kp[ROUND_KEY_BYTES], kn[ROUND_KEY_BYTES], kz[ROUND_KEY_BYTES];
  static const unsigned char zero[ROUND_KEY_BYTES];
  /* 0.0 and -0.0 agree and encode as all zero bytes. */
  CHECK(key_eq(0.0, -0.0, 5, 0, 0));
  CHECK(round_encode(-0.0, 5, 0, 0, kz) == 0 &&
        memcmp(kz, zero, sizeof zero) == 0);
  /* Negatives keep their sign and nothing else changes. */
  CHECK(round_encode(3.14159, 4, 0, 0, kp) == 0);
  CHECK(round_encode(-3.14159, 4, 0, 0, kn) == 0);
  CHECK((kp[0] & 3) == 1 && (kn[0] & 3) == 2);
  CHECK(memcmp(kp + 1, kn + 1, ROUND_KEY_BYTES - 1) == 0);
  CHECK(!key_eq(3.14159, -3.14159, 4, 0, 0));
  CHECK(key_eq(-3.14159, -3.1416, 4, 0, 0));
  /* The floor: below it is exactly zero, at it is not. */
  CHECK(key_eq(1e-14, 0.0, 5, 0, 1e-13));
  CHECK(key_eq(-9.9e-14, 0.0, 5, 1, 1e-13));
  CHECK(!key_eq(1e-13, 0.0, 5, 0, 1e-13));
  CHECK(!key_eq(1e-14, 0.0, 5, 0, 0));
  /* Different digits tell apart values one digit count merges. */
  CHECK(key_eq(1.23451, 1.23549, 4, 0, 0));
  CHECK(!key_eq(1.23451, 1.23549, 5, 0, 0));
}

static void test_log10(void) {
  unsigned char k[ROUND_KEY_BYTES];
  /* log10(100) = 2 -> 20000e-4 */
  CHECK(round_encode(100.0, 5, 1, 0, k) == 0);
  CHECK(k[0] == (1 | 4 | 1 << 3) && k[3] + 256 * k[4] == 20000);
  CHECK((int16_t)(uint16_t)(k[1] | k[2] << 8) == -4);
  /* x = 1: log is 0, still a positive x, distinct from x = 0 and -1. */
  CHECK(round_encode(1.0, 5, 1, 0, k) == 0 && k[0] == (1 | 4));
  CHECK(!key_eq(1.0, 0.0, 5, 1, 0));
  CHECK(!key_eq(1.0, -1.0, 5, 1, 0));
  CHECK(!key_eq(0.0, 1e-300, 5, 1, 0));
  /* At or below zero never meets a positive value. */
  for (int i = 0; i < 1000; i++) {
    double x = random_magnitude(-300, 300);
    CHECK(!key_eq(x, -x, 1 + (int)(next() % 15), 1, 0));
    CHECK(!key_eq(x, 0.0, 1 + (int)(next() % 15), 1, 0));
  }
  /* Relative resolution is the same in every decade (Table 1 of De Lucia
     et al. 2021): 1e-10 and 1.000001e-10 merge at 5 digits on the
     logarithm ... */
  CHECK(key_eq(1e-10, 1.000001e-10, 5, 1, 0));
  CHECK(!key_eq(1e-10, 1.001e-10, 5, 1, 0));
  /* ... while on the raw value they merge only below the last digit. */
  CHECK(!key_eq(1e-10, 1.0001e-10, 5, 0, 0));
}

static void test_nonfinite(void) {
  unsigned char k[ROUND_KEY_BYTES];
  memset(k, 0xab, sizeof k);
  CHECK(round_encode(NAN, 5, 0, 0, k) == -1);
  CHECK(round_encode(INFINITY, 5, 1, 0, k) == -1);
  CHECK(round_encode(-INFINITY, 5, 0, 1e-13, k) == -1);
  CHECK(k[0] == 0xab && k[9] == 0xab);
  double row[3] = {1.0, NAN, 2.0};
  int digits[3] = {5, 5, 5};
  unsigned char key[3 * ROUND_KEY_BYTES];
  CHECK(round_encode_row(row, 3, digits, NULL, 0, key) == -1);
  row[1] = 1.5;
  CHECK(round_encode_row(row, 3, digits, NULL, 0, key) == 0);
}

/* The class and quantity the neighbour index takes of an entry's inputs
   are the ones its keys are made of: the class is byte 0's, the quantity
   0 for class 0, x itself in raw mode and log10|x| in log10 mode. */
static void test_class_quantity(void) {
  const double xs[] = {0.0,  -0.0,   1e-14, -1e-14, 1e-13, 3.25e-7, -3.25e-7,
                       1.0,  -1.0,   0.5,   12345.678, -9.9995, 1e300,
                       5e-324};
  const double floors[] = {0.0, 1e-13};
  for (size_t n = 0; n < sizeof xs / sizeof xs[0]; n++)
    for (int lg = 0; lg < 2; lg++)
      for (int f = 0; f < 2; f++) {
        unsigned char k[ROUND_KEY_BYTES];
        double x = xs[n];
        CHECK(round_encode(x, 5, lg, floors[f], k) == 0);
        unsigned cls = round_class(x, floors[f]);
        CHECK(cls == (k[0] & 3u));
        double q = round_quantity(x, cls, lg);
        if (cls == 0)
          CHECK(q == 0);
        else
          CHECK(q == (lg ? log10(fabs(x)) : x));
      }
}

int main(void) {
  test_boundaries();
  test_decades();
  test_extremes();
  test_against_printf();
  test_properties();
  test_signs_zero_floor();
  test_log10();
  test_nonfinite();
  test_class_quantity();
  return check_finish("unit_round");
}
