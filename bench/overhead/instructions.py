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
alone). Build without -march=native first (valgrind stops on AVX-512):

    cmake -S . -B build-valgrind -DTASKGRID_NATIVE=OFF -DTASKGRID_BUILD_TESTS=OFF \\
      -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich \\
      -DMPIEXEC_EXECUTABLE=$(command -v mpiexec.mpich)
    cmake --build build-valgrind --target taskbench-serial taskbench-taskgrid taskbench-taskgrid_spmd
    bench/overhead/instructions.py --build-dir build-valgrind
"""
import argparse
import glob
import os
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


def instructions(build_dir, system, steps, width, mpiexec, keep_dir):
    binary, extra_env = SYSTEMS[system]
    path = os.path.join(build_dir, "bin", binary)
    if not os.access(path, os.X_OK):
        sys.exit(f"instructions.py: {path} not found (build it first, see --help)")
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)  # --keep names a folder that may not exist yet
    out_dir = tempfile.mkdtemp(prefix=f"callgrind-{system}-{steps}-", dir=keep_dir)
    env = dict(os.environ, TASKGRID_THREADS="1", **extra_env)
    command = [mpiexec, "-n", "1", "valgrind", "--tool=callgrind",
               f"--callgrind-out-file={out_dir}/callgrind.out.%p",
               path, "-steps", str(steps), "-width", str(width), "-type", "stencil_1d",
               "-kernel", "empty"]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"instructions.py: {' '.join(command)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    total = 0
    files = glob.glob(os.path.join(out_dir, "callgrind.out.*"))
    for name in files:  # one per process; each holds all of its threads
        with open(name) as handle:
            for line in handle:
                if line.startswith("summary:") or line.startswith("totals:"):
                    total += int(line.split()[1])
                    break
    if not files or total == 0:
        sys.exit(f"instructions.py: no callgrind totals in {out_dir}")
    if not keep_dir:
        shutil.rmtree(out_dir)
    return total


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
        rows[system] = (counts[1] - counts[0]) / tasks
    print(f"stencil_1d, width {args.width}, kernel empty, steps {low} and {high}, "
          f"{PASSES} passes, one rank, TASKGRID_THREADS=1")
    print()
    print("| system | instructions per task | runtime instructions per task (minus serial) |")
    print("|---|---:|---:|")
    serial = rows.get("serial")
    for system, per_task in rows.items():
        extra = f"{per_task - serial:,.0f}" if serial is not None and system != "serial" else ""
        print(f"| {system} | {per_task:,.0f} | {extra} |")


if __name__ == "__main__":
    main()
