# Install rules: headers, libtaskgrid, the CMake package (TaskGridConfig.cmake,
# target TaskGrid::taskgrid), taskgrid.pc and the timeline tool
# (bin/taskgrid-timeline). Included by the top-level CMakeLists.txt when
# TASKGRID_INSTALL is on. An Open MPI build installs beside an MPICH one:
# libtaskgrid-openmpi.a, find_package(TaskGridOpenMPI) (the same target
# TaskGrid::taskgrid) and taskgrid-openmpi.pc; the headers are the same files.
include(CMakePackageConfigHelpers)

if(TASKGRID_MPI STREQUAL "openmpi")
  set(TASKGRID_PACKAGE_NAME TaskGridOpenMPI)
  set(_taskgrid_pc_mpi_default ompi-c)
else()
  set(TASKGRID_PACKAGE_NAME TaskGrid)
  set(_taskgrid_pc_mpi_default mpich)
endif()
set(TASKGRID_PC_NAME taskgrid${TASKGRID_MPI_SUFFIX})
set(TASKGRID_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/${TASKGRID_PACKAGE_NAME} CACHE STRING
    "Where TaskGridConfig.cmake is installed (relative to the prefix)")
set(TASKGRID_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig CACHE STRING
    "Where taskgrid${TASKGRID_MPI_SUFFIX}.pc is installed (relative to the prefix)")

install(TARGETS taskgrid EXPORT TaskGridTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/taskgrid DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/taskgrid/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/taskgrid)

# The timeline tool (TASKGRID_TRACE's picture) as a command of its own; it
# needs python3, and matplotlib only to draw.
install(PROGRAMS tools/timeline/taskgrid_timeline.py DESTINATION ${CMAKE_INSTALL_BINDIR}
        RENAME taskgrid-timeline)

# The launcher helper that relaunches a job from its last checkpoint after
# a lost rank (src/runtime/taskgrid-run; the same for every MPI).
install(PROGRAMS src/runtime/taskgrid-run DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT TaskGridTargets NAMESPACE TaskGrid:: DESTINATION ${TASKGRID_INSTALL_CMAKEDIR})
# The MPI wrappers TaskGrid was built with become the consumer's defaults.
set(TASKGRID_MPI_C_COMPILER "${MPI_C_COMPILER}")
set(TASKGRID_MPI_CXX_COMPILER "${MPI_CXX_COMPILER}")
set(TASKGRID_MPIEXEC_EXECUTABLE "${MPIEXEC_EXECUTABLE}")
configure_package_config_file(cmake/TaskGridConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/${TASKGRID_PACKAGE_NAME}Config.cmake
  INSTALL_DESTINATION ${TASKGRID_INSTALL_CMAKEDIR})
# 0.x: only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/${TASKGRID_PACKAGE_NAME}ConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/${TASKGRID_PACKAGE_NAME}Config.cmake
              ${PROJECT_BINARY_DIR}/cmake/${TASKGRID_PACKAGE_NAME}ConfigVersion.cmake
        DESTINATION ${TASKGRID_INSTALL_CMAKEDIR})

# taskgrid.pc finds its prefix from its own place (${pcfiledir}), so
# `cmake --install build --prefix DIR` works for any DIR.
if(IS_ABSOLUTE "${TASKGRID_INSTALL_PKGCONFIGDIR}")
  set(TASKGRID_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _tg_up "/prefix/${TASKGRID_INSTALL_PKGCONFIGDIR}" "/prefix")
  string(REGEX REPLACE "/$" "" _tg_up "${_tg_up}")
  set(TASKGRID_PC_PREFIX "\${pcfiledir}/${_tg_up}")
endif()
# taskgrid.pc's private fields come from the library's link interface, so
# that a dependency added to the target reaches pkg-config users without a
# hand edit here. MPI becomes Requires.private on MPI's own module (where
# pkg-config knows it: the wrappers add MPI otherwise); an item with no
# pkg-config form stops the configure rather than go missing.
set(TASKGRID_PC_MPI_MODULE ${_taskgrid_pc_mpi_default} CACHE STRING
    "pkg-config module of the MPI TaskGrid is built with (taskgrid.pc's Requires.private)")
function(_taskgrid_pc_private_fields target out_libs out_requires)
  find_program(TASKGRID_PKG_CONFIG pkg-config)
  get_target_property(items ${target} INTERFACE_LINK_LIBRARIES)
  set(libs)
  set(requires)
  foreach(item IN LISTS items)
    # $<LINK_ONLY:x> links x; $<BUILD_INTERFACE:x> is not installed.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    if(item MATCHES "^\\$<BUILD_INTERFACE:")
      continue()
    endif()
    string(REGEX REPLACE "^\\$<INSTALL_INTERFACE:(.*)>$" "\\1" item "${item}")
    if(item STREQUAL "TaskGrid::mpi")
      if(TASKGRID_PKG_CONFIG AND TASKGRID_PC_MPI_MODULE)
        execute_process(COMMAND ${TASKGRID_PKG_CONFIG} --exists ${TASKGRID_PC_MPI_MODULE}
                        RESULT_VARIABLE missing)
        if(NOT missing)
          list(APPEND requires ${TASKGRID_PC_MPI_MODULE})
        endif()
      endif()
    elseif(item STREQUAL "Threads::Threads")
      list(APPEND libs -pthread)
    elseif(item MATCHES "^-" OR IS_ABSOLUTE "${item}")
      list(APPEND libs ${item})
    elseif(item MATCHES "::|\\$<" OR TARGET "${item}")
      message(FATAL_ERROR "taskgrid.pc: no pkg-config form for the link item '${item}' of "
                          "${target} (cmake/TaskGridInstall.cmake)")
    else()
      list(APPEND libs -l${item})
    endif()
  endforeach()
  # The library is C++: a program linked by the C driver needs the C++
  # runtime, which the compiler (not the target) names.
  set(runtime ${CMAKE_CXX_IMPLICIT_LINK_LIBRARIES})
  list(FILTER runtime INCLUDE REGEX "^(stdc\\+\\+|c\\+\\+|m)$")
  list(TRANSFORM runtime PREPEND -l)
  list(APPEND libs ${runtime})
  list(REMOVE_DUPLICATES libs)
  list(JOIN libs " " libs)
  list(JOIN requires ", " requires)
  set(${out_libs} "${libs}" PARENT_SCOPE)
  set(${out_requires} "${requires}" PARENT_SCOPE)
endfunction()
_taskgrid_pc_private_fields(taskgrid TASKGRID_PC_LIBS_PRIVATE TASKGRID_PC_REQUIRES_PRIVATE)
# A static libtaskgrid needs them in every link, not only in --static ones.
get_target_property(_tg_type taskgrid TYPE)
set(TASKGRID_PC_LIBS_STATIC "")
if(_tg_type STREQUAL "STATIC_LIBRARY")
  set(TASKGRID_PC_LIBS_STATIC " ${TASKGRID_PC_LIBS_PRIVATE}")
endif()
configure_file(cmake/taskgrid.pc.in ${PROJECT_BINARY_DIR}/cmake/${TASKGRID_PC_NAME}.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/${TASKGRID_PC_NAME}.pc
        DESTINATION ${TASKGRID_INSTALL_PKGCONFIGDIR})
