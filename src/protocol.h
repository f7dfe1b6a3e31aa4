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
/* Lost slot claims of one write item before RMADHT_ERR_CONTENDED. */
#define WRITE_RETRIES 64
/* Re-reads of an update whose key is busy before RMADHT_ERR_CONTENDED,
   each after a pause of at most 2^UPDATE_PAUSE us: about a second in all,
   since an RMA writer's ver may land only at its next synchronisation with
   the target, but short pauses, since it usually lands within
   microseconds. */
#define UPDATE_WAITS 16384
#define UPDATE_PAUSE 6

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

/* Counts a lost claim (busy 0) or a busy key (busy 1) of item i; returns
   1, with *status RMADHT_ERR_CONTENDED, once its retries are spent. */
int protocol_give_up(rmadht *t, int i, int busy, int *status);

/* The pause before item i is read again after protocol_give_up. */
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

/* Waits a little longer on each attempt before a retry, driving MPI's
   progress engine all the while (see protocol.c). */
void protocol_backoff(rmadht *t, unsigned attempt);

#endif
