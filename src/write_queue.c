/* Queued single writes (see write_queue.h). */
#include "write_queue.h"

#include <stdlib.h>
#include <string.h>

struct write_queue {
  size_t cap, n;
  unsigned char *keys, *values; /* cap items each, packed as a batch */
  uint64_t *hash;               /* each item's key hash, to find it */
  int *status;
};

int wq_create(rmadht *t, size_t cap) {
  struct write_queue *q = calloc(1, sizeof *q);
  if (!q) return RMADHT_ERR_NOMEM;
  t->queue = q;
  q->cap = cap;
  q->keys = malloc(cap * t->layout.key_size);
  q->values = malloc(cap * t->layout.value_size);
  q->hash = malloc(cap * sizeof *q->hash);
  q->status = malloc(cap * sizeof *q->status);
  if (!q->keys || !q->values || !q->hash || !q->status) return RMADHT_ERR_NOMEM;
  return RMADHT_OK;
}

void wq_destroy(rmadht *t) {
  struct write_queue *q = t->queue;
  if (!q) return;
  free(q->keys);
  free(q->values);
  free(q->hash);
  free(q->status);
  free(q);
  t->queue = NULL;
}

int wq_push(rmadht *t, const void *key, const void *value) {
  struct write_queue *q = t->queue;
  size_t ks = t->layout.key_size, vs = t->layout.value_size;
  memcpy(q->keys + q->n * ks, key, ks);
  memcpy(q->values + q->n * vs, value, vs);
  q->hash[q->n++] = rmadht_hash(t, key);
  return q->n == q->cap ? wq_send(t) : RMADHT_OK;
}

const unsigned char *wq_find(const rmadht *t, const void *key) {
  const struct write_queue *q = t->queue;
  if (!q || q->n == 0) return NULL;
  size_t ks = t->layout.key_size;
  uint64_t h = rmadht_hash(t, key);
  /* Newest first: a later write of a key wins, as in a batch. */
  for (size_t i = q->n; i-- > 0;)
    if (q->hash[i] == h && memcmp(q->keys + i * ks, key, ks) == 0)
      return q->values + i * t->layout.value_size;
  return NULL;
}

int wq_send(rmadht *t) {
  struct write_queue *q = t->queue;
  if (!q || q->n == 0) return RMADHT_OK;
  size_t n = q->n;
  /* Emptied whatever happens: after an MPI error the table cannot be
     trusted, and sending the same items again would only repeat it. */
  q->n = 0;
  struct write_src src = {.values = q->values};
  int rc = ops_write(t, n, q->keys, &src, q->status);
  for (size_t i = 0; !rc && i < n; i++)
    if (q->status[i] < 0) rc = q->status[i];
  return rc;
}
