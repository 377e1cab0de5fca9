"""The sweep's progress line and its estimate of the time left (pure functions)."""

import pytest

from taskgrid_metg.sweep import (estimate_remaining, fit_run_time, format_duration,
                                 plan_sweep, progress_line)


@pytest.mark.parametrize("seconds, text", [
    (0, "0 s"), (0.4, "0 s"), (44.6, "45 s"), (59.4, "59 s"), (60, "1 min"),
    (80, "1 min 20 s"), (605, "10 min 05 s"), (3600, "1 h 00 min"), (7530, "2 h 05 min"),
    (-3, "0 s"),
])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_fit_separates_launch_cost_from_work():
    samples = [(n, 0.5 + 1e-3 * n) for n in (1024, 512, 256, 128)]
    intercept, slope = fit_run_time(samples)
    assert intercept == pytest.approx(0.5) and slope == pytest.approx(1e-3)


def test_fit_with_one_size_is_proportional():
    assert fit_run_time([(1024, 2.0), (1024, 2.2)]) == pytest.approx((0.0, 2.1 / 1024))


def test_fit_never_negative():
    # Times that grow as sizes shrink (noise): a constant cost, not a negative slope.
    assert fit_run_time([(1024, 1.0), (512, 1.2)]) == pytest.approx((1.1, 0.0))
    # A negative intercept would make small runs free or negative: through the origin.
    intercept, slope = fit_run_time([(100, 0.5), (200, 2.0)])
    assert intercept == 0.0 and slope > 0


def test_estimate_per_system_from_the_runs_so_far():
    done = [("a", 1024, 0.5 + 1024e-3), ("b", 1024, 2.0),
            ("a", 512, 0.5 + 512e-3), ("b", 512, 1.0)]
    left = [("a", 256), ("b", 256), ("a", 128)]
    expected = (0.5 + 0.256) + 0.5 + (0.5 + 0.128)
    assert estimate_remaining(done, left) == pytest.approx(expected)
    assert estimate_remaining(done, []) == 0.0
    assert estimate_remaining([], left) is None


def test_estimate_for_a_system_not_run_yet_uses_all_runs():
    done = [("a", 1000, 2.0)]
    assert estimate_remaining(done, [("b", 1000), ("b", 500)]) == pytest.approx(3.0)


def test_estimate_is_far_below_a_plain_mean_for_a_halving_sweep():
    # Largest first: the mean of the first runs would overestimate the rest many times.
    plan = plan_sweep(["a"], min_exp=4, max_exp=16, reps=1)
    cost = {run.iterations: 0.1 + 1e-4 * run.iterations for run in plan}
    done = [("a", run.iterations, cost[run.iterations]) for run in plan[:3]]
    left = [("a", run.iterations) for run in plan[3:]]
    assert estimate_remaining(done, left) == pytest.approx(sum(cost[n] for _, n in left))


def test_progress_line():
    plan = plan_sweep(["mpi", "omp"], min_exp=11, max_exp=12, reps=2)
    assert progress_line(plan[1], len(plan), 1.8, 80.4) == \
        "[2/8] omp iter=2^12 rep 1/2: 1.8 s (ETA 1 min 20 s)"
    # No estimate yet, and none after the last run.
    assert progress_line(plan[0], len(plan), 0.01234567, None) == \
        "[1/8] mpi iter=2^12 rep 1/2: 0.01235 s"
    assert progress_line(plan[-1], len(plan), 0.5, 0.0) == "[8/8] omp iter=2^11 rep 2/2: 0.5 s"
