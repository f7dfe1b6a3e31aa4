/*
 * What both POET dialects share: an rmadht table sized by a bucket count,
 * a communicator of their own for the collectives POET's API defines, and
 * the two counters POET's DHT_free reports.  Built on the public API
 * (rmadht.h) alone.
 */
#ifndef RMADHT_POET_TABLE_H
#define RMADHT_POET_TABLE_H

#include <stdint.h>

#include "rmadht.h"

/* The definitions of the names a POET header declares; everything else in
   this library stays hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define POET_EXPORT __attribute__((visibility("default")))
#else
#define POET_EXPORT
#endif

struct poet_table {
  rmadht *t;
  MPI_Comm comm; /* a duplicate, for POET's own collectives */
  int rank;
  uint64_t evictions, read_misses; /* this rank's, summed by poet_free */
};

/* Collective.  A lock-free table with at least buckets slots per rank, of
   no more than max_slots, placed by hash (NULL: XXH3).  ok 0 on a rank
   makes every rank fail.  RMADHT_OK or the same error on every rank. */
int poet_table_create(struct poet_table *p, int ok, MPI_Comm comm,
                      uint64_t buckets, uint64_t max_slots, long long data_size,
                      long long key_size,
                      uint64_t (*hash)(const void *, size_t, void *),
                      void *hash_arg);

/* Collective.  Frees the table and its communicator; the counters summed
   over all ranks go to rank 0 (0 elsewhere), saturated to int, where the
   pointers are not NULL.  RMADHT_OK or an error. */
int poet_table_free(struct poet_table *p, int *evictions, int *read_misses);

/* The codes a dialect answers its file calls with. */
struct poet_file_codes {
  int success, error, open, write, wrong_file, no_mem;
};

/* The dialect's code for what rmadht_dump (dumping 1) or rmadht_restore
   returned. */
int poet_file_code(int rc, int dumping, const struct poet_file_codes *c);

/* rmadht_restore of path into p's table, its evictions added to p's; what
   the stats counted in between is after - before (nothing, where they
   could not be had).  Returns rmadht_restore's code. */
int poet_table_restore(struct poet_table *p, const char *path,
                       rmadht_stats *before, rmadht_stats *after);

/* POET's hashes reduce their result modulo the rank count; rmadht takes the
   owner from its high bits and a group from its low bits, so a hash that
   is fine for POET (a key's first eight bytes, say) would crowd one rank.
   A bijective mix keeps keys with equal hashes together. */
uint64_t poet_mix(uint64_t h);

#endif
