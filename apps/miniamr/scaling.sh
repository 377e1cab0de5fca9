#!/usr/bin/env bash
# miniAMR's two problems of seed 004 (one sphere entering from a corner;
# four spheres moving past each other), scaled to a 2-core machine, with the
# three programs interleaved: each round runs every configuration once, in
# turn, so that a drift of the machine touches all of them alike.
#
#   apps/miniamr/scaling.sh [--build-dir build] [--runs 3] [--mpiexec mpiexec.mpich]
#                           [--problems sphere,four] [--quick]
#
# Configurations (cores: 2 in each):
#   mpi        miniamr-mpi,      2 ranks x 1 core
#   taskgrid   miniamr-taskgrid, 2 ranks x 1 task thread
#   taskgrid1  miniamr-taskgrid, 1 rank x 2 task threads
#   mpi_omp    miniamr-mpi_omp,  1 rank x 2 OpenMP threads
# Prints, per problem and configuration, the median over the runs (and the
# range) of the time per timestep, the throughput (the FLOPs miniAMR counts
# / total time) and the share of refinement in the time, then each
# configuration's throughput relative to mpi's, median of the per-round
# ratios. --quick: a small deck, one run (for tests).
set -euo pipefail

build_dir=build
runs=3
mpiexec=mpiexec.mpich
problems=sphere,four
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --mpiexec) mpiexec=$2; shift 2 ;;
    --problems) problems=$2; shift 2 ;;
    --quick) quick=1; runs=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "scaling.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
for program in miniamr-mpi miniamr-mpi_omp miniamr-taskgrid; do
  if [ ! -x "$build_dir/bin/$program" ]; then
    echo "scaling.sh: $build_dir/bin/$program is missing: build it first" >&2
    exit 2
  fi
done

# The seed's set-up, scaled: 12^3 cells per block, 40 variables, one level
# per refinement step, refinement every 5 timesteps, one checksum per
# timestep (the seed: every 10 stages); 20 timesteps of 10 stages.
if [ "$quick" = 1 ]; then
  deck=(--nx 4 --ny 4 --nz 4 --num_vars 4 --num_refine 2 --block_change 1 --max_blocks 4000
        --num_tsteps 4 --stages_per_ts 4 --checksum_freq 4 --refine_freq 2)
else
  deck=(--nx 12 --ny 12 --nz 12 --num_vars 40 --num_refine 3 --block_change 1 --max_blocks 4000
        --num_tsteps 20 --stages_per_ts 10 --checksum_freq 10 --refine_freq 5)
fi
objects_sphere=(--num_objects 1 --object 2 0 -0.3 -0.3 -0.3 0.04 0.04 0.04 0.5 0.5 0.5 0 0 0)
# Four spheres of radius 0.1 crossing the cube's middle plane in pairs; two
# levels (three give 4x the blocks: past a minute per run here).
objects_four=(--num_refine 2 --num_objects 4
  --object 2 0 0.15 0.3 0.5 0.03 0 0 0.1 0.1 0.1 0 0 0
  --object 2 0 0.85 0.7 0.5 -0.03 0 0 0.1 0.1 0.1 0 0 0
  --object 2 0 0.3 0.85 0.5 0 -0.03 0 0.1 0.1 0.1 0 0 0
  --object 2 0 0.7 0.15 0.5 0 0.03 0 0.1 0.1 0.1 0 0 0)

configs=(mpi taskgrid taskgrid1 mpi_omp)
run_one() {  # config problem -> the Summary line
  local config=$1 problem=$2
  local -a objects
  if [ "$problem" = sphere ]; then objects=("${objects_sphere[@]}"); else objects=("${objects_four[@]}"); fi
  local two=(--npx 2 --init_x 1 --init_y 2 --init_z 2) one=(--init_x 2 --init_y 2 --init_z 2)
  case "$config" in
    mpi) OMP_NUM_THREADS=1 "$mpiexec" -n 2 "$build_dir/bin/miniamr-mpi" "${two[@]}" "${deck[@]}" "${objects[@]}" ;;
    taskgrid) TASKGRID_THREADS=1 "$mpiexec" -n 2 "$build_dir/bin/miniamr-taskgrid" "${two[@]}" "${deck[@]}" "${objects[@]}" ;;
    taskgrid1) TASKGRID_THREADS=2 "$mpiexec" -n 1 "$build_dir/bin/miniamr-taskgrid" "${one[@]}" "${deck[@]}" "${objects[@]}" ;;
    mpi_omp) OMP_NUM_THREADS=2 "$mpiexec" -n 1 "$build_dir/bin/miniamr-mpi_omp" "${one[@]}" "${deck[@]}" "${objects[@]}" ;;
  esac | grep '^Summary:'
}

results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "miniAMR scaling: $(nproc) cores, runs $runs, problems $problems, $(date -u +%FT%TZ)"
echo "deck: ${deck[*]}"
for round in $(seq 1 "$runs"); do
  for problem in ${problems//,/ }; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    for config in "${configs[@]}"; do
      line=$(run_one "$config" "$problem")
      echo "round $round problem $problem config $config load $load $line" | tee -a "$results"
    done
  done
done

python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    key = (f[3], f[5])  # problem, config
    fields = dict(zip(f[9::2], f[10::2]))  # after "Summary:": variant X ranks R ...
    ts = float(fields["ts"]); time = float(fields["time"]); refine = float(fields["refine"])
    rows.setdefault(key, []).append((int(f[1]), time / ts, float(fields["throughput"]), refine / time))
def med(values):
    return statistics.median(values), min(values), max(values)
print()
print("| problem | configuration | time/timestep s | throughput GFLOP/s | refinement share | vs mpi (per-round ratio) |")
print("|---|---|---|---|---|---|")
names = {"mpi": "miniamr-mpi 2x1", "taskgrid": "miniamr-taskgrid 2x1", "taskgrid1": "miniamr-taskgrid 1x2", "mpi_omp": "miniamr-mpi_omp 1x2"}
for (problem, config), values in sorted(rows.items(), key=lambda kv: (kv[0][0], list(names).index(kv[0][1]))):
    t = med([v[1] for v in values]); g = med([v[2] / 1e9 for v in values]); r = med([v[3] for v in values])
    base = {v[0]: v[2] for v in rows[(problem, "mpi")]}
    ratio = med([v[2] / base[v[0]] for v in values if v[0] in base])
    print(f"| {problem} | {names[config]} | {t[0]:.4f} [{t[1]:.4f}-{t[2]:.4f}] | {g[0]:.3f} [{g[1]:.3f}-{g[2]:.3f}] "
          f"| {100*r[0]:.1f}% | {ratio[0]:.2f} [{ratio[1]:.2f}-{ratio[2]:.2f}] |")
PY
