/*
 * DHT_print_statistics: the one call of MPI-DHT's API whose purpose is to
 * print (rmadht itself never prints).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpidht_state.h"

/* MPI-DHT prints only when built with DHT_STATISTICS, off by default, and
   POET, its user, calls this once per time step: a prebuilt library asks
   rank 0's environment and is silent by default. */
static int wanted(void) {
  const char *v = getenv("RMADHT_MPIDHT_STATISTICS");
  return v && *v && strcmp(v, "0") != 0;
}

/* Per rank: occupied (writes stored there, from the sums of landed), then
   the period's w_access, r_access, read misses, evictions. */
enum { OCCUPIED, W_ACCESS, R_ACCESS, MISSES, EVICTIONS, NCOL };

static void row(const char *label, const uint64_t *v, long long free_slots) {
  printf("%-11s|%-11llu|%-11lld||%-11llu|%-11llu|%-11llu|%-11llu\n", label,
         (unsigned long long)v[OCCUPIED], free_slots,
         (unsigned long long)v[W_ACCESS], (unsigned long long)v[R_ACCESS],
         (unsigned long long)v[MISSES], (unsigned long long)v[EVICTIONS]);
}

static void print_table(const DHT *table, const uint64_t *occupied,
                        const uint64_t *period) {
  int n = table->comm_size;
  uint64_t sum[NCOL] = {0};
  char label[16];
  printf("\n%-35s||since the last call\n", " ");
  printf("%-11s|%-11s|%-11s||%-11s|%-11s|%-11s|%-11s\n", "rank", "occupied",
         "free", "w_access", "r_access", "read misses", "evictions");
  for (int r = 0; r < n; r++) {
    uint64_t v[NCOL] = {occupied[r]};
    memcpy(v + W_ACCESS, period + (size_t)r * (NCOL - 1),
           (NCOL - 1) * sizeof *v);
    for (int c = 0; c < NCOL; c++) sum[c] += v[c];
    snprintf(label, sizeof label, "%d", r);
    row(label, v, (long long)table->bucket_count - (long long)v[OCCUPIED]);
  }
  row("sum", sum,
      (long long)table->bucket_count * n - (long long)sum[OCCUPIED]);
  printf("\n");
  fflush(stdout);
}

MPIDHT_EXPORT int DHT_print_statistics(DHT *table) {
  struct rmadht_mpidht_state *s = mpidht_state(table);
  if (!s) return DHT_UCX_ERROR;
  int n = table->comm_size;
  uint64_t mine[NCOL - 1] = {s->period.w_access, s->period.r_access,
                             s->period.read_misses, s->period.evictions};
  s->period = (struct mpidht_period){0, 0, 0, 0};
  /* Rank 0 decides for all: 0 silent, 1 print, -1 no memory. */
  int mode = 0;
  uint64_t *occupied = NULL, *period = NULL;
  if (s->p.rank == 0 && wanted()) {
    occupied = calloc((size_t)n, sizeof *occupied);
    period = calloc((size_t)n * (NCOL - 1), sizeof *period);
    mode = occupied && period ? 1 : -1;
  }
  int rc = MPI_Bcast(&mode, 1, MPI_INT, 0, s->p.comm);
  if (rc == MPI_SUCCESS && mode == 1)
    rc = MPI_Reduce(s->landed, occupied, n, MPI_UINT64_T, MPI_SUM, 0,
                    s->p.comm);
  if (rc == MPI_SUCCESS && mode == 1)
    rc = MPI_Gather(mine, NCOL - 1, MPI_UINT64_T, period, NCOL - 1,
                    MPI_UINT64_T, 0, s->p.comm);
  if (rc == MPI_SUCCESS && mode == 1 && s->p.rank == 0)
    print_table(table, occupied, period);
  free(occupied);
  free(period);
  if (rc != MPI_SUCCESS) return DHT_UCX_ERROR;
  return mode < 0 ? DHT_NO_MEM : DHT_SUCCESS;
}
