# CLI tests of the single-node Task Bench systems (taskbench-serial and
# taskbench-omp): bad flags must fail with status 2 and the exact spec message
# on stderr and nothing on stdout; -h prints the usage; every vector of spec
# section 10 must print the table's totals.
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(_tb_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/run_cli_case.py)
set(_tb_systems)
foreach(_system IN ITEMS serial omp)
  if(TARGET taskbench-${_system})
    list(APPEND _tb_systems ${_system})
  endif()
endforeach()

# taskbench_cli_test(<name> <driver options...> -- <program arguments...>)
# registers <name>.<system> for every available system.
function(taskbench_cli_test name)
  list(FIND ARGN "--" _sep)
  list(SUBLIST ARGN 0 ${_sep} _checks)
  math(EXPR _first "${_sep} + 1")
  list(SUBLIST ARGN ${_first} -1 _args)
  foreach(_system IN LISTS _tb_systems)
    set(_test taskbench_cli.${name}.${_system})
    add_test(NAME ${_test}
             COMMAND ${_tb_driver} --timeout 18 ${_checks} -- $<TARGET_FILE:taskbench-${_system}>
                     ${_args})
    set_tests_properties(${_test} PROPERTIES TIMEOUT 20 LABELS "taskbench;taskbench_cli")
  endforeach()
endfunction()

# A usage error: status 2, "error: <message>" on stderr, empty stdout.
function(taskbench_cli_error name message)
  taskbench_cli_test(${name} --status 2 --stderr-exact "error: ${message}" --stdout-empty
                     -- ${ARGN})
endfunction()

# A rejected configuration whose exact message the spec leaves open.
function(taskbench_cli_reject name regex)
  taskbench_cli_test(${name} --status 2 --stderr-regex "^error: .*${regex}" --stdout-empty
                     -- ${ARGN})
endfunction()

# --- Section 2.2 / 2.4 messages -------------------------------------------
taskbench_cli_error(steps_zero "Invalid flag \"-steps 0\" must be > 0" -steps 0)
taskbench_cli_error(steps_text "Invalid flag \"-steps abc\": not an integer" -steps abc)
taskbench_cli_error(width_text "Invalid flag \"-width abc\": not an integer" -width abc)
taskbench_cli_error(width_out_of_range
                    "Invalid flag \"-width 99999999999999999999\": out of range (a 64-bit integer)"
                    -width 99999999999999999999)
taskbench_cli_error(fraction_text "Invalid flag \"-fraction 0.5x\": not a number" -fraction 0.5x)
taskbench_cli_error(width_negative "Invalid flag \"-width -3\" must be > 0" -width -3)
taskbench_cli_error(nodes_zero "Invalid flag \"-nodes 0\" must be > 0" -nodes 0)
taskbench_cli_error(type_bogus "Invalid flag \"-type bogus\"" -type bogus)
taskbench_cli_error(kernel_bogus "Invalid flag \"-kernel bogus\"" -kernel bogus)
taskbench_cli_error(radix_negative "Invalid flag \"-radix -1\" must be >= 0" -radix -1)
taskbench_cli_error(period_negative "Invalid flag \"-period -1\" must be >= 0" -period -1)
taskbench_cli_error(fraction_high "Invalid flag \"-fraction 1.500000\" must be >= 0 and <= 1"
                    -fraction 1.5)
taskbench_cli_error(iter_negative "Invalid flag \"-iter -1\" must be >= 0" -iter -1)
taskbench_cli_error(output_small "Invalid flag \"-output 8\" must be >= 16" -output 8)
taskbench_cli_error(scratch_negative "Invalid flag \"-scratch -8\" must be >= 0" -scratch -8)
taskbench_cli_error(sample_negative "Invalid flag \"-sample -1\" must be >= 0" -sample -1)
taskbench_cli_error(imbalance_high "Invalid flag \"-imbalance 3.000000\" must be >= 0 and <= 2"
                    -imbalance 3)
taskbench_cli_error(field_zero "Invalid flag \"-field 0\" must be > 1" -field 0)
taskbench_cli_error(gpu_lanes_zero "Invalid flag \"-gpu-lanes 0\" must be > 0"
                    -kernel gpu_compute_bound -gpu-lanes 0)
taskbench_cli_error(missing_argument "Flag \"-steps\" requires an argument" -width 4 -steps)
taskbench_cli_error(first_bad_option "Invalid flag \"-width 0\" must be > 0" -width 0 -steps 0)
taskbench_cli_error(spread_default_period
                    "Graph type \"spread\" requires a period that is at most 2 (width 4, radix 3), but no -period was given and the default 3 is too large: specify -period 1 to 2"
                    -type spread)
taskbench_cli_error(spread_given_period
                    "Graph type \"spread\" requires a period that is at most 2" -type spread -period 3)
taskbench_cli_error(period_unsupported
                    "Graph type \"stencil_1d\" does not support user-configurable period"
                    -type stencil_1d -period 2)
taskbench_cli_error(period_zero
                    "Graph type \"random_nearest\" requires a non-zero period (specify with -period)"
                    -type random_nearest -period 0)
taskbench_cli_error(second_graph_invalid "Invalid flag \"-steps 0\" must be > 0"
                    -type stencil_1d -and -steps 0)
taskbench_cli_error(help_after_error "Invalid flag \"-steps 0\" must be > 0" -steps 0 -h)

# --- Crash cases of 2.4's table -------------------------------------------
taskbench_cli_reject(random_spread random_spread -type random_spread)
taskbench_cli_reject(fft_width_1 fft -type fft -width 1)
taskbench_cli_reject(spread_radix_0 spread -type spread -radix 0 -period 1)
taskbench_cli_reject(random_nearest_radix_0 random_nearest -type random_nearest -radix 0)
taskbench_cli_reject(periodic_width_2 stencil_1d_periodic -type stencil_1d_periodic -width 2)
taskbench_cli_reject(spread_radix_above_width spread -type spread -width 4 -radix 5 -period 1)
taskbench_cli_reject(memory_bound_no_scratch memory_bound -kernel memory_bound -iter 4)
# Refused before anything is allocated (it was a bare std::bad_alloc).
taskbench_cli_reject(output_beyond_memory
                     "-output 1000000000000000.: each task's output needs 1000000000000000 bytes"
                     -output 1000000000000000)
# An unwritable -json ends the run at once: the run given would take far
# longer than the driver's timeout (it used to fail after the whole run).
taskbench_cli_error(json_unwritable
                    "Invalid flag \"-json /nonexistent-taskbench-dir/out.json\": cannot create it: No such file or directory"
                    -json /nonexistent-taskbench-dir/out.json -steps 1000000000 -width 2
                    -kernel busy_wait -iter 1000000000)

# --- -h -----------------------------------------------------------------------
taskbench_cli_test(help --status 0 --stdout-regex=-steps --stderr-empty -- -steps 5 -h)

# --- Runs that must succeed -----------------------------------------------
taskbench_cli_test(io_bound --status 0 --stdout-line "Total Tasks 16" --stderr-empty
                   -- -kernel io_bound -iter 2)
taskbench_cli_test(broadcast --status 0 --stdout-line "Total Tasks 16" --stderr-empty
                   -- -type stencil_1d -broadcast 4099)
# Ignored, but each named once on stderr (a typo such as -samples went unseen).
taskbench_cli_test(unknown_flags_ignored --status 0 --stdout-line "Total Tasks 30"
                   --stdout-line "        Samples: 16"
                   --stderr-exact "warning: ignoring unknown flag \"-samples\"\nwarning: ignoring unknown flag \"-foo\""
                   -- -samples 5 -steps 5 -width 6 -foo -samples 6)

# --- Section 10 vectors -----------------------------------------------------
set(_tb_vectors
  "1|16|0|0|0|"
  "2|16|30|0|0|-steps 4 -width 4 -type stencil_1d"
  "3|2000|3996|262272000|0|-steps 1000 -width 2 -type stencil_1d -kernel compute_bound -iter 1024"
  "4|40|108|84480|0|-steps 10 -width 4 -type stencil_1d_periodic -kernel compute_bound -iter 16"
  "5|31|30|398784|0|-steps 6 -width 8 -type tree -kernel compute_bound -iter 100"
  "6|92|91|0|0|-steps 20 -width 5 -type tree"
  "7|40|80|25600|0|-steps 5 -width 8 -type fft -kernel compute_bound2 -iter 10"
  "8|42|80|0|0|-steps 7 -width 6 -type fft"
  "9|24|38|26112|0|-steps 9 -width 4 -type dom -kernel compute_bound -iter 8"
  "10|4|3|0|0|-steps 3 -width 6 -type dom"
  "11|80|210|15360|0|-steps 8 -width 10 -type spread -radix 3 -period 2 -kernel compute_bound -iter 1"
  "12|192|704|0|0|-steps 12 -width 16 -type spread -radix 4 -period 4"
  "13|160|381|0|0|-steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5"
  "14|160|390|0|0|-steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5 -period 4"
  "15|54|195|0|0|-steps 6 -width 9 -type nearest -radix 5"
  "16|54|160|0|0|-steps 6 -width 9 -type nearest -radix 4"
  "17|25|100|0|0|-steps 5 -width 5 -type all_to_all -kernel busy_wait -iter 100"
  "18|21|18|1344|0|-steps 7 -width 3 -type no_comm -kernel compute_bound -iter 0"
  "19|16|0|2086528|0|-steps 4 -width 4 -type trivial -kernel load_imbalance -iter 1000 -imbalance 0.5"
  "20|400|1078|213095936|0|-steps 50 -width 8 -type stencil_1d -kernel load_imbalance -iter 4096 -imbalance 1.0"
  "21|24|20|0|3932160|-steps 6 -width 4 -type no_comm -kernel memory_bound -scratch 65536 -sample 16 -iter 40"
  "22|1000|2620|7436800|0|-steps 100 -width 8 -type stencil_1d -kernel compute_bound -iter 64 -and -steps 50 -width 4 -type fft -kernel compute_bound -iter 32"
  "23|320|783|0|0|-steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5 -and -steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5"
  "24|180|338|0|0|-steps 10 -width 8 -type tree -and -type dom -steps 11 -width 6 -and -type spread -width 9 -radix 3 -period 3 -steps 9"
  # gpu_compute_bound on CPUs: 2 * 4 chains * 100 lanes * 5 iterations per task.
  "gpu1|12|21|48000|0|-steps 4 -width 3 -type stencil_1d -kernel gpu_compute_bound -gpu-lanes 100 -iter 5"
  "25|64000|160425|8194661632|0|-steps 1000 -width 64 -type random_nearest -radix 7 -fraction 0.25 -period 5 -kernel load_imbalance -iter 1000 -imbalance 0.3"
)

foreach(_row IN LISTS _tb_vectors)
  string(REPLACE "|" ";" _fields "${_row}")
  list(GET _fields 0 _number)
  list(GET _fields 1 _tasks)
  list(GET _fields 2 _deps)
  list(GET _fields 3 _flops)
  list(GET _fields 4 _bytes)
  list(LENGTH _fields _nfields)
  set(_flags "")
  if(_nfields GREATER 5)
    list(GET _fields 5 _flags)
  endif()
  separate_arguments(_flag_list UNIX_COMMAND "${_flags}")
  set(_checks --status 0 --stderr-empty
      --stdout-line "Total Tasks ${_tasks}"
      --stdout-line "Total Dependencies ${_deps}"
      --stdout-line "Total FLOPs ${_flops}"
      --stdout-line "Total Bytes ${_bytes}"
      --stdout-regex "^Elapsed Time [0-9]\\.[0-9]{6}e[-+][0-9]{2,} seconds$")
  foreach(_system IN LISTS _tb_systems)
    if(_system STREQUAL "omp")
      set(_variants "1;2")
    else()
      set(_variants "0")
    endif()
    foreach(_workers IN LISTS _variants)
      set(_extra "")
      set(_suffix "${_system}")
      if(NOT _workers EQUAL 0)
        set(_extra -worker ${_workers})
        set(_suffix "${_system}.worker${_workers}")
      endif()
      set(_test taskbench_cli.vector${_number}.${_suffix})
      add_test(NAME ${_test}
               COMMAND ${_tb_driver} --timeout 18 ${_checks} --
                       $<TARGET_FILE:taskbench-${_system}> ${_flag_list} ${_extra})
      set_tests_properties(${_test} PROPERTIES TIMEOUT 20 LABELS "taskbench;taskbench_cli")
    endforeach()
  endforeach()
endforeach()

# taskbench-peak must run its kernel: a result nobody reads lets the compiler
# drop the kernel (under link-time optimisation it did, and the METG tool's
# calibrated peak became 2e18 FLOP/s). So the rate it reports must be one two
# threads can reach: below 10^13 FLOP/s. A slow machine passes too.
if(TARGET taskbench-peak)
  foreach(_kernel IN ITEMS compute_bound compute_bound2)
    set(_test taskbench_cli.peak_runs_its_kernel.${_kernel})
    add_test(NAME ${_test}
             COMMAND ${_tb_driver} --timeout 18 --stdout-regex
                     "^Kernel ${_kernel}, .*: [0-9]\\.[0-9]+e\\+(0[0-9]|1[0-2]) FLOP/s in "
                     -- $<TARGET_FILE:taskbench-peak> -kernel ${_kernel} -iter 65536 -threads 2)
    set_tests_properties(${_test} PROPERTIES TIMEOUT 20 LABELS "taskbench;taskbench_cli")
  endforeach()
endif()
