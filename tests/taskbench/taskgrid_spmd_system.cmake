# Multi-rank tests of taskbench-taskgrid_spmd (labels "mpi;taskgrid_spmd").
# Included from tests/taskbench/CMakeLists.txt.
#
# Each spec section 10 vector runs under mpiexec at 1, 2, 3 and 4 ranks and
# must exit 0 with the spec's totals; the vectors of one rank count run in
# one process (taskbench.taskgrid_spmd.np<R>.vectors, vector_batches.cmake),
# those with a flag of the whole run alone. Every task validates every record of
# every input (and the -broadcast buffer), and the executed task and input
# counts of all ranks are compared with the totals, so a wrong or missing
# edge, or a task skipped or run twice, fails the run. 3 ranks: widths not
# divisible by the ranks. TASKGRID_THREADS=1: one task thread per rank (4
# ranks on a 2-core machine already oversubscribe it).
# _taskgrid_spmd_test(<name> <ranks> [ENV ...] CHECK ... RUN ...): the helper of
# taskgrid_system.cmake (included before this file) for taskbench-taskgrid_spmd.
function(_taskgrid_spmd_test name ranks)
  _taskgrid_test(${name} ${ranks} SYSTEM taskgrid_spmd ${ARGN})
endfunction()

# taskgrid_spmd_vector(<name> <tasks> <deps> <flops> <bytes> [RANKS <n>...] <flags>...)
function(taskgrid_spmd_vector)
  _taskgrid_system_vector(taskgrid_spmd "1,2,3,4" ${ARGN})
endfunction()

# Spec section 10 vectors (vector 3 shortened to 100 steps).
taskgrid_spmd_vector(v02 16 30 0 0 -steps 4 -width 4 -type stencil_1d)
taskgrid_spmd_vector(v03_100_steps 200 396 26227200 0
                     -steps 100 -width 2 -type stencil_1d -kernel compute_bound -iter 1024)
taskgrid_spmd_vector(v04 40 108 84480 0
                     -steps 10 -width 4 -type stencil_1d_periodic -kernel compute_bound -iter 16)
taskgrid_spmd_vector(v05 31 30 398784 0
                     -steps 6 -width 8 -type tree -kernel compute_bound -iter 100)
taskgrid_spmd_vector(v07 40 80 25600 0
                     -steps 5 -width 8 -type fft -kernel compute_bound2 -iter 10)
taskgrid_spmd_vector(v09 24 38 26112 0 -steps 9 -width 4 -type dom -kernel compute_bound -iter 8)
taskgrid_spmd_vector(v10 4 3 0 0 -steps 3 -width 6 -type dom)
taskgrid_spmd_vector(v11 80 210 15360 0 -steps 8 -width 10 -type spread -radix 3 -period 2
                     -kernel compute_bound -iter 1)
taskgrid_spmd_vector(v13 160 381 0 0
                     -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5)
taskgrid_spmd_vector(v17 25 100 0 0
                     -steps 5 -width 5 -type all_to_all -kernel busy_wait -iter 100)
taskgrid_spmd_vector(v19 16 0 2086528 0 -steps 4 -width 4 -type trivial -kernel load_imbalance
                     -iter 1000 -imbalance 0.5)
taskgrid_spmd_vector(v21 24 20 0 3932160 -steps 6 -width 4 -type no_comm -kernel memory_bound
                     -scratch 65536 -sample 16 -iter 40)
taskgrid_spmd_vector(v22 1000 2620 7436800 0
                     -steps 100 -width 8 -type stencil_1d -kernel compute_bound -iter 64
                     -and -steps 50 -width 4 -type fft -kernel compute_bound -iter 32)
taskgrid_spmd_vector(v23 320 783 0 0
                     -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5
                     -and -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5)
taskgrid_spmd_vector(v24 180 338 0 0 -steps 10 -width 8 -type tree
                     -and -type dom -steps 11 -width 6
                     -and -type spread -width 9 -radix 3 -period 3 -steps 9)

# Distribution and buffer edge cases: W not divisible by the ranks, W smaller
# than the ranks (rank 0 owns no point at 4 ranks, yet registers and submits
# everything), an odd output size (trailing bytes), the -broadcast buffer
# (owned by rank 0, republished and read by every task in each pass).
taskgrid_spmd_vector(width5 50 117 0 0 RANKS 4 -steps 10 -width 5 -type stencil_1d)
taskgrid_spmd_vector(width3_all_to_all 30 81 0 0 RANKS 4 -steps 10 -width 3 -type all_to_all)
taskgrid_spmd_vector(output100 40 90 0 0 -steps 10 -width 4 -type stencil_1d -output 100)
taskgrid_spmd_vector(broadcast4099 20 64 0 0 -steps 5 -width 4 -type all_to_all -broadcast 4099)
taskgrid_spmd_vector(broadcast_1MiB 8 10 0 0 RANKS 3 4 -steps 2 -width 4 -type stencil_1d
                     -broadcast 1048579)
taskgrid_spmd_vector(broadcast_no_warmup 8 10 0 0 RANKS 4 -steps 2 -width 4 -type stencil_1d
                     -broadcast 1048579 -taskgrid:warmup 0)
_taskgrid_batch_tests(taskgrid_spmd "" 1 2 3 4)
_taskgrid_spmd_test(taskbench.taskgrid_spmd.np2.warmup_bogus 2
                    CHECK --status 2
                          --stderr-once "error: Invalid flag \"-taskgrid:warmup 2\" must be 0 or 1"
                    RUN -steps 4 -taskgrid:warmup 2)

# Usage errors (printed once, same status on every rank) and -h.
_taskgrid_spmd_test(taskbench.taskgrid_spmd.np2.usage_error 2
                    CHECK --status 2 --stderr-once "error: Invalid flag \"-steps 0\" must be > 0"
                    RUN -steps 0)
_taskgrid_spmd_test(taskbench.taskgrid_spmd.np2.help 2
                    CHECK --status 0 --stdout-once "Usage:" --stdout-once "-taskgrid:warmup 1|0"
                    RUN -h)
_taskgrid_spmd_test(taskbench.taskgrid_spmd.np2.mode_cluster 2 ENV TASKGRID_MODE=cluster
                    CHECK --status 2
                          --stderr-once "taskbench-taskgrid_spmd runs in spmd mode only"
                    RUN -steps 4)
_taskgrid_spmd_test(taskbench.taskgrid_spmd.np2.mode_spmd 2 ENV TASKGRID_MODE=spmd
                    CHECK --tasks 16 --deps 30 --flops 0 --bytes 0
                    RUN -steps 4 -width 4 -type stencil_1d)

# -taskgrid:device gpu (taskgrid_device_cases, in taskgrid_system.cmake).
taskgrid_device_cases(taskgrid_spmd)
