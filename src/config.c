/*
 * Configuration: defaults, the checks one rank can make alone, and the one
 * allreduce that makes every rank agree on the outcome of rmadht_create.
 */
#include "config.h"
#include "progress.h"
#include "write_queue.h"

#include <stdatomic.h>
#include <xxhash.h>

void rmadht_config_default(rmadht_config *cfg, size_t key_size,
                           size_t value_size) {
  if (!cfg) return;
  cfg->key_size = key_size;
  cfg->value_size = value_size;
  cfg->bytes_per_rank = (size_t)64 << 20;
  cfg->mode = RMADHT_LOCK_FREE;
  cfg->hash = NULL;
  cfg->hash_arg = NULL;
  cfg->node_local = 1;
  cfg->progress_us = 0;
  cfg->gather = RMADHT_GATHER_AUTO;
  cfg->write_queue = 0;
}

int config_check_local(const rmadht_config *cfg, struct slot_layout *layout) {
  if (!cfg || cfg->key_size == 0 || cfg->value_size == 0) return RMADHT_ERR_ARG;
  if (cfg->mode != RMADHT_LOCK_FREE && cfg->mode != RMADHT_FINE_LOCK &&
      cfg->mode != RMADHT_COARSE_LOCK)
    return RMADHT_ERR_ARG;
  if (cfg->node_local != 0 && cfg->node_local != 1) return RMADHT_ERR_ARG;
  if (cfg->progress_us < 0 || cfg->progress_us > 1000000) return RMADHT_ERR_ARG;
  if (cfg->gather != RMADHT_GATHER_AUTO && cfg->gather != RMADHT_GATHER_TARGET &&
      cfg->gather != RMADHT_GATHER_BLOCK)
    return RMADHT_ERR_ARG;
  if (cfg->write_queue < 0 || cfg->write_queue > WRITE_QUEUE_MAX)
    return RMADHT_ERR_ARG;
  /* MPI counts are int: one group must fit in a single get. */
  if (cfg->key_size > INT32_MAX / 4 || cfg->value_size > INT32_MAX / 4)
    return RMADHT_ERR_SIZE;
  /* Lock-free tables keep a tag per slot, which single reads fetch
     (lockfree.c) and the node-local path scans; the fine-lock mode keeps
     a lock word per group. */
  int rc = slot_layout_init(layout, cfg->key_size, cfg->value_size,
                            cfg->bytes_per_rank,
                            cfg->mode == RMADHT_FINE_LOCK   ? FRONT_LOCK
                            : cfg->mode == RMADHT_LOCK_FREE ? FRONT_TAGS
                                                            : FRONT_NONE);
  if (rc) return rc;
  if (layout->group_bytes > INT32_MAX) return RMADHT_ERR_SIZE;
  return RMADHT_OK;
}

/* Fields compared across ranks, then two that are only combined: the
   number of tables this process created so far, and rank 0's salt. */
enum {
  F_ERR, F_KEY, F_VALUE, F_BYTES, F_MODE, F_HASH, F_NODE_LOCAL, F_FORMAT,
  F_PROGRESS, F_NO_THREADS, NFIELDS
};
enum { F_SERIAL = 2 * NFIELDS, F_SALT, NALL };

/* Tables created by this process, so that tables created one after another
   get different identifiers. */
static _Atomic uint64_t tables_created;

/* Rank 0's salt, so that tables of unrelated runs or communicators differ
   too: the clock and an address (randomised by the loader). */
static uint64_t salt(void) {
  double now = MPI_Wtime();
  uint64_t mix[2] = {(uint64_t)(uintptr_t)&now, 0};
  memcpy(&mix[1], &now, sizeof now);
  return XXH3_64bits(mix, sizeof mix);
}

int config_agree(MPI_Comm comm, const rmadht_config *cfg, int local_rc,
                 uint64_t *id) {
  /* MAX over (v, ~v) yields max(v) and ~min(v) in one call. */
  uint64_t v[NALL] = {0};
  v[F_ERR] = (uint64_t)-(int64_t)local_rc;
  if (local_rc == RMADHT_OK) {
    v[F_KEY] = cfg->key_size;
    v[F_VALUE] = cfg->value_size;
    v[F_BYTES] = cfg->bytes_per_rank;
    v[F_MODE] = (uint64_t)cfg->mode;
    v[F_HASH] = cfg->hash != NULL;
    /* The locked modes ignore the flag, so it need not agree there. */
    v[F_NODE_LOCAL] =
        cfg->mode == RMADHT_LOCK_FREE ? (uint64_t)cfg->node_local : 0;
    v[F_FORMAT] = SLOT_GROUP << 16 | SLOT_HEADER;
    v[F_PROGRESS] = (uint64_t)cfg->progress_us;
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    v[F_NO_THREADS] = cfg->progress_us > 0 && level != MPI_THREAD_MULTIPLE;
  }
  for (int f = 0; f < NFIELDS; f++) v[NFIELDS + f] = ~v[f];
  int rank;
  MPI_Comm_rank(comm, &rank);
  v[F_SERIAL] = atomic_load(&tables_created) + 1;
  if (rank == 0) v[F_SALT] = salt();
  uint64_t r[NALL];
  if (MPI_Allreduce(v, r, NALL, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  atomic_store(&tables_created, r[F_SERIAL]);
  /* Never 0, which an all-zero location carries. */
  *id = XXH3_64bits(&r[F_SERIAL], 2 * sizeof r[0]) | 1u;
  if (r[F_ERR] != 0) {
    /* Every rank reports the gravest error any rank found. */
    return -(int)r[F_ERR];
  }
  /* A progress thread without MPI_THREAD_MULTIPLE is a bad argument on
     every rank, with the reason on every rank too. */
  if (r[F_NO_THREADS]) {
    rmadht_detail_set(progress_needs_threads);
    return RMADHT_ERR_ARG;
  }
  for (int f = 0; f < NFIELDS; f++)
    if (r[f] != ~r[NFIELDS + f]) return RMADHT_ERR_MISMATCH;
  return RMADHT_OK;
}

int config_agree_rc(MPI_Comm comm, int local_rc) {
  int worst = -local_rc, all;
  if (MPI_Allreduce(&worst, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  if (all == 0) return RMADHT_OK;
  /* A rank that failed itself keeps its own code; the others learn that a
     peer failed. */
  return local_rc ? local_rc : RMADHT_ERR_REMOTE;
}
