# Checked mode (TASKGRID_CHECK=1) end to end: tests/runtime/checked_mode.cpp
# under mpiexec at 1, 2 and 4 ranks, in cluster and spmd mode, through
# taskgrid_error_test (error_cases.cmake, included before this file). Each
# misuse ends the job naming the task, its id and rank, and the fault; the
# correct program gives the same result checked and unchecked; unchecked, an
# argument read as another type goes unnoticed as before.

# A misuse in checked mode, in task <task> on rank <rank>: the job ends with
# "checked mode: task '<task>' (id N, rank R) <fault>".
function(taskgrid_checked_misuse case mode ranks rank task fault)
  taskgrid_error_test(checked_${case}_${mode} ${ranks} 1
    ENV TASKGRID_MODE=${mode} TASKGRID_CHECK=1
    REGEX "error: taskgrid: rank ${rank}: checked mode: task '${task}' [(]id [0-9]+, rank ${rank}[)] ${fault}"
    PROGRAM taskgrid-checked-mode ARGS ${case} ${rank})
endfunction()

foreach(mode IN ITEMS cluster spmd)
  foreach(ranks_rank IN ITEMS 1:0 2:1 4:3)
    string(REPLACE ":" ";" _pair "${ranks_rank}")
    list(GET _pair 0 _ranks)
    list(GET _pair 1 _rank)
    taskgrid_checked_misuse(overrun8 ${mode} ${_ranks} ${_rank} stencil
      "wrote past the end of access 0 [(]inout, 4096 bytes[)] at offset 4096[+]0")
    # v[3] = -1.0 over 1.0: only the sign's byte (24 + 7) changes.
    taskgrid_checked_misuse(write_in ${mode} ${_ranks} ${_rank} reader
      "wrote to access 0 [(]in, 4096 bytes[)], which it may only read, first at offset 31")
    taskgrid_checked_misuse(arg_type ${mode} ${_ranks} ${_rank} scale
      "read argument 0 at offset 0 as 'int' but it was submitted as 'float'")
    # Past the guard zone: the guard page faults inside the task.
    taskgrid_error_test(checked_overrun512_${mode} ${_ranks} 1
      ENV TASKGRID_MODE=${mode} TASKGRID_CHECK=1
      REGEX "error: taskgrid: rank ${_rank}: SIGSEGV [(]invalid memory access or stack overflow[)] at address 0x[0-9a-f]+ in task 'far_stencil' [(]id [0-9]+[)]"
      PROGRAM taskgrid-checked-mode ARGS overrun512 ${_rank})
    # Unchecked: the same mistake is not looked for (no cost, no message).
    taskgrid_error_test(unchecked_arg_type_${mode} ${_ranks} 1 STATUS 0 ENV TASKGRID_MODE=${mode}
      REGEX "checked-mode: arg_type done" ABSENT "checked mode"
      PROGRAM taskgrid-checked-mode ARGS arg_type ${_rank})
    foreach(_check IN ITEMS 0 1)
      taskgrid_error_test(checked_correct${_check}_${mode} ${_ranks} 2 STATUS 0
        ENV TASKGRID_MODE=${mode} TASKGRID_CHECK=${_check}
        REGEX "checked-mode: correct result 10098.25" "checked-mode: correct done"
        ABSENT "error"
        PROGRAM taskgrid-checked-mode ARGS correct ${_rank})
    endforeach()
  endforeach()
endforeach()
