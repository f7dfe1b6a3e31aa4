/*
 * The RMA primitives every protocol shares: counted synchronisation and the
 * record of lock-free operations not yet completed.
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
   flushed: a slot image (put) or the three words of a compare-and-swap. */
struct pending_put {
  int rank;
  uint64_t group;
  unsigned char *image;
  uint32_t *word; /* new value, compare value, result */
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

/* MPI_Win_flush(rank), counted as a round trip; forgets its puts. */
int rma_flush(rmadht *t, int rank);

/* Issues the get of one whole group into dst. */
int rma_get_group(rmadht *t, int rank, uint64_t group, unsigned char *dst);
/* Issues the get of one slot (group * SLOT_GROUP + j) into dst. */
int rma_get_slot(rmadht *t, int rank, uint64_t slot, unsigned char *dst);

/* Returns the buffer for the image of a put into group on rank, recorded as
   outstanding; flushes the oldest target if the record is full. */
int rma_pending_image(rmadht *t, int rank, uint64_t group,
                      unsigned char **image);

/* Issues a compare-and-swap of the 32-bit word at disp in group on rank
   from old to new, recorded as outstanding (its result is not needed). */
int rma_pending_cas(rmadht *t, int rank, uint64_t group, uint64_t disp,
                    uint32_t old, uint32_t new_value);

/* Completes every outstanding operation of this rank. */
int rma_flush_pending(rmadht *t);

#endif
