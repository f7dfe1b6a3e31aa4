/*
 * Concurrency in every mode and path: all ranks inserting different keys
 * into the same candidate groups at once lose nothing; all ranks
 * overwriting a few hot keys while others read them never yield a torn
 * value; evictions are counted exactly; a half-full table loses no key;
 * churn over more keys than slots leaves every slot finished and findable.
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "internal.h" /* rmadht_place, to load every owner exactly */
#include "protocol.h" /* READ_RETRIES, for the counter identities */
#include "rmadht.h"
#include "testdata.h"

enum { KS = 16, VS = 40 };

static int rank, nranks;

static uint64_t key_id(const void *key) {
  uint64_t id;
  memcpy(&id, key, 8); /* make_key puts the id in the first 8 bytes */
  return id;
}

/* A hash that crowds every key onto the last rank and onto at most
   *spread distinct hash values, so at most 2 * spread candidate groups:
   every writer contends for the same slots.  The high half all ones picks
   the last rank, so rank 0 writes remotely whenever there are two. */
static uint64_t crowd_hash(const void *key, size_t len, void *arg) {
  (void)len;
  unsigned spread = *(const unsigned *)arg;
  uint32_t low = (uint32_t)(key_id(key) % spread) * UINT32_C(0x9E3779B9);
  return UINT64_C(0xFFFFFFFF00000000) | low;
}

static rmadht *create_vs(const struct variant *var, size_t bytes,
                         unsigned *spread, size_t vs) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, vs);
  variant_config(&cfg, var);
  cfg.bytes_per_rank = bytes;
  if (spread) {
    cfg.hash = crowd_hash;
    cfg.hash_arg = spread;
  }
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_OK);
  return t;
}

static rmadht *create(const struct variant *var, size_t bytes,
                      unsigned *spread) {
  return create_vs(var, bytes, spread, VS);
}

static uint64_t sum_u64(uint64_t x) {
  uint64_t s;
  MPI_Allreduce(&x, &s, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

/* Collective: whether rank 0 has spent `seconds` since start, the same
   answer on every rank.  Loops that probe races run more rounds where
   rounds are cheap (Open MPI, or cores to spare) and at least a minimum
   where they are not (MPICH busy-polling on oversubscribed cores can be a
   hundred times slower), so every run stays within the ctest budget. */
static int over_budget(double start, double seconds) {
  int over = MPI_Wtime() - start > seconds;
  MPI_Bcast(&over, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return over;
}

/* Flush, then barrier: our writes are visible before anyone reads. */
static void settle(rmadht *t) {
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ------------------------------------------------------------------ */
/* 1. Inserts of different keys into the same groups                  */
/* ------------------------------------------------------------------ */

/* At most 14 keys exist at once and a key has 16 candidate slots (two
   groups of 8), so when one is inserted at most 13 others can occupy its
   candidates: a free one always exists, whatever groups the keys share,
   and no eviction is legitimate.  Past 14 ranks the others only read. */
enum { CROWD_KEYS = 14, CROWD_ROUNDS = 30, CROWD_MIN_ROUNDS = 3 };
#define CROWD_SECONDS 1.0

static void test_crowd(const struct variant *var) {
  unsigned spread = 1;
  rmadht *t = create(var, (size_t)64 << 10, &spread);
  if (!t) return;
  int writers = nranks < CROWD_KEYS ? nranks : CROWD_KEYS;
  int per = CROWD_KEYS / writers;
  int total = per * writers;
  int mine = rank < writers ? per : 0;
  unsigned char *keys = malloc((size_t)total * KS);
  unsigned char *vals = malloc((size_t)total * VS);
  unsigned char *outs = malloc((size_t)total * VS);
  int *status = malloc((size_t)total * sizeof(int));
  int lost = 0, evicted = 0, rounds = 0;
  double start = MPI_Wtime();

  /* The first three rounds cover every spread, single writes and a
     batch; more run while the budget lasts. */
  for (int round = 0; round < CROWD_ROUNDS; round++) {
    if (round >= CROWD_MIN_ROUNDS && over_budget(start, CROWD_SECONDS)) break;
    rounds++;
    /* Every rank must use the same hash function; the spread it reads is
       changed on all ranks between rounds, while nobody is writing. */
    spread = 1 + (unsigned)round % 3;
    for (int k = 0; k < total; k++) {
      uint64_t id = (uint64_t)round * 1000 + (uint64_t)k;
      make_key(keys + (size_t)k * KS, KS, id);
      make_value(vals + (size_t)k * VS, VS, id, (uint64_t)round + 1);
    }
    /* A writer's keys are k = rank * per ... rank * per + per - 1. */
    size_t first = mine ? (size_t)rank * (size_t)per : 0;
    unsigned char *mykeys = keys + first * KS;
    unsigned char *myvals = vals + first * VS;
    MPI_Barrier(MPI_COMM_WORLD); /* start together */
    if (round % 2 == 0) {
      for (int j = 0; j < mine; j++) {
        int rc = rmadht_write(t, mykeys + (size_t)j * KS, myvals + (size_t)j * VS);
        CHECK_RC(rc, RMADHT_OK);
        evicted += rc == RMADHT_EVICTED;
      }
    } else {
      /* A batch: its items share groups, so they go in successive waves
         while the other ranks' writes race with each wave. */
      CHECK_RC(rmadht_write_batch(t, (size_t)mine, mykeys, myvals, status),
               RMADHT_OK);
      for (int j = 0; j < mine; j++) {
        CHECK(status[j] == RMADHT_OK);
        evicted += status[j] == RMADHT_EVICTED;
      }
    }
    settle(t);

    /* Every key of every rank is there with its own value (one batch:
       oversubscribed MPICH makes each round trip costly). */
    CHECK_RC(rmadht_read_batch(t, (size_t)total, keys, outs, status),
             RMADHT_OK);
    for (int k = 0; k < total; k++) {
      uint64_t id = (uint64_t)round * 1000 + (uint64_t)k;
      if (status[k] != RMADHT_OK ||
          !value_ok(outs + (size_t)k * VS, VS, id, (uint64_t)round + 1)) {
        if (lost++ < 5)
          fprintf(stderr, "rank %d mode %s round %d: key %llu status %d\n",
                  rank, var->name, round, (unsigned long long)id,
                  status[k]);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Remove this rank's keys, all at once again: the tombstones are the
       free slots of the next round. */
    for (int j = 0; j < mine; j++)
      CHECK_RC(rmadht_remove(t, mykeys + (size_t)j * KS), RMADHT_OK);
    settle(t);
    CHECK_RC(rmadht_read_batch(t, (size_t)total, keys, outs, status),
             RMADHT_OK);
    for (int k = 0; k < total; k++) CHECK(status[k] == RMADHT_NOT_FOUND);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK(lost == 0);
  CHECK(evicted == 0);
  rmadht_stats g;
  CHECK_RC(rmadht_get_stats_global(t, &g), RMADHT_OK);
  CHECK(g.evictions == 0);
  CHECK(g.writes == (uint64_t)total * (uint64_t)rounds);
  CHECK(g.removes == (uint64_t)total * (uint64_t)rounds);
  CHECK(g.invalidations == 0); /* nothing torn after a settle */
  free(keys);
  free(vals);
  free(outs);
  free(status);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* ------------------------------------------------------------------ */
/* 2. Hot keys: concurrent overwrites and reads                        */
/* ------------------------------------------------------------------ */

/* Large values widen the window in which a put has landed partly, so
   readers do meet torn slots.  Each rank stops after HOT_ITERS operations
   or HOT_SECONDS, whichever comes first: Open MPI does all of them in a
   fraction of a second, MPICH on oversubscribed cores (busy-polling
   processes taking turns) can need a hundred times longer. */
enum { NHOT = 4, HOT_ITERS = 3000, HVS = 1024 };
#define HOT_SECONDS 1.2 /* lock-free; the locked modes get a third */

static int version_plausible(uint64_t v) {
  /* 0: the initial write; else (writer rank + 1) << 32 | (iteration + 1). */
  if (v == 0) return 1;
  uint64_t w = v >> 32, it = v & 0xFFFFFFFFu;
  return w >= 1 && w <= (uint64_t)nranks && it >= 1 && it <= HOT_ITERS;
}

static void test_hot(const struct variant *var) {
  rmadht *t = create_vs(var, (size_t)1 << 20, NULL, HVS);
  if (!t) return;
  unsigned char key[KS], val[HVS], out[HVS];
  if (rank == 0) {
    for (uint64_t h = 0; h < NHOT; h++) {
      make_key(key, KS, 7000 + h);
      make_tagged_value(val, HVS, 7000 + h, 0);
      CHECK_RC(rmadht_write(t, key, val), RMADHT_OK);
    }
  }
  settle(t);

  rmadht_stats s0, s1;
  rmadht_get_stats(t, &s0);
  uint64_t nread = 0, nok = 0, nmiss = 0, nwrite = 0, bad = 0;
  double deadline =
      MPI_Wtime() +
      (var->mode == RMADHT_LOCK_FREE ? HOT_SECONDS : HOT_SECONDS / 3);
  int it;
  for (it = 0; it < HOT_ITERS && MPI_Wtime() < deadline; it++) {
    uint64_t id = 7000 + (uint64_t)((it * 7 + rank) % NHOT);
    make_key(key, KS, id);
    /* Even ranks mostly write, odd ranks mostly read, so with two or more
       ranks reads always race with writes of another process. */
    int write = rank % 2 == 0 ? it % 4 != 3 : it % 4 == 3;
    if (write) {
      uint64_t v = ((uint64_t)(rank + 1) << 32) | (uint64_t)(it + 1);
      make_tagged_value(val, HVS, id, v);
      int rc = rmadht_write(t, key, val);
      nwrite++;
      /* Losing races to other writers is never a reason to give up. */
      CHECK_RC(rc, RMADHT_OK);
    } else {
      memset(out, 0xEE, HVS);
      int rc = rmadht_read(t, key, out);
      nread++;
      if (rc == RMADHT_OK) {
        uint64_t v;
        nok++;
        if (!tagged_value_ok(out, HVS, id, &v) || !version_plausible(v)) {
          if (bad++ < 5)
            fprintf(stderr, "rank %d mode %s: torn or foreign value for key "
                    "%llu (version %#llx)\n", rank, var->name,
                    (unsigned long long)id, (unsigned long long)v);
        }
      } else {
        CHECK_RC(rc, RMADHT_NOT_FOUND);
        nmiss++;
        /* A miss leaves the output untouched. */
        CHECK(out[0] == 0xEE && out[HVS - 1] == 0xEE);
      }
    }
  }
  rmadht_get_stats(t, &s1);
  CHECK(it > 0);
  CHECK(bad == 0);
  /* Counters agree with what the calls returned. */
  uint64_t reads = s1.reads - s0.reads, hits = s1.hits - s0.hits,
           misses = s1.misses - s0.misses,
           retries = s1.checksum_retries - s0.checksum_retries,
           inval = s1.invalidations - s0.invalidations;
  CHECK(reads == nread);
  CHECK(hits == nok);
  CHECK(misses == nmiss);
  CHECK(hits + misses == reads);
  CHECK(s1.writes - s0.writes == nwrite);
  /* Every hot key exists throughout, so the only way to miss is to give
     up on a slot that stayed torn: each miss is one invalidation, and
     each invalidation follows READ_RETRIES re-reads. */
  CHECK(inval == misses);
  CHECK(retries >= READ_RETRIES * inval);
  CHECK(retries <= READ_RETRIES * reads);
  if (var->mode != RMADHT_LOCK_FREE) {
    /* Under a lock no copy is ever torn. */
    CHECK(retries == 0);
    CHECK(inval == 0);
    CHECK(nmiss == 0);
  }
  uint64_t tot_retries = sum_u64(retries), tot_inval = sum_u64(inval),
           tot_reads = sum_u64(nread), tot_ok = sum_u64(nok),
           tot_writes = sum_u64(nwrite);
  /* bad == 0 says nothing if no read ever found its key. */
  CHECK(tot_ok > 0);
  if (rank == 0)
    printf("hot keys %s: %llu writes, %llu reads, %llu checksum retries, "
           "%llu invalidations\n",
           var->name, (unsigned long long)tot_writes,
           (unsigned long long)tot_reads, (unsigned long long)tot_retries,
           (unsigned long long)tot_inval);
  settle(t);

  /* Quiescent: every rank reads the same, valid, final value. */
  for (uint64_t h = 0; h < NHOT; h++) {
    uint64_t id = 7000 + h, v = UINT64_MAX, vmax, vmin;
    make_key(key, KS, id);
    CHECK_RC(rmadht_read(t, key, out), RMADHT_OK);
    CHECK(tagged_value_ok(out, HVS, id, &v) && version_plausible(v));
    MPI_Allreduce(&v, &vmax, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &vmin, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    CHECK(vmax == vmin);
  }
  rmadht_stats g;
  CHECK_RC(rmadht_get_stats_global(t, &g), RMADHT_OK);
  CHECK(g.evictions == 0); /* four keys in a large table */
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* ------------------------------------------------------------------ */
/* 3. Eviction accounting past capacity                                */
/* ------------------------------------------------------------------ */

enum { SMALL_GROUPS = 2, OVERFILL = 20, EVICT_ROUNDS = 200 };
/* 16 slots per rank, 20 keys per rank */
#define EVICT_SECONDS 0.5

static size_t small_bytes(void) {
  /* 2 groups of 8 slots of 24 + 16 + 40 = 80 bytes, and 64 bytes for the
     fine-lock words, so every mode gets exactly 2 groups. */
  return SMALL_GROUPS * SLOT_GROUP * 80 + 64;
}

/* Counts the keys of ids [base, base + n) that read back, checking their
   values; returns the number found.  Batches: cheap on slow transports. */
static uint64_t count_present(rmadht *t, uint64_t base, uint64_t n) {
  enum { B = 128 };
  unsigned char *keys = malloc((size_t)B * KS), *outs = malloc((size_t)B * VS);
  int status[B];
  uint64_t found = 0;
  for (uint64_t at = 0; at < n; at += B) {
    size_t m = n - at < B ? (size_t)(n - at) : B;
    for (size_t j = 0; j < m; j++) make_key(keys + j * KS, KS, base + at + j);
    CHECK_RC(rmadht_read_batch(t, m, keys, outs, status), RMADHT_OK);
    for (size_t j = 0; j < m; j++) {
      if (status[j] == RMADHT_OK) {
        found++;
        CHECK(value_ok(outs + j * VS, VS, base + at + j, 1));
      } else {
        CHECK(status[j] == RMADHT_NOT_FOUND);
      }
    }
  }
  free(keys);
  free(outs);
  return found;
}

/* (a) One writer at a time: every write that did not evict added a key,
   every eviction removed exactly one. */
static void evict_in_turns(rmadht *t, uint64_t capacity, uint64_t total) {
  unsigned char key[KS], val[VS];
  rmadht_stats st, g;
  uint64_t my_evicted = 0;
  for (int turn = 0; turn < nranks; turn++) {
    if (turn == rank) {
      for (uint64_t j = 0; j < OVERFILL; j++) {
        uint64_t id = 10000 + (uint64_t)rank * OVERFILL + j;
        make_key(key, KS, id);
        make_value(val, VS, id, 1);
        int rc = rmadht_write(t, key, val);
        if (rc == RMADHT_EVICTED) my_evicted++;
        else CHECK_RC(rc, RMADHT_OK);
      }
    }
    settle(t);
  }
  CHECK_RC(rmadht_get_stats(t, &st), RMADHT_OK);
  CHECK(st.evictions == my_evicted);
  CHECK_RC(rmadht_get_stats_global(t, &g), RMADHT_OK);
  uint64_t all_evicted = sum_u64(my_evicted);
  CHECK(g.evictions == all_evicted);
  CHECK(all_evicted >= total - capacity); /* past capacity: must evict */
  uint64_t present = sum_u64(count_present(t, 10000, total));
  /* Every rank counted all keys, so divide by the rank count. */
  CHECK(present == (total - all_evicted) * (uint64_t)nranks);
  CHECK(present <= capacity * (uint64_t)nranks);
}

static void evict_all_at_once(const struct variant *var, uint64_t capacity,
                              uint64_t total);

static void test_evictions(const struct variant *var) {
  rmadht_info info;
  rmadht *t = create(var, small_bytes(), NULL);
  if (!t) return;
  CHECK_RC(rmadht_get_info(t, &info), RMADHT_OK);
  CHECK(info.groups_per_rank == SMALL_GROUPS);
  uint64_t capacity = (uint64_t)info.slots_per_rank * (uint64_t)nranks;
  uint64_t total = (uint64_t)OVERFILL * (uint64_t)nranks;
  evict_in_turns(t, capacity, total);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);

  /* (b) All ranks at once, in fresh tables while the budget lasts: the
     race this probes (two writers meeting in the last free slots of full
     groups) hits a few rounds in a hundred on Open MPI. */
  double start = MPI_Wtime();
  for (int round = 0; round < EVICT_ROUNDS; round++) {
    if (round >= 1 && over_budget(start, EVICT_SECONDS)) break;
    int before = check_failures, failed, any;
    evict_all_at_once(var, capacity, total);
    /* One failing round says it all; stop before the log fills up. */
    failed = check_failures > before;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      if (rank == 0)
        fprintf(stderr, "mode %s: all-at-once eviction round %d failed\n",
                var->name, round);
      break;
    }
  }
}

/* All ranks overfill a fresh small table at once, singles and a batch
   mixed: the counters still equal the EVICTED returns, and no key
   vanishes without an eviction. */
static void evict_all_at_once(const struct variant *var, uint64_t capacity,
                              uint64_t total) {
  unsigned char key[KS], val[VS];
  rmadht_stats st, g;
  uint64_t my_evicted = 0, all_evicted, present;
  rmadht *t = create(var, small_bytes(), NULL);
  if (!t) return;
  enum { NB = OVERFILL / 2 };
  unsigned char *keys = malloc((size_t)NB * KS), *vals = malloc((size_t)NB * VS);
  int status[NB];
  MPI_Barrier(MPI_COMM_WORLD);
  for (uint64_t j = 0; j < OVERFILL - NB; j++) {
    uint64_t id = 20000 + (uint64_t)rank * OVERFILL + j;
    make_key(key, KS, id);
    make_value(val, VS, id, 1);
    int rc = rmadht_write(t, key, val);
    if (rc == RMADHT_EVICTED) my_evicted++;
    else CHECK_RC(rc, RMADHT_OK);
  }
  for (uint64_t j = 0; j < NB; j++) {
    uint64_t id = 20000 + (uint64_t)rank * OVERFILL + (OVERFILL - NB) + j;
    make_key(keys + j * KS, KS, id);
    make_value(vals + j * VS, VS, id, 1);
  }
  CHECK_RC(rmadht_write_batch(t, NB, keys, vals, status), RMADHT_OK);
  for (int j = 0; j < NB; j++) {
    if (status[j] == RMADHT_EVICTED) my_evicted++;
    else CHECK(status[j] == RMADHT_OK);
  }
  settle(t);
  CHECK_RC(rmadht_get_stats(t, &st), RMADHT_OK);
  CHECK(st.evictions == my_evicted);
  CHECK(st.writes == OVERFILL);
  CHECK_RC(rmadht_get_stats_global(t, &g), RMADHT_OK);
  all_evicted = sum_u64(my_evicted);
  CHECK(g.evictions == all_evicted);
  CHECK(all_evicted >= total - capacity);
  /* Each key was written once, so every key that is gone was displaced
     by a write that said so: a key missing without a matching
     RMADHT_EVICTED was lost while both its writer and the writer that
     overwrote it were told RMADHT_OK. */
  present = count_present(t, 20000, total);
  if (present != total - all_evicted)
    fprintf(stderr, "rank %d mode %s: %llu keys present, %llu written, "
            "%llu evictions counted\n", rank, var->name,
            (unsigned long long)present, (unsigned long long)total,
            (unsigned long long)all_evicted);
  CHECK(present == total - all_evicted);
  free(keys);
  free(vals);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* ------------------------------------------------------------------ */
/* 4. Half load, all ranks writing at once: nothing lost               */
/* ------------------------------------------------------------------ */

enum { HALF_GROUPS = 16 };

static void test_half_load(const struct variant *var) {
  /* 16 groups of 8 slots per rank in every mode and path: room for the
     tags of the node-local path (32 bytes a group), which also holds the
     lock words (4 bytes a group, rounded to 64), and too little for a 17th
     group either way. */
  rmadht *t =
      create(var, HALF_GROUPS * (SLOT_GROUP * 80 + 4 * FRONT_TAGS) + 64, NULL);
  if (!t) return;
  rmadht_info info;
  CHECK_RC(rmadht_get_info(t, &info), RMADHT_OK);
  CHECK(info.groups_per_rank == HALF_GROUPS);
  /* Keys picked so that every owner gets exactly half its slots: a table
     at 50% load on every rank, not only on average.  Every rank picks the
     same ids (placement is a pure function of the key), and writes every
     P-th of them, so the writers of one group are all ranks at once. */
  uint64_t per_owner = info.slots_per_rank / 2;
  uint64_t total = per_owner * (uint64_t)nranks;
  uint64_t *ids = malloc(total * sizeof *ids);
  uint64_t *load = calloc((size_t)nranks, sizeof *load);
  unsigned char key[KS];
  uint64_t n = 0;
  for (uint64_t id = 50000; n < total; id++) {
    struct place p;
    make_key(key, KS, id);
    rmadht_place(t, key, &p);
    if (load[p.rank] < per_owner) {
      load[p.rank]++;
      ids[n++] = id;
    }
  }
  /* This rank's share: single writes, then a batch for the rest (a
     quarter singles in the locked modes, whose single writes cost four
     round trips, half in lock-free mode). */
  uint64_t mine = 0, evicted = 0;
  for (uint64_t k = (uint64_t)rank; k < total; k += (uint64_t)nranks) mine++;
  unsigned char *keys = malloc((size_t)mine * KS), *vals = malloc((size_t)mine * VS);
  int *status = malloc((size_t)mine * sizeof(int));
  for (uint64_t j = 0; j < mine; j++) {
    uint64_t id = ids[(uint64_t)rank + j * (uint64_t)nranks];
    make_key(keys + j * KS, KS, id);
    make_value(vals + j * VS, VS, id, 1);
  }
  uint64_t nsingle = var->mode == RMADHT_LOCK_FREE ? mine / 2 : mine / 4;
  MPI_Barrier(MPI_COMM_WORLD);
  for (uint64_t j = 0; j < nsingle; j++) {
    int rc = rmadht_write(t, keys + j * KS, vals + j * VS);
    if (rc == RMADHT_EVICTED) evicted++;
    else CHECK_RC(rc, RMADHT_OK);
  }
  CHECK_RC(rmadht_write_batch(t, (size_t)(mine - nsingle), keys + nsingle * KS,
                              vals + nsingle * VS, status), RMADHT_OK);
  for (uint64_t j = 0; j < mine - nsingle; j++) {
    if (status[j] == RMADHT_EVICTED) evicted++;
    else CHECK(status[j] == RMADHT_OK);
  }
  settle(t);
  CHECK(sum_u64(evicted) == 0);

  /* Every rank reads every key back, in batches. */
  enum { B = 128 };
  unsigned char *bk = malloc((size_t)B * KS), *bv = malloc((size_t)B * VS);
  int bs[B];
  uint64_t missing = 0;
  for (uint64_t at = 0; at < total; at += B) {
    size_t m = total - at < B ? (size_t)(total - at) : B;
    for (size_t j = 0; j < m; j++) make_key(bk + j * KS, KS, ids[at + j]);
    CHECK_RC(rmadht_read_batch(t, m, bk, bv, bs), RMADHT_OK);
    for (size_t j = 0; j < m; j++)
      if (bs[j] != RMADHT_OK || !value_ok(bv + j * VS, VS, ids[at + j], 1))
        missing++;
  }
  if (missing)
    fprintf(stderr, "rank %d mode %s: %llu of %llu keys missing at 50%% "
            "load\n", rank, var->name,
            (unsigned long long)missing, (unsigned long long)total);
  CHECK(missing == 0);
  free(ids);
  free(load);
  free(keys);
  free(vals);
  free(status);
  free(bk);
  free(bv);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* ------------------------------------------------------------------ */
/* 5. Churn: writes, removes and reads of more keys than slots          */
/* ------------------------------------------------------------------ */

/* Every rank writes, removes and reads the same CHURN_KEYS keys, all
   hashed to one pair of groups (16 slots), so writers keep evicting and
   overwriting slots whose write is still in flight.  Once quiet, every
   slot must hold a finished write (on the node-local path under the right
   tag, so that a read finds it), and every key must read as missing or
   with a value some rank wrote for it.  On the lock-free RMA path this
   probes the races docs/explanation/lockfree-protocol.md describes: a put
   that looked finished
   while some of its bytes could still land (again) tore the next writer's
   entry for good, so a writer now flushes its put before ver says the
   slot is finished. */
enum {
  CHURN_KEYS = 24,
  CHURN_OPS = 300,
  CHURN_MIN_OPS = 20,
  CHURN_MIN_ROUNDS = 2,
  CVS = 48
};
#define CHURN_SECONDS 0.6

/* A rank writes the same bytes for a key every time, as a cache does:
   then only ver tells a finished write from one still landing. */
static int churn_version_ok(uint64_t v) {
  return v >= 1 && v <= (uint64_t)nranks;
}

/* The owner's view of its window after the churn: slots in flight or
   torn, and in lock-free tables live slots whose tag does not lead to
   them. */
static void churn_check_slots(rmadht *t, const struct variant *var) {
  uint64_t unfinished = 0, bad_tags = 0, unreadable = 0;
  unsigned char out[CVS];
  for (uint64_t g = 0; g < t->layout.groups; g++) {
    for (int j = 0; j < SLOT_GROUP; j++) {
      const unsigned char *s = t->base + slot_group_disp(&t->layout, g) +
                               (size_t)j * t->layout.slot_size;
      if (slot_get32(s, SLOT_OFF_CLAIM) == 0) continue;
      enum slot_kind kind = slot_classify(&t->layout, s);
      if (slot_inflight(s) || kind == SLOT_TORN) {
        unfinished++;
        continue;
      }
      if (kind != SLOT_LIVE) continue;
      if (t->mode == RMADHT_LOCK_FREE) {
        struct place p;
        uint32_t tag;
        rmadht_place(t, slot_key(s), &p);
        memcpy(&tag, t->base + slot_tags_disp(g) + 4u * (size_t)j, 4);
        bad_tags += tag != p.tag;
      }
      unreadable += rmadht_read(t, slot_key(s), out) != RMADHT_OK;
    }
  }
  if (unfinished || bad_tags || unreadable)
    fprintf(stderr, "%s churn: %llu slots unfinished, %llu wrong tags, "
            "%llu live keys unreadable\n", var->name,
            (unsigned long long)unfinished, (unsigned long long)bad_tags,
            (unsigned long long)unreadable);
  CHECK(unfinished == 0);
  CHECK(bad_tags == 0);
  CHECK(unreadable == 0);
}

static void test_churn(const struct variant *var) {
  unsigned spread = 1;
  rmadht *t = create_vs(var, (size_t)64 << 10, &spread, CVS);
  if (!t) return;
  unsigned char key[KS], val[CVS], out[CVS];
  uint64_t rng = 0x9E3779B97F4A7C15u * (uint64_t)(rank + 1), bad = 0, v;
  double start = MPI_Wtime();
  for (int round = 0;
       round < CHURN_MIN_ROUNDS || !over_budget(start, CHURN_SECONDS);
       round++) {
    MPI_Barrier(MPI_COMM_WORLD);
    /* At least a few operations per round, then only while the budget
       lasts: on oversubscribed cores a locked mode can take ~10 ms each. */
    for (int it = 0;
         it < CHURN_OPS &&
         (it < CHURN_MIN_OPS || MPI_Wtime() - start < CHURN_SECONDS);
         it++) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      uint64_t id = 9000 + rng % CHURN_KEYS;
      make_key(key, KS, id);
      unsigned op = (unsigned)(rng >> 40) % 10;
      int rc;
      if (op < 6) {
        make_tagged_value(val, CVS, id, (uint64_t)rank + 1);
        rc = rmadht_write(t, key, val);
        CHECK(rc == RMADHT_OK || rc == RMADHT_EVICTED);
      } else if (op < 8) {
        rc = rmadht_remove(t, key);
        CHECK(rc == RMADHT_OK || rc == RMADHT_NOT_FOUND);
      } else {
        rc = rmadht_read(t, key, out);
        CHECK(rc == RMADHT_OK || rc == RMADHT_NOT_FOUND);
        if (rc == RMADHT_OK)
          bad += !tagged_value_ok(out, CVS, id, &v) || !churn_version_ok(v);
      }
    }
    settle(t);
    /* crowd_hash puts every key on the last rank. */
    if (rank == nranks - 1) churn_check_slots(t, var);
    for (uint64_t k = 0; k < CHURN_KEYS; k++) {
      make_key(key, KS, 9000 + k);
      int rc = rmadht_read(t, key, out);
      CHECK(rc == RMADHT_OK || rc == RMADHT_NOT_FOUND);
      if (rc == RMADHT_OK)
        bad += !tagged_value_ok(out, CVS, 9000 + k, &v) || !churn_version_ok(v);
    }
  }
  CHECK(bad == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  /* Optional arguments, for debugging: the parts to run (crowd, hot,
     evict, half, churn) and the variant numbers; ctest runs everything. */
  const char *parts = argc > 1 ? argv[1] : "crowd,hot,evict,half,churn";
  const char *vset = argc > 2 ? argv[2] : "0123";
  for (int m = 0; m < N_VARIANTS; m++) {
    if (!strchr(vset, '0' + m)) continue;
    static const char *names[] = {"crowd", "hot", "evict", "half", "churn"};
    static void (*const fns[])(const struct variant *) = {
        test_crowd, test_hot, test_evictions, test_half_load, test_churn};
    for (int f = 0; f < 5; f++) {
      if (!strstr(parts, names[f])) continue;
      double t0 = MPI_Wtime();
      fns[f](&test_variants[m]);
      check_say_time(test_variants[m].name, names[f], &t0);
    }
  }
  int rc = check_finish("mpi_concurrent");
  MPI_Finalize();
  return rc;
}
