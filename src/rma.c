/* Counted synchronisation and outstanding lock-free puts (see rma.h). */
#include "rma.h"

#include <stdlib.h>
#include <string.h>

#include "batch.h" /* BATCH_ATOMICS */

int pending_init(struct pending *p, int nranks, size_t slot_size) {
  p->n = 0;
  p->per_rank = calloc((size_t)nranks, sizeof *p->per_rank);
  p->images = malloc(PENDING_MAX * slot_size);
  p->words = malloc(PENDING_MAX * 3 * sizeof *p->words);
  if (!p->per_rank || !p->images || !p->words) {
    pending_destroy(p);
    return RMADHT_ERR_NOMEM;
  }
  for (size_t i = 0; i < PENDING_MAX; i++) {
    p->put[i].image = p->images + i * slot_size;
    p->put[i].word = p->words + i * 3;
  }
  return RMADHT_OK;
}

void pending_destroy(struct pending *p) {
  free(p->per_rank);
  free(p->images);
  free(p->words);
  p->per_rank = NULL;
  p->images = NULL;
  p->words = NULL;
}

static void pending_forget(struct pending *p, int rank) {
  if (!p->per_rank || p->per_rank[rank] == 0) return;
  /* Keep the survivors in order; swap buffers along so every entry keeps
     buffers of its own (a survivor's operation may still be reading them). */
  size_t k = 0;
  for (size_t i = 0; i < p->n; i++) {
    if (p->put[i].rank == rank) continue;
    if (k != i) {
      struct pending_put tmp = p->put[k];
      p->put[k] = p->put[i];
      p->put[i] = tmp;
    }
    k++;
  }
  p->n = k;
  p->per_rank[rank] = 0;
}

/* Gathered gets and puts (see rma.h). */

/* Gets before puts, each by target displacement. */
static int by_disp(const void *a, const void *b) {
  const struct gather_req *x = a, *y = b;
  if (x->put != y->put) return x->put - y->put;
  if (x->disp != y->disp) return (x->disp > y->disp) - (x->disp < y->disp);
  return (x->len > y->len) - (x->len < y->len);
}

/* Moves the operations queued to rank to the end of s->run, order kept;
   returns where they start.  Issued operations stay in run only until
   their target's synchronisation, and nothing is queued between the issue
   and the synchronisations (batch_flush_touched), so run holds at most one
   queue's worth of live operations besides the new ones: compacting it
   first leaves room. */
static int gather_take(struct scratch *s, int rank) {
  if (s->nrun + s->ngather > 2 * GATHER_MAX) {
    int k = 0;
    for (int i = 0; i < s->nrun; i++)
      if (s->run[i].rank >= 0) s->run[k++] = s->run[i];
    s->nrun = k;
  }
  int k = 0, start = s->nrun;
  for (int i = 0; i < s->ngather; i++) {
    if (s->gather[i].rank == rank)
      s->run[s->nrun++] = s->gather[i];
    else
      s->gather[k++] = s->gather[i];
  }
  s->nlive += s->nrun - start;
  s->ngather = k;
  s->gather_per_rank[rank] = 0;
  return start;
}

/* Issues the blocks in s->blen, s->tdisp (window displacements) and
   s->odisp (from origin) as one get or put, or as one per block where
   t->per_block says so: by default to ranks on this node, where a get of
   a derived datatype costs more per block than a get of each block, while
   between hosts the message is what costs.  Measured on a loaded 2-core
   machine, lock-free batch-128 reads, Mops/s: rmadht-bench --rma on one
   node, Open MPI 4.1.4 0.25-0.35 with one get per target against 0.74-0.97
   with one per group, MPICH 4.0.2 0.02-0.04 against 0.05-0.06; between two
   emulated hosts (tools/hosts), MPICH, one message per target everywhere
   0.108 against 0.170 when this rank's own blocks go one by one.  A
   contiguous origin (staged gets, issue_run) goes as plain bytes: no
   origin datatype to build, and none for the MPI to unpack. */
static int issue_blocks(rmadht *t, int rank, int nb, unsigned char *origin,
                        int put, int contiguous) {
  struct scratch *s = t->scratch;
  int rc = MPI_SUCCESS;
  if (nb == 1 || t->per_block[rank]) {
    for (int b = 0; b < nb && rc == MPI_SUCCESS; b++)
      rc = put ? MPI_Put(origin + s->odisp[b], s->blen[b], MPI_BYTE, rank,
                         s->tdisp[b], s->blen[b], MPI_BYTE, t->win)
               : MPI_Get(origin + s->odisp[b], s->blen[b], MPI_BYTE, rank,
                         s->tdisp[b], s->blen[b], MPI_BYTE, t->win);
    return rmadht_mpi(rc);
  }
  MPI_Datatype otype = MPI_BYTE, ttype = MPI_DATATYPE_NULL;
  int ocount = 1;
  if (contiguous)
    ocount = (int)s->odisp[nb - 1] + s->blen[nb - 1];
  else
    rc = MPI_Type_create_hindexed(nb, s->blen, s->odisp, MPI_BYTE, &otype);
  if (rc == MPI_SUCCESS)
    rc = MPI_Type_create_hindexed(nb, s->blen, s->tdisp, MPI_BYTE, &ttype);
  if (rc == MPI_SUCCESS && !contiguous) rc = MPI_Type_commit(&otype);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&ttype);
  if (rc == MPI_SUCCESS)
    rc = put ? MPI_Put(origin, ocount, otype, rank, 0, 1, ttype, t->win)
             : MPI_Get(origin, ocount, otype, rank, 0, 1, ttype, t->win);
  /* MPI keeps a freed datatype alive until operations using it end. */
  if (otype != MPI_BYTE && otype != MPI_DATATYPE_NULL) MPI_Type_free(&otype);
  if (ttype != MPI_DATATYPE_NULL) MPI_Type_free(&ttype);
  return rmadht_mpi(rc);
}

/* Bytes a gathered message carries at most (unless one get or put is
   longer by itself); a run to one target longer than that goes as several
   messages, all in flight before its flush.  It also keeps a merged
   block's length far from INT_MAX.
   MPICH 4.0.2 over UCX's TCP transport serves a get of a derived target
   datatype carrying more than about 130 KB at twice the cost per byte of
   two of half the size (a contiguous get shows no such step):
   measured between two emulated hosts (tools/hosts), 128 blocks of 1,664
   bytes from the other rank with a contiguous origin, median per flush
   326 us in gets of 32 blocks, 391-402 us of 48-80, 709 us of 96 and 833
   us of 128.  Open MPI 4.1.4's osc/pt2pt took 218-287 us whatever the
   split. */
#define MESSAGE_BYTES (64 * 1024)

/* Issues r[0, n), all gets or all puts to rank sorted by_disp, as blocks:
   a get that repeats the previous range is copied afterwards instead of
   fetched twice (puts never repeat a range: a wave's slots are distinct);
   a range that continues the previous one at both ends (adjacent slots or
   groups into adjacent buffers) extends its block.

   Gets to a target served by messages land in the staging buffer, one
   after the other, and are copied to their destinations once complete
   (gather_complete): the origin is then contiguous, which MPICH 4.0.2
   serves far faster than one that scatters the blocks back to where the
   items want them (between two emulated hosts, 128 blocks of 1,664 bytes
   in gets of 64 blocks, median 280 us per flush against 411 us), and
   adjacent target ranges merge whatever their destinations.  The buffer
   holds STAGE_GROUPS groups, a chunk's candidates, and every get
   issued completes before the next are queued (batch_flush_touched,
   synchronise); should a caller ever break that, the gets that find no
   room go straight to their destinations rather than overrun it. */
static int issue_run(rmadht *t, int rank, struct gather_req *r, int n) {
  struct scratch *s = t->scratch;
  if (n == 0) return RMADHT_OK;
  int put = r[0].put, nb = 0, rc = RMADHT_OK;
  size_t need = 0, bytes = 0; /* bytes: the current message's */
  for (int i = 0; i < n; i++) need += r[i].len;
  unsigned char *stage = NULL;
  if (!put && !t->per_block[rank] &&
      need <= STAGE_GROUPS * t->layout.group_bytes - s->stage_used)
    stage = s->stage + s->stage_used;
  int staged = stage != NULL;
  unsigned char *first = NULL, *end = NULL; /* origin of block 0, end of
                                               the last block's */
  uint64_t tend = 0;
  for (int i = 0; i < n && !rc; i++) {
    r[i].same = NULL;
    if (!put && i > 0 && r[i].disp == r[i - 1].disp &&
        r[i].len == r[i - 1].len) {
      r[i].same = r[i - 1].same ? r[i - 1].same : r[i - 1].buf;
      continue;
    }
    unsigned char *o = r[i].buf;
    if (stage) {
      o = stage;
      stage += r[i].len;
      s->stage_used += r[i].len;
      r[i].same = o;
    }
    if (nb > 0 && bytes + r[i].len > MESSAGE_BYTES) {
      rc = issue_blocks(t, rank, nb, first, put, staged);
      nb = 0;
      bytes = 0;
    }
    if (nb > 0 && r[i].disp == tend && o == end) {
      s->blen[nb - 1] += (int)r[i].len;
    } else {
      if (nb == 0) first = o;
      s->blen[nb] = (int)r[i].len;
      s->tdisp[nb] = (MPI_Aint)r[i].disp;
      /* Buffers of one operation kind lie in one allocation (the batch
         scratch, the lock-free pending images, or the staging buffer). */
      s->odisp[nb] = (MPI_Aint)(o - first);
      nb++;
    }
    bytes += r[i].len;
    tend = r[i].disp + r[i].len;
    end = o + r[i].len;
  }
  if (!rc && nb) rc = issue_blocks(t, rank, nb, first, put, staged);
  return rc;
}

int rma_issue(rmadht *t, int rank) {
  struct scratch *s = t->scratch;
  if (!s || !s->gather_per_rank[rank]) return RMADHT_OK;
  int start = gather_take(s, rank), n = s->nrun - start;
  struct gather_req *r = s->run + start;
  qsort(r, (size_t)n, sizeof *r, by_disp);
  int ngets = 0;
  while (ngets < n && !r[ngets].put) ngets++;
  int rc = issue_run(t, rank, r, ngets);
  int prc = issue_run(t, rank, r + ngets, n - ngets);
  return rc ? rc : prc;
}

/* After rank's synchronisation: fills its staged gets and duplicates,
   forgets its operations. */
static void gather_complete(struct scratch *s, int rank) {
  for (int i = 0; i < s->nrun && s->nlive > 0; i++) {
    struct gather_req *g = &s->run[i];
    if (g->rank != rank) continue;
    if (g->same) memcpy(g->buf, g->same, g->len);
    g->rank = -1;
    s->nlive--;
  }
  if (s->nlive == 0) {
    s->nrun = 0;
    s->stage_used = 0;
  }
}

/* Ends an access to rank with sync (flush or unlock): operations still
   queued to it go first, duplicates are filled after. */
static int synchronise(rmadht *t, int rank, int (*sync)(int, MPI_Win)) {
  int rc = rma_issue(t, rank);
  int mrc = rmadht_mpi(sync(rank, t->win));
  t->stats.round_trips++;
  if (t->scratch) gather_complete(t->scratch, rank);
  return rc ? rc : mrc;
}

int rma_flush(rmadht *t, int rank) {
  int rc = synchronise(t, rank, MPI_Win_flush);
  if (t->pending) pending_forget(t->pending, rank);
  return rc;
}

int rma_unlock(rmadht *t, int rank) {
  return synchronise(t, rank, MPI_Win_unlock);
}

/* A get needs only local completion: once its destination is filled, the
   target has nothing left to do for it.  MPI_Win_flush_local waits for
   that alone, where MPI_Win_flush waits for the target to confirm, which
   Open MPI's osc/pt2pt does with a message pair of its own (single reads
   between hosts: docs/explanation/design.md).
   Only where this rank has nothing else outstanding on the window:
   osc/pt2pt's local flush waits for every operation of the window whose
   completion it counts, to any target, but sends only rank's queued
   messages, so an operation to another target still waiting in its queue
   (a compare-and-swap of ver left outstanding) would never complete. */
int rma_complete_gets(rmadht *t, int rank) {
  if (t->pending && t->pending->n) return rma_flush(t, rank);
  return synchronise(t, rank, MPI_Win_flush_local);
}

/* A get of group on rank must not overtake an operation of ours on it. */
static int flush_if_pending(rmadht *t, int rank, uint64_t group) {
  struct pending *p = t->pending;
  if (!p || !p->per_rank[rank]) return RMADHT_OK;
  for (size_t i = 0; i < p->n; i++)
    if (p->put[i].rank == rank && p->put[i].group == group)
      return rma_flush(t, rank);
  return RMADHT_OK;
}

/* put: 1 for a put, 0 for a get, 2 for a get that need not wait for this
   rank's outstanding operations on the group. */
static int gather_add(rmadht *t, int rank, uint64_t group, uint64_t disp,
                      size_t len, unsigned char *buf, int put) {
  struct scratch *s = t->scratch;
  int rc = put ? RMADHT_OK : flush_if_pending(t, rank, group);
  put = put == 1;
  /* Callers flush before GATHER_MAX gets; should one not, the oldest
     target's gets go now rather than anything being lost. */
  if (!rc && s->ngather == GATHER_MAX) rc = rma_flush(t, s->gather[0].rank);
  if (rc) return rc;
  struct gather_req *g = &s->gather[s->ngather++];
  g->rank = rank;
  g->disp = disp;
  g->len = (unsigned)len;
  g->buf = buf;
  g->put = put;
  g->same = NULL;
  s->gather_per_rank[rank]++;
  return RMADHT_OK;
}

int rma_get_group(rmadht *t, int rank, uint64_t group, unsigned char *dst) {
  return gather_add(t, rank, group, slot_group_disp(&t->layout, group),
                    t->layout.group_bytes, dst, 0);
}

int rma_get_group_unordered(rmadht *t, int rank, uint64_t group,
                            unsigned char *dst) {
  return gather_add(t, rank, group, slot_group_disp(&t->layout, group),
                    t->layout.group_bytes, dst, 2);
}

int rma_load_group(rmadht *t, int rank, uint64_t group, unsigned char *dst,
                   int ordered) {
  int rc = ordered ? flush_if_pending(t, rank, group) : RMADHT_OK;
  if (!rc)
    memcpy(dst, t->near[rank] + slot_group_disp(&t->layout, group),
           t->layout.group_bytes);
  return rc;
}

int rma_get_slot(rmadht *t, int rank, uint64_t slot, unsigned char *dst) {
  uint64_t group = slot / SLOT_GROUP;
  size_t len = t->layout.slot_size;
  return gather_add(t, rank, group,
                    slot_group_disp(&t->layout, group) +
                        (slot % SLOT_GROUP) * (uint64_t)len,
                    len, dst, 0);
}

int rma_get_tags(rmadht *t, int rank, uint64_t group, unsigned char *dst) {
  return gather_add(t, rank, group, slot_tags_disp(group), 4u * SLOT_GROUP,
                    dst, 0);
}

int rma_put(rmadht *t, int rank, uint64_t disp, size_t len,
            const unsigned char *src) {
  /* The queue only reads a put's buffer: MPI_Put takes it as const. */
  return gather_add(t, rank, 0, disp, len, (unsigned char *)src, 1);
}

static int pending_entry(rmadht *t, int rank, uint64_t group,
                         struct pending_put **out) {
  struct pending *p = t->pending;
  if (p->n == PENDING_MAX) {
    int rc = rma_flush(t, p->put[0].rank);
    if (rc) return rc;
  }
  struct pending_put *e = &p->put[p->n++];
  e->rank = rank;
  e->group = group;
  p->per_rank[rank]++;
  *out = e;
  return RMADHT_OK;
}

int rma_pending_image(rmadht *t, int rank, uint64_t group,
                      unsigned char **image, uint32_t **tag) {
  struct pending_put *e;
  int rc = pending_entry(t, rank, group, &e);
  if (!rc) {
    *image = e->image;
    *tag = e->word;
  }
  return rc;
}

int rma_pending_cas(rmadht *t, int rank, uint64_t group, uint64_t disp,
                    uint32_t old, uint32_t new_value) {
  /* At most BATCH_ATOMICS outstanding to one target (batch.h says why). */
  if (t->pending->per_rank[rank] >= BATCH_ATOMICS) {
    int rc = rma_flush(t, rank);
    if (rc) return rc;
  }
  struct pending_put *e;
  int rc = pending_entry(t, rank, group, &e);
  if (rc) return rc;
  e->word[0] = new_value;
  e->word[1] = old;
  return rmadht_mpi(MPI_Compare_and_swap(&e->word[0], &e->word[1], &e->word[2],
                                         MPI_UINT32_T, rank, (MPI_Aint)disp,
                                         t->win));
}

int rma_flush_pending(rmadht *t) {
  struct pending *p = t->pending;
  while (p && p->n > 0) {
    int rc = rma_flush(t, p->put[0].rank);
    if (rc) return rc;
  }
  return RMADHT_OK;
}
