/* Batched reads and writes whose gets and puts to one target go as one
   message of a derived datatype (src/rma.c), or one per block: many rows
   to one target, keys sharing a candidate group, the same key in many
   rows, rows on every target, keys in either candidate group, absent keys,
   batches across chunks, runs of adjacent slots; in every mode and every
   gather setting, every value read back is checked, and so is the number
   of MPI_Get calls. */
#include <stdlib.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

/* Each writer writes PER_CLUSTER keys of a cluster to every target, all
   writers' sharing one first group there, so that a batch's writes meet in
   groups and some keys live away from home.  One cluster per target: with
   two, at 16 ranks both clusters' groups filled, and a key of one cluster
   whose second group was the other cluster's found both full and evicted
   a key, as a full table does; the test then missed that key (4 emulated
   hosts, about one run in 20). */
enum { KS = 24, VS = 40, CLUSTERS = 1, PER_CLUSTER = 12, SPREAD = 40 };

/* MPI_Get calls of this process, counted by interposing on the MPI entry
   point (the library is linked in as objects), and the most bytes one of
   them carried. */
static uint64_t gets;
static long most_bytes;
/* Read batches that took more gets than one per target per chunk. */
static uint64_t split_batches;
int MPI_Get(void *origin, int origin_count, MPI_Datatype origin_type,
            int rank, MPI_Aint disp, int count, MPI_Datatype type,
            MPI_Win win) {
  int size;
  MPI_Type_size(type, &size);
  if ((long)size * count > most_bytes) most_bytes = (long)size * count;
  gets++;
  return PMPI_Get(origin, origin_count, origin_type, rank, disp, count, type,
                  win);
}

/* A gathered message carries at most 64 KB (src/rma.c) unless one group
   is larger. */
enum { MESSAGE_BYTES = 64 * 1024 };

/* Key ids name where the key lives, which the test's hash then puts
   there: writer << 40 | target << 32 | cluster << 16 | k, cluster
   CLUSTERS meaning "spread" (its own first group).  Absent keys have bit
   63 set. */
struct where {
  int nranks;
  uint64_t groups;
};

static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xBF58476D1CE4E5B9);
  x ^= x >> 27;
  x *= UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

static uint64_t key_id(int writer, int target, int cluster, int k) {
  return (uint64_t)writer << 40 | (uint64_t)target << 32 |
         (uint64_t)cluster << 16 | (uint64_t)k;
}

/* The first group of a cluster's keys on every target. */
static uint64_t cluster_group(const struct where *w, int cluster) {
  return (uint64_t)(cluster + 1) * w->groups / (CLUSTERS + 2);
}

/* The owner from the high half (place.c reduces it by multiply-shift);
   the first group from the low half: keys of one cluster share it,
   their second groups (a rehash of all 64 bits) differ. */
static uint64_t test_hash(const void *key, size_t len, void *arg) {
  const struct where *w = arg;
  uint64_t id;
  memcpy(&id, key, 8);
  (void)len;
  int target = (int)(id >> 32 & 0xff);
  int cluster = (int)(id >> 16 & 0xffff);
  uint64_t hi = (((uint64_t)target << 32) + (uint64_t)w->nranks - 1) /
                (uint64_t)w->nranks;
  uint64_t lo;
  if (cluster < CLUSTERS && w->groups > 0) {
    uint64_t g = cluster_group(w, cluster);
    lo = ((g << 32) + w->groups - 1) / w->groups + (id & 0xffff) +
         (id >> 40 & 0xff) * 64;
  } else {
    lo = mix(id) & 0xffffffffu;
  }
  return hi << 32 | lo;
}

/* The keys one writer writes: clusters sharing a first group and spread
   keys, on every target; returns how many. */
static size_t writer_keys(int writer, int nranks, uint64_t *out) {
  size_t m = 0;
  for (int r = 0; r < nranks; r++) {
    for (int c = 0; c < CLUSTERS; c++)
      for (int k = 0; k < PER_CLUSTER; k++) out[m++] = key_id(writer, r, c, k);
    for (int k = 0; k < SPREAD; k++) out[m++] = key_id(writer, r, CLUSTERS, k);
  }
  return m;
}

static int target_of(uint64_t id) { return (int)(id >> 32 & 0xff); }

/* MPI_Gets a read batch of n keys may take on the RMA path, with groups
   of gb bytes.  At least one per target per chunk of 256 items
   (src/batch.h); with every target served by messages
   (RMADHT_GATHER_TARGET) no more than the messages that those items'
   blocks fill: each one but a target's last holds more than
   MESSAGE_BYTES less its largest block (src/rma.c).  Otherwise up to one
   per candidate group. */
/* Whether the table is lock-free: its reads from a rank served by
   messages fetch both groups' tags and the key's two home slots, four
   blocks an item, then in a second round any other slot whose tag
   matches, here up to the other 14 (keys of a cluster share their first
   group, so some live away from home); from other ranks both groups, two
   gets.  ss: its slots' bytes, spg: slots a group. */
static int lock_free;
static size_t ss, spg;

/* Messages of at most MESSAGE_BYTES that bytes in blocks of at most
   block bytes fill, at most. */
static uint64_t messages(size_t bytes, size_t block) {
  return block >= MESSAGE_BYTES ? bytes / block
                                : 1 + bytes / (MESSAGE_BYTES - block);
}
/* The ranks whose groups this rank reads by loads (rmadht_info.node_loads:
   those on its node), or NULL: no gets to them. */
static const unsigned char *loaded;

static void expected_gets(const uint64_t *ids, size_t n, size_t gb,
                          int gather, uint64_t *least, uint64_t *most) {
  size_t items[256];
  if (n == 1 && loaded && loaded[target_of(ids[0])]) {
    *least = *most = 0;
    return;
  }
  if (n == 1 && lock_free) {
    *least = 1;
    *most = 4 + 2 * 8 - 2;
    return;
  }
  *least = *most = 0;
  for (size_t a = 0; a < n; a += 256) {
    memset(items, 0, sizeof items);
    for (size_t i = a; i < n && i < a + 256; i++) items[target_of(ids[i])]++;
    for (int r = 0; r < 256; r++) {
      if (!items[r] || (loaded && loaded[r])) continue;
      *least += 1;
      if (lock_free)
        *most += messages(items[r] * 2 * (4 * spg + ss), ss) +
                 messages(items[r] * (2 * spg - 2) * ss, ss);
      else
        *most += messages(items[r] * 2 * gb, gb);
    }
  }
  if (gather != RMADHT_GATHER_TARGET) *most = *least ? 2 * n : 0;
}

static int gets_ok(uint64_t got, const uint64_t *ids, size_t n, size_t gb,
                   int rma, int gather) {
  if (!rma) return got == 0;
  uint64_t least, most;
  expected_gets(ids, n, gb, gather, &least, &most);
  return got >= least && got <= most;
}

static void read_and_check(rmadht *t, const uint64_t *ids, size_t n,
                           uint64_t version, int rma, int gather) {
  rmadht_info info;
  CHECK_RC(rmadht_get_info(t, &info), RMADHT_OK);
  size_t gb = info.slot_size * info.slots_per_group;
  unsigned char *keys = malloc(n * KS), *vals = malloc(n * VS);
  int *st = malloc(n * sizeof *st);
  for (size_t i = 0; i < n; i++) make_key(keys + i * KS, KS, ids[i]);
  uint64_t g0 = gets;
  most_bytes = 0;
  CHECK_RC(rmadht_read_batch(t, n, keys, vals, st), RMADHT_OK);
  CHECK(gets_ok(gets - g0, ids, n, gb, rma, gather));
  uint64_t least, most;
  expected_gets(ids, n, gb, gather, &least, &most);
  split_batches += rma && gets - g0 > least;
  CHECK(most_bytes <= (long)(gb > MESSAGE_BYTES ? gb : MESSAGE_BYTES));
  for (size_t i = 0; i < n; i++) {
    if (ids[i] >> 63) {
      CHECK_RC(st[i], RMADHT_NOT_FOUND);
    } else {
      CHECK_RC(st[i], RMADHT_OK);
      CHECK(value_ok(vals + i * VS, VS, ids[i], version));
    }
  }
  free(keys);
  free(vals);
  free(st);
}

static void shuffle(uint64_t *a, size_t n, uint64_t seed) {
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(mix(seed + i) % i);
    uint64_t x = a[i - 1];
    a[i - 1] = a[j];
    a[j] = x;
  }
}

/* Orders ids by target: long runs of rows to one target. */
static int by_target(const void *a, const void *b) {
  int x = target_of(*(const uint64_t *)a), y = target_of(*(const uint64_t *)b);
  return (x > y) - (x < y);
}

static void run_variant(const struct variant *var, int gather, int rank,
                        int nranks) {
  struct where w = {nranks, 0};
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  variant_config(&cfg, var);
  cfg.gather = gather;
  lock_free = var->mode == RMADHT_LOCK_FREE;
  cfg.bytes_per_rank = 1 << 20;
  cfg.hash = test_hash;
  cfg.hash_arg = &w;
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_OK);
  if (!t) return;
  rmadht_info info;
  CHECK_RC(rmadht_get_info(t, &info), RMADHT_OK);
  w.groups = info.groups_per_rank; /* the hash spreads keys until now */
  ss = info.slot_size;
  spg = info.slots_per_group;
  int rma = !info.node_local;
  unsigned char *near = malloc((size_t)nranks);
  int one_node;
  ranks_on_node(near, &one_node);
  loaded = info.node_loads ? near : NULL;
  split_batches = 0;

  /* The keys this rank reads back: its own writes and those of the next
     three ranks (every rank's when there are four or fewer), on every
     target.  Reading every rank's would make the test's work grow as the
     cube of the ranks: 16 ranks across emulated hosts took minutes. */
  size_t per_writer = (size_t)nranks * (CLUSTERS * PER_CLUSTER + SPREAD);
  int writers = nranks < 4 ? nranks : 4;
  size_t nwanted = per_writer * (size_t)writers;
  uint64_t *wanted = malloc(nwanted * sizeof *wanted);
  size_t m = 0;
  for (int j = 0; j < writers; j++)
    m += writer_keys((rank + j) % nranks, nranks, wanted + m);
  CHECK(m == nwanted);
  const uint64_t *mine = wanted; /* j = 0 */

  /* Version 1 by batches of 128 (more than a cluster, so a batch's
     writes share groups and go in several waves). */
  unsigned char *keys = malloc(per_writer * KS), *vals = malloc(per_writer * VS);
  int *st = malloc(per_writer * sizeof *st);
  rmadht_location *locs = malloc(per_writer * sizeof *locs);
  for (size_t i = 0; i < per_writer; i++) {
    make_key(keys + i * KS, KS, mine[i]);
    make_value(vals + i * VS, VS, mine[i], 1);
  }
  for (size_t a = 0; a < per_writer; a += 128) {
    size_t n = per_writer - a < 128 ? per_writer - a : 128;
    CHECK_RC(rmadht_write_batch(t, n, keys + a * KS, vals + a * VS, st + a),
             RMADHT_OK);
    for (size_t i = a; i < a + n; i++) CHECK_RC(st[i], RMADHT_OK);
  }
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Reads: grouped by target, shuffled, with repeats and absent keys, in
     batches of several sizes, some crossing chunks. */
  size_t cap = 3 * nwanted + 16;
  uint64_t *ids = malloc(cap * sizeof *ids);
  memcpy(ids, wanted, nwanted * sizeof *ids);
  qsort(ids, nwanted, sizeof *ids, by_target);
  const size_t sizes[] = {1, 2, 7, 128, 256, 600};
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    /* Batches below 8 rows take every eighth place only: each costs a
       round trip, which across hosts with 2 ranks per host (4 busy ranks
       on 2 cores under MPICH) made this test take minutes. */
    size_t stride = sizes[z] < 8 ? 8 * sizes[z] : sizes[z];
    for (size_t a = 0; a < nwanted; a += stride)
      read_and_check(t, ids + a,
                     nwanted - a < sizes[z] ? nwanted - a : sizes[z], 1, rma,
                     gather);
  }
  /* Each key twice in a row, once more later, and absent keys between. */
  size_t n = 0;
  for (size_t i = 0; i < nwanted; i++) {
    ids[n++] = wanted[i];
    ids[n++] = wanted[i];
    if (i % 5 == 0) ids[n++] = wanted[i] | UINT64_C(1) << 63;
  }
  for (size_t i = 0; i < nwanted && n < cap; i += 3) ids[n++] = wanted[i];
  shuffle(ids + nwanted, n - nwanted, (uint64_t)rank);
  for (size_t a = 0; a < n; a += 200)
    read_and_check(t, ids + a, n - a < 200 ? n - a : 200, 1, rma, gather);
  memcpy(ids, wanted, nwanted * sizeof *ids);
  shuffle(ids, nwanted, 7u + (uint64_t)rank);
  read_and_check(t, ids, nwanted, 1, rma, gather);

  /* Single reads: the gets expected_gets allows. */
  unsigned char out[VS];
  for (size_t i = 0; i < nwanted; i += 17) {
    make_key(keys, KS, wanted[i]);
    uint64_t g0 = gets;
    CHECK_RC(rmadht_read(t, keys, out), RMADHT_OK);
    CHECK(gets_ok(gets - g0, wanted + i, 1, 1, rma, gather));
    CHECK(value_ok(out, VS, wanted[i], 1));
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* Version 2 in one batch, with locations; read back by key and by
     location, also in one batch each. */
  for (size_t i = 0; i < per_writer; i++) {
    make_key(keys + i * KS, KS, mine[i]);
    make_value(vals + i * VS, VS, mine[i], 2);
  }
  CHECK_RC(rmadht_write_batch_loc(t, per_writer, keys, vals, st, locs),
           RMADHT_OK);
  for (size_t i = 0; i < per_writer; i++) CHECK_RC(st[i], RMADHT_OK);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  read_and_check(t, wanted, nwanted, 2, rma, gather);
  unsigned char *kout = malloc(per_writer * KS);
  CHECK_RC(rmadht_read_loc_batch(t, per_writer, locs, kout, vals, st),
           RMADHT_OK);
  for (size_t i = 0; i < per_writer; i++) {
    unsigned char k[KS];
    make_key(k, KS, mine[i]);
    CHECK_RC(st[i], RMADHT_OK);
    CHECK(memcmp(kout + i * KS, k, KS) == 0);
    CHECK(value_ok(vals + i * VS, VS, mine[i], 2));
  }

  /* Every slot of a run on one target by location: adjacent slots merge
     into one block of the get; a batch must read what single reads do.
     The run starts a few slots before the cluster's group, where the
     first of its keys written to a target lands. */
  enum { RUN = 300 };
  rmadht_location run[RUN];
  unsigned char *rk = malloc(RUN * KS), *rv = malloc(RUN * VS);
  int rst[RUN], live = 0;
  int target = (rank + 1) % nranks;
  uint64_t first = cluster_group(&w, 0) * info.slots_per_group - 5;
  for (int i = 0; i < RUN; i++)
    CHECK_RC(rmadht_location_join(t, target, first + (uint64_t)i, &run[i]),
             RMADHT_OK);
  uint64_t g0 = gets;
  CHECK_RC(rmadht_read_loc_batch(t, RUN, run, rk, rv, rst), RMADHT_OK);
  /* Two chunks to one target, one block each, cut into messages of at
     most MESSAGE_BYTES. */
  size_t per = MESSAGE_BYTES / info.slot_size;
  CHECK(!rma || gets - g0 == (256 + per - 1) / per + (RUN - 256 + per - 1) / per);
  for (int i = 0; i < RUN; i++) {
    unsigned char k1[KS], v1[VS];
    int rc = rmadht_read_loc(t, &run[i], k1, v1);
    CHECK_RC(rst[i], rc);
    if (rc != RMADHT_OK) continue;
    live++;
    CHECK(memcmp(k1, rk + i * KS, KS) == 0);
    CHECK(memcmp(v1, rv + i * VS, VS) == 0);
    uint64_t id;
    memcpy(&id, k1, 8);
    CHECK(value_ok(v1, VS, id, 2));
  }
  CHECK(live > 0);
  /* With 2 ranks or more, the batches of keys sorted by target carry more
     than MESSAGE_BYTES of groups to one target in the locked modes: some
     took several gets. */
  if (rma && !lock_free && gather == RMADHT_GATHER_TARGET && nranks > 1)
    CHECK(split_batches > 0);
  free(rk);
  free(rv);
  MPI_Barrier(MPI_COMM_WORLD);

  free(kout);
  free(ids);
  free(locs);
  free(st);
  free(vals);
  free(keys);
  free(wanted);
  free(near);
  loaded = NULL;
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  static const int gathers[] = {RMADHT_GATHER_TARGET, RMADHT_GATHER_BLOCK,
                                RMADHT_GATHER_AUTO};
  /* Every mode with every gather setting; past four ranks, where each
     round trip across emulated hosts waits for its target to be scheduled
     on this machine's two cores, every mode once, the settings in turn. */
  for (int g = 0; g < 3; g++)
    for (int v = 0; v < N_VARIANTS; v++)
      if (nranks <= CTEST_MAX_RANKS || v % 3 == g)
        run_variant(&test_variants[v], gathers[g], rank, nranks);
  int rc = check_finish("mpi_rma_gather");
  MPI_Finalize();
  return rc;
}
