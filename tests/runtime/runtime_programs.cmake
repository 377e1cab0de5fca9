# Test programs of the TaskGrid runtime that run under mpiexec: the
# differential random-graph harness, the error-case program, the checked-mode
# program (checked_mode.cmake) and the broadcast check (broadcast.cmake). Included from tests/runtime/CMakeLists.txt; all
# land in ${PROJECT_BINARY_DIR}/bin.
foreach(_program IN ITEMS differential_harness:taskgrid-differential
                          error_cases:taskgrid-error-cases
                          checked_mode:taskgrid-checked-mode
                          broadcast_check:taskgrid-broadcast-check
                          registration_clash:taskgrid-registration-clash)
  string(REPLACE ":" ";" _pair "${_program}")
  list(GET _pair 0 _source)
  list(GET _pair 1 _target)
  add_executable(${_target} ${CMAKE_CURRENT_LIST_DIR}/${_source}.cpp)
  target_link_libraries(${_target} PRIVATE taskgrid)
  set_target_properties(${_target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endforeach()

# A preloadable MPI_Finalize that hangs (runtime.error.finalize_hangs).
add_library(taskgrid-finalize-hang-shim SHARED ${CMAKE_CURRENT_LIST_DIR}/finalize_hang_shim.c)
