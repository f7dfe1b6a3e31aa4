/*
 * Creating and freeing a table: the window, the epoch, the working memory.
 */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "config.h"
#include "progress.h"
#include "rma.h"
#include "write_queue.h"

static const struct protocol *protocol_of(const rmadht *t) {
  if (t->peer) return &rmadht_node_local_protocol;
  switch (t->mode) {
    case RMADHT_FINE_LOCK: return &rmadht_fine_protocol;
    case RMADHT_COARSE_LOCK: return &rmadht_coarse_protocol;
    default: return &rmadht_lockfree_protocol;
  }
}

/* Collective.  The ranks of t's communicator that share this rank's node. */
static int split_node(rmadht *t, MPI_Comm *node) {
  return MPI_Comm_split_type(t->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                             node) == MPI_SUCCESS
             ? RMADHT_OK
             : RMADHT_ERR_MPI;
}

/* Whether the node-local path applies: asked for, lock-free, and every
   rank on this rank's node.  Loads and CPU atomics are only coherent with
   each other, so the path is all or nothing: one rank elsewhere, whose
   writes arrive through the network, rules it out.  The layout is the
   lock-free one either way, tags included (config.c).  In a table
   spanning nodes, near says that lock-free reads of the ranks on a rank's
   node may be loads instead (share_node): where any node holds two ranks
   or more, agreed, since it chooses collective calls (a rank alone on its
   node then reads itself by loads). */
static int wants_shared(rmadht *t, const rmadht_config *cfg, MPI_Comm node,
                        int *shared, int *one_node, int *near) {
  int n;
  MPI_Comm_size(node, &n);
  *one_node = n == t->nranks;
  int lockfree = cfg->node_local && t->mode == RMADHT_LOCK_FREE;
  *shared = lockfree && *one_node;
  *near = 0;
  if (!lockfree || *one_node) return RMADHT_OK; /* alike on every rank */
  int several = n > 1;
  return rmadht_mpi(
      MPI_Allreduce(&several, near, 1, MPI_INT, MPI_LOR, t->comm));
}

/* The ranks in t's communicator of node's n ranks, into out. */
static int node_ranks(rmadht *t, MPI_Comm node, int n, int *out) {
  MPI_Group all = MPI_GROUP_NULL, mine = MPI_GROUP_NULL;
  int *in = malloc((size_t)n * sizeof *in);
  if (!in) return RMADHT_ERR_NOMEM;
  for (int i = 0; i < n; i++) in[i] = i;
  int rc = MPI_Comm_group(node, &mine) == MPI_SUCCESS &&
                   MPI_Comm_group(t->comm, &all) == MPI_SUCCESS &&
                   MPI_Group_translate_ranks(mine, n, in, all, out) ==
                       MPI_SUCCESS
               ? RMADHT_OK
               : RMADHT_ERR_MPI;
  for (int i = 0; i < n && !rc; i++)
    if (out[i] < 0 || out[i] >= t->nranks) rc = RMADHT_ERR_MPI;
  if (mine != MPI_GROUP_NULL) MPI_Group_free(&mine);
  if (all != MPI_GROUP_NULL) MPI_Group_free(&all);
  free(in);
  return rc;
}

/* To which ranks gathered gets and puts go one message per block
   (t->per_block, rma.c): to all, none, or those on this rank's node, as
   cfg->gather says. */
static int find_per_block(rmadht *t, int gather, MPI_Comm node) {
  int n;
  MPI_Comm_size(node, &n);
  t->per_block = calloc((size_t)t->nranks, 1);
  int *on = malloc((size_t)n * sizeof *on);
  int rc = t->per_block && on ? node_ranks(t, node, n, on) : RMADHT_ERR_NOMEM;
  if (!rc) {
    for (int r = 0; r < t->nranks; r++)
      t->per_block[r] = gather == RMADHT_GATHER_BLOCK;
    if (gather == RMADHT_GATHER_AUTO)
      for (int i = 0; i < n; i++) t->per_block[on[i]] = 1;
  }
  free(on);
  return rc;
}

/* Every rank's window base, for the node-local path. */
static int query_peers(rmadht *t) {
  t->peer = malloc((size_t)t->nranks * sizeof *t->peer);
  if (!t->peer) return RMADHT_ERR_NOMEM;
  for (int r = 0; r < t->nranks; r++) {
    MPI_Aint size;
    int unit;
    if (MPI_Win_shared_query(t->win, r, &size, &unit, &t->peer[r]) !=
        MPI_SUCCESS)
      return RMADHT_ERR_MPI;
  }
  return RMADHT_OK;
}

/* Where ranks share this node and others do not: each node's ranks
   allocate their segments as one shared window (node), and the table's
   window is made over those segments with MPI_Win_create, so that a
   lock-free read of a rank on this node can be a load (rma_load_group)
   while every write stays RMA.  Only reads: a target's atomics are atomic
   with respect to each other, not to CPU atomics, and the network's
   writes would race stores.  A load sees a put in flight as a get may, and
   the slot's checksum rejects it alike.  That needs the unified memory
   model, where RMA updates reach the memory loads see.  Between two
   emulated hosts, 2 ranks each, this makes a read of the other rank on
   the host cost no round trip (docs/benchmarks/single-operations.md). */
static int share_node(rmadht *t, MPI_Comm node) {
  int n, rc;
  MPI_Comm_size(node, &n);
  MPI_Info info;
  if (MPI_Info_create(&info) != MPI_SUCCESS) return RMADHT_ERR_MPI;
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  rc = MPI_Win_allocate_shared((MPI_Aint)t->layout.window_bytes, 1, info,
                               node, &t->base, &t->near_win);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    t->near_win = MPI_WIN_NULL;
    return rmadht_mpi(rc);
  }
  MPI_Win_set_errhandler(t->near_win, MPI_ERRORS_RETURN);
  memset(t->base, 0, t->layout.window_bytes);
  t->near = calloc((size_t)t->nranks, sizeof *t->near);
  int *on = malloc((size_t)n * sizeof *on);
  rc = t->near && on ? node_ranks(t, node, n, on) : RMADHT_ERR_NOMEM;
  for (int i = 0; i < n && !rc; i++) {
    MPI_Aint size;
    int unit;
    rc = rmadht_mpi(
        MPI_Win_shared_query(t->near_win, i, &size, &unit, &t->near[on[i]]));
  }
  free(on);
  return rc;
}

/* Collective: the table's window over the segment share_node made. */
static int create_over_node(rmadht *t) {
  MPI_Info info;
  if (MPI_Info_create(&info) != MPI_SUCCESS) return RMADHT_ERR_MPI;
  MPI_Info_set(info, "accumulate_ordering", "none");
  int rc = MPI_Win_create(t->base, (MPI_Aint)t->layout.window_bytes, 1, info,
                          t->comm, &t->win);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    t->win = MPI_WIN_NULL;
    return rmadht_mpi(rc);
  }
  MPI_Win_set_errhandler(t->win, MPI_ERRORS_RETURN);
  int *model = NULL, flag = 0;
  MPI_Win_get_attr(t->win, MPI_WIN_MODEL, &model, &flag);
  return flag && *model == MPI_WIN_UNIFIED ? RMADHT_OK : RMADHT_ERR_MPI;
}

/* Undoes share_node and create_over_node. */
static void drop_near(rmadht *t) {
  if (t->win != MPI_WIN_NULL) MPI_Win_free(&t->win);
  if (t->near_win != MPI_WIN_NULL) MPI_Win_free(&t->near_win);
  free(t->near);
  t->near = NULL;
}

/* Reads one byte per page of the other ranks' windows, so that their pages
   are mapped into this process now rather than by a page fault at each
   page's first access, in the middle of timed work.  Each rank then keeps
   page tables for the whole table (2 MB per GB with 4 KB pages), as it
   would after touching it all anyway.  Only after every owner has written
   its own pages, or they would be placed on this rank's NUMA node. */
static void map_peers(rmadht *t, unsigned char **peer) {
  unsigned char sum = 0;
  for (int r = 0; r < t->nranks; r++) {
    if (r == t->rank || !peer[r]) continue;
    for (size_t at = 0; at < t->layout.window_bytes; at += 4096)
      sum ^= ((volatile unsigned char *)peer[r])[at];
  }
  (void)sum;
}

/* What to do when the window cannot be made, for ranks on one node or on
   several.  Debian's Open MPI leaves only its osc/rdma one-sided
   component, which makes windows only where the ranks share a node or the
   network offers RDMA: over TCP between hosts it fails, and only the user
   can choose another at launch. */
static const char *window_remedy(int one_node) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  if (MPI_Get_library_version(version, &len) != MPI_SUCCESS ||
      !strstr(version, "Open MPI"))
    return NULL;
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (one_node)
    return level == MPI_THREAD_MULTIPLE
               ? "With Open MPI on one node under MPI_THREAD_MULTIPLE, choose "
                 "the shared-memory one-sided component at launch: mpiexec "
                 "--mca osc sm ... (osc/pt2pt refuses windows under "
                 "MPI_THREAD_MULTIPLE)"
               : "With Open MPI on one node, choose one-sided components that "
                 "make windows in shared memory at launch: mpiexec --mca osc "
                 "sm,pt2pt ... (or export OMPI_MCA_osc=sm,pt2pt)";
  if (level == MPI_THREAD_MULTIPLE) return progress_pt2pt_remedy;
  return "With Open MPI between hosts without RDMA, choose one-sided "
         "components that work over TCP at launch: mpiexec --mca osc "
         "sm,pt2pt ... (or export OMPI_MCA_osc=sm,pt2pt); see rmadht's "
         "docs/howto/across-hosts.md";
}

/* MPI_Win_allocate rather than MPI_Alloc_mem + MPI_Win_create: measured on
   Open MPI 4.1.4 a get+flush costs ~290 ns on the former and ~1000 ns on
   the latter, and its exclusive lock crashed on the latter.  MPICH needs
   alloc_shm=true or a get costs ~10 us.  A shared window (MPI_Win_allocate_
   shared) serves RMA as fast on both, and also hands out load/store
   pointers; noncontig lets each rank's segment sit on its own NUMA node. */
static int allocate_window(rmadht *t, int shared, int one_node) {
  MPI_Info info;
  if (MPI_Info_create(&info) != MPI_SUCCESS) return RMADHT_ERR_MPI;
  MPI_Info_set(info, "alloc_shm", "true");
  MPI_Info_set(info, "same_size", "true");
  /* Every protocol separates the atomics it needs ordered by a flush. */
  MPI_Info_set(info, "accumulate_ordering", "none");
  int rc;
  if (shared) {
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    rc = MPI_Win_allocate_shared((MPI_Aint)t->layout.window_bytes, 1, info,
                                 t->comm, &t->base, &t->win);
  } else {
    rc = MPI_Win_allocate((MPI_Aint)t->layout.window_bytes, 1, info,
                          t->comm, &t->base, &t->win);
  }
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    t->win = MPI_WIN_NULL;
    return rmadht_mpi_call(rc, shared ? "MPI_Win_allocate_shared"
                                      : "MPI_Win_allocate",
                           window_remedy(one_node));
  }
  MPI_Win_set_errhandler(t->win, MPI_ERRORS_RETURN);
  /* All zero is "never written" for slots and "free" for locks; the owner
     touches its own pages first, so they land on its NUMA node. */
  memset(t->base, 0, t->layout.window_bytes);
  return shared ? query_peers(t) : RMADHT_OK;
}

static void destroy(rmadht *t) {
  progress_stop(t);
  drop_near(t);
  if (t->comm != MPI_COMM_NULL) MPI_Comm_free(&t->comm);
  if (t->pending) pending_destroy(t->pending);
  free(t->pending);
  scratch_destroy(t);
  wq_destroy(t);
  free(t->peer);
  free(t->per_block);
  free(t);
}

int rmadht_create(MPI_Comm comm, const rmadht_config *cfg, rmadht **out) {
  rmadht_detail_clear();
  if (out) *out = NULL;
  if (comm == MPI_COMM_NULL) return RMADHT_ERR_ARG;
  struct slot_layout layout;
  int rc = out ? config_check_local(cfg, &layout) : RMADHT_ERR_ARG;
  uint64_t id;
  rc = config_agree(comm, cfg, rc, &id);
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
    t->near_win = MPI_WIN_NULL;
    t->layout = layout;
    t->id = id;
    t->mode = cfg->mode;
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

  /* This rank's node, asked once for both the node-local path and the
     gathering of messages. */
  int shared = 0, one_node = 0, near = 0;
  MPI_Comm node = MPI_COMM_NULL;
  rc = config_agree_rc(comm, split_node(t, &node));
  if (!rc)
    rc = config_agree_rc(
        comm, wants_shared(t, cfg, node, &shared, &one_node, &near));
  if (!rc) rc = config_agree_rc(comm, find_per_block(t, cfg->gather, node));
  /* Reads by loads are only faster too: where the shared window or the
     window over it cannot be made (Open MPI's osc/pt2pt without osc/sm
     refuses the first), every rank reads by RMA as well, agreed. */
  if (!rc && near) {
    int nrc = config_agree_rc(comm, share_node(t, node));
    if (!nrc) nrc = config_agree_rc(comm, create_over_node(t));
    if (nrc) {
      drop_near(t);
      rmadht_detail_clear();
    }
    near = !nrc;
  }
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  /* The node-local path is only faster, never needed: where its shared
     window cannot be made (Open MPI's osc/pt2pt refuses one), every rank
     takes the RMA path, agreed, with the same layout. */
  if (!rc && shared &&
      config_agree_rc(comm, allocate_window(t, 1, one_node)) != RMADHT_OK) {
    if (t->win != MPI_WIN_NULL) MPI_Win_free(&t->win);
    free(t->peer);
    t->peer = NULL;
    shared = 0;
    rmadht_detail_clear();
  }
  if (!rc && !shared && !near)
    rc = config_agree_rc(comm, allocate_window(t, 0, one_node));
  if (rc) {
    destroy(t);
    return rc;
  }
  t->proto = protocol_of(t);
  int qrc = RMADHT_OK;
  if (t->peer) { /* writes complete at once: nothing is left pending */
    pending_destroy(t->pending);
    free(t->pending);
    t->pending = NULL;
  } else if (cfg->write_queue) {
    /* A write on the node-local path waits for no round trip: only the
       RMA path queues them. */
    qrc = wq_create(t, (size_t)cfg->write_queue);
  }
  /* The locked modes open their epochs per operation; the others keep one
     passive-target epoch to every rank for the table's lifetime. */
  int locked = 0;
  if (t->mode != RMADHT_COARSE_LOCK) {
    rc = rmadht_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, t->win));
    locked = !rc;
  }
  /* The zeroed memory must be visible before any rank reads it: sync the
     window, then agree, which doubles as the barrier. */
  if (locked) rc = rmadht_mpi(MPI_Win_sync(t->win));
  if (cfg->progress_us) { /* collective: every rank starts it */
    int prc = progress_start(t, (unsigned)cfg->progress_us);
    if (!rc) rc = prc;
  }
  rc = config_agree_rc(comm, rc ? rc : qrc);
  if (rc) {
    if (locked) MPI_Win_unlock_all(t->win); /* no epoch may outlive it */
    destroy(t);
    return rc;
  }
  if (t->peer) map_peers(t, t->peer);
  if (t->near) map_peers(t, t->near);
  *out = t;
  return RMADHT_OK;
}

int rmadht_free(rmadht **tp) {
  if (!tp || !*tp) return RMADHT_ERR_ARG;
  rmadht *t = *tp;
  int rc = rmadht_flush(t);
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
  out->node_local = t->peer != NULL;
  out->node_loads = t->near != NULL;
  return RMADHT_OK;
}
