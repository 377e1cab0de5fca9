#!/usr/bin/env python3
"""Runs one miniAMR deck in several configurations and compares their outputs.

Usage: compare_miniamr.py --mpiexec MPIEXEC [--numproc-flag=-n] [--timeout S]
                          --program NAME=PATH [--program ...]
                          --run "NAME RANKS [VAR=VALUE ...] [ARGS ...]" [--run ...]
                          -- DECK ARGS...

Each --run launches `MPIEXEC -n RANKS PATH DECK ARGS --print_checksums
--print_block_sums` with the VAR=VALUE settings added to its environment.
ARGS, after the deck (a flag given twice takes its last value), are the
run's own decomposition flags and options (--npx, --init_x, --send_faces,
...): the level-0 grid (npx*init_x, npy*init_y, npz*init_z) must be the same in
every run (checked here). Each run must exit 0 within the timeout (seconds
per run, default 120; a hung run's process group is killed) and print at
least one `checksum ` and one `block ` line. The lines starting with
`checksum `, `block `, `Number of blocks at level`, `Total number of blocks
at timestep`, `total blocks split` and `total blocks reformed`
(whitespace-normalised) must then be identical in every run, in order; the
first mismatch is shown as a diff against the first run. Exits 0 when all
holds, 1 otherwise, 2 on a usage error.
"""
import argparse
import difflib
import os
import re
import shlex
import signal
import subprocess
import sys
import time

COMPARED = re.compile(r"^(checksum |block |Number of blocks at level|Total number of blocks at timestep|"
                      r"total blocks split|total blocks reformed)")
ENV_SETTING = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
REQUIRED = ("checksum ", "block ")


def run_job(command, env, timeout):
    """Runs command in its own process group; returns (status or None when hung, output)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        return process.returncode, output.decode(errors="replace")
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        output, _ = process.communicate()
        return None, output.decode(errors="replace")


def level0_grid(args):
    """The level-0 grid in blocks (npx*init_x, npy*init_y, npz*init_z); the last value of a flag wins."""
    values = {flag: 1 for flag in ("--npx", "--npy", "--npz", "--init_x", "--init_y", "--init_z")}
    for n, arg in enumerate(args[:-1]):
        if arg in values:
            values[arg] = int(args[n + 1])
    return (values["--npx"] * values["--init_x"], values["--npy"] * values["--init_y"],
            values["--npz"] * values["--init_z"])


def compared_lines(output):
    lines = []
    for line in output.splitlines():
        normal = " ".join(line.split())
        if COMPARED.match(normal):
            lines.append(normal)
    return lines


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        print("compare_miniamr.py: missing '--' before the deck's arguments", file=sys.stderr)
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="compare_miniamr.py")
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--numproc-flag", default="-n")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--program", action="append", default=[], required=True)
    parser.add_argument("--run", action="append", default=[], required=True)
    options = parser.parse_args(argv[:split])
    deck = argv[split + 1:]

    programs = {}
    for spec in options.program:
        name, _, path = spec.partition("=")
        if not name or not path:
            print(f"compare_miniamr.py: --program {spec!r}: expected NAME=PATH", file=sys.stderr)
            return 2
        programs[name] = path

    runs = []  # (label, command, environment, level-0 grid)
    for number, spec in enumerate(options.run, start=1):
        words = shlex.split(spec)
        if len(words) < 2 or words[0] not in programs or not words[1].isdigit() or int(words[1]) < 1:
            print(f"compare_miniamr.py: --run {spec!r}: expected 'NAME RANKS [VAR=VALUE ...] [ARGS ...]' "
                  f"with NAME one of {sorted(programs)}", file=sys.stderr)
            return 2
        name, ranks, rest = words[0], int(words[1]), words[2:]
        env = dict(os.environ)
        settings = []
        while rest and ENV_SETTING.match(rest[0]):
            var, _, value = rest.pop(0).partition("=")
            env[var] = value
            settings.append(f"{var}={value}")
        args = deck + rest + ["--print_checksums", "--print_block_sums"]
        command = [options.mpiexec, options.numproc_flag, str(ranks), programs[name]] + args
        label = " ".join([f"run {number}: {name} np{ranks}"] + settings + rest)
        try:
            grid = level0_grid(args)
        except ValueError:
            print(f"compare_miniamr.py: run '{label}': a decomposition flag without an integer",
                  file=sys.stderr)
            return 2
        runs.append((label, command, env, grid, settings))
    if len(runs) < 2:
        print("compare_miniamr.py: at least two --run configurations are needed", file=sys.stderr)
        return 2
    grids = {grid for _, _, _, grid, _ in runs}
    if len(grids) != 1:
        for label, _, _, grid, _ in runs:
            print(f"compare_miniamr.py: run '{label}': level-0 grid {grid}", file=sys.stderr)
        print("compare_miniamr.py: the runs' level-0 grids differ: they cannot compare", file=sys.stderr)
        return 2

    problems = []
    results = []  # (label, compared lines)
    for label, command, _env, _grid, settings in runs:
        print(f"--- {label}\n--- " + " ".join(settings + [shlex.quote(word) for word in command]), flush=True)
        start = time.monotonic()
        status, output = run_job(command, _env, options.timeout)
        elapsed = time.monotonic() - start
        sys.stdout.write(output if output.endswith("\n") or not output else output + "\n")
        if status is None:
            problems.append(f"{label}: hung (killed after {options.timeout:g} s)")
            continue
        if status != 0:
            problems.append(f"{label}: exited with status {status}")
            continue
        lines = compared_lines(output)
        missing = [prefix.strip() for prefix in REQUIRED if not any(line.startswith(prefix) for line in lines)]
        if missing:
            problems.append(f"{label}: printed no '{', '.join(missing)}' line")
            continue
        print(f"--- {label}: {elapsed:.1f} s, {len(lines)} compared lines", flush=True)
        results.append((label, lines))

    shown = False
    if results:
        base_label, base = results[0]
        for label, lines in results[1:]:
            if lines == base:
                continue
            first = next((n for n, (a, b) in enumerate(zip(base, lines)) if a != b), min(len(base), len(lines)))
            problems.append(f"'{label}' differs from '{base_label}' from compared line {first + 1}")
            if shown:
                continue
            shown = True
            print(f"=== first mismatch: '{base_label}' against '{label}', compared line {first + 1} "
                  f"({len(base)} against {len(lines)} lines):")
            diff = difflib.unified_diff(base, lines, fromfile=base_label, tofile=label, lineterm="", n=2)
            for n, line in enumerate(diff):
                if n >= 60:
                    print("... (diff cut at 60 lines)")
                    break
                print(line)

    if problems:
        print("compare_miniamr: FAILED: " + "; ".join(problems))
        return 1
    print(f"compare_miniamr: ok: {len(results)} runs, {len(results[0][1])} identical lines each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
