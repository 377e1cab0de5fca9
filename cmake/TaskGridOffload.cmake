# OpenMP offload programs (the plugin's tests, Task Bench's omp_target system,
# the offload benchmarks) are built by clang-16, the compiler whose
# libomptarget loads TaskGrid's plugin; the rest of the project keeps its own
# compiler. TASKGRID_OFFLOAD is ON when clang-16 compiles and links an
# offloading program here (Debian: clang-16, clang-tools-16, libomp-16-dev)
# and the plugin is built (libffi-dev); otherwise the build says why and
# leaves only this part out.
#
#   TASKGRID_OFFLOAD_CC, TASKGRID_OFFLOAD_CXX   clang-16, clang++-16
#   TASKGRID_OFFLOAD_FLAGS                      the offloading flags (a list)
#   taskgrid_offload_program(<name> SOURCES <files...> [INCLUDES <dirs...>]
#                            [OPTIONS <flags...>] [LIBRARIES <flags...>])
#     builds bin/<name> from C or C++ sources with those flags (part of ALL).
option(TASKGRID_OFFLOAD_PROGRAMS "Build OpenMP offload programs with clang-16 where it works" ON)
set(TASKGRID_OFFLOAD OFF)
set(TASKGRID_OFFLOAD_FLAGS -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu)
if(TASKGRID_OFFLOAD_PROGRAMS)
  find_program(TASKGRID_OFFLOAD_CC clang-16)
  find_program(TASKGRID_OFFLOAD_CXX clang++-16)
  set(_taskgrid_offload_why "")
  if(NOT TASKGRID_OFFLOAD_PLUGIN)
    set(_taskgrid_offload_why "the plugin is not built (libffi-dev missing)")
  elseif(NOT TASKGRID_OFFLOAD_CC OR NOT TASKGRID_OFFLOAD_CXX)
    set(_taskgrid_offload_why "clang-16 not found (Debian: clang-16)")
  else()
    # The whole tool chain at once: the offload packager and linker wrapper
    # (clang-tools-16) and libomp/libomptarget 16 (libomp-16-dev).
    set(_probe_dir ${PROJECT_BINARY_DIR}/CMakeFiles/offload-probe)
    file(MAKE_DIRECTORY ${_probe_dir})
    file(WRITE ${_probe_dir}/probe.c
         "int main(void) { int x = 1;\n#pragma omp target map(tofrom: x)\n x += 1;\n return x == 2 ? 0 : 1; }\n")
    execute_process(COMMAND ${TASKGRID_OFFLOAD_CC} ${TASKGRID_OFFLOAD_FLAGS} probe.c -o probe
                    WORKING_DIRECTORY ${_probe_dir} RESULT_VARIABLE _probe_result
                    OUTPUT_VARIABLE _probe_output ERROR_VARIABLE _probe_output)
    if(NOT _probe_result EQUAL 0)
      string(STRIP "${_probe_output}" _probe_output)
      set(_taskgrid_offload_why
          "clang-16 cannot build an offloading program (Debian: clang-tools-16, libomp-16-dev): ${_probe_output}")
    endif()
  endif()
  if(_taskgrid_offload_why)
    message(STATUS "OpenMP offload programs are not built: ${_taskgrid_offload_why}")
  else()
    set(TASKGRID_OFFLOAD ON)
    message(STATUS "OpenMP offload programs: ${TASKGRID_OFFLOAD_CC}")
  endif()
endif()

function(taskgrid_offload_program name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;INCLUDES;OPTIONS;LIBRARIES")
  set(sources "")
  set(scanned "")  # IMPLICIT_DEPENDS pairs: language, file (Makefile generators)
  set(compiler ${TASKGRID_OFFLOAD_CC})
  foreach(source IN LISTS arg_SOURCES)
    get_filename_component(source ${source} ABSOLUTE)
    list(APPEND sources ${source})
    if(source MATCHES "\\.(cpp|cc|cxx)$")
      set(compiler ${TASKGRID_OFFLOAD_CXX})
      list(APPEND scanned CXX ${source})
    else()
      list(APPEND scanned C ${source})
    endif()
  endforeach()
  set(includes "")
  foreach(dir IN LISTS arg_INCLUDES)
    list(APPEND includes -I${dir})
  endforeach()
  set(output ${PROJECT_BINARY_DIR}/bin/${name})
  # Warnings as the rest of the project's; -march as TASKGRID_NATIVE says (the
  # device image too, so that a cluster of other CPUs can be given x86-64).
  set(march -march=x86-64)
  if(TASKGRID_NATIVE)
    set(march -march=native)
  endif()
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${compiler} ${TASKGRID_OFFLOAD_FLAGS} -O2 -g -Wall -Wextra ${march}
            -Xopenmp-target=x86_64-pc-linux-gnu ${march} ${includes} ${arg_OPTIONS}
            ${sources} -o ${output} ${arg_LIBRARIES}
    DEPENDS ${sources}
    IMPLICIT_DEPENDS ${scanned}
    COMMENT "Building offload program ${name} (clang-16)"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${output})
endfunction()
