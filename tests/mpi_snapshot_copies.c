/* ranks: 1 */
/* Two writers racing to insert one key can leave it live in two slots.  A
   dump must keep only the copy reads return (the higher epoch; on a tie the
   earlier candidate), or restore could bring back the older value.  The
   race is staged here by writing a second copy straight into the window. */
#include <stdio.h>

#include "check.h"
#include "internal.h"
#include "testdata.h"

enum { KS = 16, VS = 32 };

static rmadht *make(int node_local) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  cfg.bytes_per_rank = 64 << 10;
  cfg.node_local = node_local;
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_SELF, &cfg, &t), RMADHT_OK);
  return t;
}

static unsigned char *candidate(rmadht *t, const struct place *p, int c) {
  return t->base + slot_group_disp(&t->layout, p->group[c / SLOT_GROUP]) +
         (size_t)(c % SLOT_GROUP) * t->layout.slot_size;
}

/* Writes key id with version 1, then a copy with version 2 in the first
   free candidate, epoch_delta newer; returns the version a read gives,
   and in *later whether the copy is the later candidate. */
static uint64_t stage(rmadht *t, uint64_t id, int epoch_delta, int *later) {
  unsigned char key[KS], val[VS], out[VS];
  make_key(key, KS, id);
  make_value(val, VS, id, 1);
  CHECK_RC(rmadht_write(t, key, val), RMADHT_OK);
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Win_sync(t->win);
  struct place p;
  rmadht_place(t, key, &p);
  int n = p.ngroups * SLOT_GROUP, own = -1, free_slot = -1;
  for (int c = 0; c < n; c++) {
    unsigned char *s = candidate(t, &p, c);
    if (own < 0 && slot_classify(&t->layout, s) == SLOT_LIVE &&
        !memcmp(slot_key(s), key, KS))
      own = c;
    else if (free_slot < 0 && slot_classify(&t->layout, s) == SLOT_EMPTY)
      free_slot = c;
  }
  CHECK(own >= 0 && free_slot >= 0);
  *later = free_slot > own;
  if (own < 0 || free_slot < 0) return 0;
  make_value(val, VS, id, 2);
  uint64_t epoch = slot_epoch(candidate(t, &p, own)) + (uint64_t)epoch_delta;
  slot_fill(&t->layout, candidate(t, &p, free_slot), 1, epoch, STAMP_LIVE, key,
            val);
  /* Lock-free readers find slots other than the key's home by their
     tags. */
  memcpy(t->base + slot_tags_disp(p.group[free_slot / SLOT_GROUP]) +
             4u * (size_t)(free_slot % SLOT_GROUP),
         &p.tag, 4);
  MPI_Win_sync(t->win);
  CHECK_RC(rmadht_read(t, key, out), RMADHT_OK);
  return value_ok(out, VS, id, 2) ? 2 : value_ok(out, VS, id, 1) ? 1 : 0;
}

/* Stages both races, dumps, restores into a table on the other path. */
static void run(int node_local) {
  rmadht *t = make(node_local);
  const char *path = "snapshot_copies.bin";
  if (t) {
    int later;
    uint64_t newer = stage(t, 1, 5, &later); /* the copy's epoch is higher */
    CHECK(newer == 2);
    uint64_t tie = stage(t, 2, 0, &later); /* equal: the earlier wins */
    CHECK(tie == (later ? 1u : 2u));
    CHECK_RC(rmadht_dump(t, path), RMADHT_OK);
    FILE *f = fopen(path, "rb");
    long len = -1;
    if (f && !fseek(f, 0, SEEK_END)) len = ftell(f);
    if (f) fclose(f);
    CHECK(len == 48 + 2 * (KS + VS + 8)); /* one entry per key */
    rmadht *r = make(!node_local);
    if (r) {
      CHECK_RC(rmadht_restore(r, path), RMADHT_OK);
      unsigned char key[KS], out[VS];
      make_key(key, KS, 1);
      CHECK_RC(rmadht_read(r, key, out), RMADHT_OK);
      CHECK(value_ok(out, VS, 1, newer));
      make_key(key, KS, 2);
      CHECK_RC(rmadht_read(r, key, out), RMADHT_OK);
      CHECK(value_ok(out, VS, 2, tie));
      CHECK_RC(rmadht_free(&r), RMADHT_OK);
    }
    CHECK_RC(rmadht_free(&t), RMADHT_OK);
    remove(path);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  run(1);
  run(0);
  int rc = check_finish("mpi_snapshot_copies");
  MPI_Finalize();
  return rc;
}
