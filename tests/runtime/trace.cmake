# The trace (TASKGRID_TRACE), the task graph dump (TASKGRID_DOT) and the
# timeline tool (tools/timeline), on a real job. Included from
# differential.cmake, after its trace_and_stats tests.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# A four-task graph of known shape (tests/runtime/trace_graph.cpp).
add_executable(taskgrid-trace-graph ${CMAKE_CURRENT_LIST_DIR}/trace_graph.cpp)
target_link_libraries(taskgrid-trace-graph PRIVATE taskgrid)
set_target_properties(taskgrid-trace-graph PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                      ${PROJECT_BINARY_DIR}/bin)

# Receive spans with a send -> receive arrow each, the three dependency
# arrows and DOT edges 1->3 (h0), 2->3 (h1), 3->4 (h0), the task named with
# invalid UTF-8 in valid JSON and DOT, and the timeline's PNG of every track.
# Tasks run on ranks 0 and 1 only (np4: ranks 2 and 3 only serve).
foreach(mode IN ITEMS cluster spmd)
  foreach(ranks IN ITEMS 2 4)
    set(name runtime.trace_graph.${mode}.np${ranks})
    set(out ${CMAKE_CURRENT_BINARY_DIR}/trace-graph-${mode}-${ranks})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_trace.py
                     ${ranks} ${out}.json --task-ranks 2 --receives --dependencies 3
                     --replaced-name "check ? sum" --dot ${out}.dot --dot-edges "1>3:0,2>3:1,3>4:0"
                     --timeline ${PROJECT_SOURCE_DIR}/tools/timeline/taskgrid_timeline.py
                     --python ${TASKGRID_PYTHON} --
                     ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:taskgrid-trace-graph> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "TASKGRID_MODE=${mode};TASKGRID_THREADS=1"
      PROCESSORS 2 LABELS "mpi;trace" TIMEOUT 120)
  endforeach()
endforeach()

# Broadcasts (tree routes and MPI group broadcasts): each receiving rank's
# "broadcast received" span is the end of an arrow from its sender.
foreach(strategy IN ITEMS tree mpi)
  set(name runtime.trace_broadcast.cluster.np4.${strategy})
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_trace.py
                   4 ${CMAKE_CURRENT_BINARY_DIR}/trace-broadcast-${strategy}.json --receives --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-broadcast-check> ${MPIEXEC_POSTFLAGS}
                   --rounds 3 --seed 5 --hang-seconds 30)
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "TASKGRID_MODE=cluster;TASKGRID_BCAST=${strategy};TASKGRID_BCAST_MIN_BYTES=0;TASKGRID_THREADS=1"
    PROCESSORS 2 LABELS "mpi;trace" TIMEOUT 120)
endforeach()

# A path rank 0 cannot write fails the start, with status 2 and a message
# naming the setting (not a warning at the end and status 0).
foreach(variable IN ITEMS TRACE DOT)
  string(TOLOWER ${variable} lower)
  add_test(NAME runtime.${lower}.unwritable_path.np2
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/expect_failure.py --status 2
                   --regex "error: taskgrid: rank 0: TASKGRID_${variable}=/nonexistent/dir/t.out: cannot write: No such file or directory"
                   --regex-absent "trace-graph: handles" --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-trace-graph> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(runtime.${lower}.unwritable_path.np2 PROPERTIES
    ENVIRONMENT "TASKGRID_${variable}=/nonexistent/dir/t.out;TASKGRID_THREADS=1"
    PROCESSORS 2 LABELS "mpi;trace" TIMEOUT 60)
endforeach()

# The timeline tool's own tests (pytest), on hand-written traces.
add_test(NAME timeline_tool
         COMMAND ${TASKGRID_PYTHON} -m pytest -q -p no:cacheprovider
                 ${PROJECT_SOURCE_DIR}/tools/timeline/tests)
set_tests_properties(timeline_tool PROPERTIES LABELS "tools" TIMEOUT 120)
