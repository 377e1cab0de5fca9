# Tests of the bookkeeping collectives (comm/collectives.h) and of the spmd
# divergence check over them. Included from tests/comm/CMakeLists.txt.
#
#   runtime.collectives.<suite>.<test>   1-8 ranks as threads of one
#       process over the loopback collectives (no MPI initialised, discovered
#       one test per CTest entry, labels runtime_unit and loopback);
#   runtime.collectives.mpi.np<R>    the same collective checks over
#       MpiCollectives, and the divergence check over MPI, under
#       mpiexec -n 2 and -n 4 (--mpi; labels mpi and collectives).
# Its own main(): MPI is initialised only with --mpi.
taskgrid_unit_test(taskgrid_collectives_tests SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_collectives.cpp
                   LABELS loopback PREFIX runtime.collectives. OWN_MAIN)

foreach(ranks IN ITEMS 2 4)
  set(name runtime.collectives.mpi.np${ranks})
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid_collectives_tests> ${MPIEXEC_POSTFLAGS}
                   --mpi --gtest_filter=MpiCollectives.*)
  # Every rank prints its own GoogleTest summary; any failing rank fails the job.
  set_tests_properties(${name} PROPERTIES
    LABELS "mpi;collectives"
    PROCESSORS 2
    TIMEOUT 60
    FAIL_REGULAR_EXPRESSION "\\[  FAILED  \\]|\\[  SKIPPED \\]")
endforeach()
