/*
 * LUCX/MPI/DHT.h: the API of MPI-DHT (Lübke et al. 2024; the library's MPI
 * variants nolock, coarse, fine and accumulate share it), with its names,
 * types and return codes, served by rmadht.  A program written for MPI-DHT
 * switches by putting <prefix>/include/rmadht/mpidht on its include path
 * and linking librmadht_mpidht (CMake rmadht::mpidht, pkg-config
 * rmadht-mpidht); docs/reference/mpidht-dialect.md.
 *
 * What the calls do here:
 * - A table is an rmadht table in lock-free mode with at least bucket_count
 *   slots per rank.  hash_func(key_size, key) places keys: the owner rank
 *   and both candidate groups are a function of its result alone (NULL
 *   selects rmadht's XXH3).
 * - Every write (DHT_write, DHT_write_accumulate) is complete at its owner
 *   when it returns, so any rank's read after it sees it.
 * - (proc, index) name a rank and a slot of that rank; a rewrite of a key
 *   still in place keeps them.
 * - Reads never return a torn entry: rmadht checks every entry it reads and
 *   reads it again while it is being written; DHT_READ_CORRUPT means the
 *   key's entry stayed torn through those re-reads (a miss, as MPI-DHT's
 *   lock-free variant reports a checksum that fails on its retry).
 *   DHT_READ_INVALID is never returned.
 * - DHT_write_accumulate and the files, which MPI-DHT's MPI variants leave
 *   DHT_NOT_IMPLEMENTED, work; DHT_NOT_IMPLEMENTED is never returned.
 * - Collective calls (every rank of the communicator, in the same order):
 *   DHT_create, DHT_free, DHT_print_statistics, DHT_to_file, DHT_from_file.
 *   The file calls are also quiescent: no rank uses the table meanwhile.
 *   The files are rmadht snapshots, which restore into a table of any size
 *   and rank count with the same key and data sizes.
 * - A bad argument (NULL table, key, data, destination, missing callback)
 *   returns DHT_UCX_ERROR instead of crashing.
 *
 * This header, rmadht/poet/DHT.h and rmadht_poet.h are alternatives: one
 * program includes one of them and links one dialect library.
 *
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef RMADHT_MPIDHT_DHT_H
#define RMADHT_MPIDHT_DHT_H

#if defined(RMADHT_POET_DHT_H) || defined(RMADHT_POET_H)
#error "LUCX/MPI/DHT.h and POET's DHT headers are different dialects: include one"
#endif

/* MPI-DHT's header brings these in; programs written for it may rely on
   them.  MPI's C++ declarations (MPICH's) need C++ linkage. */
#ifdef __cplusplus
extern "C++" {
#include <mpi.h>
}
#else
#include <mpi.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An MPI call failed, or an argument was bad. */
#define DHT_UCX_ERROR -1
/* DHT_read: the key is not in the table. */
#define DHT_READ_MISS -2
/* DHT_read: the key's entry stayed torn through every re-read (above). */
#define DHT_READ_CORRUPT -3
/* Defined for source compatibility; never returned here. */
#define DHT_READ_INVALID -4
/* A write stored its key in place of another key, which is gone. */
#define DHT_WRITE_SUCCESS_WITH_EVICTION -5
#define DHT_SUCCESS 0

/* DHT_from_file: the file is no snapshot of a table with these sizes. */
#define DHT_WRONG_FILE -11
/* DHT_to_file / DHT_from_file: the file cannot be created or opened. */
#define DHT_FILE_IO_ERROR -12
/* Reserved for a failed read; here that is DHT_FILE_IO_ERROR. */
#define DHT_FILE_READ_ERROR -13
/* DHT_to_file: writing the file failed. */
#define DHT_FILE_WRITE_ERROR -14
/* A local allocation failed. */
#define DHT_NO_MEM -15
/* Defined for source compatibility; never returned here. */
#define DHT_NOT_IMPLEMENTED -32

/* Bytes of MPI-DHT's own file header; kept for source compatibility (the
   files here are rmadht snapshots). */
#define DHT_FILEHEADER_SIZE 8

/* The handle.  The members a program of MPI-DHT could read keep their
   names and types: the sizes, the slots per rank this table has (at least
   the bucket_count asked for), the communicator given to DHT_create, its
   size, the hash, this rank's checksum retries so far and the accumulate
   callback.  The table itself is behind rmadht, which only the library
   touches. */
typedef struct {
  int data_size;
  int key_size;
  unsigned int bucket_count;
  MPI_Comm comm;
  int comm_size;
  uint64_t (*hash_func)(int, const void *);
  uint32_t chksum_retries;
  int (*accumulate_callback)(int, void *, int, void *);
  struct rmadht_mpidht_state *rmadht;
} DHT;

/* What DHT_create needs: key and data sizes in bytes (both > 0), the
   buckets (slots) per rank, the hash and the communicator. */
typedef struct DHT_init {
  int key_size;
  int data_size;
  unsigned int bucket_count;
  uint64_t (*hash_func)(int, const void *);
  MPI_Comm comm;
} DHT_init_t;

/* Sets the callback DHT_write_accumulate runs. */
extern void DHT_set_accumulate_callback(DHT *table,
                                        int (*callback_func)(int, void *, int,
                                                             void *));

/* Runs the accumulate callback as callback(send_size, data, data_size,
   bucket), where bucket holds the key's current data, or zeros when the
   key is not in the table, atomically with respect to every other write of
   that key on any rank (no concurrent accumulate is lost; the callback may
   run more than once and must depend only on its arguments).  When it
   returns 0 the bucket is stored under key (DHT_SUCCESS, or
   DHT_WRITE_SUCCESS_WITH_EVICTION when that evicted another key);
   otherwise nothing is written.  Its return goes to *callback_ret.  *proc
   and *index get the key's place, or UINT32_MAX when nothing was written
   and the key is absent.  proc, index and callback_ret may be NULL. */
extern int DHT_write_accumulate(DHT *table, const void *key, int send_size,
                                void *data, uint32_t *proc, uint32_t *index,
                                int *callback_ret);

/* Collective.  NULL on every rank on any failure (bad sizes, more than
   UINT32_MAX slots per rank, no memory); a rank given a NULL init_params or
   MPI_COMM_NULL has no communicator to agree over and returns NULL at
   once. */
DHT *DHT_create(const DHT_init_t *init_params);

/* Stores data under key: DHT_SUCCESS or DHT_WRITE_SUCCESS_WITH_EVICTION.
   proc and index, when not NULL, get the entry's place. */
int DHT_write(DHT *table, void *key, void *data, uint32_t *proc,
              uint32_t *index);

/* Copies the key's data to destination: DHT_SUCCESS, or DHT_READ_MISS or
   DHT_READ_CORRUPT with destination untouched. */
int DHT_read(DHT *table, const void *key, void *destination);

/* Collective and quiescent; see the top of this file. */
int DHT_to_file(DHT *table, const char *filename);
int DHT_from_file(DHT *table, const char *filename);

/* Collective.  Frees the table; chksum_retries, when not NULL, gets the
   checksum retries of all ranks summed (reads that found an entry being
   written and read it again), on every rank. */
int DHT_free(DHT *table, uint32_t *chksum_retries);

/* Collective.  When rank 0's environment has RMADHT_MPIDHT_STATISTICS set
   (and not "0"), rank 0 prints to stdout, per rank and summed, the writes
   that landed on each rank since the table was created and, since the last
   call, the calls of the writes and reads, the read misses and the
   evictions; silent otherwise, as MPI-DHT's build without DHT_STATISTICS.
   Either way the counts since the last call start again. */
int DHT_print_statistics(DHT *table);

#ifdef __cplusplus
}
#endif
#endif /* RMADHT_MPIDHT_DHT_H */
