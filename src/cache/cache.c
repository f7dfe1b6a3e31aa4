/*
 * The surrogate cache: rows of inputs rounded into keys (round.h), rows of
 * outputs plus the exact inputs as values, over one table.
 *
 * Each call works through its rows in chunks of CACHE_CHUNK: the buffers
 * for one chunk of keys and values are allocated once at creation, so a
 * lookup never allocates, and every chunk is one batch call of the table.
 *
 * Only the public API of rmadht.h is used: the cache keeps a duplicate of
 * the communicator for its own collective calls.
 *
 * With interpolation on (interp.h), the exact misses of a lookup chunk go
 * on to the neighbour index, and a store chunk appends the locations of
 * its entries there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "interp.h"
#include "rmadht_cache.h"
#include "round.h"

#define CACHE_CHUNK 1024
#define CACHE_DEFAULT_DIGITS 7 /* POET's default, with log10 */

struct rmadht_cache {
  rmadht *table;
  MPI_Comm comm; /* duplicate, for the counters' allreduce */
  size_t n_in, n_out, key_size, value_size;
  int *digits;          /* n_in, defaults filled in */
  unsigned char *log10; /* n_in */
  double zero_below;
  uint64_t lookups, lookup_hits, stores, dropped, nonfinite;
  /* One chunk's worth of batch arguments. */
  unsigned char *keys, *values;
  int *status;
  size_t *row; /* chunk row of each batch item */
  interp_state *ip;       /* NULL: exact keys only */
  rmadht_location *wlocs; /* with ip: where a store chunk's entries went */
};

void rmadht_cache_config_default(rmadht_cache_config *cfg, size_t n_inputs,
                                 size_t n_outputs) {
  if (!cfg) return;
  cfg->n_inputs = n_inputs;
  cfg->n_outputs = n_outputs;
  cfg->digits = NULL;
  cfg->log10 = NULL;
  cfg->zero_below = 1e-13;
  cfg->bytes_per_rank = (size_t)64 << 20;
  cfg->mode = RMADHT_LOCK_FREE;
  memset(&cfg->interp, 0, sizeof cfg->interp);
  cfg->interp.method = RMADHT_INTERP_NONE;
}

static int check_config(const rmadht_cache_config *cfg) {
  if (!cfg || cfg->n_inputs == 0 || cfg->n_outputs == 0) return RMADHT_ERR_ARG;
  if (!(cfg->zero_below >= 0) || !isfinite(cfg->zero_below))
    return RMADHT_ERR_ARG;
  if (cfg->digits)
    for (size_t i = 0; i < cfg->n_inputs; i++)
      if (cfg->digits[i] < 1 || cfg->digits[i] > ROUND_MAX_DIGITS)
        return RMADHT_ERR_ARG;
  /* Keys, values and the neighbour index's buffers (a chunk's rows times
     up to RMADHT_INTERP_MAX_NEIGHBOURS neighbours) must fit a size_t; the
     table bounds them further. */
  const size_t most =
      SIZE_MAX / 16 / CACHE_CHUNK / RMADHT_INTERP_MAX_NEIGHBOURS;
  if (cfg->n_inputs > most || cfg->n_outputs > most) return RMADHT_ERR_SIZE;
  return interp_check(cfg, CACHE_DEFAULT_DIGITS);
}

/* Frees everything but the table; collective when the neighbour index
   exists, which happens on every rank alike. */
static int cache_destroy(rmadht_cache *c) {
  if (!c) return RMADHT_OK;
  int rc = interp_free(c->ip);
  free(c->wlocs);
  if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  free(c->digits);
  free(c->log10);
  free(c->keys);
  free(c->values);
  free(c->status);
  free(c->row);
  free(c);
  return rc;
}

/* Everything but the table; NULL when out of memory. */
static rmadht_cache *cache_alloc(const rmadht_cache_config *cfg) {
  rmadht_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->comm = MPI_COMM_NULL;
  c->n_in = cfg->n_inputs;
  c->n_out = cfg->n_outputs;
  c->key_size = c->n_in * ROUND_KEY_BYTES;
  c->value_size = (c->n_out + c->n_in) * sizeof(double);
  c->zero_below = cfg->zero_below;
  c->digits = malloc(c->n_in * sizeof *c->digits);
  c->log10 = malloc(c->n_in);
  c->keys = malloc(CACHE_CHUNK * c->key_size);
  c->values = malloc(CACHE_CHUNK * c->value_size);
  c->status = malloc(CACHE_CHUNK * sizeof *c->status);
  c->row = malloc(CACHE_CHUNK * sizeof *c->row);
  if (!c->digits || !c->log10 || !c->keys || !c->values || !c->status ||
      !c->row) {
    cache_destroy(c);
    return NULL;
  }
  for (size_t i = 0; i < c->n_in; i++) {
    c->digits[i] = cfg->digits ? cfg->digits[i] : CACHE_DEFAULT_DIGITS;
    c->log10[i] = cfg->log10 ? (cfg->log10[i] != 0) : 1;
  }
  if (cfg->interp.method != RMADHT_INTERP_NONE) {
    c->ip = interp_alloc(cfg, CACHE_CHUNK, c->digits, c->log10);
    c->wlocs = malloc(CACHE_CHUNK * sizeof *c->wlocs);
    if (!c->ip || !c->wlocs) {
      cache_destroy(c);
      return NULL;
    }
  }
  return c;
}

/* What must agree across ranks for keys to mean the same everywhere; the
   table compares sizes, mode and memory itself. */
static uint64_t rounding_fingerprint(const rmadht_cache *c) {
  uint64_t h = XXH3_64bits(&c->zero_below, sizeof c->zero_below);
  for (size_t i = 0; i < c->n_in; i++) {
    unsigned char d[2] = {(unsigned char)c->digits[i], c->log10[i]};
    h = XXH3_64bits_withSeed(d, sizeof d, h);
  }
  /* Interpolating or not must agree too: the index is a collective table. */
  unsigned char on = c->ip != NULL;
  h = XXH3_64bits_withSeed(&on, 1, h);
  return c->ip ? interp_fingerprint(c->ip, h) : h;
}

/* Collective: the gravest local error of any rank, else
   RMADHT_ERR_MISMATCH if the rounding differs, else RMADHT_OK.  MAX over
   (v, ~v) gives the maximum and the minimum of v in one allreduce. */
static int agree(MPI_Comm comm, int local_rc, uint64_t fingerprint) {
  uint64_t v[4] = {(uint64_t)-(int64_t)local_rc, fingerprint, 0, 0}, r[4];
  v[2] = ~v[0];
  v[3] = ~v[1];
  if (MPI_Allreduce(v, r, 4, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  if (r[0]) return -(int)r[0];
  return r[1] == ~r[3] ? RMADHT_OK : RMADHT_ERR_MISMATCH;
}

int rmadht_cache_create(MPI_Comm comm, const rmadht_cache_config *cfg,
                        rmadht_cache **out) {
  if (out) *out = NULL;
  if (comm == MPI_COMM_NULL) return RMADHT_ERR_ARG;
  int rc = out ? check_config(cfg) : RMADHT_ERR_ARG;
  rmadht_cache *c = NULL;
  if (rc == RMADHT_OK) {
    c = cache_alloc(cfg);
    if (!c) rc = RMADHT_ERR_NOMEM;
  }
  /* Every rank reaches this allreduce, whatever failed locally, so that
     no rank waits alone in the table's creation. */
  rc = agree(comm, rc, c ? rounding_fingerprint(c) : 0);
  if (rc == RMADHT_OK) {
    int local = RMADHT_OK;
    if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) {
      c->comm = MPI_COMM_NULL;
      local = RMADHT_ERR_MPI;
    } else {
      MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    }
    rc = agree(comm, local, 0);
  }
  if (rc == RMADHT_OK) {
    rmadht_config tc;
    rmadht_config_default(&tc, c->key_size, c->value_size);
    tc.bytes_per_rank = cfg->bytes_per_rank;
    tc.mode = cfg->mode;
    rc = rmadht_create(comm, &tc, &c->table);
  }
  /* Every rank has an index to create or none (the fingerprints agree). */
  if (rc == RMADHT_OK && c->ip) {
    rc = interp_create_index(comm, c->ip, cfg->mode);
    if (rc != RMADHT_OK) rmadht_free(&c->table);
  }
  if (rc != RMADHT_OK) {
    cache_destroy(c);
    return rc;
  }
  *out = c;
  return RMADHT_OK;
}

int rmadht_cache_free(rmadht_cache **cp) {
  if (!cp || !*cp) return RMADHT_ERR_ARG;
  int rc = rmadht_free(&(*cp)->table);
  int rc2 = cache_destroy(*cp);
  *cp = NULL;
  return rc != RMADHT_OK ? rc : rc2;
}

static void fill_nan(double *row, size_t n) {
  for (size_t j = 0; j < n; j++) row[j] = NAN;
}

/* Encodes rows [0, n) into c->keys, listing the usable ones in c->row;
   returns how many. */
static size_t encode_rows(rmadht_cache *c, size_t n, const double *inputs) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (round_encode_row(inputs + i * c->n_in, c->n_in, c->digits, c->log10,
                         c->zero_below, c->keys + m * c->key_size) != 0) {
      c->nonfinite++;
      continue;
    }
    c->row[m++] = i;
  }
  return m;
}

static int lookup_chunk(rmadht_cache *c, size_t n, const double *inputs,
                        double *outputs, double *cached_inputs,
                        unsigned char *hit) {
  memset(hit, 0, n);
  size_t m = encode_rows(c, n, inputs);
  int rc = rmadht_read_batch(c->table, m, c->keys, c->values, c->status);
  c->lookups += n;
  for (size_t j = 0; rc == RMADHT_OK && j < m; j++) {
    if (c->status[j] != RMADHT_OK) continue;
    size_t i = c->row[j];
    const unsigned char *v = c->values + j * c->value_size;
    memcpy(outputs + i * c->n_out, v, c->n_out * sizeof(double));
    if (cached_inputs)
      memcpy(cached_inputs + i * c->n_in, v + c->n_out * sizeof(double),
             c->n_in * sizeof(double));
    hit[i] = 1;
    c->lookup_hits++;
  }
  for (size_t i = 0; i < n; i++) {
    if (hit[i]) continue;
    fill_nan(outputs + i * c->n_out, c->n_out);
    if (cached_inputs) fill_nan(cached_inputs + i * c->n_in, c->n_in);
  }
  if (rc != RMADHT_OK || !c->ip) return rc;
  /* The finite rows that missed, in place over c->row (k <= j). */
  size_t k = 0;
  for (size_t j = 0; j < m; j++)
    if (!hit[c->row[j]]) c->row[k++] = c->row[j];
  return interp_serve(c->ip, c->table, k, inputs, c->row, outputs, hit);
}

int rmadht_cache_lookup_inputs(rmadht_cache *c, size_t n,
                               const double *inputs, double *outputs,
                               double *cached_inputs, unsigned char *hit) {
  if (!c) return RMADHT_ERR_ARG;
  if (n == 0) return RMADHT_OK;
  if (!inputs || !outputs || !hit) return RMADHT_ERR_ARG;
  for (size_t at = 0; at < n; at += CACHE_CHUNK) {
    size_t k = n - at < CACHE_CHUNK ? n - at : CACHE_CHUNK;
    int rc = lookup_chunk(c, k, inputs + at * c->n_in,
                          outputs + at * c->n_out,
                          cached_inputs ? cached_inputs + at * c->n_in : NULL,
                          hit + at);
    if (rc != RMADHT_OK) return rc;
  }
  return RMADHT_OK;
}

int rmadht_cache_lookup(rmadht_cache *c, size_t n, const double *inputs,
                        double *outputs, unsigned char *hit) {
  return rmadht_cache_lookup_inputs(c, n, inputs, outputs, NULL, hit);
}

static int store_chunk(rmadht_cache *c, size_t n, const double *inputs,
                       const double *outputs) {
  size_t m = encode_rows(c, n, inputs);
  for (size_t j = 0; j < m; j++) {
    size_t i = c->row[j];
    unsigned char *v = c->values + j * c->value_size;
    memcpy(v, outputs + i * c->n_out, c->n_out * sizeof(double));
    memcpy(v + c->n_out * sizeof(double), inputs + i * c->n_in,
           c->n_in * sizeof(double));
  }
  int rc = c->ip ? rmadht_write_batch_loc(c->table, m, c->keys, c->values,
                                          c->status, c->wlocs)
                 : rmadht_write_batch(c->table, m, c->keys, c->values,
                                      c->status);
  if (rc != RMADHT_OK) return rc;
  /* A row the table gave up on under contention is only a lost cache
     entry: counted, not an error. */
  for (size_t j = 0; j < m; j++) {
    if (c->status[j] >= 0)
      c->stores++;
    else
      c->dropped++;
  }
  return c->ip ? interp_append(c->ip, m, inputs, c->row, c->keys, c->wlocs,
                               c->status)
               : RMADHT_OK;
}

int rmadht_cache_store(rmadht_cache *c, size_t n, const double *inputs,
                       const double *outputs) {
  if (!c) return RMADHT_ERR_ARG;
  if (n == 0) return RMADHT_OK;
  if (!inputs || !outputs) return RMADHT_ERR_ARG;
  for (size_t at = 0; at < n; at += CACHE_CHUNK) {
    size_t k = n - at < CACHE_CHUNK ? n - at : CACHE_CHUNK;
    int rc = store_chunk(c, k, inputs + at * c->n_in, outputs + at * c->n_out);
    if (rc != RMADHT_OK) return rc;
  }
  return RMADHT_OK;
}

int rmadht_cache_flush(rmadht_cache *c) {
  if (!c) return RMADHT_ERR_ARG;
  int rc = rmadht_flush(c->table);
  if (rc == RMADHT_OK && c->ip) rc = interp_flush(c->ip);
  return rc;
}

static void own_counters(const rmadht_cache *c, rmadht_cache_stats *out) {
  out->lookups = c->lookups;
  out->lookup_hits = c->lookup_hits;
  out->stores = c->stores;
  out->dropped = c->dropped;
  out->nonfinite = c->nonfinite;
  out->interpolated = out->interpolated_coarse = out->refused_neighbours =
      out->refused_outside = out->refused_phase = out->refused_error =
          out->index_dropped = 0;
  /* A row is counted at one level only (interp_serve), so the levels'
     counters add up. */
  for (const interp_state *ip = c->ip; ip; ip = ip->coarse) {
    out->interpolated += ip->interpolated;
    if (ip != c->ip) out->interpolated_coarse += ip->interpolated;
    out->refused_neighbours += ip->refused_neighbours;
    out->refused_outside += ip->refused_outside;
    out->refused_phase += ip->refused_phase;
    out->refused_error += ip->refused_error;
    out->index_dropped += ip->index_dropped;
  }
}

int rmadht_cache_get_stats(const rmadht_cache *c, rmadht_cache_stats *out) {
  if (!c || !out) return RMADHT_ERR_ARG;
  own_counters(c, out);
  return rmadht_get_stats(c->table, &out->table);
}

int rmadht_cache_get_stats_global(rmadht_cache *c, rmadht_cache_stats *sum) {
  if (!c) return RMADHT_ERR_ARG;
  rmadht_cache_stats mine;
  own_counters(c, &mine);
  /* The last element counts the ranks that passed no sum, so that every
     rank learns of it from the same allreduce and none is left waiting in
     the table's. */
  uint64_t v[13] = {mine.lookups, mine.lookup_hits, mine.stores,
                    mine.dropped, mine.nonfinite, mine.interpolated,
                    mine.refused_neighbours, mine.refused_phase,
                    mine.refused_error, mine.index_dropped,
                    mine.refused_outside, mine.interpolated_coarse,
                    sum == NULL},
           r[13];
  if (MPI_Allreduce(v, r, 13, MPI_UINT64_T, MPI_SUM, c->comm) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  if (r[12]) return RMADHT_ERR_ARG;
  sum->lookups = r[0];
  sum->lookup_hits = r[1];
  sum->stores = r[2];
  sum->dropped = r[3];
  sum->nonfinite = r[4];
  sum->interpolated = r[5];
  sum->refused_neighbours = r[6];
  sum->refused_phase = r[7];
  sum->refused_error = r[8];
  sum->index_dropped = r[9];
  sum->refused_outside = r[10];
  sum->interpolated_coarse = r[11];
  return rmadht_get_stats_global(c->table, &sum->table);
}

int rmadht_cache_get_table(rmadht_cache *c, rmadht **out) {
  if (!c || !out) return RMADHT_ERR_ARG;
  *out = c->table;
  return RMADHT_OK;
}
