/*
 * Copies of recent single reads' and writes' candidate groups, which a
 * later write of the same key starts from instead of reading them again: a
 * cache reads a key, misses, computes and writes it, and the write then
 * waits twice, not three times; so does a second write of that key
 * (lockfree.c says why an old copy is safe to claim from).  A read's copy
 * holds only the slots it fetched; the others are marked busy in it, so
 * that the write chooses among the fetched ones (keep_partial_copy).
 *
 * Two-way sets chosen by the key's fingerprint; an entry is taken by the
 * write that uses it (which leaves its own) and dropped by any other write
 * of its key.  A copy only
 * saves a round trip: losing one to a collision costs nothing else.
 */
#ifndef RMADHT_MEMO_H
#define RMADHT_MEMO_H

#include "batch.h"

/* Entries at most, and bytes at most: a copy is two groups. */
#define MEMO_ENTRIES 1024
#define MEMO_BYTES ((size_t)4 << 20)

/* Keeps item i's copy (batch_cand) under key; does nothing when the memory
   for it cannot be had. */
void memo_store(rmadht *t, int i, const unsigned char *key);

/* Copies the kept copy of key into item i's candidates and forgets it;
   returns 1, or 0 when none is kept. */
int memo_take(rmadht *t, int i, const unsigned char *key);

/* Forgets the copy of key, if kept. */
void memo_drop(rmadht *t, int i, const unsigned char *key);

/* Forgets every copy. */
void memo_clear(rmadht *t);

#endif
