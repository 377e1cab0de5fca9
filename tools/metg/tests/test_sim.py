"""--sim-nodes: the systems on a simulated machine through the build's taskgrid-sim."""

import json
import os
import stat
from pathlib import Path

import pytest

from taskgrid_metg.cli import main

from conftest import REPO_ROOT

BUILD = Path(os.environ.get("TASKGRID_BUILD_DIR", REPO_ROOT / "build"))
SIM = BUILD / "bin" / "taskbench-taskgrid_spmd-sim"
GRAPH = ["-type", "stencil_1d", "-steps", "20", "-width", "4", "-kernel", "compute_bound"]


@pytest.fixture
def sim_build(tmp_path):
    """A build directory whose taskgrid-sim is a placeholder (dry runs never start it)."""
    bin_dir = tmp_path / "build" / "bin"
    bin_dir.mkdir(parents=True)
    launcher = bin_dir / "taskgrid-sim"
    launcher.write_text("#!/bin/sh\nexit 3\n")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return tmp_path / "build"


def test_dry_run_launches_each_system_through_taskgrid_sim(sim_build, capsys):
    assert main(["--systems", "mpi,taskgrid_spmd,taskgrid", "--sim-nodes", "4",
                 "--sim-cores-per-node", "1", "--build-dir", str(sim_build), "--dry-run",
                 "--min-exp", "4", "--max-exp", "6", "--", *GRAPH]) == 0
    out = capsys.readouterr().out
    for system in ("mpi", "taskgrid_spmd", "taskgrid"):
        assert (f"{sim_build}/bin/taskgrid-sim --system {system} --platform thismachine "
                f"--nodes 4 --cores-per-node 1 -- -json FILE -type stencil_1d") in out
    # Deterministic runs: one repetition per size (3 sizes x 3 systems).
    assert "9 runs" in out
    assert "mpiexec" not in out


@pytest.mark.parametrize("options, message", [
    (["--systems", "omp", "--sim-nodes", "2"], "system 'omp' does not run in the simulator"),
    (["--systems", "mpi", "--sim-nodes", "2", "--ranks", "mpi=4"], "--ranks and --threads"),
    (["--systems", "mpi", "--sim-nodes", "2", "--sim-platform", "nosuch"],
     "--sim-platform nosuch: cannot read"),
])
def test_bad_simulation_options_exit_2_with_a_message(sim_build, capsys, options, message):
    with pytest.raises(SystemExit) as exited:
        main([*options, "--build-dir", str(sim_build), "--dry-run", "--", *GRAPH])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(not SIM.exists(), reason=f"{SIM} not built (no SimGrid?)")
def test_real_simulated_sweep_gives_a_metg_per_system(tmp_path):
    assert main(["--systems", "mpi,taskgrid_spmd", "--sim-nodes", "2", "--sim-cores-per-node",
                 "1", "--min-exp", "3", "--max-exp", "12", "--build-dir", str(BUILD),
                 "--out-dir", str(tmp_path), "--", "-type", "stencil_1d", "-steps", "20",
                 "-width", "2", "-kernel", "compute_bound"]) == 0
    doc = json.loads((tmp_path / "metg.json").read_text())
    for system in ("mpi", "taskgrid_spmd"):
        assert doc["metg"][system]["headline"]["metg_us"] > 0, doc["metg"][system]
    # The platform's peak: 2 nodes x 1 core x 5.1e10 FLOP/s.
    assert doc["config"]["peak_value"] == pytest.approx(2 * 5.1e10)
