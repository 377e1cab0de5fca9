# Checkpoint and restart (src/runtime/recovery.h; labels mpi and restart).
# Included from tests/runtime/CMakeLists.txt.
#
#   runtime.restart.<program>.<mode>.np<N>  a checkpointed job loses rank 1 to
#       SIGKILL right after its first complete checkpoint; relaunched with
#       TASKGRID_RESTART it must print what an uninterrupted run prints
#       (restart_check.py): the restart program (fetches steer its path),
#       the differential random graphs, Task Bench (its own checks) and
#       halo2d with task-aware communication;
#   runtime.restart.helper.*      the same, relaunched by taskgrid-run;
#   runtime.restart.refuse.*      each bad checkpoint is refused (status 2,
#       its reason), and a full disk fails the checkpoint, not the job
#       (restart_refusal.py).
set(_restart_check ${CMAKE_CURRENT_LIST_DIR}/restart_check.py)
set(_restart_refusal ${CMAKE_CURRENT_LIST_DIR}/restart_refusal.py)
set(_restart_dir ${CMAKE_CURRENT_BINARY_DIR}/restart)

add_executable(taskgrid-restart-program ${CMAKE_CURRENT_LIST_DIR}/restart_program.cpp)
target_link_libraries(taskgrid-restart-program PRIVATE taskgrid)
set_target_properties(taskgrid-restart-program PROPERTIES
                      RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

# taskgrid_restart_test(<name> <mode> <ranks> <every> <compare-regex>
#                       PROGRAM <target> [ARGS ...] [CHECK_ARGS ...])
function(taskgrid_restart_test name mode ranks every compare)
  cmake_parse_arguments(arg "" "PROGRAM" "ARGS;CHECK_ARGS" ${ARGN})
  set(test runtime.restart.${name}.${mode}.np${ranks})
  add_test(NAME ${test}
           COMMAND ${Python3_EXECUTABLE} ${_restart_check} --dir ${_restart_dir}/${test}
                   --every ${every} --compare ${compare} ${arg_CHECK_ARGS}
                   -- ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:${arg_PROGRAM}> ${MPIEXEC_POSTFLAGS} ${arg_ARGS})
  set_tests_properties(${test} PROPERTIES
    ENVIRONMENT "TASKGRID_MODE=${mode};TASKGRID_THREADS=1"
    LABELS "mpi;restart" PROCESSORS 2 TIMEOUT 240
    PASS_REGULAR_EXPRESSION "restart_check: OK")
endfunction()

# The restart program: 6 blocks, observations every 10 steps; the first
# checkpoint (submission 200) lands after 3 observations.
set(_restart_program_args --blocks 6 --words 64 --steps 300 --observe 10 --work-us 400)
foreach(_mode cluster spmd)
  foreach(_ranks 2 4)
    taskgrid_restart_test(program ${_mode} ${_ranks} 200 "^(observe|block|done)"
                          PROGRAM taskgrid-restart-program ARGS ${_restart_program_args})
  endforeach()
  taskgrid_restart_test(differential ${_mode} 2 500 "all equal"
                        PROGRAM taskgrid-differential
                        ARGS --graphs 3000 --seed 77 --tasks-max 60 --hang-seconds 60)
  # spmd at 4 ranks on 2 cores is the slowest (differential.cmake): fewer graphs.
  if(_mode STREQUAL "spmd")
    set(_graphs 100)
  else()
    set(_graphs 1500)
  endif()
  taskgrid_restart_test(differential ${_mode} 4 500 "all equal"
                        PROGRAM taskgrid-differential
                        ARGS --graphs ${_graphs} --seed 78 --tasks-max 60 --hang-seconds 60)
  if(TARGET taskbench-taskgrid)
    if(_mode STREQUAL "cluster")
      set(_taskbench taskbench-taskgrid)
    else()
      set(_taskbench taskbench-taskgrid_spmd)
    endif()
    foreach(_ranks 2 4)
      taskgrid_restart_test(taskbench ${_mode} ${_ranks} 400 "^$"
                            PROGRAM ${_taskbench}
                            ARGS -type stencil_1d -steps 400 -width 4 -kernel compute_bound
                                 -iter 65536)
    endforeach()
  endif()
endforeach()
if(TARGET halo2d-task-comm)
  foreach(_ranks 2 4)
    taskgrid_restart_test(halo2d spmd ${_ranks} 100 "^checksum"
                          PROGRAM halo2d-task-comm ARGS --nx 512 --ny 512 --iters 200 --tiles 2)
  endforeach()
endif()

# The helper relaunches the job itself after the kill.
foreach(_mode cluster spmd)
  set(test runtime.restart.helper.${_mode}.np2)
  add_test(NAME ${test}
           COMMAND ${Python3_EXECUTABLE} ${_restart_check} --dir ${_restart_dir}/${test}
                   --every 200 --compare "^(observe|block|done)"
                   --helper ${PROJECT_BINARY_DIR}/bin/taskgrid-run
                   -- ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskgrid-restart-program> ${MPIEXEC_POSTFLAGS}
                   ${_restart_program_args})
  set_tests_properties(${test} PROPERTIES
    ENVIRONMENT "TASKGRID_MODE=${_mode};TASKGRID_THREADS=1"
    LABELS "mpi;restart" PROCESSORS 2 TIMEOUT 240
    PASS_REGULAR_EXPRESSION "restart_check: OK")
endforeach()

# ... and never after status 2 (here a bad setting): it runs the job once.
add_test(NAME runtime.restart.helper.not_after_status_2
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/expect_failure.py --status 2
                 --regex "taskgrid-run: the job ended with status 2 .a usage error or a refused checkpoint.: not relaunched"
                 --regex-absent "relaunching"
                 -- ${PROJECT_BINARY_DIR}/bin/taskgrid-run --restarts 3
                 --checkpoint ${_restart_dir}/runtime.restart.helper.not_after_status_2
                 -- ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-restart-program> ${MPIEXEC_POSTFLAGS} --steps 5)
set_tests_properties(runtime.restart.helper.not_after_status_2 PROPERTIES
  ENVIRONMENT "TASKGRID_THREADS=abc" LABELS "mpi;restart" PROCESSORS 2 TIMEOUT 60)

# Refusals. taskgrid_restart_refusal(<name> <case> [REFUSAL_ARGS ...]): the restart
# program at 2 ranks in spmd mode makes the checkpoint (placement by owner:
# each rank's file holds the same versions every time).
set(_refusal_launch ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                    $<TARGET_FILE:taskgrid-restart-program> ${MPIEXEC_POSTFLAGS}
                    --blocks 4 --words 64 --steps 60 --observe 10)
function(taskgrid_restart_refusal name case)
  set(test runtime.restart.refuse.${name})
  add_test(NAME ${test}
           COMMAND ${Python3_EXECUTABLE} ${_restart_refusal} --case ${case} --dir
                   ${_restart_dir}/${test} ${ARGN} -- ${_refusal_launch})
  set_tests_properties(${test} PROPERTIES
    ENVIRONMENT "TASKGRID_MODE=spmd;TASKGRID_THREADS=1"
    LABELS "mpi;restart" PROCESSORS 2 TIMEOUT 120
    PASS_REGULAR_EXPRESSION "restart_refusal: OK")
endfunction()
foreach(_case missing empty truncated corrupt manifest)
  taskgrid_restart_refusal(${_case} ${_case})
endforeach()
string(REPLACE ";" " " _other_ranks "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:taskgrid-restart-program> ${MPIEXEC_POSTFLAGS} --blocks 4 --words 64 --steps 60 --observe 10")
taskgrid_restart_refusal(ranks other --other "${_other_ranks}"
                         --expect "it is of a job of 2 ranks and this job has 3")
string(REPLACE ";" " " _other_args "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:taskgrid-restart-program> ${MPIEXEC_POSTFLAGS} --blocks 4 --words 64 --steps 60 --observe 9")
taskgrid_restart_refusal(arguments other --other "${_other_args}"
                         --expect "the restarted program must make the same calls")
string(REPLACE ";" " " _other_program "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:taskgrid-differential> ${MPIEXEC_POSTFLAGS} --graphs 5 --seed 1")
taskgrid_restart_refusal(program other --other "${_other_program}"
                         --expect "written by another program")
# A disk that fills: checkpoint files of at most 3000 bytes (a preloaded
# fwrite that fails with ENOSPC past it). Each rank's file holds its two
# blocks (1,144 bytes with the framing) and the replay log, 544 bytes per
# observation: the checkpoints up to the third observation fit, the later
# ones (at submissions 200 and 240) do not.
add_library(taskgrid-full-disk-shim SHARED ${CMAKE_CURRENT_LIST_DIR}/full_disk_shim.c)
target_link_libraries(taskgrid-full-disk-shim PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
taskgrid_restart_refusal(full full --file-limit 3000 --every 40
                         --shim $<TARGET_FILE:taskgrid-full-disk-shim>)
