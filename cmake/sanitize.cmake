# RMADHT_SANITIZE=ON: the library objects, tests and benches built with
# AddressSanitizer and UndefinedBehaviorSanitizer, and any report fatal
# (-fno-sanitize-recover), so that ctest fails on it.  `make
# test-asan-openmpi` / `test-asan-mpich` build this into build/asan-<mpi>.
# Included before any target is defined, so the flags reach every target.
option(RMADHT_SANITIZE "Build with AddressSanitizer and UBSan" OFF)
if(RMADHT_SANITIZE)
  set(RMADHT_SANITIZE_FLAGS -fsanitize=address,undefined
      -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(${RMADHT_SANITIZE_FLAGS})
  add_link_options(${RMADHT_SANITIZE_FLAGS})
  # The MPI libraries leak by design (tables kept until exit): the
  # suppressions name only them (cmake/lsan-mpi.supp says what that gives
  # up).  They match a frame anywhere on the allocation's stack, so the
  # stacks must be whole: MPI is built without frame pointers, and the fast
  # unwinder stops in it, leaving stacks that name no library at all.
  # The runs oversubscribe 2 cores with 4 ranks: idle ranks yield, MPICH's
  # through a preloaded module (tests/CMakeLists.txt) that the runtime must
  # accept ahead of itself (verify_asan_link_order).
  set(RMADHT_SANITIZE_ENV
    "ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:malloc_context_size=40:strict_string_checks=1:verify_asan_link_order=0"
    "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/cmake/lsan-mpi.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
    OMPI_MCA_mpi_yield_when_idle=1)
endif()
