/*
 * A table of POET's size: its API counts buckets per rank, rmadht counts
 * bytes.  The slot geometry comes from the public rmadht_get_info of a
 * small probe table, so this layer needs no knowledge of the slot layout
 * beyond what rmadht.h documents.
 */
#include "poet_table.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* What a table costs beyond its slots, as rmadht.h documents it: the
   node-local path's tags, 32 bytes a group, rounded up to 64.  The created
   table is checked below, so a change there costs a retry, not a fault. */
#define GROUP_EXTRA 32
#define TABLE_EXTRA 64
#define MAX_TRIES 3

uint64_t poet_mix(uint64_t h) {
  /* The finaliser of SplitMix64 (Steele, Lea and Flood 2014). */
  h = (h ^ (h >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  h = (h ^ (h >> 27)) * UINT64_C(0x94d049bb133111eb);
  return h ^ (h >> 31);
}

/* Bytes for groups groups of info's geometry, 0 on overflow. */
static size_t bytes_for(const rmadht_info *info, uint64_t groups) {
  size_t per_group = info->slot_size * info->slots_per_group + GROUP_EXTRA;
  if (groups > (SIZE_MAX - TABLE_EXTRA) / per_group) return 0;
  return (size_t)groups * per_group + TABLE_EXTRA;
}

/* Collective: the geometry of a table with cfg's sizes. */
static int probe(MPI_Comm comm, const rmadht_config *cfg, rmadht_info *info) {
  rmadht_config small = *cfg;
  size_t entry = cfg->key_size + cfg->value_size;
  /* Room for a group of up to 64 slots; 0 (refused) when it overflows. */
  small.bytes_per_rank =
      entry > (SIZE_MAX - TABLE_EXTRA) / 64 - GROUP_EXTRA
          ? 0
          : 64 * (entry + GROUP_EXTRA) + TABLE_EXTRA;
  rmadht *t = NULL;
  int rc = rmadht_create(comm, &small, &t);
  if (rc) return rc;
  rc = rmadht_get_info(t, info);
  int rc2 = rmadht_free(&t);
  return rc ? rc : rc2;
}

/* POET does not check what DHT_create returns, and would go on with every
   read a miss: so the lowest rank that failed itself (not only heard that
   a peer did) says why, once, on stderr. */
static void say_why(MPI_Comm comm, int rc, const char *reason) {
  int rank = 0, first = 0;
  MPI_Comm_rank(comm, &rank);
  int mine = rc == RMADHT_ERR_REMOTE ? INT_MAX : rank;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    first = mine;
  if (first != rank) return;
  const char *detail = reason ? reason : rmadht_error_detail();
  fprintf(stderr, "rmadht: DHT_create failed on rank %d: %s%s%s\n", rank,
          rmadht_strerror(rc), *detail ? ": " : "", detail);
}

int poet_table_create(struct poet_table *p, int ok, MPI_Comm comm,
                      uint64_t buckets, uint64_t max_slots, long long data_size,
                      long long key_size,
                      uint64_t (*hash)(const void *, size_t, void *),
                      void *hash_arg) {
  p->t = NULL;
  p->comm = MPI_COMM_NULL;
  p->evictions = p->read_misses = 0;
  /* Every rank duplicates comm, its own arguments good or not: the
     duplication is collective, and the others would wait for a rank that
     skipped it. */
  if (comm == MPI_COMM_NULL || MPI_Comm_dup(comm, &p->comm) != MPI_SUCCESS) {
    p->comm = MPI_COMM_NULL;
    ok = 0;
  }
  if (ok && MPI_Comm_rank(p->comm, &p->rank) != MPI_SUCCESS) ok = 0;
  rmadht_config cfg;
  rmadht_config_default(&cfg, key_size > 0 ? (size_t)key_size : 0,
                        data_size > 0 ? (size_t)data_size : 0);
  cfg.mode = RMADHT_LOCK_FREE;
  cfg.hash = hash;
  cfg.hash_arg = hash_arg;
  /* A rank that failed still takes part in every collective create with a
     configuration rmadht refuses, so all ranks fail alike. */
  if (!ok) cfg.key_size = 0;
  rmadht_info info;
  const char *reason = NULL, *too_many =
      "more buckets a rank than an index of 2^32 can name";
  int rc = probe(comm, &cfg, &info);
  if (buckets == 0) buckets = 1;
  uint64_t groups = 0;
  if (!rc) {
    groups = buckets / info.slots_per_group +
             (buckets % info.slots_per_group != 0);
    /* Refused before anything is allocated; the same on every rank. */
    if (groups > max_slots / info.slots_per_group) {
      rc = RMADHT_ERR_SIZE;
      reason = too_many;
    }
  }
  for (int i = 0; !rc && i < MAX_TRIES; i++) {
    /* The same on every rank: the geometry and sizes are agreed. */
    cfg.bytes_per_rank = bytes_for(&info, groups);
    rc = rmadht_create(comm, &cfg, &p->t);
    if (rc) break;
    rmadht_info got;
    rc = rmadht_get_info(p->t, &got);
    if (rc) break;
    if (got.slots_per_rank > max_slots) {
      rc = RMADHT_ERR_SIZE;
      reason = too_many;
      break;
    }
    if (got.slots_per_rank >= buckets) break;
    /* Short of groups (more per-group cost than assumed): ask for the
       shortfall once more. */
    groups += groups - got.groups_per_rank;
    rc = rmadht_free(&p->t);
    if (!rc && i + 1 == MAX_TRIES) rc = RMADHT_ERR_SIZE;
  }
  if (rc) {
    if (p->t) rmadht_free(&p->t);
    if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
    say_why(comm, rc, reason);
  }
  return rc;
}

static int clamp_int(uint64_t v) { return v > INT_MAX ? INT_MAX : (int)v; }

int poet_table_free(struct poet_table *p, int *evictions, int *read_misses) {
  uint64_t mine[2] = {p->evictions, p->read_misses}, sum[2] = {0, 0};
  int rc = MPI_Reduce(mine, sum, 2, MPI_UINT64_T, MPI_SUM, 0, p->comm) ==
                   MPI_SUCCESS
               ? RMADHT_OK
               : RMADHT_ERR_MPI;
  if (evictions) *evictions = clamp_int(sum[0]);
  if (read_misses) *read_misses = clamp_int(sum[1]);
  int rc2 = rmadht_free(&p->t);
  MPI_Comm_free(&p->comm);
  return rc ? rc : rc2;
}

int poet_file_code(int rc, int dumping, const struct poet_file_codes *c) {
  switch (rc) {
    case RMADHT_OK: return c->success;
    case RMADHT_ERR_FILE: return c->open;
    case RMADHT_ERR_IO: return dumping ? c->write : c->error;
    case RMADHT_ERR_FORMAT: return c->wrong_file;
    case RMADHT_ERR_NOMEM: return c->no_mem;
    default: return c->error;
  }
}

int poet_table_restore(struct poet_table *p, const char *path,
                       rmadht_stats *before, rmadht_stats *after) {
  int got = rmadht_get_stats(p->t, before) == RMADHT_OK;
  int rc = rmadht_restore(p->t, path);
  if (!got) memset(before, 0, sizeof *before);
  if (!got || rmadht_get_stats(p->t, after) != RMADHT_OK) *after = *before;
  p->evictions += after->evictions - before->evictions;
  return rc;
}
