from taskgrid_metg.sweep import default_reps, plan_sweep


def test_interleaved_order_largest_size_first():
    plan = plan_sweep(["a", "b", "c"], min_exp=2, max_exp=3, reps=2)
    assert [(run.system, run.iter_exp, run.rep) for run in plan] == [
        ("a", 3, 1), ("b", 3, 1), ("c", 3, 1), ("a", 3, 2), ("b", 3, 2), ("c", 3, 2),
        ("a", 2, 1), ("b", 2, 1), ("c", 2, 1), ("a", 2, 2), ("b", 2, 2), ("c", 2, 2)]
    assert [run.index for run in plan] == list(range(1, 13))
    assert plan[0].iterations == 8


def test_default_repetitions_follow_min_s_plus_1_5():
    assert [default_reps(exp, 10) for exp in range(10, 2, -1)] == [1, 2, 3, 4, 5, 5, 5, 5]
    plan = plan_sweep(["a"], min_exp=7, max_exp=9)
    assert [(run.iter_exp, run.rep, run.reps) for run in plan] == [
        (9, 1, 1), (8, 1, 2), (8, 2, 2), (7, 1, 3), (7, 2, 3), (7, 3, 3)]
