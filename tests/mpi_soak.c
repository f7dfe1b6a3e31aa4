/*
 * Soak: every mode, a small table, many rounds of mixed single and batched
 * reads, writes, removes and updates from every rank at once, every value
 * checked.  Each rank owns OWN keys that only it writes, removes and
 * updates, so it knows their exact state: its own reads must return it
 * exactly.  Reads of other ranks' keys meanwhile must return a value that
 * is whole (a version and the bytes made from it).  Every CHECK_EVERY
 * rounds all ranks flush, agree on every key's state, and read back every
 * key of every rank exactly.  All ranks also increment COUNTERS shared
 * keys by rmadht_update; at the end each counter must equal the
 * increments made.  Run at 1, 2 and 4 ranks by ctest and at 8 and 16
 * ranks across 4 emulated hosts (make test-scale-hosts).
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

enum { KS = 16, VS = 40, OWN = 32, COUNTERS = 8, ROUNDS = 60, CHECK_EVERY = 20,
       MAXB = 8 };
#define COUNTER_BASE (UINT64_C(1) << 40)

static int rank, nranks;

static uint64_t own_id(int r, int j) { return (uint64_t)r + (uint64_t)nranks * (uint64_t)j; }

/* A value: its version (or count) in 8 bytes, then bytes made from both. */
static void fill(unsigned char *v, uint64_t id, uint64_t version) {
  memcpy(v, &version, 8);
  make_value(v + 8, VS - 8, id, version);
}
static int whole(const unsigned char *v, uint64_t id, uint64_t *version) {
  unsigned char want[VS];
  memcpy(version, v, 8);
  fill(want, id, *version);
  return memcmp(want, v, VS) == 0;
}

static uint64_t rng(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* The update of own keys: item i must find version expect[i] (0: absent)
   and stores fresh[i]. */
struct own_update {
  const uint64_t *ids, *expect, *fresh;
  int wrong;
};
static int own_fn(void *arg, size_t item, const void *key, void *value,
                  int found) {
  (void)key;
  struct own_update *u = arg;
  uint64_t v = 0;
  int ok = found ? whole(value, u->ids[item], &v) && v == u->expect[item]
                 : u->expect[item] == 0;
  if (!ok) u->wrong = 1;
  fill(value, u->ids[item], u->fresh[item]);
  return RMADHT_UPDATE_STORE;
}

/* The shared counters: +1, from 0 when absent. */
static int count_fn(void *arg, size_t item, const void *key, void *value,
                    int found) {
  (void)item;
  uint64_t id, n = 0;
  memcpy(&id, key, 8);
  if (found && !whole(value, id, &n)) *(int *)arg = 1;
  fill(value, id, n + 1);
  return RMADHT_UPDATE_STORE;
}

/* Reads own key j (single or in a batch) and checks it exactly. */
static void check_value(int st, const unsigned char *v, uint64_t id,
                        uint64_t expect) {
  uint64_t got = 0;
  if (expect == 0) {
    CHECK(st == RMADHT_NOT_FOUND);
  } else {
    CHECK(st == RMADHT_OK);
    if (st == RMADHT_OK) CHECK(whole(v, id, &got) && got == expect);
  }
}

/* Collective: every key of every rank, read by every rank, exactly: in
   batches of OWN, so that 16 oversubscribed ranks finish in time. */
static void check_all(rmadht *t, const uint64_t *mine) {
  uint64_t *all = malloc((size_t)nranks * OWN * sizeof *all);
  unsigned char keys[OWN * KS], v[OWN * VS];
  int status[OWN];
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Allgather(mine, OWN, MPI_UINT64_T, all, OWN, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 0; r < nranks; r++) {
    for (int j = 0; j < OWN; j++) make_key(keys + j * KS, KS, own_id(r, j));
    CHECK_RC(rmadht_read_batch(t, OWN, keys, v, status), RMADHT_OK);
    for (int j = 0; j < OWN; j++)
      check_value(status[j], v + j * VS, own_id(r, j), all[r * OWN + j]);
  }
  free(all);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void soak(const struct variant *var) {
  rmadht *t = NULL;
  CHECK_RC(variant_create(var, KS, VS, 256 << 10, NULL, NULL, &t), RMADHT_OK);
  if (!t) return;
  uint64_t version[OWN] = {0}, next = 1, made[COUNTERS] = {0};
  uint64_t s = UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)(rank + 1) | 1;
  unsigned char keys[MAXB * KS], vals[MAXB * VS];
  uint64_t ids[MAXB], expect[MAXB], fresh[MAXB];
  int status[MAXB], js[MAXB], bad = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int round = 1; round <= ROUNDS; round++) {
    int n = 1 + (int)(rng(&s) % MAXB), op = (int)(rng(&s) % 7);
    for (int k = 0; k < n; k++) {
      /* Distinct own keys within a batch, so each item's state is known. */
      js[k] = (int)(rng(&s) % OWN);
      for (int m = 0; m < k; m++)
        if (js[m] == js[k]) js[k] = (js[k] + 1) % OWN, m = -1;
      ids[k] = own_id(rank, js[k]);
      make_key(keys + k * KS, KS, ids[k]);
    }
    switch (op) {
      case 0: /* single write */
        version[js[0]] = next++;
        fill(vals, ids[0], version[js[0]]);
        CHECK_RC(rmadht_write(t, keys, vals), RMADHT_OK);
        break;
      case 1: /* batch write */
        for (int k = 0; k < n; k++) {
          version[js[k]] = next++;
          fill(vals + k * VS, ids[k], version[js[k]]);
        }
        CHECK_RC(rmadht_write_batch(t, (size_t)n, keys, vals, status), RMADHT_OK);
        for (int k = 0; k < n; k++) CHECK(status[k] == RMADHT_OK);
        break;
      case 2: /* single remove */
        CHECK_RC(rmadht_remove(t, keys),
                 version[js[0]] ? RMADHT_OK : RMADHT_NOT_FOUND);
        version[js[0]] = 0;
        break;
      case 3: { /* batch update of own keys */
        struct own_update u = {ids, expect, fresh, 0};
        for (int k = 0; k < n; k++) {
          expect[k] = version[js[k]];
          fresh[k] = version[js[k]] = next++;
        }
        CHECK_RC(rmadht_update_batch(t, (size_t)n, keys, own_fn, &u, status, NULL),
                 RMADHT_OK);
        for (int k = 0; k < n; k++) CHECK(status[k] == RMADHT_OK);
        CHECK(!u.wrong);
        break;
      }
      case 4: /* shared counters, single or batch */
        for (int k = 0; k < n; k++) {
          int c = (int)(rng(&s) % COUNTERS);
          made[c]++;
          make_key(keys + k * KS, KS, COUNTER_BASE + (uint64_t)c);
        }
        if (n == 1)
          CHECK_RC(rmadht_update(t, keys, count_fn, &bad, NULL), RMADHT_OK);
        else {
          CHECK_RC(rmadht_update_batch(t, (size_t)n, keys, count_fn, &bad, status, NULL),
                   RMADHT_OK);
          for (int k = 0; k < n; k++) CHECK(status[k] == RMADHT_OK);
        }
        break;
      case 5: /* own keys read back, single and batch */
        check_value(rmadht_read(t, keys, vals), vals, ids[0], version[js[0]]);
        CHECK_RC(rmadht_read_batch(t, (size_t)n, keys, vals, status), RMADHT_OK);
        for (int k = 0; k < n; k++)
          check_value(status[k], vals + k * VS, ids[k], version[js[k]]);
        break;
      default: { /* other ranks' keys while they change: whole or absent */
        for (int k = 0; k < n; k++) {
          ids[k] = own_id((int)(rng(&s) % (uint64_t)nranks), (int)(rng(&s) % OWN));
          make_key(keys + k * KS, KS, ids[k]);
        }
        CHECK_RC(rmadht_read_batch(t, (size_t)n, keys, vals, status), RMADHT_OK);
        for (int k = 0; k < n; k++) {
          uint64_t v;
          CHECK(status[k] == RMADHT_OK || status[k] == RMADHT_NOT_FOUND);
          if (status[k] == RMADHT_OK) CHECK(whole(vals + k * VS, ids[k], &v));
        }
      }
    }
    if (round % CHECK_EVERY == 0) check_all(t, version);
  }
  CHECK(!bad);
  /* Every counter holds every rank's increments. */
  uint64_t total[COUNTERS];
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Allreduce(made, total, COUNTERS, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  for (int c = 0; c < COUNTERS; c++) {
    unsigned char key[KS], v[VS];
    uint64_t id = COUNTER_BASE + (uint64_t)c;
    make_key(key, KS, id);
    check_value(rmadht_read(t, key, v), v, id, total[c]);
  }
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  for (int v = 0; v < N_VARIANTS; v++) soak(&test_variants[v]);
  int rc = check_finish("mpi_soak");
  MPI_Finalize();
  return rc;
}
