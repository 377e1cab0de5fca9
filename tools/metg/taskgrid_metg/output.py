"""Rendering Results: the stdout table, metg.csv and metg.json."""

from __future__ import annotations

import csv
import json
import shlex
from pathlib import Path

from . import __version__
from .analysis import INTERPOLATIONS, MetgResult, Point
from .flags import with_iterations
from .peak import PEAK_NAMES
from .results import Results
from .systems import Launch

CSV_COLUMNS = [
    "system", "mpi", "iterations", "iter_exp", "reps", "cores_used", "total_tasks",
    "total_flops", "total_bytes", "elapsed_mean_s", "elapsed_min_s", "elapsed_max_s", "granularity_us",
    "rate_per_core", "rate_unit", "efficiency_pct",
    *(f"efficiency_{name}_pct" for name in PEAK_NAMES),
]


def microseconds(seconds: float) -> float:
    return seconds * 1e6


def format_us(seconds: float) -> str:
    value = microseconds(seconds)
    return f"{value:.4g}" if value < 1e4 else f"{value:.0f}"


def metg_text(result: MetgResult) -> str:
    return f"{format_us(result.value)} µs" if result.ok else f"n/a ({result.reason})"


def ratio_text(ratio: float | None) -> str:
    return "" if ratio is None else f"{ratio:.2f}"


def command_template(launch: Launch, graph_flags: list[str]) -> list[str]:
    """The command line of a system with placeholders for the swept values."""
    return launch.command(with_iterations(graph_flags, "N"), "FILE")


def _percent(fraction: float | None) -> float | None:
    return None if fraction is None else round(fraction * 100, 4)


def machine_line(results: Results) -> str:
    machine = results.machine
    start, end = machine.get("loadavg_start"), machine.get("loadavg_end")
    load = f"load avg {start[0]:.2f} -> {end[0]:.2f}" if start and end else "load avg unknown"
    return f"{machine['hostname']}, {machine['cpu_model']}, {machine['cores']} cores, {load}"


# ---------------------------------------------------------------- table (stdout)

def format_table(results: Results) -> str:
    percent = f"{results.threshold:.0%}"
    headline = results.peaks[results.headline_peak]
    peak_names = [name for name, peak in results.peaks.items() if peak.available]
    lines = [f"METG({percent}) on {machine_line(results)}"]
    if results.aborted:
        lines.append(f"SWEEP INCOMPLETE: {results.aborted}")
    lines.append(f"Headline: peak = {results.headline_peak}, {results.interp} interpolation "
                 f"({results.headline_reason})")
    lines.append(f"Peaks per core ({results.unit}, by number of cores in use):")
    for name, peak in results.peaks.items():
        value = ", ".join(f"{rate:.4g} ({cores} cores)" for cores, rate in
                          sorted(peak.per_core.items(), reverse=True)) or "unavailable"
        lines.append(f"  {name:<11} {value}: {peak.detail}")
    lines += ["", *_summary_rows(results), ""]
    width = max([14, *map(len, results.launches)])
    for system in results.launches:
        result = results.headline(system)
        others = " | ".join(
            f"{name}: " + ", ".join(f"{interp} {_short(results.metg[system][name][interp])}"
                                    for interp in INTERPOLATIONS)
            for name in peak_names if system in results.metg)
        lines.append(f"  {system:<{width}} METG({percent}) = {metg_text(result)}")
        if others:
            lines.append(f"  {'':<{width}} all definitions (µs): {others}")
    for system, launch in results.launches.items():
        lines += ["", *_system_rows(results, system, launch, peak_names)]
    if headline.available:
        lines += ["", f"'*' marks the point chosen for the headline METG (peak {headline.name})."]
    return "\n".join(lines)


def _short(result: MetgResult) -> str:
    return format_us(result.value) if result.ok else "n/a"


def _summary_rows(results: Results) -> list[str]:
    """One row per system: its MPI, headline METG, and METG / that of `mpi` of the same MPI
    ('vs mpi', blank where that system is not in the session or has no METG)."""
    width = max([14, *map(len, results.launches)])
    metg_header = f"METG({results.threshold:.0%}) µs"
    rows = [f"  {'system':<{width}} {'mpi':<8} {metg_header:>14} {'vs mpi':>8}"]
    for system in results.launches:
        rows.append(f"  {system:<{width}} {results.mpi(system) or '-':<8} "
                    f"{_short(results.headline(system)):>14} "
                    f"{ratio_text(results.vs_baseline(system)):>8}".rstrip())
    return rows


def _system_rows(results: Results, system: str, launch: Launch, peak_names: list[str]) -> list[str]:
    layout = launch.layout
    charged = (f" ({layout.ranks - layout.uncharged_ranks} rank(s) charged: rank 0 is the host)"
               if layout.uncharged_ranks else "")
    mpi = f", MPI {launch.mpi_family}" if launch.mpi_family else ""
    shared = (f" sharing {layout.cores_used} core(s)" if layout.oversubscribed
              else f" = {layout.cores_used} core(s)")
    rows = [f"{system}: {layout.ranks} rank(s) x {layout.threads} thread(s){shared}{charged}{mpi}",
            f"  {shlex.join(command_template(launch, results.config['graph_flags']))}"]
    header = f"  {'':1} {'iter':>6} {'reps':>4} {'elapsed s':>11} {'gran µs':>10}"
    header += "".join(f" {('eff% ' + name):>16}" for name in peak_names)
    rows.append(header)
    chosen = results.headline(system).chosen
    for size in results.sizes(system):
        mark = "*" if chosen is not None and chosen.iterations == size.iterations else " "
        row = (f"  {mark} {'2^' + str(size.iter_exp):>6} {size.reps:>4} {size.elapsed_mean:>11.4e} "
               f"{format_us(size.granularity):>10}")
        row += "".join(f" {results.efficiency(size, name) * 100:>16.1f}" for name in peak_names)
        rows.append(row)
    return rows


# ---------------------------------------------------------------- CSV

def write_csv(results: Results, path: Path) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for size in results.summaries:
            row = {
                "system": size.system, "mpi": results.mpi(size.system),
                "iterations": size.iterations, "iter_exp": size.iter_exp, "reps": size.reps,
                "cores_used": size.cores_used, "total_tasks": size.total_tasks,
                "total_flops": size.total_flops, "total_bytes": size.total_bytes,
                "elapsed_mean_s": f"{size.elapsed_mean:.6e}",
                "elapsed_min_s": f"{min(size.elapsed):.6e}",
                "elapsed_max_s": f"{max(size.elapsed):.6e}",
                "granularity_us": f"{microseconds(size.granularity):.6g}",
                "rate_per_core": f"{size.rate_per_core:.6e}", "rate_unit": results.unit,
                "efficiency_pct": _csv_percent(results.efficiency(size, results.headline_peak)),
            }
            for name in PEAK_NAMES:
                row[f"efficiency_{name}_pct"] = _csv_percent(results.efficiency(size, name))
            writer.writerow(row)


def _csv_percent(fraction: float | None) -> str:
    return "" if fraction is None else f"{fraction * 100:.4f}"


# ---------------------------------------------------------------- JSON

def _point_record(point: Point | None) -> dict | None:
    if point is None:
        return None
    return {"iterations": point.iterations, "granularity_us": microseconds(point.granularity),
            "efficiency_pct": _percent(point.efficiency), "reps": point.reps}


def metg_record(result: MetgResult) -> dict:
    return {
        "status": "ok" if result.ok else "n/a",
        "metg_us": microseconds(result.value) if result.ok else None,
        "reason": result.reason,
        "method": result.method,
        "chosen": _point_record(result.chosen),
        "next": _point_record(result.next),
    }


def _node_peak(per_core: dict[int, float], cores: int) -> float | None:
    return per_core[cores] * cores if cores in per_core else None


def to_document(results: Results) -> dict:
    graph_flags = results.config["graph_flags"]
    headline = results.peaks[results.headline_peak]
    cores = results.machine["cores"]
    return {
        "tool": {"name": "taskgrid-metg", "version": __version__},
        "complete": results.aborted is None,
        "aborted_reason": results.aborted,
        "config": results.config,
        "machine": results.machine,
        "systems": {
            name: {"system": launch.spec.name, "mpi": results.mpi(name), "build": launch.family,
                   "binary": str(launch.binary), "ranks": launch.layout.ranks,
                   "threads": launch.layout.threads, "cores_used": launch.layout.cores_used,
                   "uncharged_ranks": launch.layout.uncharged_ranks,
                   "env": launch.environment(),
                   "launcher": list(launch.mpiexec) if launch.spec.mpi else None,
                   "command": command_template(launch, graph_flags)}
            for name, launch in results.launches.items()
        },
        "metric": results.metric,
        "rate_unit": results.unit,
        "headline": {"peak": results.headline_peak, "reason": results.headline_reason,
                     "interp": results.interp, "threshold": results.threshold,
                     "peak_per_core": headline.per_core,
                     "peak_node": _node_peak(headline.per_core, cores)},
        "peaks": {
            name: {"available": peak.available, "per_core": peak.per_core,
                   "node": _node_peak(peak.per_core, cores),
                   "unit": peak.unit, "detail": peak.detail, "samples": peak.samples}
            for name, peak in results.peaks.items()
        },
        "metg": {
            system: {"headline": metg_record(results.headline(system)),
                     **{name: {interp: metg_record(result) for interp, result in by_interp.items()}
                        for name, by_interp in by_peak.items()}}
            for system, by_peak in results.metg.items()
        },
        # Headline METG / that of `mpi` of the same MPI family (None: not in the session,
        # no METG, or a system not launched through MPI).
        "vs_mpi": {system: {"baseline": results.baseline(system),
                            "ratio": results.vs_baseline(system)}
                   for system in results.launches},
        "points": [
            {"system": size.system, "mpi": results.mpi(size.system),
             "iterations": size.iterations, "iter_exp": size.iter_exp,
             "reps": size.reps, "cores_used": size.cores_used, "total_tasks": size.total_tasks,
             "total_flops": size.total_flops, "total_bytes": size.total_bytes,
             "elapsed_s": list(size.elapsed), "elapsed_mean_s": size.elapsed_mean,
             "granularity_us": microseconds(size.granularity), "rate_per_core": size.rate_per_core,
             "efficiency_pct": {name: _percent(results.efficiency(size, name))
                                for name in results.peaks}}
            for size in results.summaries
        ],
        "runs": [
            {"index": record.planned.index, "system": record.planned.system,
             "mpi": results.mpi(record.planned.system),
             "iterations": record.planned.iterations, "iter_exp": record.planned.iter_exp,
             "rep": record.planned.rep, "reps": record.planned.reps,
             "elapsed_s": record.report.elapsed, "wall_s": record.wall_seconds,
             "total_tasks": record.report.total_tasks, "total_flops": record.report.total_flops,
             "total_bytes": record.report.total_bytes, "report_source": record.report.source,
             "command": record.command}
            for record in results.runs
        ],
    }


def write_json(results: Results, path: Path) -> None:
    Path(path).write_text(json.dumps(to_document(results), indent=2) + "\n")
