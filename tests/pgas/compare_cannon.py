#!/usr/bin/env python3
"""Runs the cannon programs with the same arguments and compares their reports.

Usage: compare_cannon.py --mpiexec MPIEXEC --ranks N [--timeout S]
                         --program PATH [--program PATH ...] -- ARGS...

Every program runs as `MPIEXEC -n N PATH ARGS...` (ARGS must contain
--check). Each must exit 0 within the timeout (seconds, default 60) and
report `ranks N`, one `checksum` line and `check ok`; with two programs or
more, their `checksum` lines (and `n` lines) must be identical, character
for character. Outputs are echoed for the test log. Exits 0 when all holds.
"""
import argparse
import os
import signal
import subprocess
import sys


def run_job(command, timeout):
    """Returns (exit status or None if it hung, combined output)."""
    job = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, start_new_session=True)
    try:
        raw, _ = job.communicate(timeout=timeout)
        status = job.returncode
    except subprocess.TimeoutExpired:
        # mpiexec and its ranks share the session: end them all.
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raw, _ = job.communicate()
        status = None
    return status, raw.decode(errors="replace")


def report_lines(output):
    """The report's `key value` lines, as (key, whole line) pairs."""
    pairs = []
    for line in output.splitlines():
        line = line.strip()
        if line:
            pairs.append((line.split(maxsplit=1)[0], line))
    return pairs


def check_one(program, options, program_args):
    """Runs one program; returns (its checksum and n lines, or None) and a problem."""
    command = [options.mpiexec, "-n", str(options.ranks), program] + program_args
    print("--- " + " ".join(command), flush=True)
    status, output = run_job(command, options.timeout)
    sys.stdout.write(output if output.endswith("\n") or not output else output + "\n")
    name = os.path.basename(program)
    if status is None:
        return None, f"{name} hung (killed after {options.timeout:g} s)"
    if status != 0:
        return None, f"{name} exited with status {status}"
    lines = report_lines(output)
    for wanted in (f"ranks {options.ranks}", "check ok"):
        if wanted not in (whole for _, whole in lines):
            return None, f"{name} did not print '{wanted}'"
    checksums = [whole for key, whole in lines if key == "checksum"]
    sizes = [whole for key, whole in lines if key == "n"]
    if len(checksums) != 1 or len(sizes) != 1:
        return None, (f"{name} printed {len(checksums)} checksum and {len(sizes)} n lines, "
                      "expected one each")
    return (checksums[0], sizes[0]), None


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        print("compare_cannon.py: missing '--' before the program arguments", file=sys.stderr)
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="compare_cannon.py")
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--program", action="append", required=True)
    options = parser.parse_args(argv[:split])
    program_args = argv[split + 1:]
    if "--check" not in program_args:
        print("compare_cannon.py: the program arguments must contain --check", file=sys.stderr)
        return 2

    reports = {}
    for program in options.program:
        report, problem = check_one(program, options, program_args)
        if problem:
            print(f"compare_cannon: FAILED: {problem}")
            return 1
        reports[os.path.basename(program)] = report

    if len(set(reports.values())) != 1:
        listing = "; ".join(f"{name}: '{checksum}' ({size})"
                            for name, (checksum, size) in reports.items())
        print(f"compare_cannon: FAILED: the reports differ: {listing}")
        return 1
    checksum, size = next(iter(reports.values()))
    print(f"compare_cannon: ok: {', '.join(reports)} checked, all print '{checksum}' ({size})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
