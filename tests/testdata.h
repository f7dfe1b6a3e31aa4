/* Keys and self-verifying values for the multi-rank tests. */
#ifndef RMADHT_TESTDATA_H
#define RMADHT_TESTDATA_H

#include <stdint.h>
#include <string.h>

#include "rmadht.h"

/* The table variants the multi-rank tests cover: every mode, and lock-free
   on both of its paths (RMA is what a table spanning nodes takes; the
   node-local variant takes the node-local path only when every rank shares
   one node, see variant_node_local). */
struct variant {
  enum rmadht_mode mode;
  int node_local;
  const char *name;
};
static const struct variant test_variants[] = {
    {RMADHT_LOCK_FREE, 0, "lockfree-rma"},
    {RMADHT_LOCK_FREE, 1, "lockfree-node-local"},
    {RMADHT_FINE_LOCK, 0, "fine"},
    {RMADHT_COARSE_LOCK, 0, "coarse"}};
#define N_VARIANTS 4

/* CTEST_MAX_RANKS, defined by tests/CMakeLists.txt, is the most ranks
   ctest runs a multi-rank test on.  Past it a test runs on emulated hosts
   (tools/hosts/test.sh, 8 and 16 ranks on two cores); the tests whose
   work would grow faster than the ranks do less per rank there. */
#ifndef CTEST_MAX_RANKS
#error "CTEST_MAX_RANKS comes from tests/CMakeLists.txt"
#endif

static inline void variant_config(rmadht_config *cfg,
                                  const struct variant *v) {
  cfg->mode = v->mode;
  cfg->node_local = v->node_local;
}

/* Collective: a table of variant v over MPI_COMM_WORLD with the given
   sizes and hash (NULL: XXH3); rmadht_create's code. */
static inline int variant_create(const struct variant *v, size_t key_size,
                                 size_t value_size, size_t bytes,
                                 uint64_t (*hash)(const void *, size_t,
                                                  void *),
                                 void *hash_arg, rmadht **t) {
  rmadht_config cfg;
  rmadht_config_default(&cfg, key_size, value_size);
  variant_config(&cfg, v);
  cfg.bytes_per_rank = bytes;
  cfg.hash = hash;
  cfg.hash_arg = hash_arg;
  return rmadht_create(MPI_COMM_WORLD, &cfg, t);
}

/* Collective: near[r] (MPI_COMM_WORLD's size entries), unless near is
   NULL, is 1 for the ranks on this rank's node, this one included; returns
   how many there are and whether every rank shares one node (*one_node). */
static inline int ranks_on_node(unsigned char *near, int *one_node) {
  MPI_Comm node;
  MPI_Group world_group, node_group;
  int size, nodesize;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  MPI_Comm_size(node, &nodesize);
  if (near) {
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(node, &node_group);
    memset(near, 0, (size_t)size);
    for (int i = 0; i < nodesize; i++) {
      int r;
      MPI_Group_translate_ranks(node_group, 1, &i, world_group, &r);
      near[r] = 1;
    }
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
  }
  MPI_Comm_free(&node);
  int one = nodesize == size;
  MPI_Allreduce(&one, one_node, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return nodesize;
}

/* Whether a table of variant v over MPI_COMM_WORLD reads the ranks on this
   rank's node by loads (rmadht_info.node_loads): it asks for the
   node-local path, it is lock-free, it spans nodes and some node holds
   two ranks or more.  Collective. */
static inline int variant_node_loads(const struct variant *v) {
  int one_node, several = ranks_on_node(NULL, &one_node) > 1, any;
  MPI_Allreduce(&several, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return v->node_local && v->mode == RMADHT_LOCK_FREE && !one_node && any;
}

/* Whether a table of variant v over MPI_COMM_WORLD takes the node-local
   path: it asks for it and every rank shares one node.  Collective. */
static inline int variant_node_local(const struct variant *v) {
  int one_node;
  ranks_on_node(NULL, &one_node);
  return v->node_local && v->mode == RMADHT_LOCK_FREE && one_node;
}

/* Key bytes from an id: the id, then a pattern derived from it. */
static inline void make_key(unsigned char *k, size_t len, uint64_t id) {
  for (size_t i = 0; i < len; i++)
    k[i] = (unsigned char)((id >> (8 * (i % 8))) ^ (i * 131u) ^ (id * 7u));
  memcpy(k, &id, len < 8 ? len : 8);
}

/* Value bytes from (id, version), every byte depending on both, so a value
   mixed from two writes or two keys fails value_ok. */
static inline void make_value(unsigned char *v, size_t len, uint64_t id,
                              uint64_t version) {
  uint64_t x = id * UINT64_C(0x9E3779B97F4A7C15) ^ version;
  for (size_t i = 0; i < len; i++) {
    x ^= x >> 29;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    v[i] = (unsigned char)(x >> 56);
  }
}

static inline int value_ok(const unsigned char *v, size_t len, uint64_t id,
                           uint64_t version) {
  unsigned char buf[4096];
  if (len > sizeof buf) return 0;
  make_value(buf, len, id, version);
  return memcmp(buf, v, len) == 0;
}

/* A value that names its own version: the version in its first 8 bytes,
   then make_value(id, version) for the rest.  A reader of a key that many
   writers overwrite can then verify any value it gets without trying every
   version; a mix of two writes or two keys still fails.  len must be > 8. */
static inline void make_tagged_value(unsigned char *v, size_t len,
                                     uint64_t id, uint64_t version) {
  memcpy(v, &version, 8);
  make_value(v + 8, len - 8, id, version);
}

/* 1 if v is make_tagged_value(id, *version) for the version it names,
   which is stored in *version. */
static inline int tagged_value_ok(const unsigned char *v, size_t len,
                                  uint64_t id, uint64_t *version) {
  memcpy(version, v, 8);
  return value_ok(v + 8, len - 8, id, *version);
}

#endif
