/*
 * Node-local protocol: the lock-free protocol with loads, stores and CPU
 * atomics in place of RMA, for tables whose ranks all share one node (the
 * window is then an MPI shared-memory window; see table.c).
 *
 * Why: on one node an MPI_Get is a memory copy wrapped in a library call
 * and a flush, and that wrapping is most of its cost (rmadht-rma-cost
 * measures 0.13-0.24 us per get and flush on Open MPI 4.1.4 and 0.5-1.1 us
 * on MPICH 4.0.2, docs/benchmarks/one-node.md).  Loads cost what the
 * memory costs.
 *
 * It is the lock-free protocol of lockfree.c on the same slot format: the
 * claim word is taken by a 32-bit compare-and-swap, then everything but the
 * claim is stored, and readers trust a copy only if its checksum holds.
 * Nothing is left outstanding: a write is visible to every rank when the
 * call returns, and no operation counts a round trip.
 *
 * What the path adds is reading through the tag array (slot.h): a read
 * scans 2 x 32 bytes of tags and copies only the slots whose tag matches,
 * where a batch of RMA reads fetches 16 slots per item (3.3 KB for the
 * benchmark's sizes).
 *
 * read:  a batch goes in three sweeps, so that the memory works on many
 *        items at once: prefetch every item's tags; prefetch the slots
 *        their tags point to; copy and judge.  A torn match is read again
 *        a few times, with a growing pause, then reported missing.
 * write: copy both candidate groups, choose a slot as every mode does,
 *        wait while a write to it is in flight, compare-and-swap its
 *        claim, store the tag, then the image, ver last.  Items
 *        run in batch order, each complete before the next, so later items
 *        win; a batch prefetches the next item's groups meanwhile.
 * update: the same write, its value made from the copy by the caller's
 *        function (protocol.c), which runs again after a lost claim.
 *
 * Order of a write's stores: claim (compare-and-swap), tag, stamp to
 * value, and ver last.  A slot counts as done only when ver equals claim,
 * and writers claim only done slots (they wait for the others), so writes
 * to one slot never overlap and each one's tag lands before the next
 * claims: a tag can be stale only while a write is in flight.
 */
#include <stdatomic.h>
#include <string.h>

#include "protocol.h"

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* How far ahead a write batch prefetches groups: 1, 2 and 4 measured
   alike (4.3, 4.1, 4.0 Mops/s), all well above none (2.6-3.0). */
#define WRITE_AHEAD 1

static inline unsigned char *group_of(rmadht *t, int i, int g) {
  const struct place *p = &t->scratch->place[i];
  return t->peer[p->rank] + slot_group_disp(&t->layout, p->group[g]);
}

static inline unsigned char *tags_of(rmadht *t, int i, int g) {
  const struct place *p = &t->scratch->place[i];
  return t->peer[p->rank] + slot_tags_disp(p->group[g]);
}

/* Where item i's candidate groups and their tags are. */
static void locate(rmadht *t, int i, const unsigned char **group,
                   const unsigned char **tags) {
  for (int g = 0; g < t->scratch->place[i].ngroups; g++) {
    group[g] = group_of(t, i, g);
    tags[g] = tags_of(t, i, g);
  }
}

/* Copies the candidates of item i whose tag matches into the item's
   candidate buffer; returns how many. */
static int gather(rmadht *t, int i) {
  const unsigned char *group[2], *tags[2];
  locate(t, i, group, tags);
  int k = search_gather(&t->layout, group, tags, t->scratch->place[i].ngroups,
                        t->scratch->place[i].tag, batch_cand(t, i));
  /* Order the copies before their judgement, on CPUs weaker than x86. */
  atomic_thread_fence(memory_order_acquire);
  return k;
}

static int nl_read(rmadht *t, size_t n, const unsigned char *keys,
                   unsigned char *values, int *status) {
  size_t ks = t->layout.key_size, vs = t->layout.value_size;
  const struct scratch *s = t->scratch;
  batch_place(t, n, keys);
  /* The sweeps stay in this function: GCC 12 deems a function that only
     prefetches free of effects and deletes its calls. */
  for (int i = 0; i < (int)n; i++)
    for (int g = 0; g < s->place[i].ngroups; g++) PREFETCH(tags_of(t, i, g));
  for (int i = 0; i < (int)n; i++) {
    const unsigned char *group[2], *tags[2];
    int hits[2 * SLOT_GROUP];
    locate(t, i, group, tags);
    int k = search_tags(tags, s->place[i].ngroups, s->place[i].tag, hits);
    for (int h = 0; h < k; h++) {
      const unsigned char *slot = search_hit_slot(&t->layout, group, hits[h]);
      for (size_t at = 0; at < t->layout.slot_size; at += 64)
        PREFETCH(slot + at);
    }
  }
  for (int i = 0; i < (int)n; i++) {
    const unsigned char *key = keys + (size_t)i * ks;
    /* A torn match is a write landing right now: give it time. */
    while (protocol_read_result(t, i, gather(t, i), key,
                                values + (size_t)i * vs, 1, &status[i]))
      protocol_backoff(t, s->tries[i]);
  }
  return RMADHT_OK;
}

/* C11 atomics on words of the shared window, reached through a cast: the
   cast is sound only where an atomic 32-bit word is a plain lock-free
   32-bit word, which these assertions demand at compile time. */
_Static_assert(sizeof(_Atomic uint32_t) == 4, "atomic words must be plain");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free");
#define WORD(p) ((_Atomic uint32_t *)(void *)(p))

/* Claims, tags and fills the slot protocol_decide chose for item i;
   returns 0 if another writer claimed it first. */
static int put_item(rmadht *t, int i, const unsigned char *key, int *status) {
  struct scratch *s = t->scratch;
  const unsigned char *value = s->value[i];
  const struct slot_layout *l = &t->layout;
  int c = s->slot[i];
  unsigned char *slot =
      t->peer[s->place[i].rank] + protocol_slot_disp(t, i, c);
  uint32_t expect = s->expect[i], claim = slot_next_claim(expect);
  /* The claim word is only ever changed by this compare-and-swap, on
     every rank, so it is the one word that must be atomic. */
  if (!atomic_compare_exchange_strong(WORD(slot + SLOT_OFF_CLAIM), &expect,
                                      claim))
    return 0;
  atomic_store_explicit(WORD(tags_of(t, i, c / SLOT_GROUP) +
                             4u * (size_t)(c % SLOT_GROUP)),
                        value ? s->place[i].tag : 0u, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  unsigned char *image = batch_image(t, i);
  protocol_image(t, i, key, claim, image, status);
  memcpy(slot + SLOT_OFF_STAMP, image + SLOT_OFF_STAMP,
         l->slot_size - SLOT_OFF_STAMP);
  /* ver last: once another writer sees it equal the claim, every store of
     this write, the tag included, is done. */
  atomic_store_explicit(WORD(slot + SLOT_OFF_VER), claim, memory_order_release);
  return 1;
}

static int nl_write(rmadht *t, size_t n, const unsigned char *keys,
                    const struct write_src *src, int *status) {
  struct scratch *s = t->scratch;
  const struct slot_layout *l = &t->layout;
  size_t ks = l->key_size;
  batch_place_write(t, n, keys, src);
  for (int i = 0; i < (int)n; i++) {
    const unsigned char *key = keys + (size_t)i * ks;
    /* The groups of the item WRITE_AHEAD on, so that its copy finds them
       in cache (inline here for the reason given in nl_read). */
    if (i + WRITE_AHEAD < (int)n)
      for (int g = 0; g < s->place[i + WRITE_AHEAD].ngroups; g++) {
        const unsigned char *grp = group_of(t, i + WRITE_AHEAD, g);
        for (size_t at = 0; at < l->group_bytes; at += 64) PREFETCH(grp + at);
      }
    for (;;) {
      for (int g = 0; g < s->place[i].ngroups; g++)
        memcpy(batch_cand(t, i) + (size_t)g * l->group_bytes, group_of(t, i, g),
               l->group_bytes);
      atomic_thread_fence(memory_order_acquire);
      enum decision d = protocol_decide(t, i, key, 0, &status[i]);
      if (d == DECIDE_DONE) break;
      /* Waited for up to the stall limit, as on the RMA path. */
      int busy = protocol_must_wait(t, i, d);
      if (busy || !put_item(t, i, key, &status[i])) {
        if (protocol_give_up(t, i, busy, &status[i])) break;
        protocol_pause(t, i, busy);
        continue;
      }
      /* A remove goes on until no copy of the key is left. */
      if (s->value[i] || !protocol_more_copies(t, i, key)) break;
    }
  }
  return RMADHT_OK;
}

/* Stores are complete when a write returns; the fence publishes them to
   readers on CPUs weaker than x86. */
static int nl_flush(rmadht *t) {
  (void)t;
  atomic_thread_fence(memory_order_seq_cst);
  return RMADHT_OK;
}

const struct protocol rmadht_node_local_protocol = {nl_read, nl_write,
                                                    nl_flush};
