#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double *zipf_cdf(size_t n, double skew) {
  double *cdf = malloc(n * sizeof *cdf);
  if (!cdf) return NULL;
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += 1.0 / pow((double)(i + 1), skew);
  double acc = 0;
  for (size_t i = 0; i < n; i++) {
    acc += 1.0 / pow((double)(i + 1), skew) / sum;
    cdf[i] = acc;
  }
  cdf[n - 1] = 1.0;
  return cdf;
}

void draw_ids(uint64_t *ids, size_t count, size_t n, const double *cdf,
              uint64_t seed) {
  uint64_t s = seed * UINT64_C(0x9E3779B97F4A7C15) | 1;
  for (size_t i = 0; i < count; i++) {
    if (!cdf) {
      ids[i] = rng_next(&s) % n;
      continue;
    }
    double u = rng_unit(&s);
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    ids[i] = lo; /* hashing the key scatters hot ids over the table */
  }
}

void key_of(unsigned char *key, size_t len, uint64_t id) {
  uint64_t x = id + 1;
  for (size_t i = 0; i < len; i += 8) {
    x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    memcpy(key + i, &x, len - i < 8 ? len - i : 8);
  }
  memcpy(key, &id, len < 8 ? len : 8);
}

void value_of(unsigned char *value, size_t len, uint64_t id) {
  for (size_t i = 0; i < len; i++) value[i] = (unsigned char)(id * 31 + i);
}
