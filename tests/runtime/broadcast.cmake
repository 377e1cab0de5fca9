# Multi-rank correctness tests of the runtime's broadcast (labels mpi and
# broadcast). Included from tests/runtime/CMakeLists.txt, after
# runtime_programs.cmake (which defines taskgrid-broadcast-check).
#
# taskgrid-broadcast-check runs seeded rounds (a version of 0 B to 1 MiB + 5
# produced on a random root, read by tasks on a random set of ranks, with a
# second concurrent broadcast, a ring of small transfers and rewrites in the
# same planning window); every reader verifies every byte and the program
# checks every reader's result. check_broadcast_run.py runs it with
# TASKGRID_STATS=1 and fails unless the job passed AND the stats show the
# strategy really ran (--expect none|routes|mpi|some, --expect-multichunk).
#
#   runtime.broadcast.<mode>.np<R>.<strategy>     R in 2 3 4 7, every strategy
#       (spmd: fewer, see below), TASKGRID_BCAST_MIN_BYTES=0 (versions of any size, 0 and
#       1 byte included, are broadcast). At 2 ranks there is never a
#       broadcast (it needs two reader ranks besides the holder): expect none.
#   ...<strategy>.bcast_chunk1000    TASKGRID_BCAST_CHUNK=1000 (pipeline, auto)
#   ...<strategy>.chunk_bytes4096    TASKGRID_CHUNK_BYTES=4096: every transfer
#       and broadcast cut into messages of at most 4 KiB (tree, mpi, pipeline)
#   ...auto.default_min_bytes        the default TASKGRID_BCAST_MIN_BYTES:
#       large versions broadcast, small ones fetched on demand
#
# Every test has its own seed; one thread per rank; ranks share 2 cores
# (PROCESSORS 2). spmd tests at 7 ranks run with TASKGRID_CHECK_INTERVAL=0:
# the divergence check is an all-reduce at every fetch (a few hundred per
# run), about 40 ms each with 7 ranks on 2 cores, which would make each such
# test take 10 s instead of 2 s; spmd at 3 and 4 ranks keeps the check.
# A hang is caught by the program (--hang-seconds 30: it aborts naming the
# round and operation) and by the driver (--timeout 100, kills the job).
# A failure prints the command that reproduces it alone (--only R --verbose).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_taskgrid_check_broadcast ${CMAKE_CURRENT_LIST_DIR}/check_broadcast_run.py)

set(TASKGRID_BROADCAST_ROUNDS 16 CACHE STRING "Rounds per broadcast check test")
set(_taskgrid_broadcast_strategies none p2p mpi tree pipeline auto)

# taskgrid_broadcast_test(<mode> <ranks> <strategy> [SUFFIX s] [SEED n] [ROUNDS n] [MULTICHUNK]
#                         [DEFAULT_MIN_BYTES] [ENV var=value...])
# The seed is derived from mode, ranks, strategy and SEED (a variant number).
function(taskgrid_broadcast_test mode ranks strategy)
  cmake_parse_arguments(PARSE_ARGV 3 arg "MULTICHUNK;DEFAULT_MIN_BYTES" "SUFFIX;SEED;ROUNDS" "ENV")
  set(name runtime.broadcast.${mode}.np${ranks}.${strategy})
  if(arg_SUFFIX)
    string(APPEND name .${arg_SUFFIX})
  endif()
  list(FIND _taskgrid_broadcast_strategies ${strategy} strategy_index)
  if(NOT arg_SEED)
    set(arg_SEED 0)
  endif()
  if(NOT arg_ROUNDS)
    set(arg_ROUNDS ${TASKGRID_BROADCAST_ROUNDS})
  endif()
  set(mode_index 1)
  if(mode STREQUAL "spmd")
    set(mode_index 2)
  endif()
  math(EXPR seed "${mode_index} * 10000 + ${ranks} * 1000 + ${strategy_index} * 100 + ${arg_SEED}")
  # What the stats must show.
  if(ranks LESS 3 OR strategy STREQUAL "none")
    set(expect none)
  elseif(strategy STREQUAL "mpi")
    set(expect mpi)
  elseif(strategy STREQUAL "auto")
    # mpi when every participant shares a node (as here), tree or pipeline otherwise.
    set(expect some)
  else()
    set(expect routes)
  endif()
  set(driver_args --expect ${expect} --ranks ${ranks} --timeout 100)
  if(arg_MULTICHUNK)
    list(APPEND driver_args --expect-multichunk)
  endif()
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_taskgrid_check_broadcast} ${driver_args} --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-broadcast-check> ${MPIEXEC_POSTFLAGS}
                   --rounds ${arg_ROUNDS} --seed ${seed} --hang-seconds 30)
  set(environment TASKGRID_MODE=${mode} TASKGRID_BCAST=${strategy} TASKGRID_THREADS=1)
  if(NOT arg_DEFAULT_MIN_BYTES)
    list(APPEND environment TASKGRID_BCAST_MIN_BYTES=0)
  endif()
  if(mode STREQUAL "spmd" AND ranks GREATER 4)
    list(APPEND environment TASKGRID_CHECK_INTERVAL=0)
  endif()
  list(APPEND environment ${arg_ENV})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "${environment}"
    LABELS "mpi;broadcast"
    PROCESSORS 2
    TIMEOUT 120)
endfunction()

# Every mode x ranks x strategy in cluster mode. In spmd mode the loopback
# suite (taskgrid_loopback_tests, LoopbackBroadcast) runs tree, pipeline, p2p
# and mpi at 3, 4 and 7 ranks against sequential execution, so here spmd
# runs every strategy at 4 ranks, none and auto at 7 (what the loopback suite
# does not run) and auto alone at 2 (no broadcast happens at 2 ranks).
foreach(ranks IN ITEMS 2 3 4 7)
  foreach(strategy IN LISTS _taskgrid_broadcast_strategies)
    taskgrid_broadcast_test(cluster ${ranks} ${strategy})
  endforeach()
endforeach()
foreach(strategy IN LISTS _taskgrid_broadcast_strategies)
  taskgrid_broadcast_test(spmd 4 ${strategy})
endforeach()
taskgrid_broadcast_test(spmd 7 none)
taskgrid_broadcast_test(spmd 7 auto)
taskgrid_broadcast_test(spmd 2 auto)

# Pipeline chunks of 1000 bytes: a 1 MiB version goes out in ~1000 chunks.
# auto chooses mpi on one node, and between tree and pipeline from the
# measured network across nodes: no chunk count is expected of it.
taskgrid_broadcast_test(cluster 4 pipeline SUFFIX bcast_chunk1000 SEED 1 MULTICHUNK
                        ENV TASKGRID_BCAST_CHUNK=1000)
taskgrid_broadcast_test(spmd 7 pipeline SUFFIX bcast_chunk1000 SEED 1 MULTICHUNK
                        ENV TASKGRID_BCAST_CHUNK=1000)
taskgrid_broadcast_test(cluster 7 auto SUFFIX bcast_chunk1000 SEED 1
                        ENV TASKGRID_BCAST_CHUNK=1000)
taskgrid_broadcast_test(spmd 4 auto SUFFIX bcast_chunk1000 SEED 1
                        ENV TASKGRID_BCAST_CHUNK=1000)

# The transport's largest message 4 KiB: every broadcast of more than 4 KiB
# is several chunks (several MPI_Ibcast for mpi, which the stats do not count).
taskgrid_broadcast_test(cluster 4 tree SUFFIX chunk_bytes4096 SEED 2 MULTICHUNK
                        ENV TASKGRID_CHUNK_BYTES=4096)
taskgrid_broadcast_test(spmd 7 tree SUFFIX chunk_bytes4096 SEED 2 MULTICHUNK
                        ENV TASKGRID_CHUNK_BYTES=4096)
taskgrid_broadcast_test(cluster 7 mpi SUFFIX chunk_bytes4096 SEED 2
                        ENV TASKGRID_CHUNK_BYTES=4096)
taskgrid_broadcast_test(spmd 4 mpi SUFFIX chunk_bytes4096 SEED 2
                        ENV TASKGRID_CHUNK_BYTES=4096)
taskgrid_broadcast_test(cluster 7 pipeline SUFFIX chunk_bytes4096 SEED 2 MULTICHUNK
                        ENV TASKGRID_CHUNK_BYTES=4096)
taskgrid_broadcast_test(spmd 4 pipeline SUFFIX chunk_bytes4096 SEED 2 MULTICHUNK
                        ENV TASKGRID_CHUNK_BYTES=4096)

# The default TASKGRID_BCAST_MIN_BYTES (64 KiB): the 64 KiB + 13 and 1 MiB + 5
# versions are broadcast, the small ones and the ring go on demand.
taskgrid_broadcast_test(cluster 4 auto SUFFIX default_min_bytes SEED 3 DEFAULT_MIN_BYTES)

# More than 64 distinct member sets (120 rounds of random reader sets at 7
# ranks): past the cap the planner delivers new sets by tree instead of
# creating more communicators; every byte must still arrive, in both modes.
taskgrid_broadcast_test(cluster 7 mpi SUFFIX member_set_cap SEED 4 ROUNDS 120)
taskgrid_broadcast_test(spmd 7 mpi SUFFIX member_set_cap SEED 4 ROUNDS 120
                        ENV TASKGRID_CHECK_INTERVAL=0)

# 100-byte messages: a 1 MiB version is ~10,500 chunks. MPI broadcasts post
# them through the same window as routes (thousands of outstanding
# MPI_Ibcast slowed MPICH to 18-43 s per run, sometimes a minute of no
# progress; windowed: about 1 s).
taskgrid_broadcast_test(cluster 4 mpi SUFFIX chunk_bytes100 SEED 5 ENV TASKGRID_CHUNK_BYTES=100)
# (spmd without the divergence check: its all-reduce at every fetch makes
# this run 7 s instead of 1 s on 2 cores.)
taskgrid_broadcast_test(spmd 4 mpi SUFFIX chunk_bytes100 SEED 5
                        ENV TASKGRID_CHUNK_BYTES=100 TASKGRID_CHECK_INTERVAL=0)
