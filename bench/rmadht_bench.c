/*
 * rmadht-bench: the synthetic benchmark of Lübke et al. 2024, sect. 4.2.
 *
 * Per mode and key distribution: a write-only phase, a read-only phase over
 * the same keys, and a mixed phase (95% reads, 5% writes); then, on rmadht
 * tables, two phases of atomic updates that increment a counter in the
 * value: one over fresh keys drawn from the distribution, and one where
 * every rank increments the same 16 keys.  Both check the final counts
 * exactly and report a lost update as a failure.  Last, a cache's pattern
 * (POET's): a batch of fresh keys read, then each key missed written.
 * One JSON object per phase on stdout, with the round trips and the calls
 * and bytes each operation moves over the window (rma_count.h); progress
 * on stderr.  --local runs the same workload on a plain in-process table
 * per rank, the physical limit on one node;
 * --rma keeps lock-free tables on RMA where they would take the node-local
 * path, to measure the path a table spanning nodes takes.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local_table.h"
#include "rma_count.h"
#include "rmadht.h"
#include "workload.h"

/* mallinfo2; smpicc's forced include makes malloc and its kin macros,
   which the declarations in <malloc.h> must not meet. */
#ifdef SMPI_H
#pragma push_macro("malloc")
#pragma push_macro("calloc")
#pragma push_macro("realloc")
#pragma push_macro("free")
#undef malloc
#undef calloc
#undef realloc
#undef free
#include <malloc.h>
#pragma pop_macro("malloc")
#pragma pop_macro("calloc")
#pragma pop_macro("realloc")
#pragma pop_macro("free")
#else
#include <malloc.h>
#endif

struct options {
  size_t key_size, value_size, bytes_per_rank, distinct, batch;
  size_t write_ops, mixed_ops, contended_ops;
  double skew, write_share;
  int local, rma, gather, write_queue;
  const char *modes, *dists;
  unsigned phases; /* bit i: phase_names[i] runs (--phases) */
};

/* One table under test: rmadht or the local stand-in. */
struct target {
  rmadht *t;
  struct local_table *local;
  const struct options *o;
  int *status;
  double create_seconds; /* rmadht_create, slowest rank: grows with ranks */
  double create_bytes;   /* heap it took per rank, MPI objects included */
  double mpi_bytes;      /* heap of what it asks of MPI, made bare */
};

struct counts {
  uint64_t reads, hits, writes, evictions, retries, round_trips, updates,
      lost;
  struct rma_count rma; /* this phase's one-sided calls (rma_count.h) */
};

static int do_reads(struct target *x, size_t n, const unsigned char *keys,
                    unsigned char *vals, struct counts *c) {
  const struct options *o = x->o;
  for (size_t i = 0; i < n; i++) x->status[i] = RMADHT_NOT_FOUND;
  if (x->local) {
    for (size_t i = 0; i < n; i++)
      x->status[i] = local_read(x->local, keys + i * o->key_size,
                                vals + i * o->value_size);
  } else if (n == 1) {
    x->status[0] = rmadht_read(x->t, keys, vals);
  } else {
    int rc = rmadht_read_batch(x->t, n, keys, vals, x->status);
    if (rc < 0) return rc;
  }
  for (size_t i = 0; i < n; i++) {
    if (x->status[i] < 0) return x->status[i];
    c->hits += x->status[i] == RMADHT_OK;
  }
  c->reads += n;
  return 0;
}

/* The first error among n stores' statuses, else 0; counts evictions. */
static int tally_stores(const struct target *x, size_t n, struct counts *c) {
  for (size_t i = 0; i < n; i++) {
    if (x->status[i] < 0) return x->status[i];
    c->evictions += x->status[i] == RMADHT_EVICTED;
  }
  return 0;
}

static int do_writes(struct target *x, size_t n, const unsigned char *keys,
                     const unsigned char *vals, struct counts *c) {
  const struct options *o = x->o;
  if (x->local) {
    for (size_t i = 0; i < n; i++)
      x->status[i] = local_write(x->local, keys + i * o->key_size,
                                 vals + i * o->value_size);
  } else if (n == 1) {
    x->status[0] = rmadht_write(x->t, keys, vals);
  } else {
    int rc = rmadht_write_batch(x->t, n, keys, vals, x->status);
    if (rc < 0) return rc;
  }
  c->writes += n;
  return tally_stores(x, n, c);
}

/* The update the benchmark measures: a counter in the value's first 8
   bytes, incremented (1 for a key not there yet). */
static int increment(void *arg, size_t item, const void *key, void *value,
                     int found) {
  (void)arg, (void)item, (void)key;
  uint64_t n = 0;
  if (found) memcpy(&n, value, 8);
  n++;
  memcpy(value, &n, 8);
  return RMADHT_UPDATE_STORE;
}

static int do_updates(struct target *x, size_t n, const unsigned char *keys,
                      struct counts *c) {
  if (n == 1) {
    x->status[0] = rmadht_update(x->t, keys, increment, NULL, NULL);
  } else {
    int rc = rmadht_update_batch(x->t, n, keys, increment, NULL, x->status,
                                 NULL);
    if (rc < 0) return rc;
  }
  c->updates += n;
  return tally_stores(x, n, c);
}

/* Keys and values for a phase, built before the clock starts. */
struct ops {
  size_t n;
  unsigned char *keys, *vals, *is_write;
  uint64_t *ids;  /* update phases: the key ids, for the check */
  uint64_t first; /* update phases: ids are first .. first + range - 1 */
  size_t range;
};

static int make_ops(struct ops *p, const struct options *o, size_t n,
                    const double *cdf, uint64_t seed, double write_share) {
  uint64_t *ids = malloc(n * sizeof *ids);
  p->n = n;
  p->keys = malloc(n * o->key_size);
  p->vals = malloc(n * o->value_size);
  p->is_write = malloc(n);
  if (!ids || !p->keys || !p->vals || !p->is_write) {
    free(ids);
    return -1;
  }
  draw_ids(ids, n, o->distinct, cdf, seed);
  uint64_t s = seed ^ UINT64_C(0xABCDEF);
  for (size_t i = 0; i < n; i++) {
    key_of(p->keys + i * o->key_size, o->key_size, ids[i]);
    value_of(p->vals + i * o->value_size, o->value_size, ids[i]);
    p->is_write[i] = rng_unit(&s) < write_share;
  }
  free(ids);
  return 0;
}

static void free_ops(struct ops *p) {
  free(p->keys);
  free(p->vals);
  free(p->is_write);
  free(p->ids);
}

/* Keys for an update phase: n ids in first .. first + range - 1, drawn
   from the distribution (cdf, over range), or with cycle set taken in
   turn from a rank-specific start, so that every rank increments every
   key. */
static int make_update_ops(struct ops *p, const struct options *o, size_t n,
                           const double *cdf, uint64_t seed, uint64_t first,
                           size_t range, int cycle, int rank) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->first = first;
  p->range = range;
  p->ids = malloc(n * sizeof *p->ids);
  p->keys = malloc(n * o->key_size);
  if (!p->ids || !p->keys) return -1;
  if (!cycle)
    draw_ids(p->ids, n, range, cdf, seed);
  else
    for (size_t i = 0; i < n; i++) p->ids[i] = (i + (size_t)rank * 5) % range;
  for (size_t i = 0; i < n; i++) {
    p->ids[i] += first;
    key_of(p->keys + i * o->key_size, o->key_size, p->ids[i]);
  }
  return 0;
}

/* Collective, after an update phase: every key's counter must equal the
   number of increments all ranks made to it.  Each rank checks the ids
   congruent to its rank; returns the updates lost over all ranks (a
   count below the increments made, or a key missing). */
static int count_lost(struct target *x, const struct ops *p, int rank,
                      int nranks, uint64_t *lost) {
  const struct options *o = x->o;
  uint32_t *made = calloc(p->range, sizeof *made);
  uint32_t *all = malloc(p->range * sizeof *all);
  unsigned char *key = malloc(o->key_size), *val = malloc(o->value_size);
  int rc = made && all && key && val ? 0 : RMADHT_ERR_NOMEM;
  uint64_t mine = 0;
  if (!rc) {
    for (size_t i = 0; i < p->n; i++) made[p->ids[i] - p->first]++;
    if (MPI_Allreduce(made, all, (int)p->range, MPI_UINT32_T, MPI_SUM,
                      MPI_COMM_WORLD) != MPI_SUCCESS)
      rc = RMADHT_ERR_MPI;
  }
  for (size_t j = (size_t)rank; !rc && j < p->range; j += (size_t)nranks) {
    if (!all[j]) continue;
    uint64_t n = 0;
    key_of(key, o->key_size, p->first + j);
    int st = rmadht_read(x->t, key, val);
    if (st < 0) rc = st;
    if (st == RMADHT_OK) memcpy(&n, val, 8);
    if (n < all[j]) mine += all[j] - n;
  }
  free(made);
  free(all);
  free(key);
  free(val);
  int worst;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, lost, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return worst;
}

/* What a phase does with its ops; CACHE is a cache's pattern (POET's
   DHT_Wrapper): read a package of keys, then write each one missed. */
enum kind { WRITES, READS, UPDATES, CACHE };

static int do_cache(struct target *x, size_t m, const unsigned char *keys,
                    const uint64_t *ids, unsigned char *out,
                    unsigned char *wk, unsigned char *wv, struct counts *c) {
  const struct options *o = x->o;
  size_t ks = o->key_size, vs = o->value_size, nw = 0;
  int rc = do_reads(x, m, keys, out, c);
  for (size_t i = 0; i < m && !rc; i++)
    if (x->status[i] == RMADHT_NOT_FOUND) {
      memcpy(wk + nw * ks, keys + i * ks, ks);
      value_of(wv + nw++ * vs, vs, ids[i]);
    }
  return rc || !nw ? rc : do_writes(x, nw, wk, wv, c);
}

/* Runs ops in batches; in a mixed batch the writes go first. */
static int run_ops(struct target *x, const struct ops *p, enum kind kind,
                   unsigned char *out, struct counts *c) {
  const struct options *o = x->o;
  size_t ks = o->key_size, vs = o->value_size, b = o->batch;
  unsigned char *wk = malloc(b * ks), *wv = malloc(b * vs);
  unsigned char *rk = malloc(b * ks);
  int rc = (!wk || !wv || !rk) ? RMADHT_ERR_NOMEM : 0;
  for (size_t at = 0; at < p->n && !rc; at += b) {
    size_t m = p->n - at < b ? p->n - at : b, nw = 0, nr = 0;
    if (kind == UPDATES) {
      rc = do_updates(x, m, p->keys + at * ks, c);
      continue;
    }
    if (kind == CACHE) {
      rc = do_cache(x, m, p->keys + at * ks, p->ids + at, out, wk, wv, c);
      continue;
    }
    for (size_t i = at; i < at + m; i++) {
      if (kind == WRITES && p->is_write[i]) {
        memcpy(wk + nw * ks, p->keys + i * ks, ks);
        memcpy(wv + nw++ * vs, p->vals + i * vs, vs);
      } else {
        memcpy(rk + nr++ * ks, p->keys + i * ks, ks);
      }
    }
    if (nw) rc = do_writes(x, nw, wk, wv, c);
    if (nr && !rc) rc = do_reads(x, nr, rk, out, c);
  }
  free(wk);
  free(wv);
  free(rk);
  return rc;
}

static void global_rmadht(rmadht *t, struct counts *c) {
  rmadht_stats s;
  rmadht_get_stats_global(t, &s);
  c->round_trips = s.round_trips;
  c->retries = s.checksum_retries;
}

/* The one-sided calls made since *from, into *out. */
static void rma_since(const struct rma_count *from, struct rma_count *out) {
  const uint64_t *a = (const uint64_t *)from;
  uint64_t *b = (uint64_t *)out;
  rma_count_get(out);
  for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++) b[i] -= a[i];
}

/* The one-sided traffic per operation, for the JSON: what each operation
   moves over the window, whatever path and mode. */
static void print_rma(const struct rma_count *r, uint64_t ops) {
  double n = (double)ops, calls = (double)(r->gets + r->puts + r->atomics);
  printf(", \"gets_per_op\": %.4f, \"bytes_got_per_op\": %.1f, "
         "\"puts_per_op\": %.4f, \"bytes_put_per_op\": %.1f, "
         "\"atomics_per_op\": %.4f, \"bytes_atomic_per_op\": %.1f, "
         "\"syncs_per_op\": %.4f, \"locks_per_op\": %.4f, "
         "\"blocks_per_op\": %.4f, \"remote_share\": ",
         (double)r->gets / n, (double)r->get_bytes / n, (double)r->puts / n,
         (double)r->put_bytes / n, (double)r->atomics / n,
         (double)r->atomic_bytes / n, (double)r->syncs / n,
         (double)r->locks / n, (double)r->blocks / n);
  if (calls > 0)
    printf("%.4f", (double)r->remote / calls);
  else
    printf("null");
}

/* How the table under test reaches its slots, for the JSON. */
static const char *path_of(const struct target *x) {
  rmadht_info info;
  if (!x->t) return "in-process";
  rmadht_get_info(x->t, &info);
  return info.node_local ? "node-local" : "rma";
}

static int phase(struct target *x, const char *mode, const char *dist,
                 const char *name, const struct ops *p, enum kind kind,
                 unsigned char *out, int rank, int nranks) {
  struct counts c = {0}, before = {0}, after = {0}, sum;
  struct rma_count rma0;
  if (x->t) global_rmadht(x->t, &before);
  MPI_Barrier(MPI_COMM_WORLD);
  rma_count_get(&rma0);
  double t0 = MPI_Wtime();
  int rc = run_ops(x, p, kind, out, &c);
  if (x->t && !rc) rc = rmadht_flush(x->t);
  rma_since(&rma0, &c.rma);
  int worst = rc, any;
  MPI_Allreduce(&worst, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  double secs = MPI_Wtime() - t0, slowest;
  MPI_Allreduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (any < 0) {
    if (rank == 0)
      fprintf(stderr, "rmadht-bench: %s %s %s failed: %s\n", mode, dist, name,
              rmadht_strerror(any));
    return any;
  }
  if (x->t) global_rmadht(x->t, &after);
  if (kind == UPDATES) {
    rc = count_lost(x, p, rank, nranks, &c.lost);
    if (rc) return rc;
    if (rank) c.lost = 0; /* already summed */
  }
  MPI_Allreduce(&c, &sum, sizeof c / sizeof(uint64_t), MPI_UINT64_T, MPI_SUM,
                MPI_COMM_WORLD);
  if (rank == 0) {
    uint64_t ops = sum.reads + sum.writes + sum.updates;
    printf("{\"mode\": \"%s\", \"path\": \"%s\", \"distribution\": \"%s\", "
           "\"phase\": \"%s\", \"ranks\": %d, \"batch\": %zu, \"ops\": %llu, "
           "\"write_queue\": %d, \"seconds\": %.4f, \"mops\": %.3f, ",
           mode, path_of(x), dist, name, nranks, x->o->batch, (unsigned long long)ops,
           x->o->write_queue, slowest, (double)ops / slowest / 1e6);
    if (x->t)
      printf("\"create_seconds\": %.6f, \"create_bytes\": %.0f, "
             "\"mpi_bytes\": %.0f, ",
             x->create_seconds, x->create_bytes, x->mpi_bytes);
    else
      printf("\"create_seconds\": null, \"create_bytes\": null, "
             "\"mpi_bytes\": null, ");
    if (sum.reads)
      printf("\"hit_rate\": %.4f, ", (double)sum.hits / (double)sum.reads);
    else
      printf("\"hit_rate\": null, ");
    printf("\"round_trips_per_op\": %.4f, \"evictions\": %llu, "
           "\"checksum_retries\": %llu",
           (double)(after.round_trips - before.round_trips) / (double)ops,
           (unsigned long long)sum.evictions,
           (unsigned long long)(after.retries - before.retries));
    print_rma(&sum.rma, ops);
    if (kind == UPDATES)
      printf(", \"lost_updates\": %llu, \"ok\": %s",
             (unsigned long long)sum.lost, sum.lost ? "false" : "true");
    printf("}\n");
    fflush(stdout);
    fprintf(stderr, "rmadht-bench: %s %s %s: %.2f Mops/s\n", mode, dist, name,
            (double)ops / slowest / 1e6);
    if (sum.lost)
      fprintf(stderr, "rmadht-bench: %s %s %s: %llu updates lost\n", mode,
              dist, name, (unsigned long long)sum.lost);
  }
  return sum.lost ? RMADHT_ERR_CONTENDED : 0;
}

/* The phases, in the order they run.  Each one's keys are its own, except
 * the read phase's, which are the write phase's: reads without writes
 * measure misses. */
enum phase_id { P_WRITE, P_READ, P_MIXED, P_UPDATE, P_CONTENDED, P_CACHE,
                NPHASES };
static const char *const phase_names[NPHASES] = {
    "write", "read", "mixed", "update", "update-contended", "cache"};
#define ALL_PHASES ((1u << NPHASES) - 1)
#define WANTS(o, id) ((o)->phases >> (id) & 1u)

/* The bits of a comma-separated list of phase names, or of "all"; 0 if a
 * name is unknown, so that a typo is an error rather than a run that
 * measures nothing. */
static unsigned parse_phases(const char *list) {
  if (!strcmp(list, "all")) return ALL_PHASES;
  unsigned bits = 0;
  for (const char *p = list;; p++) {
    size_t n = strcspn(p, ","), i = 0;
    while (i < NPHASES &&
           (strlen(phase_names[i]) != n || strncmp(p, phase_names[i], n)))
      i++;
    if (i == NPHASES) return 0;
    bits |= 1u << i;
    p += n;
    if (!*p) return bits;
  }
}

/* The heap this process has taken, mapped blocks included, for what
   rmadht_create costs per rank as ranks grow (docs/explanation/scaling.md). */
static double heap_bytes(void) {
  struct mallinfo2 m = mallinfo2();
  return (double)m.uordblks + (double)m.hblkhd;
}

/* The heap before a collective call whose cost heap_since measures.  The
   barriers keep every rank's other allocations out of the difference:
   SMPI runs every simulated rank in one process, on one heap.  The
   reduction makes, if not yet made, what MPI keeps once per communicator
   for reductions on it (SMPI 3.32: about 190 bytes per rank and peer),
   which would otherwise be charged to the first call that reduces over
   MPI_COMM_WORLD: rmadht_create's agreements. */
static double heap_before(void) {
  int any = 0, all;
  MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double h = heap_bytes();
  MPI_Barrier(MPI_COMM_WORLD);
  return h;
}

/* The heap taken per rank since heap_before, the largest of any rank. */
static double heap_since(double before, int nranks) {
  MPI_Barrier(MPI_COMM_WORLD);
  double grew = heap_bytes() - before, most;
#ifdef SMPI_H
  grew /= nranks;
#else
  (void)nranks;
#endif
  MPI_Allreduce(&grew, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return most;
}

/* The heap per rank of what rmadht_create asks of MPI, made bare: two
   communicators, a window of the table's size and a lock_all epoch.  What
   of create_bytes is MPI's, and so what is rmadht's own. */
static double bare_mpi_bytes(size_t bytes, int nranks) {
  double before = heap_before();
  MPI_Comm dup, node;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  void *base;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, dup, &base, &win);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  double grew = heap_since(before, nranks);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  MPI_Comm_free(&dup);
  return grew;
}

static int run(const struct options *o, enum rmadht_mode mode, int zipf,
               int rank, int nranks) {
  const char *mname = o->local ? "local" : rmadht_mode_name(mode);
  const char *dname = zipf ? "zipf" : "uniform";
  double *cdf = zipf ? zipf_cdf(o->distinct, o->skew) : NULL;
  struct ops w = {0}, m = {0}, u = {0}, h = {0}, k = {0};
  struct target x = {NULL, NULL, o, malloc(o->batch * sizeof(int))};
  unsigned char *out = malloc(o->batch * o->value_size);
  int rc = (zipf && !cdf) || !x.status || !out ? RMADHT_ERR_NOMEM : 0;
  uint64_t seed = (uint64_t)rank * 7919 + (uint64_t)zipf;
  if (!rc) rc = make_ops(&w, o, o->write_ops, cdf, seed + 1, 1.0);
  if (!rc) rc = make_ops(&m, o, o->mixed_ops, cdf, seed + 2, o->write_share);
  if (!rc && o->local) {
    x.local = local_create(o->key_size, o->value_size, o->bytes_per_rank);
    if (!x.local) rc = RMADHT_ERR_NOMEM;
  } else if (!rc) {
    rmadht_config cfg;
    rmadht_config_default(&cfg, o->key_size, o->value_size);
    cfg.mode = mode;
    cfg.bytes_per_rank = o->bytes_per_rank;
    cfg.node_local = !o->rma;
    cfg.gather = o->gather;
    cfg.write_queue = o->write_queue;
    double heap0 = heap_before();
    double t0 = MPI_Wtime();
    rc = rmadht_create(MPI_COMM_WORLD, &cfg, &x.t);
    double secs = MPI_Wtime() - t0;
    x.create_bytes = heap_since(heap0, nranks);
    MPI_Allreduce(&secs, &x.create_seconds, 1, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    x.mpi_bytes = bare_mpi_bytes(o->bytes_per_rank, nranks);
  }
  /* Update keys are fresh (ids past the others), so counts start at 0. */
  if (!rc && !o->local)
    rc = make_update_ops(&u, o, o->write_ops, cdf, seed + 3, o->distinct,
                         o->distinct, 0, rank);
  if (!rc && !o->local)
    rc = make_update_ops(&h, o, o->contended_ops, NULL, 0, 2 * o->distinct,
                         16, 1, rank);
  /* The cache phase's keys are fresh too: its first reads miss. */
  if (!rc)
    rc = make_update_ops(&k, o, o->write_ops, cdf, seed + 4, 3 * o->distinct,
                         o->distinct, 0, rank);
  if (!rc && WANTS(o, P_WRITE))
    rc = phase(&x, mname, dname, phase_names[P_WRITE], &w, WRITES, out, rank,
               nranks);
  if (!rc && WANTS(o, P_READ))
    rc = phase(&x, mname, dname, phase_names[P_READ], &w, READS, out, rank,
               nranks);
  if (!rc && WANTS(o, P_MIXED))
    rc = phase(&x, mname, dname, phase_names[P_MIXED], &m, WRITES, out, rank,
               nranks);
  if (!rc && !o->local && WANTS(o, P_UPDATE))
    rc = phase(&x, mname, dname, phase_names[P_UPDATE], &u, UPDATES, out,
               rank, nranks);
  if (!rc && !o->local && WANTS(o, P_CONTENDED))
    rc = phase(&x, mname, dname, phase_names[P_CONTENDED], &h, UPDATES, out,
               rank, nranks);
  if (!rc && WANTS(o, P_CACHE))
    rc = phase(&x, mname, dname, phase_names[P_CACHE], &k, CACHE, out, rank,
               nranks);
  if (x.t) rmadht_free(&x.t);
  local_free(x.local);
  free_ops(&w);
  free_ops(&m);
  free_ops(&u);
  free_ops(&h);
  free_ops(&k);
  free(cdf);
  free(x.status);
  free(out);
  return rc;
}

static void usage(void) {
  fprintf(stderr,
    "usage: mpiexec -n P rmadht-bench [options]\n"
    "  --mode lockfree|fine|coarse|all   consistency mode (all)\n"
    "  --dist uniform|zipf|all           key distribution (all)\n"
    "  --phases P,...                    write,read,mixed,update,\n"
    "                                    update-contended,cache (all)\n"
    "  --batch B                         ops per batch call (1: single calls)\n"
    "  --local                           plain in-process table, no MPI RMA\n"
    "  --rma                             no node-local path: RMA throughout\n"
    "  --gather auto|target|block        RMA messages per target (auto)\n"
    "  --write-queue Q                   queue up to Q single writes (0)\n"
    "  --write-ops N                     write (and read) ops per rank (500000)\n"
    "  --mixed-ops N                     mixed ops per rank (1000000)\n"
    "  --contended-ops N                 updates per rank on 16 keys (100000)\n"
    "  --scale F                         multiply the op counts by F\n"
    "  --keys N                          distinct keys (712500)\n"
    "  --skew S                          Zipf skew (0.99)\n"
    "  --mb-per-rank M                   table memory per rank (256)\n"
    "  --key-size K --value-size V       bytes (80, 104)\n");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  struct options o = {80,   104,  (size_t)256 << 20, 712500, 1, 500000,
                      1000000, 100000, 0.99, 0.05, 0, 0, RMADHT_GATHER_AUTO, 0,
                      "all", "all", ALL_PHASES};
  double scale = 1;
  static const struct option longs[] = {
      {"mode", 1, 0, 'm'},       {"dist", 1, 0, 'd'},
      {"batch", 1, 0, 'b'},      {"local", 0, 0, 'l'},
      {"write-ops", 1, 0, 'w'},  {"mixed-ops", 1, 0, 'x'},
      {"scale", 1, 0, 's'},      {"keys", 1, 0, 'k'},
      {"skew", 1, 0, 'z'},       {"mb-per-rank", 1, 0, 'M'},
      {"key-size", 1, 0, 'K'},   {"value-size", 1, 0, 'V'},
      {"rma", 0, 0, 'r'},        {"help", 0, 0, 'h'},
      {"contended-ops", 1, 0, 'c'}, {"gather", 1, 0, 'g'},
      {"write-queue", 1, 0, 'q'}, {"phases", 1, 0, 'p'},
      {0, 0, 0, 0}};
  int c, bad = 0;
  while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
    switch (c) {
      case 'm': o.modes = optarg; break;
      case 'd': o.dists = optarg; break;
      case 'p':
        o.phases = parse_phases(optarg);
        bad |= !o.phases;
        break;
      case 'b': o.batch = strtoul(optarg, NULL, 10); break;
      case 'l': o.local = 1; break;
      case 'r': o.rma = 1; break;
      case 'g':
        o.gather = !strcmp(optarg, "auto")     ? RMADHT_GATHER_AUTO
                   : !strcmp(optarg, "target") ? RMADHT_GATHER_TARGET
                   : !strcmp(optarg, "block")  ? RMADHT_GATHER_BLOCK
                                               : -1;
        bad |= o.gather < 0;
        break;
      case 'q': o.write_queue = atoi(optarg); break;
      case 'w': o.write_ops = strtoul(optarg, NULL, 10); break;
      case 'x': o.mixed_ops = strtoul(optarg, NULL, 10); break;
      case 'c': o.contended_ops = strtoul(optarg, NULL, 10); break;
      case 's': scale = strtod(optarg, NULL); break;
      case 'k': o.distinct = strtoul(optarg, NULL, 10); break;
      case 'z': o.skew = strtod(optarg, NULL); break;
      case 'M': o.bytes_per_rank = strtoul(optarg, NULL, 10) << 20; break;
      case 'K': o.key_size = strtoul(optarg, NULL, 10); break;
      case 'V': o.value_size = strtoul(optarg, NULL, 10); break;
      default: bad = 1;
    }
  }
  o.write_ops = (size_t)((double)o.write_ops * scale);
  o.mixed_ops = (size_t)((double)o.mixed_ops * scale);
  o.contended_ops = (size_t)((double)o.contended_ops * scale);
  if (bad || optind < argc || o.batch == 0 || o.distinct == 0 ||
      o.key_size < 8 || o.value_size < 8 || o.write_ops == 0 ||
      o.mixed_ops == 0 || o.contended_ops == 0) {
    if (rank == 0) usage();
    MPI_Finalize();
    return 2;
  }
  static const enum rmadht_mode modes[] = {RMADHT_LOCK_FREE, RMADHT_FINE_LOCK,
                                           RMADHT_COARSE_LOCK};
  int rc = 0;
  for (int mi = 0; mi < 3 && !rc; mi++) {
    const char *name = rmadht_mode_name(modes[mi]);
    if (o.local ? mi > 0 : strcmp(o.modes, "all") && strcmp(o.modes, name))
      continue;
    for (int zipf = 0; zipf < 2 && !rc; zipf++) {
      if (strcmp(o.dists, "all") && strcmp(o.dists, zipf ? "zipf" : "uniform"))
        continue;
      rc = run(&o, modes[mi], zipf, rank, nranks);
    }
  }
  MPI_Finalize();
  return rc ? 1 : 0;
}
