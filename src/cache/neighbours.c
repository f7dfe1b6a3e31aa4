/*
 * The neighbour index: a second table whose key is a row of inputs rounded
 * more coarsely than the exact key (a "bucket"), and whose value is a
 * bounded list of the locations of exact entries with that coarse key.
 *
 * A bucket's value:
 *   uint32 count   locations in use, 0..kmax
 *   uint32 next    once full, the slot of the oldest location, replaced
 *                  next (a ring)
 *   kmax items of
 *     rmadht_location  where the exact entry was written
 *     uint64 hash      XXH3 of the exact key written there
 * Appends go through rmadht_update_batch, so concurrent appends of all
 * ranks to one bucket lose nothing; a location already listed is kept
 * once (with the hash of the key written there last).  Locations go stale
 * when their entry is overwritten by another key or evicted; a lookup
 * reads the key at each location with the entry and skips those whose
 * key no longer has the listed hash (or whose slot is empty), and the
 * ring replaces them as new entries arrive.  Comparing a hash costs a
 * fraction of rebuilding the coarse key from the entry's inputs, which
 * takes a logarithm and a decimal rounding per input.
 *
 * Lookups cost two batch calls per chunk whatever the number of misses:
 * one read of the distinct buckets, one rmadht_read_loc_batch of the
 * locations listed by those buckets that list enough of them for an
 * interpolation (min_neighbours).
 *
 * A coarse level (coarse_digits) is a second state of the same kind with
 * its own index: every append goes to both, and the rows one lookup chunk
 * refuses for too few neighbours go on to it, two more batch calls for
 * all of them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "interp.h"
#include "round.h"

#define BUCKET_HEADER 8
#define ITEM_SIZE (sizeof(rmadht_location) + sizeof(uint64_t))

int interp_check(const rmadht_cache_config *cfg, int default_digits) {
  const rmadht_cache_interp *ip = &cfg->interp;
  if (ip->method == RMADHT_INTERP_NONE) return RMADHT_OK;
  if (ip->method != RMADHT_INTERP_IDW && ip->method != RMADHT_INTERP_LINEAR)
    return RMADHT_ERR_ARG;
  if (!ip->digits || !ip->tolerance) return RMADHT_ERR_ARG;
  int coarser = 0;
  for (size_t i = 0; i < cfg->n_inputs; i++) {
    int exact = cfg->digits ? cfg->digits[i] : default_digits;
    if (ip->digits[i] < 0 || ip->digits[i] > exact) return RMADHT_ERR_ARG;
    if (ip->digits[i] < exact) coarser = 1;
  }
  if (!coarser) return RMADHT_ERR_ARG;
  if (ip->max_neighbours < 2 ||
      ip->max_neighbours > RMADHT_INTERP_MAX_NEIGHBOURS ||
      ip->min_neighbours < 2 || ip->min_neighbours > ip->max_neighbours)
    return RMADHT_ERR_ARG;
  if (!(ip->radius > 0) || !isfinite(ip->radius)) return RMADHT_ERR_ARG;
  for (size_t o = 0; o < cfg->n_outputs; o++)
    if (!(ip->tolerance[o] > 0)) return RMADHT_ERR_ARG; /* NaN fails too */
  if (!ip->coarse_digits) return RMADHT_OK;
  /* The coarse level must be coarser than the first, or it would list the
     same too few neighbours again. */
  coarser = 0;
  for (size_t i = 0; i < cfg->n_inputs; i++) {
    if (ip->coarse_digits[i] < 0 || ip->coarse_digits[i] > ip->digits[i])
      return RMADHT_ERR_ARG;
    if (ip->coarse_digits[i] < ip->digits[i]) coarser = 1;
  }
  if (!coarser) return RMADHT_ERR_ARG;
  /* Wider neighbour sets fit a curved function worse between their
     points than at them; a scale below 1 keeps the coarse level's served
     errors near the first level's (docs/explanation/interpolation.md). */
  double f = ip->coarse_tolerance_scale;
  if (!(f > 0 && f <= 1)) return RMADHT_ERR_ARG; /* NaN fails too */
  return RMADHT_OK;
}

int interp_free(interp_state *s) {
  if (!s) return RMADHT_OK;
  int rc = interp_free(s->coarse);
  int rc2 = s->index ? rmadht_free(&s->index) : RMADHT_OK;
  if (rc == RMADHT_OK) rc = rc2;
  free(s->retry);
  free(s->digits);
  free(s->phase);
  free(s->tol);
  free(s->bkeys);
  free(s->bvals);
  free(s->bstatus);
  free(s->bucket_of);
  free(s->slots);
  free(s->loc_first);
  free(s->locs);
  free(s->lvals);
  free(s->lstatus);
  free(s->lkeys);
  free(s->lhash);
  free(s->new_hash);
  free(s->lclass);
  free(s->lq);
  free(s->new_locs);
  free(s->ustatus);
  free(s->u);
  free(s->y);
  free(s->work);
  free(s->est);
  free(s->scale);
  free(s->qclass);
  free(s->skey);
  free(s);
  return rc;
}

/* One level's state: neighbour-key digits and tolerances times
   tol_scale as given, everything else from cfg->interp. */
static interp_state *alloc_level(const rmadht_cache_config *cfg,
                                 size_t chunk, const int *exact_digits,
                                 const unsigned char *log10,
                                 const int *digits, double tol_scale) {
  const rmadht_cache_interp *ip = &cfg->interp;
  interp_state *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  size_t n_in = cfg->n_inputs, n_out = cfg->n_outputs, kmax = ip->max_neighbours;
  s->method = ip->method;
  s->n_in = n_in;
  s->n_out = n_out;
  s->chunk = chunk;
  s->kmax = kmax;
  s->kmin = ip->min_neighbours;
  s->radius = ip->radius;
  s->zero_below = cfg->zero_below;
  s->exact_digits = exact_digits;
  s->log10 = log10;
  s->index_bytes = ip->bytes_per_rank ? ip->bytes_per_rank
                                      : cfg->bytes_per_rank / 4;
  s->key_size = n_in * ROUND_KEY_BYTES;
  s->bucket_size = BUCKET_HEADER + kmax * ITEM_SIZE;
  s->value_size = (n_out + n_in) * sizeof(double);
  s->digits = malloc(n_in * sizeof *s->digits);
  s->phase = calloc(n_in, 1);
  s->tol = malloc(n_out * sizeof *s->tol);
  s->bkeys = malloc(chunk * s->key_size);
  s->bvals = malloc(chunk * s->bucket_size);
  s->bstatus = malloc(chunk * sizeof *s->bstatus);
  s->bucket_of = malloc(chunk * sizeof *s->bucket_of);
  s->slots = malloc(2 * chunk * sizeof *s->slots);
  s->loc_first = malloc((chunk + 1) * sizeof *s->loc_first);
  s->locs = malloc(chunk * kmax * sizeof *s->locs);
  s->lvals = malloc(chunk * kmax * s->value_size);
  s->lstatus = malloc(chunk * kmax * sizeof *s->lstatus);
  s->lkeys = malloc(chunk * kmax * s->key_size);
  s->lhash = malloc(chunk * kmax * sizeof *s->lhash);
  s->new_hash = malloc(chunk * sizeof *s->new_hash);
  s->lclass = malloc(chunk * kmax * n_in);
  s->lq = malloc(chunk * kmax * n_in * sizeof *s->lq);
  s->new_locs = malloc(chunk * sizeof *s->new_locs);
  s->ustatus = malloc(chunk * sizeof *s->ustatus);
  s->u = malloc(kmax * n_in * sizeof *s->u);
  s->y = malloc(kmax * n_out * sizeof *s->y);
  s->work = malloc(interp_work_doubles(kmax, n_in, n_out) * sizeof *s->work);
  s->est = malloc(2 * n_out * sizeof *s->est);
  s->scale = malloc(2 * n_in * sizeof *s->scale);
  s->qclass = malloc(n_in);
  s->skey = malloc(s->key_size);
  if (!s->digits || !s->phase || !s->tol || !s->bkeys || !s->bvals ||
      !s->bstatus || !s->bucket_of || !s->slots || !s->loc_first ||
      !s->locs || !s->lvals || !s->lstatus || !s->lclass || !s->lq ||
      !s->lkeys || !s->lhash || !s->new_hash || !s->new_locs || !s->ustatus ||
      !s->u || !s->y || !s->work || !s->est || !s->scale || !s->qclass ||
      !s->skey) {
    interp_free(s);
    return NULL;
  }
  memcpy(s->digits, digits, n_in * sizeof *s->digits);
  if (ip->phase)
    for (size_t i = 0; i < n_in; i++) s->phase[i] = ip->phase[i] != 0;
  for (size_t o = 0; o < n_out; o++) s->tol[o] = ip->tolerance[o] * tol_scale;
  return s;
}

interp_state *interp_alloc(const rmadht_cache_config *cfg, size_t chunk,
                           const int *exact_digits,
                           const unsigned char *log10) {
  const rmadht_cache_interp *ip = &cfg->interp;
  interp_state *s =
      alloc_level(cfg, chunk, exact_digits, log10, ip->digits, 1.0);
  if (!s || !ip->coarse_digits) return s;
  s->retry = malloc(chunk * sizeof *s->retry);
  s->coarse = alloc_level(cfg, chunk, exact_digits, log10, ip->coarse_digits,
                          ip->coarse_tolerance_scale);
  if (!s->retry || !s->coarse) {
    interp_free(s);
    return NULL;
  }
  return s;
}

uint64_t interp_fingerprint(const interp_state *s, uint64_t h) {
  uint64_t v[6] = {(uint64_t)s->method, s->kmax, s->kmin, 0, s->index_bytes,
                   0};
  memcpy(&v[3], &s->radius, sizeof(double));
  h = XXH3_64bits_withSeed(v, sizeof v, h);
  h = XXH3_64bits_withSeed(s->digits, s->n_in * sizeof *s->digits, h);
  h = XXH3_64bits_withSeed(s->phase, s->n_in, h);
  h = XXH3_64bits_withSeed(s->tol, s->n_out * sizeof *s->tol, h);
  /* A coarse level or none must agree too: its index is collective. */
  unsigned char coarse = s->coarse != NULL;
  h = XXH3_64bits_withSeed(&coarse, 1, h);
  return s->coarse ? interp_fingerprint(s->coarse, h) : h;
}

int interp_create_index(MPI_Comm comm, interp_state *s,
                        enum rmadht_mode mode) {
  rmadht_config tc;
  rmadht_config_default(&tc, s->key_size, s->bucket_size);
  tc.bytes_per_rank = s->index_bytes;
  tc.mode = mode;
  int rc = rmadht_create(comm, &tc, &s->index);
  /* Every rank has a coarse level or none (the fingerprints agree), and
     every rank created the first index or failed alike. */
  if (rc == RMADHT_OK && s->coarse) {
    rc = interp_create_index(comm, s->coarse, mode);
    if (rc != RMADHT_OK) rmadht_free(&s->index);
  }
  return rc;
}

int interp_flush(interp_state *s) {
  int rc = rmadht_flush(s->index);
  if (rc == RMADHT_OK && s->coarse) rc = interp_flush(s->coarse);
  return rc;
}

/* The neighbour key of one row: each input rounded to its neighbour-key
   digits as the exact key rounds it, or all zero bytes for an input left
   out.  -1 for a non-finite input. */
static int neighbour_key(const interp_state *s, const double *x,
                         unsigned char *key) {
  for (size_t i = 0; i < s->n_in; i++) {
    unsigned char *k = key + i * ROUND_KEY_BYTES;
    if (s->digits[i] == 0) {
      if (!isfinite(x[i])) return -1;
      memset(k, 0, ROUND_KEY_BYTES);
    } else if (round_encode(x[i], s->digits[i], s->log10[i], s->zero_below,
                            k) != 0) {
      return -1;
    }
  }
  return 0;
}

/* ---- Appends ----------------------------------------------------------- */

struct append_arg {
  const size_t *first;         /* item b's locations: [first[b], first[b+1]) */
  const rmadht_location *locs;
  const uint64_t *hash;        /* of the exact key written at locs[l] */
  size_t kmax;
};

/* Adds one location with its key's hash to the bucket's list unless
   listed (then only the hash is brought up to date: the slot may have
   been reused by another key of this bucket): into a free place, else
   over the oldest.  1 if the list changed. */
static int append_one(unsigned char *list, uint32_t *count, uint32_t *next,
                      size_t kmax, const rmadht_location *loc,
                      const uint64_t *hash) {
  /* The value buffer promises no alignment: items by memcpy. */
  const size_t ls = sizeof(rmadht_location);
  for (uint32_t i = 0; i < *count; i++) {
    unsigned char *it = list + i * ITEM_SIZE;
    if (memcmp(it, loc, ls) != 0) continue;
    if (memcmp(it + ls, hash, sizeof(uint64_t)) == 0) return 0;
    memcpy(it + ls, hash, sizeof(uint64_t));
    return 1;
  }
  unsigned char *it;
  if (*count < kmax) {
    it = list + (*count)++ * ITEM_SIZE;
  } else {
    it = list + *next * ITEM_SIZE;
    *next = (uint32_t)((*next + 1) % kmax);
  }
  memcpy(it, loc, ls);
  memcpy(it + ls, hash, sizeof(uint64_t));
  return 1;
}

/* Adds every location of update item (distinct bucket) item to it.  Runs
   again on a lost race, and depends on nothing but its arguments, as
   rmadht_update_fn must. */
static int append_fn(void *arg, size_t item, const void *key, void *value,
                     int found) {
  (void)key;
  const struct append_arg *a = arg;
  unsigned char *v = value;
  uint32_t count = 0, next = 0;
  if (found) {
    memcpy(&count, v, 4);
    memcpy(&next, v + 4, 4);
  }
  /* Every rank has the same kmax (the cache compares configurations), so
     larger numbers can only come from a damaged value: start afresh. */
  if (count > a->kmax || next >= a->kmax) count = next = 0;
  int changed = !found;
  for (size_t l = a->first[item]; l < a->first[item + 1]; l++)
    changed |= append_one(v + BUCKET_HEADER, &count, &next, a->kmax,
                          &a->locs[l], &a->hash[l]);
  if (!changed) return RMADHT_UPDATE_KEEP;
  memcpy(v, &count, 4);
  memcpy(v + 4, &next, 4);
  return RMADHT_UPDATE_STORE;
}

static size_t distinct_key(interp_state *s, size_t *nb);

int interp_append(interp_state *s, size_t n, const double *inputs,
                  const size_t *rows, const unsigned char *keys,
                  const rmadht_location *locs, const int *wstatus) {
  /* Rows of one store often share a bucket (neighbouring cells of a work
     package have similar inputs): one update item per distinct bucket,
     carrying all its new locations, rather than one per row. */
  for (size_t h = 0; h < 2 * s->chunk; h++) s->slots[h] = -1;
  size_t m = 0, nb = 0;
  for (size_t j = 0; j < n; j++) {
    if (wstatus[j] < 0) continue;
    /* The row was finite, or the cache would not have written it. */
    neighbour_key(s, inputs + rows[j] * s->n_in, s->skey);
    s->bucket_of[m] = distinct_key(s, &nb);
    s->new_hash[m] = XXH3_64bits(keys + j * s->key_size, s->key_size);
    s->new_locs[m++] = locs[j];
  }
  /* Counting sort of the rows by bucket, stable, into the append lists. */
  memset(s->loc_first, 0, (nb + 1) * sizeof *s->loc_first);
  for (size_t j = 0; j < m; j++) s->loc_first[s->bucket_of[j] + 1]++;
  for (size_t b = 0; b < nb; b++) s->loc_first[b + 1] += s->loc_first[b];
  for (size_t j = 0; j < m; j++) {
    size_t at = s->loc_first[s->bucket_of[j]]++;
    s->locs[at] = s->new_locs[j];
    s->lhash[at] = s->new_hash[j];
  }
  /* The loop above advanced each start to the next one's: shift back. */
  for (size_t b = nb; b > 0; b--) s->loc_first[b] = s->loc_first[b - 1];
  s->loc_first[0] = 0;
  struct append_arg a = {s->loc_first, s->locs, s->lhash, s->kmax};
  int rc = rmadht_update_batch(s->index, nb, s->bkeys, append_fn, &a,
                               s->ustatus, NULL);
  if (rc != RMADHT_OK) return rc;
  for (size_t b = 0; b < nb; b++)
    if (s->ustatus[b] < 0)
      s->index_dropped += s->loc_first[b + 1] - s->loc_first[b];
  /* Every stored entry is listed at both levels: the coarse level must
     know the entries around rows at the front, which the first level
     lists too few of. */
  return s->coarse ? interp_append(s->coarse, n, inputs, rows, keys, locs,
                                   wstatus)
                   : RMADHT_OK;
}

/* ---- Lookups ----------------------------------------------------------- */

/* Finds or adds the key in s->skey among the nb distinct keys so far;
   returns its index.  slots has 2 * chunk entries (a power of two not
   needed: the probe wraps by modulo), so it is never full. */
static size_t distinct_key(interp_state *s, size_t *nb) {
  size_t nslots = 2 * s->chunk;
  size_t h = (size_t)(XXH3_64bits(s->skey, s->key_size) % nslots);
  for (;; h = (h + 1) % nslots) {
    int32_t b = s->slots[h];
    if (b < 0) {
      memcpy(s->bkeys + *nb * s->key_size, s->skey, s->key_size);
      s->slots[h] = (int32_t)*nb;
      return (*nb)++;
    }
    if (memcmp(s->bkeys + (size_t)b * s->key_size, s->skey, s->key_size) == 0)
      return (size_t)b;
  }
}

/* Marks the entries read at bucket b's locations whose key no longer has
   the listed hash (overwritten by another key, or evicted) as not found,
   and takes the classes and quantities of the others' inputs: once per
   entry here rather than again by every row of the bucket. */
static void prepare_entries(interp_state *s, size_t b) {
  size_t n_in = s->n_in;
  for (size_t l = s->loc_first[b]; l < s->loc_first[b + 1]; l++) {
    if (s->lstatus[l] != RMADHT_OK) continue;
    if (XXH3_64bits(s->lkeys + l * s->key_size, s->key_size) != s->lhash[l]) {
      s->lstatus[l] = RMADHT_NOT_FOUND;
      continue;
    }
    const double *x = (const double *)(const void *)(s->lvals +
                                                     l * s->value_size) +
                      s->n_out;
    unsigned char *cls = s->lclass + l * n_in;
    double *q = s->lq + l * n_in;
    for (size_t i = 0; i < n_in; i++) {
      /* The cache writes finite inputs only; anything else is damage. */
      if (!isfinite(x[i])) {
        s->lstatus[l] = RMADHT_NOT_FOUND;
        break;
      }
      cls[i] = (unsigned char)round_class(x[i], s->zero_below);
      q[i] = round_quantity(x[i], cls[i], s->log10[i]);
    }
  }
}

int interp_serve(interp_state *s, rmadht *table, size_t m,
                 const double *inputs, const size_t *rows, double *outputs,
                 unsigned char *hit) {
  if (m == 0) return RMADHT_OK;
  for (size_t h = 0; h < 2 * s->chunk; h++) s->slots[h] = -1;
  size_t nb = 0;
  for (size_t j = 0; j < m; j++) {
    /* Rows reach here after their exact key was encoded: finite. */
    neighbour_key(s, inputs + rows[j] * s->n_in, s->skey);
    s->bucket_of[j] = distinct_key(s, &nb);
  }
  int rc = rmadht_read_batch(s->index, nb, s->bkeys, s->bvals, s->bstatus);
  if (rc != RMADHT_OK) return rc;
  size_t nl = 0;
  for (size_t b = 0; b < nb; b++) {
    s->loc_first[b] = nl;
    if (s->bstatus[b] != RMADHT_OK) continue;
    const unsigned char *v = s->bvals + b * s->bucket_size;
    uint32_t count;
    memcpy(&count, v, 4);
    if (count > s->kmax) count = 0; /* damaged: as append_fn */
    /* Fewer listed than an interpolation needs: every row of this bucket
       is refused whatever the entries hold, so they are not read.  Rows
       at an advancing front, whose region of the inputs is new, end
       here. */
    if (count < s->kmin) continue;
    for (uint32_t i = 0; i < count; i++, nl++) {
      const unsigned char *it = v + BUCKET_HEADER + i * ITEM_SIZE;
      memcpy(&s->locs[nl], it, sizeof(rmadht_location));
      memcpy(&s->lhash[nl], it + sizeof(rmadht_location), sizeof(uint64_t));
    }
  }
  s->loc_first[nb] = nl;
  if (nl > 0) {
    rc = rmadht_read_loc_batch(table, nl, s->locs, s->lkeys, s->lvals,
                               s->lstatus);
    if (rc != RMADHT_OK) return rc;
  }
  for (size_t b = 0; b < nb; b++) prepare_entries(s, b);
  size_t nretry = 0;
  for (size_t j = 0; j < m; j++) {
    size_t b = s->bucket_of[j], first = s->loc_first[b];
    size_t i = rows[j];
    int why = interp_row(s, inputs + i * s->n_in, s->loc_first[b + 1] - first,
                         s->lvals + first * s->value_size, s->lstatus + first,
                         s->lclass + first * s->n_in, s->lq + first * s->n_in,
                         outputs + i * s->n_out);
    switch (why) {
    case 0:
      hit[i] = RMADHT_CACHE_INTERPOLATED;
      s->interpolated++;
      break;
    case 1:
      /* Counted once, for what the coarse level decides. */
      if (s->coarse)
        s->retry[nretry++] = i;
      else
        s->refused_neighbours++;
      break;
    case 2: s->refused_phase++; break;
    case 4: s->refused_outside++; break;
    default: s->refused_error++; break;
    }
  }
  return nretry ? interp_serve(s->coarse, table, nretry, inputs, s->retry,
                               outputs, hit)
                : RMADHT_OK;
}
