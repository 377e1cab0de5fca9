# Differential random-graph tests of the TaskGrid runtime (labels mpi and
# differential). Included from tests/runtime/CMakeLists.txt, after
# runtime_programs.cmake (which defines taskgrid-differential).
#
# taskgrid-differential runs seeded random task graphs on TaskGrid and
# sequentially, and compares every handle's bytes. CI runs every combination
# of 1, 2 and 4 ranks and the three schedulers, 400 graphs of up to 60 tasks
# each (3,600 graphs, about 110,000 tasks in all), each test with its own
# seed; a third of them use two threads per rank. Measured on the 2-core
# machine: under 1 s per test at 1 and 2 ranks, about 2.5 s at 4 ranks, 12 s
# for all nine run one after another. A hang is caught by the harness itself
# (--hang-seconds 30: it aborts naming the graph and operation).
#
# Long mode (not in CI): tests/runtime/differential_long.sh runs 10,800
# graphs by default (36 runs: ranks x schedulers x 1-2 threads x graphs of up
# to 60 and up to 400 tasks; about 3 minutes) with seeds that change every day.
#
# A failure prints the seed, the graph and the first differing byte, and the
# command that reproduces it alone (--only G --verbose).

set(TASKGRID_DIFFERENTIAL_GRAPHS 400 CACHE STRING
    "Random graphs per differential test (9 tests)")

# The cores CTest counts for a test of <ranks> ranks (the machine has 2).
function(taskgrid_test_processors out ranks)
  if(ranks GREATER 2)
    set(ranks 2)
  endif()
  set(${out} ${ranks} PARENT_SCOPE)
endfunction()

# taskgrid_differential_test(<ranks> <scheduler> <threads> <seed>)
function(taskgrid_differential_test ranks scheduler threads seed)
  set(name runtime.differential.np${ranks}.${scheduler}.t${threads})
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-differential> ${MPIEXEC_POSTFLAGS}
                   --graphs ${TASKGRID_DIFFERENTIAL_GRAPHS} --seed ${seed} --tasks-max 60
                   --hang-seconds 30)
  taskgrid_test_processors(processors ${ranks})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "TASKGRID_SCHEDULER=${scheduler};TASKGRID_THREADS=${threads}"
    LABELS "mpi;differential"
    PROCESSORS ${processors}
    TIMEOUT 120
    # Pass: exit status 0 (the harness exits 0 only after "...: all equal");
    # a PASS_REGULAR_EXPRESSION would make CTest ignore the exit status.
    # Messages sent but never received are the job of
    # runtime.protocol.zero_byte_fetch (error_cases.cmake), not of these tests.
    FAIL_REGULAR_EXPRESSION "differential: (MISMATCH|ERROR|HANG)|error: taskgrid")
endfunction()

# Seeds differ per test; two threads per rank for one scheduler per rank count.
taskgrid_differential_test(1 round_robin 2 1101)
taskgrid_differential_test(1 locality    1 1102)
taskgrid_differential_test(1 heft        1 1103)
taskgrid_differential_test(2 round_robin 1 2201)
taskgrid_differential_test(2 locality    2 2202)
taskgrid_differential_test(2 heft        1 2203)
taskgrid_differential_test(4 round_robin 1 4401)
taskgrid_differential_test(4 locality    1 4402)
taskgrid_differential_test(4 heft        2 4403)

# spmd mode: every rank runs the harness (the replicated planner), at 1, 2, 3
# and 4 ranks, one with two threads per rank. At 3 and 4 ranks, 100 graphs
# (at 4 ranks and two threads on 2 cores, 400 took 70 s): the spmd planner's
# and engine's logic at 1-8 ranks is the loopback suite's (taskgrid_loopback_tests:
# random graphs against sequential execution, windows, both thread models);
# these runs add MPI's transport beneath it.
function(taskgrid_differential_spmd_test ranks threads seed)
  set(graphs ${TASKGRID_DIFFERENTIAL_GRAPHS})
  if(ranks GREATER 2)
    set(graphs 100)
  endif()
  set(name runtime.differential.spmd.np${ranks}.t${threads})
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-differential> ${MPIEXEC_POSTFLAGS}
                   --graphs ${graphs} --seed ${seed} --tasks-max 60)
  taskgrid_test_processors(processors ${ranks})
  # 300 s: 100 graphs at 4 ranks on 2 cores take about 18 s alone; a hang is
  # caught by the harness itself (30 s).
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "TASKGRID_MODE=spmd;TASKGRID_THREADS=${threads}"
    FAIL_REGULAR_EXPRESSION "differential: (MISMATCH|ERROR|HANG)|error: taskgrid"
    PROCESSORS ${processors} LABELS "mpi;differential;spmd" TIMEOUT 300)
endfunction()

taskgrid_differential_spmd_test(1 1 5101)
taskgrid_differential_spmd_test(2 1 5202)
taskgrid_differential_spmd_test(3 1 5303)
taskgrid_differential_spmd_test(4 2 5404)

# Transfers cut into many small messages (TASKGRID_CHUNK_BYTES): the chunked
# path of the transport (any size, > 2 GiB included, goes this way).
add_test(NAME runtime.differential.chunked.np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-differential> ${MPIEXEC_POSTFLAGS}
                 --graphs 100 --seed 6161 --tasks-max 60)
set_tests_properties(runtime.differential.chunked.np2 PROPERTIES
  ENVIRONMENT "TASKGRID_CHUNK_BYTES=100;TASKGRID_SCHEDULER=round_robin;TASKGRID_THREADS=1"
  FAIL_REGULAR_EXPRESSION "differential: (MISMATCH|ERROR|HANG)|error: taskgrid"
  PROCESSORS 2 LABELS "mpi;differential" TIMEOUT 120)

# Runs of 100 graphs under extra settings (`environment`: a ;-list), in
# cluster mode at 2 and 4 ranks and in spmd mode at 2 (the loopback suite
# runs spmd with the same windows and thread models at 1-8 ranks; at 4 ranks
# on 2 cores each such run took 15-20 s); `seed` gets the rank count in its
# middle.
function(taskgrid_differential_variant variant seed_head seed_tail environment)
  foreach(mode IN ITEMS cluster spmd)
    set(rank_counts 2 4)
    if(mode STREQUAL "spmd")
      set(rank_counts 2)
    endif()
    foreach(ranks IN LISTS rank_counts)
      set(name runtime.differential.${variant}.${mode}.np${ranks})
      add_test(NAME ${name}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                       $<TARGET_FILE:taskgrid-differential> ${MPIEXEC_POSTFLAGS}
                       --graphs 100 --seed ${seed_head}${ranks}${seed_tail} --tasks-max 60
                       --hang-seconds 30)
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "TASKGRID_MODE=${mode};${environment};TASKGRID_SCHEDULER=round_robin;TASKGRID_THREADS=1"
        FAIL_REGULAR_EXPRESSION "differential: (MISMATCH|ERROR|HANG)|error: taskgrid"
        PROCESSORS 2 LABELS "mpi;differential" TIMEOUT 120)
    endforeach()
  endforeach()
endfunction()

# A submission window of 2 tasks (TASKGRID_WINDOW): programs wait for their
# tasks mid-graph, each rank at its own point; never a deadlock, same results.
taskgrid_differential_variant(window2 81 1 "TASKGRID_WINDOW=2")
# A byte window of 1 KiB (TASKGRID_WINDOW_BYTES, no task window): programs
# wait whenever their tasks in flight write 1 KiB or more; same results.
taskgrid_differential_variant(window_bytes 71 3 "TASKGRID_WINDOW=0;TASKGRID_WINDOW_BYTES=1024")
# The other thread model: the engine thread alone drives the loop while the
# program sleeps (TASKGRID_PROGRESS=engine; the default is the program).
taskgrid_differential_variant(engine_progress 93 7 "TASKGRID_PROGRESS=engine;TASKGRID_WINDOW=4")

# TASKGRID_TRACE and TASKGRID_STATS: one Chrome trace for the whole job, a
# stats line per rank, and the two agree.
foreach(mode IN ITEMS cluster spmd)
  add_test(NAME runtime.trace_and_stats.${mode}.np2
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_trace.py 2
                   ${CMAKE_CURRENT_BINARY_DIR}/trace-${mode}.json --receives --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-differential> ${MPIEXEC_POSTFLAGS}
                   --graphs 20 --seed 7272 --tasks-max 60)
  set_tests_properties(runtime.trace_and_stats.${mode}.np2 PROPERTIES
    ENVIRONMENT "TASKGRID_MODE=${mode};TASKGRID_SCHEDULER=round_robin;TASKGRID_THREADS=1"
    PROCESSORS 2 LABELS "mpi;trace" TIMEOUT 120)
endforeach()

# Receive spans, flow arrows, the DOT dump and the timeline tool.
include(${CMAKE_CURRENT_LIST_DIR}/trace.cmake)

# Devices: the same random graphs with the ranks' tasks of diff_device_hash_fill
# (a fifth of them) on emulated devices (TASKGRID_DEVICE=emulated, two per
# rank, 16 KiB each so that replicas are evicted), at 1, 2 and 4 ranks, in
# cluster mode and at 2 ranks in spmd mode. TASKGRID_STATS=1: each test also
# requires that rank 0's device ran tasks.
# Versions made on devices stay there, so every send of one to another rank
# copies it off its device: staged through host memory in pieces
# (TASKGRID_DEVICE_STAGING_BYTES=64 here, so most sends take several), or,
# with TASKGRID_GPU_AWARE_MPI=yes, straight from device memory (the emulated
# device's host view stands in for a CUDA-aware MPI). Variant "" is the
# default; the others require their kind of send on some rank.
function(taskgrid_differential_device_test ranks mode seed)
  set(variant "${ARGV3}")
  set(environment "TASKGRID_MODE=${mode};TASKGRID_DEVICE=emulated;TASKGRID_EMULATED_DEVICES=2;TASKGRID_DEVICE_MEMORY=16384;TASKGRID_DEVICE_STREAMS=2;TASKGRID_STATS=1")
  set(expected "taskgrid device stats: rank 0 tasks [1-9]")
  set(name runtime.differential.device.${mode}.np${ranks})
  if(variant STREQUAL "staged")
    string(APPEND environment ";TASKGRID_DEVICE_STAGING_BYTES=64")
    set(expected "sends staged [1-9][0-9]* \\(pieces [1-9][0-9]*\\)")
    string(APPEND name ".staged")
  elseif(variant STREQUAL "direct")
    string(APPEND environment ";TASKGRID_GPU_AWARE_MPI=yes")
    set(expected "direct [1-9]")
    string(APPEND name ".direct")
  endif()
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-differential> ${MPIEXEC_POSTFLAGS}
                   --graphs 200 --seed ${seed} --tasks-max 60 --hang-seconds 30)
  taskgrid_test_processors(processors ${ranks})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "${environment}"
    PASS_REGULAR_EXPRESSION "${expected}"
    FAIL_REGULAR_EXPRESSION "differential: (MISMATCH|ERROR|HANG)|error: taskgrid"
    LABELS "mpi;differential;device"
    PROCESSORS ${processors}
    TIMEOUT 300)
endfunction()
taskgrid_differential_device_test(1 cluster 7101)
taskgrid_differential_device_test(2 cluster 7201)
taskgrid_differential_device_test(4 cluster 7401)
taskgrid_differential_device_test(2 spmd 7202)
taskgrid_differential_device_test(2 spmd 7203 staged)
taskgrid_differential_device_test(4 cluster 7403 staged)
taskgrid_differential_device_test(2 cluster 7204 direct)
taskgrid_differential_device_test(4 cluster 7404 direct)
