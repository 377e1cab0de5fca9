# Multi-rank tests of taskbench-taskgrid (labels "mpi;taskgrid"). Included
# from tests/taskbench/CMakeLists.txt.
#
# Each spec section 10 vector runs under mpiexec at 1, 2 and 4 ranks and must
# exit 0 with the spec's totals; the vectors of one rank count run in one
# process (taskbench.taskgrid.np<R>.vectors, vector_batches.cmake), those with
# a flag of the whole run alone. Every task validates every record of every
# input (and the -broadcast buffer), and the executed task and input counts
# of all ranks are compared with the totals, so a wrong or missing edge or a
# skipped task fails the run. TASKGRID_THREADS=1: one task thread per rank
# (4 ranks on a 2-core machine already oversubscribe it).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_taskgrid_checker ${CMAKE_CURRENT_LIST_DIR}/check_taskbench_run.py)

# _taskgrid_test(<name> <ranks> [SYSTEM taskgrid|taskgrid_spmd] [ENV <var=value>...]
#                CHECK <checker args>... RUN <flags>...)
# Shared by taskgrid_spmd_system.cmake (included after this file).
function(_taskgrid_test name ranks)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "SYSTEM" "ENV;CHECK;RUN")
  if(NOT arg_SYSTEM)
    set(arg_SYSTEM taskgrid)
  endif()
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_taskgrid_checker} --timeout 50 ${arg_CHECK} --
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:taskbench-${arg_SYSTEM}> ${MPIEXEC_POSTFLAGS} ${arg_RUN})
  set(processors ${ranks})
  if(processors GREATER 2)
    set(processors 2)
  endif()
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "TASKGRID_THREADS=1;${arg_ENV}"
    LABELS "mpi;${arg_SYSTEM}" TIMEOUT 60 PROCESSORS ${processors})
endfunction()

# _taskgrid_system_vector(<system> <default ranks, comma separated> <name> <tasks> <deps>
#                         <flops> <bytes> [RANKS <n>...] <flags>...)
# Joins the batch taskbench.<system>.np<R> of each rank count, or runs alone.
# Shared by taskgrid_spmd_system.cmake.
function(_taskgrid_system_vector system default_ranks name tasks deps flops bytes)
  # RANKS takes the numbers that follow it (the flags start with "-").
  set(rank_counts "")
  set(flags "")
  set(in_ranks FALSE)
  foreach(arg IN LISTS ARGN)
    if(arg STREQUAL "RANKS")
      set(in_ranks TRUE)
    elseif(in_ranks AND arg MATCHES "^[0-9]+$")
      list(APPEND rank_counts ${arg})
    else()
      set(in_ranks FALSE)
      list(APPEND flags ${arg})
    endif()
  endforeach()
  if(NOT rank_counts)
    string(REPLACE "," ";" rank_counts "${default_ranks}")
  endif()
  taskbench_vector_spec(spec ${name} ${tasks} ${deps} ${flops} ${bytes} ${flags})
  foreach(ranks IN LISTS rank_counts)
    if(spec)
      taskbench_batch_add(taskbench.${system}.np${ranks} "${spec}")
    else()
      _taskgrid_test(taskbench.${system}.np${ranks}.${name} ${ranks} SYSTEM ${system}
                     CHECK --tasks ${tasks} --deps ${deps} --flops ${flops} --bytes ${bytes}
                     RUN ${flags})
    endif()
  endforeach()
endfunction()

# _taskgrid_batch_tests(<system> <batch suffix> <ranks>... [ENV ...] [RUN ...]):
# the test of each rank count's batch taskbench.<system>.np<R><suffix>.
function(_taskgrid_batch_tests system suffix)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "ENV;RUN")
  foreach(ranks IN LISTS arg_UNPARSED_ARGUMENTS)
    set(batch taskbench.${system}.np${ranks}${suffix})
    taskbench_batch_check(check ${batch})
    if(check)
      _taskgrid_test(${batch}.vectors ${ranks} SYSTEM ${system} ENV ${arg_ENV}
                     CHECK ${check} RUN ${arg_RUN})
      set_tests_properties(${batch}.vectors PROPERTIES TIMEOUT 240)
    endif()
  endforeach()
endfunction()

# taskgrid_vector(<name> <tasks> <deps> <flops> <bytes> [RANKS <n>...] <flags>...)
function(taskgrid_vector)
  _taskgrid_system_vector(taskgrid "1,2,4" ${ARGN})
endfunction()

# Spec section 10 vectors (vector 3 shortened to 100 steps).
taskgrid_vector(v02 16 30 0 0 -steps 4 -width 4 -type stencil_1d)
taskgrid_vector(v03_100_steps 200 396 26227200 0
                -steps 100 -width 2 -type stencil_1d -kernel compute_bound -iter 1024)
taskgrid_vector(v04 40 108 84480 0
                -steps 10 -width 4 -type stencil_1d_periodic -kernel compute_bound -iter 16)
taskgrid_vector(v05 31 30 398784 0 -steps 6 -width 8 -type tree -kernel compute_bound -iter 100)
taskgrid_vector(v07 40 80 25600 0 -steps 5 -width 8 -type fft -kernel compute_bound2 -iter 10)
taskgrid_vector(v09 24 38 26112 0 -steps 9 -width 4 -type dom -kernel compute_bound -iter 8)
taskgrid_vector(v10 4 3 0 0 -steps 3 -width 6 -type dom)
taskgrid_vector(v11 80 210 15360 0 -steps 8 -width 10 -type spread -radix 3 -period 2
                -kernel compute_bound -iter 1)
taskgrid_vector(v13 160 381 0 0 -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5)
taskgrid_vector(v17 25 100 0 0 -steps 5 -width 5 -type all_to_all -kernel busy_wait -iter 100)
taskgrid_vector(v19 16 0 2086528 0 -steps 4 -width 4 -type trivial -kernel load_imbalance
                -iter 1000 -imbalance 0.5)
taskgrid_vector(v21 24 20 0 3932160 -steps 6 -width 4 -type no_comm -kernel memory_bound
                -scratch 65536 -sample 16 -iter 40)
taskgrid_vector(v22 1000 2620 7436800 0
                -steps 100 -width 8 -type stencil_1d -kernel compute_bound -iter 64
                -and -steps 50 -width 4 -type fft -kernel compute_bound -iter 32)
taskgrid_vector(v23 320 783 0 0
                -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5
                -and -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5)
taskgrid_vector(v24 180 338 0 0 -steps 10 -width 8 -type tree
                -and -type dom -steps 11 -width 6
                -and -type spread -width 9 -radix 3 -period 3 -steps 9)

# Placement and buffer edge cases: W not divisible by the ranks, an odd
# output size (trailing bytes), the -broadcast buffer read by every task.
taskgrid_vector(width5 50 117 0 0 RANKS 4 -steps 10 -width 5 -type stencil_1d)
taskgrid_vector(output100 40 90 0 0 -steps 10 -width 4 -type stencil_1d -output 100)
taskgrid_vector(broadcast4099 20 64 0 0 -steps 5 -width 4 -type all_to_all -broadcast 4099)
# A -broadcast buffer large enough to be broadcast (TASKGRID_BCAST_MIN_BYTES),
# with and without the warm-up pass (-taskgrid:warmup 0: the counts of the one
# timed pass must still equal the graph's totals).
taskgrid_vector(broadcast_1MiB 8 10 0 0 RANKS 3 4 -steps 2 -width 4 -type stencil_1d
                -broadcast 1048579)
taskgrid_vector(broadcast_no_warmup 8 10 0 0 RANKS 4 -steps 2 -width 4 -type stencil_1d
                -broadcast 1048579 -taskgrid:warmup 0)

_taskgrid_batch_tests(taskgrid "" 1 2 4)

# -taskgrid:placement scheduler: no hints, each scheduler places every task.
foreach(scheduler IN ITEMS round_robin locality heft)
  foreach(ranks IN ITEMS 2 4)
    _taskgrid_test(taskbench.taskgrid.np${ranks}.scheduler_${scheduler} ${ranks}
                   ENV TASKGRID_SCHEDULER=${scheduler}
                   CHECK --tasks 320 --deps 783 --flops 0 --bytes 0
                   RUN -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5
                       -and -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5
                       -taskgrid:placement scheduler)
  endforeach()
endforeach()

# An unknown flag: warned once (rank 0, before MPI starts); the system's own
# flags are not unknown.
_taskgrid_test(taskbench.taskgrid.np2.unknown_flag 2
               CHECK --tasks 16 --deps 30 --flops 0 --bytes 0
                     --stderr-once "warning: ignoring unknown flag \"-ll:cpu\""
                     --stderr-never=-taskgrid:
               RUN -steps 4 -width 4 -type stencil_1d -ll:cpu 2 -taskgrid:placement hint
                   -taskgrid:warmup 1 -taskgrid:device cpu -ll:cpu 3)

# Usage errors (printed once, same status on every rank, before MPI starts)
# and -h.
_taskgrid_test(taskbench.taskgrid.np2.placement_bogus 2
               CHECK --status 2
                     --stderr-once "error: Invalid flag \"-taskgrid:placement bogus\" must be hint or scheduler"
               RUN -steps 4 -taskgrid:placement bogus)
_taskgrid_test(taskbench.taskgrid.np2.warmup_bogus 2
               CHECK --status 2
                     --stderr-once "error: Invalid flag \"-taskgrid:warmup 2\" must be 0 or 1"
               RUN -steps 4 -taskgrid:warmup 2)
_taskgrid_test(taskbench.taskgrid.np2.usage_error 2
               CHECK --status 2 --stderr-once "error: Invalid flag \"-steps 0\" must be > 0"
               RUN -steps 0)
_taskgrid_test(taskbench.taskgrid.np2.help 2
               CHECK --status 0 --stdout-once "-taskgrid:placement hint|scheduler"
                     --stdout-once "-taskgrid:warmup 1|0" RUN -h)

# --- -taskgrid:device gpu ----------------------------------------------------
# Every task is a device task. On emulated devices (TASKGRID_DEVICE=emulated,
# the tests' stand-in for GPUs) each runs the whole contract and the CPU
# reference of gpu_compute_bound as host work on its stream, through the
# device buffers' host views, so a record that did not reach a rank's device
# correctly fails the run; the counts prove that every task ran once. At 2
# and 4 ranks the data moves between the ranks' devices.
# taskgrid_device_vector(<system> <name> <tasks> <deps> <flops> <bytes>
#                        <flags>... [RANKS <n>...] [ENV <var=value>...])
# Vectors without an environment of their own and without flags of the whole
# run join the batch taskbench.<system>.np<R>.device (one process per rank
# count, -taskgrid:device gpu); the others run alone.
function(taskgrid_device_vector system name tasks deps flops bytes)
  cmake_parse_arguments(PARSE_ARGV 6 arg "" "" "RANKS;ENV")
  if(NOT arg_RANKS)
    set(arg_RANKS 1 2 4)
  endif()
  set(graph -kernel gpu_compute_bound -gpu-lanes 64 -iter 8 ${arg_UNPARSED_ARGUMENTS})
  set(spec "")
  if(NOT arg_ENV)
    taskbench_vector_spec(spec device_${name} ${tasks} ${deps} ${flops} ${bytes} ${graph})
  endif()
  foreach(ranks IN LISTS arg_RANKS)
    if(spec)
      taskbench_batch_add(taskbench.${system}.np${ranks}.device "${spec}")
      continue()
    endif()
    _taskgrid_test(taskbench.${system}.np${ranks}.device_${name} ${ranks} SYSTEM ${system}
                   ENV TASKGRID_DEVICE=emulated TASKGRID_EMULATED_DEVICES=1 ${arg_ENV}
                   CHECK --tasks ${tasks} --deps ${deps} --flops ${flops} --bytes ${bytes}
                   RUN -taskgrid:device gpu ${graph})
  endforeach()
endfunction()

# The device cases of one system (this file: taskgrid; the spmd file: taskgrid_spmd).
# 4096 FLOPs per task: 2 * 4 chains * 64 lanes * 8 iterations.
function(taskgrid_device_cases system)
  taskgrid_device_vector(${system} stencil_1d 24 50 98304 0 -steps 6 -width 4 -type stencil_1d)
  taskgrid_device_vector(${system} fft 40 80 163840 0 -steps 5 -width 8 -type fft)
  taskgrid_device_vector(${system} all_to_all 25 100 102400 0 -steps 5 -width 5 -type all_to_all)
  taskgrid_device_vector(${system} tree 31 30 126976 0 -steps 6 -width 8 -type tree)
  _taskgrid_batch_tests(${system} .device 1 2 4
                        ENV TASKGRID_DEVICE=emulated TASKGRID_EMULATED_DEVICES=1
                        RUN -taskgrid:device gpu)
  # Two devices per rank, an odd output size, the -broadcast buffer checked on the device.
  taskgrid_device_vector(${system} two_devices_broadcast 20 64 81920 0
                         -steps 5 -width 4 -type all_to_all -output 100 -broadcast 4099
                         RANKS 2 ENV TASKGRID_EMULATED_DEVICES=2)
  # A device memory of 24 KiB for tasks that need up to 20 KiB (4 inputs and
  # the output of 4 KiB): replicas are evicted to make room, and re-staged.
  taskgrid_device_vector(${system} evictions 20 64 81920 0
                         -steps 5 -width 4 -type all_to_all -output 4096
                         RANKS 1 2 ENV TASKGRID_DEVICE_MEMORY=24576)

  # A rank without a device: the job ends at the first task, naming the cause
  # (the task function has only a device implementation), instead of running
  # on the CPU or waiting forever.
  _taskgrid_test(taskbench.${system}.np1.device_gpu_without_devices 1 SYSTEM ${system}
                 ENV TASKGRID_DEVICE=none
                 CHECK --status 1 --stderr-once
                       "has only a device implementation, and this rank has no device (TASKGRID_DEVICE)"
                 RUN -taskgrid:device gpu -kernel gpu_compute_bound -gpu-lanes 8 -iter 1)
  # Usage errors: printed once, status 2 on every rank.
  _taskgrid_test(taskbench.${system}.np2.device_bogus 2 SYSTEM ${system}
                 CHECK --status 2
                       --stderr-once "error: Invalid flag \"-taskgrid:device tpu\" must be cpu or gpu"
                 RUN -steps 4 -taskgrid:device tpu)
  _taskgrid_test(taskbench.${system}.np2.device_gpu_other_kernel 2 SYSTEM ${system}
                 ENV TASKGRID_DEVICE=emulated
                 CHECK --status 2
                       --stderr-once "error: -taskgrid:device gpu runs the gpu_compute_bound kernel only (graph 1 has kernel \"compute_bound\")"
                 RUN -kernel gpu_compute_bound -and -kernel compute_bound -taskgrid:device gpu)
  _taskgrid_test(taskbench.${system}.np2.device_gpu_scratch 2 SYSTEM ${system}
                 ENV TASKGRID_DEVICE=emulated
                 CHECK --status 2
                       --stderr-once "error: -taskgrid:device gpu: device tasks have no scratch memory (graph 0 has -scratch 64)"
                 RUN -kernel gpu_compute_bound -scratch 64 -taskgrid:device gpu)
  _taskgrid_test(taskbench.${system}.np2.device_help 2 SYSTEM ${system}
                 CHECK --status 0 --stdout-once "-taskgrid:device cpu|gpu" RUN -h)
  # On CUDA GPUs (built with CUDA, where configure finds a GPU): the
  # contract and the kernel run as CUDA kernels.
  if(TASKBENCH_HAVE_CUDA AND TASKBENCH_GPU_TESTS)
    set(test taskbench.${system}.np2.device_cuda_stencil_1d)
    _taskgrid_test(${test} 2 SYSTEM ${system} ENV TASKGRID_DEVICE=cuda
                   CHECK --tasks 24 --deps 50 --flops 98304 --bytes 0
                   RUN -taskgrid:device gpu -kernel gpu_compute_bound -gpu-lanes 64 -iter 8
                       -steps 6 -width 4 -type stencil_1d -broadcast 4099 -output 100)
  endif()
endfunction()

taskgrid_device_cases(taskgrid)
