# Tests of apps/minimod (labels pgas and apps). Included from
# tests/pgas/CMakeLists.txt.
#
#   pgas.minimod.compare.*    taskgrid-minimod-serial, then taskgrid-minimod and
#                             taskgrid-minimod-mpi at 1 to 4 ranks on a grid
#                             whose nz does not divide evenly: identical
#                             "checksum" lines, and a wave that has moved
#                             (compare_minimod.py);
#   pgas.minimod.compare.thin slabs exactly as thick as the 4-plane halo;
#   pgas.minimod.compare.np2.threads2  two OpenMP threads per rank;
#   pgas.minimod.too_thin.*   a slab thinner than the halo is refused: usage,
#                             the reason and exit status 2;
#   pgas.minimod.bad_option   an unknown option: usage and exit status 2;
#   pgas.minimod.halo_loc     both programs mark their halo exchange once.
#
# One thread per rank: four ranks share two cores.
if(NOT TARGET taskgrid-minimod)
  return()
endif()

set(_minimod_expect_failure ${CMAKE_CURRENT_LIST_DIR}/../runtime/expect_failure.py)

function(_taskgrid_minimod_properties name)
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "OMP_NUM_THREADS=1"
    LABELS "pgas;apps"
    PROCESSORS 2
    TIMEOUT 120)
endfunction()

# taskgrid_minimod_compare_test(<name> <ranks> <program arguments>...)
function(taskgrid_minimod_compare_test name ranks)
  set(name pgas.minimod.compare.${name})
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/compare_minimod.py
                   --mpiexec ${MPIEXEC_EXECUTABLE} --numproc-flag=${MPIEXEC_NUMPROC_FLAG}
                   --ranks ${ranks} --timeout 60
                   --serial $<TARGET_FILE:taskgrid-minimod-serial>
                   --pgas $<TARGET_FILE:taskgrid-minimod>
                   --mpi $<TARGET_FILE:taskgrid-minimod-mpi>
                   -- ${ARGN})
  _taskgrid_minimod_properties(${name})
endfunction()

# 37 planes: slabs of 37, 18-19, 12-13 and 9-10 planes. In 12 steps the wave
# crosses several slab boundaries and reaches the grid's edges.
foreach(ranks IN ITEMS 1 2 3 4)
  taskgrid_minimod_compare_test(np${ranks} ${ranks} --nx 24 --ny 20 --nz 37 --steps 12)
endforeach()
taskgrid_minimod_compare_test(thin 4 --nx 12 --ny 10 --nz 16 --steps 10 --f0 25)
# Threads split the points, never a point's sum: two per rank change no bit.
taskgrid_minimod_compare_test(np2.threads2 2 --nx 24 --ny 20 --nz 37 --steps 12)
set_tests_properties(pgas.minimod.compare.np2.threads2 PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")

# taskgrid_minimod_too_thin_test(<target> <ranks> <nz>): the smallest slab has nz / ranks planes.
function(taskgrid_minimod_too_thin_test target ranks nz)
  set(name pgas.minimod.too_thin.${target}.np${ranks})
  math(EXPR thinnest "${nz} / ${ranks}")
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_minimod_expect_failure} --timeout 60 --status 2
                   --regex "${target}: --nz ${nz} over ${ranks} ranks gives slabs of ${thinnest} planes, thinner than the 4-plane halo"
                   --regex "options: --nx N"
                   --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS} --nx 8 --ny 8 --nz ${nz} --steps 2)
  _taskgrid_minimod_properties(${name})
endfunction()
taskgrid_minimod_too_thin_test(taskgrid-minimod 4 15)
taskgrid_minimod_too_thin_test(taskgrid-minimod-mpi 4 15)
taskgrid_minimod_too_thin_test(taskgrid-minimod 2 3)

add_test(NAME pgas.minimod.bad_option
         COMMAND ${Python3_EXECUTABLE} ${_minimod_expect_failure} --timeout 60 --status 2
                 --regex "taskgrid-minimod: unknown option '--bogus'.*options: --nx N"
                 --
                 ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-minimod> ${MPIEXEC_POSTFLAGS} --bogus)
_taskgrid_minimod_properties(pgas.minimod.bad_option)

add_test(NAME pgas.minimod.halo_loc
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/../../apps/minimod/halo_loc.py)
set_tests_properties(pgas.minimod.halo_loc PROPERTIES
  LABELS "pgas;apps"
  PASS_REGULAR_EXPRESSION "halo_loc pgas [1-9][0-9]*\nhalo_loc mpi [1-9][0-9]*\n"
  TIMEOUT 30)
