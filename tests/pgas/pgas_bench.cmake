# Tests of bench/pgas (labels pgas and bench). Included from
# tests/pgas/CMakeLists.txt. They check that the benchmark runs and reports,
# never how fast anything is.
#
#   pgas.bench.smoke     taskgrid-pgas-bench at 2 ranks, tiny sizes and batches,
#                        every section; writes the CSV the report test reads;
#   pgas.bench.report    pytest (bench/pgas/tests): the smoke CSV has every
#                        section/op/system row with positive times, the report
#                        writes table.md and the plots from it; the report's
#                        ratios and goals on a synthetic CSV;
#   pgas.bench.one_rank  at 1 rank: the "needs at least 2 processes" error, status 2;
#   pgas.bench.bad_option  an unknown option: usage and status 2.
if(NOT TARGET taskgrid-pgas-bench)
  return()
endif()

set(_pgas_bench_expect_failure ${CMAKE_CURRENT_LIST_DIR}/../runtime/expect_failure.py)
set(_pgas_bench_smoke_csv ${CMAKE_CURRENT_BINARY_DIR}/pgas_bench_smoke.csv)

function(_taskgrid_pgas_bench_properties name)
  set_tests_properties(${name} PROPERTIES LABELS "pgas;bench" PROCESSORS 2 TIMEOUT 300)
endfunction()

add_test(NAME pgas.bench.smoke
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-pgas-bench> ${MPIEXEC_POSTFLAGS}
                 --max-bytes 65536 --rounds 2 --iters 3 --reps 3 --csv ${_pgas_bench_smoke_csv})
_taskgrid_pgas_bench_properties(pgas.bench.smoke)
set_tests_properties(pgas.bench.smoke PROPERTIES FIXTURES_SETUP pgas_bench_smoke_csv)

add_test(NAME pgas.bench.report
         COMMAND ${TASKGRID_PYTHON} -m pytest -q -p no:cacheprovider
                 ${PROJECT_SOURCE_DIR}/bench/pgas/tests)
_taskgrid_pgas_bench_properties(pgas.bench.report)
set_tests_properties(pgas.bench.report PROPERTIES
  ENVIRONMENT "PGAS_BENCH_SMOKE_CSV=${_pgas_bench_smoke_csv}"
  FIXTURES_REQUIRED pgas_bench_smoke_csv)

add_test(NAME pgas.bench.one_rank
         COMMAND ${Python3_EXECUTABLE} ${_pgas_bench_expect_failure} --timeout 60 --status 2
                 --regex "taskgrid-pgas-bench: needs at least 2 processes .*got 1"
                 --
                 ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 1 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-pgas-bench> ${MPIEXEC_POSTFLAGS} --max-bytes 65536)
_taskgrid_pgas_bench_properties(pgas.bench.one_rank)

add_test(NAME pgas.bench.bad_option
         COMMAND ${Python3_EXECUTABLE} ${_pgas_bench_expect_failure} --timeout 60 --status 2
                 --regex "taskgrid-pgas-bench: unknown option '--bogus'.*usage: "
                 --
                 ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-pgas-bench> ${MPIEXEC_POSTFLAGS} --bogus 1)
_taskgrid_pgas_bench_properties(pgas.bench.bad_option)
