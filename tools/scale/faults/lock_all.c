/* SPDX-License-Identifier: BSD-3-Clause */
/* SMPI fault 3 (smpi_fixes.c): under MPI_Win_lock_all every get searches
   the target's list of lockers, which holds every rank: the simulator's
   own time per get grows with the ranks.  Every rank does 2000 gets and
   flushes to its neighbour; rank 0 prints the wall-clock microseconds per
   get (not simulated time).  Compare -np 64 with -np 512.
     smpirun -np N -platform P fault-lock_all */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  long *base, v;
  MPI_Win win;
  MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  MPI_Win_lock_all(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  for (int i = 0; i < 2000; i++) {
    MPI_Get(&v, 1, MPI_LONG, (rank + 1) % n, 0, 1, MPI_LONG, win);
    MPI_Win_flush((rank + 1) % n, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("%d ranks: %.2f us of wall clock per get\n", n,
           1e6 * (now() - t0) / (2000.0 * n));
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
