/*
 * The table handle and what the source files share.  Nothing here is API.
 */
#ifndef RMADHT_INTERNAL_H
#define RMADHT_INTERNAL_H

#include "rmadht.h"
#include "slot.h"

/* Where a key lives: owner rank and its two candidate groups, and the
   fingerprint its slot's tag holds in lock-free tables (never 0). */
struct place {
  int rank;
  uint64_t group[2];
  int ngroups; /* 1 when the table has a single group per rank */
  uint32_t tag;
};

/* The key's home slot in its candidate group g, as a candidate index
   (g * SLOT_GROUP + j): writers take it when it is free, so that a single
   lock-free RMA read can fetch it with the tags and need nothing more
   (lockfree.c).  Bits of the fingerprint above bit 0, which is always 1. */
static inline int place_home(const struct place *p, int g) {
  return g * SLOT_GROUP + (int)((p->tag >> (1 + 3 * g)) & (SLOT_GROUP - 1));
}

/* What the items of a write call store: given values, nothing (a
   remove), or what an update function makes of each current value. */
struct write_src {
  const unsigned char *values; /* n values; NULL with fn NULL: remove */
  rmadht_update_fn fn;         /* non-NULL: update */
  void *arg;
  size_t first;                /* the batch index of item 0, for fn */
  rmadht_location *locs;       /* where each entry went, or NULL */
};

/* One consistency protocol.  Batches are the unit of work: single calls
   are batches of one.  Each function fills status[i] for its n items and
   returns RMADHT_OK or an error. */
struct protocol {
  int (*read)(rmadht *t, size_t n, const unsigned char *keys,
              unsigned char *values, int *status);
  int (*write)(rmadht *t, size_t n, const unsigned char *keys,
               const struct write_src *src, int *status);
  /* Completes this rank's outstanding puts everywhere. */
  int (*flush)(rmadht *t);
};

extern const struct protocol rmadht_lockfree_protocol;
extern const struct protocol rmadht_fine_protocol;
extern const struct protocol rmadht_coarse_protocol;
extern const struct protocol rmadht_node_local_protocol;

#define PENDING_MAX 64 /* outstanding lock-free puts (rma.h) */
struct pending;
struct scratch;
struct progress;
struct write_queue;

struct rmadht {
  MPI_Comm comm;
  MPI_Win win;
  unsigned char *base; /* this rank's window */
  unsigned char **peer; /* node-local path: every rank's window; else NULL */
  unsigned char **near; /* lock-free reads by loads (table.c): the window
                           of each rank on this node, NULL for the others;
                           or NULL */
  MPI_Win near_win;     /* the node's shared window behind near */
  unsigned char *per_block; /* nranks flags: gathered gets and puts to the
                               rank go one message per block (rma.c) */
  int rank, nranks;
  enum rmadht_mode mode;
  const struct protocol *proto;
  struct slot_layout layout;
  uint64_t (*hash)(const void *key, size_t len, void *arg);
  void *hash_arg;
  uint64_t clock; /* Lamport clock of write epochs, for eviction by age */
  uint64_t id;    /* the same on every rank, carried by locations */
  rmadht_stats stats;
  struct pending *pending; /* nranks entries, lock-free mode */
  struct scratch *scratch; /* reusable batch buffers (batch.h) */
  struct progress *progress; /* progress thread (progress.h), or NULL */
  struct write_queue *queue; /* queued single writes (write_queue.h), or
                                NULL */
};

/* place.c: the table's hash of a key, where a hash lives, and both. */
uint64_t rmadht_hash(const rmadht *t, const void *key);
void place_from_hash(uint64_t h, int nranks, uint64_t groups,
                     struct place *p);
void rmadht_place(const rmadht *t, const void *key, struct place *p);

/* ops.c: runs the write items src describes over n keys, chunk by chunk,
   and counts them. */
int ops_write(rmadht *t, size_t n, const unsigned char *keys,
              const struct write_src *src, int *status);

/* location.c: the location of slot index slot (group * SLOT_GROUP + j) on
   rank. */
void location_make(const rmadht *t, int rank, uint64_t slot,
                   rmadht_location *loc);

/* errors.c: maps an MPI return code to RMADHT_OK / RMADHT_ERR_MPI. */
static inline int rmadht_mpi(int mpi_rc) {
  return mpi_rc == MPI_SUCCESS ? RMADHT_OK : RMADHT_ERR_MPI;
}
/* As rmadht_mpi, and on failure leaves rmadht_error_detail() naming the
   call, MPI's error string and the remedy, if any (NULL for none). */
int rmadht_mpi_call(int mpi_rc, const char *call, const char *remedy);
/* Leaves text (static) as rmadht_error_detail(). */
void rmadht_detail_set(const char *text);
/* Forgets the detail of an earlier error: called where a public call that
   can leave one begins. */
void rmadht_detail_clear(void);

#endif
