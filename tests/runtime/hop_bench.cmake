# Tests of the hop benchmark (bench/hop/): short chains in both modes at 2
# ranks (every chain's count is checked on rank 0), and its refusals.
if(NOT TARGET taskgrid-hop-bench)
  return()
endif()

foreach(mode spmd cluster)
  add_test(NAME bench.hop.${mode}.np2
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-hop-bench> ${MPIEXEC_POSTFLAGS}
                   --mode ${mode} --bytes 8,4096 --hops 20 --rounds 2)
  set_tests_properties(bench.hop.${mode}.np2 PROPERTIES
    PASS_REGULAR_EXPRESSION "hop bench: ${mode} mode.*\n +8 .*\n +4096 .*hop bench: ok"
    FAIL_REGULAR_EXPRESSION "error"
    ENVIRONMENT "TASKGRID_THREADS=1"
    LABELS "mpi;bench" PROCESSORS 2 TIMEOUT 120)
endforeach()

add_test(NAME bench.hop.one_rank
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 1 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-hop-bench> ${MPIEXEC_POSTFLAGS})
set_tests_properties(bench.hop.one_rank PROPERTIES
  PASS_REGULAR_EXPRESSION "taskgrid-hop-bench: error: needs at least 2 ranks"
  LABELS "mpi;bench" TIMEOUT 60)
add_test(NAME bench.hop.odd_hops
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-hop-bench> ${MPIEXEC_POSTFLAGS} --hops 7)
set_tests_properties(bench.hop.odd_hops PROPERTIES
  PASS_REGULAR_EXPRESSION "error: --hops must be an even number from 2 to 10000000, not '7'"
  LABELS "mpi;bench" PROCESSORS 2 TIMEOUT 60)
