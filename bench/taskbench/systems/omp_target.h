// The Task Bench core as the target regions of taskbench-omp_target see it:
// the core's headers inside `declare target`, so that a region may call the
// task contract (and through it the kernels) on its device.
//
// Only the declarations are marked. The definitions (core/*.cpp) are not
// compiled as OpenMP code: clang refuses thread_local variables in
// declare-target code, and the contract keeps some (its per-thread dependency
// list and result sink). omp_target.cmake compiles each core source once as
// an ordinary position-independent x86_64 object and links it twice: into the
// host executable, and with -Xoffload-linker into the x86_64 device image (an
// ordinary shared object, loaded by the plugin on each device), so the device
// runs the same contract and kernels as every other system.
//
// Include this header before any other Task Bench header: a core header first
// included elsewhere would be seen here without the declare-target marking.
#pragma once

// What the core headers include, outside the declare-target region.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#pragma omp begin declare target
#include "core/gpu_shared.h"
#include "core/kernels.h"
#include "core/task_contract.h"
#include "core/task_graph.h"
#pragma omp end declare target
