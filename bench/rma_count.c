/* The counting wrappers of rma_count.h.  Each counts, then calls the MPI
   library's own entry point (PMPI_...).  A single-threaded benchmark calls
   them, so plain counters do. */
#include "rma_count.h"

#include <mpi.h>

#ifdef SMPI_H
/* Built with smpicc for the simulation (tools/scale/): SMPI 3.32 declares
   MPI-3.0's MPI_Compare_and_swap (compare buffer not const), and its
   compare-and-swap and lock modes need the fixes of smpi_fixes.c. */
#include "smpi_fixes.h"
#define CAS_COMPARE_CONST
#define CAS smpi_fix_compare_and_swap
#define LOCK smpi_fix_lock
#define UNLOCK smpi_fix_unlock
#else
#define CAS_COMPARE_CONST const
#define CAS PMPI_Compare_and_swap
#define LOCK PMPI_Win_lock
#define UNLOCK PMPI_Win_unlock
#endif

static struct rma_count total;

void rma_count_get(struct rma_count *out) { *out = total; }

static uint64_t bytes(int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return (uint64_t)count * (uint64_t)size;
}

/* Contiguous blocks in count items of a target datatype: an hindexed
   type's blocks (rmadht's gathered gets and puts), else 1 per call. */
static uint64_t blocks(int count, MPI_Datatype type) {
  int ni, na, nd, combiner;
  PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_HINDEXED) return (uint64_t)count * (uint64_t)(ni - 1);
  return 1;
}

/* Counts a transfer to rank; the caller's world rank is asked once. */
static void to(int rank) {
  static int me = -1;
  if (me < 0) PMPI_Comm_rank(MPI_COMM_WORLD, &me);
  total.remote += rank != me;
}

int MPI_Get(void *origin, int origin_count, MPI_Datatype origin_type,
            int rank, MPI_Aint disp, int count, MPI_Datatype type,
            MPI_Win win) {
  total.gets++;
  total.get_bytes += bytes(origin_count, origin_type);
  total.blocks += blocks(count, type);
  to(rank);
  return PMPI_Get(origin, origin_count, origin_type, rank, disp, count, type,
                  win);
}

int MPI_Put(const void *origin, int origin_count, MPI_Datatype origin_type,
            int rank, MPI_Aint disp, int count, MPI_Datatype type,
            MPI_Win win) {
  total.puts++;
  total.put_bytes += bytes(origin_count, origin_type);
  total.blocks += blocks(count, type);
  to(rank);
  return PMPI_Put(origin, origin_count, origin_type, rank, disp, count, type,
                  win);
}

int MPI_Compare_and_swap(const void *origin, CAS_COMPARE_CONST void *compare,
                         void *result, MPI_Datatype type, int rank,
                         MPI_Aint disp, MPI_Win win) {
  total.atomics++;
  total.atomic_bytes += bytes(1, type);
  to(rank);
  return CAS(origin, compare, result, type, rank, disp, win);
}

int MPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type,
                     int rank, MPI_Aint disp, MPI_Op op, MPI_Win win) {
  total.atomics++;
  total.atomic_bytes += bytes(1, type);
  to(rank);
  return PMPI_Fetch_and_op(origin, result, type, rank, disp, op, win);
}

int MPI_Accumulate(const void *origin, int origin_count,
                   MPI_Datatype origin_type, int rank, MPI_Aint disp,
                   int count, MPI_Datatype type, MPI_Op op, MPI_Win win) {
  total.atomics++;
  total.atomic_bytes += bytes(origin_count, origin_type);
  to(rank);
  return PMPI_Accumulate(origin, origin_count, origin_type, rank, disp, count,
                         type, op, win);
}

int MPI_Get_accumulate(const void *origin, int origin_count,
                       MPI_Datatype origin_type, void *result,
                       int result_count, MPI_Datatype result_type, int rank,
                       MPI_Aint disp, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Win win) {
  total.atomics++;
  total.atomic_bytes += bytes(result_count, result_type);
  to(rank);
  return PMPI_Get_accumulate(origin, origin_count, origin_type, result,
                             result_count, result_type, rank, disp, count,
                             type, op, win);
}

int MPI_Win_flush(int rank, MPI_Win win) {
  total.syncs++;
  return PMPI_Win_flush(rank, win);
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
  total.syncs++;
  return PMPI_Win_flush_local(rank, win);
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  total.syncs++;
  return UNLOCK(rank, win);
}

int MPI_Win_lock(int type, int rank, int assert, MPI_Win win) {
  total.locks++;
  return LOCK(type, rank, assert, win);
}
