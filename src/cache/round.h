/*
 * Canonical key bytes for the surrogate cache: each input rounded to a
 * number of significant decimal digits, optionally on log10|x|.
 *
 * A rounded value is kept as an integer significand and a decimal exponent,
 * never as a rounded double, so that every double that rounds to the same
 * decimal gives the same bytes whatever the floating-point noise, on every
 * rank and in every build.  Rounding is exact (the decision is taken on the
 * true value of the double, not on a product with rounding error in it),
 * ties go to the even digit as in printf, so the result is one function of
 * the input alone.
 *
 * One input takes ROUND_KEY_BYTES bytes:
 *   byte 0     bits 0-1 class of x after the zero floor:
 *                       0 zero, 1 positive, 2 negative
 *              bit  2   set when the table rounds log10|x|
 *              bits 3-4 class of the rounded quantity (x, or log10|x| for a
 *                       non-zero x): 0 zero, 1 positive, 2 negative
 *   bytes 1-2  decimal exponent, int16, little endian
 *   bytes 3-9  significand of the magnitude, 56 bits, little endian
 * A zero quantity has significand and exponent 0.  Otherwise the quantity is
 * +-significand * 10^exponent with 10^(digits-1) <= significand < 10^digits.
 */
#ifndef RMADHT_ROUND_H
#define RMADHT_ROUND_H

#include <stddef.h>
#include <stdint.h>

#define ROUND_KEY_BYTES 10
#define ROUND_MAX_DIGITS 15 /* 10^15 < 2^53: every significand is exact */

/* Rounds a finite a > 0 to digits (1..ROUND_MAX_DIGITS) significant digits:
   a ~= *sig * 10^*exp with 10^(digits-1) <= *sig < 10^digits. */
void round_decimal(double a, int digits, uint64_t *sig, int *exp);

/* The class of a finite x after the zero floor, as byte 0 of its key
   holds it: 0 zero (|x| < zero_below, or 0), 1 positive, 2 negative. */
unsigned round_class(double x, double zero_below);

/* The quantity a key rounds for a finite x of class xclass: 0 for class 0,
   else log10|x| in log10 mode, else x. */
double round_quantity(double x, unsigned xclass, int log10_mode);

/* Encodes x into ROUND_KEY_BYTES bytes at out.  |x| < zero_below counts as
   0, and -0.0 as 0.0.  Returns 0, or -1 (out untouched) when x is NaN or
   infinite or digits is outside 1..ROUND_MAX_DIGITS. */
int round_encode(double x, int digits, int log10_mode, double zero_below,
                 unsigned char *out);

/* Encodes n inputs into n * ROUND_KEY_BYTES bytes: 0, or -1 when any input
   is refused by round_encode (key then partly written). */
int round_encode_row(const double *x, size_t n, const int *digits,
                     const unsigned char *log10_mode, double zero_below,
                     unsigned char *key);

#endif
