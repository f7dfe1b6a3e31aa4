/*
 * rmadht: a distributed hash table inside an MPI application's own memory,
 * reached with MPI one-sided communication (RMA).
 *
 * Every rank of a communicator contributes bytes_per_rank of memory to one
 * table of fixed-size keys and values.  A key's hash picks the owning rank and
 * two candidate slot groups there; reads and writes are MPI_Get / MPI_Put and
 * atomics on that rank's window, with no server process and no participation
 * of the owner.
 *
 * Calls marked "collective" must be made by every rank of the table's
 * communicator in the same order.  All other calls are independent.
 * A table handle must not be used by two threads at once.
 *
 * Every function returns RMADHT_OK (0), a positive outcome (RMADHT_NOT_FOUND,
 * RMADHT_EVICTED) or a negative error code; rmadht_strerror() explains each.
 * The library never aborts, exits or prints.
 *
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef RMADHT_H
#define RMADHT_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMADHT_VERSION_MAJOR 0
#define RMADHT_VERSION_MINOR 1
#define RMADHT_VERSION_PATCH 0

/* Outcomes (>= 0) and errors (< 0). */
enum rmadht_code {
  RMADHT_OK = 0,
  RMADHT_NOT_FOUND = 1,        /* read/remove: the key is not in the table */
  RMADHT_EVICTED = 2,          /* write: stored, another key was evicted   */
  RMADHT_ERR_ARG = -1,         /* NULL pointer, zero size or bad value     */
  RMADHT_ERR_SIZE = -2,        /* sizes overflow or table below one group  */
  RMADHT_ERR_MISMATCH = -3,    /* parameters differ across ranks           */
  RMADHT_ERR_NOMEM = -4,       /* local allocation failed                  */
  RMADHT_ERR_MPI = -5,         /* an MPI call failed                       */
  RMADHT_ERR_REMOTE = -6,      /* another rank failed in a collective call */
  RMADHT_ERR_CONTENDED = -7,   /* write: gave up after bounded retries     */
  RMADHT_ERR_FILE = -8,        /* snapshot file missing or unreadable      */
  RMADHT_ERR_FORMAT = -9,      /* snapshot file foreign, corrupt or of
                                  another version or key/value size        */
  RMADHT_ERR_IO = -10,         /* snapshot write failed                    */
  RMADHT_ERR_LOCATION = -11    /* not a location of this table, or out of
                                  range                                    */
};

/* Consistency protocols, chosen at run time; see README "Modes". */
enum rmadht_mode {
  RMADHT_LOCK_FREE = 0,   /* checksummed slots, atomic slot claims   */
  RMADHT_FINE_LOCK = 1,   /* readers/writer lock per slot group       */
  RMADHT_COARSE_LOCK = 2  /* MPI_Win_lock on the owner per operation  */
};

typedef struct rmadht rmadht; /* opaque */

typedef struct rmadht_config {
  size_t key_size, value_size; /* bytes, both > 0 */
  size_t bytes_per_rank;       /* table memory this rank contributes; the
                                  same on every rank */
  enum rmadht_mode mode;       /* default RMADHT_LOCK_FREE */
  /* Placement hash; NULL selects XXH3-64.  A custom hash must be the same
     function on every rank (only its presence is checked). */
  uint64_t (*hash)(const void *key, size_t len, void *arg);
  void *hash_arg;
  /* Lock-free mode, when every rank of comm shares one node: 1 (default)
     reaches all slots with loads, stores and CPU atomics through an MPI
     shared-memory window, so no operation waits for a round trip; 0 keeps
     RMA.  Ignored by the locked modes, by tables spanning nodes and by
     tables with no room for one slot group and the path's tags (32 bytes
     a group, rounded up to 64);
     rmadht_get_info tells which path a table took.  README, "The
     node-local path". */
  int node_local;
} rmadht_config;

typedef struct rmadht_stats {
  uint64_t reads, hits, misses, writes, evictions, removes,
      checksum_retries, invalidations,
      round_trips, /* completed RMA synchronisations (flushes, unlocks)
                      this rank waited for */
      updates,     /* update items applied (each once, not per retry) */
      write_probes; /* over stored writes and updates: candidate slots that
                       held another live key when the slot was chosen, plus
                       one; divided by writes + stored updates, the mean
                       number of candidates a write examined */
} rmadht_stats;

/* Fills cfg with defaults: lock-free, 64 MiB per rank, XXH3, node-local
   access where possible.  Start every configuration from here, so fields
   added later get their defaults. */
void rmadht_config_default(rmadht_config *cfg, size_t key_size,
                           size_t value_size);

/* Collective.  Creates a table over comm (which is duplicated).  Arguments
   are checked on every rank and compared across ranks; on any problem every
   rank returns the same error and *out is NULL. */
int rmadht_create(MPI_Comm comm, const rmadht_config *cfg, rmadht **out);

/* Collective.  Completes pending writes, frees the table, sets *t = NULL. */
int rmadht_free(rmadht **t);

/* Stores value under key: RMADHT_OK, or RMADHT_EVICTED when the key took the
   place of the least recently written of its candidates.  The write is
   visible to this rank at once and to others after rmadht_flush() here. */
int rmadht_write(rmadht *t, const void *key, const void *value);

/* Copies the value of key into value: RMADHT_OK or RMADHT_NOT_FOUND (value
   untouched).  Never returns a torn value. */
int rmadht_read(rmadht *t, const void *key, void *value);

/* Removes key: RMADHT_OK or RMADHT_NOT_FOUND. */
int rmadht_remove(rmadht *t, const void *key);

/* n packed keys (n * key_size bytes) and values (n * value_size).  status[i]
   gets the code the single call would return for item i; the call returns
   RMADHT_OK or an error.  Later items of a write batch win over earlier ones
   with the same key. */
int rmadht_read_batch(rmadht *t, size_t n, const void *keys, void *values,
                      int *status);
int rmadht_write_batch(rmadht *t, size_t n, const void *keys,
                       const void *values, int *status);

/* Completes every write this rank issued: afterwards they are visible to
   all ranks. */
int rmadht_flush(rmadht *t);

/* This rank's counters. */
int rmadht_get_stats(const rmadht *t, rmadht_stats *out);
/* Collective.  Counters summed over all ranks, on every rank. */
int rmadht_get_stats_global(rmadht *t, rmadht_stats *sum);

/* Geometry of a created table, for sizing and reports. */
typedef struct rmadht_info {
  size_t key_size, value_size, slot_size;
  size_t slots_per_group, groups_per_rank, slots_per_rank;
  int ranks, rank;
  enum rmadht_mode mode;
  int node_local; /* 1 when this table takes the node-local path */
} rmadht_info;
int rmadht_get_info(const rmadht *t, rmadht_info *out);

/* Collective and quiescent (no rank may read or write the table meanwhile).
   Dump writes every live entry of every rank into one file with MPI-IO;
   restore inserts every entry of such a file through the normal write path,
   so the table may have another rank count or size.  A bad file leaves the
   table untouched and every rank returns the same error. */
int rmadht_dump(rmadht *t, const char *path);
int rmadht_restore(rmadht *t, const char *path);

/* ------------------------------------------------------------------------
 * Atomic update by key, entry locations, emptying a table.
 * ---------------------------------------------------------------------- */

/* What an update function decides for its key. */
enum rmadht_update_action {
  RMADHT_UPDATE_KEEP = 0,   /* leave the key as it is, present or absent */
  RMADHT_UPDATE_STORE = 1,  /* store the (changed) value buffer under key */
  RMADHT_UPDATE_REMOVE = 2  /* remove the key */
};

/* The caller's update function.  item is the index of the key in a batch
   (0 for rmadht_update); value is value_size bytes holding the key's
   current value when found is 1 and zeros when found is 0; the function may
   change it and returns one of the actions above (anything else fails the
   item with RMADHT_ERR_ARG and changes nothing).
   It runs on the calling rank and may run more than once for one item (in
   lock-free mode, after another writer won the race for the key's slot):
   it must have no side effects other than what it records in arg for that
   item, which the last call overwrites. */
typedef int (*rmadht_update_fn)(void *arg, size_t item, const void *key,
                                void *value, int found);

/* Where an entry is: the table it belongs to, owner rank and slot.  Opaque
   and copyable; valid as long as the table lives.  An all-zero location
   belongs to no table. */
typedef struct rmadht_location {
  uint64_t opaque[2];
} rmadht_location;

/* Applies fn to the current value of key, atomically with respect to every
   other write, remove and update of that key on any rank, in every mode and
   on both paths: no update is lost.  Returns what the chosen action's
   single call would: STORE -> RMADHT_OK or RMADHT_EVICTED; REMOVE ->
   RMADHT_OK or RMADHT_NOT_FOUND; KEEP -> RMADHT_OK (found) or
   RMADHT_NOT_FOUND.  Costs what a write costs (README, "Atomic update and
   locations").  loc may be NULL; otherwise it receives where the key's
   entry is after the update (undefined when the key is absent then).  A
   stored value is visible to other ranks after rmadht_flush(), as a
   write's. */
int rmadht_update(rmadht *t, const void *key, rmadht_update_fn fn, void *arg,
                  rmadht_location *loc);

/* Batch form: n packed keys; status[i] and locs[i] (locs may be NULL) as
   the single call.  One round trip per target per wave, like
   rmadht_write_batch; two items with the same key are applied in order. */
int rmadht_update_batch(rmadht *t, size_t n, const void *keys,
                        rmadht_update_fn fn, void *arg, int *status,
                        rmadht_location *locs);

/* rmadht_write / rmadht_write_batch that also report where each entry went
   (loc / locs[i], not NULL).  A rewrite of a key still in place keeps its
   location. */
int rmadht_write_loc(rmadht *t, const void *key, const void *value,
                     rmadht_location *loc);
int rmadht_write_batch_loc(rmadht *t, size_t n, const void *keys,
                           const void *values, int *status,
                           rmadht_location *locs);

/* Reads the slot at loc in one round trip: RMADHT_OK with the key stored
   there copied into key and its value into value, so the caller sees when
   the slot now holds another key (overwritten or evicted since);
   RMADHT_NOT_FOUND when the slot is empty, removed or torn (key and value
   untouched); RMADHT_ERR_LOCATION for a location of another table or out
   of range.  key may be NULL. */
int rmadht_read_loc(rmadht *t, const rmadht_location *loc, void *key,
                    void *value);

/* Batch form: n locations, n packed keys (keys may be NULL) and values;
   status[i] as the single call.  One round trip per target. */
int rmadht_read_loc_batch(rmadht *t, size_t n, const rmadht_location *locs,
                          void *keys, void *values, int *status);

/* The owner rank and slot index (0 .. slots_per_rank - 1) of a location,
   and the location of a rank and slot of this table, for APIs that carry
   locations as numbers (POET's process and index).  RMADHT_ERR_LOCATION
   when out of range or of another table. */
int rmadht_location_split(const rmadht *t, const rmadht_location *loc,
                          int *rank, uint64_t *slot);
int rmadht_location_join(const rmadht *t, int rank, uint64_t slot,
                         rmadht_location *loc);

/* Collective and quiescent (no rank may read or write the table
   meanwhile).  Removes every entry on every rank; counters are kept. */
int rmadht_clear(rmadht *t);

/* A static English message for any code above; never NULL. */
const char *rmadht_strerror(int code);
const char *rmadht_mode_name(enum rmadht_mode mode);

/* ------------------------------------------------------------------------
 * Surrogate cache: approximated lookup of a function's results.
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
 * ---------------------------------------------------------------------- */

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
void rmadht_cache_config_default(rmadht_cache_config *cfg, size_t n_inputs,
                                 size_t n_outputs);

/* Collective.  Creates a cache over comm; the configuration (digits and
   log10 flags included) must be the same on every rank, else every rank
   returns RMADHT_ERR_MISMATCH.  Errors as rmadht_create; *out NULL then. */
int rmadht_cache_create(MPI_Comm comm, const rmadht_cache_config *cfg,
                        rmadht_cache **out);

/* Collective.  Frees the cache and its table, sets *c = NULL. */
int rmadht_cache_free(rmadht_cache **c);

/* Looks up n rows of n_inputs doubles in one batch (one table batch per
   1024 rows, so working memory stays bounded).  hit[i] is 1 and
   outputs row i (n_outputs doubles) holds the cached result, or hit[i] is
   0 and the row is set to NaN.  Rows with a NaN or infinite input miss.
   Returns RMADHT_OK or an error. */
int rmadht_cache_lookup(rmadht_cache *c, size_t n, const double *inputs,
                        double *outputs, unsigned char *hit);

/* As rmadht_cache_lookup; cached_inputs row i (n_inputs doubles) also gets
   the exact inputs the hit's outputs were computed from (NaN on a miss). */
int rmadht_cache_lookup_inputs(rmadht_cache *c, size_t n,
                               const double *inputs, double *outputs,
                               double *cached_inputs, unsigned char *hit);

/* Stores n rows of outputs computed for n rows of inputs, in one batch;
   rows with a NaN or infinite input are skipped.  Like rmadht_write_batch,
   the rows are visible to this rank at once and to other ranks after
   rmadht_flush() of the table (rmadht_cache_get_table). */
int rmadht_cache_store(rmadht_cache *c, size_t n, const double *inputs,
                       const double *outputs);

/* This rank's counters; the collective variant sums them over all ranks. */
int rmadht_cache_get_stats(const rmadht_cache *c, rmadht_cache_stats *out);
int rmadht_cache_get_stats_global(rmadht_cache *c, rmadht_cache_stats *sum);

/* The table underneath, owned by the cache: for rmadht_flush, dump and
   restore, stats and info.  Do not free it. */
int rmadht_cache_get_table(rmadht_cache *c, rmadht **out);

#ifdef __cplusplus
}
#endif
#endif /* RMADHT_H */
