"""metg.png: efficiency versus task granularity, one line per system.

Drawn like figure 3b of the MPP paper and the Task Bench papers: logarithmic
granularity axis with granularity decreasing to the right, so each curve falls
off towards the right where overhead dominates. Each point is the mean over its
repetitions (the figure METG is computed from); its error bars span the fastest and
slowest repetition, in granularity and in efficiency.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .output import format_us, machine_line, microseconds
from .analysis import SizeSummary
from .results import Results


@dataclass(frozen=True)
class Curve:
    """One system's points in sweep order (largest -iter first), in µs and %."""
    iterations: list[int]
    granularity: list[float]             # of the mean elapsed time
    efficiency: list[float]
    granularity_err: list[list[float]]   # [below, above] the point, matplotlib's xerr
    efficiency_err: list[list[float]]    # [below, above], yerr


def curve(results: Results, sizes: list[SizeSummary], peak_name: str) -> Curve:
    # Sorted here rather than trusting the order of the runs: the line must follow the
    # sweep, not the file, or it zigzags when results are merged or reordered.
    ordered = sorted(sizes, key=lambda size: -size.iterations)
    per_core = results.peaks[peak_name].per_core
    iterations, granularity, efficiency = [], [], []
    g_err: list[list[float]] = [[], []]
    e_err: list[list[float]] = [[], []]
    for size in ordered:
        g = microseconds(size.granularity)
        e = results.efficiency(size, peak_name) * 100
        # Granularity grows with elapsed time, efficiency shrinks: the slowest
        # repetition gives the largest granularity and the smallest efficiency.
        g_reps = [microseconds(t * size.cores_used / size.total_tasks) for t in size.elapsed]
        e_reps = [size.work / t / size.cores_used / per_core[size.cores_used] * 100
                  for t in size.elapsed]
        iterations.append(size.iterations)
        granularity.append(g)
        efficiency.append(e)
        # max(0, ...) absorbs rounding: the mean lies within the range of repetitions.
        g_err[0].append(max(0.0, g - min(g_reps)))
        g_err[1].append(max(0.0, max(g_reps) - g))
        e_err[0].append(max(0.0, e - min(e_reps)))
        e_err[1].append(max(0.0, max(e_reps) - e))
    return Curve(iterations, granularity, efficiency, g_err, e_err)


def write_png(results: Results, path: Path) -> None:
    draw(results).savefig(path, dpi=120)


def draw(results: Results) -> Figure:
    # A bare Figure with the Agg canvas: no pyplot state, no display needed.
    figure = Figure(figsize=(8, 5.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    peak = results.peaks[results.headline_peak]
    threshold_pct = results.threshold * 100

    plotted = False
    if peak.available:
        for system in results.launches:
            sizes = results.sizes(system)
            if not sizes:
                continue
            points = curve(results, sizes, peak.name)
            metg = results.headline(system)
            mpi = results.mpi(system)
            label = (f"{system}: METG {format_us(metg.value) + ' µs' if metg.ok else 'n/a'}"
                     + (f" [{mpi}]" if mpi else ""))
            bars = axes.errorbar(points.granularity, points.efficiency,
                                 xerr=points.granularity_err, yerr=points.efficiency_err,
                                 marker="o", markersize=4, capsize=3, elinewidth=1, label=label)
            line = bars.lines[0]
            plotted = True
            if metg.ok:
                axes.plot([microseconds(metg.value)], [threshold_pct], marker="*", markersize=14,
                          color=line.get_color(), markeredgecolor="black", linestyle="none")
                axes.axvline(microseconds(metg.value), color=line.get_color(), linestyle=":",
                             linewidth=1)

    axes.axhline(threshold_pct, color="red", linestyle="--", linewidth=1,
                 label=f"{results.threshold:.0%} efficiency")
    if plotted:
        axes.set_xscale("log")
        axes.invert_xaxis()
    axes.set_xlabel("task granularity (µs, decreasing →)")
    axes.set_ylabel(f"efficiency (% of {peak.name} peak)")
    axes.set_ylim(bottom=0)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(loc="best", fontsize="small")
    status = "" if results.aborted is None else " — INCOMPLETE"
    axes.set_title(f"Efficiency vs task granularity{status}\n{machine_line(results)}\n"
                   f"peak: {peak.name}, {results.interp} interpolation, metric {results.unit}",
                   fontsize="medium")
    return figure
