# Tests of task-aware communication (labels mpi and task_comm). Included from
# tests/runtime/CMakeLists.txt; uses halo2d-task-comm and halo2d-mpi (from
# apps/halo2d) and builds taskgrid-task-comm-stress.
#
#   runtime.task_comm.halo2d.*   halo2d-task-comm (spmd, TASKGRID_THREADS=1|2)
#                                and halo2d-mpi at 2 and 4 ranks, same
#                                arguments: the "checksum" lines must be
#                                identical (halo2d_compare.py);
#   runtime.task_comm.stress.*   64 tasks per rank and phase talking to the
#                                same peer with the same tag, eager and
#                                rendezvous sizes, bodies out of submission
#                                order on odd ranks, ibcast and iallreduce on
#                                several channels; every buffer verified;
#   runtime.task_comm.misuse.*   task_comm::isend in a task without a channel
#                                must end the job with a message
#                                (expect_failure.py).
#
# Each test takes a few seconds on a 2-core machine (4 ranks busy-poll).
find_package(Python3 REQUIRED COMPONENTS Interpreter)

add_executable(taskgrid-task-comm-stress ${CMAKE_CURRENT_LIST_DIR}/task_comm_stress.cpp)
target_link_libraries(taskgrid-task-comm-stress PRIVATE taskgrid)
set_target_properties(taskgrid-task-comm-stress PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

# The common properties; `environment` is a list of VAR=value (may be empty).
function(_taskgrid_task_comm_properties name environment)
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "${environment}"
    LABELS "mpi;task_comm"
    PROCESSORS 2
    TIMEOUT 60)
endfunction()

# halo2d: taskgrid_halo2d_test(<suffix> <ranks> <threads> [program arguments...])
function(taskgrid_halo2d_test suffix ranks threads)
  set(name runtime.task_comm.halo2d.${suffix}.np${ranks}.t${threads})
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/halo2d_compare.py
                   --mpiexec ${MPIEXEC_EXECUTABLE} --ranks ${ranks} --threads ${threads}
                   --mpi-program $<TARGET_FILE:halo2d-mpi>
                   --task-program $<TARGET_FILE:halo2d-task-comm>
                   --timeout 30 -- ${ARGN})
  _taskgrid_task_comm_properties(${name} "")
endfunction()

foreach(ranks IN ITEMS 2 4)
  foreach(threads IN ITEMS 1 2)
    # The defaults: 256 x 256, 20 iterations, 2 x 2 tiles per rank.
    taskgrid_halo2d_test(default ${ranks} ${threads})
  endforeach()
endforeach()
# Sizes that do not divide evenly, 3 x 3 tiles, and the other process grids.
taskgrid_halo2d_test(uneven 2 2 --nx 203 --ny 157 --iters 13 --tiles 3 --px 1 --py 2)
taskgrid_halo2d_test(uneven 4 1 --nx 203 --ny 157 --iters 13 --tiles 3)
taskgrid_halo2d_test(strips 4 2 --nx 130 --ny 97 --iters 9 --tiles 4 --px 4 --py 1)

# Stress: taskgrid_task_comm_stress_test(<ranks> <threads>)
function(taskgrid_task_comm_stress_test ranks threads)
  set(name runtime.task_comm.stress.np${ranks}.t${threads})
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-task-comm-stress> ${MPIEXEC_POSTFLAGS}
                   --tasks 64 --rounds 2)
  # Pass: exit status 0 (given only after every count was checked).
  _taskgrid_task_comm_properties(${name} "TASKGRID_MODE=spmd;TASKGRID_THREADS=${threads}")
  set_tests_properties(${name} PROPERTIES
    FAIL_REGULAR_EXPRESSION "error: taskgrid|task_comm_stress: rank")
endfunction()
foreach(ranks IN ITEMS 2 4)
  foreach(threads IN ITEMS 1 2)
    taskgrid_task_comm_stress_test(${ranks} ${threads})
  endforeach()
endforeach()

# Misuse: the task runs on the last rank; its isend must end the job.
function(taskgrid_task_comm_misuse_test ranks threads)
  set(name runtime.task_comm.misuse.no_channel.np${ranks}.t${threads})
  math(EXPR last "${ranks} - 1")
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/expect_failure.py
                   --timeout 30
                   --regex "error: taskgrid: rank ${last}: task .send_without_channel. [(]id [0-9]+[)] failed: taskgrid::task_comm::isend: the task was submitted without a channel [(]set TaskOptions::channel[)]"
                   --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-task-comm-stress> ${MPIEXEC_POSTFLAGS} misuse)
  _taskgrid_task_comm_properties(${name} "TASKGRID_MODE=spmd;TASKGRID_THREADS=${threads}")
endfunction()
taskgrid_task_comm_misuse_test(2 1)
taskgrid_task_comm_misuse_test(2 2)
taskgrid_task_comm_misuse_test(4 1)
