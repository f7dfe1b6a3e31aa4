/* Regression for fuzz_round_key's first finding: round_encode took any
   digit count, read pow10_exact[digits - 1] out of bounds for digits < 1
   or > 22, and returned keys for digits 0, 16..22 or, when nothing needed
   rounding (x = 1 in log10 mode, q = 0), for any digit count at all.  It
   must refuse them, leave the key untouched, and fail a row holding one. */
#include <limits.h>
#include <string.h>

#include "check.h"
#include "round.h"

static void refused(double x, int digits, int lg) {
  unsigned char key[ROUND_KEY_BYTES], before[ROUND_KEY_BYTES];
  memset(key, 0xA5, sizeof key);
  memcpy(before, key, sizeof key);
  CHECK(round_encode(x, digits, lg, 0.0, key) == -1);
  CHECK(memcmp(key, before, sizeof key) == 0);
}

int main(void) {
  const int bad[] = {INT_MIN, -128, -3, -1, 0, ROUND_MAX_DIGITS + 1, 22, 23,
                     127, INT_MAX};
  const double xs[] = {1.0, 2.0, 0.0, -0.0, 1e300, 4.9e-324, -7.25};
  for (size_t d = 0; d < sizeof bad / sizeof *bad; d++)
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
      for (int lg = 0; lg < 2; lg++) refused(xs[i], bad[d], lg);

  /* The input the fuzzer saved: x = 1.0, digits -3, log10 mode. */
  refused(1.0, -3, 1);

  /* The bounds themselves are accepted. */
  unsigned char key[2 * ROUND_KEY_BYTES];
  CHECK(round_encode(1.5, 1, 0, 0.0, key) == 0);
  CHECK(round_encode(1.5, ROUND_MAX_DIGITS, 1, 0.0, key) == 0);

  /* A row with one bad digit count fails. */
  const double row[2] = {1.0, 2.0};
  const int digits[2] = {5, 0};
  const unsigned char lg[2] = {0, 0};
  CHECK(round_encode_row(row, 2, digits, lg, 0.0, key) == -1);
  return check_finish("unit_round_digits");
}
