/*
 * rmadht-rma-cost: what one MPI_Get costs on this MPI, outside rmadht.
 *
 * The table's speed is bounded by the MPI underneath it, and the two stock
 * MPIs differ by several times on the same node.  This program times the
 * access patterns rmadht can choose between, on a window made the way
 * rmadht makes its own (MPI_Win_allocate, alloc_shm, one lock_all epoch),
 * at random offsets in a window far larger than the caches:
 *
 *   single     one get of B bytes, then a flush: a single read's round trip
 *   pipelined  64 gets of B bytes, then one flush: a batch, one get per item
 *   indexed    one get of 64 blocks of B bytes described by an hindexed
 *              target datatype, then a flush: a batch, one get per target
 *
 * Every rank gets from the next rank (from itself when alone), all at
 * once, so the figures include the contention of busy neighbours.  One
 * JSON object per pattern and block size on rank 0's stdout, with the time
 * per block averaged over ranks.
 *
 *   mpiexec -n 2 rmadht-rma-cost [--mb M] [--seconds S]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_FLUSH 64

struct run {
  MPI_Win win;
  int target;
  size_t window_bytes;
  double seconds;
  uint64_t rng;
  unsigned char *buf;
};

static uint64_t next_offset(struct run *r, size_t block) {
  r->rng ^= r->rng << 13;
  r->rng ^= r->rng >> 7;
  r->rng ^= r->rng << 17;
  /* Aligned to the block, as a table's groups and slots are. */
  return (r->rng % (r->window_bytes / block)) * block;
}

static int get_round(struct run *r, const char *pattern, size_t block) {
  if (strcmp(pattern, "single") == 0) {
    MPI_Get(r->buf, (int)block, MPI_BYTE, r->target,
            (MPI_Aint)next_offset(r, block), (int)block, MPI_BYTE, r->win);
    MPI_Win_flush(r->target, r->win);
    return 1;
  }
  if (strcmp(pattern, "pipelined") == 0) {
    for (int i = 0; i < PER_FLUSH; i++)
      MPI_Get(r->buf + (size_t)i * block, (int)block, MPI_BYTE, r->target,
              (MPI_Aint)next_offset(r, block), (int)block, MPI_BYTE, r->win);
    MPI_Win_flush(r->target, r->win);
    return PER_FLUSH;
  }
  /* indexed: the datatype is built per call, as a batch would have to. */
  MPI_Aint disp[PER_FLUSH];
  for (int i = 0; i < PER_FLUSH; i++) disp[i] = (MPI_Aint)next_offset(r, block);
  MPI_Datatype type;
  MPI_Type_create_hindexed_block(PER_FLUSH, (int)block, disp, MPI_BYTE, &type);
  MPI_Type_commit(&type);
  MPI_Get(r->buf, (int)(PER_FLUSH * block), MPI_BYTE, r->target, 0, 1, type,
          r->win);
  MPI_Win_flush(r->target, r->win);
  MPI_Type_free(&type);
  return PER_FLUSH;
}

/* Runs one pattern for about r->seconds on every rank; returns the mean
   time per block over ranks, in nanoseconds. */
static double time_pattern(struct run *r, const char *pattern, size_t block) {
  long blocks = 0;
  int go = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  while (go) {
    for (int k = 0; k < 64; k++) blocks += get_round(r, pattern, block);
    /* Every rank stops at rank 0's word, so no rank times an idle peer. */
    int mine = MPI_Wtime() - start < r->seconds;
    MPI_Allreduce(&mine, &go, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  }
  double ns = 1e9 * (MPI_Wtime() - start) / (double)blocks, sum;
  MPI_Reduce(&ns, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  int n;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return sum / n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  struct run r = {.window_bytes = (size_t)256 << 20, .seconds = 1.0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc)
      r.window_bytes = (size_t)atol(argv[++i]) << 20;
    else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
      r.seconds = atof(argv[++i]);
    else {
      if (rank == 0)
        fprintf(stderr, "usage: rmadht-rma-cost [--mb M] [--seconds S]\n");
      MPI_Finalize();
      return 2;
    }
  }
  static const size_t blocks[] = {64, 256, 1664};
  r.buf = malloc(PER_FLUSH * blocks[2]);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shm", "true");
  unsigned char *base;
  MPI_Win_allocate((MPI_Aint)r.window_bytes, 1, info, MPI_COMM_WORLD, &base,
                   &r.win);
  MPI_Info_free(&info);
  memset(base, 1, r.window_bytes);
  r.target = (rank + 1) % nranks;
  r.rng = 0x9E3779B97F4A7C15u * (uint64_t)(rank + 1);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, r.win);

  static const char *patterns[] = {"single", "pipelined", "indexed"};
  for (size_t p = 0; p < 3; p++)
    for (size_t b = 0; b < 3; b++) {
      double ns = time_pattern(&r, patterns[p], blocks[b]);
      if (rank == 0)
        printf("{\"pattern\": \"%s\", \"block_bytes\": %zu, \"ranks\": %d, "
               "\"ns_per_block\": %.0f}\n",
               patterns[p], blocks[b], nranks, ns);
      fflush(stdout);
    }

  MPI_Win_unlock_all(r.win);
  MPI_Win_free(&r.win);
  free(r.buf);
  MPI_Finalize();
  return 0;
}
