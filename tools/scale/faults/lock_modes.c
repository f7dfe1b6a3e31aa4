/* SPDX-License-Identifier: BSD-3-Clause */
/* SMPI fault 2 (smpi_fixes.c): rank 0 holds a shared lock on rank 0's
   window while rank 1 asks for an exclusive one, then the other way
   round, as rmadht's coarse mode does (shared to read, exclusive to
   write).  Any MPI completes; SimGrid 3.32's SMPI keeps one lock mode per
   window and aborts (or hangs; run it under timeout).
     smpirun -np 2 -platform P fault-lock_modes */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int *base, v = 0;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 10; i++) {
    int type = (i + rank) % 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    MPI_Win_lock(type, 0, 0, win);
    MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("mixed lock modes: done\n");
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
