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

/* What POET's DHT.c counts, per write and accumulate, for its factor: the
   position of the first of its n candidate buckets, probed one after
   another, that is free or holds the key, n when all hold other keys
   (it evicts the last).  n is 9 - B/8, B the bits an index into its
   buckets needs, rounded up to whole bytes: 5 to 8 for POET's tables.
   At load a, a key not in the table examines 1 + a + ... + a^(n-1) on
   average, 2 at about half full: POET's threshold.  A key in the table
   examines what it examined when it went in; for keys that went in while
   the load rose from 0 to a that is 1 + a/2 + ... + a^(n-1)/n.

   rmadht fetches a key's candidates at once, so it has no position to
   count, but write_probes tells, per stored write, how many of its
   candidates held other keys: their fraction, times the slots per POET
   bucket, is the load POET's table would have with these entries.  Each
   call counts what POET's would have at that load. */
static int poet_candidates(uint64_t buckets) {
  int bits = 0;
  while (bits < 64 && (UINT64_C(1) << bits) < buckets) bits++;
  return 9 - (bits + 7) / 8;
}

static double poet_count(double load, int n, int found) {
  double sum = 0.0, term = 1.0;
  for (int k = 0; k < n; k++, term *= load)
    sum += found ? term / (k + 1) : term;
  return sum;
}

void dht_probes_init(struct rmadht_poet_dht *s, uint64_t buckets) {
  rmadht_info info = {0};
  rmadht_get_info(s->p.t, &info); /* fails only without a table */
  if (buckets == 0) buckets = 1;
  s->poet_candidates = poet_candidates(buckets);
  /* Two candidate groups per key, one when the rank has only one. */
  s->candidates = (int)info.slots_per_group * (info.groups_per_rank > 1 ? 2 : 1);
  s->slots_per_bucket = (double)info.slots_per_rank / (double)buckets;
  dht_reset_probes(s, 1);
}

uint64_t dht_probes_now(const struct rmadht_poet_dht *s) {
  rmadht_stats st;
  return rmadht_get_stats(s->p.t, &st) == RMADHT_OK ? st.write_probes : 0;
}

/* The load a stored write saw: others of its slots held other keys. */
static double load_seen(const struct rmadht_poet_dht *s, double others,
                        int slots) {
  double load = slots > 0 ? others / slots * s->slots_per_bucket : 1.0;
  return load < 1.0 ? load : 1.0;
}

void dht_count_call(struct rmadht_poet_dht *s, uint64_t before, int found) {
  uint64_t added = dht_probes_now(s) - before;
  /* A stored call adds one plus the others; one that stored nothing (an
     accumulate whose callback refused) saw what the last one saw. */
  if (added > 0)
    s->last_load = load_seen(s, (double)(added - 1),
                             s->candidates - (found == 1));
  /* POET's DHT_write mostly stores keys its read just missed: unknown
     counts as absent. */
  s->probe_sum += poet_count(s->last_load, s->poet_candidates, found == 1);
  s->calls++;
}

void dht_count_restore(struct rmadht_poet_dht *s, const rmadht_stats *before,
                       const rmadht_stats *after) {
  uint64_t writes = after->writes - before->writes;
  if (!writes) return;
  double others =
      (double)(after->write_probes - before->write_probes - writes) / writes;
  s->last_load = load_seen(s, others, s->candidates);
  s->probe_sum +=
      (double)writes * poet_count(s->last_load, s->poet_candidates, 0);
  s->calls += writes;
}

void dht_reset_probes(struct rmadht_poet_dht *s, int empty) {
  s->probe_sum = 0.0;
  s->calls = 0;
  if (empty) s->last_load = 0.0;
}

POET_EXPORT float DHT_get_used_idx_factor(DHT *table, int with_reset) {
  struct rmadht_poet_dht *s = dht_state(table);
  if (!s) return -1.0f;
  /* POET divides by its count of calls, NaN when there were none. */
  float mine = s->calls ? (float)(s->probe_sum / (double)s->calls) : 0.0f;
  float max = -1.0f;
  /* The busiest rank decides, on every rank, as in POET. */
  if (MPI_Allreduce(&mine, &max, 1, MPI_FLOAT, MPI_MAX, s->p.comm) !=
      MPI_SUCCESS)
    return -1.0f;
  if (with_reset) dht_reset_probes(s, 0);
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
