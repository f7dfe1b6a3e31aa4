/*
 * rmadht-progress: how long reads wait for a rank that computes without
 * calling MPI.
 *
 * On a network without RDMA the target's MPI library carries out a get,
 * and it runs only inside MPI calls.  Here the last rank fills keys it
 * owns, then computes for --seconds (default 2) without any MPI call, as a
 * POET worker does inside PHREEQC (De Lucia et al. 2021); rank 0 reads
 * those keys in a loop meanwhile and times each read.  Afterwards every
 * rank reads its successor's keys for --seconds with nobody computing: the
 * plain-read throughput, to show what a remedy costs when nothing stalls;
 * the computing rank's rounds of work per second show what it costs there.
 *
 *   mpiexec -n 2 rmadht-progress [--remedy off|thread] [--progress-us U]
 *       [--multiple] [--mode lockfree|fine|coarse] [--seconds S]
 *
 * --remedy thread sets rmadht_config.progress_us (default 100 us) and
 * implies --multiple, which initialises MPI with MPI_THREAD_MULTIPLE (as
 * the MPI's own asynchronous progress needs too, e.g. MPICH's
 * MPIR_CVAR_ASYNC_PROGRESS=1).  One JSON object on rank 0's stdout.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rmadht.h"

enum { KS = 8, VS = 32, KEYS = 1024 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t mix(uint64_t x) { /* splitmix64's finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/* Keys are (owner, index); the owner comes from the high 32 bits of the
   hash (docs/explanation/design.md), so these put each key on the rank it names. */
static uint64_t owner_hash(const void *key, size_t len, void *arg) {
  (void)len;
  const int *nranks = arg;
  uint64_t k[1];
  memcpy(k, key, KS);
  uint32_t owner = (uint32_t)(k[0] >> 32);
  uint32_t hi = (uint32_t)((((uint64_t)owner << 32) + ((uint64_t)1 << 31)) /
                           (uint64_t)*nranks);
  return (uint64_t)hi << 32 | (uint32_t)mix(k[0]);
}

static void make_key(unsigned char *key, int owner, uint32_t i) {
  uint64_t k = (uint64_t)(uint32_t)owner << 32 | i;
  memcpy(key, &k, KS);
}

static void make_value(unsigned char *val, const unsigned char *key) {
  uint64_t k;
  memcpy(&k, key, KS);
  for (int i = 0; i < VS / 8; i++) {
    uint64_t w = mix(k + (uint64_t)i);
    memcpy(val + 8 * i, &w, 8);
  }
}

/* Pure computation: no MPI call, no system call but the clock.  Returns
   the rounds of work done, which a progress thread competing for the core
   lowers. */
static double compute(double seconds, double *sink) {
  double x = 1, end = now() + seconds, rounds = 0;
  for (; now() < end; rounds++)
    for (int i = 0; i < 10000; i++) x = x * 1.0000001 + 1e-9;
  *sink = x;
  return rounds;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(const double *v, size_t n, double p) {
  if (!n) return 0;
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return v[i];
}

struct reads {
  size_t n, cap, wrong, failed;
  double *lat; /* seconds */
};

/* One read of key i of owner, checked and timed. */
static int read_one(rmadht *t, int owner, uint32_t i, struct reads *r) {
  unsigned char key[KS], val[VS], want[VS];
  make_key(key, owner, i);
  double t0 = now();
  int rc = rmadht_read(t, key, val);
  double dt = now() - t0;
  if (rc < 0) return rc;
  make_value(want, key);
  if (rc != RMADHT_OK) r->failed++;
  else if (memcmp(val, want, VS)) r->wrong++;
  if (r->lat) {
    if (r->n == r->cap) {
      r->cap = r->cap ? 2 * r->cap : 4096;
      double *p = realloc(r->lat, r->cap * sizeof *p);
      if (!p) return RMADHT_ERR_NOMEM;
      r->lat = p;
    }
    r->lat[r->n] = dt;
  }
  r->n++;
  return RMADHT_OK;
}

static void usage(void) {
  fprintf(stderr,
          "usage: mpiexec -n P rmadht-progress [--remedy off|thread] "
          "[--progress-us U] [--multiple] [--mode lockfree|fine|coarse] "
          "[--seconds S]\n");
}

int main(int argc, char **argv) {
  const char *remedy = "off", *mode_name = "lockfree";
  int progress_us = 100, multiple = 0;
  double seconds = 2;
  static const struct option longopts[] = {
      {"remedy", 1, 0, 'r'},   {"progress-us", 1, 0, 'u'},
      {"multiple", 0, 0, 'm'}, {"mode", 1, 0, 'o'},
      {"seconds", 1, 0, 's'},  {"help", 0, 0, 'h'},
      {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'r': remedy = optarg; break;
      case 'u': progress_us = atoi(optarg); break;
      case 'm': multiple = 1; break;
      case 'o': mode_name = optarg; break;
      case 's': seconds = atof(optarg); break;
      default: usage(); return 2;
    }
  }
  enum rmadht_mode mode = RMADHT_LOCK_FREE;
  if (!strcmp(mode_name, "fine")) mode = RMADHT_FINE_LOCK;
  else if (!strcmp(mode_name, "coarse")) mode = RMADHT_COARSE_LOCK;
  else if (strcmp(mode_name, "lockfree")) { usage(); return 2; }
  int thread = !strcmp(remedy, "thread");
  if (!thread && strcmp(remedy, "off")) { usage(); return 2; }
  if (thread) multiple = 1;

  int provided;
  MPI_Init_thread(&argc, &argv,
                  multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                  &provided);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks < 2) {
    if (!rank) fprintf(stderr, "rmadht-progress needs 2 or more ranks\n");
    MPI_Finalize();
    return 2;
  }

  rmadht_config cfg;
  rmadht_config_default(&cfg, KS, VS);
  cfg.bytes_per_rank = (size_t)1 << 20;
  cfg.mode = mode;
  cfg.node_local = 0; /* RMA, the path between hosts, also on one node */
  cfg.hash = owner_hash;
  cfg.hash_arg = &nranks;
  cfg.progress_us = thread ? progress_us : 0;
  rmadht *t;
  int rc = rmadht_create(MPI_COMM_WORLD, &cfg, &t);
  if (rc) {
    if (!rank)
      fprintf(stderr, "rmadht-progress: rmadht_create: %s. %s\n",
              rmadht_strerror(rc), rmadht_error_detail());
    MPI_Finalize();
    return 1;
  }

  /* Every rank fills its own keys; the last rank's are the ones read. */
  unsigned char key[KS], val[VS];
  for (uint32_t i = 0; i < KEYS && !rc; i++) {
    make_key(key, rank, i);
    make_value(val, key);
    rc = rmadht_write(t, key, val);
    if (rc == RMADHT_EVICTED) rc = RMADHT_OK;
  }
  if (!rc) rc = rmadht_flush(t);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Phase 1: the last rank computes, rank 0 reads its keys. */
  int last = nranks - 1;
  struct reads stall = {0};
  double sink = 0, phase = 0, rounds = 0;
  if (rank == last) {
    rounds = compute(seconds, &sink) / seconds;
  } else if (rank == 0) {
    stall.cap = 4096;
    stall.lat = malloc(stall.cap * sizeof *stall.lat);
    double start = now();
    for (uint32_t i = 0; !rc && now() - start < seconds; i = (i + 1) % KEYS)
      rc = read_one(t, last, i, &stall);
    phase = now() - start;
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* Phase 2: nobody computes; every rank reads its successor's keys. */
  struct reads plain = {0};
  double start = now();
  int next = (rank + 1) % nranks;
  for (uint32_t i = 0; !rc && now() - start < seconds; i = (i + 1) % KEYS)
    rc = read_one(t, next, i, &plain);
  double span = now() - start;
  double rate = (double)plain.n / span, total_rate;
  MPI_Reduce(&rate, &total_rate, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  size_t bad = stall.wrong + stall.failed + plain.wrong + plain.failed;
  unsigned long long all_bad;
  unsigned long long b = bad;
  MPI_Reduce(&b, &all_bad, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
             MPI_COMM_WORLD);
  if (last != 0) { /* rank 0 reports the computing rank's work */
    if (rank == last) MPI_Send(&rounds, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    if (rank == 0)
      MPI_Recv(&rounds, 1, MPI_DOUBLE, last, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  }
  int worst;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int frc = rmadht_free(&t);

  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = 0;
    for (char *q = lib; *q; q++) /* MPICH's holds a tab */
      if (*q == '\t') *q = ' ';
    qsort(stall.lat, stall.n, sizeof *stall.lat, cmp);
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    printf("{\"mpi\": \"%s\", \"ranks\": %d, \"mode\": \"%s\", "
           "\"remedy\": \"%s\", \"progress_us\": %d, \"thread_level\": "
           "\"%s\", \"mpich_async_progress\": %s, \"compute_s\": %.2f, "
           "\"reads_during_compute\": %zu, \"reads_per_s\": %.0f, "
           "\"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, "
           "\"max_us\": %.1f, \"compute_rounds_per_s\": %.0f, "
           "\"plain_read_mops\": %.4f, \"wrong\": %llu, "
           "\"error\": %d}\n",
           lib, nranks, mode_name, remedy, cfg.progress_us,
           provided == MPI_THREAD_MULTIPLE ? "multiple" : "single",
           async && *async && strcmp(async, "0") ? "true" : "false", seconds,
           stall.n, phase > 0 ? (double)stall.n / phase : 0,
           1e6 * pct(stall.lat, stall.n, 0.5),
           1e6 * pct(stall.lat, stall.n, 0.9),
           1e6 * pct(stall.lat, stall.n, 0.99),
           stall.n ? 1e6 * stall.lat[stall.n - 1] : 0, rounds,
           1e-6 * total_rate,
           all_bad, worst ? worst : frc);
  }
  free(stall.lat);
  if (sink == 42) puts(""); /* keeps the computation */
  MPI_Finalize();
  return worst || frc ? 1 : 0;
}
