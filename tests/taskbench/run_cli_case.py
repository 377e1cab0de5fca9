#!/usr/bin/env python3
"""Runs one Task Bench command and checks its exit status and output.

Usage: run_cli_case.py [options] -- COMMAND [ARGS...]

  --status N            expected exit status (default 0)
  --stderr-exact TEXT   stderr must equal TEXT plus one newline
  --stderr-regex RE     stderr must match RE (re.search, DOTALL)
  --stderr-empty        stderr must be empty
  --stdout-empty        stdout must be empty
  --stdout-regex RE     stdout must match RE (re.search, MULTILINE)
  --stdout-line LINE    stdout must contain LINE as a whole line (repeatable)
  --timeout S           kill the command after S seconds (default 20)
"""
import argparse
import re
import subprocess
import sys


def main() -> int:
    if "--" not in sys.argv:
        print("run_cli_case.py: missing '--' before the command", file=sys.stderr)
        return 2
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--stderr-exact")
    parser.add_argument("--stderr-regex")
    parser.add_argument("--stderr-empty", action="store_true")
    parser.add_argument("--stdout-empty", action="store_true")
    parser.add_argument("--stdout-regex")
    parser.add_argument("--stdout-line", action="append", default=[])
    parser.add_argument("--timeout", type=float, default=20.0)
    options = parser.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    if not command:
        print("run_cli_case.py: empty command", file=sys.stderr)
        return 2

    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=options.timeout)
    except subprocess.TimeoutExpired:
        print(f"FAIL: timed out after {options.timeout} s: {command}")
        return 1
    failures = []
    if done.returncode != options.status:
        failures.append(f"exit status {done.returncode}, expected {options.status}")
    if options.stderr_exact is not None and done.stderr != options.stderr_exact + "\n":
        failures.append(f"stderr {done.stderr!r}, expected {options.stderr_exact + chr(10)!r}")
    if options.stderr_regex is not None and not re.search(options.stderr_regex, done.stderr,
                                                          re.DOTALL):
        failures.append(f"stderr {done.stderr!r} does not match {options.stderr_regex!r}")
    if options.stderr_empty and done.stderr != "":
        failures.append(f"stderr not empty: {done.stderr[:2000]!r}")
    if options.stdout_empty and done.stdout != "":
        failures.append(f"stdout not empty: {done.stdout[:2000]!r}")
    if options.stdout_regex is not None and not re.search(options.stdout_regex, done.stdout,
                                                          re.MULTILINE):
        failures.append(f"stdout does not match {options.stdout_regex!r}")
    lines = done.stdout.splitlines()
    for line in options.stdout_line:
        if line not in lines:
            failures.append(f"stdout lacks the line {line!r}")

    print("command:", " ".join(command))
    if failures:
        for failure in failures:
            print("FAIL:", failure)
        print("--- stdout ---")
        print(done.stdout[-6000:])
        print("--- stderr ---")
        print(done.stderr[-6000:])
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
