/* SPDX-License-Identifier: BSD-3-Clause */
/* SMPI fault 1 (smpi_fixes.c): every rank increments one counter on rank 0
   100 times by MPI_Compare_and_swap, retrying lost swaps; the counter must
   end at 100 x ranks.  SimGrid 3.32's SMPI ends below (319 of 400 on 4
   ranks): its compare-and-swap is not atomic.  Exits 1 then.
     smpirun -np 4 -platform P fault-cas */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  uint32_t *base;
  MPI_Win win;
  MPI_Win_allocate(4, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < 100; i++) {
    uint32_t seen = 0, want, got;
    MPI_Fetch_and_op(NULL, &seen, MPI_UINT32_T, 0, 0, MPI_NO_OP, win);
    MPI_Win_flush(0, win);
    for (;;) {
      want = seen + 1;
      MPI_Compare_and_swap(&want, &seen, &got, MPI_UINT32_T, 0, 0, win);
      MPI_Win_flush(0, win);
      if (got == seen) break;
      seen = got;
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  int bad = 0;
  if (rank == 0) {
    printf("counter %u, expected %d\n", (unsigned)*base, 100 * n);
    bad = *base != (uint32_t)(100 * n);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return bad;
}
