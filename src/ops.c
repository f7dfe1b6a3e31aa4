/*
 * The public data operations: argument checks, chunking of batches, and
 * dispatch to the table's protocol.  Single calls are batches of one.
 * Queued single writes (write_queue.h) go out before any call but a
 * single write or read, which keeps every call ordered after them.
 */
#include "batch.h"
#include "write_queue.h"

#include <string.h>

#define CHECK_TABLE(t) \
  if (!(t)) return RMADHT_ERR_ARG

static int read_chunks(rmadht *t, size_t n, const unsigned char *keys,
                       unsigned char *values, int *status) {
  for (size_t at = 0; at < n; at += BATCH_CHUNK) {
    size_t m = n - at < BATCH_CHUNK ? n - at : BATCH_CHUNK;
    int rc = t->proto->read(t, m, keys + at * t->layout.key_size,
                            values + at * t->layout.value_size, status + at);
    if (rc) return rc;
  }
  t->stats.reads += n;
  return RMADHT_OK;
}

int ops_write(rmadht *t, size_t n, const unsigned char *keys,
              const struct write_src *src, int *status) {
  for (size_t at = 0; at < n; at += BATCH_CHUNK) {
    size_t m = n - at < BATCH_CHUNK ? n - at : BATCH_CHUNK;
    struct write_src part = *src;
    part.first = at;
    if (src->values) part.values = src->values + at * t->layout.value_size;
    if (src->locs) part.locs = src->locs + at;
    int rc = t->proto->write(t, m, keys + at * t->layout.key_size, &part,
                             status + at);
    if (rc) return rc;
  }
  if (src->fn)
    t->stats.updates += n;
  else if (src->values)
    t->stats.writes += n;
  return RMADHT_OK;
}

/* Every write call but a queued rmadht_write sends the queue first. */
static int write_batch(rmadht *t, size_t n, const unsigned char *keys,
                       const struct write_src *src, int *status) {
  int rc = wq_send(t);
  return rc ? rc : ops_write(t, n, keys, src, status);
}

static int write_one(rmadht *t, const void *key, const struct write_src *src) {
  int status;
  int rc = write_batch(t, 1, key, src, &status);
  return rc ? rc : status;
}

int rmadht_read(rmadht *t, const void *key, void *value) {
  CHECK_TABLE(t);
  if (!key || !value) return RMADHT_ERR_ARG;
  /* This rank's own queued write: counted as the read of a hit. */
  const unsigned char *queued = wq_find(t, key);
  if (queued) {
    memcpy(value, queued, t->layout.value_size);
    t->stats.reads++;
    t->stats.hits++;
    return RMADHT_OK;
  }
  int status;
  int rc = read_chunks(t, 1, key, value, &status);
  return rc ? rc : status;
}

int rmadht_write(rmadht *t, const void *key, const void *value) {
  CHECK_TABLE(t);
  if (!key || !value) return RMADHT_ERR_ARG;
  if (t->queue) return wq_push(t, key, value);
  struct write_src src = {.values = value};
  return write_one(t, key, &src);
}

int rmadht_write_loc(rmadht *t, const void *key, const void *value,
                     rmadht_location *loc) {
  CHECK_TABLE(t);
  if (!key || !value || !loc) return RMADHT_ERR_ARG;
  struct write_src src = {.values = value, .locs = loc};
  return write_one(t, key, &src);
}

int rmadht_remove(rmadht *t, const void *key) {
  CHECK_TABLE(t);
  if (!key) return RMADHT_ERR_ARG;
  struct write_src src = {0};
  return write_one(t, key, &src);
}

int rmadht_update(rmadht *t, const void *key, rmadht_update_fn fn, void *arg,
                  rmadht_location *loc) {
  CHECK_TABLE(t);
  if (!key || !fn) return RMADHT_ERR_ARG;
  struct write_src src = {.fn = fn, .arg = arg, .locs = loc};
  return write_one(t, key, &src);
}

int rmadht_read_batch(rmadht *t, size_t n, const void *keys, void *values,
                      int *status) {
  CHECK_TABLE(t);
  if (n == 0) return RMADHT_OK;
  if (!keys || !values || !status) return RMADHT_ERR_ARG;
  int rc = wq_send(t);
  return rc ? rc : read_chunks(t, n, keys, values, status);
}

int rmadht_write_batch(rmadht *t, size_t n, const void *keys,
                       const void *values, int *status) {
  CHECK_TABLE(t);
  if (n == 0) return RMADHT_OK;
  if (!keys || !values || !status) return RMADHT_ERR_ARG;
  struct write_src src = {.values = values};
  return write_batch(t, n, keys, &src, status);
}

int rmadht_write_batch_loc(rmadht *t, size_t n, const void *keys,
                           const void *values, int *status,
                           rmadht_location *locs) {
  CHECK_TABLE(t);
  if (n == 0) return RMADHT_OK;
  if (!keys || !values || !status || !locs) return RMADHT_ERR_ARG;
  struct write_src src = {.values = values, .locs = locs};
  return write_batch(t, n, keys, &src, status);
}

int rmadht_update_batch(rmadht *t, size_t n, const void *keys,
                        rmadht_update_fn fn, void *arg, int *status,
                        rmadht_location *locs) {
  CHECK_TABLE(t);
  if (n == 0) return RMADHT_OK;
  if (!keys || !fn || !status) return RMADHT_ERR_ARG;
  struct write_src src = {.fn = fn, .arg = arg, .locs = locs};
  return write_batch(t, n, keys, &src, status);
}

int rmadht_flush(rmadht *t) {
  CHECK_TABLE(t);
  int rc = wq_send(t);
  return rc ? rc : t->proto->flush(t);
}
