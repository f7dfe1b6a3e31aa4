/*
 * The RMA primitives every protocol shares: counted synchronisation and the
 * record of lock-free puts not yet completed.
 *
 * Lock-free writes leave their final put outstanding, to be completed by the
 * next synchronisation with that target (or rmadht_flush), so a write waits
 * for two round trips rather than three.  MPI does not order a later get
 * after that put, so a get of a group with a put of ours outstanding must
 * flush its target first; rma_get_group does that.
 */
#ifndef RMADHT_RMA_H
#define RMADHT_RMA_H

#include "internal.h"

/* Outstanding puts; the images must live until their target is flushed. */
struct pending_put {
  int rank;
  uint64_t group;
  unsigned char *image;
};
struct pending {
  size_t n;
  struct pending_put put[PENDING_MAX];
  unsigned *per_rank;    /* outstanding puts per target */
  unsigned char *images; /* PENDING_MAX slot images */
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

/* Completes every outstanding put of this rank. */
int rma_flush_pending(rmadht *t);

#endif
