"""The interleaved sweep over -iter = 2^max_exp ... 2^min_exp."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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
            report = run_benchmark(command, launch.environment(), json_path, timeout,
                                   launch.layout.ranks if launch.spec.mpi else None)
        except RunError as error:
            progress(f"{label}: FAILED")
            raise SweepAborted(f"{planned.system} run failed: {error}", records) from error
        except KeyboardInterrupt:
            raise SweepAborted("interrupted", records) from None
        records.append(RunRecord(planned, command, report, time.perf_counter() - started))
        progress(f"{label}: {report.elapsed:.4g} s")
    return records
