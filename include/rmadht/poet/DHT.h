/*
 * rmadht/poet/DHT.h: the DHT API that POET's surrogate models call today
 * (POET's src/Chemistry/SurrogateModels/DHT.h), with the same names,
 * parameter types and return codes, served by rmadht.  POET switches by
 * putting <prefix>/include/rmadht/poet on its include path in place of its
 * own DHT.h and DHT.c and linking librmadht_poet (CMake rmadht::poet,
 * pkg-config rmadht-poet); docs/howto/port-poet.md.
 *
 * What the calls do here:
 * - A table is an rmadht table in lock-free mode with at least
 *   size_per_process buckets (slots) per rank.  hash_func(key_size, key)
 *   places keys: the owner rank and both candidate groups are a function of
 *   its result alone.
 * - Every write (DHT_write, DHT_write_accumulate) is complete at its owner
 *   when it returns, so any rank's read after it sees it, as with POET's
 *   exclusive-lock writes.
 * - (proc, index) name a rank and a slot of that rank; a rewrite of a key
 *   still in place keeps them.  DHT_read_location returns DHT_READ_MISS for
 *   a slot that is empty, was emptied by DHT_flush or is being written.  It
 *   cannot tell an entry that replaced the one written there (POET's
 *   signature carries no key): rmadht_read_loc can.
 * - DHT_write_accumulate applies the accumulate callback to the key's
 *   current bucket data atomically with respect to every other write of
 *   that key on any rank.  The callback must depend only on its arguments:
 *   after a lost race it runs again on the newer data.
 * - Collective calls (every rank of the communicator, in the same order):
 *   DHT_create, DHT_free, DHT_flush, DHT_get_used_idx_factor,
 *   DHT_print_statistics, DHT_to_file, DHT_from_file.  DHT_flush and the
 *   file calls are also quiescent: no rank uses the table meanwhile.  The
 *   files are rmadht snapshots, which restore into a table of any size and
 *   rank count with the same key and data sizes.
 *
 * This header and rmadht_poet.h (POET's 2021 API) are alternatives: one
 * program includes one of them.
 *
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef RMADHT_POET_DHT_H
#define RMADHT_POET_DHT_H

#ifdef RMADHT_POET_H
#error "rmadht/poet/DHT.h and rmadht_poet.h are two dialects: include one"
#endif

/* POET includes this header inside extern "C"; MPI's C++ declarations
   (MPICH's, unless MPICH_SKIP_MPICXX) need C++ linkage back. */
#ifdef __cplusplus
extern "C++" {
#include <mpi.h>
}
#else
#include <mpi.h>
#endif
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An MPI call failed, or an argument was bad (NULL table, no callback). */
#define DHT_MPI_ERROR -1
/* DHT_read: the key is not in the table; DHT_read_location: the slot
   holds no entry. */
#define DHT_READ_MISS -2
/* A write stored its key in place of another key, which is gone. */
#define DHT_WRITE_SUCCESS_WITH_EVICTION -3
#define DHT_SUCCESS 0

/* DHT_from_file: the file is no snapshot of a table with these sizes. */
#define DHT_WRONG_FILE -11
/* DHT_to_file / DHT_from_file: the file cannot be created or opened. */
#define DHT_FILE_IO_ERROR -12
/* Reserved by POET for a failed read; here that is DHT_FILE_IO_ERROR. */
#define DHT_FILE_READ_ERROR -13
/* DHT_to_file: writing the file failed. */
#define DHT_FILE_WRITE_ERROR -14

/* Bytes of POET's own file header; kept for source compatibility (the
   files here are rmadht snapshots). */
#define DHT_FILEHEADER_SIZE 8

/* The handle.  The members POET reads are public, with POET's types:
   its proximity table sizes its buffers by data_size and key_size (bytes,
   as passed to DHT_create), and its build with POET_PHT_ADD saves and
   restores accumulate_callback directly.  The library keeps copies of the
   sizes of its own, so changing them changes nothing.  The rest of the
   table is behind rmadht, which only the library touches. */
typedef struct {
  int (*accumulate_callback)(int, void *, int, void *);
  int data_size;
  int key_size;
  struct rmadht_poet_dht *rmadht;
} DHT;

extern void DHT_set_accumulate_callback(DHT *table,
                                        int (*callback_func)(int, void *, int,
                                                             void *));

/* Runs the table's accumulate callback as callback(send_size, data,
   data_size, bucket), where bucket holds the key's current data, or zeros
   when the key is not in the table.  When it returns 0 the changed bucket
   is stored under key (DHT_SUCCESS, or DHT_WRITE_SUCCESS_WITH_EVICTION when
   that evicted another key); otherwise nothing is written.  Its return
   value goes to *callback_ret.  *proc and *index get the key's place, or
   UINT32_MAX when nothing was written and the key is absent.  proc, index
   and callback_ret may be NULL. */
extern int DHT_write_accumulate(DHT *table, const void *key, int send_size,
                                void *data, uint32_t *proc, uint32_t *index,
                                int *callback_ret);

/* Collective.  size_per_process buckets per rank (at least one group;
   more than 2^32 per rank cannot be named by an index and fail), data and
   key sizes in bytes.  NULL on every rank on any failure. */
extern DHT *DHT_create(MPI_Comm comm, uint64_t size_per_process,
                       unsigned int data_size, unsigned int key_size,
                       uint64_t (*hash_func)(int, const void *));

/* Stores data under key: DHT_SUCCESS or DHT_WRITE_SUCCESS_WITH_EVICTION.
   proc and index, when not NULL, get the entry's place. */
extern int DHT_write(DHT *table, void *key, void *data, uint32_t *proc,
                     uint32_t *index);

/* Copies the key's data to destination: DHT_SUCCESS or DHT_READ_MISS. */
extern int DHT_read(DHT *table, const void *key, void *destination);

/* Copies the data of the entry at (proc, index) to destination:
   DHT_SUCCESS, or DHT_READ_MISS with zeros there (the data of POET's empty
   bucket); DHT_MPI_ERROR when out of range. */
extern int DHT_read_location(DHT *table, uint32_t proc, uint32_t index,
                             void *destination);

/* Collective and quiescent; see the top of this file. */
extern int DHT_to_file(DHT *table, const char *filename);
extern int DHT_from_file(DHT *table, const char *filename);

/* Collective.  Frees the table; eviction_counter and readerror_counter,
   when not NULL, get the evictions and read misses of all ranks summed, on
   rank 0 (0 elsewhere). */
extern int DHT_free(DHT *table, int *eviction_counter, int *readerror_counter);

/* Collective.  When rank 0's environment has RMADHT_POET_STATISTICS set
   (and not "0"), rank 0 prints to stdout, per rank and summed, the calls of
   the writes and reads, the read misses and the evictions since the last
   call; silent otherwise, as POET's build without DHT_STATISTICS.  Either
   way the counts start again. */
extern int DHT_print_statistics(DHT *table);

/* Collective.  The mean number of candidate buckets POET's own DHT would
   have examined, probing them one after another, for the writes and
   accumulates since the last reset, at the load each of them found (1: a
   free bucket or the key at once; a new key about 2 at half full, POET's
   threshold for emptying its tables), the maximum over all ranks, on every
   rank; with_reset non-zero starts the count again.  0 when no rank wrote;
   -1 on failure. */
extern float DHT_get_used_idx_factor(DHT *table, int with_reset);

/* Collective.  Empties the table on every rank and resets the count of
   DHT_get_used_idx_factor. */
extern int DHT_flush(DHT *table);

#ifdef __cplusplus
}
#endif
#endif /* RMADHT_POET_DHT_H */
