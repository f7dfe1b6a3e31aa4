/*
 * Interpolation of cache misses from neighbouring cached entries: the
 * neighbour index (neighbours.c) and the mathematics (interpolate.c).
 * docs/explanation/interpolation.md explains both.
 *
 * The cache owns one interp_state when interpolation is on.  All buffers
 * for one lookup chunk are allocated at creation, as the cache's own, so a
 * lookup never allocates.
 */
#ifndef RMADHT_CACHE_INTERP_H
#define RMADHT_CACHE_INTERP_H

#include <stddef.h>
#include <stdint.h>

#include "rmadht_cache.h"

typedef struct interp_state {
  /* Settings, defaults filled in. */
  enum rmadht_interp_method method;
  size_t n_in, n_out, chunk;
  size_t kmax, kmin;
  double radius, zero_below;
  int *digits;                /* neighbour-key digits, 0 = left out */
  const int *exact_digits;    /* the cache's */
  const unsigned char *log10; /* the cache's */
  unsigned char *phase;       /* n_in, zeros when none flagged */
  double *tol;                /* n_out */
  size_t index_bytes;

  rmadht *index;              /* neighbour index; NULL until created */
  /* The coarse level (rmadht_cache_interp.coarse_digits), or NULL: a
     state of its own, with its own index and counters, that serves the
     rows this level passes on in retry (chunk entries). */
  struct interp_state *coarse;
  size_t *retry;
  /* key_size: a neighbour key's, and an exact key's alike (n_in rounded
     inputs); value_size: an exact entry's. */
  size_t key_size, bucket_size, value_size;

  /* Lookup chunk: the distinct neighbour keys of its misses and their
     buckets, then every location those list and the entries read there.
     A store chunk uses bkeys, bucket_of, slots, loc_first, locs and lhash
     likewise, for the distinct buckets of its rows and their new
     locations. */
  unsigned char *bkeys, *bvals;
  int *bstatus;
  size_t *bucket_of;          /* per missed or stored row: its distinct key */
  int32_t *slots;             /* open addressing over bkeys, 2 * chunk */
  size_t *loc_first;          /* chunk + 1: bucket b's locations start */
  rmadht_location *locs;
  uint64_t *lhash;            /* hash of the exact key listed with each */
  unsigned char *lkeys, *lvals; /* exact keys and entries read there */
  int *lstatus;
  /* Per location read (n_in each): its inputs' classes and quantities
     (round_class, round_quantity), taken once and then used by every row
     of the bucket. */
  unsigned char *lclass;
  double *lq;
  /* Store chunk: each stored row's new location and key hash, before
     they are sorted by bucket into locs and lhash; one update status
     per distinct bucket. */
  rmadht_location *new_locs;
  uint64_t *new_hash;
  int *ustatus;
  /* One row's neighbours: scaled coordinates (kmax x n_in) and outputs
     (kmax x n_out); est: estimate and error (2 x n_out); scale: cell
     widths and the query's rounded quantities (2 x n_in). */
  double *u, *y, *work, *est, *scale;
  unsigned char *qclass;      /* the row's input classes (n_in) */
  unsigned char *skey;        /* one neighbour key */

  uint64_t interpolated, refused_neighbours, refused_outside, refused_phase,
      refused_error, index_dropped;
} interp_state;

/* RMADHT_OK or RMADHT_ERR_ARG for cfg->interp against the rest of cfg
   (which the cache has checked; default_digits stands for cfg->digits
   NULL); method NONE is always fine. */
int interp_check(const rmadht_cache_config *cfg, int default_digits);

/* The state for an interpolating cache (cfg->interp.method != NONE) of
   chunk rows per call, sharing the cache's filled-in digits and log10
   arrays; NULL when out of memory. */
interp_state *interp_alloc(const rmadht_cache_config *cfg, size_t chunk,
                           const int *exact_digits,
                           const unsigned char *log10);

/* Mixes every setting that must agree across ranks into h, the coarse
   level's included. */
uint64_t interp_fingerprint(const interp_state *s, uint64_t h);

/* Collective: creates the neighbour index (and the coarse level's), in
   the cache's mode. */
int interp_create_index(MPI_Comm comm, interp_state *s,
                        enum rmadht_mode mode);

/* Collective when the index exists: frees it and the state. */
int interp_free(interp_state *s);

/* Appends the locations of n freshly written entries, whose exact inputs
   are rows[j] of inputs (n_in doubles each) and whose exact keys are
   packed in keys, to their buckets: one rmadht_update_batch (and one
   more for the coarse level's buckets).  Entries
   whose write failed have status < 0. */
int interp_append(interp_state *s, size_t n, const double *inputs,
                  const size_t *rows, const unsigned char *keys,
                  const rmadht_location *locs, const int *wstatus);

/* Serves the m missed rows rows[j] of inputs where it can: fetches their
   buckets and neighbours from table (two batch calls for all), then sets
   outputs row and hit[row] = RMADHT_CACHE_INTERPOLATED for each row it
   accepts.  Counts interpolations and refusals.  Rows refused for too
   few neighbours go on to the coarse level, if any: two more batch calls
   for all of them. */
int interp_serve(interp_state *s, rmadht *table, size_t m,
                 const double *inputs, const size_t *rows, double *outputs,
                 unsigned char *hit);

/* Decides one missed row x from the nloc entries read at its bucket's
   locations (values vals, read status status, stale ones not RMADHT_OK;
   classes lclass and quantities lq of their inputs, n_in per entry): 0
   served (out holds the estimate), 1 too few neighbours within the
   radius, 2 a flagged phase disagrees, 3 error estimate over tolerance or
   none possible, 4 within tolerance at the neighbours but not once scaled
   by the extrapolation factor. */
int interp_row(interp_state *s, const double *x, size_t nloc,
               const unsigned char *vals, const int *status,
               const unsigned char *lclass, const double *lq, double *out);

/* Completes this rank's appends (to both levels' indexes). */
int interp_flush(interp_state *s);

/* The mathematics (interpolate.c), on k neighbours with coordinates u
   (k x d, relative to the query, scaled) and outputs y (k x m): writes the
   prediction at the query (m), the largest leave-one-out residual per
   output (m) and the extrapolation factor (>= 1; 1 when the query lies
   within the neighbours' cloud, else how much farther from its centroid
   than the farthest neighbour, in squared Mahalanobis distance); work
   holds interp_work_doubles(kmax, d, m).  Returns 0, or
   INTERP_NO_ESTIMATE when the neighbours cannot support an error
   estimate. */
#define INTERP_NO_ESTIMATE (-1)
size_t interp_work_doubles(size_t kmax, size_t d, size_t m);
int interp_idw(size_t k, size_t d, const double *u, size_t m, const double *y,
               double *pred, double *err, double *extrap, double *work);
int interp_linear(size_t k, size_t d, const double *u, size_t m,
                  const double *y, double *pred, double *err, double *extrap,
                  double *work);

#endif
