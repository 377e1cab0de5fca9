# Tests of apps/miniamr (label apps). Included from tests/apps/CMakeLists.txt.
#
#   apps.miniamr.compare.*     one deck in several configurations (programs,
#                              rank counts, threads, message options), all
#                              with the same level-0 grid: identical
#                              checksums, block sums and block counts
#                              (compare_miniamr.py);
#   apps.miniamr.reference.<deck>.<program>  the reference miniAMR's block
#                              counts and split/reformed totals for two decks
#                              (miniamr_deck*.expected, check_miniamr_reference.py);
#   apps.miniamr.fails.*       bad command lines: the cause, the usage and exit
#                              status 2 (../runtime/expect_failure.py);
#   apps.miniamr.core.*        GoogleTest of miniamr-core (test_miniamr_core.cpp).
#
# miniamr-taskgrid joins every comparison and the reference and failure tests
# once it exists. One thread per rank unless a run says otherwise: four ranks
# share two cores.
if(NOT TARGET miniamr-mpi)
  return()
endif()

set(_miniamr_expect_failure ${CMAKE_CURRENT_LIST_DIR}/../runtime/expect_failure.py)
set(_miniamr_launch ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG})

# The programs under test: name and target.
set(_miniamr_programs mpi)
set(_miniamr_target_mpi miniamr-mpi)
if(TARGET miniamr-mpi_omp)
  list(APPEND _miniamr_programs mpi_omp)
  set(_miniamr_target_mpi_omp miniamr-mpi_omp)
endif()
if(TARGET miniamr-taskgrid)
  list(APPEND _miniamr_programs taskgrid)
  set(_miniamr_target_taskgrid miniamr-taskgrid)
endif()

function(_taskgrid_miniamr_properties name timeout)
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "OMP_NUM_THREADS=1"
    LABELS "apps"
    PROCESSORS 2
    TIMEOUT ${timeout})
endfunction()

# taskgrid_miniamr_compare_test(<name> RUNS <run>... DECK <deck arguments>...)
# A run is one string, "PROGRAM RANKS [VAR=VALUE ...] [ARGS ...]" (see
# compare_miniamr.py); runs of a program that is not built are left out.
function(taskgrid_miniamr_compare_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "RUNS;DECK")
  set(name apps.miniamr.compare.${name})
  set(programs)
  foreach(program IN LISTS _miniamr_programs)
    list(APPEND programs --program "${program}=$<TARGET_FILE:${_miniamr_target_${program}}>")
  endforeach()
  set(runs)
  foreach(run IN LISTS arg_RUNS)
    string(REGEX MATCH "^[a-z_]+" program "${run}")
    if(program IN_LIST _miniamr_programs)
      list(APPEND runs --run "${run}")
    endif()
  endforeach()
  add_test(NAME ${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/compare_miniamr.py
                   --mpiexec ${MPIEXEC_EXECUTABLE} --numproc-flag=${MPIEXEC_NUMPROC_FLAG}
                   --timeout 120 ${programs} ${runs}
                   -- ${arg_DECK})
  _taskgrid_miniamr_properties(${name} 400)
endfunction()

# Deck 1 (one growing sphere surface, refined every other timestep) on a
# 2 x 2 x 2 level-0 grid, split over 1, 2 and 4 ranks.
set(_miniamr_sphere
    --nx 4 --ny 4 --nz 4 --num_refine 2 --max_blocks 2000 --num_tsteps 8 --stages_per_ts 2
    --refine_freq 2 --checksum_freq 2 --num_vars 3
    --num_objects 1 --object 2 0 -0.5 -0.5 -0.5 0.15 0.15 0.15 0.6 0.6 0.6 0.0 0.0 0.0)
set(_miniamr_sphere_np1 "--init_x 2 --init_y 2 --init_z 2")
set(_miniamr_sphere_np2 "--npx 2 --init_x 1 --init_y 2 --init_z 2")
set(_miniamr_sphere_np4 "--npx 2 --npy 2 --init_x 1 --init_y 1 --init_z 2")
taskgrid_miniamr_compare_test(sphere
  RUNS "mpi 1 ${_miniamr_sphere_np1}"
       "mpi 2 ${_miniamr_sphere_np2}"
       "mpi 4 ${_miniamr_sphere_np4}"
       "mpi_omp 1 OMP_NUM_THREADS=2 ${_miniamr_sphere_np1}"
       "mpi_omp 2 OMP_NUM_THREADS=2 ${_miniamr_sphere_np2}"
       "taskgrid 1 ${_miniamr_sphere_np1}"
       "taskgrid 2 ${_miniamr_sphere_np2}"
       "taskgrid 4 ${_miniamr_sphere_np4}"
       "taskgrid 1 TASKGRID_THREADS=2 ${_miniamr_sphere_np1}"
       "taskgrid 2 TASKGRID_THREADS=2 ${_miniamr_sphere_np2} --max_comm_tasks 1"
  DECK ${_miniamr_sphere})
# Three ranks (a factor of 3: the x cut) on a 3 x 2 x 2 level-0 grid.
taskgrid_miniamr_compare_test(three_ranks
  RUNS "mpi 1 --init_x 3 --init_y 2 --init_z 2"
       "mpi 3 --npx 3 --init_x 1 --init_y 2 --init_z 2"
       "mpi_omp 3 OMP_NUM_THREADS=2 --npx 3 --init_x 1 --init_y 2 --init_z 2"
       "taskgrid 3 --npx 3 --init_x 1 --init_y 2 --init_z 2"
  DECK ${_miniamr_sphere})

# Deck 2's two moving solid spheres, refined every timestep on a 2 x 2 x 1
# level-0 grid: blocks split, coarsen (their children gather on another
# rank) and move when the load balance asks.
set(_miniamr_spheres
    --nx 4 --ny 4 --nz 4 --num_refine 2 --max_blocks 2000 --num_tsteps 6 --stages_per_ts 2
    --refine_freq 1 --checksum_freq 2 --num_vars 3 --num_objects 2
    --object 3 0 0.25 0.25 0.5 0.05 0.0 0.0 0.12 0.12 0.12 0.0 0.0 0.0
    --object 3 0 0.75 0.75 0.5 -0.05 0.0 0.0 0.12 0.12 0.12 0.0 0.0 0.0)
set(_miniamr_spheres_np1 "--init_x 2 --init_y 2")
set(_miniamr_spheres_np2 "--npx 2 --init_y 2")
set(_miniamr_spheres_np4 "--npx 2 --npy 2")
taskgrid_miniamr_compare_test(moving_spheres
  RUNS "mpi 1 ${_miniamr_spheres_np1}"
       "mpi 2 ${_miniamr_spheres_np2}"
       "mpi 4 ${_miniamr_spheres_np4}"
       "mpi_omp 2 OMP_NUM_THREADS=2 ${_miniamr_spheres_np2}"
       "taskgrid 1 ${_miniamr_spheres_np1}"
       "taskgrid 2 ${_miniamr_spheres_np2}"
       "taskgrid 4 ${_miniamr_spheres_np4}"
  DECK ${_miniamr_spheres})
# One message per face instead of one bundle per peer: the same cells.
taskgrid_miniamr_compare_test(send_faces
  RUNS "mpi 1 ${_miniamr_spheres_np1}"
       "mpi 2 ${_miniamr_spheres_np2} --send_faces"
       "mpi 4 ${_miniamr_spheres_np4} --send_faces"
       "taskgrid 4 ${_miniamr_spheres_np4} --send_faces"
  DECK ${_miniamr_spheres})
# Variables exchanged two at a time (groups of 2 and 1): the same cells.
taskgrid_miniamr_compare_test(comm_vars
  RUNS "mpi 1 ${_miniamr_spheres_np1}"
       "mpi 2 ${_miniamr_spheres_np2} --comm_vars 2"
       "mpi 4 ${_miniamr_spheres_np4} --comm_vars 2"
       "mpi_omp 2 OMP_NUM_THREADS=2 ${_miniamr_spheres_np2} --comm_vars 2"
       "taskgrid 4 ${_miniamr_spheres_np4} --comm_vars 2"
  DECK ${_miniamr_spheres})
# Every block refined once, then the 27-point stencil (its planes carry the
# ghosts of earlier directions) on 64 blocks.
set(_miniamr_uniform
    --nx 4 --ny 4 --nz 4 --num_refine 1 --uniform_refine 1 --stencil 27 --max_blocks 2000
    --num_tsteps 4 --stages_per_ts 3 --checksum_freq 1 --num_vars 3)
taskgrid_miniamr_compare_test(uniform27
  RUNS "mpi 1 ${_miniamr_sphere_np1}"
       "mpi 2 ${_miniamr_sphere_np2}"
       "mpi 4 ${_miniamr_sphere_np4}"
       "mpi_omp 2 OMP_NUM_THREADS=2 ${_miniamr_sphere_np2}"
       "taskgrid 1 ${_miniamr_sphere_np1}"
       "taskgrid 4 ${_miniamr_sphere_np4}"
  DECK ${_miniamr_uniform})

# The reference's report lines for two decks, run exactly as published.
set(_miniamr_deck1
    --npx 2 --nx 4 --ny 4 --nz 4 --init_x 1 --init_y 2 --init_z 2 --num_refine 2 --max_blocks 2000
    --num_tsteps 8 --stages_per_ts 2 --refine_freq 2 --checksum_freq 2
    --num_objects 1 --object 2 0 -0.5 -0.5 -0.5 0.15 0.15 0.15 0.6 0.6 0.6 0.0 0.0 0.0)
set(_miniamr_deck1_ranks 2)
set(_miniamr_deck1_prefixes
    --prefix "Number of blocks at level" --prefix "Total number of blocks at timestep"
    --prefix "total blocks split" --prefix "total blocks reformed")
set(_miniamr_deck2
    --npx 2 --npy 2 --nx 4 --ny 4 --nz 4 --num_refine 2 --num_tsteps 6 --stages_per_ts 2
    --refine_freq 1 --checksum_freq 2 --num_objects 2
    --object 3 0 0.25 0.25 0.5 0.05 0.0 0.0 0.12 0.12 0.12 0.0 0.0 0.0
    --object 3 0 0.75 0.75 0.5 -0.05 0.0 0.0 0.12 0.12 0.12 0.0 0.0 0.0)
set(_miniamr_deck2_ranks 4)
set(_miniamr_deck2_prefixes  # the reference shows only the totals for this deck
    --prefix "Total number of blocks at timestep"
    --prefix "total blocks split" --prefix "total blocks reformed")
foreach(deck IN ITEMS deck1 deck2)
  foreach(program IN LISTS _miniamr_programs)
    set(name apps.miniamr.reference.${deck}.${program})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_miniamr_reference.py
                     --expected ${CMAKE_CURRENT_LIST_DIR}/miniamr_${deck}.expected
                     ${_miniamr_${deck}_prefixes} --timeout 120
                     --
                     ${_miniamr_launch} ${_miniamr_${deck}_ranks} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${_miniamr_target_${program}}> ${MPIEXEC_POSTFLAGS}
                     ${_miniamr_${deck}})
    _taskgrid_miniamr_properties(${name} 200)
  endforeach()
endforeach()

# taskgrid_miniamr_failure_test(<name> <cause regex> <program arguments>...): one
# rank, exit status 2, the cause and the usage.
function(taskgrid_miniamr_failure_test name cause)
  foreach(program IN ITEMS mpi taskgrid)
    if(NOT program IN_LIST _miniamr_programs)
      continue()
    endif()
    set(test apps.miniamr.fails.${name}.${program})
    add_test(NAME ${test}
             COMMAND ${Python3_EXECUTABLE} ${_miniamr_expect_failure} --timeout 60 --status 2
                     "--regex=${cause}" --regex "miniAMR options"
                     --
                     ${_miniamr_launch} 1 ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${_miniamr_target_${program}}> ${MPIEXEC_POSTFLAGS} ${ARGN})
    _taskgrid_miniamr_properties(${test} 90)
  endforeach()
endfunction()
taskgrid_miniamr_failure_test(unknown_flag "unknown flag '--bogus'" --nx 4 --bogus 1)
taskgrid_miniamr_failure_test(odd_nx "--nx must be even" --nx 3)
taskgrid_miniamr_failure_test(ranks "--npx \\* --npy \\* --npz = 2 but the job has 1 rank" --npx 2)
taskgrid_miniamr_failure_test(object_without_num_objects "--object: more objects than --num_objects declares"
                              --object 2 0 0.5 0.5 0.5 0 0 0 0.1 0.1 0.1 0 0 0)

# The shared core (mesh, kernels, command line) on its own, without MPI.
add_executable(miniamr_core_tests test_miniamr_core.cpp)
target_link_libraries(miniamr_core_tests PRIVATE miniamr-core GTest::gtest_main)
gtest_discover_tests(miniamr_core_tests
  TEST_PREFIX "apps.miniamr.core."
  DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS "apps" TIMEOUT 60)

# The figures' script, on its small deck: every configuration runs and the
# table has a row for each.
if(TARGET miniamr-taskgrid AND TARGET miniamr-mpi_omp)
  add_test(NAME apps.miniamr.scaling.quick
           COMMAND ${Python3_EXECUTABLE} ${_miniamr_expect_failure} --timeout 240 --status 0
                   --regex "sphere \\| miniamr-taskgrid 2x1" --regex "four \\| miniamr-mpi_omp 1x2"
                   --regex "four \\| miniamr-taskgrid 1x2"
                   -- ${PROJECT_SOURCE_DIR}/apps/miniamr/scaling.sh --quick --build-dir ${PROJECT_BINARY_DIR}
                   --mpiexec ${MPIEXEC_EXECUTABLE})
  _taskgrid_miniamr_properties(apps.miniamr.scaling.quick 300)
endif()
