/*
 * What dump and restore share: the size of the pieces they move through
 * memory, and how every rank comes to return the same code.
 *
 * Both stream a rank's entries in chunks of about SNAP_CHUNK_BYTES, so a
 * rank holding gigabytes needs only one chunk of buffer.  Chunks move with
 * collective MPI-IO calls, which every rank must make equally often: each
 * loops over the largest chunk count of any rank, with empty calls once its
 * own entries are done.
 */
#ifndef RMADHT_SNAPSHOT_H
#define RMADHT_SNAPSHOT_H

#include "internal.h"
#include "snapshot_format.h"

/* 16 MiB.  A build of the snapshot sources may define a smaller one, as
   the test build does to make small files take many chunks (tests/
   CMakeLists.txt); the library is always built with this one. */
#ifndef SNAP_CHUNK_BYTES
#define SNAP_CHUNK_BYTES ((uint64_t)16 << 20)
#endif

/* Entries per chunk: as many as fit in SNAP_CHUNK_BYTES, at least one. */
static inline uint64_t snap_chunk_entries(uint64_t entry_bytes) {
  uint64_t n = (uint64_t)SNAP_CHUNK_BYTES / entry_bytes;
  return n ? n : 1;
}

/* Chunks needed for n entries. */
static inline uint64_t snap_chunks(uint64_t n, uint64_t per_chunk) {
  return n / per_chunk + (n % per_chunk != 0);
}

/* Collective.  Every rank returns the gravest (most negative) of the codes
   the ranks bring, so that all take the same branch afterwards. */
static inline int snap_agree(MPI_Comm comm, int rc) {
  int all;
  if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    return RMADHT_ERR_MPI;
  return all;
}

/* Collective.  The path argument of dump and restore: RMADHT_ERR_ARG on
   every rank if any rank passed NULL or "", else RMADHT_ERR_MISMATCH if
   the paths differ (MPI_File_open requires one file), else RMADHT_OK. */
int snap_agree_path(MPI_Comm comm, const char *path);

#endif
