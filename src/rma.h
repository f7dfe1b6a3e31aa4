/*
 * The RMA primitives every protocol shares: counted synchronisation, gets
 * and puts gathered into one message per target, and the record of
 * lock-free operations not yet completed.
 *
 * Gets and puts are queued, not issued: when a target is flushed or
 * unlocked, the gets queued to it since go as ONE MPI_Get whose target
 * datatype lists the blocks (deduplicated, adjacent ones merged) and whose
 * origin datatype scatters them into their destinations, and its puts as
 * one MPI_Put likewise; a single block goes plain, and so does each block
 * to a rank on this node, where blocks are cheap and datatypes are not
 * (rma.c).  A target's run of more than 64 KB goes as several such
 * messages, and gets to another node land in one contiguous staging
 * buffer first, copied out at the flush: MPICH 4.0.2 over TCP serves both
 * far faster than one large message scattered straight into the items.
 * Between hosts a message costs about 10-30 us over TCP whatever its size
 * while each further block of a datatype costs ~1-3 us, so a batch's
 * reads cost one message per target (per 64 KB) instead of two per item,
 * and a single read one instead of two.  The bytes are the same.
 *
 * A lock-free write ends with a compare-and-swap of its slot's ver word
 * (lockfree.c), left outstanding to be completed by the next
 * synchronisation with that target (or rmadht_flush).  MPI does not order
 * a later get after it, so a get of a group with an operation of ours
 * outstanding must flush its target first; rma_get_group does that.
 */
#ifndef RMADHT_RMA_H
#define RMADHT_RMA_H

#include "internal.h"

/* Outstanding operations; their buffers must live until their target is
   flushed: a slot image and its tag (puts) or the three words of a
   compare-and-swap. */
struct pending_put {
  int rank;
  uint64_t group;
  unsigned char *image;
  uint32_t *word; /* new value, compare value, result; or the image's tag */
};
struct pending {
  size_t n;
  struct pending_put put[PENDING_MAX];
  unsigned *per_rank;    /* outstanding operations per target */
  unsigned char *images; /* PENDING_MAX slot images */
  uint32_t *words;       /* PENDING_MAX * 3 words */
};

int pending_init(struct pending *p, int nranks, size_t slot_size);
void pending_destroy(struct pending *p);

/* Issues the gets queued to rank, then MPI_Win_flush(rank), counted as a
   round trip; forgets its puts.  The queued destinations are filled when
   it returns. */
int rma_flush(rmadht *t, int rank);
/* The same with MPI_Win_unlock(rank), for the coarse-lock mode. */
int rma_unlock(rmadht *t, int rank);
/* Issues the gets queued to rank, the only target with operations of this
   rank queued, and waits until their destinations are filled: one round
   trip, in fewer messages than rma_flush where this rank has nothing else
   outstanding on the window (rma.c says why that matters). */
int rma_complete_gets(rmadht *t, int rank);
/* Issues the gets and puts queued to rank without waiting for them, so
   that a caller about to flush several targets has every target's
   messages in flight before it waits for the first (batch.c). */
int rma_issue(rmadht *t, int rank);

/* Queues the get of one whole group into dst; dst is filled once rank is
   flushed or unlocked (the caller touches rank, batch.h). */
int rma_get_group(rmadht *t, int rank, uint64_t group, unsigned char *dst);
/* The same, without first completing this rank's outstanding operations on
   the group: for a caller that reads no word they change. */
int rma_get_group_unordered(rmadht *t, int rank, uint64_t group,
                            unsigned char *dst);
/* Whether this rank reads rank's window by loads (t->near, table.c). */
static inline int rma_is_near(const rmadht *t, int rank) {
  return t->near && t->near[rank];
}
/* For a rank read by loads: copies its group into dst now, after this
   rank's outstanding operations on the group are complete if ordered (as
   rma_get_group, else as rma_get_group_unordered).  No round trip. */
int rma_load_group(rmadht *t, int rank, uint64_t group, unsigned char *dst,
                   int ordered);
/* Queues the get of one slot (group * SLOT_GROUP + j) into dst. */
int rma_get_slot(rmadht *t, int rank, uint64_t slot, unsigned char *dst);
/* Queues the get of group's SLOT_GROUP tags (slot.h) into dst. */
int rma_get_tags(rmadht *t, int rank, uint64_t group, unsigned char *dst);
/* Queues the put of len bytes from src to disp on rank; src must stay
   unchanged until rank is flushed or unlocked, and no two puts queued to
   one target may overlap (MPI forbids it in one datatype). */
int rma_put(rmadht *t, int rank, uint64_t disp, size_t len,
            const unsigned char *src);

/* Returns the buffers for the image of a put into group on rank and for
   its tag, recorded as outstanding; flushes the oldest target if the
   record is full. */
int rma_pending_image(rmadht *t, int rank, uint64_t group,
                      unsigned char **image, uint32_t **tag);

/* Issues a compare-and-swap of the 32-bit word at disp in group on rank
   from old to new, recorded as outstanding (its result is not needed). */
int rma_pending_cas(rmadht *t, int rank, uint64_t group, uint64_t disp,
                    uint32_t old, uint32_t new_value);

/* Completes every outstanding operation of this rank. */
int rma_flush_pending(rmadht *t);

#endif
