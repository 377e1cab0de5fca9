# taskgrid_enable_cuda(<option>): where <option> is ON and CMake finds a CUDA
# compiler, enables the CUDA language in the calling directory and sets
# <option>_ACTIVE to ON; otherwise sets it to OFF. The parts of the build that
# compile CUDA (the example, Task Bench's GPU kernels) use it, so that they
# decide alike. TaskGrid itself never compiles CUDA: it loads the runtime.
macro(taskgrid_enable_cuda option)
  set(${option}_ACTIVE OFF)
  if(${option})
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      enable_language(CUDA)
      set(${option}_ACTIVE ON)
    endif()
  endif()
endmacro()
