#!/usr/bin/env python3
"""Report of taskgrid-pgas-bench: table.md (with the issue's goals) and plots from its CSV.

    pgas_report.py pgas.csv [more.csv ...] [--out DIR] [--run-info FILE]

Writes into --out (default: the first CSV's folder) table.md, collectives.png
(log10 of MPI time / TaskGrid time vs size, broadcast and all-reduce), latency.png
and bandwidth.png. See README.md next to this file.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

CSV_COLUMNS = ("section", "op", "bytes", "system", "median_s", "min_s", "rounds", "iterations")
SECTIONS = ("latency", "bandwidth", "collectives")
TASKGRID = "taskgrid"
# The system each section compares TaskGrid with, and the point-to-point reference
# shown beside it (None: none).
REFERENCE = {"latency": "mpi_rma", "bandwidth": "mpi_rma", "collectives": "mpi"}
P2P = {"latency": "mpi_p2p", "bandwidth": "mpi_p2p", "collectives": None}
P2P_OP = "p2p"
OPS = {"latency": ("put", "get"), "bandwidth": ("put", "get"),
       "collectives": ("broadcast", "allreduce")}
RUN_INFO_FILE = "run.txt"


class ReportError(Exception):
    """Unreadable or inconsistent input: message for the user, exit status 1."""


@dataclass(frozen=True)
class Result:
    """One (section, op, size, system) of one or more CSVs."""
    section: str
    op: str
    bytes: int
    system: str
    median_s: float
    min_s: float
    rounds: int
    iterations: int


@dataclass(frozen=True)
class Comparison:
    """TaskGrid against the section's reference system at one op and size.

    ratio: latency: TaskGrid time / reference time (lower is better for TaskGrid);
    bandwidth and collectives: reference time / TaskGrid time, i.e. TaskGrid bandwidth /
    reference bandwidth (higher is better for TaskGrid). ratio_of_minima likewise from the
    fastest rounds."""
    section: str
    op: str
    bytes: int
    taskgrid: Result
    reference: Result
    p2p: Result | None
    ratio: float
    ratio_of_minima: float


@dataclass(frozen=True)
class Goal:
    section: str
    op: str
    relation: str  # "<=" or ">="
    bound: float
    text: str


# The goals, on the median ratio at every size.
GOALS = tuple(
    [Goal("latency", op, "<=", 1.1, f"{op} latency at most 1.1 x raw MPI RMA "
          "(TaskGrid time / MPI RMA time <= 1.1)") for op in OPS["latency"]]
    + [Goal("bandwidth", op, ">=", 0.95, f"{op} bandwidth at least 0.95 x raw MPI RMA "
            "(TaskGrid bandwidth / MPI RMA bandwidth >= 0.95)") for op in OPS["bandwidth"]])


@dataclass(frozen=True)
class GoalResult:
    goal: Goal
    met: bool | None            # None: no data
    worst_ratio: float | None
    worst_bytes: int | None
    failing_bytes: tuple[int, ...]
    sizes: int


# ---------------------------------------------------------------- input

def read_results(paths: list[Path]) -> dict[tuple[str, str, int, str], Result]:
    """The rows of every CSV by (section, op, bytes, system). A key in several files
    (repeated runs) keeps the median of their medians, the minimum of their minima and
    the sum of their rounds."""
    rows: dict[tuple[str, str, int, str], list[Result]] = {}
    for path in paths:
        try:
            with open(path, newline="") as handle:
                reader = csv.DictReader(handle)
                missing = [name for name in CSV_COLUMNS if name not in (reader.fieldnames or [])]
                if missing:
                    raise ReportError(f"{path}: not a taskgrid-pgas-bench CSV "
                                      f"(missing columns {', '.join(missing)})")
                for line, row in enumerate(reader, start=2):
                    try:
                        result = Result(row["section"], row["op"], int(row["bytes"]),
                                        row["system"], float(row["median_s"]),
                                        float(row["min_s"]), int(row["rounds"]),
                                        int(row["iterations"]))
                    except (TypeError, ValueError) as error:
                        raise ReportError(f"{path}:{line}: bad row ({error})") from None
                    if not (result.median_s > 0 and result.min_s > 0):
                        raise ReportError(f"{path}:{line}: times must be positive")
                    key = (result.section, result.op, result.bytes, result.system)
                    rows.setdefault(key, []).append(result)
        except OSError as error:
            raise ReportError(f"cannot read {path}: {error.strerror}") from None
    results = {}
    for key, group in rows.items():
        results[key] = Result(*key, statistics.median(r.median_s for r in group),
                              min(r.min_s for r in group), sum(r.rounds for r in group),
                              group[0].iterations)
    return results


@dataclass
class RunInfo:
    """What run.sh recorded about the run: the load average (1, 5, 15 min) before and
    after, the machine's cores, and the TASKGRID_* environment (the layer's settings)."""
    load_before: list[float] | None = None
    load_after: list[float] | None = None
    cores: int | None = None
    environment: dict[str, str] | None = None  # None: not recorded


def read_run_info(path: Path) -> RunInfo:
    """run.sh's record, lines 'load_before <the fields of /proc/loadavg>', 'load_after ...',
    'cores N', 'env NAME=VALUE' (one per TASKGRID_* variable) and 'env-recorded'; an empty
    RunInfo without the file."""
    info = RunInfo()
    try:
        text = path.read_text()
    except OSError:
        return info
    for line in text.splitlines():
        label, _, rest = line.partition(" ")
        fields = rest.split()
        try:
            if label in ("load_before", "load_after") and len(fields) >= 3:
                setattr(info, label, [float(value) for value in fields[:3]])
            elif label == "cores" and fields:
                info.cores = int(fields[0])
        except ValueError:
            continue
        if label == "env-recorded" and info.environment is None:
            info.environment = {}
        elif label == "env" and "=" in rest:
            name, _, value = rest.partition("=")
            info.environment = {**(info.environment or {}), name: value}
    return info


# ---------------------------------------------------------------- ratios and goals

def ratio(section: str, taskgrid_s: float, reference_s: float) -> float:
    """Latency: TaskGrid time / reference time. Bandwidth and collectives: reference time /
    TaskGrid time (= TaskGrid bandwidth / reference bandwidth)."""
    if section == "latency":
        return taskgrid_s / reference_s
    return reference_s / taskgrid_s


def compare(results: dict[tuple[str, str, int, str], Result]) -> list[Comparison]:
    """Every (section, op, size) that has both TaskGrid and its reference, in section,
    op and size order."""
    comparisons = []
    for section in SECTIONS:
        for op in OPS[section]:
            sizes = sorted({key[2] for key in results if key[:2] == (section, op)})
            for size in sizes:
                mine = results.get((section, op, size, TASKGRID))
                theirs = results.get((section, op, size, REFERENCE[section]))
                if not mine or not theirs:
                    continue
                p2p = results.get((section, P2P_OP, size, P2P[section])) if P2P[section] else None
                comparisons.append(Comparison(
                    section, op, size, mine, theirs, p2p,
                    ratio(section, mine.median_s, theirs.median_s),
                    ratio(section, mine.min_s, theirs.min_s)))
    return comparisons


def meets(goal: Goal, value: float) -> bool:
    return value <= goal.bound if goal.relation == "<=" else value >= goal.bound


def evaluate_goals(comparisons: list[Comparison]) -> list[GoalResult]:
    """Each goal on the median ratio at every size of its section and op: met when every
    size meets it; the worst size is the one farthest on the wrong side."""
    outcomes = []
    for goal in GOALS:
        mine = [c for c in comparisons if (c.section, c.op) == (goal.section, goal.op)]
        if not mine:
            outcomes.append(GoalResult(goal, None, None, None, (), 0))
            continue
        pick = max if goal.relation == "<=" else min
        worst = pick(mine, key=lambda c: c.ratio)
        failing = tuple(c.bytes for c in mine if not meets(goal, c.ratio))
        outcomes.append(GoalResult(goal, not failing, worst.ratio, worst.bytes, failing,
                                   len(mine)))
    return outcomes


# ---------------------------------------------------------------- table

def format_size(size: int) -> str:
    """Bytes as the largest binary unit that divides them: 64 MiB, 8 KiB, 24 B."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def microseconds(seconds: float, decimals: int = 3) -> str:
    return f"{seconds * 1e6:.{decimals}f}"


def gigabytes_per_s(result: Result) -> str:
    return f"{result.bytes / result.median_s * 1e-9:.3f}"


def goal_lines(outcomes: list[GoalResult]) -> list[str]:
    lines = ["| goal | result | worst median ratio | sizes not meeting it |",
             "|---|---|---:|---|"]
    for outcome in outcomes:
        if outcome.met is None:
            lines.append(f"| {outcome.goal.text} | no data | | |")
            continue
        verdict = (f"met at {outcome.sizes} of {outcome.sizes} sizes" if outcome.met else
                   f"NOT met at {len(outcome.failing_bytes)} of {outcome.sizes} sizes")
        failing = ", ".join(format_size(size) for size in outcome.failing_bytes)
        lines.append(f"| {outcome.goal.text} | {verdict} | {outcome.worst_ratio:.3f} "
                     f"({format_size(outcome.worst_bytes)}) | {failing} |")
    return lines


def run_info_lines(info: RunInfo) -> list[str]:
    def triple(values: list[float]) -> str:
        return " ".join(f"{value:.2f}" for value in values)

    if info.load_before or info.load_after:
        parts = [f"{label} {triple(values)}" for label, values in
                 (("before", info.load_before), ("after", info.load_after)) if values]
        cores = f" on {info.cores} cores" if info.cores else ""
        lines = [f"Load average (1, 5, 15 min) {', '.join(parts)}{cores}."]
    else:
        lines = [f"Load average: not recorded (run.sh writes {RUN_INFO_FILE} beside the CSV)."]
    if info.environment is not None:
        settings = ", ".join(f"{name}={value}" for name, value in sorted(info.environment.items()))
        lines.append(f"TASKGRID_* environment of the run: {settings or 'none (the defaults)'}.")
    return lines


def render_table(comparisons: list[Comparison], outcomes: list[GoalResult], info: RunInfo,
                 sources: list[str]) -> str:
    lines = ["# TaskGrid PGAS layer vs raw MPI (taskgrid-pgas-bench)", "",
             f"From {', '.join(sources)}. Every time is the median over the interleaved rounds "
             "of the time per operation; \"ratio of minima\" compares the fastest rounds "
             "instead (a check on noise).", ""]
    lines += run_info_lines(info)
    lines += ["", "## Goals (median ratio at every size)", ""]
    lines += goal_lines(outcomes)

    def section_rows(section: str) -> list[Comparison]:
        return [c for c in comparisons if c.section == section]

    latency = section_rows("latency")
    if latency:
        lines += ["", "## Latency: blocking put / get, time per operation", "",
                  "Ratio = TaskGrid time / MPI RMA time: below 1 TaskGrid is faster; "
                  "the goal is <= 1.1. MPI p2p is half a ping-pong round trip, for reference.",
                  "", "| op | size | TaskGrid (us) | MPI RMA (us) | TaskGrid/MPI RMA time | "
                  "ratio of minima | MPI p2p (us) |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for c in latency:
            p2p = microseconds(c.p2p.median_s) if c.p2p else ""
            lines.append(f"| {c.op} | {format_size(c.bytes)} | {microseconds(c.taskgrid.median_s)}"
                         f" | {microseconds(c.reference.median_s)} | {c.ratio:.3f} | "
                         f"{c.ratio_of_minima:.3f} | {p2p} |")
    bandwidth = section_rows("bandwidth")
    if bandwidth:
        lines += ["", "## Bandwidth: windows of non-blocking put / get, then completion", "",
                  "Ratio = TaskGrid bandwidth / MPI RMA bandwidth (= MPI RMA time / TaskGrid "
                  "time): above 1 TaskGrid is faster; the goal is >= 0.95. MPI p2p is an "
                  "Isend/Irecv stream, for reference. GB/s = 10^9 bytes per second.", "",
                  "| op | size | TaskGrid (GB/s) | MPI RMA (GB/s) | TaskGrid/MPI RMA bandwidth | "
                  "ratio of minima | MPI p2p (GB/s) |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for c in bandwidth:
            p2p = gigabytes_per_s(c.p2p) if c.p2p else ""
            lines.append(f"| {c.op} | {format_size(c.bytes)} | {gigabytes_per_s(c.taskgrid)} | "
                         f"{gigabytes_per_s(c.reference)} | {c.ratio:.3f} | "
                         f"{c.ratio_of_minima:.3f} | {p2p} |")
    collectives = section_rows("collectives")
    if collectives:
        lines += ["", "## Collectives: broadcast and all-reduce (sum of doubles), every rank", "",
                  "Ratio = MPI time / TaskGrid time: above 1 TaskGrid is faster "
                  "(collectives.png plots its log10).", "",
                  "| op | size | TaskGrid (us) | MPI (us) | MPI/TaskGrid time | log10 | "
                  "ratio of minima |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for c in collectives:
            lines.append(f"| {c.op} | {format_size(c.bytes)} | "
                         f"{microseconds(c.taskgrid.median_s, 1)} | "
                         f"{microseconds(c.reference.median_s, 1)} | {c.ratio:.3f} | "
                         f"{math.log10(c.ratio):+.3f} | {c.ratio_of_minima:.3f} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- plots

def pyplot():
    """matplotlib.pyplot without a display, or None (and a warning) when it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("warning: matplotlib is not installed: no plots "
              "(run with the repository's .venv/bin/python)", file=sys.stderr)
        return None
    return plt


def size_axis(ax, sizes: list[int]) -> None:
    from matplotlib.ticker import NullLocator
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [format_size(size) for size in sizes], rotation=45, ha="right")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("message size")


def plot_collectives(plt, comparisons: list[Comparison], path: Path) -> bool:
    rows = [c for c in comparisons if c.section == "collectives"]
    if not rows:
        return False
    figure, ax = plt.subplots(figsize=(6.4, 4.4))
    for index, (op, label) in enumerate((("broadcast", "broadcast"),
                                         ("allreduce", "all-reduce (sum)"))):
        points = [(c.bytes, math.log10(c.ratio)) for c in rows if c.op == op]
        if points:
            ax.plot(*zip(*points), marker="os"[index], color=f"C{index}", label=label)
    ax.axhline(0.0, color="gray", linewidth=0.8)
    size_axis(ax, sorted({c.bytes for c in rows}))
    ax.set_ylabel("log10(MPI time / TaskGrid time)")
    ax.set_title("Collectives: above 0, TaskGrid is faster")
    ax.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


def plot_section(plt, results: dict, section: str, path: Path) -> bool:
    """Latency (time per operation) or bandwidth (GB/s) of every op and system vs size:
    one colour per op, solid for TaskGrid, dashed for MPI RMA, dotted for MPI p2p."""
    from matplotlib.ticker import ScalarFormatter
    keys = sorted(key for key in results if key[0] == section)
    if not keys:
        return False
    figure, ax = plt.subplots(figsize=(6.4, 4.4))
    ops = sorted({key[1] for key in keys})
    styles = {TASKGRID: "-", REFERENCE[section]: "--", P2P[section]: ":"}
    for op, system in sorted({(key[1], key[3]) for key in keys}):
        points = sorted((key[2], results[key]) for key in keys if (key[1], key[3]) == (op, system))
        values = [(size, r.median_s * 1e6 if section == "latency" else size / r.median_s * 1e-9)
                  for size, r in points]
        ax.plot(*zip(*values), marker="os^"[ops.index(op) % 3], color=f"C{ops.index(op)}",
                linestyle=styles.get(system, "-."), label=f"{op} {system}")
    size_axis(ax, sorted({key[2] for key in keys}))
    if section == "latency":
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.set_ylabel("time per operation (us, median)")
        ax.set_title("Latency (lower is better)")
    else:
        ax.set_ylabel("bandwidth (GB/s, median)")
        ax.set_title("Bandwidth (higher is better)")
    ax.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


# ---------------------------------------------------------------- main

def write_report(csv_paths: list[Path], out: Path, run_info: Path | None) -> list[Path]:
    """Writes table.md and the plots; returns the files written."""
    results = read_results(csv_paths)
    if not results:
        raise ReportError("no results in " + ", ".join(str(p) for p in csv_paths))
    comparisons = compare(results)
    info = read_run_info(run_info if run_info else csv_paths[0].parent / RUN_INFO_FILE)
    out.mkdir(parents=True, exist_ok=True)
    table = out / "table.md"
    table.write_text(render_table(comparisons, evaluate_goals(comparisons), info,
                                  [p.name for p in csv_paths]))
    written = [table]
    plt = pyplot()
    if plt:
        if plot_collectives(plt, comparisons, out / "collectives.png"):
            written.append(out / "collectives.png")
        for section in ("latency", "bandwidth"):
            if plot_section(plt, results, section, out / f"{section}.png"):
                written.append(out / f"{section}.png")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pgas_report.py", description=__doc__.split("\n")[0])
    parser.add_argument("csv", nargs="+", type=Path, help="taskgrid-pgas-bench --csv output(s)")
    parser.add_argument("--out", type=Path, help="output folder (default: the first CSV's)")
    parser.add_argument("--run-info", type=Path,
                        help=f"run.sh's record of the load and settings (default: {RUN_INFO_FILE} "
                        "beside the first CSV)")
    args = parser.parse_args(argv)
    try:
        written = write_report(args.csv, args.out or args.csv[0].parent, args.run_info)
    except ReportError as error:
        print(f"pgas_report: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
