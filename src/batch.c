/* Batch working memory, touched targets and waves (see batch.h). */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "rma.h"

int scratch_create(rmadht *t) {
  struct scratch *s = calloc(1, sizeof *s);
  if (!s) return RMADHT_ERR_NOMEM;
  s->cand = malloc(BATCH_CHUNK * 2 * t->layout.group_bytes);
  s->tags = malloc(BATCH_CHUNK * 2 * 4 * SLOT_GROUP);
  s->stage = malloc(STAGE_GROUPS * t->layout.group_bytes);
  s->image = malloc(BATCH_CHUNK * t->layout.slot_size);
  s->made = malloc(BATCH_CHUNK * t->layout.value_size);
  s->touched_list = malloc((size_t)t->nranks * sizeof *s->touched_list);
  s->touched = calloc((size_t)t->nranks, 1);
  s->atomics = calloc((size_t)t->nranks, sizeof *s->atomics);
  s->gather_per_rank = calloc((size_t)t->nranks, sizeof *s->gather_per_rank);
  /* Ranks that lose together must not retry together: a seed of their
     own, never 0. */
  s->rng = ((uint64_t)(unsigned)t->rank + 1) * UINT64_C(0x9E3779B97F4A7C15) ^
           (uint64_t)(MPI_Wtime() * 1e9);
  if (!s->rng) s->rng = 1;
  t->scratch = s;
  if (!s->cand || !s->tags || !s->stage || !s->image || !s->made ||
      !s->touched_list || !s->touched || !s->atomics || !s->gather_per_rank) {
    scratch_destroy(t);
    return RMADHT_ERR_NOMEM;
  }
  return RMADHT_OK;
}

void scratch_destroy(rmadht *t) {
  struct scratch *s = t->scratch;
  if (!s) return;
  free(s->cand);
  free(s->tags);
  free(s->stage);
  free(s->image);
  free(s->made);
  free(s->memo);
  free(s->touched_list);
  free(s->touched);
  free(s->atomics);
  free(s->gather_per_rank);
  free(s);
  t->scratch = NULL;
}

void batch_touch(rmadht *t, int rank) {
  struct scratch *s = t->scratch;
  if (!s->touched[rank]) {
    s->touched[rank] = 1;
    s->touched_list[s->ntouched++] = rank;
  }
}

int batch_atomic(rmadht *t, int rank) {
  struct scratch *s = t->scratch;
  batch_touch(t, rank);
  if (++s->atomics[rank] < BATCH_ATOMICS) return RMADHT_OK;
  s->atomics[rank] = 0;
  return rma_flush(t, rank);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int batch_flush_touched(rmadht *t) {
  struct scratch *s = t->scratch;
  int rc = RMADHT_OK;
  /* Rank order keeps the flush sequence deterministic across runs.  Every
     target's messages go before the first flush, so the round trips to
     different targets overlap. */
  qsort(s->touched_list, (size_t)s->ntouched, sizeof(int), cmp_int);
  for (int k = 0; k < s->ntouched; k++) {
    int irc = rma_issue(t, s->touched_list[k]);
    if (irc && !rc) rc = irc;
  }
  for (int k = 0; k < s->ntouched; k++) {
    int r = s->touched_list[k];
    s->touched[r] = 0;
    s->atomics[r] = 0;
    int frc = rma_flush(t, r);
    if (frc && !rc) rc = frc;
  }
  s->ntouched = 0;
  return rc;
}

int batch_complete_gets(rmadht *t) {
  struct scratch *s = t->scratch;
  if (s->ntouched != 1) return batch_flush_touched(t);
  int r = s->touched_list[0];
  batch_forget_touched(t);
  return rma_complete_gets(t, r);
}

void batch_forget_touched(rmadht *t) {
  struct scratch *s = t->scratch;
  for (int k = 0; k < s->ntouched; k++) {
    s->touched[s->touched_list[k]] = 0;
    s->atomics[s->touched_list[k]] = 0;
  }
  s->ntouched = 0;
}

void batch_place(rmadht *t, size_t n, const unsigned char *keys) {
  struct scratch *s = t->scratch;
  for (size_t i = 0; i < n; i++) {
    rmadht_place(t, keys + i * t->layout.key_size, &s->place[i]);
    s->todo[i] = (int)i;
    s->tries[i] = 0;
    s->waits[i] = 0;
    s->busy_since[i] = -1.0;
    s->removed[i] = 0;
  }
}

void batch_place_write(rmadht *t, size_t n, const unsigned char *keys,
                       const struct write_src *src) {
  batch_place(t, n, keys);
  t->scratch->src = src;
}

/* Open addressing over (rank, group); the set is cleared per wave. */
static int wave_set_add(struct scratch *s, int rank, uint64_t group) {
  const size_t cap = sizeof s->wave_set / sizeof s->wave_set[0];
  uint64_t key = ((uint64_t)(unsigned)rank << 32 ^ group) + 1;
  size_t h = (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 40) & (cap - 1);
  for (;; h = (h + 1) & (cap - 1)) {
    if (s->wave_set[h] == key) return 0;
    if (s->wave_set[h] == 0) {
      s->wave_set[h] = key;
      return 1;
    }
  }
}

static int wave_set_has(const struct scratch *s, int rank, uint64_t group) {
  const size_t cap = sizeof s->wave_set / sizeof s->wave_set[0];
  uint64_t key = ((uint64_t)(unsigned)rank << 32 ^ group) + 1;
  size_t h = (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 40) & (cap - 1);
  for (;; h = (h + 1) & (cap - 1)) {
    if (s->wave_set[h] == key) return 1;
    if (s->wave_set[h] == 0) return 0;
  }
}

int batch_select_wave(rmadht *t, int *ntodo) {
  struct scratch *s = t->scratch;
  int nwave = 0, nleft = 0;
  if (*ntodo == 1) { /* single calls skip the set */
    s->wave[0] = s->todo[0];
    *ntodo = 0;
    return 1;
  }
  memset(s->wave_set, 0, sizeof s->wave_set);
  for (int k = 0; k < *ntodo; k++) {
    int i = s->todo[k];
    const struct place *p = &s->place[i];
    int clash = 0;
    for (int g = 0; g < p->ngroups; g++)
      clash |= wave_set_has(s, p->rank, p->group[g]);
    /* A deferred item still reserves its groups, so a later item with the
       same groups cannot overtake it. */
    for (int g = 0; g < p->ngroups; g++) wave_set_add(s, p->rank, p->group[g]);
    if (clash)
      s->todo[nleft++] = i;
    else
      s->wave[nwave++] = i;
  }
  *ntodo = nleft;
  return nwave;
}

int batch_get_candidates(rmadht *t, int i, int ordered) {
  const struct place *p = &t->scratch->place[i];
  unsigned char *dst = batch_cand(t, i);
  int near = rma_is_near(t, p->rank);
  for (int g = 0; g < p->ngroups; g++) {
    unsigned char *d = dst + (size_t)g * t->layout.group_bytes;
    int rc = near      ? rma_load_group(t, p->rank, p->group[g], d, ordered)
             : ordered ? rma_get_group(t, p->rank, p->group[g], d)
                       : rma_get_group_unordered(t, p->rank, p->group[g], d);
    if (rc) return rc;
  }
  if (!near) batch_touch(t, p->rank); /* a load is complete already */
  return RMADHT_OK;
}
