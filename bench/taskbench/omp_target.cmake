# taskbench-omp_target (systems/omp_target.cpp): Task Bench on OpenMP offload
# devices. Included from bench/taskbench/CMakeLists.txt when TASKGRID_OFFLOAD
# is true; built entirely by TASKGRID_OFFLOAD_CXX (clang++-16) with
# TASKGRID_OFFLOAD_FLAGS (e.g. -fopenmp;-fopenmp-targets=x86_64-pc-linux-gnu)
# through custom commands, so the project's compiler stays GCC.
#
# The core sources are compiled once, as ordinary position-independent
# objects (no OpenMP), and linked twice: into the host executable, and with
# -Xoffload-linker into the x86_64 device image, where the target regions call
# the contract and the kernels (systems/omp_target.h explains why they are not
# declare-target code). omp_target.cpp is the only OpenMP source. The device
# image also links BLAS when the build has it (compute_dgemm, memory_daxpy).
#
# The executable is <build>/bin/taskbench-omp_target, beside the other
# systems; the custom target taskbench-omp_target (part of ALL) carries its
# path in the property TASKBENCH_EXECUTABLE, which
# tests/taskbench/omp_target_system.cmake reads.
if(NOT TASKGRID_OFFLOAD_CXX)
  message(FATAL_ERROR "omp_target.cmake needs TASKGRID_OFFLOAD_CXX (clang++-16)")
endif()

set(_ot_src ${CMAKE_CURRENT_LIST_DIR})
set(_ot_fragment ${CMAKE_CURRENT_LIST_FILE})
set(_ot_dir ${CMAKE_CURRENT_BINARY_DIR}/omp_target)
# Beside the other systems (CMAKE_RUNTIME_OUTPUT_DIRECTORY: <build>/bin).
set(_ot_bin ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
if(NOT _ot_bin)
  set(_ot_bin ${CMAKE_BINARY_DIR}/bin)
endif()
set(_ot_exe ${_ot_bin}/taskbench-omp_target)
file(MAKE_DIRECTORY ${_ot_dir} ${_ot_bin})

set(_ot_flags -std=c++20 -O2 -fPIC -Wall -Wextra -I${_ot_src})
if(TASKGRID_NATIVE)
  list(APPEND _ot_flags -march=native)
endif()
# The kernels are built for the CPU the other systems are built for (a -march
# in CMAKE_CXX_FLAGS, such as the device kit's x86-64-v3): without it they
# were SSE2 code beside AVX2 code, and omp_target reached 14% efficiency.
separate_arguments(_ot_cxx_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS}")
foreach(_flag IN LISTS _ot_cxx_flags)
  if(_flag MATCHES "^-m(arch|tune|cpu)=")
    list(APPEND _ot_flags ${_flag})
  endif()
endforeach()
if(TASKGRID_WERROR)
  list(APPEND _ot_flags -Werror)
endif()
# Include directories, unless the compiler searches them anyway (an -isystem
# of a default directory would change the order of #include_next).
set(_ot_implicit /usr/include ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES})
set(_ot_includes)
set(_ot_libs)
if(TASKGRID_HAVE_BLAS)
  list(APPEND _ot_flags -DTASKBENCH_HAVE_BLAS=1)
  list(APPEND _ot_includes ${CBLAS_INCLUDE_DIR})
  set(_ot_libs ${BLAS_LIBRARIES})
endif()
# nlohmann/json.hpp (report.cpp).
get_target_property(_ot_json nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
if(_ot_json)
  list(APPEND _ot_includes ${_ot_json})
endif()
foreach(_dir IN LISTS _ot_includes)
  if(NOT _dir IN_LIST _ot_implicit)
    list(APPEND _ot_flags -isystem ${_dir})
  endif()
endforeach()

set(_ot_core_headers
  ${_ot_src}/core/gpu_shared.h
  ${_ot_src}/core/kernels.h
  ${_ot_src}/core/options.h
  ${_ot_src}/core/report.h
  ${_ot_src}/core/task_contract.h
  ${_ot_src}/core/task_graph.h)

# _ot_compile(<object> <source> <headers> <flags>...): one clang++ compile,
# depending on the headers it reads (depfile) and on <headers> (a list).
function(_ot_compile object source headers)
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${TASKGRID_OFFLOAD_CXX} ${_ot_flags} ${ARGN} -MD -MF ${object}.d -c ${source}
            -o ${object}
    DEPENDS ${source} ${headers} ${_ot_fragment}
    DEPFILE ${object}.d
    COMMENT "Building CXX object ${object} (${TASKGRID_OFFLOAD_CXX})"
    VERBATIM)
endfunction()

# The core: task_graph, random, kernels and task_contract run on the devices
# (host and device image); options and report only on the host.
set(_ot_device_objects)
foreach(_name IN ITEMS task_graph random kernels task_contract)
  set(_extra)
  if(_name STREQUAL "kernels")
    # x*x + x as one FMA per lane, as for taskbench_core.
    set(_extra -ffp-contract=fast)
  endif()
  _ot_compile(${_ot_dir}/${_name}.o ${_ot_src}/core/${_name}.cpp "${_ot_core_headers}" ${_extra})
  list(APPEND _ot_device_objects ${_ot_dir}/${_name}.o)
endforeach()
set(_ot_host_objects)
foreach(_name IN ITEMS options report)
  _ot_compile(${_ot_dir}/${_name}.o ${_ot_src}/core/${_name}.cpp "${_ot_core_headers}")
  list(APPEND _ot_host_objects ${_ot_dir}/${_name}.o)
endforeach()
# The system: host code and target regions (the offload driver embeds the
# device code in the object).
_ot_compile(${_ot_dir}/omp_target.o ${_ot_src}/systems/omp_target.cpp
            "${_ot_core_headers};${_ot_src}/systems/omp_target.h" ${TASKGRID_OFFLOAD_FLAGS})

set(_ot_device_link)
foreach(_input IN LISTS _ot_device_objects _ot_libs)
  list(APPEND _ot_device_link -Xoffload-linker ${_input})
endforeach()
add_custom_command(
  OUTPUT ${_ot_exe}
  COMMAND ${TASKGRID_OFFLOAD_CXX} ${TASKGRID_OFFLOAD_FLAGS} -O2 ${_ot_dir}/omp_target.o
          ${_ot_device_objects} ${_ot_host_objects} ${_ot_device_link} ${_ot_libs} -pthread
          -o ${_ot_exe}
  DEPENDS ${_ot_dir}/omp_target.o ${_ot_device_objects} ${_ot_host_objects}
          ${_ot_fragment}
  COMMENT "Linking taskbench-omp_target (${TASKGRID_OFFLOAD_CXX})"
  VERBATIM)
add_custom_target(taskbench-omp_target ALL DEPENDS ${_ot_exe})
set_target_properties(taskbench-omp_target PROPERTIES TASKBENCH_EXECUTABLE ${_ot_exe})
