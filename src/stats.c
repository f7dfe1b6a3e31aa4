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
  /* One more element counts the ranks that passed no sum: every rank
     learns of it from the same allreduce, so all return the same code. */
  uint64_t in[N + 1], out[N + 1];
  memcpy(in, &t->stats, sizeof t->stats);
  in[N] = sum == NULL;
  if (MPI_Allreduce(in, out, N + 1, MPI_UINT64_T, MPI_SUM, t->comm) !=
      MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  if (out[N]) return RMADHT_ERR_ARG;
  memcpy(sum, out, sizeof *sum);
  return RMADHT_OK;
}
