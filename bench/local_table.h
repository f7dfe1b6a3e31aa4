/* The benchmark's physical limit: the same slot layout (with the tags of
   the node-local path), placement, slot choice and search as rmadht, on
   plain memory in one process, one operation at a time. */
#ifndef RMADHT_BENCH_LOCAL_TABLE_H
#define RMADHT_BENCH_LOCAL_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct local_table;

struct local_table *local_create(size_t key_size, size_t value_size,
                                 size_t bytes);
void local_free(struct local_table *t);
/* Same return codes as rmadht_read and rmadht_write. */
int local_read(struct local_table *t, const void *key, void *value);
int local_write(struct local_table *t, const void *key, const void *value);

#endif
