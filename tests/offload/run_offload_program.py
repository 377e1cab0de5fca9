#!/usr/bin/env python3
"""Runs an unmodified OpenMP offload program with TaskGrid's plugin under
mpiexec and checks it against the same program run without it.

  run_offload_program.py --mpiexec M --plugin-dir D --ranks N PROGRAM [ARGS...]
      The reference run is one process with offloading disabled (host
      results); the plugin run is `M -n N env LD_LIBRARY_PATH=D PROGRAM` with
      offloading mandatory. Both must exit 0 with the same stdout, and the
      plugin's statistics must show N-1 devices and at least one kernel run.

  ... --server S
      The MPMD form: `M -n 1 env ... PROGRAM : -n N-1 S`, devices served by
      the device server S (taskgrid-offload-server).

  ... --expect-failure REGEX [--expect-failure REGEX ...] PROGRAM
      The plugin run must end (no hang) with a non-zero status and an output
      (stderr, then stdout) matching every REGEX.
"""
import argparse
import os
import re
import subprocess
import sys

STATS = re.compile(r"taskgrid offload: (\d+) devices: (\d+) kernels, (\d+) allocations")
BETWEEN = re.compile(r"(\d+) between devices")


def run(command, env, timeout):
    try:
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        sys.exit(f"FAIL: {' '.join(command)} did not finish in {timeout} s (a hang)\n"
                 f"stdout:\n{error.stdout}\nstderr:\n{error.stderr}")


def show(result):
    return f"exit status {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--plugin-dir", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--expect-failure", action="append", default=[])
    parser.add_argument("--server", help="the device server (MPMD form)")
    parser.add_argument("--expect-between-devices", action="store_true",
                        help="copies between devices must have gone device to device")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the plugin run")
    parser.add_argument("program")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = [options.program] + options.args

    base = dict(os.environ)
    base.pop("LD_LIBRARY_PATH", None)
    plugin_env = dict(base, LD_LIBRARY_PATH=options.plugin_dir, TASKGRID_OFFLOAD_STATS="1",
                      OMP_TARGET_OFFLOAD="MANDATORY")
    plugin_env.update(item.split("=", 1) for item in options.env)
    if options.server:
        launch = [options.mpiexec, "-n", "1"] + command + [":", "-n", str(options.ranks - 1),
                                                          options.server]
    else:
        launch = [options.mpiexec, "-n", str(options.ranks)] + command
    plugin_run = run(launch, plugin_env, options.timeout)

    if options.expect_failure:
        if plugin_run.returncode == 0:
            sys.exit("FAIL: the program was expected to fail and exited 0\n" + show(plugin_run))
        # The launcher reports on stdout, the runtime on stderr.
        output = plugin_run.stderr + plugin_run.stdout
        for pattern in options.expect_failure:
            if not re.search(pattern, output):
                sys.exit(f"FAIL: the output does not match {pattern!r}\n" + show(plugin_run))
        print(f"ok: failed as expected (status {plugin_run.returncode})")
        return

    reference = run(command, dict(base, OMP_TARGET_OFFLOAD="DISABLED"), options.timeout)
    if reference.returncode != 0:
        sys.exit("FAIL: the reference run (no offloading) failed\n" + show(reference))
    if plugin_run.returncode != 0:
        sys.exit("FAIL: the run with the plugin failed\n" + show(plugin_run))
    if plugin_run.stdout != reference.stdout:
        sys.exit("FAIL: the output differs from the reference run\n"
                 f"reference stdout:\n{reference.stdout}\nplugin run:\n{show(plugin_run)}")
    stats = STATS.search(plugin_run.stderr)
    if not stats:
        sys.exit("FAIL: no plugin statistics: the plugin was not used\n" + show(plugin_run))
    devices, kernels = int(stats.group(1)), int(stats.group(2))
    if devices != options.ranks - 1 or kernels == 0:
        sys.exit(f"FAIL: expected {options.ranks - 1} devices and some kernels, got "
                 f"{stats.group(0)}\n" + show(plugin_run))
    between = BETWEEN.search(plugin_run.stderr)
    if options.expect_between_devices and (not between or int(between.group(1)) == 0):
        sys.exit("FAIL: no copy went from device to device (data_exchange)\n" + show(plugin_run))
    print(f"ok: same output as the reference; {stats.group(0)}")


if __name__ == "__main__":
    main()
