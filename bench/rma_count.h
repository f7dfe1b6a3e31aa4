/* What a program moves over MPI windows, counted by wrapping the one-sided
   calls (the MPI profiling interface) inside the benchmark program, so the
   library carries no hooks.  The benchmark links rmadht's objects, whose
   calls to MPI_Get and the rest resolve to the wrappers in rma_count.c. */
#ifndef RMADHT_BENCH_RMA_COUNT_H
#define RMADHT_BENCH_RMA_COUNT_H

#include <stdint.h>

struct rma_count {
  uint64_t gets, get_bytes;       /* MPI_Get */
  uint64_t puts, put_bytes;       /* MPI_Put */
  uint64_t atomics, atomic_bytes; /* compare-and-swap, fetch-and-op,
                                     accumulate, get-accumulate */
  uint64_t syncs;                 /* MPI_Win_flush, _flush_local, _unlock: the
                                     completions a rank waits for */
  uint64_t locks;                 /* MPI_Win_lock */
  uint64_t remote;                /* gets, puts and atomics addressed to
                                     another rank than the caller's */
  uint64_t blocks;                /* contiguous target blocks of the gets
                                     and puts: 1 per plain one, n per one
                                     of an hindexed datatype of n blocks */
};

/* This rank's totals so far.  Targets are taken as ranks of
   MPI_COMM_WORLD (the benchmark's tables span it in rank order). */
void rma_count_get(struct rma_count *out);

#endif
