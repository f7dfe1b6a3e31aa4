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
  RMADHT_ERR_CONTENDED = -7,   /* lock-free write/update: the key's slots
                                  were held by another rank's write in
                                  flight, unchanged for 2 s (that rank
                                  stalled, e.g. wrote and did not flush);
                                  never for losing races to other writers */
  RMADHT_ERR_FILE = -8,        /* snapshot file missing or unreadable      */
  RMADHT_ERR_FORMAT = -9,      /* snapshot file foreign, corrupt or of
                                  another version or key/value size        */
  RMADHT_ERR_IO = -10,         /* snapshot write failed                    */
  RMADHT_ERR_LOCATION = -11    /* not a location of this table, or out of
                                  range                                    */
};

/* Consistency protocols, chosen at run time; see docs/explanation/design.md. */
enum rmadht_mode {
  RMADHT_LOCK_FREE = 0,   /* checksummed slots, atomic slot claims   */
  RMADHT_FINE_LOCK = 1,   /* readers/writer lock per slot group       */
  RMADHT_COARSE_LOCK = 2  /* MPI_Win_lock on the owner per operation  */
};

/* How the RMA path sends the gets, and the puts, it has gathered for one
   target between two synchronisations with it (docs/explanation/design.md,
   round trips and messages). */
enum rmadht_gather {
  RMADHT_GATHER_AUTO = 0,   /* one message per target on another node
                               (per 64 KB), one per block to a rank on
                               this node */
  RMADHT_GATHER_TARGET = 1, /* one message per target and per 64 KB
                               (derived datatypes) */
  RMADHT_GATHER_BLOCK = 2   /* one message per block */
};

typedef struct rmadht rmadht; /* opaque */

typedef struct rmadht_config {
  size_t key_size, value_size; /* bytes, both > 0 */
  size_t bytes_per_rank;       /* table memory this rank contributes; the
                                  same on every rank, at least one group of
                                  8 slots (and 64 bytes of tags or locks
                                  in the lock-free and fine-lock modes) */
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
     a group, rounded up to 64).  A lock-free table spanning nodes with
     node_local 1 reads (not writes) the ranks on this rank's node with
     loads, where the MPI allows (unified memory model);
     rmadht_get_info tells which path a table took.  See
     docs/explanation/design.md, "The node-local path". */
  int node_local;
  /* 0 (default) or 1..1000000: the table starts a thread that enters MPI
     every that many microseconds, so that operations on this rank's part
     of the table complete while the application computes without calling
     MPI (needed on networks without RDMA, where the target's MPI library
     carries them out).  Needs MPI_THREAD_MULTIPLE, or rmadht_create fails
     with RMADHT_ERR_ARG on every rank and says why in
     rmadht_error_detail().  The same on every rank.  See
     docs/howto/progress-thread.md. */
  int progress_us;
  /* enum rmadht_gather, default RMADHT_GATHER_AUTO: a message costs ~10-30
     us between hosts over TCP whatever it holds, a derived datatype's
     block ~1-3 us; on one node a plain get costs ~0.1-0.2 us and a block
     of a derived datatype far more.  Only this rank's messages depend on
     it, so it may differ between ranks. */
  int gather;
  /* 0 (default): rmadht_write sends its write before it returns.
     1..4096: on the RMA path, rmadht_write queues up to that many writes
     and sends them as one batch when the queue is full, at rmadht_flush,
     and before any other call that reads, writes or empties the table but
     rmadht_read, which finds this rank's queued writes.  A queued write
     returns RMADHT_OK, never RMADHT_EVICTED; it is counted in the stats
     (evictions too) once sent, and an error of a queued item is returned
     by the call that sent it.  Between hosts a single write waits for 2-3
     round trips, a queue of 64 for about 8 in all.  Only this rank's
     writes depend on it, so it may differ between ranks.  See
     docs/explanation/design.md, "Queued writes". */
  int write_queue;
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
   access where possible, no progress thread, RMADHT_GATHER_AUTO, no
   write queue.  Start every configuration from here, so fields added
   later get their defaults. */
RMADHT_API void rmadht_config_default(rmadht_config *cfg, size_t key_size,
                                      size_t value_size);

/* Collective.  Creates a table over comm (which is duplicated).  Arguments
   are checked on every rank and compared across ranks: on a bad or
   mismatched one every rank returns the same error.  On a later failure
   (memory, MPI) the failing rank returns its own code and the others
   RMADHT_ERR_REMOTE.  On any error *out is NULL on every rank. */
RMADHT_API int rmadht_create(MPI_Comm comm, const rmadht_config *cfg,
                             rmadht **out);

/* Collective.  Completes pending writes, frees the table, sets *t = NULL. */
RMADHT_API int rmadht_free(rmadht **t);

/* Stores value under key: RMADHT_OK, or RMADHT_EVICTED when the key took the
   place of the least recently written of its candidates.  The write is
   visible to this rank at once and to others after rmadht_flush() here.
   With rmadht_config.write_queue it may be queued (always RMADHT_OK). */
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
  int node_loads; /* 1 when, the table spanning nodes, this rank's lock-free
                     reads of the ranks on its node are loads */
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
   RMADHT_NOT_FOUND.  Costs what a write with no copy to start from costs
   (docs/reference/c-api.md, "Atomic update and locations").  loc may be
   NULL; otherwise it receives where the key's entry is after the update
   (undefined when the key is absent then).  A stored value is visible to
   other ranks after rmadht_flush(), as a write's. */
RMADHT_API int rmadht_update(rmadht *t, const void *key, rmadht_update_fn fn, void *arg,
                  rmadht_location *loc);

/* Batch form: n packed keys; status[i] and locs[i] (locs may be NULL) as
   the single call.  One round trip per target per wave, like
   rmadht_write_batch; two items with the same key are applied in order. */
RMADHT_API int rmadht_update_batch(rmadht *t, size_t n, const void *keys,
                        rmadht_update_fn fn, void *arg, int *status,
                        rmadht_location *locs);

/* rmadht_write / rmadht_write_batch that also report where each entry went
   (loc / locs[i], not NULL).  A rewrite of a key still in place keeps its
   location. */
RMADHT_API int rmadht_write_loc(rmadht *t, const void *key, const void *value,
                     rmadht_location *loc);
RMADHT_API int rmadht_write_batch_loc(rmadht *t, size_t n, const void *keys,
                           const void *values, int *status,
                           rmadht_location *locs);

/* Reads the slot at loc in one round trip: RMADHT_OK with the key stored
   there copied into key and its value into value, so the caller sees when
   the slot now holds another key (overwritten or evicted since);
   RMADHT_NOT_FOUND when the slot is empty, removed or torn (key and value
   untouched); RMADHT_ERR_LOCATION for a location of another table or out
   of range.  key may be NULL. */
RMADHT_API int rmadht_read_loc(rmadht *t, const rmadht_location *loc, void *key,
                    void *value);

/* Batch form: n locations, n packed keys (keys may be NULL) and values;
   status[i] as the single call.  One round trip per target. */
RMADHT_API int rmadht_read_loc_batch(rmadht *t, size_t n, const rmadht_location *locs,
                          void *keys, void *values, int *status);

/* The owner rank and slot index (0 .. slots_per_rank - 1) of a location,
   and the location of a rank and slot of this table, for APIs that carry
   locations as numbers (POET's process and index).  RMADHT_ERR_LOCATION
   when out of range or of another table. */
RMADHT_API int rmadht_location_split(const rmadht *t, const rmadht_location *loc,
                          int *rank, uint64_t *slot);
RMADHT_API int rmadht_location_join(const rmadht *t, int rank, uint64_t slot,
                         rmadht_location *loc);

/* Collective and quiescent (no rank may read or write the table
   meanwhile).  Removes every entry on every rank; counters are kept. */
RMADHT_API int rmadht_clear(rmadht *t);

/* A static English message for any code above; never NULL. */
RMADHT_API const char *rmadht_strerror(int code);
/* The code's name as a static string ("RMADHT_ERR_ARG"), for logs and
   bindings; "RMADHT_UNKNOWN" for a code not listed above, never NULL. */
RMADHT_API const char *rmadht_errname(int code);
/* What only the failing call knew about the last error an rmadht call
   returned in this thread, for a person to read: which MPI call failed,
   MPI's own error string and, where one is known, the remedy (such as an
   MPI parameter to set).  "" when that call left no detail.  Valid until
   the next rmadht call in this thread; never NULL. */
RMADHT_API const char *rmadht_error_detail(void);
RMADHT_API const char *rmadht_mode_name(enum rmadht_mode mode);

/* The library's version at run time, "MAJOR.MINOR.PATCH": the one an
   application was linked against, which the RMADHT_VERSION_* macros of the
   header it was compiled with need not match. */
RMADHT_API const char *rmadht_version(void);

#ifdef __cplusplus
}
#endif
#endif /* RMADHT_H */
