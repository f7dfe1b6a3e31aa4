/*
 * Round trips of single lock-free operations on the RMA path, counted as
 * the MPI_Win_flush and MPI_Win_flush_local calls a rank waits in
 * (interposed: the library is linked in as objects): a read waits once; a
 * write of a key the rank has read or written before twice, starting from
 * that operation's copy (src/memo.h), also when both the key's home slots
 * are taken, and so does a write of a new key, whose guess wins; an
 * update, a remove and a write of a key the rank has no copy of wait three
 * times.  Then the race that starting from a copy leaves open: another
 * rank writes the key to another slot between the read and the write; the
 * later write must still be the one every rank reads.  And which flush a
 * read waits in: a local one, unless a write's last compare-and-swap is
 * still outstanding (src/rma.c says why).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "internal.h"

enum { KS = 16, VS = 24 };

static uint64_t flushes, local_flushes;
int MPI_Win_flush(int rank, MPI_Win win) {
  flushes++;
  return PMPI_Win_flush(rank, win);
}
int MPI_Win_flush_local(int rank, MPI_Win win) {
  flushes++;
  local_flushes++;
  return PMPI_Win_flush_local(rank, win);
}

/* Every key on rank 0, whose two groups (the table has two) it tries in
   the order 0, 1. */
static uint64_t first_rank_hash(const void *key, size_t len, void *arg) {
  (void)len;
  (void)arg;
  uint64_t id;
  memcpy(&id, key, 8);
  return id & 0x7FFFFFFF;
}

static void make_key(unsigned char *k, uint64_t id) {
  memset(k, 0, KS);
  memcpy(k, &id, 8);
}
static void make_value(unsigned char *v, uint64_t id, int writer) {
  memset(v, writer + 1, VS);
  memcpy(v, &id, 8);
}

static int bump(void *arg, size_t item, const void *key, void *value,
                int found) {
  (void)arg;
  (void)item;
  (void)key;
  (void)found;
  ((unsigned char *)value)[VS - 1]++;
  return RMADHT_UPDATE_STORE;
}

static rmadht *create(size_t bytes, int small) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  cfg.mode = RMADHT_LOCK_FREE;
  cfg.node_local = 0;
  /* Every target served by messages, as another host's is: single reads
     then fetch home slots and tags. */
  cfg.gather = RMADHT_GATHER_TARGET;
  cfg.bytes_per_rank = bytes;
  if (small) cfg.hash = first_rank_hash;
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &cfg, &t), RMADHT_OK);
  return t;
}

/* A call that returns expect_rc after waiting in n flushes, of them
   local_flushes local ones. */
#define CHECK_WAITS(call, expect_rc, n) \
  do {                                  \
    flushes = local_flushes = 0;        \
    CHECK_RC(call, expect_rc);          \
    CHECK(flushes == (n));              \
  } while (0)

/* The counts of one rank's calls, the other ranks idle: had another
   rank's write claimed, between a read and the write that starts from
   its copy, the slot that write chose, the write would read and choose
   again, a round trip more (it did once, at 8 ranks on 4 emulated
   hosts). */
static void counts_alone(rmadht *t, int rank) {
  unsigned char k[KS], v[VS], got[VS];
  uint64_t base = (uint64_t)rank << 32;
  make_key(k, base + 1);
  make_value(v, base + 1, rank);
  CHECK_WAITS(rmadht_read(t, k, got), RMADHT_NOT_FOUND, 1);
  CHECK_WAITS(rmadht_write(t, k, v), RMADHT_OK, 2);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  CHECK_WAITS(rmadht_read(t, k, got), RMADHT_OK, 1);
  CHECK(!memcmp(got, v, VS));
  /* Overwriting the key just read: its own slot, two waits. */
  v[VS - 1] ^= 1;
  CHECK_WAITS(rmadht_write(t, k, v), RMADHT_OK, 2);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
  CHECK(!memcmp(got, v, VS));

  /* A cache's pattern: a work package's keys read, then each written. */
  enum { PACKAGE = 8 };
  unsigned char pk[PACKAGE][KS];
  rmadht_location pkloc[PACKAGE];
  for (int j = 0; j < PACKAGE; j++) {
    make_key(pk[j], base + 10 + (uint64_t)j);
    CHECK_RC(rmadht_read(t, pk[j], got), RMADHT_NOT_FOUND);
  }
  for (int j = 0; j < PACKAGE; j++)
    CHECK_WAITS(rmadht_write_loc(t, pk[j], v, &pkloc[j]), RMADHT_OK, 2);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  for (int j = 0; j < PACKAGE; j++) {
    CHECK_RC(rmadht_read(t, pk[j], got), RMADHT_OK);
    CHECK(!memcmp(got, v, VS));
  }

  /* A key written again (POET's cells of one package that share a key):
     from the copy the last write left, two waits, flushed or not, and
     the key then holds the last value. */
  for (int j = 0; j < 3; j++) {
    v[0] ^= 1;
    CHECK_WAITS(rmadht_write(t, pk[0], v), RMADHT_OK, 2);
  }
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  v[0] ^= 1;
  CHECK_WAITS(rmadht_write(t, pk[0], v), RMADHT_OK, 2);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  CHECK_RC(rmadht_read(t, pk[0], got), RMADHT_OK);
  CHECK(!memcmp(got, v, VS));

  /* Without a copy: a write of a new key guesses a never-claimed slot
     and waits twice, as does one after a read of another key. */
  unsigned char k2[KS];
  make_key(k2, base + 2);
  CHECK_WAITS(rmadht_write(t, k2, v), RMADHT_OK, 2);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  make_key(k2, base + 3);
  CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
  CHECK_WAITS(rmadht_write(t, k2, v), RMADHT_OK, 2);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  /* An update waits three times and drops the copy; a write without one
     of a key the table holds waits three times too, and the key stays
     where it was: the package's keys took the home slots their reads'
     copies chose, so about half of their guesses win the other home,
     which the write must give back. */
  CHECK_WAITS(rmadht_update(t, k2, bump, NULL, NULL), RMADHT_OK, 3);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  for (int j = 0; j < PACKAGE; j++) {
    rmadht_location again = {{0}};
    CHECK_RC(rmadht_update(t, pk[j], bump, NULL, NULL), RMADHT_OK);
    CHECK_RC(rmadht_flush(t), RMADHT_OK);
    make_value(v, base + 10 + (uint64_t)j, rank);
    CHECK_WAITS(rmadht_write_loc(t, pk[j], v, &again), RMADHT_OK, 3);
    CHECK(!memcmp(&pkloc[j], &again, sizeof again));
  }
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  for (int j = 0; j < PACKAGE; j++) {
    make_value(v, base + 10 + (uint64_t)j, rank);
    CHECK_RC(rmadht_read(t, pk[j], got), RMADHT_OK);
    CHECK(!memcmp(got, v, VS));
  }
  CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
  CHECK_WAITS(rmadht_remove(t, k), RMADHT_OK, 3);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  CHECK_RC(rmadht_read(t, k, got), RMADHT_NOT_FOUND);
}

static void counts(int rank) {
  rmadht *t = create(1 << 20, 0);
  if (!t) return;
  int nranks;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  for (int turn = 0; turn < nranks; turn++) {
    if (turn == rank) counts_alone(t, rank);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* Key ids from `from` on whose home slots (place_home) in groups 0 and 1
   are h0 (-1: any) and not h1 (-1: any); returns the first. */
static uint64_t key_homed(rmadht *t, uint64_t from, int h0, int not_h1) {
  for (uint64_t id = from;; id++) {
    unsigned char k[KS];
    struct place p;
    make_key(k, id);
    rmadht_place(t, k, &p);
    if ((h0 < 0 || place_home(&p, 0) == h0) &&
        (not_h1 < 0 || place_home(&p, 1) != not_h1))
      return id;
  }
}

/* Rank 0 writes key A into K's home slot of group 0, and B1 and B2,
   whose group-0 home that is too, into group 1.  Rank 1 reads key K
   (absent): its copy shows K's group-0 home taken and its group-1 home X
   free, so its write would take X.  Rank 0 then removes A and writes K,
   which now goes to group 0, K's free home in the group with more free
   slots; X is untouched, so rank 1's claim on it, from the old copy,
   wins, and K is in two slots.  Rank 1 wrote after rank 0 (a barrier
   orders them), so its copy must be the newer on every rank. */
static void stale_copy(int rank) {
  /* Two groups per rank: 8 slots of 64 bytes each, and their tags. */
  rmadht *t = create(2 * 8 * 64 + 64, 1);
  if (!t) return;
  unsigned char k[KS], v[VS], got[VS];
  rmadht_location where = {{0}};
  struct place pk;
  make_key(k, 100);
  rmadht_place(t, k, &pk);
  CHECK(pk.ngroups == 2 && pk.group[0] == 0 && pk.group[1] == 1);
  int h0 = place_home(&pk, 0), x = place_home(&pk, 1);
  uint64_t a = key_homed(t, 1000, h0, -1);
  uint64_t b1 = key_homed(t, a + 1, h0, x), b2 = b1;
  for (;;) {
    struct place p1, p2;
    unsigned char kb[KS];
    b2 = key_homed(t, b2 + 1, h0, x);
    make_key(kb, b1);
    rmadht_place(t, kb, &p1);
    make_key(kb, b2);
    rmadht_place(t, kb, &p2);
    if (place_home(&p1, 1) != place_home(&p2, 1)) break;
  }
  /* Rank 0 reads each key before it writes it, so that the write takes
     the slot its copy chooses, not a guess. */
  const uint64_t setup[] = {a, b1, b2};
  if (rank == 0)
    for (int i = 0; i < 3; i++) {
      unsigned char kf[KS];
      make_key(kf, setup[i]);
      make_value(v, setup[i], 0);
      CHECK_RC(rmadht_read(t, kf, got), RMADHT_NOT_FOUND);
      CHECK_RC(rmadht_write(t, kf, v), RMADHT_OK);
    }
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) CHECK_RC(rmadht_read(t, k, got), RMADHT_NOT_FOUND);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    unsigned char gone[KS];
    make_key(gone, a);
    CHECK_RC(rmadht_remove(t, gone), RMADHT_OK);
    make_value(v, 100, 0);
    CHECK_RC(rmadht_read(t, k, got), RMADHT_NOT_FOUND);
    CHECK_RC(rmadht_write_loc(t, k, v, &where), RMADHT_OK);
    CHECK_RC(rmadht_flush(t), RMADHT_OK);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    make_value(v, 100, 1);
    CHECK_RC(rmadht_write_loc(t, k, v, &where), RMADHT_OK);
    CHECK_RC(rmadht_flush(t), RMADHT_OK);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* The two writes took different slots: the race above happened. */
  int owner = -1;
  uint64_t slot = UINT64_MAX, first;
  if (rank < 2) CHECK_RC(rmadht_location_split(t, &where, &owner, &slot), RMADHT_OK);
  first = slot;
  MPI_Bcast(&first, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 1) CHECK(first == (uint64_t)h0 && slot == (uint64_t)x);
  make_value(v, 100, 1);
  CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
  CHECK(!memcmp(got, v, VS));
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* Rank 0 writes two keys whose groups are K's: A into K's home slot of
   the first group, C into K's home slot of the second.  A read of K
   (absent) then sees both homes taken; its copy offers a slot whose tag
   is 0 as never claimed, so the write of K still waits twice, takes
   neither home, and the key is found there.  (A goes to its first
   group's home, both homes being free; C to its second's, whose group
   has more free slots.) */
static void homes_taken(int rank) {
  rmadht *t = create(2 * 8 * 64 + 64, 1);
  if (!t) return;
  unsigned char k[KS], v[VS], got[VS];
  struct place pk;
  make_key(k, 100);
  rmadht_place(t, k, &pk);
  CHECK(pk.ngroups == 2);
  uint64_t id[2], slot[2];
  for (int g = 0; g < 2; g++) {
    slot[g] = pk.group[g] * 8 + (uint64_t)(place_home(&pk, g) % 8);
    for (id[g] = 1000 + 1000 * (uint64_t)g;; id[g]++) {
      struct place p;
      unsigned char kf[KS];
      make_key(kf, id[g]);
      rmadht_place(t, kf, &p);
      if (p.group[0] == pk.group[0] && p.group[1] == pk.group[1] &&
          place_home(&p, g) == place_home(&pk, g))
        break;
    }
  }
  if (rank == 0) {
    for (int g = 0; g < 2; g++) {
      unsigned char kf[KS];
      rmadht_location at = {{0}};
      int owner;
      uint64_t where;
      make_key(kf, id[g]);
      make_value(v, id[g], 0);
      CHECK_RC(rmadht_read(t, kf, got), RMADHT_NOT_FOUND);
      CHECK_RC(rmadht_write_loc(t, kf, v, &at), RMADHT_OK);
      CHECK_RC(rmadht_location_split(t, &at, &owner, &where), RMADHT_OK);
      CHECK(where == slot[g]);
    }
    CHECK_RC(rmadht_flush(t), RMADHT_OK);
    make_value(v, 100, 0);
    CHECK_WAITS(rmadht_read(t, k, got), RMADHT_NOT_FOUND, 1);
    rmadht_location at = {{0}};
    int owner;
    uint64_t where;
    CHECK_WAITS(rmadht_write_loc(t, k, v, &at), RMADHT_OK, 2);
    CHECK_RC(rmadht_location_split(t, &at, &owner, &where), RMADHT_OK);
    CHECK(where != slot[0] && where != slot[1]);
    CHECK_RC(rmadht_flush(t), RMADHT_OK);
    CHECK_RC(rmadht_read(t, k, got), RMADHT_OK);
    CHECK(!memcmp(got, v, VS));
  }
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

/* A read of a key none of whose groups this rank has an operation
   outstanding on waits in one flush: a local one when nothing of this
   rank's is outstanding anywhere, a full one while a write's compare-and-
   swap of ver is. */
static void flush_kinds(int rank) {
  rmadht *t = create(1 << 20, 0);
  if (!t) return;
  unsigned char k[KS], k2[KS], v[VS], got[VS];
  uint64_t id = ((uint64_t)rank << 32) + 1000;
  make_key(k, id);
  make_value(v, id, rank);
  struct place p, p2;
  rmadht_place(t, k, &p);
  for (int apart = 0; !apart;) {
    make_key(k2, ++id);
    rmadht_place(t, k2, &p2);
    apart = 1;
    for (int g = 0; g < p.ngroups; g++)
      for (int g2 = 0; g2 < p2.ngroups; g2++)
        if (p.rank == p2.rank && p.group[g] == p2.group[g2]) apart = 0;
  }
  CHECK_WAITS(rmadht_read(t, k2, got), RMADHT_NOT_FOUND, 1);
  CHECK(local_flushes == 1);
  CHECK_RC(rmadht_write(t, k, v), RMADHT_OK);
  CHECK_WAITS(rmadht_read(t, k2, got), RMADHT_NOT_FOUND, 1);
  CHECK(local_flushes == 0);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  CHECK_WAITS(rmadht_read(t, k, got), RMADHT_OK, 1);
  CHECK(local_flushes == 1);
  CHECK(!memcmp(got, v, VS));
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  counts(rank);
  flush_kinds(rank);
  if (nranks > 1) stale_copy(rank);
  homes_taken(rank);
  int rc = check_finish("mpi_round_trips");
  MPI_Finalize();
  return rc;
}
