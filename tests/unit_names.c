/* rmadht_version matches the header's version macros, and rmadht_errname
   names every code, never NULL, with a name that tells codes apart. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "rmadht.h"

int main(void) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", RMADHT_VERSION_MAJOR,
           RMADHT_VERSION_MINOR, RMADHT_VERSION_PATCH);
  CHECK(strcmp(rmadht_version(), want) == 0);

  CHECK(strcmp(rmadht_errname(RMADHT_OK), "RMADHT_OK") == 0);
  CHECK(strcmp(rmadht_errname(RMADHT_NOT_FOUND), "RMADHT_NOT_FOUND") == 0);
  CHECK(strcmp(rmadht_errname(RMADHT_ERR_ARG), "RMADHT_ERR_ARG") == 0);
  CHECK(strcmp(rmadht_errname(RMADHT_ERR_IO), "RMADHT_ERR_IO") == 0);
  /* Every code from the last error to the last outcome has its own name
     and a message of its own. */
  for (int a = RMADHT_ERR_LOCATION; a <= RMADHT_EVICTED; a++) {
    CHECK(strncmp(rmadht_errname(a), "RMADHT_", 7) == 0);
    CHECK(strcmp(rmadht_errname(a), "RMADHT_UNKNOWN") != 0);
    CHECK(strcmp(rmadht_strerror(a), rmadht_strerror(1000)) != 0);
    for (int b = RMADHT_ERR_LOCATION; b < a; b++)
      CHECK(strcmp(rmadht_errname(a), rmadht_errname(b)) != 0);
  }
  const int unknown[] = {INT_MIN, -1000, 1000, INT_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
    CHECK(rmadht_errname(unknown[i]) != NULL);
    CHECK(strcmp(rmadht_errname(unknown[i]), "RMADHT_UNKNOWN") == 0);
  }
  return check_finish("unit_names");
}
