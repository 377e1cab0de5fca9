import json
import sys

import pytest

from taskgrid_metg.runner import RunError, parse_text_report, run_benchmark

from conftest import TESTS_DIR

SAMPLE_STDOUT = """Running Task Benchmark
Total Tasks 200
Total Dependencies 396
  Unable to estimate local/nonlocal dependencies
Total FLOPs 26227200
Total Bytes 0
Elapsed Time 1.250000e-04 seconds
FLOP/s 2.098176e+11
B/s 0.000000e+00
"""

FAKE = [sys.executable, str(TESTS_DIR / "fake_taskbench.py")]


def test_parse_text_report():
    report = parse_text_report(SAMPLE_STDOUT)
    assert (report.elapsed, report.total_tasks, report.total_flops, report.total_bytes) == (
        1.25e-4, 200, 26227200, 0)
    assert report.source == "text"
    assert parse_text_report("Total Tasks 3\n") is None


def test_json_report_is_preferred(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_OVERHEAD", "1e-3")
    path = tmp_path / "r.json"
    report = run_benchmark([*FAKE, "-json", str(path), "-steps", "2", "-width", "3"], {}, path, 30)
    assert report.source == "json" and report.total_tasks == 6
    assert report.elapsed == json.loads(path.read_text())["elapsed_seconds"] == pytest.approx(6e-3)


def test_text_fallback_without_json(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NO_JSON", "1")
    path = tmp_path / "r.json"
    report = run_benchmark([*FAKE, "-json", str(path), "-steps", "2"], {}, path, 30)
    assert report.source == "text" and report.total_tasks == 8


def test_failed_run_shows_command_and_stderr(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL_ITER", "4")
    with pytest.raises(RunError) as caught:
        run_benchmark([*FAKE, "-iter", "4"], {}, tmp_path / "r.json", 30)
    text = str(caught.value)
    assert "exited with status 3" in text and "fake_taskbench.py -iter 4" in text
    assert "simulated crash" in text


def test_rank_mismatch_is_an_error(tmp_path):
    path = tmp_path / "r.json"
    with pytest.raises(RunError, match="reports 1 ranks but 2 were launched"):
        run_benchmark([*FAKE, "-json", str(path)], {}, path, 30, expected_ranks=2)


def test_timeout_kills_the_run(tmp_path):
    with pytest.raises(RunError, match="timed out"):
        run_benchmark([sys.executable, "-c", "import time; time.sleep(30)"], {},
                      tmp_path / "r.json", 0.5)
