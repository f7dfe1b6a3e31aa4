/*
 * Batching: the per-call working memory and the two ideas every protocol
 * uses to keep round trips per batch, not per item.
 *
 * - Targets touched: operations to all targets are issued first, then each
 *   target involved is flushed once (per-target MPI_Win_flush, since MPICH
 *   4.0.2's MPI_Win_flush_all can return with gets incomplete).
 * - Waves: a wave holds items whose candidate groups are disjoint, so their
 *   decisions taken from one snapshot of the groups cannot conflict; an item
 *   that shares a group with an earlier one (the same key, say) waits for the
 *   next wave, which keeps later items of a batch winning over earlier ones.
 *
 * - Atomics: at most BATCH_ATOMICS atomic operations are left outstanding
 *   to one target; the next flushes it first.  Between hosts over TCP,
 *   Open MPI 4.1.4's osc/pt2pt deadlocks with many more outstanding to a
 *   target: every rank ends up waiting in nested progress for replies
 *   (measured with 75 compare-and-swaps per target and per flush, 2 ranks
 *   on each of 2 hosts, without rmadht).  A batch pays one extra round trip
 *   per BATCH_ATOMICS items to one target, where it would pay one per item
 *   unbatched.
 *
 * Public batch calls are cut into chunks of BATCH_CHUNK items so the
 * working memory stays bounded whatever n is.
 */
#ifndef RMADHT_BATCH_H
#define RMADHT_BATCH_H

#include "internal.h"

#define BATCH_CHUNK 256
#define BATCH_ATOMICS 32
/* Operations queued at once: a chunk's two candidate groups per item, the
   two groups' tags and home slots of a lock-free read, or a put per item. */
#define GATHER_MAX (4 * BATCH_CHUNK)
/* Groups' worth of bytes the staging buffer holds (rma.c): a chunk's two
   candidate groups per item. */
#define STAGE_GROUPS (2 * BATCH_CHUNK)

/* A get or put queued for its target's next synchronisation (rma.h). */
struct gather_req {
  int rank, put;
  unsigned len;
  uint64_t disp;
  unsigned char *buf;  /* a get's destination, a put's source */
  unsigned char *same; /* non-NULL: copied from here into buf once
                          complete (a duplicate get, or a get that
                          arrived in the staging buffer) */
};

struct scratch {
  struct place place[BATCH_CHUNK];
  int todo[BATCH_CHUNK], wave[BATCH_CHUNK];
  int slot[BATCH_CHUNK];     /* chosen candidate per item */
  uint32_t expect[BATCH_CHUNK], result[BATCH_CHUNK], claim[BATCH_CHUNK];
  uint32_t lock_old[BATCH_CHUNK][2];
  unsigned tries[BATCH_CHUNK];
  unsigned waits[BATCH_CHUNK]; /* re-reads of an update's busy key */
  /* The claim and ver words of an item's candidates when it last found
     them busy, and since when they have not changed (protocol.c). */
  uint64_t busy_mark[BATCH_CHUNK];
  double busy_since[BATCH_CHUNK];
  uint64_t rng; /* xorshift state of the randomised backoff */
  uint32_t probes[BATCH_CHUNK]; /* write_probes of a write's choice */
  unsigned char kind[BATCH_CHUNK];    /* enum choice_kind of a write */
  unsigned char removed[BATCH_CHUNK]; /* a remove took one copy already */
  unsigned char *cand;       /* BATCH_CHUNK * 2 groups of candidates */
  unsigned char *tags;       /* BATCH_CHUNK * 2 groups' tags (lockfree.c) */
  unsigned char *image;      /* BATCH_CHUNK slot images (not lockfree.c) */
  const struct write_src *src;              /* the write call's items */
  const unsigned char *value[BATCH_CHUNK];  /* what item i stores; NULL:
                                               remove */
  unsigned char *made;       /* BATCH_CHUNK values made by update fns */
  int *touched_list;         /* nranks */
  unsigned char *touched;    /* nranks flags */
  unsigned *atomics;         /* nranks: outstanding atomics per target */
  int ntouched;
  /* Queued gets and puts (rma.h): ngather of them, gather_per_rank
     counting them per target; run holds those issued and not yet
     completed (rank -1 once completed), nlive of its nrun. */
  int ngather, nrun, nlive;
  /* Where gets to another node land first (rma.c): STAGE_GROUPS groups,
     stage_used bytes of them held by issued gets not yet completed. */
  unsigned char *stage;
  size_t stage_used;
  unsigned *gather_per_rank; /* nranks */
  struct gather_req gather[GATHER_MAX], run[2 * GATHER_MAX];
  int blen[GATHER_MAX];
  MPI_Aint tdisp[GATHER_MAX], odisp[GATHER_MAX];
  uint64_t wave_set[4 * BATCH_CHUNK]; /* (rank, group) + 1; 0 = free */
  /* Copies of recent single reads' candidates (memo.h): memo_n entries
     of memo_entry bytes, NULL until the first. */
  unsigned char *memo;
  size_t memo_n, memo_entry;
};

int scratch_create(rmadht *t);
void scratch_destroy(rmadht *t);

/* The candidates buffer of item i: ngroups groups back to back. */
static inline unsigned char *batch_cand(rmadht *t, int i) {
  return t->scratch->cand + (size_t)i * 2 * t->layout.group_bytes;
}
static inline unsigned char *batch_image(rmadht *t, int i) {
  return t->scratch->image + (size_t)i * t->layout.slot_size;
}

void batch_touch(rmadht *t, int rank);
/* batch_touch for an atomic operation just issued to rank: flushes rank
   when BATCH_ATOMICS are outstanding there. */
int batch_atomic(rmadht *t, int rank);
/* Flushes every touched target once, in rank order, and clears the set. */
int batch_flush_touched(rmadht *t);
/* The same for a round of gets alone: where it touched a single target,
   waits for them as rma_complete_gets does. */
int batch_complete_gets(rmadht *t);

/* Clears the touched set without flushing, after an unlock completed it. */
void batch_forget_touched(rmadht *t);

/* Places items [0, n) of keys and lists them all as todo. */
void batch_place(rmadht *t, size_t n, const unsigned char *keys);
/* The same for a write call, whose items src describes. */
void batch_place_write(rmadht *t, size_t n, const unsigned char *keys,
                       const struct write_src *src);

/* Moves from todo (ntodo items, order kept) into wave the items whose
   groups no earlier wave item uses; returns the wave size and leaves the
   rest in todo, *ntodo updated. */
int batch_select_wave(rmadht *t, int *ntodo);

/* Queues the gets of item i's candidate groups (rma.h: they go as one get
   per target when it is flushed); ordered 0 lets them overlap this rank's
   own outstanding operations on them (rma_get_group_unordered). */
int batch_get_candidates(rmadht *t, int i, int ordered);

#endif
