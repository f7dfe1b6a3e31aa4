/*
 * The surrogate cache: approximated lookup of a function's results, built
 * on the public API of rmadht.h alone (src/cache/ is compiled without the
 * core's internal headers).
 *
 * A table whose key is a row of inputs rounded to per-input significant
 * digits (optionally of log10|x|), and whose value is the row of outputs
 * computed for it, followed by the exact inputs it was computed from (so
 * a caller can see how far the cached point lies from its query).  Inputs
 * that round alike share one entry; see De Lucia et al. 2021 (POET),
 * sect. 2.4.3.
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

/* How a lookup may serve a row whose exact key is missing: from the
   outputs cached for neighbouring inputs (docs/explanation/interpolation.md). */
enum rmadht_interp_method {
  RMADHT_INTERP_NONE = 0,   /* exact keys only (the default) */
  RMADHT_INTERP_IDW = 1,    /* inverse-distance weighting, power 2 */
  RMADHT_INTERP_LINEAR = 2  /* local linear least squares (falls back to
                               IDW when the neighbours are too few) */
};

/* Interpolation of misses.  Neighbours are found through a second table,
   the neighbour index, keyed by the inputs rounded more coarsely than the
   exact key; its value lists the locations of up to max_neighbours exact
   entries with that coarse key.  A missed row is served only when at
   least min_neighbours of them lie within radius, every phase-flagged
   input agrees, and the leave-one-out error of the method on those
   neighbours, scaled up when the query lies outside their cloud, is
   within tolerance for every output.  The tolerance is a target, not a
   bound (docs/explanation/interpolation.md, "What it guarantees"). */
typedef struct rmadht_cache_interp {
  enum rmadht_interp_method method;
  const int *digits;            /* n_inputs neighbour-key digits, each
                                   0..the exact digits of that input, at
                                   least one strictly fewer; 0 leaves the
                                   input out of the neighbour key.  Rounded
                                   as the exact key (log10|x| or x). */
  size_t max_neighbours;        /* locations kept per neighbour key,
                                   2..RMADHT_INTERP_MAX_NEIGHBOURS */
  size_t min_neighbours;        /* 2..max_neighbours */
  double radius;                /* > 0: how far a neighbour may lie from the
                                   query, Euclidean, in units of the
                                   neighbour key's cell width per input
                                   (docs/explanation/interpolation.md, "Scaling") */
  const double *tolerance;      /* n_outputs absolute tolerances, > 0 */
  const unsigned char *phase;   /* n_inputs flags or NULL: a flagged
                                   input's presence (|x| > zero_below) must
                                   be the same for the query and every
                                   neighbour used */
  size_t bytes_per_rank;        /* memory of the neighbour index; 0: a
                                   quarter of the cache's bytes_per_rank
                                   (and as much again for the coarse
                                   index, if any) */
  /* A second, coarser neighbour level, consulted only for the rows the
     first refuses for too few neighbours (docs/explanation/interpolation.md, "The
     coarse level"): a neighbour index of its own, keyed by coarse_digits,
     with the same method, neighbour counts, radius (in its own cell
     widths) and phase flags, and every tolerance multiplied by
     coarse_tolerance_scale.  NULL: no second level. */
  const int *coarse_digits;     /* n_inputs digits or NULL; each
                                   0..digits[i], at least one strictly
                                   fewer */
  double coarse_tolerance_scale; /* with coarse_digits: in (0, 1] */
} rmadht_cache_interp;

#define RMADHT_INTERP_MAX_NEIGHBOURS 64

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
  rmadht_cache_interp interp;   /* method RMADHT_INTERP_NONE: off */
} rmadht_cache_config;

/* What rmadht_cache_lookup reports per row in hit[]: nonzero is served. */
enum rmadht_cache_status {
  RMADHT_CACHE_MISS = 0,
  RMADHT_CACHE_HIT = 1,          /* exact key found */
  RMADHT_CACHE_INTERPOLATED = 2  /* interpolated from neighbours */
};

typedef struct rmadht_cache_stats {
  uint64_t lookups,     /* rows looked up */
      lookup_hits,      /* rows found */
      stores,           /* rows stored */
      dropped,          /* rows store gave up on under contention
                           (RMADHT_ERR_CONTENDED): lost, not an error */
      nonfinite,        /* rows of lookups and stores skipped because an
                           input was NaN or infinite */
      interpolated,     /* rows served by interpolation, either level */
      interpolated_coarse, /* of those, rows the coarse level served */
      /* Missed rows interpolation refused, one reason per row;
         with interpolation on, lookups = lookup_hits + interpolated +
         the four refusals + the nonfinite rows of lookups. */
      refused_neighbours, /* fewer than min_neighbours within radius
                             (with a coarse level: at both levels; a row
                             the first level passes on is counted for
                             what the coarse level decides) */
      refused_outside,    /* error within tolerance at the neighbours,
                             but not once scaled to a query outside
                             their cloud (docs/explanation/interpolation.md) */
      refused_phase,      /* a flagged input's presence disagreed */
      refused_error,      /* leave-one-out error over the tolerance */
      index_dropped;      /* neighbour-index appends lost under contention
                             or to a full index table */
  rmadht_stats table;   /* the underlying table's counters */
} rmadht_cache_stats;

/* Fills cfg with POET's defaults: 7 digits of log10|x| for every input
   (digits and log10 NULL), zero_below 1e-13, lock-free, 64 MiB per rank,
   interpolation off (interp zeroed, method RMADHT_INTERP_NONE). */
RMADHT_API void rmadht_cache_config_default(rmadht_cache_config *cfg,
                                            size_t n_inputs, size_t n_outputs);

/* Collective.  Creates a cache over comm; the configuration (digits and
   log10 flags included, and the interpolation settings) must be the same
   on every rank, else every rank returns RMADHT_ERR_MISMATCH.  A bad
   setting on any rank (interpolation included: tolerance <= 0 or NaN,
   neighbour digits not coarser, min > max neighbours, ...) gives
   RMADHT_ERR_ARG on every rank.  Errors as rmadht_create; *out NULL then. */
RMADHT_API int rmadht_cache_create(MPI_Comm comm,
                                   const rmadht_cache_config *cfg,
                                   rmadht_cache **out);

/* Collective.  Frees the cache and its table, sets *c = NULL. */
RMADHT_API int rmadht_cache_free(rmadht_cache **c);

/* Looks up n rows of n_inputs doubles in one batch (one table batch per
   1024 rows, so working memory stays bounded).  hit[i] is an enum
   rmadht_cache_status: RMADHT_CACHE_HIT (1) and outputs row i (n_outputs
   doubles) holds the cached result, RMADHT_CACHE_INTERPOLATED (2) and it
   holds the interpolated one, or RMADHT_CACHE_MISS (0) and the row is set
   to NaN.  With interpolation on, the misses of the exact read cost one
   more batch read of the neighbour index and one rmadht_read_loc_batch,
   for the whole chunk.  Rows with a NaN or infinite input miss.
   Returns RMADHT_OK or an error. */
RMADHT_API int rmadht_cache_lookup(rmadht_cache *c, size_t n,
                                   const double *inputs, double *outputs,
                                   unsigned char *hit);

/* As rmadht_cache_lookup; cached_inputs row i (n_inputs doubles) also gets
   the exact inputs the hit's outputs were computed from (NaN on a miss and
   on an interpolated row, which has no single source). */
RMADHT_API int rmadht_cache_lookup_inputs(rmadht_cache *c, size_t n,
                                          const double *inputs,
                                          double *outputs,
                                          double *cached_inputs,
                                          unsigned char *hit);

/* Stores n rows of outputs computed for n rows of inputs, in one batch;
   rows with a NaN or infinite input are skipped.  Like rmadht_write_batch,
   the rows are visible to this rank at once and to other ranks after
   rmadht_cache_flush().  With interpolation on, the locations of the
   stored entries are then appended to the neighbour index in one
   rmadht_update_batch. */
RMADHT_API int rmadht_cache_store(rmadht_cache *c, size_t n,
                                  const double *inputs,
                                  const double *outputs);

/* Completes this rank's stores, in the table and in the neighbour index:
   afterwards every rank sees them. */
RMADHT_API int rmadht_cache_flush(rmadht_cache *c);

/* This rank's counters. */
RMADHT_API int rmadht_cache_get_stats(const rmadht_cache *c,
                                      rmadht_cache_stats *out);
/* Collective.  Counters summed over all ranks, on every rank. */
RMADHT_API int rmadht_cache_get_stats_global(rmadht_cache *c,
                                             rmadht_cache_stats *sum);

/* The table of exact entries underneath, owned by the cache: for dump
   and restore, stats and info.  Do not free it.  rmadht_flush of it alone
   leaves the neighbour index unflushed: use rmadht_cache_flush.
   A dump holds the exact entries only.  A restore inserts them into the
   table but not into the neighbour index (the public API offers no way
   to list the entries restored), so restored rows serve exact hits and
   become neighbours again when stored anew; the index's old locations
   are recognised as stale at lookup (docs/explanation/interpolation.md). */
RMADHT_API int rmadht_cache_get_table(rmadht_cache *c, rmadht **out);

#ifdef __cplusplus
}
#endif
#endif /* RMADHT_CACHE_H */
