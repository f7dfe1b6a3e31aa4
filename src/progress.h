/* The optional progress thread (rmadht_config.progress_us). */
#ifndef RMADHT_PROGRESS_H
#define RMADHT_PROGRESS_H

#include "internal.h"

/* Collective over t->comm.  Starts a thread that drives MPI's progress
   engine every us microseconds until progress_stop, unless the table was
   used since the last time; wraps t->proto to count its uses, so call it
   after t->proto is set.  Needs MPI_THREAD_MULTIPLE, which config.c
   checks before. */
int progress_start(rmadht *t, unsigned us);

/* Collective.  Stops and joins the thread, if any, and frees what it used;
   safe on a table whose thread never started. */
void progress_stop(rmadht *t);

/* The text of rmadht_error_detail() when the thread was asked for without
   MPI_THREAD_MULTIPLE. */
extern const char progress_needs_threads[];
/* The remedy when Open MPI cannot make a window under MPI_THREAD_MULTIPLE. */
extern const char progress_pt2pt_remedy[];

#endif
