/*
 * Steps the three consistency protocols share: judging what a read found,
 * deciding and imaging a write, and keeping a batch's retries in order.
 */
#ifndef RMADHT_PROTOCOL_H
#define RMADHT_PROTOCOL_H

#include "batch.h"
#include "search.h"

/* Re-reads of a torn key before its slot is reported invalid. */
#define READ_RETRIES 4
/* How long a write waits on candidates that a write in flight keeps busy
   while none of their claim and ver words changes, before it fails with
   RMADHT_ERR_CONTENDED.  A write that loses races never fails: a lost
   claim means another write won, and a busy slot whose words move is
   other writers' progress.  Only a writer stalled between its claim and
   its ver (on the RMA path: a rank that wrote and left the library
   without flushing, ver outstanding) leaves the words unchanged; a few
   seconds is far beyond any descheduling of a live writer (16 ranks on 2
   loaded cores) and short enough to report a forgotten flush. */
#define STALL_SECONDS 2.0
/* Backoff caps, as powers of two of microseconds: a lost claim waits up
   to 2^LOST_PAUSE us, a busy slot, which usually lands within
   microseconds, up to 2^BUSY_PAUSE us. */
#define LOST_PAUSE 10
#define BUSY_PAUSE 6

/* Window displacement of candidate slot c of item i. */
uint64_t protocol_slot_disp(const rmadht *t, int i, int c);

/* The number of candidate slots of item i. */
static inline int protocol_nslots(const rmadht *t, int i) {
  return t->scratch->place[i].ngroups * SLOT_GROUP;
}

/* Judges the copy of item i's candidates (its first nslots slots) after a
   read: copies the value and sets status, or returns 1 when the item
   should be read again (torn, and retries remain; pass may_retry 0 under a
   lock, where torn is corrupt). */
int protocol_read_result(rmadht *t, int i, int nslots,
                         const unsigned char *key, unsigned char *value,
                         int may_retry, int *status);

/* What protocol_decide made of item i. */
enum decision {
  DECIDE_DONE,  /* nothing to write: *status is set (a remove of a missing
                   key, an update that keeps or fails) */
  DECIDE_WRITE, /* s->slot[i], s->expect[i] (the claim seen there) and
                   s->value[i] (NULL: remove) are set */
  DECIDE_AGAIN  /* lock-free update: its key's slot, or while it is absent
                   any candidate, is torn or being written: read again */
};

/* Decides what item i of the call (s->src) writes and where, from its
   candidates; an update's function runs here, on the copy.  locked: the
   item holds a lock on its groups, so no write is in flight and a torn
   slot is corrupt, never busy. */
enum decision protocol_decide(rmadht *t, int i, const unsigned char *key,
                              int locked, int *status);

/* Whether item i, decided d (not DECIDE_DONE), waits on another writer:
   its key's slot, or the slot chosen, is held (in flight or torn), so the
   item is read again rather than claimed, a busy key to
   protocol_give_up. */
int protocol_must_wait(rmadht *t, int i, enum decision d);

/* Counts a lost claim (busy 0) or a busy key (busy 1) of item i, whose
   candidates are in its copy; returns 1, with *status
   RMADHT_ERR_CONTENDED, only for a busy key whose candidates showed no
   progress for STALL_SECONDS.  A lost claim never gives up. */
int protocol_give_up(rmadht *t, int i, int busy, int *status);

/* The randomised pause before item i is read again after
   protocol_give_up. */
void protocol_pause(rmadht *t, int i, int busy);

/* Fills image with item i's new slot content (value: s->value[i]) and
   sets *status (OK, or EVICTED), the stats and the item's location; claim
   is the claim value the write owns. */
void protocol_image(rmadht *t, int i, const unsigned char *key,
                    uint32_t claim, unsigned char *image, int *status);

/* The locked modes' write of item i, once its candidates are read and its
   lock held: decides, images the whole slot (the claim word too, since the
   lock makes it ours) and puts it; requeues a remove that leaves another
   copy of the key.  An item that writes nothing puts nothing. */
int protocol_put_locked(rmadht *t, int i, const unsigned char *key,
                        int *status, int *ntodo);

/* After a remove of item i took its slot: does the copy show another live
   slot with the same key (two racing inserts can leave two)? */
int protocol_more_copies(rmadht *t, int i, const unsigned char *key);

/* Puts item i back into the todo list in index order, so a retried item
   cannot be overtaken by a later item of the batch with the same key. */
void protocol_requeue(rmadht *t, int *ntodo, int i);

/* Waits a random time between 2^a and 2^(a+1) us, a = min(attempt,
   LOST_PAUSE), before a retry, driving MPI's progress engine all the while (see protocol.c). */
void protocol_backoff(rmadht *t, unsigned attempt);

#endif
