"""A real (tiny) sweep of build/bin/taskbench-serial, when the project has been built."""

import json
import os
from pathlib import Path

import pytest

from taskgrid_metg.cli import main

from conftest import REPO_ROOT

# CTest passes its own build directory; by hand the default is build/.
BUILD = Path(os.environ.get("TASKGRID_BUILD_DIR", REPO_ROOT / "build"))
SERIAL = BUILD / "bin" / "taskbench-serial"


@pytest.mark.skipif(not SERIAL.exists(), reason=f"{SERIAL} not built: run the CMake build first")
def test_real_serial_two_point_sweep(tmp_path):
    # --peak sweep: the test depends on taskbench-serial only; one calibration run at most.
    assert main(["--systems", "serial", "--min-exp", "4", "--max-exp", "5", "--reps", "1",
                 "--peak", "sweep", "--peak-reps", "1",
                 "--build-dir", str(BUILD), "--out-dir", str(tmp_path),
                 "--", "-kernel", "compute_bound", "-type", "stencil_1d",
                 "-steps", "10", "-width", "2"]) == 0
    doc = json.loads((tmp_path / "metg.json").read_text())
    assert [point["iterations"] for point in doc["points"]] == [32, 16]
    for point in doc["points"]:
        assert point["total_tasks"] == 20
        assert point["total_flops"] == 20 * (128 * point["iterations"] + 64)
        assert point["elapsed_mean_s"] > 0 and point["cores_used"] == 1
    assert all(run["report_source"] == "json" for run in doc["runs"])
    assert set(doc["metg"]["serial"]["sweep"]) == {"linear", "log"}
