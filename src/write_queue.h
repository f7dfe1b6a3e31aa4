/*
 * Queued single writes (rmadht_config.write_queue): rmadht_write copies the
 * item here and returns, and the queue goes out as one write batch when it
 * is full, at rmadht_flush, and before any call that could observe or
 * reorder it.  Between hosts a lock-free single write waits for two or
 * three round trips; a batch waits for about as many in all, whatever its
 * size, so a cache that writes each miss as it comes (POET's DHT_Wrapper
 * does) stops waiting on its writes.
 *
 * The write contract allows it: a write is visible to other ranks only
 * after rmadht_flush here.  This rank still reads its own writes at once,
 * from the queue.  What the queue gives up: a queued write cannot report
 * RMADHT_EVICTED (evictions are counted in the stats when it is sent),
 * and an error of one queued item surfaces from the call that sent it.
 */
#ifndef RMADHT_WRITE_QUEUE_H
#define RMADHT_WRITE_QUEUE_H

#include "internal.h"

#define WRITE_QUEUE_MAX 4096

/* Makes t's queue of cap items (1..WRITE_QUEUE_MAX). */
int wq_create(rmadht *t, size_t cap);
void wq_destroy(rmadht *t);

/* Queues a write of key; sends the queue once it is full. */
int wq_push(rmadht *t, const void *key, const void *value);

/* The value of the newest queued write of key, or NULL. */
const unsigned char *wq_find(const rmadht *t, const void *key);

/* Sends every queued write as one write batch and empties the queue:
   RMADHT_OK (also with no queue), an error of the batch, or else the first
   error an item met.  Every call that reads, writes or empties the table
   sends the queue before anything else, but rmadht_write and rmadht_read,
   which finds this rank's queued writes. */
int wq_send(rmadht *t);

#endif
