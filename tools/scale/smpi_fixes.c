/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The faults of SimGrid 3.32's SMPI (Debian 12's libsimgrid-dev) that
 * rmadht meets, worked around for the simulated benchmark only: this file
 * is linked into the programs tools/scale/build.sh makes with smpicc, and
 * nothing of it reaches the library.  Each fault has a small program in
 * tools/scale/faults/ that shows it (build.sh makes it as fault-NAME).
 *
 * 1. MPI_Compare_and_swap is not atomic (faults/cas.c: 4 ranks x 100
 *    increments by compare-and-swap leave fewer than 400).  SMPI takes the
 *    target window's atomic mutex, gets the word, and on a match queues a
 *    put that lands at the next flush, after the mutex is released: a
 *    second compare-and-swap in between reads the old word and wins too.
 *    smpi_fix_compare_and_swap compares and swaps the word in memory: the
 *    simulated ranks share one address space and run one at a time
 *    between MPI calls, so no rank comes between the compare and the swap.
 *    Its cost is an MPI_Get of the word into a scratch word, which, like
 *    a real compare-and-swap, completes at the next flush (SMPI's own
 *    waits for its get at once, so an operation left outstanding, as
 *    rmadht's last one of a write, would cost a round trip of its own).
 * 2. A window has one lock mode: MPI_Win_lock shared and exclusive on one
 *    window abort the simulation (faults/lock_modes.c).  Every lock is
 *    taken exclusive (smpi_fix_lock), which only serialises the coarse
 *    mode's readers.
 * 3. Every get, put and atomic searches the target's list of ranks holding
 *    a lock on it; under MPI_Win_lock_all every rank is on every list, so
 *    each operation costs O(ranks) of the simulator's own time
 *    (faults/lock_all.c times it).  MPI_Win_lock_all and MPI_Win_unlock_all
 *    become MPI_Win_fence, under which SMPI skips the search; rmadht calls
 *    both collectively (rmadht_create, rmadht_free).
 * 4. An exclusive MPI_Win_lock does not keep other ranks out between a
 *    get and a put (faults/lock_update.c: 4 ranks x 100 locked increments
 *    leave 250 of 400), so the coarse mode's updates lost increments.
 *    smpi_fix_lock waits, in simulated time, until no rank holds the
 *    target through it, and marks it held until smpi_fix_unlock; the mark
 *    lives in memory every simulated rank sees.  The wait is a poll, not
 *    a message, so coarse-mode figures stay not comparable with real
 *    locks (docs/benchmarks/scale.md); its totals are exact.
 *
 * Two more need no code: MPI_Win_shared_query returns one base for every
 * rank (SMPI's source), so the node-local path cannot be simulated
 * and the benchmark runs with --rma; and an MPI_Iprobe costs 100 us of
 * simulated time by default (smpi/iprobe), which rmadht's backoff pays per
 * turn: tools/scale/run.sh sets it to a realistic cost.
 */
#include "smpi_fixes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What every rank of a window made here learns of each: its base, for the
   compare-and-swap, and the one record, shared by all ranks, of which
   targets a rank holds locked (held[0] counts the ranks that have not
   freed the window yet; held[1 + r] marks target r). */
struct member {
  unsigned char *base;
  int *held; /* rank 0's alone is made */
};
struct known_win {
  MPI_Win win;
  int disp_unit;
  struct member *of; /* one per rank; of[0].held is the shared record */
  struct known_win *next;
};
static struct known_win *wins;

/* One collective, the Allgather the compare-and-swap needs anyway, so that
   the fixes add nothing to the simulated time of making a window. */
static int remember(MPI_Win win, MPI_Comm comm, void *base, int disp_unit) {
  int n, me;
  PMPI_Comm_size(comm, &n);
  PMPI_Comm_rank(comm, &me);
  struct known_win *k = malloc(sizeof *k);
  if (!k) return MPI_ERR_NO_MEM;
  k->of = malloc((size_t)n * sizeof *k->of);
  if (!k->of) {
    free(k);
    return MPI_ERR_NO_MEM;
  }
  struct member mine = {base, me == 0 ? calloc((size_t)n + 1, sizeof(int)) : NULL};
  if (mine.held) mine.held[0] = n;
  int rc = PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, k->of, sizeof mine,
                          MPI_BYTE, comm);
  if (rc == MPI_SUCCESS && !k->of[0].held) rc = MPI_ERR_NO_MEM;
  if (rc != MPI_SUCCESS) {
    free(mine.held);
    free(k->of);
    free(k);
    return rc;
  }
  k->win = win;
  k->disp_unit = disp_unit;
  k->next = wins;
  wins = k;
  return rc;
}

static struct known_win *lookup(MPI_Win win) {
  for (struct known_win *k = wins; k; k = k->next)
    if (k->win == win) return k;
  return NULL;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                     MPI_Comm comm, void *baseptr, MPI_Win *win) {
  int rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS)
    rc = remember(*win, comm, *(void **)baseptr, disp_unit);
  return rc;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                   MPI_Comm comm, MPI_Win *win) {
  int rc = PMPI_Win_create(base, size, disp_unit, info, comm, win);
  if (rc == MPI_SUCCESS) rc = remember(*win, comm, base, disp_unit);
  return rc;
}

int MPI_Win_free(MPI_Win *win) {
  for (struct known_win **p = &wins; *p; p = &(*p)->next)
    if ((*p)->win == *win) {
      struct known_win *k = *p;
      *p = k->next;
      /* The last rank to free the window frees the shared record; no
         other simulated rank runs between the count and the free. */
      int *held = k->of[0].held;
      if (--held[0] == 0) free(held);
      free(k->of);
      free(k);
      break;
    }
  return PMPI_Win_free(win);
}

int smpi_fix_compare_and_swap(const void *origin, const void *compare,
                              void *result, MPI_Datatype type, int rank,
                              MPI_Aint disp, MPI_Win win) {
  struct known_win *k = lookup(win);
  if (!k) return MPI_ERR_WIN;
  int size;
  PMPI_Type_size(type, &size);
  static uint64_t scratch;
  int rc = PMPI_Get(&scratch, 1, type, rank, disp, 1, type, win);
  if (rc != MPI_SUCCESS) return rc;
  /* No MPI call from here on: no other simulated rank runs. */
  unsigned char *word = k->of[rank].base + disp * k->disp_unit;
  memcpy(result, word, (size_t)size);
  if (!memcmp(word, compare, (size_t)size)) memcpy(word, origin, (size_t)size);
  return MPI_SUCCESS;
}

int smpi_fix_lock(int type, int rank, int assert, MPI_Win win) {
  (void)type;
  struct known_win *k = lookup(win);
  if (!k) return MPI_ERR_WIN;
  /* Between the test and the mark no MPI call is made: no other simulated
     rank runs.  Sleeping lets simulated time pass and the others run. */
  int *held = k->of[0].held;
  while (held[1 + rank]) smpi_usleep(1);
  held[1 + rank] = 1;
  return PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, assert, win);
}

int smpi_fix_unlock(int rank, MPI_Win win) {
  struct known_win *k = lookup(win);
  if (!k) return MPI_ERR_WIN;
  int rc = PMPI_Win_unlock(rank, win);
  k->of[0].held[1 + rank] = 0;
  return rc;
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  (void)assert;
  return PMPI_Win_fence(0, win);
}

int MPI_Win_unlock_all(MPI_Win win) {
  return PMPI_Win_fence(MPI_MODE_NOSUCCEED, win);
}
