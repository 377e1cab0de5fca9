"""The interleaved sweep over -iter = 2^max_exp ... 2^min_exp."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .flags import with_iterations
from .runner import Report, RunError, run_benchmark
from .systems import Launch

MAX_DEFAULT_REPS = 5


def default_reps(iter_exp: int, max_exp: int) -> int:
    """Spec section 9: problem size s (s = 0 is the largest) runs min(s + 1, 5) times."""
    return min(max_exp - iter_exp + 1, MAX_DEFAULT_REPS)


@dataclass(frozen=True)
class PlannedRun:
    index: int       # 1-based position in the sweep
    system: str
    iter_exp: int
    rep: int         # 1-based
    reps: int        # repetitions planned for this problem size

    @property
    def iterations(self) -> int:
        return 2 ** self.iter_exp


def plan_sweep(systems: list[str], min_exp: int, max_exp: int,
               reps: int | None = None) -> list[PlannedRun]:
    """Largest problem first; within a size, round-robin over systems per repetition
    (A B C A B C ...) so that drifting machine load hits every system alike."""
    plan: list[PlannedRun] = []
    for iter_exp in range(max_exp, min_exp - 1, -1):
        size_reps = reps if reps is not None else default_reps(iter_exp, max_exp)
        for rep in range(1, size_reps + 1):
            for system in systems:
                plan.append(PlannedRun(len(plan) + 1, system, iter_exp, rep, size_reps))
    return plan


@dataclass(frozen=True)
class RunRecord:
    planned: PlannedRun
    command: list[str]
    report: Report
    wall_seconds: float   # launcher start to exit, as seen by this tool


class SweepAborted(Exception):
    """The sweep stopped early; `records` holds the runs completed before."""

    def __init__(self, reason: str, records: list[RunRecord]):
        super().__init__(reason)
        self.reason = reason
        self.records = records


def fit_run_time(samples: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """(a, b) of wall = a + b x iterations, least squares over (iterations, seconds).

    Both terms are kept >= 0: a is the launch and setup cost that dominates small sizes,
    b the work that dominates large ones. With one size only, the two cannot be told
    apart and the time is taken as proportional to the work (a = 0)."""
    count = len(samples)
    mean_n = sum(n for n, _ in samples) / count
    mean_t = sum(t for _, t in samples) / count
    spread = sum((n - mean_n) ** 2 for n, _ in samples)
    if spread > 0:
        slope = sum((n - mean_n) * (t - mean_t) for n, t in samples) / spread
        intercept = mean_t - slope * mean_n
        if slope >= 0 and intercept >= 0:
            return intercept, slope
        if slope < 0:  # noise swamps the work term: a constant cost per run
            return mean_t, 0.0
    # Through the origin: least squares of t = b x n.
    return 0.0, sum(n * t for n, t in samples) / sum(n * n for n, _ in samples)


def estimate_remaining(done: Sequence[tuple[str, int, float]],
                       left: Sequence[tuple[str, int]]) -> float | None:
    """Seconds that the runs `left` (system, iterations) should take, judged from the runs
    `done` (system, iterations, wall seconds); None before any run is done.

    Sizes halve at every step of the sweep, so a mean over the runs so far (the largest)
    would overestimate badly: each system's time is fitted as launch cost + work x
    iterations instead. A system with no run done yet borrows the fit of all systems."""
    if not done:
        return None
    by_system: dict[str, list[tuple[int, float]]] = {}
    for system, iterations, seconds in done:
        by_system.setdefault(system, []).append((iterations, seconds))
    fits = {system: fit_run_time(samples) for system, samples in by_system.items()}
    pooled = fit_run_time([(iterations, seconds) for _, iterations, seconds in done])
    total = 0.0
    for system, iterations in left:
        intercept, slope = fits.get(system, pooled)
        total += intercept + slope * iterations
    return total


def format_duration(seconds: float) -> str:
    """Short human form of a duration: 45 s, 1 min 20 s, 2 h 05 min."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def progress_line(planned: PlannedRun, total: int, elapsed: float,
                  remaining: float | None) -> str:
    """`[12/40] mpi iter=2^12 rep 2/3: 0.0123 s (ETA 1 min 20 s)`; no ETA after the last run."""
    line = (f"[{planned.index}/{total}] {planned.system} iter=2^{planned.iter_exp} "
            f"rep {planned.rep}/{planned.reps}: {elapsed:.4g} s")
    if remaining is not None and planned.index < total:
        line += f" (ETA {format_duration(remaining)})"
    return line


def progress_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_sweep(plan: list[PlannedRun], launches: dict[str, Launch], graph_flags: list[str],
              workdir: Path, timeout: float | None,
              progress: Callable[[str], None] = progress_to_stderr) -> list[RunRecord]:
    """Execute `plan` in order. A failed run or Ctrl-C raises SweepAborted."""
    records: list[RunRecord] = []
    for planned in plan:
        launch = launches[planned.system]
        json_path = Path(workdir) / f"run-{planned.index}.json"
        command = launch.command(with_iterations(graph_flags, planned.iterations), json_path)
        label = (f"[{planned.index}/{len(plan)}] {planned.system} iter=2^{planned.iter_exp} "
                 f"rep {planned.rep}/{planned.reps}")
        started = time.perf_counter()
        try:
            # An offload program is one process with devices (the plugin itself checks
            # that MPI sees every rank the launcher started).
            checked = launch.spec.mpi and not launch.spec.offload_plugin
            report = run_benchmark(command, launch.environment(), json_path, timeout,
                                   launch.layout.ranks if checked else None)
        except RunError as error:
            progress(f"{label}: FAILED")
            raise SweepAborted(f"{planned.system} run failed: {error}", records) from error
        except KeyboardInterrupt:
            raise SweepAborted("interrupted", records) from None
        records.append(RunRecord(planned, command, report, time.perf_counter() - started))
        # Wall time, not the reported time: the launch cost is part of the wait.
        remaining = estimate_remaining(
            [(r.planned.system, r.planned.iterations, r.wall_seconds) for r in records],
            [(run.system, run.iterations) for run in plan[len(records):]])
        progress(progress_line(planned, len(plan), report.elapsed, remaining))
    return records
