/*
 * Lock-free protocol: optimistic reads validated by each slot's checksum,
 * writes that own their slot by a 32-bit compare-and-swap on its claim word.
 *
 * read:  from a rank served by messages, get both groups' tags and the
 *        key's two home slots, and in a second round trip only the other
 *        slots whose tag is the key's, if any (sparse_read); from others
 *        both candidate groups.  A batch's items share each round trip,
 *        one flush per target.  A round trip to a single target ends in a
 *        local flush where nothing else is outstanding
 *        (rma_complete_gets).  A torn match is re-read a few times, then
 *        reported missing, after a pause where the copy was a load.
 *        The groups of a rank on this node, where the table reads by
 *        loads (table.c), are copied instead, by reads and by writes for
 *        the copy they start from: no round trip.
 * write: get the candidates (round trip 1), pick a slot, compare-and-swap
 *        its claim from the value seen to the next (round trip 2), put the
 *        new entry but its ver word and flush it (round trip 3), then
 *        compare-and-swap ver to the claim, left to complete at this rank's
 *        next synchronisation with the target.  A lost claim means another
 *        writer took the slot first: pause a random while, read again and
 *        choose again, as often as it takes (protocol.c says why that is
 *        bounded in expectation).  Two writers can therefore never fill
 *        the same free slot with different keys.
 * update: the same write, its value made from the copy of round trip 1 by
 *        the caller's function (protocol.c), which runs again after a lost
 *        claim.  A key whose slot is being written is read again first.
 * blind write: a single write of a key this rank has no copy of guesses
 *        a slot, one of the key's two home slots, and sends
 *        round trip 1 with a compare-and-swap of its claim from 0 beside
 *        the get.  Claims never return to 0, so a won guess is a slot no
 *        writer has ever claimed: nothing of another write can be landing
 *        in it, and it is ours as any won claim makes it.  Then the write
 *        waits twice, as the MPI-DHT of Lübke et al. 2024 does.  If the
 *        get shows the key in another slot, the guessed slot is given
 *        back as a tombstone (free to writers) and the key's own slot
 *        claimed in the same round trip, so a key never gets a second
 *        slot this way.  A lost guess costs nothing but the
 *        compare-and-swap: the write goes on from the get as ever.  In a
 *        table far from full most guesses win (a slot is claimed once
 *        some key has taken it, so the odds fall as the table fills).
 * write of a key read or written before: a single read keeps its copy
 *        (memo.h) when a write can start from it (keep_partial_copy), and
 *        so does a single write, patched with the entry it put; a single
 *        write of that key starts from it in place of round trip 1, so it
 *        waits twice: the claim, with a fresh get of the
 *        candidates beside it, then the put.  That is a cache's pattern
 *        (POET's DHT_Wrapper, rmadht_cache: read, miss, compute, write;
 *        POET writes a key again for each cell of a work package that
 *        shares it).
 *        However old the copy, a claim compares the slot's claim word with
 *        the copy's: if it wins, no writer has claimed the slot since, so
 *        the slot still holds what the copy shows and the choice made from
 *        it stands, as for any copy whose claim follows it a while later.
 *        A copy this rank's write left may show its own slot finished
 *        while that write's ver is still outstanding; the new write puts
 *        everything but ver and flushes, which completes the old ver before
 *        the new one is sent.
 *        The key may meanwhile have gone to another slot; then it has two,
 *        as two racing inserts leave, and the fresh get keeps ours the
 *        newer: its epoch passes every epoch that get shows, so a write
 *        ordered after another rank's (by a flush and a message) wins.
 *
 * Why ver comes last, after a flush: writers claim only finished slots
 * (claim == ver and the copy consistent, slot_claimable), so the write
 * that makes a slot look finished must be the last one that can touch it.
 * MPI defines a put's target bytes only once the put is complete, and
 * until then it may write them more than once: Open MPI over shared
 * memory puts with the origin's memcpy, and glibc copies a short run with
 * two overlapping stores (8 bytes: the same word twice), between which
 * the origin can be descheduled.  Had ver travelled in the put, the first
 * store of the last bytes would make the slot look finished; a second
 * writer could claim and rewrite it; then the late second store would
 * tear that entry for good.  A flush completes the put, and ver, a single
 * atomic operation, cannot land twice.  docs/explanation/lockfree-protocol.md
 * has the model that
 * finds this interleaving and checks the fix.
 *
 * The claim is 32-bit because Open MPI 4.1.4 crashes in a 64-bit
 * MPI_Compare_and_swap to another rank; 32-bit works on both MPIs.
 */
#include <string.h>

#include "memo.h"
#include "protocol.h"
#include "rma.h"

/* Keeps a single read's copy for a write of the key (memo.h) when that
   write can start from it: the key was found, or the group a write with
   both whole groups would choose, by choose_slot's rule
   (search_pick_group) with the slots the tags show without a key, has a
   slot to offer.  That is its home if free, or else its first slot not
   fetched whose tag is 0, shown as never claimed: the write's claim
   compares that slot's claim word with 0, so it wins only where no
   writer has ever claimed the slot, as a blind write's guess does, and a
   tombstone or a first write still landing (its tag not yet put) makes
   it lose and read again.  Only that slot is left free in the copy; the
   other slots the write must not take, those not fetched and the other
   group's home, are marked as written by another writer and still in
   flight (claimed, unfinished, epoch 0, another key), which no writer
   chooses while a free slot remains.  Otherwise the copy is of no use,
   and an older one is dropped. */
static void keep_partial_copy(rmadht *t, const unsigned char *key,
                              const unsigned char *fetched,
                              unsigned char (*tags)[4 * SLOT_GROUP]) {
  const struct place *p = &t->scratch->place[0];
  const struct slot_layout *l = &t->layout;
  unsigned char *cand = batch_cand(t, 0);
  int home[2] = {place_home(p, 0), place_home(p, 1)};
  int nfree[2] = {0, 0}, home_free[2] = {0, 0};
  for (int g = 0; g < p->ngroups; g++) {
    for (int j = 0; j < SLOT_GROUP; j++)
      nfree[g] += slot_get32(tags[g], 4u * (size_t)j) == 0;
    home_free[g] = search_free(l, cand + (size_t)home[g] * l->slot_size);
  }
  int best = search_pick_group(p->ngroups, nfree, home_free), offer = -1;
  for (int j = 0; best >= 0 && !home_free[best] && j < SLOT_GROUP; j++) {
    int c = best * SLOT_GROUP + j;
    if (!fetched[c] && slot_get32(tags[best], 4u * (size_t)j) == 0) {
      offer = c;
      memset(cand + (size_t)c * l->slot_size, 0, SLOT_HEADER);
      break;
    }
  }
  for (int c = 0; c < p->ngroups * SLOT_GROUP; c++) {
    unsigned char *slot = cand + (size_t)c * l->slot_size;
    int g = c / SLOT_GROUP;
    if (c == offer ||
        (fetched[c] && (c != home[g] || g == best || !home_free[g])))
      continue;
    memset(slot, 0, SLOT_HEADER);
    slot[SLOT_OFF_CLAIM] = 1;
    memcpy(slot + SLOT_HEADER, key, l->key_size);
    slot[SLOT_HEADER] ^= 0xff;
  }
  enum choice_kind kind;
  uint64_t top;
  choose_slot(l, cand, p->ngroups, home, key, &kind, &top);
  if (kind == CHOICE_EVICT)
    memo_drop(t, 0, key);
  else
    memo_store(t, 0, key);
}

/* A lock-free read of a key on a rank served by messages (rma.c, by
   default those on other nodes) fetches both groups' tags and the key's
   two home slots in one round trip (480 bytes for rmadht-bench's sizes,
   where both groups are 3,328), and in a second round trip the other
   slots whose tag is the key's fingerprint, if there are any: the key
   away from home (both home slots were taken when it was written), a
   second copy of it (two racing inserts), or another key with the same
   fingerprint (1 in 2^31 per slot).  Slots not fetched are left
   unclaimed in the copy, which makes the judgement skip them.  A writer's
   tag lands before its ver, so a key whose write has completed is never
   missed; one still being written may be, as by any read.  A batch's
   items share both round trips, and between hosts the bytes are what a
   batch waits for: under MPICH, values of 8 bytes instead of 104 (1,791
   bytes a read instead of 3,326, as many blocks) made batch-128 reads
   1.6 times faster.  To a rank whose blocks go one get each (by default
   those on this node) reads fetch both groups instead, since there four
   gets would cost more than two; to one read by loads, they copy them. */
static int sparse_read(const rmadht *t, int i) {
  int rank = t->scratch->place[i].rank;
  return !t->per_block[rank] && !rma_is_near(t, rank);
}

/* Item i's copy of group g's tags. */
static unsigned char *item_tags(rmadht *t, int i, int g) {
  return t->scratch->tags + ((size_t)i * 2 + (size_t)g) * 4 * SLOT_GROUP;
}

/* Round trip 1 of a sparse read of item i: queues the gets of its groups'
   tags and home slots. */
static int get_tags_homes(rmadht *t, int i) {
  const struct place *p = &t->scratch->place[i];
  unsigned char *cand = batch_cand(t, i);
  int rc = RMADHT_OK;
  for (int g = 0; g < p->ngroups && !rc; g++) {
    int h = place_home(p, g);
    rc = rma_get_tags(t, p->rank, p->group[g], item_tags(t, i, g));
    if (!rc)
      rc = rma_get_slot(t, p->rank,
                        p->group[g] * SLOT_GROUP + (uint64_t)(h % SLOT_GROUP),
                        cand + (size_t)h * t->layout.slot_size);
  }
  if (!rc) batch_touch(t, p->rank);
  return rc;
}

/* Round trip 2: queues the gets of item i's other slots whose tag is its
   fingerprint, sets *more if there are any, and marks the slots not
   fetched unclaimed in the copy; fetched[c] (unless NULL) says which
   candidates were. */
static int get_tag_matches(rmadht *t, int i, int *more,
                           unsigned char *fetched) {
  const struct place *p = &t->scratch->place[i];
  size_t size = t->layout.slot_size;
  unsigned char *cand = batch_cand(t, i);
  int rc = RMADHT_OK;
  for (int c = 0; c < p->ngroups * SLOT_GROUP && !rc; c++) {
    int g = c / SLOT_GROUP, j = c % SLOT_GROUP, got = c == place_home(p, g);
    unsigned char *slot = cand + (size_t)c * size;
    if (!got && slot_get32(item_tags(t, i, g), 4u * (size_t)j) == p->tag) {
      rc = rma_get_slot(t, p->rank, p->group[g] * SLOT_GROUP + (uint64_t)j,
                        slot);
      batch_touch(t, p->rank);
      got = *more = 1;
    } else if (!got) {
      memset(slot + SLOT_OFF_CLAIM, 0, 4);
    }
    if (fetched) fetched[c] = (unsigned char)got;
  }
  return rc;
}

/* A single read fetched sparsely: as a batch's item, then keeps what it
   fetched for a write of the key (keep_partial_copy). */
static int lf_read_single(rmadht *t, const unsigned char *key,
                          unsigned char *value, int *status) {
  unsigned char fetched[2 * SLOT_GROUP];
  int nslots = protocol_nslots(t, 0);
  for (;;) {
    int more = 0, rc = get_tags_homes(t, 0);
    if (!rc) rc = batch_complete_gets(t);
    if (!rc) rc = get_tag_matches(t, 0, &more, fetched);
    if (!rc && more) rc = batch_complete_gets(t);
    if (rc) return rc;
    if (!protocol_read_result(t, 0, nslots, key, value, 1, status)) break;
  }
  keep_partial_copy(t, key, fetched,
                    (unsigned char(*)[4 * SLOT_GROUP])item_tags(t, 0, 0));
  return RMADHT_OK;
}

static int lf_read(rmadht *t, size_t n, const unsigned char *keys,
                   unsigned char *values, int *status) {
  struct scratch *s = t->scratch;
  size_t ks = t->layout.key_size, vs = t->layout.value_size;
  batch_place(t, n, keys);
  if (n == 1 && sparse_read(t, 0))
    return lf_read_single(t, keys, values, status);
  int ntodo = (int)n;
  while (ntodo > 0) {
    int sparse = 0, more = 0;
    for (int k = 0; k < ntodo; k++) {
      int i = s->todo[k];
      int rc = sparse_read(t, i) ? (sparse = 1, get_tags_homes(t, i))
                                 : batch_get_candidates(t, i, 1);
      if (rc) return rc;
    }
    int rc = batch_complete_gets(t);
    for (int k = 0; k < ntodo && sparse && !rc; k++)
      if (sparse_read(t, s->todo[k]))
        rc = get_tag_matches(t, s->todo[k], &more, NULL);
    if (!rc && more) rc = batch_complete_gets(t);
    if (rc) return rc;
    int nleft = 0, pause = -1;
    for (int k = 0; k < ntodo; k++) {
      int i = s->todo[k];
      if (protocol_read_result(t, i, protocol_nslots(t, i), keys + i * ks,
                               values + i * vs, 1, &status[i])) {
        s->todo[nleft++] = i;
        /* A torn match read by loads is a write landing right now: give
           it time, as a get's round trip would. */
        if (rma_is_near(t, s->place[i].rank) && (int)s->tries[i] > pause)
          pause = s->tries[i];
      }
    }
    ntodo = nleft;
    if (pause >= 0) protocol_backoff(t, pause);
  }
  if (n == 1) memo_store(t, 0, keys);
  return RMADHT_OK;
}

/* The buffers for the image item i puts into its candidate c and for the
   slot's tag, recorded as outstanding until its target is flushed
   (rma.h). */
static int entry_image(rmadht *t, int i, int c, unsigned char **image,
                       uint32_t **tag) {
  const struct place *p = &t->scratch->place[i];
  return rma_pending_image(t, p->rank, p->group[c / SLOT_GROUP], image, tag);
}

/* Queues the put of image into candidate c of item i, all but its claim
   and ver (both are only ever changed by compare-and-swap, and
   accumulates and puts may not overlap), and of the slot's tag: the key's
   fingerprint for a live entry, 0 for a tombstone.  The flush before ver
   completes both.  patch: item i's copy is made to show the slot as the
   put leaves it, for the next single write of the key. */
static int put_entry(rmadht *t, int i, int c, const unsigned char *image,
                     uint32_t *tag, int patch) {
  const struct place *p = &t->scratch->place[i];
  size_t size = t->layout.slot_size;
  if (patch) memcpy(batch_cand(t, i) + (size_t)c * size, image, size);
  *tag = (slot_get64(image, SLOT_OFF_STAMP) & 3u) == STAMP_LIVE ? p->tag : 0;
  int rc = rma_put(t, p->rank, protocol_slot_disp(t, i, c) + SLOT_OFF_STAMP,
                   size - SLOT_OFF_STAMP, image + SLOT_OFF_STAMP);
  if (!rc)
    rc = rma_put(t, p->rank,
                 slot_tags_disp(p->group[c / SLOT_GROUP]) +
                     4u * (uint64_t)(c % SLOT_GROUP),
                 4, (const unsigned char *)tag);
  if (!rc) batch_touch(t, p->rank);
  return rc;
}

/* Once put_entry's put is complete: the compare-and-swap of the slot's ver
   from old to new_value, left outstanding. */
static int send_ver(rmadht *t, int i, int c, uint32_t old,
                    uint32_t new_value) {
  const struct place *p = &t->scratch->place[i];
  return rma_pending_cas(t, p->rank, p->group[c / SLOT_GROUP],
                         protocol_slot_disp(t, i, c) + SLOT_OFF_VER, old,
                         new_value);
}

/* The candidate a blind write of item i guesses free: one of its home
   slots, the group picked by a bit of the fingerprint that place_home
   leaves alone. */
static int guess_of(const rmadht *t, int i) {
  const struct place *p = &t->scratch->place[i];
  return place_home(p, p->ngroups > 1 ? (int)(p->tag >> 7 & 1u) : 0);
}

/* Queues the guess of item i beside its get: a compare-and-swap of the
   guessed slot's claim from 0 to 1, its result in s->result[i]. */
static int guess_claim(rmadht *t, int i) {
  struct scratch *s = t->scratch;
  int rank = s->place[i].rank;
  s->expect[i] = 0;
  s->claim[i] = slot_next_claim(0);
  int rc = rmadht_mpi(MPI_Compare_and_swap(
      &s->claim[i], &s->expect[i], &s->result[i], MPI_UINT32_T, rank,
      (MPI_Aint)(protocol_slot_disp(t, i, guess_of(t, i)) + SLOT_OFF_CLAIM),
      t->win));
  return rc ? rc : batch_atomic(t, rank);
}

/* Gives item i's won guess back: queues the put of a tombstone into it
   (its ver follows after the next flush) and patches the copy to show it
   so. */
static int guess_return(rmadht *t, int i, const unsigned char *key) {
  int at = guess_of(t, i);
  unsigned char *image;
  uint32_t *tag;
  int rc = entry_image(t, i, at, &image, &tag);
  if (rc) return rc;
  slot_fill(&t->layout, image, slot_next_claim(0), ++t->clock, STAMP_TOMB,
            key, NULL);
  return put_entry(t, i, at, image, tag, 1);
}

static int lf_write(rmadht *t, size_t n, const unsigned char *keys,
                    const struct write_src *src, int *status) {
  struct scratch *s = t->scratch;
  size_t ks = t->layout.key_size;
  batch_place_write(t, n, keys, src);
  /* A plain single write of a key read or written before starts from that
     copy; any other write makes a kept copy of its key stale. */
  int single = n == 1 && src->values && !src->fn;
  int memo = single && memo_take(t, 0, keys);
  int guess = single && !memo;
  if (!memo)
    for (int i = 0; i < (int)n; i++) memo_drop(t, i, keys + i * ks);
  int ntodo = (int)n;
  for (; ntodo > 0; memo = 0, guess = 0) {
    int nwave = batch_select_wave(t, &ntodo);
    int rc;
    if (!memo) {
      for (int w = 0; w < nwave; w++) {
        rc = batch_get_candidates(t, s->wave[w], 1);
        if (rc) return rc;
      }
      if (guess && (rc = guess_claim(t, 0))) return rc;
      rc = batch_flush_touched(t);
      if (rc) return rc;
    }

    /* An item that found its key busy, one that lost its claim, and a
       won guess given back. */
    int nclaim = 0, waiting = -1, lost = -1, returned = -1;
    for (int w = 0; w < nwave; w++) {
      int i = s->wave[w];
      enum decision d = protocol_decide(t, i, keys + i * ks, 0, &status[i]);
      if (d == DECIDE_DONE) continue;
      if (guess && s->result[i] == 0) {
        if (s->kind[i] != CHOICE_UPDATE) {
          s->slot[i] = guess_of(t, i);
          s->expect[i] = 0;
          s->claim[i] = slot_next_claim(0);
          s->kind[i] = CHOICE_FREE;
          s->wave[nclaim++] = i;
          continue;
        }
        rc = guess_return(t, i, keys + i * ks);
        if (rc) return rc;
        returned = i;
      }
      /* Its key's slot, or the slot chosen, is another rank's write
         landing: wait, then read again. */
      if (protocol_must_wait(t, i, d)) {
        if (!protocol_give_up(t, i, 1, &status[i])) {
          protocol_requeue(t, &ntodo, i);
          waiting = i;
        }
        continue;
      }
      s->claim[i] = slot_next_claim(s->expect[i]);
      int rank = s->place[i].rank;
      rc = rmadht_mpi(MPI_Compare_and_swap(
          &s->claim[i], &s->expect[i], &s->result[i], MPI_UINT32_T, rank,
          (MPI_Aint)(protocol_slot_disp(t, i, s->slot[i]) + SLOT_OFF_CLAIM),
          t->win));
      if (!rc) rc = batch_atomic(t, rank);
      /* Decided: the copy may now be refreshed, for the epoch alone, which
         no outstanding ver of ours changes. */
      if (!rc && memo) rc = batch_get_candidates(t, i, 0);
      if (rc) return rc;
      s->wave[nclaim++] = i;
    }
    rc = batch_flush_touched(t);
    if (!rc && returned >= 0)
      rc = send_ver(t, returned, guess_of(t, returned), 0, slot_next_claim(0));
    if (rc) return rc;
    if (memo && nclaim) {
      uint64_t top = search_top_epoch(&t->layout, batch_cand(t, 0),
                                      protocol_nslots(t, 0));
      if (top > t->clock) t->clock = top;
    }

    int nput = 0;
    for (int w = 0; w < nclaim; w++) {
      int i = s->wave[w];
      const unsigned char *key = keys + i * ks;
      if (s->result[i] != s->expect[i]) {
        /* Read again and decide again; an update runs its function on
           the value that won. */
        protocol_give_up(t, i, 0, &status[i]);
        protocol_requeue(t, &ntodo, i);
        lost = i;
        continue;
      }
      unsigned char *image;
      uint32_t *tag;
      rc = entry_image(t, i, s->slot[i], &image, &tag);
      if (rc) return rc;
      protocol_image(t, i, key, s->claim[i], image, &status[i]);
      rc = put_entry(t, i, s->slot[i], image, tag, single);
      if (rc) return rc;
      s->wave[nput++] = i;
      if (!s->value[i] && protocol_more_copies(t, i, key))
        protocol_requeue(t, &ntodo, i);
    }
    /* Round trip 3: the puts are complete, no byte of them can land
       again; only now may ver say the slots are finished. */
    rc = batch_flush_touched(t);
    if (rc) return rc;
    for (int w = 0; w < nput; w++) {
      int i = s->wave[w];
      rc = send_ver(t, i, s->slot[i], s->expect[i], s->claim[i]);
      if (rc) return rc;
    }
    /* Before waiting on another rank's write, complete ours: two ranks
       each waiting on a slot whose ver the other left outstanding would
       otherwise wait on each other. */
    if (waiting >= 0) {
      rc = rma_flush_pending(t);
      if (rc) return rc;
      protocol_pause(t, waiting, 1);
    } else if (lost >= 0) {
      protocol_pause(t, lost, 0);
    }
  }
  if (single && (status[0] == RMADHT_OK || status[0] == RMADHT_EVICTED))
    memo_store(t, 0, keys);
  return RMADHT_OK;
}

const struct protocol rmadht_lockfree_protocol = {lf_read, lf_write,
                                                  rma_flush_pending};
