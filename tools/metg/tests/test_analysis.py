import math

import pytest

from taskgrid_metg.analysis import (
    Point, SizeSummary, compute_metg, interpolate, metg_table, summarize, work_metric)

# A normal sweep (largest problem first): P2 is the smallest-granularity point at or above
# 50%, P3 the next size. Efficiency falls from 0.8 to 0.2, so 0.5 is half-way (fraction 0.5).
P1 = Point(iterations=8, granularity=20.0, efficiency=0.9, reps=1)
P2 = Point(iterations=4, granularity=10.0, efficiency=0.8, reps=2)
P3 = Point(iterations=2, granularity=4.0, efficiency=0.2, reps=3)


def test_linear_interpolation_by_hand():
    result = compute_metg([P1, P2, P3], 0.5, "linear")
    assert result.ok and result.method == "interpolated"
    assert result.value == pytest.approx(7.0)  # 10 + 0.5 * (4 - 10)
    assert result.chosen == P2 and result.next == P3


def test_log_interpolation_by_hand():
    result = compute_metg([P1, P2, P3], 0.5, "log")
    assert result.value == pytest.approx(math.sqrt(40))  # 10 * (4/10)^0.5 = 6.3246
    assert result.value < compute_metg([P1, P2, P3], 0.5, "linear").value


def test_interpolation_at_other_fraction():
    # threshold 0.65: fraction (0.65 - 0.8) / (0.2 - 0.8) = 0.25
    assert interpolate(P2, P3, 0.65, "linear") == pytest.approx(10 - 0.25 * 6)
    assert interpolate(P2, P3, 0.65, "log") == pytest.approx(10 * 0.4 ** 0.25)


def test_point_exactly_at_threshold_gives_its_own_granularity():
    at = Point(4, 10.0, 0.5, 2)
    assert compute_metg([P1, at, P3]).value == pytest.approx(10.0)


def test_points_are_ordered_by_iterations_not_by_argument_order():
    assert compute_metg([P3, P1, P2]).value == pytest.approx(7.0)


def test_custom_threshold():
    result = compute_metg([P1, P2, P3], threshold=0.85)
    # chosen P1 (only point >= 0.85), next P2: 20 + (0.85-0.9)/(0.8-0.9) * (10-20) = 15
    assert result.chosen == P1 and result.value == pytest.approx(15.0)


def test_refuses_without_point_below_threshold():
    result = compute_metg([P1, P2])
    assert not result.ok and "no point below 50%" in result.reason


def test_refuses_without_point_above_threshold():
    result = compute_metg([P3, Point(1, 3.0, 0.1, 3)])
    assert not result.ok and "no point reaches 50%" in result.reason


def test_refuses_when_any_efficiency_exceeds_150_percent():
    result = compute_metg([Point(16, 40.0, 1.6, 1), P1, P2, P3])
    assert not result.ok and "160% > 150%" in result.reason and "iter 16" in result.reason


def test_150_percent_itself_is_accepted():
    assert compute_metg([Point(16, 40.0, 1.5, 1), P1, P2, P3]).ok


def test_refuses_when_chosen_point_is_the_last_size():
    # A noisy dip at the largest size puts a point below 50%, but the smallest size is
    # still above it: the sweep stopped too early to see the crossing.
    points = [Point(8, 20.0, 0.3, 1), Point(4, 10.0, 0.6, 2), Point(2, 5.0, 0.7, 3)]
    result = compute_metg(points)
    assert not result.ok and "no problem size after iter 2" in result.reason
    assert result.chosen.iterations == 2


def test_refuses_when_next_point_has_fewer_repetitions():
    result = compute_metg([P1, Point(4, 10.0, 0.8, 5), Point(2, 4.0, 0.2, 2)])
    assert not result.ok and result.reason.startswith("truncated sweep")
    assert "fewer than the 5" in result.reason


def test_next_point_with_more_repetitions_is_fine():
    assert compute_metg([P1, Point(4, 10.0, 0.8, 1), Point(2, 4.0, 0.2, 5)]).ok


def test_chosen_point_without_interpolation_when_next_is_not_smaller():
    # Noise: the next size came out with larger tasks than the chosen one.
    points = [P1, Point(4, 10.0, 0.6, 2), Point(2, 12.0, 0.3, 3), Point(1, 3.0, 0.1, 3)]
    result = compute_metg(points, 0.5, "log")
    assert result.ok and result.method == "chosen_point"
    assert result.value == 10.0


def test_empty_and_bad_interpolation():
    assert not compute_metg([]).ok
    with pytest.raises(ValueError):
        compute_metg([P1, P2, P3], interp="cubic")


def test_size_summary_granularity_rate_and_efficiency():
    size = SizeSummary("s", 3, (1.0, 3.0), total_tasks=8, total_flops=80, total_bytes=0,
                       cores_used=4, metric="flops")
    assert size.iterations == 8 and size.reps == 2 and size.elapsed_mean == 2.0
    assert size.granularity == pytest.approx(1.0)      # 2 s * 4 cores / 8 tasks
    assert size.rate_per_core == pytest.approx(10.0)   # 80 / 2 s / 4 cores
    assert size.efficiency(20.0) == pytest.approx(0.5)
    assert size.point(20.0) == Point(8, 1.0, 0.5, 2)


def test_work_metric_and_task_iteration_work():
    assert work_metric([(0, 5), (10, 0)]) == "flops"
    assert work_metric([(0, 0), (0, 5)]) == "bytes"
    assert work_metric([(0, 0)]) == "task_iterations"
    size = SizeSummary("s", 4, (2.0,), 10, 0, 0, 1, "task_iterations")
    assert size.work == 160


def test_summarize_groups_repetitions_in_sweep_order():
    runs = [("a", 5, 1.0, 10, 100, 0), ("b", 5, 2.0, 10, 100, 0), ("a", 5, 3.0, 10, 100, 0),
            ("a", 4, 0.5, 10, 50, 0)]
    sizes = summarize(runs, {"a": 2, "b": 1}, "flops")
    assert [(s.system, s.iter_exp, s.elapsed, s.cores_used) for s in sizes] == [
        ("a", 5, (1.0, 3.0), 2), ("b", 5, (2.0,), 1), ("a", 4, (0.5,), 2)]


def test_metg_table_covers_every_peak_and_interpolation():
    # One task per run and FLOPs = iterations, so efficiency against peak 1 is n / elapsed
    # and granularity is the elapsed time: (8, 1.0), (6, 0.667), (5, 0.4).
    sizes = [SizeSummary("a", exp, (elapsed,), 1, 2 ** exp, 0, 1, "flops")
             for exp, elapsed in ((3, 8.0), (2, 6.0), (1, 5.0))]
    table = metg_table(sizes, {"calibrated": {1: 1.0}, "sweep": {1: 1.0}}, 0.5)
    assert set(table["a"]) == {"calibrated", "sweep"}
    assert set(table["a"]["sweep"]) == {"linear", "log"}
    # chosen (6, 2/3), next (5, 0.4): fraction (0.5 - 2/3) / (0.4 - 2/3) = 0.625
    assert table["a"]["calibrated"]["linear"].value == pytest.approx(6 - 0.625)
