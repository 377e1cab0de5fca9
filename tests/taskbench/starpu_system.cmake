# Multi-rank tests of taskbench-starpu (labels "taskbench;mpi;starpu").
# Included from tests/taskbench/CMakeLists.txt after mpi_systems.cmake, where
# the target exists (Open MPI builds with StarPU-MPI found).
#
# Every vector taskbench-mpi runs (mpi_systems.cmake lists them in the global
# property TASKBENCH_MPI_VECTORS), and three with -field, run here at 1, 2 and
# 4 ranks with one CPU worker per rank, and at 1 rank with 2 workers (tasks of
# one rank run concurrently: per-worker scratch and counters). The vectors
# that can share a process run as one batch per configuration
# (vector_batches.cmake), the others alone. Plus the input checks of the MPI
# systems: a usage error and -h printed once with the same status on every
# rank, an unknown flag warned about once, and the -worker limit of this
# StarPU build. STARPU_SILENT=1 in every test's environment; a first run
# (taskbench_starpu.calibrate, a fixture of the others) lets StarPU measure the
# bus alone.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_taskbench_starpu_checker ${CMAKE_CURRENT_LIST_DIR}/check_taskbench_run.py)

# _taskbench_starpu_test(<name> <ranks> <workers> CHECK <checker args>... RUN <flags>...)
function(_taskbench_starpu_test name ranks workers)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "CHECK;RUN")
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_taskbench_starpu_checker} --timeout 50 ${arg_CHECK} --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskbench-starpu> ${MPIEXEC_POSTFLAGS} ${arg_RUN})
  math(EXPR processors "${ranks} * ${workers}")
  # STARPU_SILENT: no banner even if the program's own default changed.
  set_tests_properties(${name} PROPERTIES LABELS "taskbench;mpi;starpu" TIMEOUT 60
                                           PROCESSORS ${processors}
                                           ENVIRONMENT "STARPU_SILENT=1"
                                           FIXTURES_REQUIRED taskbench_starpu_calibrated)
endfunction()

# StarPU measures the bus on its first run on a machine and writes the results
# under $STARPU_HOME/.starpu (default $HOME); runs starting together before
# that read each other's half-written files and abort. One run, first, alone.
add_test(NAME taskbench_starpu.calibrate
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 1 ${MPIEXEC_PREFLAGS}
                 $<TARGET_FILE:taskbench-starpu> ${MPIEXEC_POSTFLAGS} -steps 1 -width 1)
set_tests_properties(taskbench_starpu.calibrate PROPERTIES
                     LABELS "taskbench;mpi;starpu" TIMEOUT 120 RUN_SERIAL TRUE
                     ENVIRONMENT "STARPU_SILENT=1"
                     FIXTURES_SETUP taskbench_starpu_calibrated)

# The configurations (name suffix, ranks, workers per rank).
set(_taskbench_starpu_configs np1:1:1 np2:2:1 np4:4:1 np1.w2:1:2)

get_property(_taskbench_starpu_vectors GLOBAL PROPERTY TASKBENCH_MPI_VECTORS)
if(NOT _taskbench_starpu_vectors)
  message(WARNING "taskbench-starpu: mpi_systems.cmake listed no vectors (TASKBENCH_MPI_VECTORS)")
endif()
# Fewer fields than timesteps (-field K): outputs rotate through K handles per
# point, so a handle is rewritten while other ranks hold cached copies of its
# previous version.
list(APPEND _taskbench_starpu_vectors
     "fields2_stencil|240|638|0|0|-steps 30 -width 8 -type stencil_1d -field 2"
     "fields3_spread|270|783|0|0|-steps 30 -width 9 -type spread -radix 3 -period 3 -field 3"
     "fields2_all_to_all|120|684|0|0|-steps 20 -width 6 -type all_to_all -field 2 -output 4096")
foreach(_vector IN LISTS _taskbench_starpu_vectors)
  string(REPLACE "|" ";" _fields "${_vector}")
  list(GET _fields 0 _name)
  list(GET _fields 1 _tasks)
  list(GET _fields 2 _deps)
  list(GET _fields 3 _flops)
  list(GET _fields 4 _bytes)
  list(GET _fields 5 _flags)
  separate_arguments(_flags UNIX_COMMAND "${_flags}")
  taskbench_vector_spec(_spec ${_name} ${_tasks} ${_deps} ${_flops} ${_bytes} ${_flags})
  foreach(_config IN LISTS _taskbench_starpu_configs)
    string(REPLACE ":" ";" _config "${_config}")
    list(GET _config 0 _suffix)
    list(GET _config 1 _ranks)
    list(GET _config 2 _workers)
    if(_spec)
      taskbench_batch_add(taskbench_starpu.${_suffix} "${_spec}")
    else()
      _taskbench_starpu_test(taskbench_starpu.${_suffix}.${_name} ${_ranks} ${_workers}
                             CHECK --tasks ${_tasks} --deps ${_deps} --flops ${_flops}
                                   --bytes ${_bytes}
                             RUN ${_flags} -worker ${_workers})
    endif()
  endforeach()
endforeach()

# Each configuration's batch of vectors, in one process.
foreach(_config IN LISTS _taskbench_starpu_configs)
  string(REPLACE ":" ";" _config "${_config}")
  list(GET _config 0 _suffix)
  list(GET _config 1 _ranks)
  list(GET _config 2 _workers)
  taskbench_batch_check(_check taskbench_starpu.${_suffix})
  if(_check)
    _taskbench_starpu_test(taskbench_starpu.${_suffix}.vectors ${_ranks} ${_workers}
                           CHECK ${_check} RUN -worker ${_workers})
    set_tests_properties(taskbench_starpu.${_suffix}.vectors PROPERTIES TIMEOUT 240)
  endif()
endforeach()

# Usage errors and -h: printed once (rank 0), same status on every rank.
_taskbench_starpu_test(taskbench_starpu.np2.usage_error 2 1
                       CHECK --status 2 --stderr-once "error: Invalid flag \"-steps 0\" must be > 0"
                       RUN -steps 0)
_taskbench_starpu_test(taskbench_starpu.np2.help 2 1
                       CHECK --status 0 --stdout-once "Usage:" --stdout-once "StarPU options:"
                       RUN -h)
# An unknown flag: the run goes on, rank 0 alone warns, once per flag.
_taskbench_starpu_test(taskbench_starpu.np2.unknown_flag 2 1
                       CHECK --tasks 16 --deps 30 --flops 0 --bytes 0
                             --stderr-once "warning: ignoring unknown flag \"-foo\""
                       RUN -steps 4 -width 4 -type stencil_1d -foo 1 -foo)
# -worker beyond this StarPU's CPU worker limit (STARPU_MAXCPUS): a usage error.
_taskbench_starpu_test(taskbench_starpu.np2.too_many_workers 2 1
                       CHECK --status 2 --stderr-once "error: Invalid flag \"-worker 1000\": this StarPU supports at most"
                       RUN -steps 4 -worker 1000)
# An output StarPU-MPI cannot send as one message: a usage error.
_taskbench_starpu_test(taskbench_starpu.np2.output_too_large 2 1
                       CHECK --status 2 --stderr-once "error: Invalid flag \"-output 3000000000\": taskbench-starpu sends each output as one StarPU-MPI message"
                       RUN -steps 4 -output 3000000000)
