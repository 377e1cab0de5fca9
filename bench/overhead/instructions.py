#!/usr/bin/env python3
"""Instructions per task of the Task Bench systems, counted by callgrind.

Wall-clock figures on a shared machine drift by 2x; instruction counts of the
same binary and input agree within 2% under any load. Method (README.md):
each system runs Task Bench `-type stencil_1d -width 4 -kernel empty` under
`valgrind --tool=callgrind` (one rank, TASKGRID_THREADS=1), once with
-steps S1 and once with -steps S2; start-up and shutdown cancel in the
difference, so

    instructions per task = (I(S2) - I(S1)) / ((S2 - S1) * width * passes)

(passes = 2: every system runs an untimed warm-up pass and a timed one). The
runtime's own cost is a system's figure minus serial's (the task contract
alone).

The count covers every thread, idle ones included, so it is split: callgrind
keeps one profile per thread, and the instructions spent inside the runtime's
idle waits (the transport seam's idle() and sleep_ns(), a condition wait) are
reported apart from the rest (the work), with how many idle waits a task
costs (an engine pass that found nothing precedes most of them: that pass is
counted in the work). A change of idle policy moves the idle column, a leaner
path the work column. Build without -march=native first (valgrind stops on AVX-512):

    cmake -S . -B build-valgrind -DTASKGRID_NATIVE=OFF -DTASKGRID_BUILD_TESTS=OFF \\
      -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich \\
      -DMPIEXEC_EXECUTABLE=$(command -v mpiexec.mpich)
    cmake --build build-valgrind --target taskbench-serial taskbench-taskgrid taskbench-taskgrid_spmd
    bench/overhead/instructions.py --build-dir build-valgrind
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SYSTEMS = {
    # name: (binary, environment)
    "serial": ("taskbench-serial", {}),
    "cluster": ("taskbench-taskgrid", {"TASKGRID_MODE": "cluster"}),
    "spmd": ("taskbench-taskgrid_spmd", {"TASKGRID_MODE": "spmd"}),
}
PASSES = 2
# Where a runtime thread waits for something to do, by callgrind's function
# names (none of them calls another, so their inclusive costs add up).
IDLE_WAITS = re.compile(r"Transport::idle\(|Transport::sleep_ns\(|comm::Condition::wait")


class Count:
    """Instructions of one run: in all, in idle waits, and the idle waits made."""

    def __init__(self, total=0, idle=0, idle_waits=0):
        self.total, self.idle, self.idle_waits = total, idle, idle_waits

    def __add__(self, other):
        return Count(self.total + other.total, self.idle + other.idle,
                     self.idle_waits + other.idle_waits)

    def __sub__(self, other):
        return Count(self.total - other.total, self.idle - other.idle,
                     self.idle_waits - other.idle_waits)


def thread_count(profile):
    """A Count of one thread's callgrind file."""
    listing = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=caller",
                              "--threshold=100", profile],
                             capture_output=True, text=True, check=True).stdout
    count = count_idle_waits(listing)
    with open(profile) as handle:
        for line in handle:
            if line.startswith("summary:") or line.startswith("totals:"):
                count.total = int(line.split()[1])
                break
    return count


def count_idle_waits(listing):
    """The idle part of a `callgrind_annotate --inclusive=yes --tree=caller`
    listing: each function is a block of its callers ("<", with call counts),
    then the function itself ("*", its inclusive cost)."""
    count = Count()
    callers = 0
    for line in listing.splitlines():
        caller = re.match(r"\s*[\d,]+ \([^)]*\)\s+<\s.*\(([\d,]+)x\)", line)
        if caller:
            callers += int(caller.group(1).replace(",", ""))
            continue
        itself = re.match(r"\s*([\d,]+) \([^)]*\)\s+\*\s+(.*)", line)
        if itself and IDLE_WAITS.search(itself.group(2)):
            count.idle += int(itself.group(1).replace(",", ""))
            count.idle_waits += callers
        if itself or not line.strip():
            callers = 0
    return count


def instructions(build_dir, system, steps, width, mpiexec, keep_dir):
    binary, extra_env = SYSTEMS[system]
    path = os.path.join(build_dir, "bin", binary)
    if not os.access(path, os.X_OK):
        sys.exit(f"instructions.py: {path} not found (build it first, see --help)")
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)  # --keep names a folder that may not exist yet
    out_dir = tempfile.mkdtemp(prefix=f"callgrind-{system}-{steps}-", dir=keep_dir)
    env = dict(os.environ, TASKGRID_THREADS="1", **extra_env)
    command = [mpiexec, "-n", "1", "valgrind", "--tool=callgrind", "--separate-threads=yes",
               f"--callgrind-out-file={out_dir}/callgrind.out.%p",
               path, "-steps", str(steps), "-width", str(width), "-type", "stencil_1d",
               "-kernel", "empty"]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"instructions.py: {' '.join(command)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    count = Count()
    files = glob.glob(os.path.join(out_dir, "callgrind.out.*-*"))  # one per thread
    for name in files:
        count = count + thread_count(name)
    if not files or count.total == 0:
        sys.exit(f"instructions.py: no callgrind totals in {out_dir}")
    if not keep_dir:
        shutil.rmtree(out_dir)
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default="build-valgrind")
    parser.add_argument("--systems", default="serial,cluster,spmd")
    parser.add_argument("--steps", default="1000,3000", help="the two step counts S1,S2")
    parser.add_argument("--width", type=int, default=4)
    parser.add_argument("--mpiexec", default="mpiexec.mpich")
    parser.add_argument("--keep", metavar="DIR", help="keep the callgrind files under DIR")
    args = parser.parse_args()
    low, high = (int(s) for s in args.steps.split(","))
    if high <= low:
        sys.exit("instructions.py: --steps S1,S2 needs S2 > S1")
    tasks = (high - low) * args.width * PASSES
    rows = {}
    for system in args.systems.split(","):
        if system not in SYSTEMS:
            sys.exit(f"instructions.py: unknown system '{system}' (one of {', '.join(SYSTEMS)})")
        counts = [instructions(args.build_dir, system, s, args.width, args.mpiexec, args.keep)
                  for s in (low, high)]
        rows[system] = counts[1] - counts[0]
    print(f"stencil_1d, width {args.width}, kernel empty, steps {low} and {high}, "
          f"{PASSES} passes, one rank, TASKGRID_THREADS=1")
    print()
    print("| system | instructions per task | runtime instructions per task (minus serial) "
          "| of which work | of which in idle waits | idle waits per task |")
    print("|---|---:|---:|---:|---:|---:|")
    serial = rows.get("serial")
    for system, count in rows.items():
        per_task = count.total / tasks
        idle = count.idle / tasks
        extra = work = ""
        if serial is not None and system != "serial":
            extra = f"{per_task - serial.total / tasks:,.0f}"
            work = f"{per_task - idle - serial.total / tasks:,.0f}"
        print(f"| {system} | {per_task:,.0f} | {extra} | {work} | {idle:,.1f} "
              f"| {count.idle_waits / tasks:.3f} |")


if __name__ == "__main__":
    main()
