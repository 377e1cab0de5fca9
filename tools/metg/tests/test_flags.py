import pytest

from taskgrid_metg.flags import (
    check_graph_flags, default_graph_flags, graph_kernels, split_graphs, with_iterations)


def test_single_graph_gets_iter_appended():
    assert with_iterations(["-type", "stencil_1d", "-steps", "10"], 64) == [
        "-type", "stencil_1d", "-steps", "10", "-iter", "64"]


def test_every_graph_segment_gets_iter():
    flags = ["-steps", "10", "-kernel", "compute_bound", "-and", "-steps", "20", "-and",
             "-type", "fft", "-width", "8"]
    assert with_iterations(flags, 1024) == [
        "-steps", "10", "-kernel", "compute_bound", "-iter", "1024", "-and",
        "-steps", "20", "-iter", "1024", "-and",
        "-type", "fft", "-width", "8", "-iter", "1024"]


def test_trailing_and_gives_a_default_graph_that_also_gets_iter():
    assert with_iterations(["-steps", "5", "-and"], 2) == [
        "-steps", "5", "-iter", "2", "-and", "-iter", "2"]


def test_empty_flags_still_set_iter():
    assert with_iterations([], 8) == ["-iter", "8"]


def test_split_graphs():
    assert split_graphs(["-a", "1", "-and", "-b"]) == [["-a", "1"], ["-b"]]


@pytest.mark.parametrize("flag", ["-iter", "-worker", "-json"])
def test_reserved_flags_are_rejected(flag):
    with pytest.raises(ValueError, match=flag):
        check_graph_flags(["-steps", "4", "-and", flag, "3"])


def test_graph_kernels_defaults_and_last_wins():
    flags = ["-kernel", "busy_wait", "-kernel", "compute_bound", "-and", "-steps", "3"]
    assert graph_kernels(flags) == ["compute_bound", "empty"]


def test_default_flags_use_one_task_per_core():
    flags = default_graph_flags(48)
    assert flags[flags.index("-width") + 1] == "48"
    assert "compute_bound" in flags and "stencil_1d" in flags
