/*
 * A progress thread for networks without RDMA.
 *
 * There a passive-target get, put or atomic is carried out by the target's
 * MPI library, which runs only while the target is inside an MPI call: a
 * rank computing for seconds without one (a POET worker in PHREEQC, De
 * Lucia et al. 2021) stalls every operation on its part of the table for
 * as long.  This thread enters MPI every few microseconds on the table's
 * behalf, so the application's loop needs no change.  The call is
 * MPI_Iprobe on a communicator of its own, on which no message is ever
 * sent: the probe finds nothing, but makes the progress engine serve every
 * pending request, one-sided ones included.  The thread sleeps between
 * probes because MPI libraries serialise threads with one lock: probing
 * without pause would take it from the application's own calls.  For the
 * same reason it skips a wake-up when the application is inside a table
 * call or made one since the last wake-up: a rank that uses the table is
 * inside MPI often enough to serve the others, and only one that computes
 * needs the help.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "progress.h"

enum { PROBES = 8 };

struct progress {
  struct protocol counted; /* the table's protocol, counting its calls */
  const struct protocol *inner;
  atomic_uint calls; /* +1 as a table call begins, +1 as it ends */
  pthread_t thread;
  MPI_Comm comm; /* private: no message is ever sent on it */
  struct timespec pause;
  atomic_int stop;
};

const char progress_needs_threads[] =
    "rmadht_config.progress_us asks for a progress thread, which calls MPI "
    "beside the application's thread: initialise MPI with "
    "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, &provided) and check that "
    "provided is MPI_THREAD_MULTIPLE (MPI_Query_thread). Open MPI's one-sided "
    "component osc/pt2pt, the one that works over TCP, refuses windows under "
    "MPI_THREAD_MULTIPLE (choose --mca pml ucx --mca osc sm,ucx instead); or "
    "leave progress_us 0 and let the MPI's own asynchronous progress serve "
    "the table (docs/howto/progress-thread.md in rmadht)";

const char progress_pt2pt_remedy[] =
    "Open MPI's one-sided component for TCP between hosts, osc/pt2pt, "
    "refuses windows under MPI_THREAD_MULTIPLE: choose --mca pml ucx --mca "
    "osc sm,ucx at launch, or initialise MPI without MPI_THREAD_MULTIPLE "
    "(and leave progress_us 0); see rmadht's "
    "docs/howto/progress-thread.md";

static int counted_read(rmadht *t, size_t n, const unsigned char *keys,
                        unsigned char *values, int *status) {
  struct progress *p = t->progress;
  atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
  int rc = p->inner->read(t, n, keys, values, status);
  atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
  return rc;
}

static int counted_write(rmadht *t, size_t n, const unsigned char *keys,
                         const struct write_src *src, int *status) {
  struct progress *p = t->progress;
  atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
  int rc = p->inner->write(t, n, keys, src, status);
  atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
  return rc;
}

static int counted_flush(rmadht *t) {
  struct progress *p = t->progress;
  atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
  int rc = p->inner->flush(t);
  atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
  return rc;
}

static void *run(void *arg) {
  struct progress *p = arg;
  unsigned seen = 0;
  while (!atomic_load_explicit(&p->stop, memory_order_acquire)) {
    int flag;
    unsigned calls = atomic_load_explicit(&p->calls, memory_order_relaxed);
    /* Odd: the application is inside a table call, so inside MPI. */
    int idle = calls == seen && calls % 2 == 0;
    seen = calls;
    /* Several probes a wake-up: Open MPI's osc/ucx over TCP took about a
       hundred probes per read (p50 20 ms at 100 us a wake-up with one
       probe, 1.4-4 ms with sixteen); MPICH needs one. */
    for (int k = 0; idle && k < PROBES; k++)
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, p->comm, &flag,
                 MPI_STATUS_IGNORE);
    struct timespec left = p->pause;
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  return NULL;
}

int progress_start(rmadht *t, unsigned us) {
  struct progress *p = calloc(1, sizeof *p);
  int local = p ? RMADHT_OK : RMADHT_ERR_NOMEM;
  MPI_Comm comm = MPI_COMM_NULL;
  /* Every rank reaches the dup even if its allocation failed. */
  if (MPI_Comm_dup(t->comm, &comm) != MPI_SUCCESS) local = RMADHT_ERR_MPI;
  if (!local) {
    p->comm = comm;
    p->pause.tv_sec = us / 1000000u;
    p->pause.tv_nsec = (long)(us % 1000000u) * 1000;
    atomic_init(&p->stop, 0);
    atomic_init(&p->calls, 0);
    p->inner = t->proto;
    p->counted = (struct protocol){counted_read, counted_write, counted_flush};
    if (pthread_create(&p->thread, NULL, run, p) != 0) local = RMADHT_ERR_NOMEM;
  }
  if (local) {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    free(p);
    return local;
  }
  t->progress = p;
  t->proto = &p->counted;
  return RMADHT_OK;
}

void progress_stop(rmadht *t) {
  struct progress *p = t->progress;
  if (!p) return;
  atomic_store_explicit(&p->stop, 1, memory_order_release);
  pthread_join(p->thread, NULL);
  MPI_Comm_free(&p->comm);
  t->proto = p->inner;
  free(p);
  t->progress = NULL;
}
