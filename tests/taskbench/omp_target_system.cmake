# Tests of taskbench-omp_target (labels "taskbench;omp_target"). Included from
# tests/taskbench/CMakeLists.txt where the target taskbench-omp_target exists
# (bench/taskbench/omp_target.cmake, TASKGRID_OFFLOAD).
#
# Each vector must exit 0 with the spec's totals; the vectors of one
# configuration run in one process (taskbench.omp_target.<suffix>.vectors,
# vector_batches.cmake), those with a flag of the whole run alone. Every task region validates
# every record of every input (and the -broadcast buffer) on its device, and
# the task and input counts the devices report are compared with the graph
# totals, so a wrong, missing or stale copy between devices, or a skipped
# task, fails the run.
#
# taskbench_omp_target_tests(<suffix> <launcher> <environment>) registers
# taskbench.omp_target.<suffix>.<case> for every case, running
#   <launcher>... taskbench-omp_target <flags>...
# with the variables of <environment> (a list of VAR=value) set. Pass the
# lists quoted, e.g.
#   taskbench_omp_target_tests(mpi_np5 "${MPIEXEC_EXECUTABLE};-n;5;env;LD_LIBRARY_PATH=${dir}"
#                              "OMP_TARGET_OFFLOAD=MANDATORY")
# This file registers two: "host" (no plugin: no device, the regions run on
# the host) and, where clang's LLVM has its x86_64 plugin, "x86_64_plugin"
# (4 devices in the process: every cross-device edge is an omp_target_memcpy).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_omp_target_checker ${CMAKE_CURRENT_LIST_DIR}/check_taskbench_run.py)

# _omp_target_test(<name> <launcher> <environment> CHECK <checker args>... RUN <flags>...)
function(_omp_target_test name launcher environment)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "CHECK;RUN")
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${_omp_target_checker} --timeout 50 ${arg_CHECK} --
                   ${launcher} $<TARGET_PROPERTY:taskbench-omp_target,TASKBENCH_EXECUTABLE>
                   ${arg_RUN})
  set_tests_properties(${name} PROPERTIES LABELS "taskbench;omp_target" TIMEOUT 60
                                           PROCESSORS 2)
  if(environment)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${environment}")
  endif()
endfunction()

function(taskbench_omp_target_tests suffix launcher environment)
  set(prefix taskbench.omp_target.${suffix})
  # _vector(<name> <tasks> <deps> <flops> <bytes> <flags>...): joins the batch ${prefix}.
  macro(_vector name tasks deps flops bytes)
    taskbench_vector_spec(_spec ${name} ${tasks} ${deps} ${flops} ${bytes} ${ARGN})
    if(_spec)
      taskbench_batch_add(${prefix} "${_spec}")
    else()
      _omp_target_test(${prefix}.${name} "${launcher}" "${environment}"
                       CHECK --tasks ${tasks} --deps ${deps} --flops ${flops} --bytes ${bytes}
                       RUN ${ARGN})
    endif()
  endmacro()

  # Spec section 10: every type, kernel and -and case (vector 3 shortened to
  # 100 steps; 14, 20 and 25 add run time, not coverage).
  _vector(v01 16 0 0 0)
  _vector(v02 16 30 0 0 -steps 4 -width 4 -type stencil_1d)
  _vector(v03_100_steps 200 396 26227200 0
          -steps 100 -width 2 -type stencil_1d -kernel compute_bound -iter 1024)
  _vector(v04 40 108 84480 0
          -steps 10 -width 4 -type stencil_1d_periodic -kernel compute_bound -iter 16)
  _vector(v05 31 30 398784 0 -steps 6 -width 8 -type tree -kernel compute_bound -iter 100)
  _vector(v06 92 91 0 0 -steps 20 -width 5 -type tree)
  _vector(v07 40 80 25600 0 -steps 5 -width 8 -type fft -kernel compute_bound2 -iter 10)
  _vector(v08 42 80 0 0 -steps 7 -width 6 -type fft)
  _vector(v09 24 38 26112 0 -steps 9 -width 4 -type dom -kernel compute_bound -iter 8)
  _vector(v10 4 3 0 0 -steps 3 -width 6 -type dom)
  _vector(v11 80 210 15360 0 -steps 8 -width 10 -type spread -radix 3 -period 2
          -kernel compute_bound -iter 1)
  _vector(v12 192 704 0 0 -steps 12 -width 16 -type spread -radix 4 -period 4)
  _vector(v13 160 381 0 0 -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5)
  _vector(v15 54 195 0 0 -steps 6 -width 9 -type nearest -radix 5)
  _vector(v16 54 160 0 0 -steps 6 -width 9 -type nearest -radix 4)
  _vector(v17 25 100 0 0 -steps 5 -width 5 -type all_to_all -kernel busy_wait -iter 100)
  _vector(v18 21 18 1344 0 -steps 7 -width 3 -type no_comm -kernel compute_bound -iter 0)
  _vector(v19 16 0 2086528 0 -steps 4 -width 4 -type trivial -kernel load_imbalance
          -iter 1000 -imbalance 0.5)
  _vector(v21 24 20 0 3932160 -steps 6 -width 4 -type no_comm -kernel memory_bound
          -scratch 65536 -sample 16 -iter 40)
  _vector(v22 1000 2620 7436800 0
          -steps 100 -width 8 -type stencil_1d -kernel compute_bound -iter 64
          -and -steps 50 -width 4 -type fft -kernel compute_bound -iter 32)
  _vector(v23 320 783 0 0
          -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5
          -and -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5)
  _vector(v24 180 338 0 0 -steps 10 -width 8 -type tree
          -and -type dom -steps 11 -width 6
          -and -type spread -width 9 -radix 3 -period 3 -steps 9)
  # gpu_compute_bound on CPUs: 2 * 4 chains * 100 lanes * 5 iterations per task.
  _vector(gpu_compute_bound 12 21 48000 0
          -steps 4 -width 3 -type stencil_1d -kernel gpu_compute_bound -gpu-lanes 100 -iter 5)
  _vector(io_bound 16 30 0 0 -steps 4 -width 4 -type stencil_1d -kernel io_bound -iter 2)
  if(TASKGRID_HAVE_BLAS)
    # Order n = 32 (24576 / 24 = 1024 = 32^2): 2 * 32^3 * 2 FLOPs per task.
    _vector(compute_dgemm 16 30 2097152 0
            -steps 4 -width 4 -type stencil_1d -kernel compute_dgemm -scratch 24576 -iter 2)
    _vector(memory_daxpy 16 21 0 524288
            -steps 4 -width 4 -type nearest -radix 2 -kernel memory_daxpy -scratch 65536
            -sample 8 -iter 4)
  endif()

  # Distribution and buffer edge cases: W not divisible by the devices, W
  # smaller than the devices, an odd output size, -broadcast, two output rows
  # reused every other timestep (-field 2) and one row (-field 1: at least 2
  # are used), the node estimate.
  _vector(width5 50 117 0 0 -steps 10 -width 5 -type stencil_1d)
  _vector(width3_all_to_all 30 81 0 0 -steps 10 -width 3 -type all_to_all)
  _vector(width2 20 36 0 0 -steps 10 -width 2 -type stencil_1d)
  _vector(output100 40 90 0 0 -steps 10 -width 4 -type stencil_1d -output 100)
  _vector(broadcast4099 20 64 0 0 -steps 5 -width 4 -type all_to_all -broadcast 4099)
  _vector(field2 120 256 0 0 -steps 20 -width 6 -type fft -field 2 -output 48)
  _vector(field1 120 684 0 0 -steps 20 -width 6 -type all_to_all -field 1)
  _vector(nodes2 800 2178 0 0 -steps 100 -width 8 -type stencil_1d -nodes 2 -output 64)
  _vector(worker1 160 418 0 0 -steps 20 -width 8 -type stencil_1d -worker 1)

  taskbench_batch_check(_check ${prefix})
  _omp_target_test(${prefix}.vectors "${launcher}" "${environment}" CHECK ${_check} RUN)
  set_tests_properties(${prefix}.vectors PROPERTIES TIMEOUT 240)

  # Usage errors and -h: printed once, before any device is used.
  _omp_target_test(${prefix}.usage_error "${launcher}" "${environment}"
                   CHECK --status 2 --stderr-once "error: Invalid flag \"-steps 0\" must be > 0"
                   RUN -steps 0)
  _omp_target_test(${prefix}.rejected_config "${launcher}" "${environment}"
                   CHECK --status 2
                         --stderr-once "error: Graph type \"spread\" requires a period that is at most 2"
                   RUN -type spread)
  _omp_target_test(${prefix}.help "${launcher}" "${environment}"
                   CHECK --status 0 --stdout-once "Usage:" RUN -h)
endfunction()

taskbench_omp_target_tests(host "" "")

# LLVM's own x86_64 plugin, beside clang's libomptarget: 4 devices in the
# process. OMP_TARGET_OFFLOAD=MANDATORY: a device that cannot run the image
# fails the run instead of falling back to the host.
# (clang++-16 is <llvm>/bin/clang; the plugins are in <llvm>/lib.)
file(REAL_PATH ${TASKGRID_OFFLOAD_CXX} _omp_target_clang)
get_filename_component(_omp_target_llvm ${_omp_target_clang} DIRECTORY)
get_filename_component(_omp_target_llvm ${_omp_target_llvm} DIRECTORY)
if(EXISTS ${_omp_target_llvm}/lib/libomptarget.rtl.x86_64.so)
  taskbench_omp_target_tests(x86_64_plugin ""
                             "LD_LIBRARY_PATH=${_omp_target_llvm}/lib;OMP_TARGET_OFFLOAD=MANDATORY")
endif()

# TaskGrid's plugin: rank 0 runs the program and ranks 1..N-1 are its
# devices (2, 3 and 4 ranks).
if(TARGET taskgrid-omptarget)
  foreach(_ranks 2 3 4)
    taskbench_omp_target_tests(plugin.np${_ranks}
      "${MPIEXEC_EXECUTABLE};-n;${_ranks};env;LD_LIBRARY_PATH=${PROJECT_BINARY_DIR}/lib"
      "OMP_TARGET_OFFLOAD=MANDATORY")
  endforeach()
  # As the METG tool runs it: libomp's hidden helper tasks off, so the
  # program's threads submit the regions and run the copy tasks.
  taskbench_omp_target_tests(plugin.no_helper_tasks.np3
    "${MPIEXEC_EXECUTABLE};-n;3;env;LD_LIBRARY_PATH=${PROJECT_BINARY_DIR}/lib"
    "OMP_TARGET_OFFLOAD=MANDATORY;LIBOMP_USE_HIDDEN_HELPER_TASK=0")
endif()
