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

/* Gathered gets (see rma.h). */

static int by_disp(const void *a, const void *b) {
  const struct gather_req *x = a, *y = b;
  if (x->disp != y->disp) return (x->disp > y->disp) - (x->disp < y->disp);
  return (x->len > y->len) - (x->len < y->len);
}

/* Moves the gets queued to rank into s->run, order kept. */
static void gather_take(struct scratch *s, int rank) {
  int k = 0;
  s->nrun = 0;
  for (int i = 0; i < s->ngather; i++) {
    if (s->gather[i].rank == rank)
      s->run[s->nrun++] = s->gather[i];
    else
      s->gather[k++] = s->gather[i];
  }
  s->ngather = k;
  s->gather_per_rank[rank] = 0;
}

/* Issues s->run, the gets of one target, as one MPI_Get. */
static int gather_issue(rmadht *t, int rank) {
  struct scratch *s = t->scratch;
  struct gather_req *r = s->run;
  qsort(r, (size_t)s->nrun, sizeof *r, by_disp);
  /* Blocks: a repeat of the previous target range is copied afterwards
     instead of fetched twice; a range that continues the previous one at
     both ends (two adjacent groups of one item, say) extends its block. */
  int nb = 0;
  unsigned char *first = NULL, *end = NULL; /* origin of block 0, of the
                                               current block's end */
  uint64_t tend = 0;
  for (int i = 0; i < s->nrun; i++) {
    if (i > 0 && r[i].disp == r[i - 1].disp && r[i].len == r[i - 1].len) {
      r[i].same = r[i - 1].same ? r[i - 1].same : r[i - 1].dst;
      continue;
    }
    r[i].same = NULL;
    if (nb > 0 && r[i].disp == tend && r[i].dst == end) {
      s->blen[nb - 1] += (int)r[i].len;
    } else {
      if (nb == 0) first = r[i].dst;
      s->blen[nb] = (int)r[i].len;
      s->tdisp[nb] = (MPI_Aint)r[i].disp;
      /* Destinations all lie in the scratch buffers: one object. */
      s->odisp[nb] = (MPI_Aint)(r[i].dst - first);
      nb++;
    }
    tend = r[i].disp + r[i].len;
    end = r[i].dst + r[i].len;
  }
  if (nb == 0) return RMADHT_OK;
  if (nb == 1)
    return rmadht_mpi(MPI_Get(first, s->blen[0], MPI_BYTE, rank, s->tdisp[0],
                              s->blen[0], MPI_BYTE, t->win));
  MPI_Datatype origin = MPI_DATATYPE_NULL, target = MPI_DATATYPE_NULL;
  int rc = MPI_Type_create_hindexed(nb, s->blen, s->odisp, MPI_BYTE, &origin);
  if (rc == MPI_SUCCESS)
    rc = MPI_Type_create_hindexed(nb, s->blen, s->tdisp, MPI_BYTE, &target);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&origin);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&target);
  if (rc == MPI_SUCCESS)
    rc = MPI_Get(first, 1, origin, rank, 0, 1, target, t->win);
  /* MPI keeps a freed datatype alive until operations using it end. */
  if (origin != MPI_DATATYPE_NULL) MPI_Type_free(&origin);
  if (target != MPI_DATATYPE_NULL) MPI_Type_free(&target);
  return rmadht_mpi(rc);
}

/* After the target's synchronisation: fills the duplicates. */
static void gather_complete(struct scratch *s) {
  for (int i = 0; i < s->nrun; i++)
    if (s->run[i].same) memcpy(s->run[i].dst, s->run[i].same, s->run[i].len);
  s->nrun = 0;
}

/* Ends an access to rank with sync (flush or unlock): the queued gets go
   first, their duplicates are filled after. */
static int synchronise(rmadht *t, int rank, int (*sync)(int, MPI_Win)) {
  struct scratch *s = t->scratch;
  int rc = RMADHT_OK;
  if (s && s->gather_per_rank[rank]) {
    gather_take(s, rank);
    rc = gather_issue(t, rank);
  }
  int mrc = rmadht_mpi(sync(rank, t->win));
  t->stats.round_trips++;
  if (s) gather_complete(s);
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

/* A get of group on rank must not overtake an operation of ours on it. */
static int flush_if_pending(rmadht *t, int rank, uint64_t group) {
  struct pending *p = t->pending;
  if (!p || !p->per_rank[rank]) return RMADHT_OK;
  for (size_t i = 0; i < p->n; i++)
    if (p->put[i].rank == rank && p->put[i].group == group)
      return rma_flush(t, rank);
  return RMADHT_OK;
}

static int gather_add(rmadht *t, int rank, uint64_t group, uint64_t disp,
                      size_t len, unsigned char *dst) {
  struct scratch *s = t->scratch;
  int rc = flush_if_pending(t, rank, group);
  /* Callers flush before GATHER_MAX gets; should one not, the oldest
     target's gets go now rather than anything being lost. */
  if (!rc && s->ngather == GATHER_MAX) rc = rma_flush(t, s->gather[0].rank);
  if (rc) return rc;
  struct gather_req *g = &s->gather[s->ngather++];
  g->rank = rank;
  g->disp = disp;
  g->len = (unsigned)len;
  g->dst = dst;
  g->same = NULL;
  s->gather_per_rank[rank]++;
  return RMADHT_OK;
}

int rma_get_group(rmadht *t, int rank, uint64_t group, unsigned char *dst) {
  return gather_add(t, rank, group, slot_group_disp(&t->layout, group),
                    t->layout.group_bytes, dst);
}

int rma_get_slot(rmadht *t, int rank, uint64_t slot, unsigned char *dst) {
  uint64_t group = slot / SLOT_GROUP;
  size_t len = t->layout.slot_size;
  return gather_add(t, rank, group,
                    slot_group_disp(&t->layout, group) +
                        (slot % SLOT_GROUP) * (uint64_t)len,
                    len, dst);
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
                      unsigned char **image) {
  struct pending_put *e;
  int rc = pending_entry(t, rank, group, &e);
  if (!rc) *image = e->image;
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
