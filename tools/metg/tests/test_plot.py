"""metg.png's drawing, checked on the matplotlib objects rather than the pixels."""

import random
from pathlib import Path

import pytest
from matplotlib.container import ErrorbarContainer

from taskgrid_metg.peak import Peak
from taskgrid_metg.plot import curve, draw
from taskgrid_metg.results import evaluate
from taskgrid_metg.runner import Report
from taskgrid_metg.sweep import RunRecord, plan_sweep
from taskgrid_metg.systems import SYSTEMS, make_launch

RATE, TASKS = 1e9, 100
OVERHEAD = {"serial": 1e-6, "mpi": 2e-6}   # seconds per task


def spread(rep):
    """Repetition 1 is the slowest (+20%), the others faster: min/max differ from the mean."""
    return {1: 1.2, 2: 0.9, 3: 1.0}[rep]


def results_with_repetitions(shuffle):
    launches = {name: make_launch(SYSTEMS[name], Path("build"), 1, ["mpiexec.mpich"])
                for name in OVERHEAD}
    records = []
    for planned in plan_sweep(list(OVERHEAD), 0, 6, reps=3):
        flops = TASKS * (128 * planned.iterations + 64)
        elapsed = (OVERHEAD[planned.system] * TASKS + flops / RATE) * spread(planned.rep)
        records.append(RunRecord(planned, ["cmd"], Report(elapsed, TASKS, flops, 0, "json"),
                                 elapsed))
    if shuffle:  # e.g. runs merged from several files: the curve must not follow this order
        random.Random(7).shuffle(records)
    calibration = Peak("calibrated", "FLOP/s", "fake", {1: RATE}, {1: [RATE]})
    machine = {"hostname": "h", "cpu_model": "cpu", "cores": 1,
               "loadavg_start": [0.1, 0, 0], "loadavg_end": [0.2, 0, 0]}
    return evaluate(records, launches, calibration, "auto", None, 1, 0.5, "linear",
                    {"graph_flags": []}, machine)


def test_curve_has_min_max_of_the_repetitions_in_sweep_order():
    results = results_with_repetitions(shuffle=True)
    points = curve(results, results.sizes("serial"), "calibrated")
    assert points.iterations == [64, 32, 16, 8, 4, 2, 1]
    for n, g, e, (g_lo, g_hi), (e_lo, e_hi) in zip(
            points.iterations, points.granularity, points.efficiency,
            zip(*points.granularity_err), zip(*points.efficiency_err)):
        base = OVERHEAD["serial"] + (128 * n + 64) / RATE      # one task, in seconds
        mean = base * (1.2 + 0.9 + 1.0) / 3
        assert g == pytest.approx(mean * 1e6)
        assert g - g_lo == pytest.approx(base * 0.9 * 1e6)    # fastest repetition
        assert g + g_hi == pytest.approx(base * 1.2 * 1e6)    # slowest repetition
        work = (128 * n + 64) / RATE
        assert e == pytest.approx(work / mean * 100)
        assert e + e_hi == pytest.approx(work / (base * 0.9) * 100)
        assert e - e_lo == pytest.approx(work / (base * 1.2) * 100)


def test_drawn_error_bars_and_lines_follow_the_sweep():
    results = results_with_repetitions(shuffle=True)
    axes = draw(results).axes[0]
    bars = [c for c in axes.containers if isinstance(c, ErrorbarContainer)]
    assert [c.get_label().split(":")[0] for c in bars] == ["serial", "mpi"]
    for container in bars:
        system = container.get_label().split(":")[0]
        line, caps, (xbars, ybars) = container.lines
        assert container.has_xerr and container.has_yerr
        # The joining line exists and runs in sweep order: granularity falls with -iter.
        assert line.get_linestyle() == "-"
        x = list(line.get_xdata())
        expected = curve(results, results.sizes(system), "calibrated")
        assert x == pytest.approx(expected.granularity)
        assert x == sorted(x, reverse=True)
        # One vertical and one horizontal bar per point, spanning min..max.
        assert len(ybars.get_segments()) == len(x) == len(xbars.get_segments())
        for segment, e, (lo, hi) in zip(ybars.get_segments(), expected.efficiency,
                                        zip(*expected.efficiency_err)):
            assert sorted(segment[:, 1]) == pytest.approx([e - lo, e + hi])
            assert hi > 0 and lo > 0
        assert len(caps) == 4   # cap markers at both ends of both bars
    assert axes.get_xscale() == "log" and axes.xaxis_inverted()
