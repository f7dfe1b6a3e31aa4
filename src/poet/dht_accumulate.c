/*
 * DHT_write_accumulate: POET's read-modify-write of a bucket under its
 * exclusive lock, as an rmadht_update, which makes it atomic with respect
 * to every other write of the key on any rank, in lock-free mode too.
 * POET's proximity table appends entry locations to a bucket this way from
 * every rank at once (De Lucia et al. 2021 describe the surrogate).
 */
#include "dht_state.h"

struct accumulate {
  int (*callback)(int, void *, int, void *);
  int send_size;
  void *send_data;
  int data_size;
  int ret, found; /* of the last call, the one whose action counts */
};

static int accumulate_fn(void *arg, size_t item, const void *key,
                         void *value, int found) {
  (void)item;
  (void)key;
  struct accumulate *a = arg;
  /* value holds zeros for an absent key, as POET's bucket for a new or
     evicted key. */
  a->found = found;
  a->ret = a->callback(a->send_size, a->send_data, a->data_size, value);
  return a->ret == 0 ? RMADHT_UPDATE_STORE : RMADHT_UPDATE_KEEP;
}

POET_EXPORT void DHT_set_accumulate_callback(
    DHT *table, int (*callback_func)(int, void *, int, void *)) {
  if (table) table->accumulate_callback = callback_func;
}

POET_EXPORT int DHT_write_accumulate(DHT *table, const void *key,
                                     int send_size, void *data,
                                     uint32_t *proc, uint32_t *index,
                                     int *callback_ret) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s || !table->accumulate_callback) return DHT_MPI_ERROR;
  s->period.w_access++;
  rmadht_info info;
  if (rmadht_get_info(s->p.t, &info) != RMADHT_OK) return DHT_MPI_ERROR;
  struct accumulate a = {table->accumulate_callback, send_size, data,
                         (int)info.value_size, 0, 0};
  rmadht_location loc;
  uint64_t probes = dht_probes_now(s);
  int rc = rmadht_update(s->p.t, key, accumulate_fn, &a, &loc);
  if (rc < 0) return DHT_MPI_ERROR;
  /* POET counts every call, whatever its callback returns. */
  dht_count_call(s, probes, a.found);
  if (callback_ret) *callback_ret = a.ret;
  if (a.ret != 0) {
    /* Nothing written; the key has a place only if it is there. */
    dht_place(s, a.found ? &loc : NULL, proc, index);
    return DHT_SUCCESS;
  }
  return dht_stored(s, rc == RMADHT_EVICTED, &loc, proc, index);
}
