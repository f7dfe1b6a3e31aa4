/*
 * A minimal test harness for single- and multi-rank tests.  CHECK records a
 * failure with file, line and rank and goes on; check_finish() agrees on the
 * outcome across ranks so that every rank exits non-zero if any failed.
 */
#ifndef RMADHT_CHECK_H
#define RMADHT_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <time.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                          \
  do {                                                                       \
    check_count++;                                                           \
    if (!(cond)) {                                                           \
      int r_ = -1, init_ = 0;                                                \
      MPI_Initialized(&init_);                                               \
      if (init_) MPI_Comm_rank(MPI_COMM_WORLD, &r_);                         \
      fprintf(stderr, "%s:%d: rank %d: CHECK(%s) failed\n", __FILE__,        \
              __LINE__, r_, #cond);                                          \
      check_failures++;                                                      \
    }                                                                        \
  } while (0)

/* Checks an rmadht call's return code against the expected one. */
#define CHECK_RC(call, expect)                                               \
  do {                                                                       \
    int rc_ = (call);                                                        \
    check_count++;                                                           \
    if (rc_ != (expect)) {                                                   \
      int r_ = -1, init_ = 0;                                                \
      MPI_Initialized(&init_);                                               \
      if (init_) MPI_Comm_rank(MPI_COMM_WORLD, &r_);                         \
      fprintf(stderr, "%s:%d: rank %d: %s returned %d (%s), expected %d\n",  \
              __FILE__, __LINE__, r_, #call, rc_, rmadht_strerror(rc_),      \
              (int)(expect));                                                \
      check_failures++;                                                      \
    }                                                                        \
  } while (0)

/* Returns the process exit code; collective when MPI is initialised. */
static inline int check_finish(const char *name) {
  int init = 0, fin = 0, total = check_failures, rank = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) {
    MPI_Allreduce(&check_failures, &total, 1, MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
  if (rank == 0)
    printf("%s: %d checks on rank 0, %d failures over all ranks\n", name,
           check_count, total);
  return total ? 1 : 0;
}

/* Seconds on a clock that is not MPI's, so that reading it cannot drive
   MPI's progress (a rank computing outside MPI must stay outside). */
static inline double check_clock(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0 says how long one part of a test took for one variant, since
   *t0, and restarts the clock: across emulated hosts the logs then show
   where a slow run spent its time. */
static inline void check_say_time(const char *variant, const char *part,
                                  double *t0) {
  double now = MPI_Wtime();
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("%s %s: %.2f s\n", variant, part, now - *t0);
  *t0 = now;
}

#endif
