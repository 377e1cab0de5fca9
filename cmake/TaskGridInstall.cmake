# Install rules: headers, libtaskgrid, the CMake package (TaskGridConfig.cmake,
# target TaskGrid::taskgrid), taskgrid.pc and the timeline tool
# (bin/taskgrid-timeline). Included by the top-level CMakeLists.txt when
# TASKGRID_INSTALL is on.
include(CMakePackageConfigHelpers)

set(TASKGRID_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/TaskGrid CACHE STRING
    "Where TaskGridConfig.cmake is installed (relative to the prefix)")
set(TASKGRID_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig CACHE STRING
    "Where taskgrid.pc is installed (relative to the prefix)")

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

install(EXPORT TaskGridTargets NAMESPACE TaskGrid:: DESTINATION ${TASKGRID_INSTALL_CMAKEDIR})
# The MPI wrappers TaskGrid was built with become the consumer's defaults.
set(TASKGRID_MPI_C_COMPILER "${MPI_C_COMPILER}")
set(TASKGRID_MPI_CXX_COMPILER "${MPI_CXX_COMPILER}")
set(TASKGRID_MPIEXEC_EXECUTABLE "${MPIEXEC_EXECUTABLE}")
configure_package_config_file(cmake/TaskGridConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/TaskGridConfig.cmake
  INSTALL_DESTINATION ${TASKGRID_INSTALL_CMAKEDIR})
# 0.x: only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/TaskGridConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/TaskGridConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/TaskGridConfigVersion.cmake
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
configure_file(cmake/taskgrid.pc.in ${PROJECT_BINARY_DIR}/cmake/taskgrid.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/taskgrid.pc DESTINATION ${TASKGRID_INSTALL_PKGCONFIGDIR})
