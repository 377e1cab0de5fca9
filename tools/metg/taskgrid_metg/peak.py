"""Peak throughput definitions that efficiency is measured against.

A peak is kept per core and per number of cores in use, because one busy core usually
runs faster than each of C busy cores (turbo, shared caches and FMA units):
  efficiency = work / elapsed / (peak_per_core[cores_used] x cores_used).
Normally every system uses all C cores and there is one value; serial adds a 1-core one.

  calibrated  taskbench-peak runs the kernel on each core count in use; best of a few
              repetitions. A fixed machine constant, like the published analysis
              (spec section 9).
  sweep       the best per-core rate observed in this sweep among runs on the same
              number of cores (any system).
  given       a node peak passed on the command line (--peak NUMBER), split evenly
              over the cores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .analysis import SizeSummary
from .runner import RunError, run_process

PEAK_NAMES = ("calibrated", "sweep", "given")

# Kernel whose throughput bounds the sweep's kernel. load_imbalance is compute_bound
# with varied iteration counts, so its peak is compute_bound's.
CALIBRATION_KERNELS = {
    "compute_bound": "compute_bound",
    "load_imbalance": "compute_bound",
    "compute_bound2": "compute_bound2",
}


@dataclass(frozen=True)
class Peak:
    name: str                        # one of PEAK_NAMES
    unit: str
    detail: str                      # how it was obtained, or why it is unavailable
    # cores in use -> peak rate per core; empty when the peak is unavailable
    per_core: dict[int, float] = field(default_factory=dict)
    # calibration: cores -> rate of the whole run, one per repetition
    samples: dict[int, list[float]] = field(default_factory=dict)

    @property
    def available(self) -> bool:
        return bool(self.per_core)


def unavailable(name: str, unit: str, reason: str) -> Peak:
    return Peak(name, unit, reason)


def calibration_kernel(kernels: list[str]) -> tuple[str | None, str]:
    """(kernel to calibrate, "") or (None, reason) for the kernels of a sweep's graphs."""
    distinct = sorted(set(kernels))
    if len(distinct) > 1:
        return None, f"graphs use different kernels ({', '.join(distinct)})"
    kernel = distinct[0]
    if kernel not in CALIBRATION_KERNELS:
        return None, f"no FLOP/s calibration for kernel {kernel}"
    return CALIBRATION_KERNELS[kernel], ""


def calibrate(binary: Path, kernel: str, iterations: int, core_counts: list[int], reps: int,
              workdir: Path, timeout: float | None,
              progress: Callable[[str], None]) -> Peak:
    """Run taskbench-peak `reps` times on each core count; the best run is the peak."""
    samples: dict[int, list[float]] = {}
    for threads in sorted(set(core_counts), reverse=True):
        samples[threads] = []
        for rep in range(1, reps + 1):
            json_path = Path(workdir) / f"peak-{threads}-{rep}.json"
            command = [str(binary), "-kernel", kernel, "-iter", str(iterations),
                       "-threads", str(threads), "-json", str(json_path)]
            done = run_process(command, {"OMP_NUM_THREADS": str(threads)}, timeout)
            if done.returncode != 0:
                raise RunError(f"calibration exited with status {done.returncode}", command,
                               done.stderr)
            try:
                rate = float(json.loads(json_path.read_text())["flops_per_second"])
            except (OSError, ValueError, KeyError, TypeError):
                raise RunError("calibration wrote no readable flops_per_second", command,
                               done.stderr) from None
            if rate <= 0:
                raise RunError(f"calibration reported {rate} FLOP/s", command, done.stderr)
            samples[threads].append(rate)
            progress(f"[peak {rep}/{reps}] {kernel} on {threads} threads: {rate:.4g} FLOP/s")
    return Peak("calibrated", "FLOP/s",
                f"taskbench-peak -kernel {kernel} -iter {iterations}, best of {reps}",
                {threads: max(rates) / threads for threads, rates in samples.items()}, samples)


def sweep_best(summaries: Iterable[SizeSummary], unit: str) -> Peak:
    best: dict[int, SizeSummary] = {}
    for summary in summaries:
        current = best.get(summary.cores_used)
        if current is None or summary.rate_per_core > current.rate_per_core:
            best[summary.cores_used] = summary
    where = "; ".join(f"{cores} cores: {summary.system} at iter 2^{summary.iter_exp}"
                      for cores, summary in sorted(best.items(), reverse=True))
    return Peak("sweep", unit, f"best per-core rate of the sweep ({where})",
                {cores: summary.rate_per_core for cores, summary in best.items()})


def given(node_peak: float, cores: int, core_counts: Iterable[int], unit: str) -> Peak:
    return Peak("given", unit, f"--peak {node_peak:g} {unit} for {cores} cores",
                {count: node_peak / cores for count in core_counts})
