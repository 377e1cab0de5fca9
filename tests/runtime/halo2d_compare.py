#!/usr/bin/env python3
"""Runs halo2d-mpi and halo2d-task-comm at the same size and compares checksums.

Usage: halo2d_compare.py --mpiexec MPIEXEC --ranks N --threads T
                         --mpi-program PATH --task-program PATH [--timeout S]
                         [-- PROGRAM ARGS...]

Both programs get the same arguments (after "--") and run under
`MPIEXEC -n N`; the TaskGrid one with TASKGRID_MODE=spmd and
TASKGRID_THREADS=T. Each must exit 0 within the timeout and print exactly
one line "checksum <value>"; the two lines must be identical, character for
character. Both outputs are echoed for the test log. Exits 0 on agreement.
"""
import argparse
import os
import signal
import subprocess
import sys


def run(command, env, timeout):
    """Runs a command in its own process group; returns (status, output)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        output, _ = process.communicate()
        return None, output.decode(errors="replace")
    return process.returncode, output.decode(errors="replace")


def checksum_lines(text):
    return [line.strip() for line in text.splitlines() if line.startswith("checksum ")]


def main() -> int:
    argv = sys.argv[1:]
    program_args = []
    if "--" in argv:
        split = argv.index("--")
        argv, program_args = argv[:split], argv[split + 1:]
    parser = argparse.ArgumentParser(prog="halo2d_compare.py")
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--mpi-program", required=True)
    parser.add_argument("--task-program", required=True)
    parser.add_argument("--timeout", type=float, default=30.0)
    options = parser.parse_args(argv)

    results = {}
    for name, program, extra_env in (
            ("mpi", options.mpi_program, {}),
            ("task_comm", options.task_program,
             {"TASKGRID_MODE": "spmd", "TASKGRID_THREADS": str(options.threads)})):
        env = dict(os.environ)
        env.update(extra_env)
        command = [options.mpiexec, "-n", str(options.ranks), program] + program_args
        status, output = run(command, env, options.timeout)
        print(f"--- {name}: {' '.join(command)}"
              + "".join(f" [{k}={v}]" for k, v in extra_env.items()))
        sys.stdout.write(output if output.endswith("\n") or not output else output + "\n")
        if status is None:
            print(f"halo2d_compare: FAILED: {name} hung (killed after {options.timeout:g} s)")
            return 1
        if status != 0:
            print(f"halo2d_compare: FAILED: {name} exited with status {status}")
            return 1
        lines = checksum_lines(output)
        if len(lines) != 1:
            print(f"halo2d_compare: FAILED: {name} printed {len(lines)} checksum lines, expected 1")
            return 1
        results[name] = lines[0]

    if results["mpi"] != results["task_comm"]:
        print(f"halo2d_compare: FAILED: checksums differ: mpi '{results['mpi']}', "
              f"task_comm '{results['task_comm']}'")
        return 1
    print(f"halo2d_compare: ok: both print '{results['mpi']}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
