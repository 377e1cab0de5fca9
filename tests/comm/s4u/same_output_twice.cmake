# Runs PROGRAM with ARGS twice; fails unless both succeed and print the same.
foreach(_run IN ITEMS 1 2)
  execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out${_run}
                  ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "run ${_run} of ${PROGRAM} failed (${_rc}):\n${_out${_run}}${_err}")
  endif()
endforeach()
if(NOT _out1 STREQUAL _out2)
  message(FATAL_ERROR "two runs of one simulation differ:\n--- first\n${_out1}--- second\n${_out2}")
endif()
message(STATUS "two runs printed the same:\n${_out1}")
