# Task Bench on the simulator (bench/sim/, label "sim"): taskbench-taskgrid_spmd
# and taskbench-taskgrid on the S4U backend and taskbench-mpi on SMPI, through
# the taskgrid-sim launcher, at 2 and 4 simulated nodes. Each run must exit 0
# with the spec's totals: every task validates its inputs and the executed
# counts are compared with the totals, as in the real runs. Then: a simulated
# run prints the same twice, and a bad platform, node count or kernel is an
# error naming it. Included from tests/taskbench/CMakeLists.txt where SimGrid is.
set(_sim ${PROJECT_BINARY_DIR}/bin/taskgrid-sim)
set(_sim_checker ${CMAKE_CURRENT_LIST_DIR}/check_taskbench_run.py)
set(_sim_systems taskgrid_spmd taskgrid)
if(TARGET taskbench-mpi-smpi)
  list(APPEND _sim_systems mpi)
endif()
foreach(_system IN LISTS _sim_systems)
  foreach(_nodes IN ITEMS 2 4)
    foreach(_vector IN ITEMS
        "v04|40;108;84480;0|-steps;10;-width;4;-type;stencil_1d_periodic;-kernel;compute_bound;-iter;16"
        "v05|31;30;398784;0|-steps;6;-width;8;-type;tree;-kernel;compute_bound;-iter;100"
        "v13|160;381;0;0|-steps;10;-width;16;-type;random_nearest;-radix;5;-fraction;0.5")
      taskgrid_split_case("${_vector}" _name _totals _flags)
      list(GET _totals 0 _tasks)
      list(GET _totals 1 _deps)
      list(GET _totals 2 _flops)
      list(GET _totals 3 _bytes)
      set(_test sim.taskbench.${_system}.n${_nodes}.${_name})
      add_test(NAME ${_test}
               COMMAND ${Python3_EXECUTABLE} ${_sim_checker} --timeout 120 --tasks ${_tasks}
                       --deps ${_deps} --flops ${_flops} --bytes ${_bytes} --
                       ${_sim} --system ${_system} --nodes ${_nodes} -- ${_flags})
      set_tests_properties(${_test} PROPERTIES LABELS "sim;taskbench" TIMEOUT 150)
    endforeach()
  endforeach()
endforeach()

# The same output twice (simulated times included), spmd and cluster mode.
foreach(_system IN ITEMS taskgrid_spmd taskgrid)
  add_test(NAME sim.taskbench.${_system}.deterministic
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_sim}
                   "-DARGS=--system;${_system};--nodes;8;--;-steps;20;-width;32;-type;nearest;-radix;3;-kernel;compute_bound;-iter;256"
                   -P ${PROJECT_SOURCE_DIR}/tests/comm/s4u/same_output_twice.cmake)
  set_tests_properties(sim.taskbench.${_system}.deterministic PROPERTIES
    LABELS "sim;taskbench" TIMEOUT 150)
endforeach()

# Errors: a message naming the cause, exit status 2.
taskgrid_error_tests(sim.taskbench.errors ${_sim} "sim;taskbench" CASES
  "bad_platform|--platform;nosuch;--nodes;2|platform 'nosuch': no such platform"
  "too_many_nodes|--nodes;65|platform thismachine .*has 1 to 64 nodes: 65 asked for"
  "no_flops|--nodes;2;--;-steps;2;-width;2;-kernel;busy_wait;-iter;4|no FLOP count for this kernel")

# Broadcast strategies on a contention-free star (sdumont): tree must gain
# what its shape promises over on-demand delivery, and pipeline more. Fails
# where the simulated network shares a link among every chunk posted at once.
add_test(NAME sim.bcast.strategies
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/sim/bcast_sim.py --nodes 8,16
                 --sizes 4M --no-mpi --check --build-dir ${PROJECT_BINARY_DIR})
set_tests_properties(sim.bcast.strategies PROPERTIES
  LABELS "sim" TIMEOUT 150 PASS_REGULAR_EXPRESSION "every strategy gains what its shape promises")

# Several cores per node: 4 tasks of 250 us per node and step, on 2 sdumont
# nodes x 4 cores, must run at 90% of the cores' speed or more (simulated time
# is deterministic). Fails where the engine's thread holds the engine while it
# runs a task: outputs other ranks wait for, and inputs arriving meanwhile,
# then wait for that task to end (52% in spmd mode before Engine v3's fix).
foreach(_system IN ITEMS taskgrid_spmd taskgrid)
  add_test(NAME sim.taskbench.${_system}.multicore_efficiency
           COMMAND ${Python3_EXECUTABLE} ${_sim_checker} --timeout 120 --flops 1342187520
                   --min-flop-rate 2.4192e11 --
                   ${_sim} --system ${_system} --platform sdumont --nodes 2 --cores-per-node 4
                   -- -steps 20 -width 8 -type stencil_1d -kernel compute_bound -iter 65536)
  set_tests_properties(sim.taskbench.${_system}.multicore_efficiency PROPERTIES
    LABELS "sim;taskbench" TIMEOUT 150)
endforeach()

# The cost model: a spmd rank is charged runtime_foreign_submission_seconds for
# planning another rank's task, cluster mode's head the full submission cost
# for every task (check_sim_foreign_charge.py: the same run with that cost at
# 1 ns and at 10 us).
add_test(NAME sim.taskbench.foreign_submission_charge
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_sim_foreign_charge.py ${_sim}
                 ${PROJECT_SOURCE_DIR}/bench/sim/platforms/thismachine.platform)
set_tests_properties(sim.taskbench.foreign_submission_charge PROPERTIES
  LABELS "sim;taskbench" TIMEOUT 150
  PASS_REGULAR_EXPRESSION "spmd charged for other ranks' tasks, cluster not")

# The MPI library's work per message (message_overhead) is charged to the MPI
# baseline on SMPI, sends and receives, as to TaskGrid on S4U
# (check_sim_message_charge.py: the same run with it at 1 ns and at 10 us).
if(TARGET taskbench-mpi-smpi)
  add_test(NAME sim.taskbench.message_charge
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_sim_message_charge.py
                   ${_sim} ${PROJECT_SOURCE_DIR}/bench/sim/platforms/thismachine.platform)
  set_tests_properties(sim.taskbench.message_charge PROPERTIES
    LABELS "sim;taskbench" TIMEOUT 150
    PASS_REGULAR_EXPRESSION "every system charged for its messages")
endif()
