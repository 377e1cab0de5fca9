"""Granularity, efficiency and METG (spec section 9).

`compute_metg` is independent of units: it returns a granularity in whatever unit the
points carry. The sweep code uses seconds and converts to microseconds for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

INTERPOLATIONS = ("linear", "log")

# Efficiencies above this are taken as a timing error, as in the published scripts.
MAX_PLAUSIBLE_EFFICIENCY = 1.5

# What "work" means for the efficiency of a sweep, and the unit of its rate.
METRIC_UNITS = {"flops": "FLOP/s", "bytes": "B/s", "task_iterations": "task-iterations/s"}


@dataclass(frozen=True)
class Point:
    """One problem size as seen by compute_metg."""
    iterations: int       # -iter; orders the sweep (largest problem first)
    granularity: float    # average task duration
    efficiency: float     # fraction of peak (0.5 = 50%)
    reps: int = 1         # repetitions behind the mean


@dataclass(frozen=True)
class MetgResult:
    value: float | None              # METG, in the points' granularity unit; None = refused
    reason: str | None = None        # why it was refused
    method: str | None = None        # "interpolated" or "chosen_point"
    chosen: Point | None = None      # smallest-granularity point at or above the threshold
    next: Point | None = None        # the problem size after it

    @property
    def ok(self) -> bool:
        return self.value is not None


def interpolate(upper: Point, lower: Point, threshold: float, interp: str) -> float:
    """Granularity at which the segment from `upper` (efficiency >= threshold) to `lower`
    (efficiency < threshold) reaches the threshold.

    linear: granularity linear in efficiency (spec section 9).
    log:    log(granularity) linear in efficiency; never larger than linear.
    """
    fraction = (threshold - upper.efficiency) / (lower.efficiency - upper.efficiency)
    if interp == "linear":
        return upper.granularity + fraction * (lower.granularity - upper.granularity)
    if interp == "log":
        return upper.granularity * (lower.granularity / upper.granularity) ** fraction
    raise ValueError(f"unknown interpolation '{interp}' (use one of {', '.join(INTERPOLATIONS)})")


def compute_metg(points: Iterable[Point], threshold: float = 0.5,
                 interp: str = "linear") -> MetgResult:
    """METG(threshold) of one system's sweep, or a refusal with its reason."""
    if interp not in INTERPOLATIONS:
        raise ValueError(f"unknown interpolation '{interp}' (use one of {', '.join(INTERPOLATIONS)})")
    ordered = sorted(points, key=lambda point: -point.iterations)
    if not ordered:
        return MetgResult(None, "no measurements")
    percent = f"{threshold:.0%}"

    highest = max(ordered, key=lambda point: point.efficiency)
    if highest.efficiency > MAX_PLAUSIBLE_EFFICIENCY:
        return MetgResult(None, f"efficiency {highest.efficiency:.0%} > "
                                f"{MAX_PLAUSIBLE_EFFICIENCY:.0%} at iter {highest.iterations}: "
                                "timing error or peak too low")
    above = [index for index, point in enumerate(ordered) if point.efficiency >= threshold]
    if not above:
        return MetgResult(None, f"no point reaches {percent} efficiency")
    if len(above) == len(ordered):
        return MetgResult(None, f"no point below {percent} efficiency: sweep to smaller -iter")

    position = min(above, key=lambda index: ordered[index].granularity)
    chosen = ordered[position]
    if position + 1 == len(ordered):
        return MetgResult(None, f"truncated sweep: no problem size after iter {chosen.iterations}",
                          chosen=chosen)
    following = ordered[position + 1]
    if following.reps < chosen.reps:
        return MetgResult(None, f"truncated sweep: iter {following.iterations} has "
                                f"{following.reps} repetition(s), fewer than the {chosen.reps} "
                                f"of iter {chosen.iterations}", chosen=chosen, next=following)
    # Normally the next size has smaller tasks; if it does not (noise), there is nothing
    # to interpolate towards and the chosen point itself is the answer.
    if following.granularity < chosen.granularity:
        return MetgResult(interpolate(chosen, following, threshold, interp), method="interpolated",
                          chosen=chosen, next=following)
    return MetgResult(chosen.granularity, method="chosen_point", chosen=chosen, next=following)


@dataclass(frozen=True)
class SizeSummary:
    """All repetitions of one system at one -iter."""
    system: str
    iter_exp: int
    elapsed: tuple[float, ...]   # seconds, one per completed repetition
    total_tasks: int
    total_flops: int
    total_bytes: int
    cores_used: int
    metric: str                  # key of METRIC_UNITS

    @property
    def iterations(self) -> int:
        return 2 ** self.iter_exp

    @property
    def reps(self) -> int:
        return len(self.elapsed)

    @property
    def elapsed_mean(self) -> float:
        return sum(self.elapsed) / len(self.elapsed)

    @property
    def granularity(self) -> float:
        """Average task duration in seconds: elapsed x cores / tasks."""
        return self.elapsed_mean * self.cores_used / self.total_tasks

    @property
    def work(self) -> float:
        if self.metric == "flops":
            return self.total_flops
        if self.metric == "bytes":
            return self.total_bytes
        return self.total_tasks * self.iterations

    @property
    def rate_per_core(self) -> float:
        return self.work / self.elapsed_mean / self.cores_used

    def efficiency(self, peak_per_core: float) -> float:
        return self.rate_per_core / peak_per_core

    def point(self, peak_per_core: float) -> Point:
        return Point(self.iterations, self.granularity, self.efficiency(peak_per_core), self.reps)


def work_metric(totals: Iterable[tuple[int, int]]) -> str:
    """Metric for a sweep from its (total_flops, total_bytes) pairs: FLOPs when the kernel
    counts any, else bytes (memory_bound), else task-iterations (e.g. busy_wait)."""
    totals = list(totals)
    if any(flops > 0 for flops, _ in totals):
        return "flops"
    if any(nbytes > 0 for _, nbytes in totals):
        return "bytes"
    return "task_iterations"


def summarize(runs: Iterable[tuple[str, int, float, int, int, int]],
              cores_used: dict[str, int], metric: str) -> list[SizeSummary]:
    """Group (system, iter_exp, elapsed, tasks, flops, bytes) runs into one summary per
    system and size, in order of first appearance."""
    groups: dict[tuple[str, int], list] = {}
    for system, iter_exp, elapsed, tasks, flops, nbytes in runs:
        groups.setdefault((system, iter_exp), []).append((elapsed, tasks, flops, nbytes))
    summaries = []
    for (system, iter_exp), group in groups.items():
        _, tasks, flops, nbytes = group[0]  # totals are deterministic for a configuration
        summaries.append(SizeSummary(system, iter_exp, tuple(run[0] for run in group), tasks,
                                     flops, nbytes, cores_used[system], metric))
    return summaries


def metg_table(summaries: Sequence[SizeSummary], peaks: dict[str, dict[int, float]],
               threshold: float) -> dict[str, dict[str, dict[str, MetgResult]]]:
    """METG for every system x peak definition x interpolation: table[system][peak][interp].

    `peaks` maps a peak name to its per-core peak for each number of cores in use.
    """
    table: dict[str, dict[str, dict[str, MetgResult]]] = {}
    for system in dict.fromkeys(summary.system for summary in summaries):
        sizes = [summary for summary in summaries if summary.system == system]
        table[system] = {}
        for peak, per_core in peaks.items():
            points = [size.point(per_core[size.cores_used]) for size in sizes]
            table[system][peak] = {interp: compute_metg(points, threshold, interp)
                                   for interp in INTERPOLATIONS}
    return table
