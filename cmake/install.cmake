# Installs the libraries, headers, a CMake package (find_package(rmadht):
# rmadht::rmadht, rmadht::poet and their _static forms) and rmadht.pc and
# rmadht-poet.pc.
include(CMakePackageConfigHelpers)

file(GLOB RMADHT_HEADERS ${PROJECT_SOURCE_DIR}/include/*.h)
install(FILES ${RMADHT_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/rmadht/poet/DHT.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rmadht/poet)
# The dialects' libraries need librmadht beside them, and a program linked
# with --as-needed (Debian's default) records only the dialect's: so the
# installed libraries look beside themselves, from any prefix, without
# LD_LIBRARY_PATH.  The installed programs link the objects, not the library.
set_target_properties(rmadht rmadht_poet rmadht_mpidht PROPERTIES
  INSTALL_RPATH "$ORIGIN")
install(TARGETS rmadht rmadht_static rmadht_poet rmadht_poet_static
  EXPORT rmadhtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT rmadhtTargets NAMESPACE rmadht::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rmadht)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rmadhtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rmadhtConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rmadht)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rmadhtConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rmadhtConfig.cmake
              ${PROJECT_BINARY_DIR}/rmadhtConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rmadht)

file(RELATIVE_PATH RMADHT_PC_TO_PREFIX
  ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
foreach(pc rmadht rmadht-poet)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in
    ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# MPI-DHT's API (rmadht::mpidht, rmadht::mpidht_static, rmadht-mpidht.pc);
# the header goes where -I<prefix>/include/rmadht/mpidht finds
# <LUCX/MPI/DHT.h>.
install(FILES ${PROJECT_SOURCE_DIR}/include/rmadht/mpidht/LUCX/MPI/DHT.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rmadht/mpidht/LUCX/MPI)
install(TARGETS rmadht_mpidht rmadht_mpidht_static
  EXPORT rmadhtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/rmadht-mpidht.pc.in
  ${PROJECT_BINARY_DIR}/rmadht-mpidht.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rmadht-mpidht.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
