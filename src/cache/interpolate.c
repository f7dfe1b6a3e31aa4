/*
 * The mathematics of interpolation: which neighbours of a missed row may be
 * used, their scaled coordinates, the two estimators and the leave-one-out
 * error estimate that decides whether the result is served.
 * docs/explanation/interpolation.md states the same in formulas.
 *
 * Everything here is local arithmetic on buffers the neighbour index
 * (neighbours.c) has filled: no MPI, no allocation.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "interp.h"
#include "round.h"

/* Below this spread (in scaled units) an input is constant over the
   neighbours: it carries no slope and is left out of the linear fit. */
#define DEGENERATE_SPREAD 1e-12
/* Ridge on the slopes, relative to the largest diagonal element of the
   normal equations: enough to keep them positive definite when inputs are
   nearly collinear, small enough that the bias it puts on a slope (of
   this relative size) stays near rounding. */
#define RIDGE 1e-12
/* A neighbour whose leverage leaves less than this of its own residual
   cannot be predicted from the others: no error estimate. */
#define MIN_FREEDOM 1e-6

/* Work layout: act (d), a (p x p), z ((kmax + 1) x p: L^-1 x_j of every
   neighbour, then of the query), c (p x m), x (p), then m for inverse
   distance's leave-one-out estimates. */
size_t interp_work_doubles(size_t kmax, size_t d, size_t m) {
  size_t p = d + 1;
  return d + p * p + (kmax + 1) * p + p * m + p + m;
}

/* ---- The neighbours' cloud ------------------------------------------------

   Both estimators share one geometric measure, on the normal matrix of a
   linear fit A = X'X (rows x_j = (1, u_j)) over the inputs that vary:
   the leverage x' A^-1 x of a point equals 1/k plus its squared
   Mahalanobis distance from the neighbours' centroid, in the metric of
   their spread.  A query whose leverage exceeds every neighbour's lies
   outside the ellipsoid the neighbours span: an extrapolation, whose error
   the leave-one-out residuals (all measured at the neighbours) understate.
   The error of a linear fit to a curved function grows with the squared
   distance from the centroid, so the estimate is scaled by the ratio of
   the query's squared distance to the farthest neighbour's, when above
   1: the "extrapolation factor". */

/* The inputs that vary over the neighbours, as indices (exact in a
   double) in act; returns how many.  An input constant over them carries
   no slope and no spread. */
static size_t active_inputs(size_t k, size_t d, const double *u,
                            double *act) {
  size_t da = 0;
  for (size_t i = 0; i < d; i++) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t j = 0; j < k; j++) {
      double v = u[j * d + i];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (hi - lo > DEGENERATE_SPREAD) act[da++] = (double)i;
  }
  return da;
}

/* x = (1, the active inputs of u_j); u_j NULL is the query, the origin. */
static void design_row(const double *uj, const double *act, size_t da,
                       double *x) {
  x[0] = 1;
  for (size_t i = 0; i < da; i++) x[i + 1] = uj ? uj[(size_t)act[i]] : 0.0;
}

/* In-place lower Cholesky factor L of the p x p matrix a, with the
   reciprocals of its diagonal stored on the diagonal (forward() then
   multiplies where it would divide, once per point); -1 if not
   positive. */
static int cholesky(double *a, size_t p) {
  for (size_t j = 0; j < p; j++) {
    double s = a[j * p + j];
    for (size_t l = 0; l < j; l++) s -= a[j * p + l] * a[j * p + l];
    if (!(s > 0)) return -1;
    double inv = 1 / sqrt(s);
    a[j * p + j] = inv;
    for (size_t i = j + 1; i < p; i++) {
      double t = a[i * p + j];
      for (size_t l = 0; l < j; l++) t -= a[i * p + l] * a[j * p + l];
      a[i * p + j] = t * inv;
    }
  }
  return 0;
}

/* Builds A = X'X plus the ridge into a and factors it: 0, or -1 when it is
   not positive definite.  x is scratch of p doubles. */
static int factor_normal(size_t k, size_t d, const double *u,
                         const double *act, size_t da, double *a,
                         double *x) {
  size_t p = da + 1;
  memset(a, 0, p * p * sizeof *a);
  for (size_t j = 0; j < k; j++) {
    design_row(u + j * d, act, da, x);
    for (size_t r = 0; r < p; r++)
      for (size_t c = 0; c <= r; c++) a[r * p + c] += x[r] * x[c];
  }
  double big = 0;
  for (size_t r = 1; r < p; r++)
    if (a[r * p + r] > big) big = a[r * p + r];
  for (size_t r = 1; r < p; r++) a[r * p + r] += RIDGE * big;
  return cholesky(a, p);
}

/* z = L^-1 x for the factor l of cholesky(), by forward substitution. */
static void forward(const double *l, size_t p, const double *x, double *z) {
  for (size_t i = 0; i < p; i++) {
    double t = x[i];
    for (size_t j = 0; j < i; j++) t -= l[i * p + j] * z[j];
    z[i] = t * l[i * p + i];
  }
}

static double norm2(const double *z, size_t p) {
  double h = 0;
  for (size_t r = 0; r < p; r++) h += z[r] * z[r];
  return h;
}

/* Row j of z (p each) = L^-1 x_j for every neighbour, row k = L^-1 x of
   the query.  A point's leverage x' A^-1 x is then |L^-1 x|^2, and the
   fit needs nothing else (interp_linear).  x is scratch. */
static void whiten(const double *l, size_t p, size_t k, size_t d,
                   const double *u, const double *act, size_t da, double *z,
                   double *x) {
  for (size_t j = 0; j <= k; j++) {
    design_row(j < k ? u + j * d : NULL, act, da, x);
    forward(l, p, x, z + j * p);
  }
}

/* The extrapolation factor from the leverages of the query, hq, and of
   the farthest neighbour, hmax: 1 when hq <= hmax. */
static double extrapolation(size_t k, double hmax, double hq) {
  double base = 1.0 / (double)k;
  if (!(hq > hmax)) return 1;
  /* hmax > 1/k whenever some neighbour lies off the centroid, which an
     input that varies guarantees; with none varying, hq = 1/k. */
  return hmax > base ? (hq - base) / (hmax - base) : INFINITY;
}

/* ---- Inverse-distance weighting ----------------------------------------

   Shepard's estimate with weights 1/dist^2; a neighbour at distance 0
   gives its own outputs.  The leave-one-out residual of neighbour j is its
   outputs minus the same estimate at its coordinates from the others. */

static double dist2(const double *a, const double *b, size_t d) {
  double s = 0;
  for (size_t i = 0; i < d; i++) {
    double t = a[i] - (b ? b[i] : 0.0);
    s += t * t;
  }
  return s;
}

/* Estimate at point p (NULL: the origin, i.e. the query) from neighbours
   other than skip (k: none skipped) into out[m]. */
static void idw_at(size_t k, size_t d, const double *u, size_t m,
                   const double *y, const double *p, size_t skip,
                   double *out) {
  double wsum = 0;
  for (size_t o = 0; o < m; o++) out[o] = 0;
  for (size_t j = 0; j < k; j++) {
    if (j == skip) continue;
    double r2 = dist2(u + j * d, p, d);
    if (r2 == 0) {
      memcpy(out, y + j * m, m * sizeof *out);
      return;
    }
    double w = 1.0 / r2;
    wsum += w;
    for (size_t o = 0; o < m; o++) out[o] += w * y[j * m + o];
  }
  for (size_t o = 0; o < m; o++) out[o] /= wsum;
}

/* Inverse distance without the cloud test: the linear method's fallback
   when the neighbours are too few to give the cloud a shape. */
static int idw_only(size_t k, size_t d, const double *u, size_t m,
                    const double *y, double *pred, double *err,
                    double *acc) {
  if (k < 2) return INTERP_NO_ESTIMATE;
  idw_at(k, d, u, m, y, NULL, k, pred);
  for (size_t o = 0; o < m; o++) err[o] = 0;
  for (size_t j = 0; j < k; j++) {
    idw_at(k, d, u, m, y, u + j * d, j, acc);
    for (size_t o = 0; o < m; o++) {
      double e = fabs(y[j * m + o] - acc[o]);
      if (!(e <= err[o])) err[o] = e; /* NaN propagates */
    }
  }
  return 0;
}

int interp_idw(size_t k, size_t d, const double *u, size_t m, const double *y,
               double *pred, double *err, double *extrap, double *work) {
  double *act = work, *a = act + d;
  size_t da = active_inputs(k, d, u, act), p = da + 1;
  double *z = a + p * p, *c = z + (k + 1) * p, *x = c + p * m, *acc = x + p;
  *extrap = 1;
  /* Too few neighbours to give the cloud a shape in every input that
     varies: no factor (the radius alone bounds the reach). */
  if (k >= p + 1) {
    if (factor_normal(k, d, u, act, da, a, x) != 0) return INTERP_NO_ESTIMATE;
    whiten(a, p, k, d, u, act, da, z, x);
    double hmax = 0;
    for (size_t j = 0; j < k; j++) {
      double h = norm2(z + j * p, p);
      if (h > hmax) hmax = h;
    }
    *extrap = extrapolation(k, hmax, norm2(z + k * p, p));
  }
  return idw_only(k, d, u, m, y, pred, err, acc);
}

/* ---- Local linear least squares -----------------------------------------

   y ~ b0 + b.u over the neighbours, with u relative to the query so that
   b0 is the estimate there.  Normal equations A b = X'y with A = X'X plus
   a tiny ridge on the slopes, by Cholesky A = L L'.  The fit is a linear
   smoother y^ = H y with H = X A^-1 X', for which leaving neighbour j out
   changes its residual to r_j / (1 - H_jj) exactly (ridge included), so
   the leave-one-out residuals come from one fit instead of k.

   With z_j = L^-1 x_j and c = L^-1 X'y = sum_j z_j y_j', every quantity
   is a dot product of z's: H_jj = |z_j|^2, the fitted value at neighbour
   j is x_j' A^-1 X'y = z_j . c, and the estimate at the query (design row
   x_0 = (1, 0, ...)) is z_0 . c, whose leverage |z_0|^2 the extrapolation
   factor needs anyway.  So one forward substitution per point is all the
   solving there is: no backward substitution, no slopes. */

int interp_linear(size_t k, size_t d, const double *u, size_t m,
                  const double *y, double *pred, double *err, double *extrap,
                  double *work) {
  double *act = work, *a = act + d;
  size_t da = active_inputs(k, d, u, act), p = da + 1;
  double *z = a + p * p, *c = z + (k + 1) * p, *x = c + p * m, *acc = x + p;
  *extrap = 1;
  /* One residual degree of freedom at least, else inverse distance. */
  if (k < p + 1) return idw_only(k, d, u, m, y, pred, err, acc);
  if (factor_normal(k, d, u, act, da, a, x) != 0) return INTERP_NO_ESTIMATE;
  whiten(a, p, k, d, u, act, da, z, x);
  memset(c, 0, p * m * sizeof *c);
  for (size_t j = 0; j < k; j++) {
    const double *zj = z + j * p, *yj = y + j * m;
    for (size_t r = 0; r < p; r++)
      for (size_t o = 0; o < m; o++) c[r * m + o] += zj[r] * yj[o];
  }
  const double *z0 = z + k * p;
  for (size_t o = 0; o < m; o++) {
    double t = 0;
    for (size_t r = 0; r < p; r++) t += z0[r] * c[r * m + o];
    pred[o] = t;
    err[o] = 0;
  }
  double hmax = 0;
  for (size_t j = 0; j < k; j++) {
    const double *zj = z + j * p;
    double h = norm2(zj, p);
    if (h > hmax) hmax = h;
    if (!(1 - h >= MIN_FREEDOM)) return INTERP_NO_ESTIMATE;
    double inv = 1 / (1 - h);
    for (size_t o = 0; o < m; o++) {
      double fit = 0;
      for (size_t r = 0; r < p; r++) fit += zj[r] * c[r * m + o];
      double e = fabs(y[j * m + o] - fit) * inv;
      if (!(e <= err[o])) err[o] = e;
    }
  }
  *extrap = extrapolation(k, hmax, norm2(z0, p));
  return 0;
}

/* ---- One missed row ------------------------------------------------------

   Coordinates are the rounded quantity of each input (log10|x| where the
   key takes logs, else x; 0 for an input below the zero floor), relative
   to the query and divided by the neighbour key's cell width there: the
   decimal unit of its last kept digit.  Every neighbour of a bucket then
   lies within one unit of the query in each keyed input, whatever the
   input's magnitude.  An input left out of the neighbour key is divided by
   its spread over the query and the candidates instead. */

enum {
  ROW_SERVED = 0,
  ROW_FEW = 1,
  ROW_PHASE = 2,
  ROW_ERROR = 3,
  ROW_OUTSIDE = 4
};

static const double *entry_outputs(const interp_state *s,
                                   const unsigned char *vals, size_t j) {
  return (const double *)(const void *)(vals + j * s->value_size);
}

/* Cell widths into scale[0..n_in), the query's quantities after them;
   the query's classes into qclass. */
static void row_scale(interp_state *s, const double *x, size_t nloc,
                      const int *status, const unsigned char *lclass,
                      const double *lq, unsigned char *qclass) {
  size_t n_in = s->n_in;
  double *width = s->scale, *q = s->scale + n_in;
  for (size_t i = 0; i < n_in; i++) {
    qclass[i] = (unsigned char)round_class(x[i], s->zero_below);
    q[i] = round_quantity(x[i], qclass[i], s->log10[i]);
    width[i] = 1;
    if (s->digits[i] > 0) {
      if (q[i] != 0) {
        uint64_t sig;
        int e;
        round_decimal(fabs(q[i]), s->digits[i], &sig, &e);
        width[i] = pow(10.0, e);
      }
      continue;
    }
    double lo = q[i], hi = q[i];
    for (size_t j = 0; j < nloc; j++) {
      if (status[j] != RMADHT_OK) continue;
      if (s->log10[i] && lclass[j * n_in + i] != qclass[i]) continue;
      double v = lq[j * n_in + i];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (hi > lo) width[i] = hi - lo;
  }
}

int interp_row(interp_state *s, const double *x, size_t nloc,
               const unsigned char *vals, const int *status,
               const unsigned char *lclass, const double *lq, double *out) {
  size_t n_in = s->n_in, n_out = s->n_out, k = 0, valid = 0;
  /* Too few entries left once the stale ones are dropped: no need to
     measure them. */
  for (size_t j = 0; j < nloc; j++) valid += status[j] == RMADHT_OK;
  if (valid < s->kmin) return ROW_FEW;
  unsigned char *qclass = s->qclass;
  row_scale(s, x, nloc, status, lclass, lq, qclass);
  const double *width = s->scale, *q = s->scale + n_in;
  double r2max = s->radius * s->radius;
  for (size_t j = 0; j < nloc && k < s->kmax; j++) {
    if (status[j] != RMADHT_OK) continue;
    const unsigned char *cj = lclass + j * n_in;
    const double *qj = lq + j * n_in;
    double *u = s->u + k * n_in, d2 = 0;
    int conflict = 0, unusable = 0;
    for (size_t i = 0; i < n_in && !unusable; i++) {
      int cq = qclass[i];
      if (s->phase[i] && (cq != 0) != (cj[i] != 0)) {
        /* Measured by its other inputs alone: a neighbour close in them
           but in another phase puts the query at a phase boundary. */
        conflict = 1;
        u[i] = 0;
        continue;
      }
      /* log10 of a zero, or of another sign, has no distance. */
      if (s->log10[i] && cq != cj[i]) {
        unusable = 1;
        break;
      }
      u[i] = (qj[i] - q[i]) / width[i];
      d2 += u[i] * u[i];
    }
    if (unusable || !(d2 <= r2max)) continue;
    if (conflict) return ROW_PHASE;
    memcpy(s->y + k * n_out, entry_outputs(s, vals, j),
           n_out * sizeof *s->y);
    k++;
  }
  if (k < s->kmin) return ROW_FEW;
  double *pred = s->est, *err = s->est + n_out, extrap;
  int rc = s->method == RMADHT_INTERP_LINEAR
               ? interp_linear(k, n_in, s->u, n_out, s->y, pred, err, &extrap,
                               s->work)
               : interp_idw(k, n_in, s->u, n_out, s->y, pred, err, &extrap,
                            s->work);
  if (rc != 0) return ROW_ERROR;
  /* Over the tolerance at the neighbours already: an error refusal; only
     once scaled to the query's distance: an extrapolation refusal. */
  int outside = 0;
  for (size_t o = 0; o < n_out; o++) {
    if (!(err[o] <= s->tol[o]) || !isfinite(pred[o])) return ROW_ERROR;
    if (!(err[o] * extrap <= s->tol[o])) outside = 1;
  }
  if (outside) return ROW_OUTSIDE;
  memcpy(out, pred, n_out * sizeof *out);
  return ROW_SERVED;
}
