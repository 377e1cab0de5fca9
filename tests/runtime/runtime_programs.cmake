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

# diff_device_hash_fill's CUDA kernel, where CMake finds nvcc: the device
# differential tests then run on GPUs too (TASKGRID_DEVICE=cuda; the device
# kit does). Tests here run on emulated devices, which need no CUDA.
option(TASKGRID_CUDA_TESTS "Build the test programs' CUDA kernels where nvcc is found" ON)
include(${PROJECT_SOURCE_DIR}/cmake/TaskGridCudaLanguage.cmake)
taskgrid_enable_cuda(TASKGRID_CUDA_TESTS)
if(TASKGRID_CUDA_TESTS_ACTIVE)
  target_sources(taskgrid-differential PRIVATE ${CMAKE_CURRENT_LIST_DIR}/differential_cuda.cu)
  target_compile_definitions(taskgrid-differential PRIVATE TASKGRID_DIFFERENTIAL_CUDA)
  set_target_properties(taskgrid-differential PROPERTIES CUDA_STANDARD 17
                                                         CUDA_RUNTIME_LIBRARY Shared)
endif()

# A preloadable MPI_Finalize that hangs (runtime.error.finalize_hangs).
add_library(taskgrid-finalize-hang-shim SHARED ${CMAKE_CURRENT_LIST_DIR}/finalize_hang_shim.c)
# A preloadable MPI_Abort that hangs (runtime.error.abort_hangs).
add_library(taskgrid-abort-hang-shim SHARED ${CMAKE_CURRENT_LIST_DIR}/abort_hang_shim.c)
