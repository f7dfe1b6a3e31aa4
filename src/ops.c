/*
 * The public data operations: argument checks, chunking of batches, and
 * dispatch to the table's protocol.  Single calls are batches of one.
 */
#include "batch.h"

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

static int write_chunks(rmadht *t, size_t n, const unsigned char *keys,
                        const unsigned char *values, int *status) {
  for (size_t at = 0; at < n; at += BATCH_CHUNK) {
    size_t m = n - at < BATCH_CHUNK ? n - at : BATCH_CHUNK;
    int rc = t->proto->write(
        t, m, keys + at * t->layout.key_size,
        values ? values + at * t->layout.value_size : NULL, status + at);
    if (rc) return rc;
  }
  if (values) t->stats.writes += n;
  return RMADHT_OK;
}

int rmadht_read(rmadht *t, const void *key, void *value) {
  CHECK_TABLE(t);
  if (!key || !value) return RMADHT_ERR_ARG;
  int status;
  int rc = read_chunks(t, 1, key, value, &status);
  return rc ? rc : status;
}

int rmadht_write(rmadht *t, const void *key, const void *value) {
  CHECK_TABLE(t);
  if (!key || !value) return RMADHT_ERR_ARG;
  int status;
  int rc = write_chunks(t, 1, key, value, &status);
  return rc ? rc : status;
}

int rmadht_remove(rmadht *t, const void *key) {
  CHECK_TABLE(t);
  if (!key) return RMADHT_ERR_ARG;
  int status;
  int rc = write_chunks(t, 1, key, NULL, &status);
  return rc ? rc : status;
}

int rmadht_read_batch(rmadht *t, size_t n, const void *keys, void *values,
                      int *status) {
  CHECK_TABLE(t);
  if (n == 0) return RMADHT_OK;
  if (!keys || !values || !status) return RMADHT_ERR_ARG;
  return read_chunks(t, n, keys, values, status);
}

int rmadht_write_batch(rmadht *t, size_t n, const void *keys,
                       const void *values, int *status) {
  CHECK_TABLE(t);
  if (n == 0) return RMADHT_OK;
  if (!keys || !values || !status) return RMADHT_ERR_ARG;
  return write_chunks(t, n, keys, values, status);
}

int rmadht_flush(rmadht *t) {
  CHECK_TABLE(t);
  return t->proto->flush(t);
}
