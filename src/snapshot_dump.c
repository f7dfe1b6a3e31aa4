/*
 * rmadht_dump: every rank writes the live entries of its own window into
 * one shared file, at offsets from an exclusive scan of the entry counts,
 * with collective MPI-IO.  Nothing is gathered to one rank.
 */
#include <stdlib.h>
#include <xxhash.h>

#include "snapshot.h"

int snap_agree_path(MPI_Comm comm, const char *path) {
  int bad = !path || !*path;
  uint64_t h = bad ? 0 : XXH3_64bits(path, strlen(path));
  /* MAX over (v, ~v) yields max(v) and ~min(v) in one call. */
  uint64_t v[3] = {(uint64_t)bad, h, ~h}, r[3];
  if (MPI_Allreduce(v, r, 3, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  if (r[0]) return RMADHT_ERR_ARG;
  return r[1] == ~r[2] ? RMADHT_OK : RMADHT_ERR_MISMATCH;
}

/* The slots to dump, found in one pass so that counting and writing cannot
   disagree: one bit per slot of this rank's window. */
struct live {
  uint64_t *bits;
  uint64_t count;
};

static inline unsigned char *slot_at(rmadht *t, uint64_t g, int j) {
  return t->base + slot_group_disp(&t->layout, g) +
         (size_t)j * t->layout.slot_size;
}

/* Two writers racing to insert one key can leave it live in two slots, and
   reads return the newer (search_key: the higher epoch, on a tie the
   earlier candidate).  Dumping only that copy keeps restore from bringing
   back the older value. */
static int newest_copy(rmadht *t, const unsigned char *s) {
  const struct slot_layout *l = &t->layout;
  struct place p;
  rmadht_place(t, slot_key(s), &p);
  uint64_t epoch = slot_epoch(s);
  int seen_self = 0;
  for (int c = 0; c < p.ngroups * SLOT_GROUP; c++) {
    const unsigned char *o = slot_at(t, p.group[c / SLOT_GROUP], c % SLOT_GROUP);
    if (o == s) {
      seen_self = 1;
      continue;
    }
    if (memcmp(slot_key(o), slot_key(s), l->key_size) != 0 ||
        slot_classify(l, o) != SLOT_LIVE)
      continue;
    if (slot_epoch(o) > epoch || (slot_epoch(o) == epoch && !seen_self))
      return 0;
  }
  return 1;
}

static int scan(rmadht *t, struct live *lv) {
  uint64_t slots = t->layout.groups * SLOT_GROUP;
  lv->count = 0;
  lv->bits = calloc((size_t)(slots / 64 + 1), sizeof *lv->bits);
  if (!lv->bits) return RMADHT_ERR_NOMEM;
  for (uint64_t i = 0; i < slots; i++) {
    const unsigned char *s = slot_at(t, i / SLOT_GROUP, (int)(i % SLOT_GROUP));
    if (slot_classify(&t->layout, s) == SLOT_LIVE && newest_copy(t, s)) {
      lv->bits[i / 64] |= UINT64_C(1) << (i % 64);
      lv->count++;
    }
  }
  return RMADHT_OK;
}

/* Encodes up to n marked slots from *cursor on into buf; returns how many. */
static uint64_t encode(rmadht *t, const struct live *lv, uint64_t *cursor,
                       uint64_t n, unsigned char *buf) {
  const struct slot_layout *l = &t->layout;
  uint64_t eb = snap_entry_bytes(l->key_size, l->value_size);
  uint64_t slots = l->groups * SLOT_GROUP, k = 0;
  for (uint64_t i = *cursor; i < slots && k < n; i++) {
    *cursor = i + 1;
    if (!(lv->bits[i / 64] >> (i % 64) & 1)) continue;
    const unsigned char *s = slot_at(t, i / SLOT_GROUP, (int)(i % SLOT_GROUP));
    snap_entry_encode(buf + k * eb, slot_key(s), l->key_size, slot_value(l, s),
                      l->value_size);
    k++;
  }
  return k;
}

/* Local loads of the window need an epoch on it: the lock-free and fine
   modes hold lock_all for the table's lifetime, the coarse mode none, so
   it takes a shared lock on itself.  The sync then makes this rank's view
   of its memory include every put completed before the caller's barrier. */
static int local_begin(rmadht *t) {
  if (t->mode == RMADHT_COARSE_LOCK &&
      MPI_Win_lock(MPI_LOCK_SHARED, t->rank, 0, t->win) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  int rc = rmadht_mpi(MPI_Win_sync(t->win));
  if (rc && t->mode == RMADHT_COARSE_LOCK) MPI_Win_unlock(t->rank, t->win);
  return rc;
}

static int local_end(rmadht *t) {
  if (t->mode != RMADHT_COARSE_LOCK) return RMADHT_OK;
  return rmadht_mpi(MPI_Win_unlock(t->rank, t->win));
}

/* Where this rank's entries go and how many collective rounds write them. */
struct plan {
  uint64_t total, before, rounds, per_chunk, entry_bytes;
};

static int make_plan(rmadht *t, uint64_t count, struct plan *p) {
  p->entry_bytes = snap_entry_bytes(t->layout.key_size, t->layout.value_size);
  p->per_chunk = snap_chunk_entries(p->entry_bytes);
  uint64_t mine = snap_chunks(count, p->per_chunk);
  p->before = 0; /* MPI_Exscan leaves rank 0's result undefined */
  if (MPI_Exscan(&count, &p->before, 1, MPI_UINT64_T, MPI_SUM, t->comm) ||
      MPI_Allreduce(&count, &p->total, 1, MPI_UINT64_T, MPI_SUM, t->comm) ||
      MPI_Allreduce(&mine, &p->rounds, 1, MPI_UINT64_T, MPI_MAX, t->comm))
    return RMADHT_ERR_MPI;
  if (t->rank == 0) p->before = 0;
  /* MPI_Offset is signed 64-bit. */
  if (p->total > (uint64_t)(INT64_MAX - SNAP_HEADER_BYTES) / p->entry_bytes)
    return RMADHT_ERR_SIZE;
  return RMADHT_OK;
}

static int write_at_all(MPI_File fh, uint64_t at, const unsigned char *buf,
                        uint64_t bytes) {
  MPI_Status st;
  int done;
  if (MPI_File_write_at_all(fh, (MPI_Offset)at, buf, (int)bytes, MPI_BYTE,
                            &st) != MPI_SUCCESS ||
      MPI_Get_count(&st, MPI_BYTE, &done) != MPI_SUCCESS ||
      (uint64_t)done != bytes)
    return RMADHT_ERR_IO;
  return RMADHT_OK;
}

/* Collective over an open file: header from rank 0, then every rank's
   entries.  Errors are remembered, but the collective calls go on so that
   no rank is left waiting in one. */
static int write_file(rmadht *t, MPI_File fh, const struct live *lv,
                      const struct plan *p) {
  uint64_t end = SNAP_HEADER_BYTES + p->total * p->entry_bytes;
  /* An older, longer file at this path must not leave a tail behind. */
  int rc = MPI_File_set_size(fh, (MPI_Offset)end) ? RMADHT_ERR_IO : RMADHT_OK;
  if (t->rank == 0 && !rc) {
    struct snap_header h = {SNAP_VERSION,
                            t->hash ? SNAP_HASH_CUSTOM : SNAP_HASH_XXH3,
                            t->layout.key_size, t->layout.value_size, p->total};
    unsigned char bytes[SNAP_HEADER_BYTES];
    snap_header_encode(&h, bytes);
    MPI_Status st;
    int done;
    if (MPI_File_write_at(fh, 0, bytes, SNAP_HEADER_BYTES, MPI_BYTE, &st) ||
        MPI_Get_count(&st, MPI_BYTE, &done) || done != SNAP_HEADER_BYTES)
      rc = RMADHT_ERR_IO;
  }
  uint64_t chunk = p->per_chunk < lv->count ? p->per_chunk : lv->count;
  unsigned char *buf = malloc((size_t)(chunk ? chunk : 1) * p->entry_bytes);
  if (!buf) rc = RMADHT_ERR_NOMEM;
  uint64_t cursor = 0, at = SNAP_HEADER_BYTES + p->before * p->entry_bytes;
  for (uint64_t r = 0; r < p->rounds; r++) {
    uint64_t n = rc ? 0 : encode(t, lv, &cursor, p->per_chunk, buf);
    int wrc = write_at_all(fh, at, buf, n * p->entry_bytes);
    if (!rc) rc = wrc;
    at += n * p->entry_bytes;
  }
  free(buf);
  return rc;
}

int rmadht_dump(rmadht *t, const char *path) {
  if (!t) return RMADHT_ERR_ARG;
  int rc = snap_agree_path(t->comm, path);
  if (rc) return rc;
  /* Quiescent by contract: once every rank has completed its own writes
     (flush) and passed the agreement, which doubles as a barrier, no put
     is in flight to anyone's window. */
  rc = snap_agree(t->comm, rmadht_flush(t));
  if (rc) return rc;

  struct live lv = {NULL, 0};
  int local = local_begin(t);
  int began = !local;
  if (!local) local = scan(t, &lv);
  rc = snap_agree(t->comm, local);
  struct plan p;
  if (!rc) rc = snap_agree(t->comm, make_plan(t, lv.count, &p));
  MPI_File fh = MPI_FILE_NULL;
  if (!rc) {
    /* MPI_File_open is collective and fails on every rank alike. */
    if (MPI_File_open(t->comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
      rc = RMADHT_ERR_FILE;
    rc = snap_agree(t->comm, rc);
  }
  if (!rc) {
    local = write_file(t, fh, &lv, &p);
    if (MPI_File_close(&fh) != MPI_SUCCESS && !local) local = RMADHT_ERR_IO;
    rc = snap_agree(t->comm, local);
  } else if (fh != MPI_FILE_NULL) {
    MPI_File_close(&fh);
  }
  free(lv.bits);
  int erc = snap_agree(t->comm, began ? local_end(t) : RMADHT_OK);
  return rc ? rc : erc;
}
