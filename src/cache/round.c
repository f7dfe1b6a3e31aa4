/*
 * Exact decimal rounding for cache keys (see round.h for the byte format).
 *
 * A double near a rounding midpoint must round the same way on every rank
 * and in every build, so the decision cannot rest on a*10^k computed with a
 * rounding error.  For |k| <= 22, 10^k is an exact double, and fma() yields
 * the exact error of the product (or the exact remainder of the quotient):
 * that error settles every case the rounded product leaves open.  Outside
 * that range (magnitudes beyond about 1e+-20) printf's %e conversion, which
 * C11 7.21.6.1 asks to be correctly rounded up to DECIMAL_DIG digits and
 * which glibc and musl round exactly, gives the digits; no exact tie exists
 * there, since such a tie would need a double with more than 53 bits.
 */
#include "round.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define POW10_EXACT_MAX 22

/* 10^0 .. 10^22, all exactly representable doubles. */
static const double pow10_exact[POW10_EXACT_MAX + 1] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Sets *r to the exact a*10^k rounded to an integer, ties to even, where
   a > 0.  Results of 2^52 or more, already too large for any significand,
   come back approximate.  Returns -1 when 10^|k| is not exact. */
static int scaled_round(double a, int k, double *r) {
  if (k > POW10_EXACT_MAX || k < -POW10_EXACT_MAX) return -1;
  double m = pow10_exact[k >= 0 ? k : -k];
  double p = k >= 0 ? a * m : a / m;
  if (p >= 0x1p52) {
    *r = p;
    return 0;
  }
  /* Below 2^52, p - floor(p) is exact.  When it differs from 1/2 it does
     so by at least one ulp of p, more than the rounding error of p (half
     an ulp) can bridge, so the exact error is needed only on a half.  p is
     positive, so floor is a truncation: one instruction, where floor()
     without SSE4.1 is a dozen. */
  double f = (double)(int64_t)p, frac = p - f;
  if (frac == 0.5) {
    /* a*m - p, or a - p*m (same sign as a/m - p), exactly. */
    double err = k >= 0 ? fma(a, m, -p) : fma(-p, m, a);
    if (err > 0 || (err == 0 && ((uint64_t)f & 1u))) f += 1;
  } else if (frac > 0.5) {
    f += 1;
  }
  *r = f;
  return 0;
}

/* printf's correctly rounded digits, read back without relying on the
   locale's decimal point. */
static void round_by_printf(double a, int digits, uint64_t *sig, int *exp) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.*e", digits - 1, a);
  uint64_t s = 0;
  const char *c = buf;
  for (; *c && *c != 'e'; c++)
    if (*c >= '0' && *c <= '9') s = s * 10 + (uint64_t)(*c - '0');
  *sig = s;
  *exp = (int)strtol(c + 1, NULL, 10) - (digits - 1);
}

void round_decimal(double a, int digits, uint64_t *sig, int *exp) {
  const double lo = pow10_exact[digits - 1], hi = pow10_exact[digits];
  /* The decimal exponent estimated from the binary one, a = f * 2^b with
     f in [1/2, 1), may be one too small; the loop corrects k, and also
     renormalises a carry such as 9.99995 -> 10.000 (5 digits). */
  int b;
  frexp(a, &b);
  int k = digits - 1 - (int)floor((b - 1) * 0.30102999566398120);
  for (;;) {
    double s;
    if (scaled_round(a, k, &s) != 0) {
      round_by_printf(a, digits, sig, exp);
      return;
    }
    if (s >= hi) {
      k--;
    } else if (s < lo) {
      k++;
    } else {
      *sig = (uint64_t)s;
      *exp = -k;
      return;
    }
  }
}

unsigned round_class(double x, double zero_below) {
  double a = fabs(x);
  return (a == 0 || a < zero_below) ? 0u : x > 0 ? 1u : 2u;
}

double round_quantity(double x, unsigned xclass, int log10_mode) {
  return xclass == 0 ? 0.0 : log10_mode ? log10(fabs(x)) : x;
}

/* The key bytes of x from its class and quantity. */
static void encode_quantity(unsigned xclass, double q, int digits,
                            int log10_mode, unsigned char *out) {
  unsigned qclass = q == 0 ? 0u : q > 0 ? 1u : 2u;
  uint64_t sig = 0;
  int exp = 0;
  if (qclass) round_decimal(fabs(q), digits, &sig, &exp);
  /* Exponents stay within -340..310 (doubles, or logs of them): int16. */
  uint16_t e = (uint16_t)exp;
  out[0] = (unsigned char)(xclass | (log10_mode ? 4u : 0u) | qclass << 3);
  out[1] = (unsigned char)(e & 0xffu);
  out[2] = (unsigned char)(e >> 8);
  for (int i = 0; i < 7; i++) out[3 + i] = (unsigned char)(sig >> (8 * i));
}

int round_encode(double x, int digits, int log10_mode, double zero_below,
                 unsigned char *out) {
  /* digits indexes pow10_exact: checked here, where any caller's value
     arrives, not only in the cache's configuration. */
  if (!isfinite(x) || digits < 1 || digits > ROUND_MAX_DIGITS) return -1;
  unsigned xclass = round_class(x, zero_below);
  encode_quantity(xclass, round_quantity(x, xclass, log10_mode), digits,
                  log10_mode, out);
  return 0;
}

int round_encode_row(const double *x, size_t n, const int *digits,
                     const unsigned char *log10_mode, double zero_below,
                     unsigned char *key) {
  for (size_t i = 0; i < n; i++)
    if (round_encode(x[i], digits[i], log10_mode ? log10_mode[i] : 0,
                     zero_below, key + i * ROUND_KEY_BYTES) != 0)
      return -1;
  return 0;
}
