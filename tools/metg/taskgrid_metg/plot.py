"""metg.png: efficiency versus task granularity, one line per system.

Drawn like figure 3b of the MPP paper and the Task Bench papers: logarithmic
granularity axis with granularity decreasing to the right, so each curve falls
off towards the right where overhead dominates.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .output import format_us, machine_line, microseconds
from .results import Results


def write_png(results: Results, path: Path) -> None:
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
            granularity = [microseconds(size.granularity) for size in sizes]
            efficiency = [results.efficiency(size, peak.name) * 100 for size in sizes]
            metg = results.headline(system)
            label = f"{system}: METG {format_us(metg.value) + ' µs' if metg.ok else 'n/a'}"
            line, = axes.plot(granularity, efficiency, marker="o", markersize=4, label=label)
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
    figure.savefig(path, dpi=120)
