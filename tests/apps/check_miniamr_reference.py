#!/usr/bin/env python3
"""Runs one miniAMR deck and checks its report lines against the reference's.

Usage: check_miniamr_reference.py --expected FILE --prefix TEXT [--prefix ...]
                                  [--timeout S] -- COMMAND [ARGS...]

The command (mpiexec and the program with the deck) must exit 0 within the
timeout (seconds, default 120; a hung run's process group is killed). Its
output lines that start with one of the prefixes, after stripping leading
spaces and collapsing runs of spaces to one, must equal the expected file's
non-empty lines (normalised the same way) exactly, in order. Exits 0 when
they do, 1 otherwise, 2 on a usage error.
"""
import argparse
import difflib
import sys

from compare_miniamr import run_job  # the same launch, timeout and kill


def normalise(line):
    return " ".join(line.split())


def main() -> int:
    if "--" not in sys.argv:
        print("check_miniamr_reference.py: missing '--' before the command", file=sys.stderr)
        return 2
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser(prog="check_miniamr_reference.py")
    parser.add_argument("--expected", required=True)
    parser.add_argument("--prefix", action="append", required=True)
    parser.add_argument("--timeout", type=float, default=120.0)
    options = parser.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    if not command:
        print("check_miniamr_reference.py: empty command", file=sys.stderr)
        return 2
    with open(options.expected, encoding="utf-8") as handle:
        expected = [normalise(line) for line in handle if line.strip()]
    if not expected:
        print(f"check_miniamr_reference.py: {options.expected} has no lines", file=sys.stderr)
        return 2
    prefixes = tuple(normalise(prefix) for prefix in options.prefix)

    print("--- " + " ".join(command), flush=True)
    status, text = run_job(command, None, options.timeout)
    if status is None:
        sys.stdout.write(text)
        print(f"check_miniamr_reference: FAILED: hung (killed after {options.timeout:g} s)")
        return 1
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    if status != 0:
        print(f"check_miniamr_reference: FAILED: exit status {status}")
        return 1

    got = [normalise(line) for line in text.splitlines() if normalise(line).startswith(prefixes)]
    if got != expected:
        print(f"=== the report lines differ from {options.expected} (expected first):")
        for line in difflib.unified_diff(expected, got, fromfile="reference", tofile="this program",
                                         lineterm="", n=3):
            print(line)
        print(f"check_miniamr_reference: FAILED: {len(got)} report lines, {len(expected)} expected, "
              "not equal")
        return 1
    print(f"check_miniamr_reference: ok: {len(got)} lines equal the reference's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
