/* The synthetic workload of Lübke et al. 2024, sect. 4.2: key ids drawn
   uniformly or from a Zipf law, turned into fixed-size keys and values. */
#ifndef RMADHT_BENCH_WORKLOAD_H
#define RMADHT_BENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

/* A small, fast, seedable generator (xorshift64*): the benchmark must not
   spend its time in rand(). */
static inline uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * UINT64_C(0x2545F4914F6CDD1D);
}
static inline double rng_unit(uint64_t *s) {
  return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* Cumulative Zipf distribution over n ids with the given skew. */
double *zipf_cdf(size_t n, double skew);
/* Fills ids[0, count) from the distribution (cdf NULL: uniform over n). */
void draw_ids(uint64_t *ids, size_t count, size_t n, const double *cdf,
              uint64_t seed);

void key_of(unsigned char *key, size_t len, uint64_t id);
void value_of(unsigned char *value, size_t len, uint64_t id);

#endif
