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
  /* DHT_get_used_idx_factor (dht_stats.c): what POET's DHT.c would have
     counted for the writes and accumulates since the last reset, summed
     over calls; the load the last stored write saw; POET's candidate
     count for this table's size; rmadht's candidates per key; and slots
     per POET bucket, as the table may be larger than asked for. */
  double probe_sum, last_load, slots_per_bucket;
  uint64_t calls;
  int poet_candidates, candidates;
};

/* The rmadht state of a handle, NULL for a NULL handle. */
static inline struct rmadht_poet_dht *dht_state(const DHT *table) {
  return table ? table->rmadht : NULL;
}

/* (proc, index) of a location; UINT32_MAX for both when it has none. */
void dht_place(struct rmadht_poet_dht *s, const rmadht_location *loc,
               uint32_t *proc, uint32_t *index);

/* After a write or accumulate stored (evicted: another key went): reports
   its place and counts the eviction.  A DHT_* code. */
int dht_stored(struct rmadht_poet_dht *s, int evicted,
               const rmadht_location *loc, uint32_t *proc, uint32_t *index);

/* Sets up the count of DHT_get_used_idx_factor for a table created with
   buckets buckets per rank. */
void dht_probes_init(struct rmadht_poet_dht *s, uint64_t buckets);

/* rmadht's write_probes now, taken before a write or accumulate so that
   dht_count_call sees what the call added. */
uint64_t dht_probes_now(const struct rmadht_poet_dht *s);

/* Counts a write or accumulate, begun when write_probes was before, as
   POET counts it; found: 1 when the key was in the table, 0 when it was
   not, -1 when unknown. */
void dht_count_call(struct rmadht_poet_dht *s, uint64_t before, int found);

/* Counts the entries a restore wrote, as POET's DHT_from_file, which
   writes each by DHT_write. */
void dht_count_restore(struct rmadht_poet_dht *s, const rmadht_stats *before,
                       const rmadht_stats *after);

/* Starts the count of DHT_get_used_idx_factor again; empty: the table was
   emptied too. */
void dht_reset_probes(struct rmadht_poet_dht *s, int empty);

#endif
