/* Making the table's window: in every mode the window is made, or every
   rank fails with RMADHT_ERR_MPI and rmadht_error_detail() names the MPI
   call that failed, MPI's own words and, on Open MPI, the one-sided
   component to choose, worded for where the ranks are.  On one node it
   is made; tools/hosts/test.sh also runs this between emulated hosts with
   Debian's Open MPI defaults, where it fails, and checks the message.
   With the argument "multiple" (ctest runs it so under Open MPI with
   OMPI_MCA_osc=pt2pt) MPI starts with MPI_THREAD_MULTIPLE, under which
   osc/pt2pt refuses windows: on Open MPI the create must then fail on one
   node and say so. */
#include <string.h>

#include "check.h"
#include "rmadht.h"
#include "testdata.h"

int main(int argc, char **argv) {
  int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0, level;
  MPI_Init_thread(&argc, &argv,
                  multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &level);
  multiple = multiple && level == MPI_THREAD_MULTIPLE;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(version, &len);
  int open_mpi = strstr(version, "Open MPI") != NULL;
  for (int m = 0; m < N_VARIANTS; m++) {
    rmadht_config cfg;
    rmadht_config_default(&cfg, 16, 16);
    variant_config(&cfg, &test_variants[m]);
    cfg.bytes_per_rank = 1 << 20;
    rmadht *t = NULL;
    int rc = rmadht_create(MPI_COMM_WORLD, &cfg, &t);
    const char *detail = rmadht_error_detail();
    CHECK(detail != NULL);
    if (open_mpi && multiple) CHECK(rc != RMADHT_OK);
    if (rc == RMADHT_OK) {
      CHECK(t != NULL);
      CHECK(strcmp(detail, "") == 0);
      CHECK_RC(rmadht_free(&t), RMADHT_OK);
      if (rank == 0) printf("%s: window made\n", test_variants[m].name);
    } else {
      CHECK_RC(rc, RMADHT_ERR_MPI);
      CHECK(t == NULL);
      CHECK(strncmp(detail, "MPI_Win_allocate", 16) == 0);
      CHECK(strstr(detail, " failed: MPI_ERR") != NULL);
      if (open_mpi && multiple) {
        CHECK(strstr(detail, "on one node") != NULL);
        CHECK(strstr(detail, "--mca osc sm ...") != NULL);
      } else if (open_mpi) {
        CHECK(strstr(detail, "between hosts") != NULL);
        CHECK(strstr(detail, "--mca osc sm,pt2pt") != NULL);
      }
      if (rank == 0)
        printf("%s: window failed: %s\n", test_variants[m].name, detail);
    }
  }
  /* A failure that is not MPI's leaves no detail behind. */
  rmadht_config bad;
  rmadht_config_default(&bad, 0, 16);
  rmadht *t = NULL;
  CHECK_RC(rmadht_create(MPI_COMM_WORLD, &bad, &t), RMADHT_ERR_ARG);
  CHECK(strcmp(rmadht_error_detail(), "") == 0);
  int rc = check_finish("mpi_window");
  MPI_Finalize();
  return rc;
}
