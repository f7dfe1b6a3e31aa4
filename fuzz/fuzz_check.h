/* A failed invariant in a fuzz target: say which, then abort, which
   libFuzzer reports as a crash and saves the input for. */
#ifndef RMADHT_FUZZ_CHECK_H
#define RMADHT_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed\n", __FILE__, __LINE__,  \
              #cond);                                                        \
      abort();                                                               \
    }                                                                        \
  } while (0)

#endif
