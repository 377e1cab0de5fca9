# Multi-rank tests of taskbench-mpi and taskbench-mpi_omp (label "mpi").
# Included from tests/taskbench/CMakeLists.txt.
#
# Each spec section 10 vector runs under mpiexec (mpi: 1, 2, 4 ranks;
# mpi_omp: 1, 2 ranks with -worker 1 and 2) and must exit 0 with the spec's
# totals; the vectors of one configuration run in one process
# (taskbench_mpi.<system>.np<R>[.w<W>].vectors, vector_batches.cmake), those
# with a flag of the whole run alone. The systems validate every input of every task and compare the
# executed task count with the totals, so a wrong, missing or misordered
# message, or a skipped task, fails the run. Graphs stay small: 4 ranks on a
# 2-core machine busy-poll.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_taskbench_mpi_checker ${CMAKE_CURRENT_LIST_DIR}/check_taskbench_run.py)

# _taskbench_mpi_test(<name> <system> <ranks> <threads> CHECK <checker args>... RUN <flags>...)
function(_taskbench_mpi_test name system ranks threads)
  cmake_parse_arguments(PARSE_ARGV 4 arg "" "" "CHECK;RUN")
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_taskbench_mpi_checker} --timeout 50 ${arg_CHECK} --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskbench-${system}> ${MPIEXEC_POSTFLAGS} ${arg_RUN})
  math(EXPR processors "${ranks} * ${threads}")
  set_tests_properties(${name} PROPERTIES LABELS "taskbench;mpi" TIMEOUT 60
                                           PROCESSORS ${processors})
endfunction()

# The configurations every vector runs in: mpi at 1, 2, 4 ranks; mpi_omp at 1
# and 2 ranks with 1 and 2 workers (name suffix, system, ranks, threads).
set(_taskbench_mpi_configs mpi.np1:mpi:1:1 mpi.np2:mpi:2:1 mpi.np4:mpi:4:1
    mpi_omp.np1.w1:mpi_omp:1:1 mpi_omp.np1.w2:mpi_omp:1:2 mpi_omp.np2.w1:mpi_omp:2:1
    mpi_omp.np2.w2:mpi_omp:2:2)

# taskbench_mpi_vector(<name> <tasks> <deps> <flops> <bytes> <flags>...)
# Joins the configurations' batches, or runs alone in each. Every vector is
# also listed in the global property TASKBENCH_MPI_VECTORS
# ("NAME|TASKS|DEPS|FLOPS|BYTES|FLAGS", flags space-separated) for other
# systems that run the same vectors (starpu_system.cmake).
function(taskbench_mpi_vector name tasks deps flops bytes)
  string(JOIN " " _flags ${ARGN})
  set_property(GLOBAL APPEND PROPERTY TASKBENCH_MPI_VECTORS
               "${name}|${tasks}|${deps}|${flops}|${bytes}|${_flags}")
  taskbench_vector_spec(spec ${name} ${tasks} ${deps} ${flops} ${bytes} ${ARGN})
  if(spec)
    foreach(config IN LISTS _taskbench_mpi_configs)
      string(REPLACE ":" ";" config "${config}")
      list(GET config 0 suffix)
      taskbench_batch_add(taskbench_mpi.${suffix} "${spec}")
    endforeach()
    return()
  endif()
  set(check --tasks ${tasks} --deps ${deps} --flops ${flops} --bytes ${bytes})
  foreach(ranks IN ITEMS 1 2 4)
    _taskbench_mpi_test(taskbench_mpi.mpi.np${ranks}.${name} mpi ${ranks} 1
                        CHECK ${check} RUN ${ARGN})
  endforeach()
  foreach(ranks IN ITEMS 1 2)
    foreach(workers IN ITEMS 1 2)
      _taskbench_mpi_test(taskbench_mpi.mpi_omp.np${ranks}.w${workers}.${name} mpi_omp ${ranks}
                          ${workers} CHECK ${check} RUN ${ARGN} -worker ${workers})
    endforeach()
  endforeach()
endfunction()

# Spec section 10: the vectors that cover each type, kernel and -and case
# (vector 3 shortened to 50 steps; 14, 20 and 25 add run time, not coverage).
taskbench_mpi_vector(v02 16 30 0 0 -steps 4 -width 4 -type stencil_1d)
taskbench_mpi_vector(v03_50_steps 100 196 13113600 0
                     -steps 50 -width 2 -type stencil_1d -kernel compute_bound -iter 1024)
taskbench_mpi_vector(v04 40 108 84480 0
                     -steps 10 -width 4 -type stencil_1d_periodic -kernel compute_bound -iter 16)
taskbench_mpi_vector(v05 31 30 398784 0
                     -steps 6 -width 8 -type tree -kernel compute_bound -iter 100)
taskbench_mpi_vector(v06 92 91 0 0 -steps 20 -width 5 -type tree)
taskbench_mpi_vector(v07 40 80 25600 0
                     -steps 5 -width 8 -type fft -kernel compute_bound2 -iter 10)
taskbench_mpi_vector(v08 42 80 0 0 -steps 7 -width 6 -type fft)
taskbench_mpi_vector(v09 24 38 26112 0 -steps 9 -width 4 -type dom -kernel compute_bound -iter 8)
taskbench_mpi_vector(v10 4 3 0 0 -steps 3 -width 6 -type dom)
taskbench_mpi_vector(v11 80 210 15360 0 -steps 8 -width 10 -type spread -radix 3 -period 2
                     -kernel compute_bound -iter 1)
taskbench_mpi_vector(v12 192 704 0 0 -steps 12 -width 16 -type spread -radix 4 -period 4)
taskbench_mpi_vector(v13 160 381 0 0
                     -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5)
taskbench_mpi_vector(v15 54 195 0 0 -steps 6 -width 9 -type nearest -radix 5)
taskbench_mpi_vector(v16 54 160 0 0 -steps 6 -width 9 -type nearest -radix 4)
taskbench_mpi_vector(v17 25 100 0 0 -steps 5 -width 5 -type all_to_all -kernel busy_wait -iter 100)
taskbench_mpi_vector(v18 21 18 1344 0 -steps 7 -width 3 -type no_comm -kernel compute_bound -iter 0)
taskbench_mpi_vector(v19 16 0 2086528 0 -steps 4 -width 4 -type trivial -kernel load_imbalance
                     -iter 1000 -imbalance 0.5)
taskbench_mpi_vector(v21 24 20 0 3932160 -steps 6 -width 4 -type no_comm -kernel memory_bound
                     -scratch 65536 -sample 16 -iter 40)
taskbench_mpi_vector(v22 1000 2620 7436800 0
                     -steps 100 -width 8 -type stencil_1d -kernel compute_bound -iter 64
                     -and -steps 50 -width 4 -type fft -kernel compute_bound -iter 32)
taskbench_mpi_vector(v23 320 783 0 0
                     -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5
                     -and -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5)
taskbench_mpi_vector(v24 180 338 0 0 -steps 10 -width 8 -type tree
                     -and -type dom -steps 11 -width 6
                     -and -type spread -width 9 -radix 3 -period 3 -steps 9)

# gpu_compute_bound on CPUs (-device cpu): 2 * 4 chains * 100 lanes * 5
# iterations per task.
taskbench_mpi_vector(gpu_compute_bound 12 21 48000 0
                     -steps 4 -width 3 -type stencil_1d -kernel gpu_compute_bound -gpu-lanes 100
                     -iter 5)

# Distribution edge cases: W not divisible by the ranks, W smaller than the
# ranks (rank 0 owns nothing at 4 ranks), an odd output size, -broadcast.
taskbench_mpi_vector(width5 50 117 0 0 -steps 10 -width 5 -type stencil_1d)
taskbench_mpi_vector(width3_all_to_all 30 81 0 0 -steps 10 -width 3 -type all_to_all)
taskbench_mpi_vector(output100 40 90 0 0 -steps 10 -width 4 -type stencil_1d -output 100)
taskbench_mpi_vector(broadcast4099 20 64 0 0
                     -steps 5 -width 4 -type all_to_all -broadcast 4099)

# Each configuration's batch of vectors, in one process.
foreach(_config IN LISTS _taskbench_mpi_configs)
  string(REPLACE ":" ";" _config "${_config}")
  list(GET _config 0 _suffix)
  list(GET _config 1 _system)
  list(GET _config 2 _ranks)
  list(GET _config 3 _threads)
  taskbench_batch_check(_check taskbench_mpi.${_suffix})
  set(_run "")
  if(_system STREQUAL "mpi_omp")
    set(_run -worker ${_threads})
  endif()
  _taskbench_mpi_test(taskbench_mpi.${_suffix}.vectors ${_system} ${_ranks} ${_threads}
                      CHECK ${_check} RUN ${_run})
  set_tests_properties(taskbench_mpi.${_suffix}.vectors PROPERTIES TIMEOUT 240)
endforeach()

# Usage errors and -h: printed once (rank 0), same status on every rank.
foreach(system IN ITEMS mpi mpi_omp)
  _taskbench_mpi_test(taskbench_mpi.${system}.np2.usage_error ${system} 2 1
                      CHECK --status 2 --stderr-once "error: Invalid flag \"-steps 0\" must be > 0"
                      RUN -steps 0)
  _taskbench_mpi_test(taskbench_mpi.${system}.np2.help ${system} 2 1
                      CHECK --status 0 --stdout-once "Usage:" RUN -h)
endforeach()

# An unknown flag: the run goes on, rank 0 alone warns, once per flag (given
# twice); the system's own flag (-device) is not unknown.
_taskbench_mpi_test(taskbench_mpi.mpi_omp.np2.unknown_flag mpi_omp 2 1
                    CHECK --tasks 16 --deps 30 --flops 0 --bytes 0
                          --stderr-once "warning: ignoring unknown flag \"-foo\""
                          --stderr-never=-device
                    RUN -steps 4 -width 4 -type stencil_1d -foo 1 -device cpu -foo)

# mpi_omp -device: bad values; -device gpu without CUDA in the build, or
# without a usable GPU (CUDA_VISIBLE_DEVICES empty hides every GPU), ends the
# run with a message naming the cause; with a GPU the run must pass
# (registered where configure finds one: TASKBENCH_GPU_TESTS).
_taskbench_mpi_test(taskbench_mpi.mpi_omp.np2.device_bogus mpi_omp 2 1
                    CHECK --status 2 --stderr-once "error: Invalid flag \"-device tpu\" must be cpu or gpu"
                    RUN -steps 4 -device tpu)
_taskbench_mpi_test(taskbench_mpi.mpi_omp.np2.help_device mpi_omp 2 1
                    CHECK --status 0 --stdout-once "-device cpu|gpu" RUN -h)
set(_tb_gpu_flags -steps 4 -width 3 -type stencil_1d -kernel gpu_compute_bound -gpu-lanes 100
                  -iter 5 -device gpu)
if(TASKBENCH_HAVE_CUDA)
  _taskbench_mpi_test(taskbench_mpi.mpi_omp.np2.device_gpu_other_kernel mpi_omp 2 1
                      CHECK --status 2 --stderr-once
                            "error: -device gpu runs the gpu_compute_bound kernel only (graph 0 has kernel \"compute_bound\")"
                      RUN -kernel compute_bound -device gpu)
  _taskbench_mpi_test(taskbench_mpi.mpi_omp.np1.device_gpu_without_gpu mpi_omp 1 1
                      CHECK --status 1 --stderr-once
                            "error: rank 0: -device gpu: no usable CUDA device (cudaGetDeviceCount: "
                      RUN ${_tb_gpu_flags})
  set_tests_properties(taskbench_mpi.mpi_omp.np1.device_gpu_without_gpu
                       PROPERTIES ENVIRONMENT "CUDA_VISIBLE_DEVICES=")
  if(TASKBENCH_GPU_TESTS)
    foreach(ranks IN ITEMS 1 2)
      _taskbench_mpi_test(taskbench_mpi.mpi_omp.np${ranks}.w2.device_gpu mpi_omp ${ranks} 2
                          CHECK --tasks 12 --deps 21 --flops 48000 --bytes 0
                          RUN ${_tb_gpu_flags} -worker 2 -broadcast 4099)
    endforeach()
  endif()
else()
  _taskbench_mpi_test(taskbench_mpi.mpi_omp.np2.device_gpu_without_cuda mpi_omp 2 1
                      CHECK --status 2 --stderr-once
                            "error: taskbench-mpi_omp was built without CUDA (no nvcc, or TASKBENCH_CUDA=OFF): -device gpu is not available"
                      RUN ${_tb_gpu_flags})
endif()
