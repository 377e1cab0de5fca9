"""Tests of bench/pgas: the report's ratios, goals, table and plots on a synthetic CSV, and
the CSV of a real smoke run of taskgrid-pgas-bench (PGAS_BENCH_SMOKE_CSV, set by CTest
after the pgas.bench.smoke run; skipped without it)."""

import csv
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pgas_report as report
from conftest import BENCH_DIR

SCRIPT = BENCH_DIR / "pgas_report.py"
# Every (section, op, system) the benchmark reports.
EXPECTED_ROWS = {
    ("latency", "put", "taskgrid"), ("latency", "put", "mpi_rma"),
    ("latency", "get", "taskgrid"), ("latency", "get", "mpi_rma"),
    ("latency", "p2p", "mpi_p2p"),
    ("bandwidth", "put", "taskgrid"), ("bandwidth", "put", "mpi_rma"),
    ("bandwidth", "get", "taskgrid"), ("bandwidth", "get", "mpi_rma"),
    ("bandwidth", "p2p", "mpi_p2p"),
    ("collectives", "broadcast", "taskgrid"), ("collectives", "broadcast", "mpi"),
    ("collectives", "allreduce", "taskgrid"), ("collectives", "allreduce", "mpi"),
}
KiB, MiB = 1 << 10, 1 << 20

# Synthetic medians (seconds) chosen so that each goal's outcome is known:
#   latency put:   TaskGrid 1.2 us vs MPI 1.0 us at 8 B (ratio 1.2: fails), 1.05 at 16 B
#   latency get:   TaskGrid 1.0 vs 1.0 and 2.0 vs 2.0 (ratio 1.0: met)
#   bandwidth put: TaskGrid 1.0 ms vs MPI 0.9 ms at 64 KiB (bandwidth ratio 0.9: fails)
#   bandwidth get: TaskGrid 1.0 ms vs MPI 1.0 ms (1.0: met)
#   broadcast:     TaskGrid 1 ms vs MPI 10 ms (MPI/TaskGrid 10, log10 +1)
#   allreduce:     TaskGrid 4 ms vs MPI 2 ms (MPI/TaskGrid 0.5)
SYNTHETIC = [
    ("latency", "put", 8, "taskgrid", 1.2e-6), ("latency", "put", 8, "mpi_rma", 1.0e-6),
    ("latency", "put", 16, "taskgrid", 1.05e-6), ("latency", "put", 16, "mpi_rma", 1.0e-6),
    ("latency", "get", 8, "taskgrid", 1.0e-6), ("latency", "get", 8, "mpi_rma", 1.0e-6),
    ("latency", "get", 16, "taskgrid", 2.0e-6), ("latency", "get", 16, "mpi_rma", 2.0e-6),
    ("latency", "p2p", 8, "mpi_p2p", 0.5e-6), ("latency", "p2p", 16, "mpi_p2p", 0.5e-6),
    ("bandwidth", "put", 64 * KiB, "taskgrid", 1.0e-3),
    ("bandwidth", "put", 64 * KiB, "mpi_rma", 0.9e-3),
    ("bandwidth", "get", 64 * KiB, "taskgrid", 1.0e-3),
    ("bandwidth", "get", 64 * KiB, "mpi_rma", 1.0e-3),
    ("bandwidth", "p2p", 64 * KiB, "mpi_p2p", 2.0e-3),
    ("collectives", "broadcast", 128 * KiB, "taskgrid", 1.0e-3),
    ("collectives", "broadcast", 128 * KiB, "mpi", 10.0e-3),
    ("collectives", "allreduce", 128 * KiB, "taskgrid", 4.0e-3),
    ("collectives", "allreduce", 128 * KiB, "mpi", 2.0e-3),
]


def write_csv(path: Path, rows, scale: float = 1.0) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(report.CSV_COLUMNS)
        for section, op, size, system, median in rows:
            writer.writerow([section, op, size, system, f"{median * scale:.6e}",
                             f"{median * scale * 0.9:.6e}", 5, 100])
    return path


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def synthetic_csv(tmp_path) -> Path:
    return write_csv(tmp_path / "pgas.csv", SYNTHETIC)


def comparison(comparisons, section, op, size):
    [match] = [c for c in comparisons if (c.section, c.op, c.bytes) == (section, op, size)]
    return match


# ---------------------------------------------------------------- ratios and goals

def test_ratio_directions(synthetic_csv):
    comparisons = report.compare(report.read_results([synthetic_csv]))
    # Latency: TaskGrid time / MPI RMA time.
    assert comparison(comparisons, "latency", "put", 8).ratio == pytest.approx(1.2)
    assert comparison(comparisons, "latency", "put", 16).ratio == pytest.approx(1.05)
    # Bandwidth: TaskGrid bandwidth / MPI RMA bandwidth = MPI time / TaskGrid time.
    assert comparison(comparisons, "bandwidth", "put", 64 * KiB).ratio == pytest.approx(0.9)
    # Collectives: MPI time / TaskGrid time.
    assert comparison(comparisons, "collectives", "broadcast", 128 * KiB).ratio == \
        pytest.approx(10.0)
    assert comparison(comparisons, "collectives", "allreduce", 128 * KiB).ratio == \
        pytest.approx(0.5)
    # The point-to-point reference rides along; collectives have none.
    assert comparison(comparisons, "latency", "get", 8).p2p.median_s == pytest.approx(0.5e-6)
    assert comparison(comparisons, "collectives", "allreduce", 128 * KiB).p2p is None
    # Minima (0.9 x median on both sides here) give the same ratios.
    assert comparison(comparisons, "latency", "put", 8).ratio_of_minima == pytest.approx(1.2)


def test_goals(synthetic_csv):
    comparisons = report.compare(report.read_results([synthetic_csv]))
    outcomes = {(o.goal.section, o.goal.op): o for o in report.evaluate_goals(comparisons)}
    put = outcomes[("latency", "put")]
    assert put.met is False
    assert put.failing_bytes == (8,)
    assert (put.worst_ratio, put.worst_bytes) == (pytest.approx(1.2), 8)
    assert outcomes[("latency", "get")].met is True
    bandwidth_put = outcomes[("bandwidth", "put")]
    assert bandwidth_put.met is False
    assert bandwidth_put.worst_ratio == pytest.approx(0.9)
    assert outcomes[("bandwidth", "get")].met is True
    assert {o.goal.bound for o in outcomes.values()} == {1.1, 0.95}


def test_goal_bounds_are_inclusive(tmp_path):
    # Exactly 1.1 x slower latency and exactly 0.95 of the bandwidth meet the goals.
    rows = [("latency", "put", 8, "taskgrid", 1.1e-6), ("latency", "put", 8, "mpi_rma", 1.0e-6),
            ("bandwidth", "get", MiB, "taskgrid", 1.0e-3),
            ("bandwidth", "get", MiB, "mpi_rma", 0.95e-3)]
    results = report.read_results([write_csv(tmp_path / "edge.csv", rows)])
    outcomes = {(o.goal.section, o.goal.op): o
                for o in report.evaluate_goals(report.compare(results))}
    assert outcomes[("latency", "put")].met is True
    assert outcomes[("bandwidth", "get")].met is True
    assert outcomes[("latency", "get")].met is None  # no data


def test_several_csvs_combine(tmp_path):
    first = write_csv(tmp_path / "a.csv", SYNTHETIC)
    second = write_csv(tmp_path / "b.csv", SYNTHETIC, scale=3.0)
    third = write_csv(tmp_path / "c.csv", SYNTHETIC, scale=2.0)
    results = report.read_results([first, second, third])
    put = results[("latency", "put", 8, "taskgrid")]
    assert put.median_s == pytest.approx(2.4e-6)  # median of 1.2, 3.6, 2.4 us
    assert put.min_s == pytest.approx(1.2e-6 * 0.9)
    assert put.rounds == 15


def test_bad_input(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("section,op,bytes\nlatency,put,8\n")
    with pytest.raises(report.ReportError, match="missing columns"):
        report.read_results([bad])
    zero = write_csv(tmp_path / "zero.csv", [("latency", "put", 8, "taskgrid", 0.0)])
    with pytest.raises(report.ReportError, match="positive"):
        report.read_results([zero])
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "absent.csv")],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "cannot read" in done.stderr


def test_run_info(tmp_path):
    record = tmp_path / "run.txt"
    record.write_text("load_before 0.52 0.61 0.70 2/345 6789\ncores 2\nenv-recorded\n"
                      "env TASKGRID_PGAS_SHM=0\nload_after 1.50 0.80 0.75 3/345 6800\n")
    info = report.read_run_info(record)
    assert info.load_before == [0.52, 0.61, 0.70]
    assert info.load_after == [1.5, 0.8, 0.75]
    assert info.cores == 2
    assert info.environment == {"TASKGRID_PGAS_SHM": "0"}
    lines = " ".join(report.run_info_lines(info))
    assert "before 0.52 0.61 0.70, after 1.50 0.80 0.75 on 2 cores" in lines
    assert "TASKGRID_* environment of the run: TASKGRID_PGAS_SHM=0." in lines
    defaults = tmp_path / "defaults.txt"
    defaults.write_text("load_before 0.1 0.2 0.3 1/2 3\nenv-recorded\n")
    assert "none (the defaults)" in " ".join(report.run_info_lines(report.read_run_info(defaults)))
    absent = report.read_run_info(tmp_path / "absent")
    assert absent == report.RunInfo()
    assert "not recorded" in report.run_info_lines(absent)[0]


# ---------------------------------------------------------------- table and plots

def test_report_files(synthetic_csv, tmp_path):
    (synthetic_csv.parent / "run.txt").write_text("load_before 0.25 0.20 0.10 1/2 3\n")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(SCRIPT), str(synthetic_csv), "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    table = (out / "table.md").read_text()
    # Goal lines: verdicts and worst ratios.
    assert "| put latency at most 1.1 x raw MPI RMA" in table
    assert "NOT met at 1 of 2 sizes | 1.200 (8 B) | 8 B |" in table
    assert "| get latency at most 1.1 x raw MPI RMA" in table
    assert "met at 2 of 2 sizes | 1.000" in table
    assert "NOT met at 1 of 1 sizes | 0.900 (64 KiB) | 64 KiB |" in table
    # Rows: latency in us with its p2p reference, bandwidth in GB/s, collectives with log10.
    assert "| put | 8 B | 1.200 | 1.000 | 1.200 | 1.200 | 0.500 |" in table
    bandwidth_taskgrid = f"{64 * KiB / 1.0e-3 * 1e-9:.3f}"
    assert f"| put | 64 KiB | {bandwidth_taskgrid} |" in table
    assert "| broadcast | 128 KiB | 1000.0 | 10000.0 | 10.000 | +1.000 |" in table
    assert f"| allreduce | 128 KiB | 4000.0 | 2000.0 | 0.500 | {math.log10(0.5):+.3f} |" in table
    assert "Load average (1, 5, 15 min) before 0.25 0.20 0.10" in table
    for name in ("collectives.png", "latency.png", "bandwidth.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name


def test_collectives_plot_values(synthetic_csv, tmp_path):
    """collectives.png plots log10(MPI time / TaskGrid time): +1 for broadcast here."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    captured = {}
    original = plt.Axes.plot

    def spy(ax, *args, **kwargs):
        captured[kwargs.get("label")] = args
        return original(ax, *args, **kwargs)

    comparisons = report.compare(report.read_results([synthetic_csv]))
    try:
        plt.Axes.plot = spy
        assert report.plot_collectives(plt, comparisons, tmp_path / "c.png")
    finally:
        plt.Axes.plot = original
    assert captured["broadcast"] == ((128 * KiB,), (pytest.approx(1.0),))
    assert captured["all-reduce (sum)"] == ((128 * KiB,), (pytest.approx(math.log10(0.5)),))


# ---------------------------------------------------------------- the real smoke run

@pytest.fixture
def smoke_csv() -> Path:
    path = os.environ.get("PGAS_BENCH_SMOKE_CSV")
    if not path:
        pytest.skip("PGAS_BENCH_SMOKE_CSV not set (CTest sets it after pgas.bench.smoke)")
    return Path(path)


def test_smoke_csv_has_every_row(smoke_csv):
    rows = read_csv(smoke_csv)
    assert tuple(rows[0].keys()) == report.CSV_COLUMNS
    assert {(r["section"], r["op"], r["system"]) for r in rows} == EXPECTED_ROWS
    for row in rows:
        assert float(row["median_s"]) > 0 and float(row["min_s"]) > 0, row
        assert float(row["min_s"]) <= float(row["median_s"]), row
        assert int(row["rounds"]) == 2, row  # --rounds 2
        assert int(row["iterations"]) >= 3, row  # --iters 3 (x window), --reps 3
    # Every (section, op, size) has each of its systems once.
    keys = [(r["section"], r["op"], r["bytes"], r["system"]) for r in rows]
    assert len(keys) == len(set(keys))
    sizes = {section: sorted({int(r["bytes"]) for r in rows if r["section"] == section})
             for section in report.SECTIONS}
    assert sizes["latency"] == [8 << k for k in range(11)]  # 8 B .. 8 KiB
    assert sizes["bandwidth"] == [64 * KiB]                 # --max-bytes 65536
    assert sizes["collectives"] == [64 * KiB]               # first size above it: at it


def test_smoke_report(smoke_csv, tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), str(smoke_csv), "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "table.md").read_text()
    assert "## Latency" in table and "## Bandwidth" in table and "## Collectives" in table
    assert "no data" not in table
    assert (tmp_path / "collectives.png").stat().st_size > 0
