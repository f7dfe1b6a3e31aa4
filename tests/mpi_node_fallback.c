/* ranks: 1 2 4
   The node-local path is only an optimisation: a lock-free table whose
   shared window cannot be made takes the RMA path on every rank and works.
   Run plainly, the path is taken exactly where every rank shares one node.
   Run with the argument "fallback" under Open MPI's osc/pt2pt on one node
   (tests/CMakeLists.txt), whose MPI_Win_allocate_shared fails with
   MPI_ERR_INTERN, creation must still succeed, on the RMA path, with no
   error detail left behind, and every rank's writes must be read by all. */
#include <string.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

#define NKEYS 200 /* per rank */
#define VALUE_BYTES 40

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int fallback = argc > 1 && strcmp(argv[1], "fallback") == 0;
  const struct variant *v = &test_variants[1]; /* lock-free, node-local */
  rmadht *t = NULL;
  CHECK_RC(variant_create(v, sizeof(uint64_t), VALUE_BYTES,
                          (size_t)1 << 20, NULL, NULL, &t),
           RMADHT_OK);
  if (!t) MPI_Abort(MPI_COMM_WORLD, 1);
  CHECK(strcmp(rmadht_error_detail(), "") == 0);
  rmadht_info info;
  CHECK_RC(rmadht_get_info(t, &info), RMADHT_OK);
  CHECK(info.node_local == (fallback ? 0 : variant_node_local(v)));
  int agreed = 0;
  MPI_Allreduce(&info.node_local, &agreed, 1, MPI_INT, MPI_MAX,
                MPI_COMM_WORLD);
  CHECK(agreed == info.node_local); /* one path on every rank */

  uint64_t key;
  unsigned char value[VALUE_BYTES], got[VALUE_BYTES];
  for (int i = 0; i < NKEYS; i++) {
    key = (uint64_t)rank * NKEYS + (uint64_t)i;
    make_value(value, VALUE_BYTES, key, 0);
    CHECK_RC(rmadht_write(t, &key, value), RMADHT_OK);
  }
  CHECK_RC(rmadht_flush(t), RMADHT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < nranks; r++)
    for (int i = 0; i < NKEYS; i++) {
      key = (uint64_t)r * NKEYS + (uint64_t)i;
      memset(got, 0, sizeof got);
      CHECK_RC(rmadht_read(t, &key, got), RMADHT_OK);
      CHECK(value_ok(got, VALUE_BYTES, key, 0));
    }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_RC(rmadht_free(&t), RMADHT_OK);
  int rc = check_finish(fallback ? "mpi_node_fallback (fallback)"
                                 : "mpi_node_fallback");
  MPI_Finalize();
  return rc;
}
