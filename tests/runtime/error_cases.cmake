# Error tests of the TaskGrid runtime (labels mpi and error_cases). Included from
# tests/runtime/CMakeLists.txt, after runtime_programs.cmake (which defines
# taskgrid-error-cases).
#
# Each case runs under mpiexec through expect_failure.py: it passes only when
# the job ends by itself within 30 s (a hang fails), with a non-zero status
# (exactly 3 where the program catches taskgrid::Error and exits 3), and its
# output matches the expected message. Regexes use [(] [)] for literal
# parentheses and . for quotes and semicolons (a ; would split the CMake
# list), to keep CMake escaping out of the way.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_taskgrid_expect_failure ${CMAKE_CURRENT_LIST_DIR}/expect_failure.py)

# The unregistered-function case names the function through dladdr(): the
# executable must export its symbols (-rdynamic).
set_target_properties(taskgrid-error-cases PROPERTIES ENABLE_EXPORTS ON)

# taskgrid_error_test(<name> <ranks> <threads> REGEX <re>... [ABSENT <re>...] [STATUS n]
#                     [ENV var=value...] [ALONE] [PROGRAM target] ARGS <case> [rank])
# ALONE: started without mpiexec (a singleton; <ranks> must be 1; the test
# is named .alone). STATUS 0: a run that must succeed, its output checked.
# PROGRAM: another program of cases than taskgrid-error-cases.
function(taskgrid_error_test name ranks threads)
  cmake_parse_arguments(PARSE_ARGV 3 arg "ALONE" "STATUS;PROGRAM" "REGEX;ABSENT;ENV;ARGS")
  if(NOT arg_PROGRAM)
    set(arg_PROGRAM taskgrid-error-cases)
  endif()
  set(driver_args --timeout 30)
  foreach(re IN LISTS arg_REGEX)
    list(APPEND driver_args --regex ${re})
  endforeach()
  foreach(re IN LISTS arg_ABSENT)
    list(APPEND driver_args --regex-absent ${re})
  endforeach()
  if(DEFINED arg_STATUS)
    list(APPEND driver_args --status ${arg_STATUS})
  endif()
  if(arg_ALONE)
    set(test_name runtime.error.${name}.alone)
    set(launch)
  else()
    set(test_name runtime.error.${name}.np${ranks})
    set(launch ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS})
  endif()
  if(NOT threads EQUAL 1)
    string(APPEND test_name .t${threads})
  endif()
  add_test(NAME ${test_name}
           COMMAND ${Python3_EXECUTABLE} ${_taskgrid_expect_failure} ${driver_args} --
                   ${launch} $<TARGET_FILE:${arg_PROGRAM}> ${MPIEXEC_POSTFLAGS} ${arg_ARGS})
  set(environment ${arg_ENV})
  if(NOT arg_ENV MATCHES "TASKGRID_THREADS=")
    list(APPEND environment TASKGRID_THREADS=${threads})
  endif()
  set_tests_properties(${test_name} PROPERTIES
    ENVIRONMENT "${environment}"
    LABELS "mpi;error_cases"
    PROCESSORS 2
    TIMEOUT 60)
endfunction()

# (1) A task throws on a rank: the message names the task, the rank and what().
foreach(ranks_rank IN ITEMS 2:1 2:0 4:3)
  string(REPLACE ":" ";" _pair "${ranks_rank}")
  list(GET _pair 0 _ranks)
  list(GET _pair 1 _rank)
  if(_rank EQUAL 0)
    set(_name task_throws_on_head)
  else()
    set(_name task_throws)
  endif()
  taskgrid_error_test(${_name} ${_ranks} 1
    REGEX "error: taskgrid: rank ${_rank}: task 'throwing_task' [(]id [0-9]+[)] failed: boom"
    ARGS task_throws ${_rank})
endforeach()
taskgrid_error_test(task_throws 2 2
  REGEX "error: taskgrid: rank 1: task 'throwing_task' [(]id [0-9]+[)] failed: boom"
  ARGS task_throws 1)

# (2) An unknown handle: taskgrid::Error on rank 0, caught by the program.
taskgrid_error_test(unknown_handle 2 1 STATUS 3
  REGEX "caught: taskgrid: unknown data handle 12345"
  ARGS unknown_handle)

# (3) A bad data index inside a task; a null pointer given to enter_data.
taskgrid_error_test(bad_index 2 1
  REGEX "error: taskgrid: rank 1: task 'bad_index_task' [(]id [0-9]+[)] failed: TaskContext::data[(]7[)]: the task has 1 data accesses"
  ARGS bad_index 1)
taskgrid_error_test(null_enter 2 1 STATUS 3
  REGEX "caught: taskgrid::enter_data: null pointer with a non-zero size"
  ARGS null_enter)

# (4) A rank exits in the middle of the job (std::exit in a task): the exit
# guard ends the job at once, naming the rank. With two threads the exit
# comes from a worker thread.
taskgrid_error_test(rank_exits 2 1
  REGEX "error: taskgrid: rank 1: the process is exiting before taskgrid::finish[(][)]"
  ARGS rank_exits 1)
taskgrid_error_test(rank_exits 2 2
  REGEX "error: taskgrid: rank 1: the process is exiting before taskgrid::finish[(][)]"
  ARGS rank_exits 1)
taskgrid_error_test(rank_exits 4 1
  REGEX "error: taskgrid: rank 1: the process is exiting before taskgrid::finish[(][)]"
  ARGS rank_exits 1)
taskgrid_error_test(last_rank_exits 4 1
  REGEX "error: taskgrid: rank 3: the process is exiting before taskgrid::finish[(][)]"
  ARGS rank_exits 3)

# (5) Bad settings: start() reads them before MPI starts and reports them
# after, all ranks together; the program does not catch it: every rank with a
# bad setting prints it, and the job exits 2 (no std::terminate, no SIGABRT).
taskgrid_error_test(bad_scheduler 2 1 STATUS 2
  ENV TASKGRID_SCHEDULER=bogus
  REGEX "error: taskgrid: rank 0: TASKGRID_SCHEDULER=.bogus. is not a scheduler. choose round_robin, locality or heft"
  ARGS start_only)
taskgrid_error_test(bad_threads 2 1 STATUS 2
  ENV TASKGRID_THREADS=0
  REGEX "error: taskgrid: rank 0: TASKGRID_THREADS=.0. must be a whole number from 1 to 4096"
  REGEX "error: taskgrid: rank 1: TASKGRID_THREADS=.0. must be"
  ABSENT "terminate called" "Aborted|SIGABRT|signal 6"
  ARGS start_only)
taskgrid_error_test(bad_threads 4 1 STATUS 2
  ENV TASKGRID_THREADS=abc
  REGEX "error: taskgrid: rank 3: TASKGRID_THREADS=.abc. must be a whole number from 1 to 4096"
  ABSENT "terminate called" "stopping the job"
  ARGS start_only)
# The thread count's top: 8 threads per core the rank may use, never fewer
# than 64. 64 is allowed everywhere and works (the watchdog reports no live
# rank while 2 x 64 threads start, run and stop on this 2-core machine);
# 4096 is refused here with the reason.
foreach(ranks IN ITEMS 2 4)
  taskgrid_error_test(threads_at_limit ${ranks} 64 STATUS 0
    REGEX "error-cases: many_threads correct"
    ABSENT "stopped responding" "error:"
    ARGS many_threads)
endforeach()
taskgrid_error_test(threads_over_limit 2 4096 STATUS 2
  REGEX "error: taskgrid: rank [01]: TASKGRID_THREADS=.4096. is more than [0-9]+, the most threads a rank may start here [(]8 per core it may run on, [0-9]+ cores, and never fewer than 64[)]"
  ARGS start_only)
taskgrid_error_test(stats_off_words 1 1 STATUS 0
  ENV TASKGRID_STATS=no
  REGEX "error-cases: succeeded"
  ABSENT "taskgrid stats"
  ARGS succeed)
taskgrid_error_test(stats_on_words 1 1 STATUS 0
  ENV TASKGRID_STATS=on
  REGEX "taskgrid stats: +0 +1 "
  ARGS succeed)
taskgrid_error_test(bad_threads 1 1 STATUS 2 ALONE
  ENV TASKGRID_THREADS=0
  REGEX "^error: taskgrid: rank 0: TASKGRID_THREADS=.0. must be a whole number from 1 to 4096"
  ABSENT "terminate called"
  ARGS start_only)
taskgrid_error_test(bad_progress 2 1 STATUS 2
  ENV TASKGRID_PROGRESS=sometimes
  REGEX "TASKGRID_PROGRESS=.sometimes. is not a progress model. choose program or engine"
  ARGS start_only)
taskgrid_error_test(bad_check_interval 2 1 STATUS 2
  ENV TASKGRID_MODE=spmd TASKGRID_CHECK_INTERVAL=9000
  REGEX "TASKGRID_CHECK_INTERVAL=.9000. must be a number of submissions from 0 .the check off. to 8192"
  ARGS start_only)
taskgrid_error_test(bad_display_env 2 1 STATUS 2
  ENV TASKGRID_DISPLAY_ENV=yes
  REGEX "error: taskgrid: rank 0: TASKGRID_DISPLAY_ENV=.yes. is not a display choice. choose 0, 1 or verbose"
  ARGS start_only)

# (5b) Every TASKGRID_* name is checked: a misspelled one warns once, on
# rank 0, with the nearest setting; the job still succeeds.
taskgrid_error_test(misspelled_setting 2 1 STATUS 0
  ENV TASKGRID_THREAD=2 TASKGRID_SCHEDULAR=heft
  REGEX "warning: taskgrid: TASKGRID_THREAD is not a TaskGrid setting. did you mean TASKGRID_THREADS[?]"
  REGEX "warning: taskgrid: TASKGRID_SCHEDULAR is not a TaskGrid setting. did you mean TASKGRID_SCHEDULER[?]"
  REGEX "error-cases: succeeded [(]buffer.0. = 1[)]"
  ABSENT "TASKGRID_THREAD is not.*TASKGRID_THREAD is not"
  ARGS succeed)
# Far from every name: no suggestion. Names of the project's scripts and
# tools (TASKGRID_BUILD_DIR) are known and say nothing.
taskgrid_error_test(unknown_setting 1 1 STATUS 0 ALONE
  ENV TASKGRID_XYZZY_PLUGH=1 TASKGRID_BUILD_DIR=/nowhere TASKGRID_CORES=2
  REGEX "warning: taskgrid: TASKGRID_XYZZY_PLUGH is not a TaskGrid setting [(]TASKGRID_DISPLAY_ENV=1 lists the settings[)]"
  ABSENT "did you mean" "TASKGRID_BUILD_DIR is not" "TASKGRID_CORES is not"
  ARGS succeed)

# (5c) TASKGRID_DISPLAY_ENV=1: rank 0 prints every setting with its value and
# where it came from, once.
taskgrid_error_test(display_env 2 1 STATUS 0
  ENV TASKGRID_DISPLAY_ENV=1 TASKGRID_SCHEDULER=round_robin
  REGEX "TASKGRID DISPLAY ENVIRONMENT BEGIN"
  REGEX "_TASKGRID = '[0-9]+[.][0-9]+[.][0-9]+'"
  REGEX "TASKGRID_MODE += cluster +[(]default[)]"
  REGEX "TASKGRID_THREADS += 1 +[(]environment[)]"
  REGEX "TASKGRID_SCHEDULER += round_robin +[(]environment[)]"
  REGEX "TASKGRID_WINDOW += 512 +[(]default[)]"
  REGEX "TASKGRID_PGAS_SEGMENT += 64M +[(]default[)]"
  REGEX "TASKGRID DISPLAY ENVIRONMENT END"
  REGEX "error-cases: succeeded"
  ABSENT "BEGIN.*BEGIN"
  ARGS succeed)
taskgrid_error_test(display_env_computed 1 1 STATUS 0 ALONE
  ENV TASKGRID_DISPLAY_ENV=verbose TASKGRID_THREADS=
  REGEX "TASKGRID_THREADS += [0-9]+ +[(]computed: cores / ranks on node[)]"
  REGEX "worker threads per rank"
  ARGS succeed)
taskgrid_error_test(display_env_program 2 1 STATUS 0
  ENV TASKGRID_DISPLAY_ENV=1 TASKGRID_MODE=spmd
  REGEX "TASKGRID_MODE += spmd +[(]program, confirmed by the environment[)]"
  REGEX "rank 1 returned 0"
  ARGS run_spmd)
taskgrid_error_test(display_env_program 1 1 STATUS 0 ALONE
  ENV TASKGRID_DISPLAY_ENV=1
  REGEX "TASKGRID_MODE += cluster +[(]program[)]"
  ARGS run_cluster)

# (5d) The mode belongs to the program: TASKGRID_MODE may only confirm it.
taskgrid_error_test(mode_mismatch 2 1 STATUS 2
  ENV TASKGRID_MODE=spmd
  REGEX "error: taskgrid: rank 0: the program runs in cluster mode [(]taskgrid::start/run[)]. TASKGRID_MODE=spmd can only confirm it"
  REGEX "error: taskgrid: rank 1: the program runs in cluster mode"
  ARGS cluster_program)
taskgrid_error_test(mode_mismatch_spmd 2 1 STATUS 2
  ENV TASKGRID_MODE=cluster
  REGEX "error: taskgrid: rank 0: the program runs in spmd mode [(]taskgrid::start/run[)]. TASKGRID_MODE=cluster can only confirm it"
  ARGS spmd_program)

# (5e) A launcher of another MPI (its variables set) around a singleton: not
# two separate one-rank jobs, an error.
# The other family's launcher: Open MPI's variables around an MPICH program,
# MPICH's (Hydra's PMI_*) around an Open MPI one.
if(TASKGRID_MPI STREQUAL "openmpi")
  taskgrid_error_test(foreign_launcher 1 1 STATUS 2 ALONE
    ENV PMI_SIZE=2 PMI_RANK=1
    REGEX "error: taskgrid: rank 1: launched as rank 1 of 2 by PMI_SIZE but MPI sees a single rank: the program's MPI [(]Open MPI[)] does not match the launcher. start it with mpirun.openmpi"
    ARGS succeed)
else()
  taskgrid_error_test(foreign_launcher 1 1 STATUS 2 ALONE
    ENV OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1
    REGEX "error: taskgrid: rank 1: launched as rank 1 of 2 by OMPI_COMM_WORLD_SIZE but MPI sees a single rank: the program's MPI [(]MPICH[)] does not match the launcher. start it with mpiexec.mpich"
    ARGS succeed)
endif()
# Slurm: a job step (srun sets SLURM_STEP_ID) of two tasks counts; inside a
# batch script without srun (no step id) one process is all there is.
taskgrid_error_test(foreign_launcher_slurm_step 1 1 STATUS 2 ALONE
  ENV SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=1 SLURM_STEP_ID=0
  REGEX "error: taskgrid: rank 1: launched as rank 1 of 2 by SLURM_STEP_NUM_TASKS but MPI sees a single rank"
  ARGS succeed)
taskgrid_error_test(slurm_batch_script 1 1 STATUS 0 ALONE
  ENV SLURM_STEP_NUM_TASKS=2 SLURM_NTASKS=2 SLURM_PROCID=0
  REGEX "error-cases: succeeded"
  ABSENT "launched as rank"
  ARGS succeed)

# (5f) taskgrid::run() returns on every rank, in both modes, with the job's
# status (the largest main_fn returned).
foreach(ranks IN ITEMS 2 4)
  math(EXPR _last "${ranks} - 1")
  foreach(mode IN ITEMS cluster spmd)
    taskgrid_error_test(run_${mode} ${ranks} 1 STATUS 0
      REGEX "run: rank 0 ran main_fn in ${mode} mode\n"
      REGEX "run: rank 0 returned 0, is_running 0"
      REGEX "run: rank ${_last} returned 0, is_running 0"
      REGEX "run: rank 1 returned 0, is_running 0"
      ABSENT "WRONG RESULT"
      ARGS run_${mode})
  endforeach()
endforeach()
# Open MPI's mpirun ends the job as soon as one process exits non-zero (MPICH's
# waits for all): the first rank out may leave the others no time to print.
if(TASKGRID_MPI STREQUAL "openmpi")
  set(_returned_5_rank0 "run: rank [0-9] returned 5")
  set(_returned_5_other "run: rank [0-9] returned 5")
  set(_returned_5_rank3 "run: rank [0-9] returned 5")
else()
  set(_returned_5_rank0 "run: rank 0 returned 5")
  set(_returned_5_other "run: rank 1 returned 5")
  set(_returned_5_rank3 "run: rank 3 returned 5")
endif()
taskgrid_error_test(run_cluster_main_fn_5 2 1 STATUS 5
  REGEX "${_returned_5_rank0}" REGEX "${_returned_5_other}"
  ARGS run_cluster 5)
taskgrid_error_test(run_spmd_main_fn_5 4 1 STATUS 5
  REGEX "${_returned_5_rank0}" REGEX "${_returned_5_rank3}"
  ARGS run_spmd 5)

# (6) main returns without finish(): the exit guard on rank 0.
taskgrid_error_test(no_finish 2 1
  REGEX "error: taskgrid: rank 0: the process is exiting before taskgrid::finish[(][)]"
  ARGS no_finish)

# (7) A function registered on rank 0 only cannot be built in one binary:
# not tested.

# API misuse the program does not catch: the job ends with the message and
# status 2 (std::terminate is not the way out; the serving rank ends too).
taskgrid_error_test(uncaught_unknown_handle 2 1 STATUS 2
  REGEX "error: taskgrid: rank 0: unknown data handle 12345"
  ABSENT "terminate called"
  ARGS uncaught_unknown_handle)
taskgrid_error_test(uncaught_unregistered 2 1 STATUS 2
  REGEX "error: taskgrid: rank 0: task function 'unregistered_task[(]taskgrid::TaskContext&[)]' [(]0x[0-9a-f]+[)] is not registered: register it with TASKGRID_REGISTER[(]unregistered_task[)]"
  ARGS uncaught_unregistered)
taskgrid_error_test(uncaught_unregistered_hidden 2 1 STATUS 2
  REGEX "error: taskgrid: rank 0: the task function at 0x[0-9a-f]+ in .*taskgrid-error-cases[+]0x[0-9a-f]+ is not registered: register it with TASKGRID_REGISTER[(]name[)]"
  ARGS uncaught_unregistered_hidden)
taskgrid_error_test(uncaught_bad_rank_hint 2 1 STATUS 2
  REGEX "error: taskgrid: rank 0: taskgrid::submit: rank hint 5 is outside the job [(]2 ranks[)]"
  ARGS uncaught_bad_rank_hint)
taskgrid_error_test(uncaught_bad_rank_hint 4 1 STATUS 2
  REGEX "error: taskgrid: rank 0: taskgrid::submit: rank hint 7 is outside the job [(]4 ranks[)]"
  ARGS uncaught_bad_rank_hint)

# More API misuse, caught as taskgrid::Error on rank 0.
taskgrid_error_test(two_writers 2 1 STATUS 3
  REGEX "caught: taskgrid: a task writes data handle [0-9]+ through two accesses"
  ARGS two_writers)
taskgrid_error_test(bad_rank_hint 2 1 STATUS 3
  REGEX "caught: taskgrid::submit: rank hint 2 is outside the job [(]2 ranks[)]"
  ARGS bad_rank_hint)
taskgrid_error_test(released_handle 2 1 STATUS 3
  REGEX "caught: taskgrid: data handle [0-9]+ was released"
  ARGS released_handle)
taskgrid_error_test(unregistered_function 2 1 STATUS 3
  REGEX "caught: taskgrid::submit: function id 42 is not registered"
  ARGS unregistered_function)

# The program dies of an uncaught exception (no exit handlers run) while the
# other ranks serve: the job must still end.
taskgrid_error_test(program_terminates 2 1
  REGEX "what[(][)]: +program bug after wait_all"
  ARGS program_terminates)

# Protocol leak check (a run that must succeed, so plain CTest: exit status 0
# and no failure pattern). A 0-byte handle entered with a null pointer is
# written on rank 1 and fetched: no transfer may be left without a receive.
# Planner::fetch used to order the send to rank 0 while posting no receive
# (no host buffer): with the probing transport the stray message stays
# stashed, rank 0 never goes quiescent and finish() hangs (TIMEOUT); with
# pre-posted receives it was left over at MPI_Finalize (UCX warning).
add_test(NAME runtime.protocol.zero_byte_fetch.np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskgrid-error-cases> ${MPIEXEC_POSTFLAGS} zero_byte_fetch 1)
set_tests_properties(runtime.protocol.zero_byte_fetch.np2 PROPERTIES
  ENVIRONMENT TASKGRID_THREADS=1
  LABELS "mpi;error_cases"
  PROCESSORS 2
  TIMEOUT 30
  FAIL_REGULAR_EXPRESSION "unexpected tag-receive descriptor|error: taskgrid")

# spmd: rank 1 (of 2) or rank 2 (of 4) submits an extra task at submission 44;
# the job must stop with the first differing submission of every rank.
taskgrid_error_test(spmd_divergence 2 1
  ENV TASKGRID_MODE=spmd
  REGEX "spmd ranks submitted different sequences. first difference"
  REGEX "rank 0: submission #45 is task 'touch_task'"
  REGEX "rank 1: submission #45 is task 'touch_task' with 1 accesses [(]inout handle 2[)]"
  ARGS spmd_divergence 1)
taskgrid_error_test(spmd_divergence 4 1
  ENV TASKGRID_MODE=spmd
  REGEX "spmd ranks submitted different sequences. first difference"
  REGEX "rank 2: submission #45 is task 'touch_task' with 1 accesses [(]inout handle 2[)]"
  ARGS spmd_divergence 2)

# (n) MPI_Finalize hangs on every rank (a preloaded library): each rank gives
# up after TASKGRID_FINALIZE_TIMEOUT seconds and exits with the job's status,
# the one the program passed to finish(5) on rank 0, on every rank (a serving
# rank exiting 0 first could make the launcher report 0). Hydra's own report
# is a race when ranks leave without finalizing: it may kill the other rank
# before it prints, or answer 1, so only a failure is required of it.
taskgrid_error_test(finalize_hangs 2 1
  REGEX "rank 0: MPI_Finalize did not return within 2 s .TASKGRID_FINALIZE_TIMEOUT.. exiting with status 5"
  ENV TASKGRID_FINALIZE_TIMEOUT=2 LD_PRELOAD=$<TARGET_FILE:taskgrid-finalize-hang-shim>
  ARGS finalize_hangs)
# (n') MPI_Abort never returns on the failing rank (a preloaded library): the
# rank exits by itself after core::kAbortDeadlineSeconds (10 s), saying so,
# and the launcher ends the job; before, the job hung.
taskgrid_error_test(abort_hangs 2 1
  REGEX "error: taskgrid: rank 1: task 'throwing_task' [(]id [0-9]+[)] failed: boom"
  REGEX "rank 1: MPI_Abort did not end the job within 10 s. exiting with status 1"
  ENV LD_PRELOAD=$<TARGET_FILE:taskgrid-abort-hang-shim>
  ARGS task_throws 1)
taskgrid_error_test(bad_finalize_timeout 1 1
  REGEX "TASKGRID_FINALIZE_TIMEOUT=.soon. must be a number of seconds"
  ENV TASKGRID_FINALIZE_TIMEOUT=soon
  ARGS start_only)

# --- Reliability: crashes, stopped ranks, deadlines, refused calls, settings.

# A task that faults, aborts or overflows its stack: the crash handler names
# the signal, the rank and the task (on the engine's thread, t1, or a
# worker's, t2; on the head, rank 0, in cluster mode).
taskgrid_error_test(task_segfaults 2 1
  REGEX "error: taskgrid: rank 1: SIGSEGV [(]invalid memory access or stack overflow[)] at address 0x0 in task 'segfault_task' [(]id [0-9]+[)]"
  ARGS task_segfaults 1)
taskgrid_error_test(task_segfaults 4 2
  REGEX "error: taskgrid: rank 3: SIGSEGV [(]invalid memory access or stack overflow[)] at address 0x0 in task 'segfault_task'"
  ARGS task_segfaults 3)
taskgrid_error_test(task_aborts 2 1
  REGEX "error: taskgrid: rank 0: SIGABRT [(]abort[)] in task 'abort_task' [(]id [0-9]+[)]"
  ARGS task_aborts 0)
taskgrid_error_test(task_overflows_stack 2 1
  REGEX "error: taskgrid: rank 1: SIGSEGV [(]invalid memory access or stack overflow[)] at address 0x[0-9a-f]+ in task 'stack_overflow_task'"
  ARGS task_overflows_stack 1)
taskgrid_error_test(task_overflows_stack 2 2
  REGEX "error: taskgrid: rank 1: SIGSEGV [(]invalid memory access or stack overflow[)] at address 0x[0-9a-f]+ in task 'stack_overflow_task'"
  ARGS task_overflows_stack 1)

# A rank stops (a task raises SIGSTOP on it): its successor in the ring
# reports it after TASKGRID_FAILURE_TIMEOUT, every other survivor repeats it,
# and the job ends. Both modes; the head (rank 0) and another rank.
foreach(mode IN ITEMS cluster spmd)
  foreach(ranks_rank IN ITEMS 2:1 2:0 4:2 4:0)
    string(REPLACE ":" ";" _pair "${ranks_rank}")
    list(GET _pair 0 _ranks)
    list(GET _pair 1 _rank)
    math(EXPR _detector "(${_rank} + 1) % ${_ranks}")
    set(_also)
    if(_ranks EQUAL 4)
      math(EXPR _other "(${_rank} + 2) % ${_ranks}")
      set(_also REGEX "error: taskgrid: rank ${_other}: rank ${_rank} stopped responding [(]last heard [0-9.]+ s ago. detected by rank ${_detector}[)]")
    endif()
    taskgrid_error_test(rank${_rank}_stops_${mode} ${_ranks} 1
      ENV TASKGRID_MODE=${mode} TASKGRID_FAILURE_TIMEOUT=1
      REGEX "error: taskgrid: rank ${_detector}: rank ${_rank} stopped responding [(]last heard [0-9.]+ s ago. TASKGRID_FAILURE_TIMEOUT=1.0[)]"
      ${_also}
      ARGS rank_stops ${_rank})
  endforeach()
endforeach()

# A task that never returns, with a deadline set.
taskgrid_error_test(task_never_returns 2 2
  ENV TASKGRID_MODE=spmd TASKGRID_TASK_DEADLINE=1
  REGEX "error: taskgrid: rank 1: task 'endless_task' [(]id [0-9]+[)] has run for [0-9.]+ s, past TASKGRID_TASK_DEADLINE=1.0 s"
  ARGS task_never_returns 1)
taskgrid_error_test(bad_task_deadline 1 1 STATUS 2
  ENV TASKGRID_TASK_DEADLINE=-3
  REGEX "TASKGRID_TASK_DEADLINE=.-3. must be a number of seconds"
  ARGS start_only)
taskgrid_error_test(bad_failure_timeout 1 1 STATUS 2
  ENV TASKGRID_FAILURE_TIMEOUT=0.01
  REGEX "TASKGRID_FAILURE_TIMEOUT=.0.01. is too short"
  ARGS start_only)

# wait_all or submit inside a task: refused with the same words on every rank
# (they used to hang on rank 0 and work or fail elsewhere).
foreach(mode IN ITEMS cluster spmd)
  foreach(rank IN ITEMS 0 1)
    taskgrid_error_test(wait_all_in_task_on${rank}_${mode} 2 1
      ENV TASKGRID_MODE=${mode}
      REGEX "error: taskgrid: rank ${rank}: task 'wait_all_task' [(]id [0-9]+[)] failed: taskgrid::wait_all called inside a task"
      ARGS wait_all_in_task ${rank})
    taskgrid_error_test(submit_in_task_on${rank}_${mode} 2 1
      ENV TASKGRID_MODE=${mode}
      REGEX "error: taskgrid: rank ${rank}: task 'submit_task' [(]id [0-9]+[)] failed: taskgrid::submit called inside a task"
      ARGS submit_in_task ${rank})
  endforeach()
endforeach()

# submit_packed with null args but a size: an error, not a crash.
taskgrid_error_test(null_packed_args 2 1 STATUS 3
  REGEX "caught: taskgrid::submit_packed: null args with args_size 16"
  ARGS null_packed_args)

# submit_packed past the arguments' limit: an error naming the size and the limit.
taskgrid_error_test(huge_packed_args 2 1 STATUS 3
  REGEX "caught: taskgrid::submit_packed: 65537 bytes of by-value arguments. the limit is taskgrid::max_task_args_bytes [(]65536. register large data with enter_data[)]"
  ARGS huge_packed_args)

# TASKGRID_CHUNK_BYTES=1 with a 4 MiB transfer: at most 1,024 chunks per
# transfer (used to be 4 Mi posted receives and an assertion inside MPICH).
foreach(mode IN ITEMS cluster spmd)
  taskgrid_error_test(big_transfer_chunk1_${mode} 2 1 STATUS 0
    ENV TASKGRID_MODE=${mode} TASKGRID_CHUNK_BYTES=1
    REGEX "error-cases: big_transfer correct"
    ARGS big_transfer 1)
endforeach()

# enter_data of 2^62 bytes: an error naming the size, nothing half-registered.
taskgrid_error_test(huge_enter_data 2 1 STATUS 3
  REGEX "caught: taskgrid::enter_data: cannot allocate 4611686018427387904 bytes on rank 0 [(]out of memory[)]"
  ABSENT "unexpected tag-receive descriptor"
  ARGS huge_enter_data)

# API calls before start() and after finish(), uncaught: one whole line
# naming the call and the rank, status 2, no "terminate called" (ranks used
# to interleave its pieces).
foreach(ranks IN ITEMS 2 4)
  math(EXPR last "${ranks} - 1")
  taskgrid_error_test(enter_before_start ${ranks} 1 STATUS 2
    REGEX "(^|\n)error: taskgrid: rank 0: call taskgrid::start[(][)] first\n"
    REGEX "(^|\n)error: taskgrid: rank ${last}: call taskgrid::start[(][)] first\n"
    ABSENT "terminate called"
    ARGS enter_before_start)
endforeach()
taskgrid_error_test(call_after_finish 2 1 STATUS 2
  REGEX "error: taskgrid: rank [01]: the runtime has finished [(]taskgrid::finish[(][)] was called[)]. no TaskGrid call may follow it"
  ABSENT "terminate called" "call taskgrid::start"
  ARGS call_after_finish)
foreach(ranks IN ITEMS 2 4)
  math(EXPR last "${ranks} - 1")
  add_test(NAME runtime.error.registration_clash.np${ranks}
           COMMAND ${Python3_EXECUTABLE} ${_taskgrid_expect_failure} --timeout 30 --status 2
                   --regex "(^|\n)error: taskgrid: rank 0: taskgrid::register_function: .work. clashes with .work. [(]same name or same hash[)]. rename one of them\n"
                   --regex "(^|\n)error: taskgrid: rank ${last}: taskgrid::register_function: .work. clashes"
                   --regex-absent "terminate called|main ran"
                   -- ${MPIEXEC_EXECUTABLE} -n ${ranks} $<TARGET_FILE:taskgrid-registration-clash>)
  set_tests_properties(runtime.error.registration_clash.np${ranks} PROPERTIES
    LABELS "mpi;error_cases" PROCESSORS 2 TIMEOUT 60)
endforeach()
# A failed task in a run of one rank: its message, and no second one from the
# exit guard (MPI_Abort of a singleton calls exit()).
taskgrid_error_test(task_throws_alone 1 1 ALONE
  REGEX "error: taskgrid: rank 0: task 'throwing_task' [(]id [0-9]+[)] failed: boom"
  ABSENT "exiting before taskgrid::finish"
  ARGS task_throws 0)
taskgrid_error_test(task_throws_one_rank 1 1
  REGEX "error: taskgrid: rank 0: task 'throwing_task' [(]id [0-9]+[)] failed: boom"
  ABSENT "exiting before taskgrid::finish"
  ARGS task_throws 0)

# spmd results back to a chosen rank and to all ranks; a rank that fetches
# elsewhere than the others is named by the divergence check; a rank that is
# none of the job's, and fetch to a rank in cluster mode, are errors.
foreach(ranks_target IN ITEMS 2:0 2:1 4:3)
  string(REPLACE ":" ";" _pair "${ranks_target}")
  list(GET _pair 0 _ranks)
  list(GET _pair 1 _target)
  taskgrid_error_test(spmd_fetch_to_rank${_target} ${_ranks} 1 STATUS 0
    ENV TASKGRID_MODE=spmd
    REGEX "error-cases: spmd_fetch_to rank ${_target} correct"
    ABSENT "WRONG"
    ARGS spmd_fetch_to ${_target})
endforeach()
taskgrid_error_test(spmd_fetch_diverges 2 1
  ENV TASKGRID_MODE=spmd
  REGEX "rank 0: spmd ranks submitted different sequences. first difference:"
  REGEX "rank 0: submission #3 is fetch[(]handle 1, to rank 0[)]"
  REGEX "rank 1: submission #3 is fetch[(]handle 1, to rank 1[)]"
  ABSENT "was not detected"
  ARGS spmd_fetch_diverges 1)
taskgrid_error_test(spmd_fetch_diverges 4 1
  ENV TASKGRID_MODE=spmd
  REGEX "rank 2: submission #3 is fetch[(]handle 1, to rank 1[)]"
  ABSENT "was not detected"
  ARGS spmd_fetch_diverges 2)
taskgrid_error_test(fetch_to_bad_rank 2 1 STATUS 3
  ENV TASKGRID_MODE=spmd
  REGEX "caught: taskgrid::fetch: rank 2 is not a rank of this job [(]0 to 1, or taskgrid::all_ranks[)]"
  ARGS fetch_to_bad_rank)
taskgrid_error_test(cluster_fetch_to_rank 2 1 STATUS 3
  REGEX "caught: taskgrid::fetch: to rank 1 in cluster mode, where only rank 0 runs the program"
  ARGS cluster_fetch_to_rank)

# A bad setting on one rank only (an MPMD launch, or a per-node environment):
# that rank names it, rank 0 names the rank, and the whole job exits 2 within
# the timeout (the other ranks used to wait in MPI_Init_thread for ever).
#   taskgrid_mpmd_bad_setting(<ranks> <bad rank> <VAR> <value> <regex>)
# The launcher's option that sets one variable for one part of an MPMD launch:
# MPICH's Hydra `-env VAR VALUE`, Open MPI's mpirun `-x VAR=VALUE`.
function(taskgrid_mpmd_env out var value)
  if(TASKGRID_MPI STREQUAL "openmpi")
    set(${out} -x ${var}=${value} PARENT_SCOPE)
  else()
    set(${out} -env ${var} ${value} PARENT_SCOPE)
  endif()
endfunction()
function(taskgrid_mpmd_bad_setting ranks bad var value regex)
  set(launch ${MPIEXEC_EXECUTABLE})
  math(EXPR last "${ranks} - 1")
  foreach(r RANGE ${last})
    if(r GREATER 0)
      list(APPEND launch :)
    endif()
    list(APPEND launch -n 1)
    if(r EQUAL bad)
      taskgrid_mpmd_env(env_flag ${var} ${value})
      list(APPEND launch ${env_flag})
    endif()
    list(APPEND launch $<TARGET_FILE:taskgrid-error-cases> start_only)
  endforeach()
  set(name runtime.error.mpmd_bad_${var}_on_rank${bad}.np${ranks})
  set(expect --regex "error: taskgrid: rank ${bad}: ${regex}")
  if(bad GREATER 0)
    list(APPEND expect
         --regex "error: taskgrid: rank 0: stopping the job: bad TaskGrid settings on rank.s. ${bad} ")
  endif()
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_taskgrid_expect_failure} --timeout 30 --status 2
                   ${expect} --regex-absent "terminate called" -- ${launch})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "TASKGRID_THREADS=1" LABELS "mpi;error_cases" PROCESSORS 2 TIMEOUT 60)
endfunction()
taskgrid_mpmd_bad_setting(2 1 TASKGRID_THREADS abc "TASKGRID_THREADS=.abc. must be a whole number")
taskgrid_mpmd_bad_setting(2 0 TASKGRID_SCHEDULER bogus "TASKGRID_SCHEDULER=.bogus. is not a scheduler")
taskgrid_mpmd_bad_setting(4 2 TASKGRID_THREADS abc "TASKGRID_THREADS=.abc. must be a whole number")
taskgrid_mpmd_bad_setting(4 3 TASKGRID_STATS maybe "TASKGRID_STATS=.maybe. is not a switch")

# Ranks started with different job-wide settings (an MPMD command line): every
# rank stops at start-up naming the settings, values and ranks (they used to hang).
taskgrid_mpmd_env(_channels_8 TASKGRID_CHANNELS 8)
taskgrid_mpmd_env(_mode_spmd TASKGRID_MODE spmd)
add_test(NAME runtime.error.settings_differ.np3
         COMMAND ${Python3_EXECUTABLE} ${_taskgrid_expect_failure} --timeout 30 --status 2
                 --regex "rank 0: taskgrid::start: TASKGRID_MODE differs between ranks: .cluster. on ranks 0 2, .spmd. on rank 1. TASKGRID_CHANNELS differs between ranks: .4. on ranks 0 2, .8. on rank 1"
                 --regex "rank 1: taskgrid::start: TASKGRID_MODE differs"
                 --regex "rank 2: taskgrid::start: TASKGRID_MODE differs"
                 --
                 ${MPIEXEC_EXECUTABLE} -n 1 $<TARGET_FILE:taskgrid-error-cases> settings_differ
                 : -n 1 ${_channels_8} ${_mode_spmd}
                   $<TARGET_FILE:taskgrid-error-cases> settings_differ
                 : -n 1 $<TARGET_FILE:taskgrid-error-cases> settings_differ)
set_tests_properties(runtime.error.settings_differ.np3 PROPERTIES
  ENVIRONMENT "TASKGRID_CHANNELS=4;TASKGRID_THREADS=1" LABELS "mpi;error_cases" PROCESSORS 2 TIMEOUT 60)

# Devices (src/device/, engine/device_tasks.*) under mpiexec, on emulated
# devices: rounds of a device task over data on every rank, in both modes,
# with the CPU implementation when TASKGRID_DEVICE=none; a task that only has
# a device implementation on a rank without one; a device too small for a
# task; a kernel that fails on its stream.
taskgrid_error_test(device_sum_cluster 2 1 STATUS 0
  ENV TASKGRID_DEVICE=emulated TASKGRID_EMULATED_DEVICES=2 TASKGRID_STATS=1
  REGEX "error-cases: device_sum rank 0 ok" "taskgrid device stats: rank 1 tasks [1-9]"
  ABSENT "WRONG"
  ARGS device_sum)
taskgrid_error_test(device_sum_spmd 4 2 STATUS 0
  ENV TASKGRID_MODE=spmd TASKGRID_DEVICE=emulated TASKGRID_EMULATED_DEVICES=2 TASKGRID_STATS=1
  REGEX "error-cases: device_sum rank 3 ok" "taskgrid device stats: rank 3 tasks [1-9]"
  ABSENT "WRONG"
  ARGS device_sum)
taskgrid_error_test(device_sum_without_devices 2 1 STATUS 0
  ENV TASKGRID_MODE=spmd TASKGRID_DEVICE=none TASKGRID_STATS=1
  REGEX "error-cases: device_sum rank 1 ok"
  ABSENT "WRONG" "taskgrid device stats"
  ARGS device_sum)
taskgrid_error_test(device_only 2 1
  ENV TASKGRID_DEVICE=none
  REGEX "error: taskgrid: rank 1: task 'device_only_task' [(]id [0-9]+[)] has only a device implementation, and this rank has no device"
  ARGS device_only 1)
taskgrid_error_test(device_too_small 2 1
  ENV TASKGRID_DEVICE=emulated TASKGRID_DEVICE_MEMORY=32
  REGEX "error: taskgrid: rank 1: task 'device_add' needs up to 128 bytes on device 0, whose limit is 32 bytes"
  ARGS device_too_small 1)
taskgrid_error_test(device_kernel_fails 2 1
  ENV TASKGRID_DEVICE=emulated
  REGEX "error: taskgrid: rank 1: task 'failing_kernel_task' [(]id [0-9]+[)] failed on device 0: emulated device 0: an operation on its stream failed: kernel fault"
  ARGS device_kernel_fails 1)
taskgrid_error_test(device_setting 1 1 STATUS 2
  ENV TASKGRID_DEVICE=gpu
  REGEX "TASKGRID_DEVICE=.gpu. is not a device backend"
  ARGS start_only)
taskgrid_error_test(device_hint_without_device_function 2 1 STATUS 3
  REGEX "caught: taskgrid::submit: device hint 0 for 'touch_task', which has no device implementation"
  ARGS device_hint_without_device_function)
taskgrid_error_test(device_hint_missing 2 1
  ENV TASKGRID_DEVICE=emulated TASKGRID_EMULATED_DEVICES=2
  REGEX "error: taskgrid: rank 1: task 'device_add' [(]id [0-9]+[)] asks for device 5. this rank has 2"
  ARGS device_hint_missing 1)
taskgrid_error_test(device_hint_without_devices 2 1
  ENV TASKGRID_DEVICE=none
  REGEX "error: taskgrid: rank 1: task 'device_add' [(]id [0-9]+[)] asks for device 5, and this rank has no device"
  ARGS device_hint_missing 1)
