# Tests of the C API (include/taskgrid/taskgrid.h). Included from
# tests/runtime/CMakeLists.txt.
#
#   c_api.vector_scale*  apps/examples/c_vector_scale.c as a plain process and
#                        under mpiexec -n 2 and 4: exit 0 and a "verified" line.
#   c_api.errors*        c_api_errors.c: bad calls return non-zero codes with a
#                        message, without crashing, and the runtime keeps
#                        working; exit 0 and "all N checks passed".
#   c_api.task_fail*     a C task calls tg_task_fail / asks for a buffer it does
#   c_api.bad_index      not have: the job ends non-zero with a message naming
#                        the task (its registered name, or tg_task_options.name)
#                        and the rank.
#   c_api.device.*       c_api_device.c: device tasks written in C on emulated
#                        devices (2 per rank) under mpiexec -n 1, 2 and 4, and
#                        with TASKGRID_DEVICE=none (the CPU implementations);
#                        the failing runs: a hint for a device the rank does
#                        not have, a device-only task on a rank without
#                        devices, a device implementation calling tg_task_fail.
#
# CTest cannot require an exit status and an output pattern at once
# (PASS_REGULAR_EXPRESSION ignores the status). The failing runs go through
# expect_failure.py (non-zero status, regexes, process group killed on a
# hang); the runs that must succeed through this same file in script mode:
#
#   cmake -DEXPECT_REGEX=<regex> -P c_api.cmake -- <command>...
#
# which requires exit status 0 and output (stdout+stderr) matching <regex>.
if(CMAKE_SCRIPT_MODE_FILE)
  set(_command)
  set(_after_separator OFF)
  math(EXPR _last "${CMAKE_ARGC} - 1")
  foreach(_i RANGE ${_last})
    if(_after_separator)
      list(APPEND _command "${CMAKE_ARGV${_i}}")
    elseif(CMAKE_ARGV${_i} STREQUAL "--")
      set(_after_separator ON)
    endif()
  endforeach()
  if(NOT _command OR NOT DEFINED EXPECT_REGEX)
    message(FATAL_ERROR "usage: cmake -DEXPECT_REGEX=<regex> -P c_api.cmake -- <command>...")
  endif()
  execute_process(COMMAND ${_command}
                  RESULT_VARIABLE _status
                  OUTPUT_VARIABLE _output
                  ERROR_VARIABLE _output
                  TIMEOUT 50)
  message("${_output}")
  if(NOT _status STREQUAL "0")
    message(FATAL_ERROR "FAILED: expected exit status 0, got '${_status}'")
  endif()
  if(NOT _output MATCHES "${EXPECT_REGEX}")
    message(FATAL_ERROR "FAILED: exit status 0, but the output does not match ${EXPECT_REGEX}")
  endif()
  message("PASSED: exit status 0, the output matches ${EXPECT_REGEX}")
  return()
endif()

find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_c_api_expect_failure ${CMAKE_CURRENT_LIST_DIR}/expect_failure.py)
set(_c_api_expect_success ${CMAKE_CURRENT_LIST_FILE})

add_executable(c_api_errors ${CMAKE_CURRENT_LIST_DIR}/c_api_errors.c)
target_link_libraries(c_api_errors PRIVATE taskgrid)
set_target_properties(c_api_errors PROPERTIES
  C_STANDARD 11
  C_STANDARD_REQUIRED ON
  C_EXTENSIONS OFF
  LINKER_LANGUAGE CXX)

add_executable(c_api_device ${CMAKE_CURRENT_LIST_DIR}/c_api_device.c)
target_link_libraries(c_api_device PRIVATE taskgrid)
set_target_properties(c_api_device PROPERTIES
  C_STANDARD 99
  C_STANDARD_REQUIRED ON
  C_EXTENSIONS OFF
  LINKER_LANGUAGE CXX)
target_compile_options(c_api_device PRIVATE -Wall -Wextra -pedantic -Werror)

# _c_api_test(<name> <ranks: 0 = plain process> <threads>
#             SUCCEEDS <regex> | FAILS <expect_failure.py args>...
#             [ENV <var=value>...]  RUN <command>...)
function(_c_api_test name ranks threads)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "SUCCEEDS" "FAILS;RUN;ENV")
  if(ranks EQUAL 0)
    set(launcher)
  else()
    set(launcher ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS})
  endif()
  if(DEFINED arg_SUCCEEDS)
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -DEXPECT_REGEX=${arg_SUCCEEDS} -P ${_c_api_expect_success}
                     -- ${launcher} ${arg_RUN})
  else()
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_c_api_expect_failure} --timeout 50 ${arg_FAILS} --
                     ${launcher} ${arg_RUN})
  endif()
  set(environment TASKGRID_THREADS=${threads} ${arg_ENV})
  set_tests_properties(${name} PROPERTIES TIMEOUT 60 ENVIRONMENT "${environment}")
  if(ranks EQUAL 0)
    set_tests_properties(${name} PROPERTIES LABELS c_api PROCESSORS ${threads})
  else()
    set_tests_properties(${name} PROPERTIES LABELS "mpi;c_api" PROCESSORS 2)
  endif()
endfunction()

set(_verified "(^|\n)verified(\r?\n|$)")
_c_api_test(c_api.vector_scale 0 1 SUCCEEDS ${_verified} RUN $<TARGET_FILE:c_vector_scale>)
_c_api_test(c_api.vector_scale.threads2 0 2 SUCCEEDS ${_verified} RUN $<TARGET_FILE:c_vector_scale>)
_c_api_test(c_api.vector_scale.np2 2 1 SUCCEEDS ${_verified} RUN $<TARGET_FILE:c_vector_scale>)
_c_api_test(c_api.vector_scale.np4 4 1 SUCCEEDS ${_verified} RUN $<TARGET_FILE:c_vector_scale>)

set(_passed "(^|\n)ok: .*c_api_errors: all [0-9]+ checks passed")
_c_api_test(c_api.errors 0 1 SUCCEEDS ${_passed} RUN $<TARGET_FILE:c_api_errors>)
_c_api_test(c_api.errors.np2 2 1 SUCCEEDS ${_passed} RUN $<TARGET_FILE:c_api_errors>)

# The failing task runs on the last rank; fail_job prints "rank R: task ...".
# Only the first tg_task_fail message is reported.
set(_failed_task "task 'c_api_errors[.]failing_task' [(]id [0-9]+[)] failed: deliberate failure from C\n")
_c_api_test(c_api.task_fail 0 1 FAILS --regex "rank 0: ${_failed_task}"
            RUN $<TARGET_FILE:c_api_errors> fail)
_c_api_test(c_api.task_fail.np2 2 1 FAILS --regex "rank 1: ${_failed_task}"
            RUN $<TARGET_FILE:c_api_errors> fail)
_c_api_test(c_api.task_fail.named 0 1
            FAILS --regex "rank 0: task 'named C task' [(]id [0-9]+[)] failed: deliberate failure from C\n"
            RUN $<TARGET_FILE:c_api_errors> fail_named)
_c_api_test(c_api.bad_index 0 1
            FAILS --regex "rank 0: task 'c_api_errors[.]bad_index_task' [(]id [0-9]+[)] failed: tg_task_data[(]5[)]: the task has 1 data accesses"
            RUN $<TARGET_FILE:c_api_errors> bad_index)

# Device tasks in C (TASKGRID_DEVICE=emulated: every rank has 2 emulated devices).
set(_device_env TASKGRID_DEVICE=emulated TASKGRID_EMULATED_DEVICES=2)
set(_device_passed "(^|\n)c_api_device: all [0-9]+ checks passed")
_c_api_test(c_api.device.np1 1 2 SUCCEEDS ${_device_passed} ENV ${_device_env}
            RUN $<TARGET_FILE:c_api_device> run)
_c_api_test(c_api.device.np2 2 1 SUCCEEDS ${_device_passed} ENV ${_device_env}
            RUN $<TARGET_FILE:c_api_device> run)
_c_api_test(c_api.device.np4 4 1 SUCCEEDS ${_device_passed} ENV ${_device_env}
            RUN $<TARGET_FILE:c_api_device> run)
_c_api_test(c_api.device.cpu.np2 2 1 SUCCEEDS ${_device_passed} ENV TASKGRID_DEVICE=none
            RUN $<TARGET_FILE:c_api_device> cpu)
# The task runs on the last rank; "5." matches the message's "5;".
_c_api_test(c_api.device.hint_missing.np2 2 1
            FAILS --regex "rank 1: task 'c_api_device[.]affine' [(]id [0-9]+[)] asks for device 5. this rank has 2"
            ENV ${_device_env} RUN $<TARGET_FILE:c_api_device> hint_missing)
_c_api_test(c_api.device.device_only.np2 2 1
            FAILS --regex "rank 1: task 'c_api_device[.]where' [(]id [0-9]+[)] has only a device implementation, and this rank has no device"
            ENV TASKGRID_DEVICE=none RUN $<TARGET_FILE:c_api_device> device_only)
_c_api_test(c_api.device.fail.np2 2 1
            FAILS --regex "rank 1: task 'c_api_device[.]failing' [(]id [0-9]+[)] failed launching on device [01]: deliberate failure from a C device implementation"
            ENV ${_device_env} RUN $<TARGET_FILE:c_api_device> device_fail)
