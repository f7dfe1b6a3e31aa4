/* SPDX-License-Identifier: BSD-3-Clause */
/* SMPI 3.32's one-sided faults, worked around for the simulated benchmark
   (smpi_fixes.c says which and why).  Included only where SMPI_H is
   defined, by the counting wrappers (bench/rma_count.c), which call these
   in place of the PMPI entry points they would otherwise use. */
#ifndef RMADHT_SMPI_FIXES_H
#define RMADHT_SMPI_FIXES_H

#include <mpi.h>

/* An atomic MPI_Compare_and_swap. */
int smpi_fix_compare_and_swap(const void *origin, const void *compare,
                              void *result, MPI_Datatype type, int rank,
                              MPI_Aint disp, MPI_Win win);
/* An MPI_Win_lock that keeps every other rank out, and its unlock. */
int smpi_fix_lock(int type, int rank, int assert, MPI_Win win);
int smpi_fix_unlock(int rank, MPI_Win win);

#endif
