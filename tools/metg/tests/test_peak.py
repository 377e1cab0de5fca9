import pytest

from taskgrid_metg.analysis import SizeSummary
from taskgrid_metg.peak import calibration_kernel, given, sweep_best


def size(system, exp, elapsed, cores):
    return SizeSummary(system, exp, (elapsed,), total_tasks=10, total_flops=1000,
                       total_bytes=0, cores_used=cores, metric="flops")


def test_sweep_best_is_taken_per_number_of_cores():
    # serial (1 core) runs 1000 FLOP in 1 s; the 2-core systems at best 1000 FLOP in 0.8 s.
    peak = sweep_best([size("serial", 5, 1.0, 1), size("mpi", 5, 0.8, 2), size("mpi", 4, 2.0, 2),
                       size("omp", 5, 1.0, 2)], "FLOP/s")
    assert peak.per_core == {1: pytest.approx(1000.0), 2: pytest.approx(625.0)}
    assert "2 cores: mpi at iter 2^5" in peak.detail and "1 cores: serial" in peak.detail


def test_given_peak_is_split_evenly_over_cores():
    assert given(8e9, 4, {4, 1}, "FLOP/s").per_core == {4: 2e9, 1: 2e9}


@pytest.mark.parametrize("kernels, expected", [
    (["compute_bound"], "compute_bound"),
    (["load_imbalance", "load_imbalance"], "compute_bound"),
    (["compute_bound2"], "compute_bound2"),
    (["memory_bound"], None),
    (["compute_bound", "load_imbalance"], None),
])
def test_calibration_kernel(kernels, expected):
    kernel, reason = calibration_kernel(kernels)
    assert kernel == expected and (reason == "") == (expected is not None)
