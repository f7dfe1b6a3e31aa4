/* Entry locations (placeholder definitions until the implementation lands). */
#include "internal.h"

int rmadht_update(rmadht *t, const void *key, rmadht_update_fn fn, void *arg,
                  rmadht_location *loc) {
  (void)t, (void)key, (void)fn, (void)arg, (void)loc;
  return RMADHT_ERR_ARG;
}
int rmadht_update_batch(rmadht *t, size_t n, const void *keys,
                        rmadht_update_fn fn, void *arg, int *status,
                        rmadht_location *locs) {
  (void)t, (void)n, (void)keys, (void)fn, (void)arg, (void)status, (void)locs;
  return RMADHT_ERR_ARG;
}
int rmadht_write_loc(rmadht *t, const void *key, const void *value,
                     rmadht_location *loc) {
  (void)t, (void)key, (void)value, (void)loc;
  return RMADHT_ERR_ARG;
}
int rmadht_write_batch_loc(rmadht *t, size_t n, const void *keys,
                           const void *values, int *status,
                           rmadht_location *locs) {
  (void)t, (void)n, (void)keys, (void)values, (void)status, (void)locs;
  return RMADHT_ERR_ARG;
}
int rmadht_read_loc(rmadht *t, const rmadht_location *loc, void *key,
                    void *value) {
  (void)t, (void)loc, (void)key, (void)value;
  return RMADHT_ERR_ARG;
}
int rmadht_read_loc_batch(rmadht *t, size_t n, const rmadht_location *locs,
                          void *keys, void *values, int *status) {
  (void)t, (void)n, (void)locs, (void)keys, (void)values, (void)status;
  return RMADHT_ERR_ARG;
}
int rmadht_location_split(const rmadht *t, const rmadht_location *loc,
                          int *rank, uint64_t *slot) {
  (void)t, (void)loc, (void)rank, (void)slot;
  return RMADHT_ERR_ARG;
}
int rmadht_location_join(const rmadht *t, int rank, uint64_t slot,
                         rmadht_location *loc) {
  (void)t, (void)rank, (void)slot, (void)loc;
  return RMADHT_ERR_ARG;
}
int rmadht_clear(rmadht *t) {
  (void)t;
  return RMADHT_ERR_ARG;
}
