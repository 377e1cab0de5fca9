# Tests of bench/device (labels device, bench, mpi). Included from
# tests/device/CMakeLists.txt. They run the benchmark on emulated devices
# (TASKGRID_DEVICE=emulated: no GPU needed) and check that it runs, verifies
# every transfer and reports, never how fast anything is.
#
#   transfer_bench.emulated.np1   1 rank: h2d and d2h, d2d_ranks skipped with its message;
#   transfer_bench.emulated.np2   2 ranks: every case, and the JSON file;
#   transfer_bench.emulated.np2.small_device
#                                 TASKGRID_DEVICE_MEMORY=3 MiB, 4 handles of up to
#                                 1 MiB in turn: the runtime evicts device copies
#                                 (TASKGRID_STATS shows evictions on rank 0);
#   transfer_bench.emulated.np2.injected_fault
#                                 the writer corrupts one byte (--inject-fault): the
#                                 check on rank 1 names case, size, rank and offset,
#                                 status 1;
#   transfer_bench.bad_flag       an unknown option: its name, the usage, status 2.
#
# CTest cannot require an exit status and an output pattern at once, so every
# run goes through expect_failure.py (--status 0 for the runs that must pass),
# which also kills the whole process group if a run hangs.
if(NOT TARGET taskgrid-transfer-bench)
  return()
endif()

set(_transfer_bench_expect ${CMAKE_CURRENT_LIST_DIR}/../runtime/expect_failure.py)
set(_transfer_bench_sizes --min-bytes 4096 --max-bytes 1048576)

# _transfer_bench_test(<name> <ranks> [ENV <var=value>...] CHECK <expect_failure.py args>...
#                      RUN <benchmark args>...)
function(_transfer_bench_test name ranks)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "ENV;CHECK;RUN")
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_transfer_bench_expect} --timeout 100 ${arg_CHECK} --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-transfer-bench> ${MPIEXEC_POSTFLAGS} ${arg_RUN})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "TASKGRID_THREADS=1;${arg_ENV}"
    LABELS "device;bench;mpi" TIMEOUT 120 PROCESSORS ${ranks})
endfunction()

set(_transfer_bench_json ${CMAKE_CURRENT_BINARY_DIR}/transfer_bench_np2.json)
# A table line: case, bytes, then five numbers.
set(_line "[ ]+[0-9.]+[ ]+[0-9.]+[ ]+[0-9.]+[ ]+[0-9.]+[ ]+[0-9.]+\n")

_transfer_bench_test(transfer_bench.emulated.np1 1
  ENV TASKGRID_DEVICE=emulated
  CHECK --status 0
        --regex "device kind: emulated on every rank [(]emulated: not a GPU figure[)]"
        --regex "\nh2d +4096${_line}" --regex "\nd2h +1048576${_line}"
        --regex "d2d_ranks +skipped: needs at least 2 ranks"
        --regex "every transfer verified"
  RUN ${_transfer_bench_sizes} --repeat 2)

_transfer_bench_test(transfer_bench.emulated.np2 2
  ENV TASKGRID_DEVICE=emulated
  CHECK --status 0
        --regex "taskgrid-transfer-bench: 2 ranks, load average [0-9.]+ "
        --regex "\nh2d +1048576${_line}" --regex "\nd2h +1048576${_line}"
        --regex "\nd2d_ranks +4096${_line}" --regex "\nd2d_ranks +1048576${_line}"
        --regex "every transfer verified"
  RUN ${_transfer_bench_sizes} --repeat 2 --json ${_transfer_bench_json})

_transfer_bench_test(transfer_bench.emulated.np2.small_device 2
  ENV TASKGRID_DEVICE=emulated TASKGRID_DEVICE_MEMORY=3145728 TASKGRID_STATS=1
  CHECK --status 0
        --regex "\nd2d_ranks +1048576${_line}"
        --regex "every transfer verified"
        --regex "taskgrid device stats: rank 0 [^\n]* evictions [1-9]"
  RUN ${_transfer_bench_sizes} --repeat 4 --handles 4)

_transfer_bench_test(transfer_bench.emulated.np2.injected_fault 2
  ENV TASKGRID_DEVICE=emulated
  CHECK --status 1
        --regex "verification failed: case d2d_ranks [(]taskgrid[)], 4096 bytes, rank 1, iteration 1: first wrong byte at offset 2048 "
  RUN --min-bytes 4096 --max-bytes 8192 --repeat 2 --cases d2d_ranks --inject-fault)

_transfer_bench_test(transfer_bench.bad_flag 2
  CHECK --status 2 --regex "taskgrid-transfer-bench: unknown option '--bogus'.*usage: "
  RUN --bogus 1)
