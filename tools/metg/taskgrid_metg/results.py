"""The outcome of a session: measurements, peaks and METG under every definition."""

from __future__ import annotations

from dataclasses import dataclass

from .analysis import METRIC_UNITS, MetgResult, SizeSummary, metg_table, summarize, work_metric
from .peak import Peak, given, sweep_best, unavailable
from .sweep import RunRecord
from .systems import Launch

# The system every other is compared with ("vs mpi"), within its own MPI family.
BASELINE_SYSTEM = "mpi"


@dataclass
class Results:
    config: dict                      # the session's settings, JSON-ready
    machine: dict                     # machine.describe() plus loadavg_start / loadavg_end
    launches: dict[str, Launch]
    runs: list[RunRecord]
    summaries: list[SizeSummary]
    metric: str                       # key of analysis.METRIC_UNITS
    peaks: dict[str, Peak]
    headline_peak: str                # key of `peaks` used for the headline figures
    headline_reason: str              # why that peak was chosen
    interp: str                       # headline interpolation
    threshold: float
    metg: dict[str, dict[str, dict[str, MetgResult]]]   # [system][peak][interp]
    aborted: str | None = None        # why the sweep stopped early, if it did

    @property
    def unit(self) -> str:
        return METRIC_UNITS[self.metric]

    def sizes(self, system: str) -> list[SizeSummary]:
        return [summary for summary in self.summaries if summary.system == system]

    def efficiency(self, summary: SizeSummary, peak_name: str) -> float | None:
        peak = self.peaks.get(peak_name)
        per_core = peak.per_core.get(summary.cores_used) if peak else None
        return None if per_core is None else summary.efficiency(per_core)

    def headline(self, system: str) -> MetgResult:
        by_peak = self.metg.get(system, {})
        if self.headline_peak not in by_peak:
            return MetgResult(None, "no measurements")
        return by_peak[self.headline_peak][self.interp]

    def mpi(self, system: str) -> str:
        """The MPI `system` ran on: 'mpich', 'openmpi', or '' when not launched through MPI."""
        return self.launches[system].mpi_family or ""

    def baseline(self, system: str) -> str | None:
        """The BASELINE_SYSTEM of the same MPI family as `system`, when it is in the session:
        'taskgrid@openmpi' is compared with 'mpi@openmpi', 'taskgrid' with 'mpi'."""
        family = self.launches[system].mpi_family
        if family is None:
            return None
        return next((name for name, launch in self.launches.items()
                     if launch.spec.name == BASELINE_SYSTEM and launch.mpi_family == family),
                    None)

    def vs_baseline(self, system: str) -> float | None:
        """Headline METG of `system` / that of its baseline; None without both values."""
        baseline = self.baseline(system)
        if baseline is None:
            return None
        mine, theirs = self.headline(system), self.headline(baseline)
        if not (mine.ok and theirs.ok) or theirs.value <= 0:
            return None
        return mine.value / theirs.value


def choose_headline(peaks: dict[str, Peak], choice: str) -> tuple[str, str]:
    """(peak name, reason) for --peak `choice` (auto, calibrated, sweep or given)."""
    if choice == "auto":
        if peaks["calibrated"].available:
            return "calibrated", "--peak auto: calibration available"
        return "sweep", f"--peak auto: no calibration ({peaks['calibrated'].detail})"
    if peaks[choice].available:
        return choice, f"--peak {choice}"
    return "sweep", f"--peak {choice} unavailable ({peaks[choice].detail}); using sweep"


def evaluate(records: list[RunRecord], launches: dict[str, Launch], calibration: Peak,
             peak_choice: str, given_node_peak: float | None, cores: int, threshold: float,
             interp: str, config: dict, machine: dict, aborted: str | None = None) -> Results:
    metric = work_metric((record.report.total_flops, record.report.total_bytes) for record in records)
    unit = METRIC_UNITS[metric]
    summaries = summarize(((record.planned.system, record.planned.iter_exp, record.report.elapsed,
                            record.report.total_tasks, record.report.total_flops,
                            record.report.total_bytes) for record in records),
                          {name: launch.layout.cores_used for name, launch in launches.items()},
                          metric)
    if calibration.available and calibration.unit != unit:
        calibration = unavailable("calibrated", unit,
                                  f"calibration measures {calibration.unit}; this sweep is in {unit}")
    peaks = {
        "calibrated": calibration,
        "sweep": sweep_best(summaries, unit) if summaries else unavailable("sweep", unit, "no runs"),
    }
    if given_node_peak is not None:
        peaks["given"] = given(given_node_peak, cores,
                               {launch.layout.cores_used for launch in launches.values()}, unit)
    headline_peak, headline_reason = choose_headline(peaks, peak_choice)
    table = metg_table(summaries, {name: peak.per_core for name, peak in peaks.items() if peak.available},
                       threshold)
    return Results(config=config, machine=machine, launches=launches, runs=records,
                   summaries=summaries, metric=metric, peaks=peaks, headline_peak=headline_peak,
                   headline_reason=headline_reason, interp=interp, threshold=threshold,
                   metg=table, aborted=aborted)
