#!/usr/bin/env python3
"""Context switches per task of the TaskGrid systems, in steady state.

Each rank runs under `/usr/bin/time`, which reports the process's voluntary
and involuntary context switches (getrusage: every thread of the process).
Like instructions.py, each system runs twice (-steps S1 and S2) and the
difference is divided by the tasks in between, so start-up and shutdown
cancel:

    per task = (C(S2) - C(S1)) / ((S2 - S1) * width * passes)

summed over the ranks (width = ranks x points per rank). The figure counts
what the runtime makes the OS do: a thread that sleeps and is woken
(voluntary), or one preempted or yielding while another wants its core
(involuntary). Both depend on load, so run it on a quiet machine and read
the load average it prints.

    bench/overhead/context_switches.py --build-dir build --ranks 2
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SYSTEMS = {
    "cluster": ("taskbench-taskgrid", {"TASKGRID_MODE": "cluster"}),
    "spmd": ("taskbench-taskgrid_spmd", {"TASKGRID_MODE": "spmd"}),
    "mpi": ("taskbench-mpi", {}),
}
PASSES = 2
LINE = re.compile(r"^ctxsw (\d+) (\d+)$")


def switches(args, system, steps):
    binary, extra_env = SYSTEMS[system]
    path = os.path.join(args.build_dir, "bin", binary)
    if not os.access(path, os.X_OK):
        sys.exit(f"context_switches.py: {path} not found (build it first)")
    env = dict(os.environ, **extra_env)
    width = args.ranks * args.points_per_rank
    # Each rank appends its line to one file (stderr would interleave them).
    report = tempfile.NamedTemporaryFile(prefix="ctxsw-", delete=False)
    report.close()
    command = [args.mpiexec, "-n", str(args.ranks), "/usr/bin/time", "-a", "-o", report.name,
               "-f", "ctxsw %w %c", path,
               "-steps", str(steps), "-width", str(width), "-type", "stencil_1d",
               "-kernel", args.kernel, "-iter", str(args.iterations)]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"context_switches.py: {' '.join(command)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    voluntary = involuntary = 0
    found = 0
    with open(report.name) as handle:
        lines = handle.read().splitlines()
    os.unlink(report.name)
    for line in lines:
        match = LINE.match(line.strip())
        if match:
            voluntary += int(match.group(1))
            involuntary += int(match.group(2))
            found += 1
    if found != args.ranks:
        sys.exit(f"context_switches.py: expected {args.ranks} reports, found {found}")
    return voluntary, involuntary, width


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--systems", default="mpi,cluster,spmd")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--points-per-rank", type=int, default=1)
    parser.add_argument("--steps", default="1000,5000")
    parser.add_argument("--kernel", default="compute_bound")
    parser.add_argument("--iterations", type=int, default=4096)
    parser.add_argument("--mpiexec", default="mpiexec.mpich")
    args = parser.parse_args()
    low, high = (int(s) for s in args.steps.split(","))
    print(f"stencil_1d, {args.ranks} ranks x {args.points_per_rank} points, kernel "
          f"{args.kernel} -iter {args.iterations}, steps {low} and {high}; "
          f"load average {os.getloadavg()[0]:.2f}")
    print()
    print("| system | voluntary per task | involuntary per task |")
    print("|---|---:|---:|")
    for system in args.systems.split(","):
        v1, i1, width = switches(args, system, low)
        v2, i2, _ = switches(args, system, high)
        tasks = (high - low) * width * PASSES
        print(f"| {system} | {(v2 - v1) / tasks:.3f} | {(i2 - i1) / tasks:.3f} |")


if __name__ == "__main__":
    main()
