# Installs the libraries, headers, a CMake package (find_package(rmadht))
# and rmadht.pc.
include(CMakePackageConfigHelpers)

file(GLOB RMADHT_HEADERS ${PROJECT_SOURCE_DIR}/include/*.h)
install(FILES ${RMADHT_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS rmadht rmadht_static EXPORT rmadhtTargets
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
configure_file(${PROJECT_SOURCE_DIR}/cmake/rmadht.pc.in
  ${PROJECT_BINARY_DIR}/rmadht.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rmadht.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
