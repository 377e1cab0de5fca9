#!/usr/bin/env python3
"""Runs the three minimod programs with the same arguments and compares them.

Usage: compare_minimod.py --mpiexec MPIEXEC [--numproc-flag=-n] --ranks N
                          [--timeout S] --serial PATH --pgas PATH --mpi PATH
                          -- ARGS...

The serial program runs alone, the PGAS and MPI programs as
`MPIEXEC -n N PATH ARGS...`; each must exit 0 within the timeout (seconds,
default 60) and report `ranks` (1 or N), `grid`, `steps` and one `checksum`
line. The three `checksum` lines must be identical, character for
character, and the wave must have moved: the checksum must be non-zero and
differ from the serial program's with --steps 0 (ARGS must contain
--steps). Outputs are echoed for the test log. Exits 0 when all holds.
"""
import argparse
import os
import sys

# The job runner (a hang kills mpiexec and its ranks) is the cannon comparison's.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_cannon import run_job  # noqa: E402


def report(name, command, ranks, timeout):
    """Runs one program; returns ({key: whole line} of its report, or None) and a problem."""
    print("--- " + " ".join(command), flush=True)
    status, output = run_job(command, timeout)
    sys.stdout.write(output if output.endswith("\n") or not output else output + "\n")
    if status is None:
        return None, f"{name} hung (killed after {timeout:g} s)"
    if status != 0:
        return None, f"{name} exited with status {status}"
    found = {}
    for line in output.splitlines():
        words = line.split(maxsplit=1)
        if words:
            found.setdefault(words[0], []).append(line.strip())
    lines = {}
    for key in ("ranks", "grid", "steps", "checksum"):
        if len(found.get(key, [])) != 1:
            return None, f"{name} printed {len(found.get(key, []))} '{key}' lines, expected one"
        lines[key] = found[key][0]
    if lines["ranks"] != f"ranks {ranks}":
        return None, f"{name} printed '{lines['ranks']}', expected 'ranks {ranks}'"
    return lines, None


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        print("compare_minimod.py: missing '--' before the program arguments", file=sys.stderr)
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="compare_minimod.py")
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--numproc-flag", default="-n")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--serial", required=True)
    parser.add_argument("--pgas", required=True)
    parser.add_argument("--mpi", required=True)
    options = parser.parse_args(argv[:split])
    program_args = argv[split + 1:]
    if "--steps" not in program_args:
        print("compare_minimod.py: the program arguments must contain --steps", file=sys.stderr)
        return 2
    at_rest_args = list(program_args)
    at_rest_args[at_rest_args.index("--steps") + 1] = "0"

    launch = [options.mpiexec, options.numproc_flag, str(options.ranks)]
    runs = [  # (label, program, arguments, under mpiexec)
        ("at rest", options.serial, at_rest_args, False),
        ("serial", options.serial, program_args, False),
        ("pgas", options.pgas, program_args, True),
        ("mpi", options.mpi, program_args, True),
    ]
    reports = {}
    for label, program, args, launched in runs:
        command = (launch if launched else []) + [program] + args
        lines, problem = report(os.path.basename(program), command,
                                options.ranks if launched else 1, options.timeout)
        if problem:
            print(f"compare_minimod: FAILED: {problem}")
            return 1
        reports[label] = lines

    moving = {label: reports[label] for label in ("serial", "pgas", "mpi")}
    for key in ("grid", "steps", "checksum"):
        if len({lines[key] for lines in moving.values()}) != 1:
            listing = "; ".join(f"{label}: '{lines[key]}'" for label, lines in moving.items())
            print(f"compare_minimod: FAILED: the '{key}' lines differ: {listing}")
            return 1
    checksum = moving["serial"]["checksum"]
    if float(checksum.split()[1]) == 0.0 or checksum == reports["at rest"]["checksum"]:
        print(f"compare_minimod: FAILED: the wave did not move: '{checksum}' after the steps, "
              f"'{reports['at rest']['checksum']}' at rest")
        return 1
    print(f"compare_minimod: ok: serial, pgas and mpi at {options.ranks} ranks all print "
          f"'{checksum}' ('{reports['at rest']['checksum']}' at rest)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
