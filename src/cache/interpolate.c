/*
 * The mathematics of interpolation: which neighbours of a missed row may be
 * used, their scaled coordinates, the two estimators and the leave-one-out
 * error estimate that decides whether the result is served.
 * docs/interpolation.md states the same in formulas.
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

size_t interp_work_doubles(size_t kmax, size_t d, size_t m) {
  size_t p = d + 1;
  return p * p + p * m + 2 * p + d + kmax + m;
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
   other than skip (k: none skipped) into out[m]; acc holds m doubles. */
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

int interp_idw(size_t k, size_t d, const double *u, size_t m, const double *y,
               double *pred, double *err, double *work) {
  if (k < 2) return -1;
  idw_at(k, d, u, m, y, NULL, k, pred);
  for (size_t o = 0; o < m; o++) err[o] = 0;
  for (size_t j = 0; j < k; j++) {
    idw_at(k, d, u, m, y, u + j * d, j, work);
    for (size_t o = 0; o < m; o++) {
      double e = fabs(y[j * m + o] - work[o]);
      if (!(e <= err[o])) err[o] = e; /* NaN propagates */
    }
  }
  return 0;
}

/* ---- Local linear least squares -----------------------------------------

   y ~ b0 + b.u over the neighbours, with u relative to the query so that
   b0 is the estimate there.  Normal equations A b = X'y with A = X'X plus
   a tiny ridge on the slopes, by Cholesky.  The fit is a linear smoother
   y^ = H y with H = X A^-1 X', for which leaving neighbour j out changes
   its residual to r_j / (1 - H_jj) exactly (ridge included), so the
   leave-one-out residuals come from one fit instead of k. */

/* In-place lower Cholesky of the p x p matrix a; -1 if not positive. */
static int cholesky(double *a, size_t p) {
  for (size_t j = 0; j < p; j++) {
    double s = a[j * p + j];
    for (size_t l = 0; l < j; l++) s -= a[j * p + l] * a[j * p + l];
    if (!(s > 0)) return -1;
    double piv = sqrt(s);
    a[j * p + j] = piv;
    for (size_t i = j + 1; i < p; i++) {
      double t = a[i * p + j];
      for (size_t l = 0; l < j; l++) t -= a[i * p + l] * a[j * p + l];
      a[i * p + j] = t / piv;
    }
  }
  return 0;
}

/* Solves L z = b in place (b of p items, stride s between them). */
static void forward(const double *l, size_t p, double *b, size_t s) {
  for (size_t i = 0; i < p; i++) {
    double t = b[i * s];
    for (size_t j = 0; j < i; j++) t -= l[i * p + j] * b[j * s];
    b[i * s] = t / l[i * p + i];
  }
}

/* Solves L' z = b in place. */
static void backward(const double *l, size_t p, double *b, size_t s) {
  for (size_t i = p; i-- > 0;) {
    double t = b[i * s];
    for (size_t j = i + 1; j < p; j++) t -= l[j * p + i] * b[j * s];
    b[i * s] = t / l[i * p + i];
  }
}

int interp_linear(size_t k, size_t d, const double *u, size_t m,
                  const double *y, double *pred, double *err, double *work) {
  /* Inputs constant over the neighbours carry no slope.  act lists the
     others' indices, kept as doubles (exact below 2^53) so that one work
     array serves. */
  size_t da = 0;
  double *act = work;
  for (size_t i = 0; i < d; i++) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t j = 0; j < k; j++) {
      double v = u[j * d + i];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (hi - lo > DEGENERATE_SPREAD) act[da++] = (double)i;
  }
  size_t p = da + 1;
  /* One residual degree of freedom at least, else inverse distance. */
  if (k < p + 1) return interp_idw(k, d, u, m, y, pred, err, work + d);
  double *a = work + d, *b = a + p * p, *x = b + p * m, *z = x + p;

  memset(a, 0, p * p * sizeof *a);
  memset(b, 0, p * m * sizeof *b);
  for (size_t j = 0; j < k; j++) {
    x[0] = 1;
    for (size_t i = 0; i < da; i++) x[i + 1] = u[j * d + (size_t)act[i]];
    for (size_t r = 0; r < p; r++) {
      for (size_t c = 0; c <= r; c++) a[r * p + c] += x[r] * x[c];
      for (size_t o = 0; o < m; o++) b[r * m + o] += x[r] * y[j * m + o];
    }
  }
  double big = 0;
  for (size_t r = 1; r < p; r++)
    if (a[r * p + r] > big) big = a[r * p + r];
  for (size_t r = 1; r < p; r++) a[r * p + r] += RIDGE * big;
  if (cholesky(a, p) != 0) return -1;
  for (size_t o = 0; o < m; o++) {
    forward(a, p, b + o, m);
    backward(a, p, b + o, m);
    pred[o] = b[o];
    err[o] = 0;
  }
  for (size_t j = 0; j < k; j++) {
    x[0] = 1;
    for (size_t i = 0; i < da; i++) x[i + 1] = u[j * d + (size_t)act[i]];
    memcpy(z, x, p * sizeof *z);
    forward(a, p, z, 1);
    double h = 0;
    for (size_t r = 0; r < p; r++) h += z[r] * z[r];
    if (!(1 - h >= MIN_FREEDOM)) return -1;
    for (size_t o = 0; o < m; o++) {
      double fit = 0;
      for (size_t r = 0; r < p; r++) fit += x[r] * b[r * m + o];
      double e = fabs(y[j * m + o] - fit) / (1 - h);
      if (!(e <= err[o])) err[o] = e;
    }
  }
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

enum { ROW_SERVED = 0, ROW_FEW = 1, ROW_PHASE = 2, ROW_ERROR = 3 };

/* 0 zero (below the floor), 1 positive, 2 negative: as the key's class. */
static int input_class(double x, double zero_below) {
  double a = fabs(x);
  return (a == 0 || a < zero_below) ? 0 : x > 0 ? 1 : 2;
}

static double quantity(const interp_state *s, size_t i, double x) {
  if (input_class(x, s->zero_below) == 0) return 0;
  return s->log10[i] ? log10(fabs(x)) : x;
}

/* The exact inputs of the entry read at neighbour j. */
static const double *entry_inputs(const interp_state *s,
                                  const unsigned char *vals, size_t j) {
  return (const double *)(const void *)(vals + j * s->value_size) + s->n_out;
}

static const double *entry_outputs(const interp_state *s,
                                   const unsigned char *vals, size_t j) {
  return (const double *)(const void *)(vals + j * s->value_size);
}

/* Cell widths into scale[0..n_in), the query's quantities after them. */
static void row_scale(interp_state *s, const double *x, size_t nloc,
                      const unsigned char *vals, const int *status) {
  double *width = s->scale, *q = s->scale + s->n_in;
  for (size_t i = 0; i < s->n_in; i++) {
    q[i] = quantity(s, i, x[i]);
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
    int cq = input_class(x[i], s->zero_below);
    double lo = q[i], hi = q[i];
    for (size_t j = 0; j < nloc; j++) {
      if (status[j] != RMADHT_OK) continue;
      double xj = entry_inputs(s, vals, j)[i];
      if (s->log10[i] && input_class(xj, s->zero_below) != cq) continue;
      double v = quantity(s, i, xj);
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (hi > lo) width[i] = hi - lo;
  }
}

int interp_row(interp_state *s, const double *x, size_t nloc,
               const unsigned char *vals, const int *status, double *out) {
  size_t n_in = s->n_in, n_out = s->n_out, k = 0;
  row_scale(s, x, nloc, vals, status);
  const double *width = s->scale, *q = s->scale + n_in;
  double r2max = s->radius * s->radius;
  for (size_t j = 0; j < nloc && k < s->kmax; j++) {
    if (status[j] != RMADHT_OK) continue;
    const double *xj = entry_inputs(s, vals, j);
    double *u = s->u + k * n_in, d2 = 0;
    int conflict = 0, unusable = 0;
    for (size_t i = 0; i < n_in && !unusable; i++) {
      int cq = input_class(x[i], s->zero_below);
      int cj = input_class(xj[i], s->zero_below);
      if (s->phase[i] && (cq != 0) != (cj != 0)) {
        /* Measured by its other inputs alone: a neighbour close in them
           but in another phase puts the query at a phase boundary. */
        conflict = 1;
        u[i] = 0;
        continue;
      }
      /* log10 of a zero, or of another sign, has no distance. */
      if (s->log10[i] && cq != cj) {
        unusable = 1;
        break;
      }
      u[i] = (quantity(s, i, xj[i]) - q[i]) / width[i];
      d2 += u[i] * u[i];
    }
    if (unusable || !(d2 <= r2max)) continue;
    if (conflict) return ROW_PHASE;
    memcpy(s->y + k * n_out, entry_outputs(s, vals, j),
           n_out * sizeof *s->y);
    k++;
  }
  if (k < s->kmin) return ROW_FEW;
  double *pred = s->est, *err = s->est + n_out;
  int rc = s->method == RMADHT_INTERP_LINEAR
               ? interp_linear(k, n_in, s->u, n_out, s->y, pred, err, s->work)
               : interp_idw(k, n_in, s->u, n_out, s->y, pred, err, s->work);
  if (rc != 0) return ROW_ERROR;
  for (size_t o = 0; o < n_out; o++)
    if (!(err[o] <= s->tol[o]) || !isfinite(pred[o])) return ROW_ERROR;
  memcpy(out, pred, n_out * sizeof *out);
  return ROW_SERVED;
}
