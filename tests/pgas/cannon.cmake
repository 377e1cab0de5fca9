# Tests of apps/cannon (labels pgas and apps). Included from
# tests/pgas/CMakeLists.txt; present only when the programs are built (they
# need OpenBLAS).
#
#   pgas.cannon.compare.*   taskgrid-cannon and taskgrid-cannon-mpi at 1 to 4
#                           ranks, sizes that do not divide evenly, --check:
#                           both must pass their check and print identical
#                           "checksum" lines (compare_cannon.py);
#   pgas.cannon.corrupt.*   --corrupt perturbs one element of C on the last
#                           rank: the check must end the job naming it
#                           (expect_failure.py);
#   pgas.cannon.bad_option  an unknown option: usage and exit status 2.
#
# One thread per rank: four ranks share two cores.
if(NOT TARGET taskgrid-cannon)
  return()
endif()

set(_cannon_expect_failure ${CMAKE_CURRENT_LIST_DIR}/../runtime/expect_failure.py)

function(_taskgrid_cannon_properties name)
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1"
    LABELS "pgas;apps"
    PROCESSORS 2
    TIMEOUT 120)
endfunction()

# taskgrid_cannon_compare_test(<ranks> <n>)
function(taskgrid_cannon_compare_test ranks n)
  set(name pgas.cannon.compare.np${ranks}.n${n})
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/compare_cannon.py
                   --mpiexec ${MPIEXEC_EXECUTABLE} --ranks ${ranks} --timeout 60
                   --program $<TARGET_FILE:taskgrid-cannon>
                   --program $<TARGET_FILE:taskgrid-cannon-mpi>
                   -- --n ${n} --reps 1 --check)
  _taskgrid_cannon_properties(${name})
endfunction()

foreach(ranks IN ITEMS 1 2 3 4)
  foreach(n IN ITEMS 97 130)
    taskgrid_cannon_compare_test(${ranks} ${n})
  endforeach()
endforeach()
# One row per rank but the last, which has two.
taskgrid_cannon_compare_test(4 5)

# taskgrid_cannon_corrupt_test(<target> <ranks>): the last rank's first row is wrong.
function(taskgrid_cannon_corrupt_test target ranks)
  set(name pgas.cannon.corrupt.${target}.np${ranks})
  math(EXPR last "${ranks} - 1")
  math(EXPR first_row_of_last "97 * ${last} / ${ranks}")
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_cannon_expect_failure} --timeout 60
                   --regex "cannon: rank ${last}: wrong result at [(]${first_row_of_last},0[)]: got [^ ]+ expected "
                   --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS} --n 97 --reps 1 --check --corrupt)
  _taskgrid_cannon_properties(${name})
endfunction()
taskgrid_cannon_corrupt_test(taskgrid-cannon 3)
taskgrid_cannon_corrupt_test(taskgrid-cannon-mpi 2)

add_test(NAME pgas.cannon.bad_option
         COMMAND ${Python3_EXECUTABLE} ${_cannon_expect_failure} --timeout 60 --status 2
                 --regex "taskgrid-cannon: unknown option '--bogus'.*options: --n N"
                 --
                 ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-cannon> ${MPIEXEC_POSTFLAGS} --bogus)
_taskgrid_cannon_properties(pgas.cannon.bad_option)
