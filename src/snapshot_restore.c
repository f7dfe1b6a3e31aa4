/*
 * rmadht_restore: each rank takes a contiguous share of the file's entries
 * and inserts them through the normal write path, so the receiving table
 * may have any rank count and size.  The whole file is checked before the
 * first insert, and the ranks agree on the verdict, so a bad file leaves
 * the table as it was.
 */
#include <stdlib.h>

#include "snapshot.h"

/* Entries per rmadht_write_batch call, at most: enough for the core to
   pipeline, and never more than a chunk, so the unpacked keys and values
   stay within SNAP_CHUNK_BYTES whatever the value size. */
#define SNAP_BATCH 1024

/* Rank 0 reads the file length and header and passes both on, so every
   rank judges the same bytes and reaches the same verdict. */
struct head {
  int64_t size;
  int32_t rc;
  unsigned char bytes[SNAP_HEADER_BYTES];
};

static int read_head(rmadht *t, MPI_File fh, struct snap_header *h,
                     uint64_t *entry_bytes) {
  struct head hd = {0, RMADHT_OK, {0}};
  if (t->rank == 0) {
    MPI_Offset size;
    MPI_Status st;
    int got;
    if (MPI_File_get_size(fh, &size) != MPI_SUCCESS) {
      hd.rc = RMADHT_ERR_FILE;
    } else {
      hd.size = size;
      if (size >= SNAP_HEADER_BYTES &&
          (MPI_File_read_at(fh, 0, hd.bytes, SNAP_HEADER_BYTES, MPI_BYTE,
                            &st) != MPI_SUCCESS ||
           MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS ||
           got != SNAP_HEADER_BYTES))
        hd.rc = RMADHT_ERR_FILE;
    }
  }
  if (MPI_Bcast(&hd, sizeof hd, MPI_BYTE, 0, t->comm) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  if (hd.rc) return hd.rc;
  /* Shorter than a header: truncated, or not a snapshot at all. */
  if (hd.size < SNAP_HEADER_BYTES) return RMADHT_ERR_FORMAT;
  int rc = snap_header_decode(hd.bytes, h);
  if (rc) return rc;
  if (h->key_size != t->layout.key_size ||
      h->value_size != t->layout.value_size)
    return RMADHT_ERR_FORMAT;
  *entry_bytes = snap_entry_bytes(h->key_size, h->value_size);
  /* The count must account for the length exactly: a truncated file, an
     appended tail or a count edited apart from the entries all fail here. */
  uint64_t body = (uint64_t)hd.size - SNAP_HEADER_BYTES;
  if (body % *entry_bytes != 0 || body / *entry_bytes != h->count)
    return RMADHT_ERR_FORMAT;
  return RMADHT_OK;
}

/* This rank's contiguous share of the entries, and the chunk plan. */
struct share {
  uint64_t first, n;        /* entries [first, first + n) */
  uint64_t per_chunk, rounds;
  uint64_t entry_bytes;
};

static int make_share(rmadht *t, uint64_t count, uint64_t entry_bytes,
                      struct share *s) {
  uint64_t p = (uint64_t)t->nranks, r = (uint64_t)t->rank;
  uint64_t base = count / p, extra = count % p;
  s->first = r * base + (r < extra ? r : extra);
  s->n = base + (r < extra);
  s->entry_bytes = entry_bytes;
  s->per_chunk = snap_chunk_entries(entry_bytes);
  /* Shares differ by at most one entry, but chunk counts may still differ
     by one: the collective reads need the maximum. */
  uint64_t mine = snap_chunks(s->n, s->per_chunk);
  if (MPI_Allreduce(&mine, &s->rounds, 1, MPI_UINT64_T, MPI_MAX, t->comm) !=
      MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  return RMADHT_OK;
}

/* Entries of chunk c of this rank's share (0 past its end). */
static uint64_t chunk_len(const struct share *s, uint64_t c) {
  uint64_t from = c * s->per_chunk;
  if (from >= s->n) return 0;
  return s->n - from < s->per_chunk ? s->n - from : s->per_chunk;
}

/* Collective: reads chunk c into buf and checks every entry.  A rank that
   already failed still takes part, reading nothing. */
static int load_chunk(rmadht *t, MPI_File fh, const struct share *s,
                      uint64_t c, int failed, unsigned char *buf) {
  uint64_t n = failed ? 0 : chunk_len(s, c);
  uint64_t bytes = n * s->entry_bytes;
  MPI_Offset at = (MPI_Offset)(SNAP_HEADER_BYTES +
                               (s->first + c * s->per_chunk) * s->entry_bytes);
  MPI_Status st;
  int got;
  if (MPI_File_read_at_all(fh, at, buf, (int)bytes, MPI_BYTE, &st) !=
          MPI_SUCCESS ||
      MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS ||
      (uint64_t)got != bytes)
    return RMADHT_ERR_FILE;
  for (uint64_t i = 0; i < n; i++)
    if (!snap_entry_valid(buf + i * s->entry_bytes, t->layout.key_size,
                          t->layout.value_size))
      return RMADHT_ERR_FORMAT;
  return RMADHT_OK;
}

/* Unpacked keys and values for rmadht_write_batch. */
struct batch {
  uint64_t cap; /* entries */
  unsigned char *keys, *values;
  int *status;
};

static int insert(rmadht *t, const struct share *s, const unsigned char *buf,
                  uint64_t n, struct batch *b) {
  size_t ks = t->layout.key_size, vs = t->layout.value_size;
  for (uint64_t at = 0; at < n; at += b->cap) {
    size_t m = (size_t)(n - at < b->cap ? n - at : b->cap);
    for (size_t i = 0; i < m; i++) {
      const unsigned char *e = buf + (at + i) * s->entry_bytes;
      memcpy(b->keys + i * ks, e, ks);
      memcpy(b->values + i * vs, e + ks, vs);
    }
    int rc = rmadht_write_batch(t, m, b->keys, b->values, b->status);
    if (rc) return rc;
    /* RMADHT_EVICTED is expected when the table is smaller than the
       snapshot; only a failed item is an error. */
    for (size_t i = 0; i < m; i++)
      if (b->status[i] < 0) return b->status[i];
  }
  return RMADHT_OK;
}

/* Collective: checks the whole share (pass 1), agrees, then inserts it
   (pass 2).  When every rank's share fits one chunk the buffer still holds
   it and pass 2 skips the re-read; otherwise chunks are read again. */
static int restore_share(rmadht *t, MPI_File fh, const struct share *s) {
  uint64_t chunk = s->per_chunk < s->n ? s->per_chunk : s->n;
  unsigned char *buf = malloc((size_t)(chunk ? chunk : 1) * s->entry_bytes);
  uint64_t cap = s->per_chunk < SNAP_BATCH ? s->per_chunk : SNAP_BATCH;
  struct batch b = {cap, malloc((size_t)cap * t->layout.key_size),
                    malloc((size_t)cap * t->layout.value_size),
                    malloc((size_t)cap * sizeof(int))};
  int rc = buf && b.keys && b.values && b.status ? RMADHT_OK : RMADHT_ERR_NOMEM;
  for (uint64_t c = 0; c < s->rounds; c++) {
    int lrc = load_chunk(t, fh, s, c, rc != RMADHT_OK, buf);
    if (!rc) rc = lrc;
  }
  rc = snap_agree(t->comm, rc);
  int keep = s->rounds <= 1;
  for (uint64_t c = 0; !rc && c < s->rounds; c++) {
    int lrc = keep ? RMADHT_OK : load_chunk(t, fh, s, c, 0, buf);
    if (!lrc) lrc = insert(t, s, buf, chunk_len(s, c), &b);
    /* Agreed per round so that a failing rank stops every rank's reads
       in step.  The table is then partly restored: an MPI or contention
       failure, or a file changed since pass 1 (re-read chunks are checked
       again). */
    rc = snap_agree(t->comm, lrc);
  }
  free(buf);
  free(b.keys);
  free(b.values);
  free(b.status);
  return rc;
}

int rmadht_restore(rmadht *t, const char *path) {
  if (!t) return RMADHT_ERR_ARG;
  int rc = snap_agree_path(t->comm, path);
  if (rc) return rc;
  MPI_File fh = MPI_FILE_NULL;
  /* MPI_File_open is collective and fails on every rank alike. */
  if (MPI_File_open(t->comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) !=
      MPI_SUCCESS)
    rc = RMADHT_ERR_FILE;
  rc = snap_agree(t->comm, rc);
  if (rc) {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    return rc;
  }
  struct snap_header h;
  struct share s;
  uint64_t entry_bytes = 0;
  rc = snap_agree(t->comm, read_head(t, fh, &h, &entry_bytes));
  if (!rc) rc = snap_agree(t->comm, make_share(t, h.count, entry_bytes, &s));
  if (!rc) rc = restore_share(t, fh, &s);
  /* Only read from: a failing close loses nothing. */
  MPI_File_close(&fh);
  if (rc) return rc;
  /* Every rank's inserts complete before any rank returns, so that all
     entries are visible everywhere once the call is over. */
  return snap_agree(t->comm, rmadht_flush(t));
}
