/*
 * The state behind a handle of POET's current DHT API
 * (include/rmadht/poet/DHT.h), shared by dht_table.c, dht_accumulate.c and
 * dht_stats.c.
 */
#ifndef RMADHT_POET_DHT_STATE_H
#define RMADHT_POET_DHT_STATE_H

#include "poet_table.h"
#include "rmadht/poet/DHT.h"

/* Counters DHT_print_statistics reports and starts again. */
struct dht_period {
  uint64_t w_access, r_access, read_misses, evictions;
};

struct rmadht_poet_dht {
  struct poet_table p;
  uint64_t (*hash_func)(int, const void *);
  unsigned int data_size;
  struct dht_period period;
  /* DHT_get_used_idx_factor counts from here: rmadht's write_probes and
     writes at the last reset, and the updates this layer stored since. */
  uint64_t probes_base, writes_base, stored_updates;
};

/* The rmadht state of a handle, NULL for a NULL handle. */
static inline struct rmadht_poet_dht *dht_state(const DHT *table) {
  return table ? table->rmadht : NULL;
}

/* (proc, index) of a location; UINT32_MAX for both when it has none. */
void dht_place(struct rmadht_poet_dht *s, const rmadht_location *loc,
               uint32_t *proc, uint32_t *index);

/* After a write or accumulate stored (evicted: another key went): completes
   it, reports its place and counts the eviction.  A DHT_* code. */
int dht_stored(struct rmadht_poet_dht *s, int evicted,
               const rmadht_location *loc, uint32_t *proc, uint32_t *index);

/* Starts the count of DHT_get_used_idx_factor again. */
int dht_reset_probes(struct rmadht_poet_dht *s);

#endif
