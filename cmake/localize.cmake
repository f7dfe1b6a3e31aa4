# rmadht_localize_archive(<static library target>): gives an archive the
# shared library's symbol boundary.
#
# Hidden visibility decides what a shared library exports, but an archive is
# only a bundle of objects: every function one source file calls in another
# stays global in it, under its plain name, and a program that links the
# archive and defines a function of the same name fails to link, or calls
# the wrong one.  So once the archive is written, its objects are merged into
# one relocatable object (ld -r), which resolves the calls between them, and
# every hidden symbol of that object is made local (objcopy
# --localize-hidden).  What the sources compile with hidden visibility, that
# is everything the headers do not mark RMADHT_API, is then local, and the
# archive holds that one object.  The target's sources must be compiled with
# C_VISIBILITY_PRESET hidden.  tests/script_exports.sh checks the result.
#
# A target calls it once after add_library:  rmadht_localize_archive(mylib)

foreach(tool CMAKE_LINKER CMAKE_OBJCOPY CMAKE_AR CMAKE_RANLIB)
  if(NOT ${tool})
    message(FATAL_ERROR "rmadht needs ${tool} (binutils: ld, objcopy, ar, "
      "ranlib) to localize the internal symbols of its static libraries")
  endif()
endforeach()

function(rmadht_localize_archive target)
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "STATIC_LIBRARY")
    message(FATAL_ERROR "rmadht_localize_archive: ${target} is no static library")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir)
  # Named after the library, as the archive's one member.
  set(merged ${dir}/$<TARGET_FILE_BASE_NAME:${target}>.o)
  set(archive $<TARGET_FILE:${target}>)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${CMAKE_LINKER} -r -o ${merged} --whole-archive ${archive}
    COMMAND ${CMAKE_OBJCOPY} --localize-hidden ${merged}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${archive}
    COMMAND ${CMAKE_AR} qc ${archive} ${merged}
    COMMAND ${CMAKE_RANLIB} ${archive}
    COMMENT "Making the internal symbols of ${target} local"
    VERBATIM)
endfunction()
