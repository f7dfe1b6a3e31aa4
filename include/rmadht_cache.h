/*
 * The surrogate cache: approximated lookup of a function's results, built
 * on the public API of rmadht.h alone (src/cache/ is compiled without the
 * core's internal headers).
 *
 * A table whose key is a row of inputs rounded to per-input significant
 * digits (optionally of log10|x|), and whose value is the row of outputs
 * computed for it, followed by the exact inputs it was computed from (so
 * a caller can see how far the cached point lies from its query).  Inputs
 * that round alike share one entry; see De Lucia et al., POET, sect. 2.4.3.
 *
 * Rounding is exact and canonical: the key holds each rounded value as an
 * integer significand and decimal exponent, 0.0 and -0.0 agree, negative
 * values keep their sign, ties go to the even digit.  With log10 set for an
 * input, log10|x| is rounded instead, and x = 0 (or below zero_below) and
 * negative x get keys no positive x can have.  A row with a NaN or infinite
 * input is never stored or matched; the nonfinite counter records it.
 *
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef RMADHT_CACHE_H
#define RMADHT_CACHE_H

#include "rmadht.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmadht_cache rmadht_cache; /* opaque */

typedef struct rmadht_cache_config {
  size_t n_inputs, n_outputs;   /* doubles per row, both > 0 */
  const int *digits;            /* n_inputs significant digits, 1..15;
                                   NULL: 7 for every input */
  const unsigned char *log10;   /* n_inputs flags: round log10|x| instead
                                   of x; NULL: log10 for every input */
  double zero_below;            /* |x| below this counts as exactly 0;
                                   finite, >= 0; 0 disables */
  size_t bytes_per_rank;        /* as rmadht_config */
  enum rmadht_mode mode;
} rmadht_cache_config;

typedef struct rmadht_cache_stats {
  uint64_t lookups,     /* rows looked up */
      lookup_hits,      /* rows found */
      stores,           /* rows stored */
      dropped,          /* rows store gave up on under contention
                           (RMADHT_ERR_CONTENDED): lost, not an error */
      nonfinite;        /* rows of lookups and stores skipped because an
                           input was NaN or infinite */
  rmadht_stats table;   /* the underlying table's counters */
} rmadht_cache_stats;

/* Fills cfg with POET's defaults: 7 digits of log10|x| for every input
   (digits and log10 NULL), zero_below 1e-13, lock-free, 64 MiB per rank. */
RMADHT_API void rmadht_cache_config_default(rmadht_cache_config *cfg,
                                            size_t n_inputs, size_t n_outputs);

/* Collective.  Creates a cache over comm; the configuration (digits and
   log10 flags included) must be the same on every rank, else every rank
   returns RMADHT_ERR_MISMATCH.  Errors as rmadht_create; *out NULL then. */
RMADHT_API int rmadht_cache_create(MPI_Comm comm,
                                   const rmadht_cache_config *cfg,
                                   rmadht_cache **out);

/* Collective.  Frees the cache and its table, sets *c = NULL. */
RMADHT_API int rmadht_cache_free(rmadht_cache **c);

/* Looks up n rows of n_inputs doubles in one batch (one table batch per
   1024 rows, so working memory stays bounded).  hit[i] is 1 and
   outputs row i (n_outputs doubles) holds the cached result, or hit[i] is
   0 and the row is set to NaN.  Rows with a NaN or infinite input miss.
   Returns RMADHT_OK or an error. */
RMADHT_API int rmadht_cache_lookup(rmadht_cache *c, size_t n,
                                   const double *inputs, double *outputs,
                                   unsigned char *hit);

/* As rmadht_cache_lookup; cached_inputs row i (n_inputs doubles) also gets
   the exact inputs the hit's outputs were computed from (NaN on a miss). */
RMADHT_API int rmadht_cache_lookup_inputs(rmadht_cache *c, size_t n,
                                          const double *inputs,
                                          double *outputs,
                                          double *cached_inputs,
                                          unsigned char *hit);

/* Stores n rows of outputs computed for n rows of inputs, in one batch;
   rows with a NaN or infinite input are skipped.  Like rmadht_write_batch,
   the rows are visible to this rank at once and to other ranks after
   rmadht_flush() of the table (rmadht_cache_get_table). */
RMADHT_API int rmadht_cache_store(rmadht_cache *c, size_t n,
                                  const double *inputs,
                                  const double *outputs);

/* This rank's counters. */
RMADHT_API int rmadht_cache_get_stats(const rmadht_cache *c,
                                      rmadht_cache_stats *out);
/* Collective.  Counters summed over all ranks, on every rank. */
RMADHT_API int rmadht_cache_get_stats_global(rmadht_cache *c,
                                             rmadht_cache_stats *sum);

/* The table underneath, owned by the cache: for rmadht_flush, dump and
   restore, stats and info.  Do not free it. */
RMADHT_API int rmadht_cache_get_table(rmadht_cache *c, rmadht **out);

#ifdef __cplusplus
}
#endif
#endif /* RMADHT_CACHE_H */
