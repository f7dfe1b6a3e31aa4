/*
 * rmadht_poet.h: the DHT API of POET (De Lucia et al. 2021, POET v0.1,
 * Appendix A), unchanged, on top of rmadht.  A program written for that
 * DHT.h compiles against this header and links with -lrmadht_poet (CMake
 * rmadht::poet, pkg-config rmadht-poet).  POET's current API is
 * rmadht/poet/DHT.h; a program includes one of the two.  This header
 * renames the 2021 calls to rmadht_poet2021_* symbols, so that both
 * dialects live in one library without a clash.
 *
 * - size_per_process is a bucket count per rank (rounded up to whole slot
 *   groups of eight); data_size and key_size are bytes.
 * - hash_func(key_size, key) places keys: the owner rank and both
 *   candidate groups are a function of its 64-bit result alone.  NULL
 *   selects rmadht's XXH3.
 * - The table runs in rmadht's lock-free mode.  DHT_write returns once the
 *   entry is stored at its owner, as POET's locked write does, so a read
 *   by any rank after that sees it.
 * - DHT_free sums the evictions and read misses of all ranks and returns
 *   the sums on rank 0 (0 elsewhere); either pointer may be NULL.
 * - DHT_to_file / DHT_from_file write and read rmadht snapshots
 *   (docs/reference/snapshot-format.md), not POET's own file layout, and a
 *   file restores
 *   into a table of any size and rank count with the same key and data
 *   sizes.  Both are collective and quiescent.
 * - DHT is opaque: POET documented its members as internal to the library.
 *
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef RMADHT_POET_H
#define RMADHT_POET_H

#ifdef RMADHT_POET_DHT_H
#error "rmadht_poet.h and rmadht/poet/DHT.h are two dialects: include one"
#endif

#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DHT_MPI_ERROR -1
#define DHT_READ_ERROR -2 /* DHT_read: the key is not in the table */
#define DHT_SUCCESS 0
#define DHT_WRITE_SUCCESS_WITH_COLLISION 1 /* DHT_write evicted a key */

#define DHT_WRONG_FILE 11       /* not a snapshot for this table */
#define DHT_FILE_IO_ERROR 12    /* the file cannot be opened or read */
#define DHT_FILE_READ_ERROR 13  /* reserved by POET; not returned here */
#define DHT_FILE_WRITE_ERROR 14 /* writing the file failed */

#define DHT_create rmadht_poet2021_create
#define DHT_read rmadht_poet2021_read
#define DHT_write rmadht_poet2021_write
#define DHT_free rmadht_poet2021_free
#define DHT_to_file rmadht_poet2021_to_file
#define DHT_from_file rmadht_poet2021_from_file

typedef struct rmadht_poet2021 DHT;

/* Collective.  NULL on any failure, on every rank. */
DHT *DHT_create(MPI_Comm comm, unsigned int size_per_process, int data_size,
                int key_size, uint64_t (*hash_func)(int, void *));

int DHT_read(DHT *table, void *key, void *destination);
int DHT_write(DHT *table, void *key, void *data);

/* Collective. */
int DHT_free(DHT *table, int *collision_counter, int *readerror_counter);
int DHT_to_file(DHT *table, const char *filename);
int DHT_from_file(DHT *table, const char *filename);

#ifdef __cplusplus
}
#endif
#endif /* RMADHT_POET_H */
