/*
 * Preloaded into the MPICH test runs (LD_PRELOAD), never linked into
 * rmadht: yields the core whenever a poll of UCX finds nothing to do.
 *
 * MPICH 4.0.2 (ch4:ucx) waits for a get, a flush or a message by calling
 * ucp_worker_progress in a loop, and Debian's build has no switch that makes
 * an idle rank give up its core (MPIR_CVAR_POLLS_BEFORE_YIELD changes
 * nothing; Open MPI has mpi_yield_when_idle).  The tests run more ranks
 * than this machine has cores, so a round trip used to wait for the
 * target's process to be given a time slice among the spinning ones: 8 ms
 * a get with 4 ranks on 2 cores, and minutes for a test that takes a
 * second under Open MPI.  Yielding when a poll is empty lets the rank
 * that has work run; it changes no MPI semantics, only who gets the core.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct ucp_worker *ucp_worker_h;
typedef unsigned (*progress_fn)(ucp_worker_h);

/* UCX's own function, from the loaded libucp itself rather than by
   RTLD_NEXT: Python loads MPI (and UCX) privately with dlopen, out of
   RTLD_NEXT's reach, and a program linked with MPI has it loaded too. */
static progress_fn ucx_progress(void) {
  void *ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
  progress_fn f = ucp ? (progress_fn)dlsym(ucp, "ucp_worker_progress") : NULL;
  if (!f) {
    fprintf(stderr, "ucp_yield: UCX's ucp_worker_progress not found\n");
    abort();
  }
  return f;
}

unsigned ucp_worker_progress(ucp_worker_h worker);

unsigned ucp_worker_progress(ucp_worker_h worker) {
  static progress_fn next;
  if (!next) next = ucx_progress();
  unsigned events = next(worker);
  if (events == 0)
    sched_yield();
  return events;
}
