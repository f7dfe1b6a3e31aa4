/* Messages and names for every return code and mode; the version; the
   detail of the last error of each thread. */
#include <stdio.h>

#include "internal.h"

/* Per thread, because a table handle is used by one thread at a time but a
   program may drive several tables from several threads. */
static _Thread_local char detail[640];

const char *rmadht_error_detail(void) { return detail; }

void rmadht_detail_clear(void) { detail[0] = 0; }

void rmadht_detail_set(const char *text) {
  snprintf(detail, sizeof detail, "%s", text);
}

int rmadht_mpi_call(int mpi_rc, const char *call, const char *remedy) {
  if (mpi_rc == MPI_SUCCESS) return RMADHT_OK;
  char mpi_msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(mpi_rc, mpi_msg, &len) != MPI_SUCCESS)
    snprintf(mpi_msg, sizeof mpi_msg, "MPI error %d", mpi_rc);
  snprintf(detail, sizeof detail, "%s failed: %s%s%s", call, mpi_msg,
           remedy ? ". " : "", remedy ? remedy : "");
  return RMADHT_ERR_MPI;
}

#define STR_(x) #x
#define STR(x) STR_(x)

const char *rmadht_strerror(int code) {
  switch (code) {
    case RMADHT_OK: return "success";
    case RMADHT_NOT_FOUND: return "key not found";
    case RMADHT_EVICTED: return "stored; another key was evicted";
    case RMADHT_ERR_ARG: return "invalid argument (NULL pointer, zero size or value out of range)";
    case RMADHT_ERR_SIZE: return "sizes overflow or the table is smaller than one slot group";
    case RMADHT_ERR_MISMATCH: return "parameters differ across ranks";
    case RMADHT_ERR_NOMEM: return "out of memory";
    case RMADHT_ERR_MPI: return "an MPI call failed";
    case RMADHT_ERR_REMOTE: return "another rank failed in a collective call";
    case RMADHT_ERR_CONTENDED: return "another rank's write in flight made no progress for 2 s";
    case RMADHT_ERR_FILE: return "snapshot file missing or unreadable";
    case RMADHT_ERR_FORMAT: return "not a valid rmadht snapshot for this table (foreign, corrupt, truncated, other version or sizes)";
    case RMADHT_ERR_IO: return "writing the snapshot failed";
    case RMADHT_ERR_LOCATION: return "not a location of this table, or out of range";
    default: return "unknown rmadht return code";
  }
}

const char *rmadht_errname(int code) {
  switch (code) {
#define NAME(c) \
  case c: return #c
    NAME(RMADHT_OK);
    NAME(RMADHT_NOT_FOUND);
    NAME(RMADHT_EVICTED);
    NAME(RMADHT_ERR_ARG);
    NAME(RMADHT_ERR_SIZE);
    NAME(RMADHT_ERR_MISMATCH);
    NAME(RMADHT_ERR_NOMEM);
    NAME(RMADHT_ERR_MPI);
    NAME(RMADHT_ERR_REMOTE);
    NAME(RMADHT_ERR_CONTENDED);
    NAME(RMADHT_ERR_FILE);
    NAME(RMADHT_ERR_FORMAT);
    NAME(RMADHT_ERR_IO);
    NAME(RMADHT_ERR_LOCATION);
#undef NAME
    default: return "RMADHT_UNKNOWN";
  }
}

const char *rmadht_version(void) {
  return STR(RMADHT_VERSION_MAJOR) "." STR(RMADHT_VERSION_MINOR) "." STR(
      RMADHT_VERSION_PATCH);
}

const char *rmadht_mode_name(enum rmadht_mode mode) {
  switch (mode) {
    case RMADHT_LOCK_FREE: return "lockfree";
    case RMADHT_FINE_LOCK: return "fine";
    case RMADHT_COARSE_LOCK: return "coarse";
    default: return "unknown";
  }
}
