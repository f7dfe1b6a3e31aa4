# rmadht-snapshot-bench: dump and restore throughput (docs/benchmarks/snapshots.md).
# Included from bench/CMakeLists.txt.
add_executable(rmadht-snapshot-bench ${CMAKE_CURRENT_LIST_DIR}/snapshot_bench.c)
target_link_libraries(rmadht-snapshot-bench PRIVATE rmadht_objects)
install(TARGETS rmadht-snapshot-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
