#!/usr/bin/env python3
"""Runs one Task Bench command (usually under mpiexec) and checks its result.

    check_taskbench_run.py [--tasks N] [--deps N] [--flops N] [--bytes N]
                           [--status S] [--stdout-once TEXT] [--stderr-once TEXT]
                           [--stderr-never TEXT] [--min-flop-rate R]
                           [--vector NAME|TASKS|DEPS|FLOPS|BYTES|FLAGS ...]
                           -- COMMAND...

The report lines `Total Tasks`, `Total Dependencies`, `Total FLOPs` and
`Total Bytes` must equal the given values (spec section 10), the exit status
must be S (default 0), and each --stdout-once / --stderr-once TEXT (repeatable) must occur
exactly once in that stream (under MPI, usage errors and help come from rank 0
only), and each --stderr-never TEXT (repeatable) must not occur in stderr. --min-flop-rate R: the
reported `FLOP/s` must be at least R (only for simulated runs, whose time is deterministic:
speed on this machine is measured in benchmarks, never in tests). Exits 0 on success, 1 with
a reason otherwise.

--vector (repeatable) runs several spec vectors in one process: their graph
flags (space separated) are appended to COMMAND joined by -and, and the
totals expected are their sums (Task Bench reports the totals of all graphs),
so one launch of mpiexec checks them all. A batch that fails is run again one
vector at a time, to name the vectors that fail alone.
"""

import argparse
import re
import subprocess
import sys

TOTALS = {
    "tasks": "Total Tasks",
    "deps": "Total Dependencies",
    "flops": "Total FLOPs",
    "bytes": "Total Bytes",
}


def main() -> int:
    parser = argparse.ArgumentParser()
    for key in TOTALS:
        parser.add_argument(f"--{key}", type=int)
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--stdout-once", action="append")
    parser.add_argument("--stderr-once", action="append")
    parser.add_argument("--stderr-never", action="append")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--min-flop-rate", type=float)
    parser.add_argument("--vector", action="append", default=[],
                        help="NAME|TASKS|DEPS|FLOPS|BYTES|FLAGS, run with the others in one process")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    if args.vector:
        return check_vectors(args, command)
    return check(args, command)


def parse_vector(text):
    parts = text.split("|")
    if len(parts) != 6:
        raise SystemExit(f"error: --vector {text!r}: expected NAME|TASKS|DEPS|FLOPS|BYTES|FLAGS")
    name, *totals, flags = parts
    return name, dict(zip(TOTALS, (int(t) for t in totals))), flags.split()


def check_vectors(args, command):
    """The vectors joined by -and in one run; on failure, each alone to name the culprits."""
    vectors = [parse_vector(text) for text in args.vector]
    joined = list(command)
    for index, (_, _, flags) in enumerate(vectors):
        joined += (["-and"] if index else []) + flags
    for key in TOTALS:
        setattr(args, key, sum(totals[key] for _, totals, _ in vectors))
    names = " ".join(name for name, _, _ in vectors)
    print(f"vectors: {names}")
    if check(args, joined) == 0:
        return 0
    print("the batch failed; each vector alone:")
    failing = []
    for name, totals, flags in vectors:
        for key in TOTALS:
            setattr(args, key, totals[key])
        if check(args, list(command) + flags, quiet=True) != 0:
            failing.append(name)
    print(f"FAIL: vectors failing alone: {' '.join(failing) or 'none (only together)'}")
    return 1


def check(args, command, quiet=False):
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"FAIL: timed out after {args.timeout} s: {' '.join(command)}")
        return 1
    failures = []
    if run.returncode != args.status:
        failures.append(f"exit status {run.returncode}, expected {args.status}")
    for key, label in TOTALS.items():
        expected = getattr(args, key)
        if expected is None:
            continue
        found = re.findall(rf"^{label} (-?\d+)$", run.stdout, re.MULTILINE)
        if found != [str(expected)]:
            failures.append(f"'{label}': found {found or 'no line'}, expected [{expected}]")
    if any(getattr(args, key) is not None for key in TOTALS):
        if not re.search(r"^Elapsed Time \S+ seconds$", run.stdout, re.MULTILINE):
            failures.append("no 'Elapsed Time ... seconds' line")
    if args.min_flop_rate is not None:
        rate = re.findall(r"^FLOP/s (\S+)$", run.stdout, re.MULTILINE)
        if len(rate) != 1 or float(rate[0]) < args.min_flop_rate:
            failures.append(f"FLOP/s {rate or 'no line'}, expected at least {args.min_flop_rate:g}")
    for name, texts, stream in (("stdout", args.stdout_once, run.stdout),
                                ("stderr", args.stderr_once, run.stderr)):
        for text in texts or []:
            if stream.count(text) != 1:
                failures.append(f"{name} holds {text!r} {stream.count(text)} times, expected once")
    for text in args.stderr_never or []:
        if text in run.stderr:
            failures.append(f"stderr holds {text!r}, expected never")

    if failures:
        print(f"command: {' '.join(command)}")
        if not quiet:
            print(f"--- stdout ---\n{run.stdout}--- stderr ---\n{run.stderr}---")
        for failure in failures:
            print(f"FAIL: {failure}")
        return 1
    if not quiet:
        print(f"PASS: {' '.join(command)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
