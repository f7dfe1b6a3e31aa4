/* SPDX-License-Identifier: BSD-3-Clause */
/* SMPI fault, worked around in smpi_fixes.c: every rank increments one
   counter on rank 0 100 times under an exclusive MPI_Win_lock (get,
   flush, put, unlock), as rmadht's coarse mode updates an entry; the
   counter must end at 100 x ranks, as it does under Open MPI 4.1.4 and
   MPICH 4.0.2.  SimGrid 3.32's SMPI ends below (250 of 400 on 4 ranks,
   850 of 1600 on 16): its exclusive lock does not keep another rank out
   between the get and the put.  Exits 1 then.
     smpirun -np 4 -platform P fault-lock_update */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  uint64_t *base;
  MPI_Win win;
  MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 100; i++) {
    uint64_t v = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Get(&v, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, win);
    MPI_Win_flush(0, win);
    v++;
    MPI_Put(&v, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int bad = 0;
  if (rank == 0) {
    printf("counter %llu, expected %d\n", (unsigned long long)*base, 100 * n);
    bad = *base != (uint64_t)(100 * n);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return bad;
}
