"""metg_sim.py's searches over -iter, on a stand-in for the simulator: a machine whose
efficiency is iterations / (iterations + 2^10), so METG(50%) lies between 2^10 and 2^9."""
import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import metg_sim  # noqa: E402

KNEE = 2 ** 10


def args(**overrides):
    values = dict(platform="thismachine", cores_per_node=1, min_exp=4, max_exp=16,
                  start_exp=None, search="sweep", budget=600.0)
    values.update(overrides)
    return argparse.Namespace(**values)


class FakeSimulator:
    """run_once's stand-in: the iterations it was asked for, and a result at that size."""

    def __init__(self, over_budget_at=None):
        self.asked = []
        self.over_budget_at = over_budget_at
        self.speed = float(metg_sim.platform_value("thismachine", "core_speed"))

    def __call__(self, args, system, nodes, cores, iterations):
        self.asked.append(iterations)
        if iterations == self.over_budget_at:
            return None
        efficiency = iterations / (iterations + KNEE)
        tasks = 50.0 * nodes * cores
        flops = tasks * iterations * 64.0
        elapsed = flops / (efficiency * nodes * cores * self.speed)
        return {"iterations": iterations, "tasks": tasks, "flops": flops, "elapsed": elapsed,
                "wall": 1.0}


def test_bracket_finds_the_sweeps_metg_in_fewer_runs():
    sweep_runs, bracket_runs = FakeSimulator(), FakeSimulator()
    swept = metg_sim.sweep(args(), "taskgrid_spmd", 4, run=sweep_runs)
    bracketed = metg_sim.sweep(args(search="bracket", start_exp=12), "taskgrid_spmd", 4,
                               run=bracket_runs)
    assert swept["metg_us"] is not None
    assert bracketed["metg_us"] == pytest.approx(swept["metg_us"])
    assert sweep_runs.asked == [2 ** e for e in range(16, 7, -1)]  # down to two misses
    assert bracket_runs.asked == [2 ** 12, 2 ** 11, 2 ** 10, 2 ** 9]
    assert bracketed["search"] == "bracket"


def test_bracket_climbs_from_a_start_below_the_knee():
    runs = FakeSimulator()
    result = metg_sim.sweep(args(search="bracket", start_exp=7), "taskgrid", 2, run=runs)
    assert runs.asked == [2 ** 7, 2 ** 8, 2 ** 9, 2 ** 10]
    assert result["metg_us"] == pytest.approx(
        metg_sim.sweep(args(), "taskgrid", 2, run=FakeSimulator())["metg_us"])


def test_bracket_that_never_crosses_says_why():
    runs = FakeSimulator()
    result = metg_sim.sweep(args(search="bracket", start_exp=14, min_exp=12), "mpi", 2,
                            run=runs)
    assert runs.asked == [2 ** 14, 2 ** 13, 2 ** 12]
    assert result["metg_us"] is None
    assert "no point below 50%" in result["reason"]


def test_a_run_over_the_budget_is_reported_not_dropped():
    runs = FakeSimulator(over_budget_at=2 ** 11)
    result = metg_sim.sweep(args(search="bracket", start_exp=12), "taskgrid_spmd", 512,
                            run=runs)
    assert result["metg_us"] is None
    assert result["reason"] == "one run over the wall-time budget of 600 s"
    assert [run["iterations"] for run in result["runs"]] == [2 ** 12]
