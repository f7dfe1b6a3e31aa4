/* Counters: always on, one increment each, summed over ranks on demand. */
#include <string.h>

#include "internal.h"

int rmadht_get_stats(const rmadht *t, rmadht_stats *out) {
  if (!t || !out) return RMADHT_ERR_ARG;
  *out = t->stats;
  return RMADHT_OK;
}

int rmadht_get_stats_global(rmadht *t, rmadht_stats *sum) {
  if (!t) return RMADHT_ERR_ARG;
  enum { N = sizeof(rmadht_stats) / sizeof(uint64_t) };
  uint64_t in[N], out[N];
  memcpy(in, &t->stats, sizeof in);
  if (MPI_Allreduce(in, out, N, MPI_UINT64_T, MPI_SUM, t->comm) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  /* Checked after the allreduce so that a NULL on one rank cannot leave
     the others waiting in it. */
  if (!sum) return RMADHT_ERR_ARG;
  memcpy(sum, out, sizeof out);
  return RMADHT_OK;
}
