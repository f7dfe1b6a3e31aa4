/*
 * The two reports of POET's current DHT API: the mean number of candidate
 * buckets a write examined, by which POET decides to empty its tables, and
 * the printed statistics (POET's API defines printing; rmadht never
 * prints).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dht_state.h"

int dht_reset_probes(struct rmadht_poet_dht *s) {
  rmadht_stats st;
  int rc = rmadht_get_stats(s->p.t, &st);
  if (rc) return rc;
  s->probes_base = st.write_probes;
  s->writes_base = st.writes;
  s->stored_updates = 0;
  return RMADHT_OK;
}

/* POET's count for a write is the position of the first of its candidate
   buckets, probed one after another, that is free or holds the key: about
   1 / (1 - load), so its threshold of 2 means half full.  rmadht fetches
   all candidates at once, and write_probes counts, per stored write, one
   plus the candidates holding another key: about 1 + 16 * load.  This
   turns the fraction of candidates held by other keys, o, into what a
   probe in order would examine, 1 + o + o^2 + ... over the candidates, so
   that POET's threshold keeps its meaning. */
static double probe_in_order(double others, size_t candidates) {
  double o = others / (double)candidates, term = 1.0, sum = 0.0;
  for (size_t i = 0; i < candidates; i++, term *= o) sum += term;
  return sum;
}

POET_EXPORT float DHT_get_used_idx_factor(DHT *table, int with_reset) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return -1.0f;
  rmadht_stats st;
  rmadht_info info;
  float mine = 0.0f, max = -1.0f;
  int ok = rmadht_get_stats(s->p.t, &st) == RMADHT_OK &&
           rmadht_get_info(s->p.t, &info) == RMADHT_OK;
  if (ok) {
    uint64_t stored = st.writes - s->writes_base + s->stored_updates;
    if (stored) {
      double others = (double)(st.write_probes - s->probes_base - stored) /
                      (double)stored;
      /* Two candidate groups per key (rmadht.h). */
      mine = (float)probe_in_order(others, 2 * info.slots_per_group);
    }
  }
  /* The busiest rank decides, on every rank, as in POET. */
  if (MPI_Allreduce(&mine, &max, 1, MPI_FLOAT, MPI_MAX, s->p.comm) !=
      MPI_SUCCESS)
    return -1.0f;
  if (!ok) return -1.0f;
  if (with_reset && dht_reset_probes(s) != RMADHT_OK) return -1.0f;
  return max;
}

enum { W_ACCESS, R_ACCESS, READ_MISSES, EVICTIONS, COLUMNS };

static void print_row(const char *name, long rank, const uint64_t *v) {
  char label[24];
  if (name)
    snprintf(label, sizeof label, "%s", name);
  else
    snprintf(label, sizeof label, "%ld", rank);
  printf("%-11s|%-11llu|%-11llu|%-11llu|%-11llu\n", label,
         (unsigned long long)v[W_ACCESS], (unsigned long long)v[R_ACCESS],
         (unsigned long long)v[READ_MISSES], (unsigned long long)v[EVICTIONS]);
}

/* POET prints only when its DHT.c is compiled with DHT_STATISTICS, which
   its build leaves off, yet calls this once per time step: so a prebuilt
   library asks at run time, by rank 0's environment, and is silent by
   default. */
static int printing_wanted(void) {
  const char *v = getenv("RMADHT_POET_STATISTICS");
  return v && *v && strcmp(v, "0") != 0;
}

POET_EXPORT int DHT_print_statistics(DHT *table) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return DHT_MPI_ERROR;
  int ranks;
  if (MPI_Comm_size(s->p.comm, &ranks) != MPI_SUCCESS) return DHT_MPI_ERROR;
  uint64_t mine[COLUMNS] = {s->period.w_access, s->period.r_access,
                            s->period.read_misses, s->period.evictions};
  s->period = (struct dht_period){0, 0, 0, 0};
  uint64_t *all = NULL;
  /* Rank 0 decides for all: 0 silent, 1 print, -1 no memory. */
  int mode = 0;
  if (s->p.rank == 0 && printing_wanted()) {
    all = calloc((size_t)ranks * COLUMNS, sizeof *all);
    mode = all ? 1 : -1;
  }
  int rc = MPI_Bcast(&mode, 1, MPI_INT, 0, s->p.comm);
  if (rc == MPI_SUCCESS && mode == 1)
    rc = MPI_Gather(mine, COLUMNS, MPI_UINT64_T, all, COLUMNS, MPI_UINT64_T,
                    0, s->p.comm);
  if (rc != MPI_SUCCESS || mode < 0) {
    free(all);
    return DHT_MPI_ERROR;
  }
  if (s->p.rank == 0 && mode == 1) {
    uint64_t sum[COLUMNS] = {0};
    printf("\n%-11s|%-11s|%-11s|%-11s|%-11s   (since the last call)\n",
           "rank", "w_access", "r_access", "read misses", "evictions");
    for (int r = 0; r < ranks; r++) {
      print_row(NULL, r, all + (size_t)r * COLUMNS);
      for (int c = 0; c < COLUMNS; c++) sum[c] += all[(size_t)r * COLUMNS + c];
    }
    print_row("sum", 0, sum);
    printf("\n");
    fflush(stdout);
  }
  free(all);
  return DHT_SUCCESS;
}
