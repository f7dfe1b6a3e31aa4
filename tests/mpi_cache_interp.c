/*
 * Interpolation of cache misses over several ranks: smooth functions are
 * reproduced within the tolerance from neighbours stored by every rank; a
 * step (error estimate), too few neighbours and a phase disagreement are
 * refused and counted by reason; concurrent appends of every rank to one
 * neighbour key lose no location; bad settings fail alike on every rank;
 * the counters add up; a dump restored into the same cache still
 * interpolates, one restored into a new cache hits exactly and interpolates
 * once the rows are stored again.  One lookup mixing rows of a bucket with
 * enough neighbours and rows of one with too few listed (whose entries the
 * lookup does not read) serves the first and refuses the second; one
 * store of rows of two buckets lists every row.  Entries removed through
 * the exact table by one rank, flushed, leave too few neighbours on every
 * rank.  The estimators' leave-one-out shortcut is checked against
 * refitting without each neighbour.  A coarse level serves the rows the
 * first refuses for too few neighbours, within its scaled tolerance, and
 * counts them apart; its bad settings fail alike on every rank.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "interp.h"
#include "rmadht_cache.h"

#define NIN 3
#define NOUT 2
#define NPTS 20   /* stored rows in the test bucket, over all ranks */
#define NQ 40     /* queries */

static int rank, nranks;

static const int exact_digits[NIN] = {6, 6, 6};
static const int coarse_digits[NIN] = {2, 2, 2};
static const unsigned char no_log[NIN] = {0, 0, 0};

typedef void (*func)(const double *x, double *y);

static void f_linear(const double *x, double *y) {
  y[0] = 1 + 2 * x[0] - 3 * x[1] + 0.5 * x[2];
  y[1] = -x[0] + 4 * x[2];
}

static void f_quadratic(const double *x, double *y) {
  y[0] = x[0] * x[0] + x[1] * x[2];
  y[1] = 2 * x[1] * x[1] - x[0];
}

static void f_step(const double *x, double *y) {
  y[0] = x[0] < 1.02 ? 0.0 : 1.0;
  y[1] = x[1];
}

/* A deterministic point of the box [lo, lo + w)^3, the same on every
   rank. */
static void point_in(unsigned seed, double lo, double w, double *x) {
  for (int i = 0; i < NIN; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = lo + w * ((seed >> 8) & 0xffff) / 65536.0;
  }
}

/* Stored rows: the box [1.00, 1.04)^3, one neighbour key at 2 digits
   (1.0, which covers [0.995, 1.05): below 1 the digits are hundredths). */
static void point(unsigned seed, double *x) { point_in(seed, 1.0, 0.04, x); }

/* Queries: the middle of that box, inside the stored rows' cloud. */
static void query_point(unsigned seed, double *x) {
  point_in(seed, 1.01, 0.02, x);
}

static rmadht_cache_config interp_config(enum rmadht_interp_method method,
                                         const double *tol) {
  rmadht_cache_config cfg;
  rmadht_cache_config_default(&cfg, NIN, NOUT);
  cfg.digits = exact_digits;
  cfg.log10 = no_log;
  cfg.bytes_per_rank = (size_t)2 << 20;
  cfg.interp.method = method;
  cfg.interp.digits = coarse_digits;
  cfg.interp.max_neighbours = 20;
  cfg.interp.min_neighbours = 5;
  cfg.interp.radius = 2.0;
  cfg.interp.tolerance = tol;
  return cfg;
}

/* Rank r stores the points i of 0..n-1 with i % nranks == r. */
static void store_points(rmadht_cache *c, int n, unsigned base, func f) {
  for (int i = rank; i < n; i += nranks) {
    double x[NIN], y[NOUT];
    point(base + (unsigned)i, x);
    f(x, y);
    CHECK_RC(rmadht_cache_store(c, 1, x, y), RMADHT_OK);
  }
  CHECK_RC(rmadht_cache_flush(c), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Looks up NQ fresh points; returns how many were interpolated and checks
   each served one against f within tol (scaled by slack). */
static int query_points(rmadht_cache *c, func f, const double *tol,
                        double slack) {
  double x[NQ * NIN], out[NQ * NOUT], y[NOUT];
  unsigned char st[NQ];
  for (int q = 0; q < NQ; q++) query_point(1000u + (unsigned)q, x + q * NIN);
  CHECK_RC(rmadht_cache_lookup(c, NQ, x, out, st), RMADHT_OK);
  int served = 0;
  for (int q = 0; q < NQ; q++) {
    CHECK(st[q] == RMADHT_CACHE_MISS || st[q] == RMADHT_CACHE_INTERPOLATED);
    if (st[q] != RMADHT_CACHE_INTERPOLATED) {
      CHECK(isnan(out[q * NOUT]) && isnan(out[q * NOUT + 1]));
      continue;
    }
    served++;
    f(x + q * NIN, y);
    for (int o = 0; o < NOUT; o++)
      CHECK(fabs(out[q * NOUT + o] - y[o]) <= slack * tol[o]);
  }
  return served;
}

static void check_sums(rmadht_cache *c) {
  rmadht_cache_stats s;
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.lookups == s.lookup_hits + s.interpolated + s.refused_neighbours +
                         s.refused_outside + s.refused_phase +
                         s.refused_error + s.nonfinite);
}

/* The stored point seed (stored with f_linear) is an exact hit, with
   f_linear's own outputs. */
static void check_exact_hit(rmadht_cache *c, unsigned seed) {
  double x[NIN], y[NOUT], out[NOUT];
  unsigned char st;
  point(seed, x);
  f_linear(x, y);
  CHECK_RC(rmadht_cache_lookup(c, 1, x, out, &st), RMADHT_OK);
  CHECK(st == RMADHT_CACHE_HIT && out[0] == y[0] && out[1] == y[1]);
}

static void test_smooth(void) {
  double tol_lin[NOUT] = {1e-9, 1e-9}, tol_quad[NOUT] = {2e-2, 2e-2};
  rmadht_cache *c;
  /* Linear: the local linear fit is exact, to rounding. */
  rmadht_cache_config cfg = interp_config(RMADHT_INTERP_LINEAR, tol_lin);
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  store_points(c, NPTS, 0, f_linear);
  CHECK(query_points(c, f_linear, tol_lin, 1.0) == NQ);
  /* Stored rows still hit exactly. */
  check_exact_hit(c, 3);
  rmadht_cache_stats s;
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.interpolated == NQ && s.lookup_hits == 1);
  check_sums(c);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);

  /* Quadratic: served rows are within the tolerance; most are served. */
  for (int m = 0; m < 2; m++) {
    cfg = interp_config(m ? RMADHT_INTERP_IDW : RMADHT_INTERP_LINEAR,
                        tol_quad);
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
    if (!c) return;
    store_points(c, NPTS, 0, f_quadratic);
    int served = query_points(c, f_quadratic, tol_quad, 1.0);
    /* The linear fit's error is the curvature, ~0.02^2, far inside the
       tolerance; inverse distance is coarser and may refuse some. */
    if (m == 0) CHECK(served == NQ);
    check_sums(c);
    CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
  }
}

/* Rows in the lower half of the cell, a query in its upper corner, within
   the radius but outside the rows' cloud: a tolerance between the
   leave-one-out error and that error scaled by the extrapolation factor
   serves a query inside the cloud and refuses the corner as outside.  The
   factor and error come from the estimator itself, on the coordinates the
   lookup computes (offsets over the cell width, 0.1). */
static void test_outside(enum rmadht_interp_method method) {
  double xs[NPTS][NIN], ys[NPTS][NOUT], u[NPTS * NIN], y[NPTS * NOUT];
  double corner[NIN] = {1.04, 1.04, 1.04}, inside[NIN] = {1.01, 1.01, 1.01};
  double pred[NOUT], err[NOUT], extrap, work[256];
  for (int j = 0; j < NPTS; j++) {
    point_in((unsigned)j, 1.0, 0.02, xs[j]);
    f_quadratic(xs[j], ys[j]);
    for (int i = 0; i < NIN; i++) u[j * NIN + i] = (xs[j][i] - corner[i]) / 0.1;
    memcpy(y + j * NOUT, ys[j], sizeof ys[j]);
  }
  int rc = method == RMADHT_INTERP_LINEAR
               ? interp_linear(NPTS, NIN, u, NOUT, y, pred, err, &extrap, work)
               : interp_idw(NPTS, NIN, u, NOUT, y, pred, err, &extrap, work);
  CHECK(rc == 0 && extrap > 4);
  double tol[NOUT];
  for (int o = 0; o < NOUT; o++) tol[o] = fmax(err[0], err[1]) * sqrt(extrap);

  rmadht_cache_config cfg = interp_config(method, tol);
  rmadht_cache *c;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  for (int j = rank; j < NPTS; j += nranks)
    CHECK_RC(rmadht_cache_store(c, 1, xs[j], ys[j]), RMADHT_OK);
  CHECK_RC(rmadht_cache_flush(c), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  double out[NOUT];
  unsigned char st;
  CHECK_RC(rmadht_cache_lookup(c, 1, corner, out, &st), RMADHT_OK);
  CHECK(st == RMADHT_CACHE_MISS);
  CHECK_RC(rmadht_cache_lookup(c, 1, inside, out, &st), RMADHT_OK);
  CHECK(st == RMADHT_CACHE_INTERPOLATED);
  rmadht_cache_stats s;
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.refused_outside == 1 && s.interpolated == 1);
  check_sums(c);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}


/* NQ lookups alternating between the bucket of 1.0 (even q) and that of
   2.0 (odd q), near each bucket's points. */
static void lookup_two_buckets(rmadht_cache *c, double *x, double *out,
                               unsigned char *st) {
  for (int q = 0; q < NQ; q++)
    point_in(1000u + (unsigned)q, q % 2 ? 2.01 : 1.01, 0.02, x + q * NIN);
  CHECK_RC(rmadht_cache_lookup(c, NQ, x, out, st), RMADHT_OK);
}

/* An interpolated row of f_linear within tol of the function. */
static void check_linear(const double *x, const double *out,
                         const double *tol) {
  double y[NOUT];
  f_linear(x, y);
  for (int o = 0; o < NOUT; o++) CHECK(fabs(out[o] - y[o]) <= tol[o]);
}

/* Rows of a full bucket and of one listing fewer than min_neighbours,
   interleaved in one lookup: the short bucket's locations are not read,
   which must not shift the others' (each row still meets its own
   neighbours), so the first rows are served from f and the second refused
   for too few neighbours. */
static void test_mixed_buckets(void) {
  double tol[NOUT] = {1e-9, 1e-9};
  rmadht_cache *c;
  rmadht_cache_stats s;
  rmadht_cache_config cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  store_points(c, NPTS, 0, f_linear);
  /* Four rows (one fewer than needed) in the bucket of 2.0, which covers
     [1.995, 2.05) at 2 digits; rank 0 stores them. */
  if (rank == 0)
    for (unsigned i = 0; i < 4; i++) {
      double x[NIN], y[NOUT];
      point_in(500u + i, 2.0, 0.04, x);
      f_linear(x, y);
      CHECK_RC(rmadht_cache_store(c, 1, x, y), RMADHT_OK);
    }
  CHECK_RC(rmadht_cache_flush(c), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  double x[NQ * NIN], out[NQ * NOUT];
  unsigned char st[NQ];
  lookup_two_buckets(c, x, out, st);
  for (int q = 0; q < NQ; q++) {
    if (q % 2) {
      CHECK(st[q] == RMADHT_CACHE_MISS && isnan(out[q * NOUT]));
      continue;
    }
    CHECK(st[q] == RMADHT_CACHE_INTERPOLATED);
    check_linear(x + q * NIN, out + q * NOUT, tol);
  }
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.interpolated == NQ / 2 && s.refused_neighbours == NQ / 2);
  check_sums(c);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}

/* One store of rows of two buckets, interleaved: the appends go as one
   update item per bucket, each carrying its rows' locations; every one
   must be listed, which only a lookup needing all NPTS of a bucket shows
   (min_neighbours = max_neighbours = NPTS). */
static void test_grouped_appends(void) {
  double tol[NOUT] = {1e-9, 1e-9};
  rmadht_cache *c;
  rmadht_cache_stats s;
  rmadht_cache_config cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
  cfg.interp.max_neighbours = NPTS;
  cfg.interp.min_neighbours = NPTS;
  cfg.interp.radius = 10.0;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  if (rank == 0) {
    double x[2 * NPTS * NIN], y[2 * NPTS * NOUT];
    for (int j = 0; j < 2 * NPTS; j++) {
      point_in(700u + (unsigned)j, j % 2 ? 2.0 : 1.0, 0.04, x + j * NIN);
      f_linear(x + j * NIN, y + j * NOUT);
    }
    CHECK_RC(rmadht_cache_store(c, 2 * NPTS, x, y), RMADHT_OK);
  }
  CHECK_RC(rmadht_cache_flush(c), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  double x[NQ * NIN], out[NQ * NOUT];
  unsigned char st[NQ];
  lookup_two_buckets(c, x, out, st);
  for (int q = 0; q < NQ; q++) {
    CHECK(st[q] == RMADHT_CACHE_INTERPOLATED);
    check_linear(x + q * NIN, out + q * NOUT, tol);
  }
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.interpolated == NQ && s.index_dropped == 0);
  check_sums(c);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}

static void test_refusals(void) {
  double tol[NOUT] = {0.1, 0.1};
  rmadht_cache *c;
  rmadht_cache_stats s;
  for (int m = 0; m < 2; m++) {
    /* A step inside the neighbours: leave-one-out across it fails. */
    rmadht_cache_config cfg =
        interp_config(m ? RMADHT_INTERP_IDW : RMADHT_INTERP_LINEAR, tol);
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
    if (!c) return;
    store_points(c, NPTS, 0, f_step);
    CHECK(query_points(c, f_step, tol, 1.0) == 0);
    CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
    CHECK(s.refused_error == NQ && s.interpolated == 0);
    check_sums(c);
    CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
  }

  /* Too few neighbours: 4 stored, 5 needed; and an empty bucket. */
  rmadht_cache_config cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  store_points(c, 4, 0, f_linear);
  CHECK(query_points(c, f_linear, tol, 1.0) == 0);
  double far[NIN] = {5.0, 5.0, 5.0}, out[NOUT];
  unsigned char st;
  CHECK_RC(rmadht_cache_lookup(c, 1, far, out, &st), RMADHT_OK);
  CHECK(st == RMADHT_CACHE_MISS);
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.refused_neighbours == NQ + 1 && s.interpolated == 0);
  /* NaN inputs miss and are counted as before. */
  double bad[NIN] = {1.0, NAN, 1.0};
  CHECK_RC(rmadht_cache_lookup(c, 1, bad, out, &st), RMADHT_OK);
  CHECK(st == RMADHT_CACHE_MISS && isnan(out[0]));
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.nonfinite == 1);
  check_sums(c);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);

  /* Radius: neighbours exist, but none within a hundredth of a cell. */
  cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
  cfg.interp.radius = 0.01;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  store_points(c, NPTS, 0, f_linear);
  CHECK(query_points(c, f_linear, tol, 1.0) == 0);
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.refused_neighbours == NQ);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);

  test_outside(RMADHT_INTERP_LINEAR);
  test_outside(RMADHT_INTERP_IDW);
}

/* Input 2 left out of the neighbour key and phase-flagged: neighbours
   where it is absent (0) refuse a query where it is present. */
static void f_phase(const double *x, double *y) {
  y[0] = x[0] + x[1];
  y[1] = x[2] > 0 ? 1.0 : 0.0;
}

static void test_phase(void) {
  double tol[NOUT] = {0.1, 0.1};
  int nd[NIN] = {2, 2, 0};
  unsigned char phase[NIN] = {0, 0, 1};
  rmadht_cache_config cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
  cfg.interp.digits = nd;
  cfg.interp.phase = phase;
  cfg.interp.radius = 3.0;
  rmadht_cache *c;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  /* Rows 0..19 with input 2 present (1..2), then the same with it 0. */
  for (int absent = 0; absent < 2; absent++) {
    for (int i = rank; i < NPTS; i += nranks) {
      double x[NIN], y[NOUT];
      point((unsigned)i, x);
      x[2] = absent ? 0.0 : 1.0 + 0.05 * i;
      f_phase(x, y);
      CHECK_RC(rmadht_cache_store(c, 1, x, y), RMADHT_OK);
    }
    CHECK_RC(rmadht_cache_flush(c), RMADHT_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    double x[NIN], out[NOUT], y[NOUT];
    unsigned char st;
    query_point(777, x);
    x[2] = 1.5;
    f_phase(x, y);
    CHECK_RC(rmadht_cache_lookup(c, 1, x, out, &st), RMADHT_OK);
    /* No rank stores the next phase before every rank looked up. */
    MPI_Barrier(MPI_COMM_WORLD);
    rmadht_cache_stats s;
    CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
    if (!absent) {
      /* One phase only: served. */
      CHECK(st == RMADHT_CACHE_INTERPOLATED);
      CHECK(fabs(out[0] - y[0]) <= tol[0] && fabs(out[1] - y[1]) <= tol[1]);
    } else {
      /* The ring of 20 now holds absent rows only: all conflict. */
      CHECK(st == RMADHT_CACHE_MISS);
      CHECK(s.refused_phase == 1);
    }
  }
  check_sums(c);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}

/* Removed entries are stale neighbours.  The cache has no remove of its
   own; its exact table (rmadht_cache_get_table) is the route, and the only
   public way to an entry's key is to read the slots by location, whose
   values end with the exact inputs.  The last rank removes 16 of the
   bucket's 20 rows that way, in every mode, and flushes; after a barrier
   every rank's lookups find 4 of the 20 listed locations live, one fewer
   than min_neighbours, and are refused for too few neighbours.  The
   removal must be flushed (a remove is a write, visible to other ranks
   after rmadht_flush) and the lookups must wait for it (the barrier):
   without them the other ranks' lookups can run before the removal and
   still interpolate (seen on 4 ranks); so must the removal wait for the
   lookups before it (the first barrier). */
static void test_removed_neighbours(void) {
  enum { GONE = 16, SCAN = 1024 };
  double tol[NOUT] = {1e-9, 1e-9};
  static const enum rmadht_mode modes[] = {
      RMADHT_LOCK_FREE, RMADHT_FINE_LOCK, RMADHT_COARSE_LOCK};
  for (int m = 0; m < 3; m++) {
    rmadht_cache_config cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
    cfg.mode = modes[m];
    rmadht_cache *c;
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
    if (!c) return;
    store_points(c, NPTS, 0, f_linear);
    CHECK(query_points(c, f_linear, tol, 1.0) == NQ);
    /* No rank may still be looking up when the removal starts. */
    MPI_Barrier(MPI_COMM_WORLD);
    rmadht *t = NULL;
    CHECK_RC(rmadht_cache_get_table(c, &t), RMADHT_OK);
    rmadht_info info;
    CHECK_RC(rmadht_get_info(t, &info), RMADHT_OK);
    int removed = 0;
    if (rank == nranks - 1) {
      static rmadht_location locs[SCAN];
      static int status[SCAN];
      unsigned char *keys = malloc(SCAN * info.key_size);
      unsigned char *vals = malloc(SCAN * info.value_size);
      CHECK(keys && vals);
      for (int q = 0; q < nranks && keys && vals; q++)
        for (uint64_t at = 0; at < info.slots_per_rank; at += SCAN) {
          size_t n = info.slots_per_rank - at < SCAN
                         ? (size_t)(info.slots_per_rank - at) : SCAN;
          for (size_t j = 0; j < n; j++)
            CHECK_RC(rmadht_location_join(t, q, at + j, &locs[j]), RMADHT_OK);
          CHECK_RC(rmadht_read_loc_batch(t, n, locs, keys, vals, status),
                   RMADHT_OK);
          for (size_t j = 0; j < n; j++) {
            if (status[j] != RMADHT_OK) continue;
            double x[NIN], p[NIN];
            memcpy(x, vals + j * info.value_size + NOUT * sizeof(double),
                   sizeof x);
            for (int i = 0; i < GONE; i++) {
              point((unsigned)i, p);
              if (memcmp(x, p, sizeof x) != 0) continue;
              CHECK_RC(rmadht_remove(t, keys + j * info.key_size), RMADHT_OK);
              removed++;
            }
          }
        }
      free(keys);
      free(vals);
      CHECK(removed == GONE);
    }
    CHECK_RC(rmadht_flush(t), RMADHT_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    rmadht_cache_stats before, after;
    CHECK_RC(rmadht_cache_get_stats(c, &before), RMADHT_OK);
    CHECK(query_points(c, f_linear, tol, 1.0) == 0);
    CHECK_RC(rmadht_cache_get_stats(c, &after), RMADHT_OK);
    CHECK(after.refused_neighbours - before.refused_neighbours == NQ &&
          after.interpolated == before.interpolated);
    /* The rows kept still hit; a removed one misses and is refused. */
    check_exact_hit(c, GONE);
    double x[NIN], out[NOUT];
    unsigned char st;
    point(0, x);
    CHECK_RC(rmadht_cache_lookup(c, 1, x, out, &st), RMADHT_OK);
    CHECK(st == RMADHT_CACHE_MISS);
    check_sums(c);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
  }
}

/* Every rank appends to one neighbour key at once: NPTS rows in all, one
   per store call; all NPTS locations must be listed and valid, which a
   lookup needing NPTS neighbours shows.  Then NPTS more: still NPTS. */
static void test_concurrent_appends(void) {
  double tol[NOUT] = {1e9, 1e9};
  rmadht_cache_config cfg = interp_config(RMADHT_INTERP_IDW, tol);
  cfg.interp.max_neighbours = NPTS;
  cfg.interp.min_neighbours = NPTS;
  cfg.interp.radius = 10.0;
  rmadht_cache *c;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  for (int round = 0; round < 2; round++) {
    store_points(c, NPTS, (unsigned)(round * NPTS), f_linear);
    CHECK(query_points(c, f_linear, tol, 1.0) == NQ);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  rmadht_cache_stats s;
  CHECK_RC(rmadht_cache_get_stats_global(c, &s), RMADHT_OK);
  CHECK(s.index_dropped == 0 && s.dropped == 0);
  CHECK(s.stores == 2 * NPTS);
  CHECK(s.interpolated == (uint64_t)(2 * NQ * nranks));
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);

  /* With one more needed than listed, every lookup is refused. */
  cfg.interp.max_neighbours = NPTS + 1;
  cfg.interp.min_neighbours = NPTS + 1;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (!c) return;
  store_points(c, NPTS, 0, f_linear);
  CHECK(query_points(c, f_linear, tol, 1.0) == 0);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}

/* The first level (3 digits: cells of 0.01) lists at most a few of the
   NPTS rows spread over [1.00, 1.04)^3 per bucket, fewer than
   min_neighbours; the coarse level (2 digits) lists all of them. */
static const int fine_digits[NIN] = {3, 3, 3};

static rmadht_cache *coarse_cache(const double *tol, const int *coarse,
                                  double scale, func f) {
  rmadht_cache *c;
  rmadht_cache_config cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
  cfg.interp.digits = fine_digits;
  cfg.interp.coarse_digits = coarse;
  cfg.interp.coarse_tolerance_scale = scale;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  if (c) store_points(c, NPTS, 0, f);
  return c;
}

static void test_coarse_level(void) {
  double tol_lin[NOUT] = {1e-9, 1e-9}, tol_quad[NOUT] = {2e-2, 2e-2};
  rmadht_cache_stats s;
  /* Without the coarse level every query lacks neighbours. */
  rmadht_cache *c = coarse_cache(tol_lin, NULL, 0, f_linear);
  if (!c) return;
  CHECK(query_points(c, f_linear, tol_lin, 1.0) == 0);
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.refused_neighbours == NQ && s.interpolated_coarse == 0);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
  /* With it, every one is served there, within the scaled tolerance, and
     counted once. */
  double half[NOUT] = {tol_lin[0] / 2, tol_lin[1] / 2};
  c = coarse_cache(tol_lin, coarse_digits, 0.5, f_linear);
  if (!c) return;
  CHECK(query_points(c, f_linear, half, 1.0) == NQ);
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.interpolated == NQ && s.interpolated_coarse == NQ);
  CHECK(s.refused_neighbours == 0 && s.index_dropped == 0);
  check_sums(c);
  /* A row with an exact entry is a hit, at no level. */
  check_exact_hit(c, 0);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
  /* A curved function: served at the full tolerance, refused by the
     error estimate at a millionth of it. */
  c = coarse_cache(tol_quad, coarse_digits, 1.0, f_quadratic);
  if (!c) return;
  CHECK(query_points(c, f_quadratic, tol_quad, 1.0) > 0);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
  c = coarse_cache(tol_quad, coarse_digits, 1e-6, f_quadratic);
  if (!c) return;
  CHECK(query_points(c, f_quadratic, tol_quad, 1.0) == 0);
  CHECK_RC(rmadht_cache_get_stats(c, &s), RMADHT_OK);
  CHECK(s.refused_error + s.refused_outside == NQ && s.interpolated == 0);
  check_sums(c);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}

static void test_bad_settings(void) {
  static const int cd_same[NIN] = {2, 2, 2}, cd_finer[NIN] = {3, 1, 1},
                   cd_neg[NIN] = {-1, 1, 1}, cd_ok[NIN] = {1, 1, 0};
  double tol[NOUT] = {0.1, 0.1};
  int nd[NIN] = {2, 2, 2};
  rmadht_cache *c = NULL;
  rmadht_cache_config cfg;
#define BAD(stmt)                                                            \
  do {                                                                       \
    cfg = interp_config(RMADHT_INTERP_LINEAR, tol);                          \
    cfg.interp.digits = nd;                                                  \
    stmt;                                                                    \
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_ERR_ARG); \
    CHECK(c == NULL);                                                        \
    tol[0] = tol[1] = 0.1;                                                   \
    nd[0] = nd[1] = nd[2] = 2;                                               \
  } while (0)
  BAD(tol[1] = 0);
  BAD(tol[0] = -1);
  BAD(tol[1] = NAN);
  BAD(cfg.interp.tolerance = NULL);
  BAD(nd[0] = nd[1] = nd[2] = 6); /* not coarser */
  BAD(nd[1] = 7);                 /* finer than the exact key */
  BAD(nd[2] = -1);
  BAD(cfg.interp.digits = NULL);
  BAD(cfg.interp.min_neighbours = 21);
  BAD(cfg.interp.min_neighbours = 1);
  BAD(cfg.interp.max_neighbours = RMADHT_INTERP_MAX_NEIGHBOURS + 1);
  BAD(cfg.interp.radius = 0);
  BAD(cfg.interp.radius = NAN);
  BAD(cfg.interp.method = (enum rmadht_interp_method)7);
  /* The coarse level: coarser than the first, scale in (0, 1]. */
  BAD(cfg.interp.coarse_digits = cd_same; cfg.interp.coarse_tolerance_scale = 1);
  BAD(cfg.interp.coarse_digits = cd_finer; cfg.interp.coarse_tolerance_scale = 1);
  BAD(cfg.interp.coarse_digits = cd_neg; cfg.interp.coarse_tolerance_scale = 1);
  BAD(cfg.interp.coarse_digits = cd_ok; cfg.interp.coarse_tolerance_scale = 0);
  BAD(cfg.interp.coarse_digits = cd_ok; cfg.interp.coarse_tolerance_scale = 1.5);
  BAD(cfg.interp.coarse_digits = cd_ok; cfg.interp.coarse_tolerance_scale = NAN);
  BAD(cfg.interp.coarse_digits = cd_ok;
      cfg.interp.coarse_tolerance_scale = rank == nranks - 1 ? -1 : 1);
  /* On one rank only: every rank fails alike. */
  BAD(if (rank == nranks - 1) tol[0] = 0);
  BAD(if (rank == 0) nd[0] = nd[1] = nd[2] = 6);
#undef BAD
  /* Settings that differ across ranks would split the index. */
  if (nranks > 1) {
    cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
    cfg.interp.radius = rank == 0 ? 1.0 : 2.0;
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c),
             RMADHT_ERR_MISMATCH);
    cfg = interp_config(rank == 0 ? RMADHT_INTERP_NONE : RMADHT_INTERP_IDW,
                        tol);
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c),
             RMADHT_ERR_MISMATCH);
    /* A coarse level on one rank only, or with another scale. */
    cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
    cfg.interp.coarse_digits = rank == 0 ? cd_ok : NULL;
    cfg.interp.coarse_tolerance_scale = 1;
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c),
             RMADHT_ERR_MISMATCH);
    cfg.interp.coarse_digits = cd_ok;
    cfg.interp.coarse_tolerance_scale = rank == 0 ? 1 : 0.5;
    CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c),
             RMADHT_ERR_MISMATCH);
  }
  /* Off by default; the other fields are then ignored. */
  rmadht_cache_config_default(&cfg, NIN, NOUT);
  CHECK(cfg.interp.method == RMADHT_INTERP_NONE);
  cfg.bytes_per_rank = (size_t)1 << 20;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &c), RMADHT_OK);
  CHECK_RC(rmadht_cache_free(&c), RMADHT_OK);
}

static void test_dump_restore(void) {
  double tol[NOUT] = {1e-9, 1e-9};
  char path[64];
  snprintf(path, sizeof path, "cache_interp_n%d.bin", nranks);
  rmadht_cache_config cfg = interp_config(RMADHT_INTERP_LINEAR, tol);
  rmadht_cache *a, *b;
  rmadht *t;
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &a), RMADHT_OK);
  CHECK_RC(rmadht_cache_create(MPI_COMM_WORLD, &cfg, &b), RMADHT_OK);
  if (!a || !b) return;
  store_points(a, NPTS, 0, f_linear);
  CHECK_RC(rmadht_cache_get_table(a, &t), RMADHT_OK);
  CHECK_RC(rmadht_dump(t, path), RMADHT_OK);
  /* Restored over themselves, the entries keep their slots: the index
     still lists them. */
  CHECK_RC(rmadht_restore(t, path), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(query_points(a, f_linear, tol, 1.0) == NQ);
  /* A new cache gets the entries but not the index. */
  CHECK_RC(rmadht_cache_get_table(b, &t), RMADHT_OK);
  CHECK_RC(rmadht_restore(t, path), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  check_exact_hit(b, 5);
  CHECK(query_points(b, f_linear, tol, 1.0) == 0);
  rmadht_cache_stats s;
  CHECK_RC(rmadht_cache_get_stats(b, &s), RMADHT_OK);
  CHECK(s.refused_neighbours == NQ);
  MPI_Barrier(MPI_COMM_WORLD);
  store_points(b, NPTS, 0, f_linear);
  CHECK(query_points(b, f_linear, tol, 1.0) == NQ);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) remove(path);
  CHECK_RC(rmadht_cache_free(&a), RMADHT_OK);
  CHECK_RC(rmadht_cache_free(&b), RMADHT_OK);
}

/* The linear fit's leave-one-out residuals come from one fit (r_j over
   1 - H_jj); refitting k times without each neighbour must agree.  An
   input constant over the neighbours is left out, not fatal. */
static void test_mathematics(void) {
  enum { K = 12, D = 3, M = 2 };
  double u[K * D], y[K * M], pred[M], err[M], loo[M], p1[M], e1[M], ex;
  double work[256], u1[K * D], y1[K * M];
  CHECK(interp_work_doubles(K, D, M) <= 256);
  unsigned seed = 7;
  for (int j = 0; j < K; j++) {
    for (int i = 0; i < D; i++) {
      seed = seed * 1103515245u + 12345u;
      u[j * D + i] = ((seed >> 8) & 0xffff) / 65536.0 - 0.5;
    }
    u[j * D + 2] = 0.25; /* constant over the neighbours */
    y[j * M] = 1 + u[j * D] - 2 * u[j * D + 1] + u[j * D] * u[j * D];
    y[j * M + 1] = sin(3 * u[j * D + 1]);
  }
  CHECK(interp_linear(K, D, u, M, y, pred, err, &ex, work) == 0);
  loo[0] = loo[1] = 0;
  for (int out = 0; out < K; out++) {
    /* Without neighbour out, relative to it: its prediction is b0. */
    int n = 0;
    for (int j = 0; j < K; j++) {
      if (j == out) continue;
      for (int i = 0; i < D; i++)
        u1[n * D + i] = u[j * D + i] - u[out * D + i];
      memcpy(y1 + n * M, y + j * M, sizeof(double) * M);
      n++;
    }
    CHECK(interp_linear(K - 1, D, u1, M, y1, p1, e1, &ex, work) == 0);
    for (int o = 0; o < M; o++)
      loo[o] = fmax(loo[o], fabs(y[out * M + o] - p1[o]));
  }
  for (int o = 0; o < M; o++) {
    CHECK(err[o] > 1e-3); /* curved: not a perfect fit */
    CHECK(fabs(err[o] - loo[o]) <= 1e-9 * loo[o]);
  }
  /* Inverse distance: a neighbour at the query gives its own outputs. */
  memset(u1, 0, sizeof u1);
  u1[D] = 1;
  CHECK(interp_idw(2, D, u1, M, y, pred, err, &ex, work) == 0);
  CHECK(pred[0] == y[0] && pred[1] == y[1]);
  CHECK(err[0] == fabs(y[0] - y[M]));
  /* Two neighbours cannot fit a line in two inputs: inverse distance. */
  CHECK(interp_linear(2, D, u, M, y, pred, err, &ex, work) == 0);
  CHECK(ex == 1); /* no cloud from two points in two inputs */
  double w0 = 1 / (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  double w1 = 1 / (u[3] * u[3] + u[4] * u[4] + u[5] * u[5]);
  CHECK(fabs(pred[0] - (w0 * y[0] + w1 * y[M]) / (w0 + w1)) < 1e-12);
  CHECK(interp_idw(1, D, u, M, y, pred, err, &ex, work) ==
        INTERP_NO_ESTIMATE);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  test_mathematics();
  test_bad_settings();
  test_smooth();
  test_refusals();
  test_mixed_buckets();
  test_coarse_level();
  test_grouped_appends();
  test_phase();
  test_concurrent_appends();
  test_removed_neighbours();
  test_dump_restore();
  int rc = check_finish("mpi_cache_interp");
  MPI_Finalize();
  return rc;
}
