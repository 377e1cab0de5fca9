#!/usr/bin/env python3
"""Runs a command that must fail, and checks how it fails.

Usage: expect_failure.py [options] -- COMMAND [ARGS...]

  --regex RE     stdout+stderr must match RE (re.search, DOTALL; repeatable,
                 every one must match)
  --status N     the exit status must be exactly N (default: any non-zero;
                 --status 0 checks the output of a run that must succeed)
  --timeout S    seconds before the command counts as hung (default 30)

Passes (exit 0) only when the command ended on its own within the timeout,
with a non-zero status (or exactly --status), and every regex matched;
--regex-absent RE fails it when RE matches. A
hang is a failure: the whole process group (mpiexec and its ranks) is killed.
The command's output is echoed either way, for the test log.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time


def main() -> int:
    if "--" not in sys.argv:
        print("expect_failure.py: missing '--' before the command", file=sys.stderr)
        return 2
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser(prog="expect_failure.py")
    parser.add_argument("--regex", action="append", default=[])
    parser.add_argument("--regex-absent", action="append", default=[])
    parser.add_argument("--status", type=int)
    parser.add_argument("--timeout", type=float, default=30.0)
    options = parser.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    if not command:
        print("expect_failure.py: empty command", file=sys.stderr)
        return 2

    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    timed_out = False
    try:
        output, _ = process.communicate(timeout=options.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        output, _ = process.communicate()
    elapsed = time.monotonic() - start
    text = output.decode(errors="replace")
    sys.stdout.write(text)
    if text and not text.endswith("\n"):
        sys.stdout.write("\n")

    problems = []
    if timed_out:
        problems.append(f"hung: still running after {options.timeout:g} s (killed)")
    else:
        status = process.returncode
        if options.status is not None and status != options.status:
            problems.append(f"exit status {status}, expected {options.status}")
        elif options.status is None and status == 0:
            problems.append("exit status 0, expected a failure")
    for pattern in options.regex:
        if not re.search(pattern, text, re.DOTALL):
            problems.append(f"output does not match {pattern!r}")
    for pattern in options.regex_absent:
        if re.search(pattern, text, re.DOTALL):
            problems.append(f"output matches {pattern!r}, which it must not")

    summary = f"expect_failure: status {process.returncode}, {elapsed:.1f} s"
    if problems:
        print(f"{summary}: FAILED: " + "; ".join(problems))
        return 1
    print(f"{summary}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
