/*
 * Regression tests for the stock-MPI behaviour rmadht is built on, in plain
 * MPI on windows made as the library makes them (MPI_Win_allocate,
 * alloc_shm=true, same_size, accumulate_ordering=none; the shared window
 * of the node-local path), so that an MPI
 * upgrade or a new machine that breaks an assumption fails here, with a
 * clear name, rather than as a rare wrong answer deep in the table:
 *
 *  - 32- and 64-bit MPI_Fetch_and_op to another rank, under contention,
 *    each result unique (atomic) and the sum exact, wrap-around included
 *    (the fine-lock release adds 2^32 - 1);
 *  - 32-bit MPI_Compare_and_swap as a spin lock that protects a counter
 *    updated with get and put, and a failed compare leaving the word alone;
 *  - exclusive and shared MPI_Win_lock/unlock on the allocated window from
 *    every rank (coarse mode; Open MPI 4.1.4 crashed in exclusive locks on
 *    MPI_Win_create windows);
 *  - 128 and more outstanding MPI_Get to each target, completed by
 *    per-target MPI_Win_flush, returning the right data;
 *  - bursts of 32 outstanding 32-bit MPI_Compare_and_swap to every rank at
 *    once, completed by per-target flushes (the most batches leave
 *    outstanding to one target, BATCH_ATOMICS in src/batch.h);
 *  - a 32-bit MPI_Compare_and_swap to another node left outstanding, as a
 *    lock-free write leaves its last one, reaching its target while the
 *    origin makes no MPI call;
 *  - for the node-local path, a window from MPI_Win_allocate_shared whose
 *    segments every rank updates with C11 compare-and-swap (exact sums)
 *    and whose plain stores an MPI_Get sees.
 *
 * Deliberately not tested, because the stock MPIs here fail them and the
 * library avoids them: 64-bit MPI_Compare_and_swap to another rank (Open
 * MPI 4.1.4 segfaults), MPI_Win_flush_all to complete outstanding gets
 * (MPICH 4.0.2 returns with some of 128 gets still incomplete; the library
 * flushes each target instead), and much more than 32 outstanding atomics
 * to one target (Open MPI 4.1.4's osc/pt2pt deadlocks between hosts with
 * 75 per target; the library flushes a target after 32).  A test that is expected to fail would
 * only teach people to ignore failures.
 *
 * Iteration counts are modest: with 4 ranks on 2 cores a round trip may
 * wait for a descheduled process.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, nranks;

static MPI_Win make_window(MPI_Aint bytes, unsigned char **base) {
  MPI_Info info;
  MPI_Win win;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shm", "true");
  MPI_Info_set(info, "same_size", "true");
  MPI_Info_set(info, "accumulate_ordering", "none");
  int rc = MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, base, &win);
  MPI_Info_free(&info);
  CHECK(rc == MPI_SUCCESS);
  memset(*base, 0, (size_t)bytes);
  return win;
}

/* The targets worth testing: rank 0, and the last rank (another node's
   worth of distance from 0 in a block mapping; a distinct process here). */
static int targets(int *t) {
  t[0] = 0;
  t[1] = nranks - 1;
  return nranks > 1 ? 2 : 1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* ------------------------------------------------------------------ */
/* Bursts of compare-and-swap to every rank                            */
/* ------------------------------------------------------------------ */

enum { CAS_BURST = 32, CAS_ROUNDS = 8 };

/* Each rank owns CAS_BURST words on every rank and, each round, moves all
   of them from the round number to the next with one burst per target and
   then one flush per target, as a lock-free batch claims slots.  Every
   compare must have found the round number: no operation lost, none
   applied twice, each result returned. */
static void test_cas_bursts(void) {
  unsigned char *base;
  MPI_Win win = make_window((MPI_Aint)nranks * CAS_BURST * 4, &base);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  uint32_t *next = malloc((size_t)nranks * CAS_BURST * sizeof *next);
  uint32_t *seen = malloc((size_t)nranks * CAS_BURST * sizeof *seen);
  uint32_t *expect = malloc((size_t)nranks * CAS_BURST * sizeof *expect);
  int bad = 0;
  for (uint32_t round = 0; round < CAS_ROUNDS; round++) {
    for (int T = 0; T < nranks; T++)
      for (int i = 0; i < CAS_BURST; i++) {
        size_t k = (size_t)T * CAS_BURST + (size_t)i;
        expect[k] = round;
        next[k] = round + 1;
        CHECK(MPI_Compare_and_swap(&next[k], &expect[k], &seen[k],
                                   MPI_UINT32_T, T,
                                   ((MPI_Aint)rank * CAS_BURST + i) * 4,
                                   win) == MPI_SUCCESS);
      }
    for (int T = 0; T < nranks; T++) CHECK(MPI_Win_flush(T, win) == MPI_SUCCESS);
    for (size_t k = 0; k < (size_t)nranks * CAS_BURST; k++)
      bad += seen[k] != round;
  }
  CHECK(bad == 0);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  free(next);
  free(seen);
  free(expect);
}

/* Rank 2k sends a compare-and-swap to rank 2k + 1 and then computes for a
   second without entering MPI; its partner, in MPI all the while, must see
   the word change within that second.  A lock-free write's last operation
   is left so (src/rma.h), and other writers of its slot wait for it.  MPI
   would allow the origin to hold it back until its flush.  Between hosts
   Open MPI 4.1.4 (osc/pt2pt) and MPICH 4.0.2 apply it at once, osc/ucx
   within 0.1 s.  Only pairs on different nodes are checked: on one node
   MPICH holds it back with 4 ranks (it applies it at once with 2), where
   a table takes the node-local path, whose writes leave nothing
   outstanding, unless made with cfg.node_local = 0 (design.md, "Round
   trips and messages"). */
static void test_unflushed_cas(void) {
  unsigned char *base;
  MPI_Win win = make_window(4, &base);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Win_sync(win);
  /* Whether the partner is on another node: outside this rank's node
     communicator. */
  int partner = rank ^ 1, apart = 0;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  if (partner < nranks) {
    MPI_Group world_group, node_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(node, &node_group);
    int there;
    MPI_Group_translate_ranks(world_group, 1, &partner, node_group, &there);
    apart = there == MPI_UNDEFINED;
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
  }
  MPI_Comm_free(&node);
  MPI_Barrier(MPI_COMM_WORLD);
  if (!apart && rank == 0)
    printf("unflushed compare-and-swap: skipped, no partner on another "
           "node\n");
  if (apart && rank % 2 == 0) {
    uint32_t one = 1, zero = 0, seen = 7;
    CHECK(MPI_Compare_and_swap(&one, &zero, &seen, MPI_UINT32_T, partner, 0,
                               win) == MPI_SUCCESS);
    for (double t0 = check_clock(); check_clock() - t0 < 1.0;) {
    }
    CHECK(MPI_Win_flush(partner, win) == MPI_SUCCESS);
    CHECK(seen == 0);
  } else if (apart) {
    _Atomic uint32_t *word = (_Atomic uint32_t *)(void *)base;
    int landed = 0, flag;
    for (double t0 = check_clock(); !landed && check_clock() - t0 < 1.0;) {
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                 MPI_STATUS_IGNORE);
      MPI_Win_sync(win);
      landed = atomic_load(word) == 1;
    }
    if (!landed)
      fprintf(stderr, "rank %d: a compare-and-swap from rank %d left "
              "unflushed did not land within 1 s\n", rank, partner);
    CHECK(landed);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
}

/* ------------------------------------------------------------------ */
/* Fetch-and-op, 64 and 32 bits                                        */
/* ------------------------------------------------------------------ */

enum { FAO_N = 64, FAO_BURST = 8 };

/* Word offsets in the atomics window. */
enum { OFF_C64 = 0, OFF_C64HI = 8, OFF_C32 = 16, OFF_WRAP32 = 20,
       OFF_LOCK = 24, OFF_GUARDED = 32, OFF_CASTEST = 40, ATOM_BYTES = 64 };

static void test_fetch_and_op(MPI_Win win, unsigned char *base) {
  int tg[2], nt = targets(tg);
  uint64_t *got64 = malloc(FAO_N * sizeof *got64);
  uint64_t *all64 = malloc((size_t)FAO_N * (size_t)nranks * sizeof *all64);
  uint32_t *got32 = malloc(FAO_N * sizeof *got32);
  uint32_t *all32 = malloc((size_t)FAO_N * (size_t)nranks * sizeof *all32);
  const uint64_t one = 1, big = UINT64_C(0x100000001); /* carries at 2^32 */
  const uint32_t one32 = 1, minus1 = UINT32_MAX;
  uint64_t total = (uint64_t)FAO_N * (uint64_t)nranks;

  for (int k = 0; k < nt; k++) {
    int T = tg[k];
    /* The target starts the 32-bit wrap counter just below 2^32. */
    if (rank == T) {
      uint32_t w = UINT32_MAX - (uint32_t)(total / 4);
      MPI_Win_sync(win);
      memcpy(base + OFF_WRAP32, &w, 4);
      MPI_Win_sync(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 64-bit: half the operations flushed one by one, half in bursts of
       outstanding operations completed by one flush, as batches do. */
    for (int i = 0; i < FAO_N; i++) {
      CHECK(MPI_Fetch_and_op(&one, &got64[i], MPI_UINT64_T, T, OFF_C64,
                             MPI_SUM, win) == MPI_SUCCESS);
      if (i < FAO_N / 2 || i % FAO_BURST == FAO_BURST - 1)
        MPI_Win_flush(T, win);
    }
    MPI_Win_flush(T, win);
    uint64_t hi_got[4];
    for (int i = 0; i < 4; i++)
      MPI_Fetch_and_op(&big, &hi_got[i], MPI_UINT64_T, T, OFF_C64HI, MPI_SUM,
                       win);
    MPI_Win_flush(T, win);
    for (int i = 0; i < 4; i++) CHECK(hi_got[i] % big == 0);

    /* 32-bit: the same, plus a +1/-1 pair on a word that wraps past 2^32
       (the fine-lock reader's take and release). */
    for (int i = 0; i < FAO_N; i++) {
      CHECK(MPI_Fetch_and_op(&one32, &got32[i], MPI_UINT32_T, T, OFF_C32,
                             MPI_SUM, win) == MPI_SUCCESS);
      uint32_t dummy;
      MPI_Fetch_and_op(&one32, &dummy, MPI_UINT32_T, T, OFF_WRAP32, MPI_SUM,
                       win);
      if (i < FAO_N / 2 || i % FAO_BURST == FAO_BURST - 1)
        MPI_Win_flush(T, win);
    }
    MPI_Win_flush(T, win);
    for (int i = 0; i < FAO_N / 2; i++) {
      uint32_t dummy;
      MPI_Fetch_and_op(&minus1, &dummy, MPI_UINT32_T, T, OFF_WRAP32, MPI_SUM,
                       win);
      MPI_Win_flush(T, win);
    }

    /* Every fetched value unique: atomic increments hand out 0..N*P-1. */
    MPI_Gather(got64, FAO_N, MPI_UINT64_T, all64, FAO_N, MPI_UINT64_T, 0,
               MPI_COMM_WORLD);
    MPI_Gather(got32, FAO_N, MPI_UINT32_T, all32, FAO_N, MPI_UINT32_T, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
      qsort(all64, total, sizeof *all64, cmp_u64);
      int ok64 = 1, ok32 = 1;
      for (uint64_t i = 0; i < total; i++) ok64 &= all64[i] == i;
      uint64_t *w = malloc(total * sizeof *w);
      for (uint64_t i = 0; i < total; i++) w[i] = all32[i];
      qsort(w, total, sizeof *w, cmp_u64);
      for (uint64_t i = 0; i < total; i++) ok32 &= w[i] == i;
      free(w);
      if (!ok64 || !ok32)
        fprintf(stderr, "fetch-and-op to rank %d: results not unique "
                "(64-bit %s, 32-bit %s)\n", T, ok64 ? "ok" : "BAD",
                ok32 ? "ok" : "BAD");
      CHECK(ok64);
      CHECK(ok32);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Final values, read atomically by every rank. */
    uint64_t v64, vhi, no = 0;
    uint32_t v32, vwrap, no32 = 0;
    MPI_Fetch_and_op(&no, &v64, MPI_UINT64_T, T, OFF_C64, MPI_NO_OP, win);
    MPI_Fetch_and_op(&no, &vhi, MPI_UINT64_T, T, OFF_C64HI, MPI_NO_OP, win);
    MPI_Fetch_and_op(&no32, &v32, MPI_UINT32_T, T, OFF_C32, MPI_NO_OP, win);
    MPI_Fetch_and_op(&no32, &vwrap, MPI_UINT32_T, T, OFF_WRAP32, MPI_NO_OP,
                     win);
    MPI_Win_flush(T, win);
    CHECK(v64 == total);
    CHECK(vhi == 4 * (uint64_t)nranks * big);
    CHECK(v32 == (uint32_t)total);
    /* Started at 2^32 - 1 - total/4, +N and -N/2 per rank: wrapped past
       2^32 to total/4 - 1. */
    CHECK(vwrap == (uint32_t)(total / 4 - 1));
    MPI_Barrier(MPI_COMM_WORLD);
    /* Reset for the next target. */
    if (rank == T) {
      MPI_Win_sync(win);
      memset(base, 0, ATOM_BYTES);
      MPI_Win_sync(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  free(got64);
  free(all64);
  free(got32);
  free(all32);
}

/* ------------------------------------------------------------------ */
/* Compare-and-swap, 32 bits                                           */
/* ------------------------------------------------------------------ */

enum { LOCK_N = 20 };

static void test_cas_lock(MPI_Win win) {
  int tg[2], nt = targets(tg);
  const uint32_t zero = 0, me = (uint32_t)rank + 1;

  for (int k = 0; k < nt; k++) {
    int T = tg[k];
    /* A compare that fails returns the value and changes nothing. */
    if (rank == 0) {
      uint32_t seven = 7, five = 5, nine = 9, r1, r2, r3;
      MPI_Compare_and_swap(&seven, &zero, &r1, MPI_UINT32_T, T, OFF_CASTEST,
                           win); /* 0 -> 7 */
      MPI_Win_flush(T, win);
      MPI_Compare_and_swap(&nine, &five, &r2, MPI_UINT32_T, T, OFF_CASTEST,
                           win); /* 7 != 5: stays 7 */
      MPI_Win_flush(T, win);
      MPI_Compare_and_swap(&zero, &seven, &r3, MPI_UINT32_T, T, OFF_CASTEST,
                           win); /* 7 -> 0 */
      MPI_Win_flush(T, win);
      CHECK(r1 == 0 && r2 == 7 && r3 == 7);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* A spin lock from compare-and-swap guarding a plain counter that is
       read with MPI_Get and written with MPI_Put: lost updates mean two
       ranks held the lock at once. */
    unsigned long spins = 0;
    for (int i = 0; i < LOCK_N; i++) {
      uint32_t was;
      for (;;) {
        CHECK(MPI_Compare_and_swap(&me, &zero, &was, MPI_UINT32_T, T,
                                   OFF_LOCK, win) == MPI_SUCCESS);
        MPI_Win_flush(T, win);
        if (was == 0) break;
        CHECK(was >= 1 && was <= (uint32_t)nranks && was != me);
        spins++;
      }
      uint64_t c;
      MPI_Get(&c, 1, MPI_UINT64_T, T, OFF_GUARDED, 1, MPI_UINT64_T, win);
      MPI_Win_flush(T, win);
      c++;
      MPI_Put(&c, 1, MPI_UINT64_T, T, OFF_GUARDED, 1, MPI_UINT64_T, win);
      MPI_Win_flush(T, win); /* the put lands before the release */
      /* Release by compare-and-swap: it must find our own mark. */
      MPI_Compare_and_swap(&zero, &me, &was, MPI_UINT32_T, T, OFF_LOCK, win);
      MPI_Win_flush(T, win);
      CHECK(was == me);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t c = 0;
    uint32_t l = 1;
    MPI_Get(&c, 1, MPI_UINT64_T, T, OFF_GUARDED, 1, MPI_UINT64_T, win);
    MPI_Fetch_and_op(&zero, &l, MPI_UINT32_T, T, OFF_LOCK, MPI_NO_OP, win);
    MPI_Win_flush(T, win);
    if (c != (uint64_t)LOCK_N * (uint64_t)nranks)
      fprintf(stderr, "rank %d: CAS lock on rank %d: counter %llu, expected "
              "%d (spins %lu)\n", rank, T, (unsigned long long)c,
              LOCK_N * nranks, spins);
    CHECK(c == (uint64_t)LOCK_N * (uint64_t)nranks);
    CHECK(l == 0);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

/* ------------------------------------------------------------------ */
/* Exclusive and shared MPI_Win_lock on an allocated window            */
/* ------------------------------------------------------------------ */

enum { EXCL_N = 20 };

static void test_win_lock(void) {
  unsigned char *base;
  /* A window of its own: MPI_Win_lock is not allowed inside lock_all. */
  MPI_Win win = make_window(4096, &base);
  MPI_Barrier(MPI_COMM_WORLD);
  int tg[2], nt = targets(tg);
  for (int k = 0; k < nt; k++) {
    int T = tg[k];
    for (int i = 0; i < EXCL_N; i++) {
      uint64_t c[2];
      CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win) == MPI_SUCCESS);
      MPI_Get(c, 2, MPI_UINT64_T, T, 0, 2, MPI_UINT64_T, win);
      MPI_Win_flush(T, win);
      /* The two words are always updated together under the lock. */
      CHECK(c[1] == 3 * c[0]);
      c[0] += 1;
      c[1] += 3;
      MPI_Put(c, 2, MPI_UINT64_T, T, 0, 2, MPI_UINT64_T, win);
      CHECK(MPI_Win_unlock(T, win) == MPI_SUCCESS);
      /* Readers under a shared lock see the pair consistent. */
      if (i % 4 == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
        MPI_Get(c, 2, MPI_UINT64_T, T, 0, 2, MPI_UINT64_T, win);
        MPI_Win_unlock(T, win);
        CHECK(c[1] == 3 * c[0]);
        CHECK(c[0] >= 1 && c[0] <= (uint64_t)EXCL_N * (uint64_t)nranks);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t c[2] = {0, 0};
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Get(c, 2, MPI_UINT64_T, T, 0, 2, MPI_UINT64_T, win);
    MPI_Win_unlock(T, win);
    CHECK(c[0] == (uint64_t)EXCL_N * (uint64_t)nranks);
    CHECK(c[1] == 3 * c[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    /* The next target starts from zero: each rank clears its own words
       under its own exclusive lock. */
    if (rank == T) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
      memset(base, 0, 16);
      MPI_Win_unlock(T, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Win_free(&win);
}

/* ------------------------------------------------------------------ */
/* Many outstanding gets per target, per-target flush                  */
/* ------------------------------------------------------------------ */

enum { WORDS = 4096,       /* uint64 words per rank: 32 KiB */
       SMALL_GETS = 192,   /* 8-byte gets per target */
       BLOCK = 208,        /* bytes: one 80/104 slot */
       BLOCK_GETS = 128,   /* slot-sized gets per target */
       GET_ROUNDS = 2 };

static uint64_t word(int owner, int j, int round) {
  return (uint64_t)owner << 48 ^ (uint64_t)j << 16 ^ (uint64_t)round ^
         UINT64_C(0x5DEECE66D00000);
}

static void test_many_gets(MPI_Win win, unsigned char *base) {
  uint64_t *data = (uint64_t *)(void *)(base + ATOM_BYTES);
  uint64_t *small = malloc((size_t)nranks * SMALL_GETS * sizeof *small);
  unsigned char *blocks = malloc((size_t)nranks * BLOCK_GETS * BLOCK);
  int *where = malloc(SMALL_GETS * sizeof *where);
  for (int round = 0; round < GET_ROUNDS; round++) {
    /* New data every round, so a get that never completed cannot pass
       with the previous round's value. */
    MPI_Win_sync(win);
    for (int j = 0; j < WORDS; j++) data[j] = word(rank, j, round);
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);

    memset(small, 0xA5, (size_t)nranks * SMALL_GETS * sizeof *small);
    memset(blocks, 0xA5, (size_t)nranks * BLOCK_GETS * BLOCK);
    for (int i = 0; i < SMALL_GETS; i++)
      where[i] = (i * 97 + round * 13) % WORDS; /* scattered words */
    /* Every get to every target first... */
    for (int T = 0; T < nranks; T++) {
      for (int i = 0; i < SMALL_GETS; i++)
        CHECK(MPI_Get(&small[(size_t)T * SMALL_GETS + i], 1, MPI_UINT64_T, T,
                      ATOM_BYTES + (MPI_Aint)where[i] * 8, 1, MPI_UINT64_T,
                      win) == MPI_SUCCESS);
      for (int i = 0; i < BLOCK_GETS; i++) {
        /* Blocks at 8-aligned, overlapping offsets, as slot groups are. */
        MPI_Aint off = ATOM_BYTES + (MPI_Aint)((i * 24 + round * 8) %
                                               (WORDS * 8 - BLOCK));
        CHECK(MPI_Get(blocks + ((size_t)T * BLOCK_GETS + i) * BLOCK, BLOCK,
                      MPI_BYTE, T, off, BLOCK, MPI_BYTE, win) == MPI_SUCCESS);
      }
    }
    /* ...then one flush per target, checking that target's data at once:
       the flush of T alone must have completed every get to T. */
    int bad = 0;
    for (int T = 0; T < nranks; T++) {
      CHECK(MPI_Win_flush(T, win) == MPI_SUCCESS);
      for (int i = 0; i < SMALL_GETS; i++)
        bad += small[(size_t)T * SMALL_GETS + i] != word(T, where[i], round);
      for (int i = 0; i < BLOCK_GETS; i++) {
        size_t off = (size_t)((i * 24 + round * 8) % (WORDS * 8 - BLOCK));
        uint64_t w;
        for (int b = 0; b < BLOCK; b += 8) {
          memcpy(&w, blocks + ((size_t)T * BLOCK_GETS + i) * BLOCK + b, 8);
          bad += w != word(T, (int)((off + (size_t)b) / 8), round);
        }
      }
    }
    if (bad)
      fprintf(stderr, "rank %d round %d: %d words wrong after per-target "
              "flushes\n", rank, round, bad);
    CHECK(bad == 0);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody reads while data changes */
  }
  free(small);
  free(blocks);
  free(where);
}

/* The node-local path: a window from MPI_Win_allocate_shared over the
   whole (one-node) communicator, whose segments every rank reaches with
   loads, stores and C11 atomics through MPI_Win_shared_query.  Every rank
   adds to counters in every segment by 32-bit compare-and-swap; the sums
   must be exact, and an MPI_Get must see what plain stores wrote. */
enum { SHARED_ADDS = 20000 };

static void test_shared_window(void) {
  MPI_Comm node;
  int nnode;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  MPI_Comm_size(node, &nnode);
  MPI_Comm_free(&node);
  if (nnode != nranks) { /* not one node: the path does not apply */
    if (rank == 0) printf("shared window: skipped, ranks on several nodes\n");
    return;
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  unsigned char *mine;
  MPI_Win win;
  CHECK(MPI_Win_allocate_shared(64, 1, info, MPI_COMM_WORLD, &mine, &win) ==
        MPI_SUCCESS);
  MPI_Info_free(&info);
  memset(mine, 0, 64);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < SHARED_ADDS; i++) {
    int r = (i + rank) % nranks;
    MPI_Aint size;
    int unit;
    unsigned char *seg;
    MPI_Win_shared_query(win, r, &size, &unit, &seg);
    _Atomic uint32_t *w = (_Atomic uint32_t *)(void *)seg;
    uint32_t old = atomic_load_explicit(w, memory_order_relaxed);
    while (!atomic_compare_exchange_weak(w, &old, old + 1)) {
    }
  }
  uint64_t stamp = 0x5eed0000u + (uint64_t)rank;
  memcpy(mine + 8, &stamp, 8);
  atomic_thread_fence(memory_order_seq_cst);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  uint32_t total;
  memcpy(&total, mine, 4);
  /* Each rank's loop visits every segment SHARED_ADDS / nranks times,
     give or take one for the remainder. */
  uint64_t expect = 0;
  for (int q = 0; q < nranks; q++)
    for (int i = 0; i < SHARED_ADDS; i++) expect += (i + q) % nranks == rank;
  CHECK(total == expect);
  int peer = (rank + 1) % nranks;
  uint64_t got = 0;
  MPI_Get(&got, 8, MPI_BYTE, peer, 8, 8, MPI_BYTE, win);
  MPI_Win_flush(peer, win);
  CHECK(got == 0x5eed0000u + (uint64_t)peer);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  double t0 = MPI_Wtime();

  unsigned char *base;
  MPI_Win win = make_window(ATOM_BYTES + WORDS * 8, &base);
  /* One passive epoch to every rank for the window's life, as the library
     keeps in lock-free and fine-lock modes. */
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  test_fetch_and_op(win, base);
  test_cas_lock(win);
  test_many_gets(win, base);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);

  test_cas_bursts();
  test_unflushed_cas();
  test_win_lock();
  test_shared_window();

  if (rank == 0) printf("mpi_mpi_faults: %.2f s\n", MPI_Wtime() - t0);
  int rc = check_finish("mpi_mpi_faults");
  MPI_Finalize();
  return rc;
}
