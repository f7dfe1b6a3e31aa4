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
 * A bad argument on some ranks of a collective call (a NULL output pointer
 * or path, a bad configuration field) makes every rank return the same
 * error: the ranks agree on their local checks before any returns.  The
 * one exception is a NULL table (or cache) handle, or MPI_COMM_NULL passed
 * to a create call: such a rank has no communicator to agree over, so it
 * returns RMADHT_ERR_ARG at once and the other ranks wait for it.
 * A table handle must not be used by two threads at once.
 *
 * Every function returns RMADHT_OK (0), a positive outcome (RMADHT_NOT_FOUND,
 * RMADHT_EVICTED) or a negative error code; rmadht_strerror() explains each.
 * The library never aborts, exits or prints.
 *
 * The surrogate cache has its own header, rmadht_cache.h; POET's DHT API
 * is in rmadht_poet.h.
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

/* Marks every function of the public API.  The library is compiled with
   hidden visibility, so these are the only symbols it exports: internal
   functions can be renamed without changing the ABI, and cannot clash with
   an application's own functions of the same name. */
#if defined(__GNUC__) || defined(__clang__)
#define RMADHT_API __attribute__((visibility("default")))
#else
#define RMADHT_API
#endif

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
  RMADHT_ERR_IO = -10          /* snapshot write failed                    */
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
      round_trips; /* completed RMA synchronisations (flushes, unlocks)
                      this rank waited for */
} rmadht_stats;

/* Fills cfg with defaults: lock-free, 64 MiB per rank, XXH3, node-local
   access where possible.  Start every configuration from here, so fields
   added later get their defaults. */
RMADHT_API void rmadht_config_default(rmadht_config *cfg, size_t key_size,
                                      size_t value_size);

/* Collective.  Creates a table over comm (which is duplicated).  Arguments
   are checked on every rank and compared across ranks; on any problem every
   rank returns the same error and *out is NULL. */
RMADHT_API int rmadht_create(MPI_Comm comm, const rmadht_config *cfg,
                             rmadht **out);

/* Collective.  Completes pending writes, frees the table, sets *t = NULL. */
RMADHT_API int rmadht_free(rmadht **t);

/* Stores value under key: RMADHT_OK, or RMADHT_EVICTED when the key took the
   place of the least recently written of its candidates.  The write is
   visible to this rank at once and to others after rmadht_flush() here. */
RMADHT_API int rmadht_write(rmadht *t, const void *key, const void *value);

/* Copies the value of key into value: RMADHT_OK or RMADHT_NOT_FOUND (value
   untouched).  Never returns a torn value. */
RMADHT_API int rmadht_read(rmadht *t, const void *key, void *value);

/* Removes key: RMADHT_OK or RMADHT_NOT_FOUND. */
RMADHT_API int rmadht_remove(rmadht *t, const void *key);

/* n packed keys (n * key_size bytes) and values (n * value_size).  status[i]
   gets the code the single call would return for item i; the call returns
   RMADHT_OK or an error.  Later items of a write batch win over earlier ones
   with the same key. */
RMADHT_API int rmadht_read_batch(rmadht *t, size_t n, const void *keys,
                                 void *values, int *status);
RMADHT_API int rmadht_write_batch(rmadht *t, size_t n, const void *keys,
                                  const void *values, int *status);

/* Completes every write this rank issued: afterwards they are visible to
   all ranks. */
RMADHT_API int rmadht_flush(rmadht *t);

/* This rank's counters. */
RMADHT_API int rmadht_get_stats(const rmadht *t, rmadht_stats *out);
/* Collective.  Counters summed over all ranks, on every rank. */
RMADHT_API int rmadht_get_stats_global(rmadht *t, rmadht_stats *sum);

/* Geometry of a created table, for sizing and reports. */
typedef struct rmadht_info {
  size_t key_size, value_size, slot_size;
  size_t slots_per_group, groups_per_rank, slots_per_rank;
  int ranks, rank;
  enum rmadht_mode mode;
  int node_local; /* 1 when this table takes the node-local path */
} rmadht_info;
RMADHT_API int rmadht_get_info(const rmadht *t, rmadht_info *out);

/* Collective and quiescent (no rank may read or write the table meanwhile).
   Dump writes every live entry of every rank into one file with MPI-IO;
   restore inserts every entry of such a file through the normal write path,
   so the table may have another rank count or size.  A bad file leaves the
   table untouched and every rank returns the same error.  path must be the
   same on every rank (else RMADHT_ERR_MISMATCH); NULL or "" on any rank
   gives RMADHT_ERR_ARG on all. */
RMADHT_API int rmadht_dump(rmadht *t, const char *path);
RMADHT_API int rmadht_restore(rmadht *t, const char *path);

/* A static English message for any code above; never NULL. */
RMADHT_API const char *rmadht_strerror(int code);
/* The code's name as a static string ("RMADHT_ERR_ARG"), for logs and
   bindings; "RMADHT_UNKNOWN" for a code not listed above, never NULL. */
RMADHT_API const char *rmadht_errname(int code);
RMADHT_API const char *rmadht_mode_name(enum rmadht_mode mode);

/* The library's version at run time, "MAJOR.MINOR.PATCH": the one an
   application was linked against, which the RMADHT_VERSION_* macros of the
   header it was compiled with need not match. */
RMADHT_API const char *rmadht_version(void);

#ifdef __cplusplus
}
#endif
#endif /* RMADHT_H */
