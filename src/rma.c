/* Counted synchronisation and outstanding lock-free puts (see rma.h). */
#include "rma.h"

#include <stdlib.h>

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

int rma_flush(rmadht *t, int rank) {
  int rc = MPI_Win_flush(rank, t->win);
  t->stats.round_trips++;
  if (t->pending) pending_forget(t->pending, rank);
  return rmadht_mpi(rc);
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

int rma_get_group(rmadht *t, int rank, uint64_t group, unsigned char *dst) {
  int rc = flush_if_pending(t, rank, group);
  if (rc) return rc;
  size_t len = t->layout.group_bytes;
  return rmadht_mpi(MPI_Get(dst, (int)len, MPI_BYTE, rank,
                            (MPI_Aint)slot_group_disp(&t->layout, group),
                            (int)len, MPI_BYTE, t->win));
}

int rma_get_slot(rmadht *t, int rank, uint64_t slot, unsigned char *dst) {
  uint64_t group = slot / SLOT_GROUP;
  int rc = flush_if_pending(t, rank, group);
  if (rc) return rc;
  size_t len = t->layout.slot_size;
  uint64_t disp = slot_group_disp(&t->layout, group) +
                  (slot % SLOT_GROUP) * (uint64_t)len;
  return rmadht_mpi(MPI_Get(dst, (int)len, MPI_BYTE, rank, (MPI_Aint)disp,
                            (int)len, MPI_BYTE, t->win));
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
