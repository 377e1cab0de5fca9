# Task Bench vectors in batches: the spec vectors of one system, rank count
# and environment run as the graphs of one process (joined by -and; the
# expected totals are their sums), so one launch of mpiexec checks twenty
# vectors instead of one (tests/taskbench/check_taskbench_run.py --vector; a
# failing batch is run again one vector at a time to name the culprits).
# Graph flags are per graph in Task Bench, so each vector's graphs run as they
# would alone; a vector with a flag of the whole run (-broadcast, -worker,
# -nodes, -device, a system's own -<system>:... flag) runs alone, and so does
# one whose totals depend on its graph's index (random_nearest draws its edges,
# load_imbalance its iterations, from a seed that includes the index).
# Included from tests/taskbench/CMakeLists.txt.

# taskbench_vector_spec(<out> <name> <tasks> <deps> <flops> <bytes> <flags>...)
# Sets <out> to the checker's --vector value, or to "" where the vector must run alone.
function(taskbench_vector_spec out name tasks deps flops bytes)
  set(whole_run -broadcast -worker -nodes -json -device -h)
  foreach(flag IN LISTS ARGN)
    if(flag IN_LIST whole_run OR flag MATCHES "^-[a-z_]+:" OR flag STREQUAL "random_nearest"
       OR flag STREQUAL "load_imbalance")
      set(${out} "" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  string(JOIN " " flags ${ARGN})
  set(${out} "${name}|${tasks}|${deps}|${flops}|${bytes}|${flags}" PARENT_SCOPE)
endfunction()

# taskbench_batch_add(<batch> <spec>): a vector (taskbench_vector_spec) joins <batch>.
function(taskbench_batch_add batch spec)
  set_property(GLOBAL APPEND PROPERTY TASKBENCH_BATCH_${batch} "${spec}")
  set_property(GLOBAL APPEND PROPERTY TASKBENCH_BATCHES ${batch})
endfunction()

# taskbench_batch_check(<out> <batch>): the checker's arguments for the batch's
# run (its vectors, and a time limit for all of them); "" for an empty batch.
function(taskbench_batch_check out batch)
  get_property(specs GLOBAL PROPERTY TASKBENCH_BATCH_${batch})
  set(args "")
  if(specs)
    set(args --timeout 200)
    foreach(spec IN LISTS specs)
      list(APPEND args --vector "${spec}")
    endforeach()
  endif()
  set(${out} "${args}" PARENT_SCOPE)
endfunction()
