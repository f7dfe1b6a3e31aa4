/*
 * The state behind a handle of MPI-DHT's API
 * (include/rmadht/mpidht/LUCX/MPI/DHT.h), shared by the files of this
 * library.  The table itself is a poet_table (src/poet/poet_table.h): a
 * lock-free rmadht table sized by a bucket count per rank, placed by the
 * user's hash, with a communicator of its own for the API's collectives.
 */
#ifndef RMADHT_MPIDHT_STATE_H
#define RMADHT_MPIDHT_STATE_H

#include "../poet/poet_table.h"
#include "rmadht/mpidht/LUCX/MPI/DHT.h"

/* The definitions of the names LUCX/MPI/DHT.h declares; everything else in
   this library stays hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define MPIDHT_EXPORT __attribute__((visibility("default")))
#else
#define MPIDHT_EXPORT
#endif

/* Counters DHT_print_statistics reports and starts again. */
struct mpidht_period {
  uint64_t w_access, r_access, read_misses, evictions;
};

struct rmadht_mpidht_state {
  struct poet_table p;
  uint64_t (*hash_func)(int, const void *);
  struct mpidht_period period;
  /* Writes this rank stored on each rank, for the statistics' "occupied"
     column, as MPI-DHT counts it. */
  uint64_t *landed;
};

/* The state of a handle, NULL for a NULL handle. */
static inline struct rmadht_mpidht_state *mpidht_state(const DHT *table) {
  return table ? table->rmadht : NULL;
}

/* After a write or accumulate stored (evicted: another key went): completes
   it, counts it, reports its place.  A DHT_* code. */
int mpidht_stored(DHT *table, int evicted, const rmadht_location *loc,
                  uint32_t *proc, uint32_t *index);

/* (proc, index) of a location; UINT32_MAX for both when it has none. */
void mpidht_place(struct rmadht_mpidht_state *s, const rmadht_location *loc,
                  uint32_t *proc, uint32_t *index);

#endif
