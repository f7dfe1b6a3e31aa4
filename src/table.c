/*
 * Creating and freeing a table: the window, the epoch, the working memory.
 */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "config.h"
#include "rma.h"

static const struct protocol *protocol_of(enum rmadht_mode mode) {
  switch (mode) {
    case RMADHT_FINE_LOCK: return &rmadht_fine_protocol;
    case RMADHT_COARSE_LOCK: return &rmadht_coarse_protocol;
    default: return &rmadht_lockfree_protocol;
  }
}

/* MPI_Win_allocate rather than MPI_Alloc_mem + MPI_Win_create: measured on
   Open MPI 4.1.4 a get+flush costs ~290 ns on the former and ~1000 ns on
   the latter, and its exclusive lock crashed on the latter.  MPICH needs
   alloc_shm=true or a get costs ~10 us. */
static int allocate_window(rmadht *t) {
  MPI_Info info;
  if (MPI_Info_create(&info) != MPI_SUCCESS) return RMADHT_ERR_MPI;
  MPI_Info_set(info, "alloc_shm", "true");
  MPI_Info_set(info, "same_size", "true");
  /* Every protocol separates the atomics it needs ordered by a flush. */
  MPI_Info_set(info, "accumulate_ordering", "none");
  int rc = MPI_Win_allocate((MPI_Aint)t->layout.window_bytes, 1, info,
                            t->comm, &t->base, &t->win);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    t->win = MPI_WIN_NULL;
    return RMADHT_ERR_MPI;
  }
  MPI_Win_set_errhandler(t->win, MPI_ERRORS_RETURN);
  /* All zero is "never written" for slots and "free" for locks. */
  memset(t->base, 0, t->layout.window_bytes);
  return RMADHT_OK;
}

static void destroy(rmadht *t) {
  if (t->win != MPI_WIN_NULL) MPI_Win_free(&t->win);
  if (t->comm != MPI_COMM_NULL) MPI_Comm_free(&t->comm);
  if (t->pending) pending_destroy(t->pending);
  free(t->pending);
  scratch_destroy(t);
  free(t);
}

int rmadht_create(MPI_Comm comm, const rmadht_config *cfg, rmadht **out) {
  if (out) *out = NULL;
  if (comm == MPI_COMM_NULL) return RMADHT_ERR_ARG;
  struct slot_layout layout;
  int rc = out ? config_check_local(cfg, &layout) : RMADHT_ERR_ARG;
  rc = config_agree(comm, cfg, rc);
  if (rc) return rc;

  rmadht *t = calloc(1, sizeof *t);
  int local = t ? RMADHT_OK : RMADHT_ERR_NOMEM;
  /* From here on every rank must reach the same collective calls even if
     its own steps failed, or the others would hang. */
  MPI_Comm dup = MPI_COMM_NULL;
  if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS) local = RMADHT_ERR_MPI;
  if (dup != MPI_COMM_NULL) MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  if (t) {
    t->comm = dup;
    t->win = MPI_WIN_NULL;
    t->layout = layout;
    t->mode = cfg->mode;
    t->proto = protocol_of(cfg->mode);
    t->hash = cfg->hash;
    t->hash_arg = cfg->hash_arg;
    MPI_Comm_rank(comm, &t->rank);
    MPI_Comm_size(comm, &t->nranks);
    if (!local) local = scratch_create(t);
    if (!local && t->mode == RMADHT_LOCK_FREE) {
      t->pending = calloc(1, sizeof *t->pending);
      local = t->pending ? pending_init(t->pending, t->nranks, layout.slot_size)
                         : RMADHT_ERR_NOMEM;
    }
  }
  rc = config_agree_rc(comm, local);
  if (rc) {
    if (t) destroy(t);
    else if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
    return rc;
  }

  rc = allocate_window(t);
  /* The locked modes open their epochs per operation; the others keep one
     passive-target epoch to every rank for the table's lifetime. */
  if (!rc && t->mode != RMADHT_COARSE_LOCK)
    rc = rmadht_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, t->win));
  /* The zeroed memory must be visible before any rank reads it: sync the
     window, then agree, which doubles as the barrier. */
  if (!rc && t->mode != RMADHT_COARSE_LOCK) rc = rmadht_mpi(MPI_Win_sync(t->win));
  rc = config_agree_rc(comm, rc);
  if (rc) {
    destroy(t);
    return rc;
  }
  *out = t;
  return RMADHT_OK;
}

int rmadht_free(rmadht **tp) {
  if (!tp || !*tp) return RMADHT_ERR_ARG;
  rmadht *t = *tp;
  int rc = t->proto->flush(t);
  if (t->mode != RMADHT_COARSE_LOCK) {
    int urc = rmadht_mpi(MPI_Win_unlock_all(t->win));
    if (!rc) rc = urc;
  }
  destroy(t);
  *tp = NULL;
  return rc;
}

int rmadht_get_info(const rmadht *t, rmadht_info *out) {
  if (!t || !out) return RMADHT_ERR_ARG;
  out->key_size = t->layout.key_size;
  out->value_size = t->layout.value_size;
  out->slot_size = t->layout.slot_size;
  out->slots_per_group = SLOT_GROUP;
  out->groups_per_rank = (size_t)t->layout.groups;
  out->slots_per_rank = (size_t)t->layout.groups * SLOT_GROUP;
  out->ranks = t->nranks;
  out->rank = t->rank;
  out->mode = t->mode;
  return RMADHT_OK;
}
