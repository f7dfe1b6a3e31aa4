/*
 * DHT_write_accumulate, which MPI-DHT declares but its MPI variants leave
 * DHT_NOT_IMPLEMENTED: the callback's read-modify-write of a bucket as an
 * rmadht_update, atomic with respect to every other write of the key on
 * any rank, so that concurrent accumulates from many ranks lose nothing.
 */
#include "mpidht_state.h"

/* One accumulate: the callback's arguments, and what its last run said
   (the run whose action rmadht applies). */
struct acc_call {
  int (*cb)(int, void *, int, void *);
  void *send;
  int send_size, bucket_size;
  int last_ret, was_found;
};

static int run_callback(void *arg, size_t item, const void *key, void *bucket,
                        int found) {
  struct acc_call *c = arg;
  (void)item;
  (void)key;
  /* bucket is zeros when the key is absent: a fresh bucket. */
  c->was_found = found;
  c->last_ret = c->cb(c->send_size, c->send, c->bucket_size, bucket);
  return c->last_ret ? RMADHT_UPDATE_KEEP : RMADHT_UPDATE_STORE;
}

MPIDHT_EXPORT void DHT_set_accumulate_callback(
    DHT *table, int (*callback_func)(int, void *, int, void *)) {
  if (table) table->accumulate_callback = callback_func;
}

MPIDHT_EXPORT int DHT_write_accumulate(DHT *table, const void *key,
                                       int send_size, void *data,
                                       uint32_t *proc, uint32_t *index,
                                       int *callback_ret) {
  struct rmadht_mpidht_state *s = mpidht_state(table);
  if (!s || !key || !table->accumulate_callback) return DHT_UCX_ERROR;
  s->period.w_access++;
  struct acc_call c = {table->accumulate_callback, data, send_size,
                       table->data_size, 0, 0};
  rmadht_location loc;
  int rc = rmadht_update(s->p.t, key, run_callback, &c, &loc);
  if (rc < 0) return DHT_UCX_ERROR;
  if (callback_ret) *callback_ret = c.last_ret;
  if (c.last_ret == 0)
    return mpidht_stored(table, rc == RMADHT_EVICTED, &loc, proc, index);
  /* Nothing written: the key has a place only if it is there. */
  mpidht_place(s, c.was_found ? &loc : NULL, proc, index);
  return DHT_SUCCESS;
}
