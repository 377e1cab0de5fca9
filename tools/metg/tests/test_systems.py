from pathlib import Path

import pytest

from taskgrid_metg.systems import SYSTEMS, make_launch, resolve_layout


@pytest.mark.parametrize("name, ranks, threads", [
    ("serial", 1, 1), ("omp", 1, 16), ("mpi", 16, 1), ("mpi_omp", 1, 16),
    ("taskgrid", 16, 1), ("taskgrid_spmd", 16, 1), ("omp_target", 16, 1)])
def test_default_layouts_on_16_cores(name, ranks, threads):
    layout = resolve_layout(SYSTEMS[name], 16)
    assert (layout.ranks, layout.threads) == (ranks, threads)


def test_overriding_one_dimension_shares_the_node():
    assert resolve_layout(SYSTEMS["mpi_omp"], 16, ranks=2).threads == 8
    assert resolve_layout(SYSTEMS["taskgrid"], 16, threads=4).ranks == 4
    layout = resolve_layout(SYSTEMS["mpi_omp"], 16, ranks=2, threads=3)
    assert (layout.ranks, layout.threads, layout.cores_used) == (2, 3, 6)


def test_more_ranks_than_cores_are_charged_for_the_cores_they_share():
    # --cores 2 --ranks taskgrid=4: four ranks share two cores; the run is charged for two
    # (charging four would cap its efficiency at 50% and leave no METG at all).
    layout = resolve_layout(SYSTEMS["taskgrid"], 2, ranks=4)
    assert (layout.ranks, layout.oversubscribed, layout.cores_used) == (4, True, 2)
    layout = resolve_layout(SYSTEMS["taskgrid_spmd"], 2, ranks=3, threads=2)
    assert (layout.threads_charged, layout.cores_used) == (6, 2)
    layout = resolve_layout(SYSTEMS["mpi"], 2, ranks=2)
    assert (layout.oversubscribed, layout.cores_used) == (False, 2)
    # Fewer ranks than cores are charged for what they use.
    assert resolve_layout(SYSTEMS["mpi"], 16, ranks=4).cores_used == 4


def test_inapplicable_overrides_are_rejected():
    with pytest.raises(ValueError, match="not launched through MPI"):
        resolve_layout(SYSTEMS["serial"], 4, ranks=2)
    with pytest.raises(ValueError, match="single-threaded"):
        resolve_layout(SYSTEMS["mpi"], 4, threads=2)


def test_commands_and_environment():
    flags = ["-steps", "4", "-iter", "8"]
    mpi = make_launch(SYSTEMS["mpi"], Path("build"), 4, ["mpiexec.mpich"])
    assert mpi.command(flags, "r.json") == [
        "mpiexec.mpich", "-n", "4", "build/bin/taskbench-mpi", "-json", "r.json", *flags]
    omp = make_launch(SYSTEMS["omp"], Path("build"), 4, ["mpiexec.mpich"])
    assert omp.command(flags, "r.json") == [
        "build/bin/taskbench-omp", "-worker", "4", "-json", "r.json", *flags]
    hybrid = make_launch(SYSTEMS["mpi_omp"], Path("b"), 4, ["mpiexec.mpich", "-bind-to", "core"])
    assert hybrid.command([], "f")[:6] == [
        "mpiexec.mpich", "-bind-to", "core", "-n", "1", "b/bin/taskbench-mpi_omp"]
    assert hybrid.environment()["OMP_SCHEDULE"] == "static,1"
    grid = make_launch(SYSTEMS["taskgrid"], Path("build"), 4, ["mpiexec.mpich"])
    assert grid.environment()["TASKGRID_THREADS"] == "1"
    assert "-worker" not in grid.command([], "f")


def test_device_gpu_adds_each_systems_option():
    flags = ["-kernel", "gpu_compute_bound", "-iter", "8"]
    hybrid = make_launch(SYSTEMS["mpi_omp"], Path("b"), 4, ["mpiexec.mpich"], device="gpu")
    assert hybrid.command(flags, "f") == [
        "mpiexec.mpich", "-n", "1", "b/bin/taskbench-mpi_omp", "-worker", "4", "-device", "gpu",
        "-json", "f", *flags]
    for name in ("taskgrid", "taskgrid_spmd"):
        grid = make_launch(SYSTEMS[name], Path("b"), 2, ["mpiexec.mpich"], device="gpu")
        command = grid.command(flags, "f")
        assert command[command.index("-taskgrid:device") + 1] == "gpu"
    # cpu (the default) adds nothing.
    plain = make_launch(SYSTEMS["taskgrid"], Path("b"), 2, ["mpiexec.mpich"])
    assert "-taskgrid:device" not in plain.command(flags, "f")


def test_device_gpu_is_refused_for_systems_without_it():
    for name in ("serial", "omp", "mpi"):
        with pytest.raises(ValueError, match=f"system '{name}' has no GPU option"):
            make_launch(SYSTEMS[name], Path("b"), 2, ["mpiexec.mpich"], device="gpu")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        make_launch(SYSTEMS["taskgrid"], Path("b"), 2, ["mpiexec.mpich"], device="tpu")


def test_omp_target_runs_with_the_offload_plugin(monkeypatch):
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    target = make_launch(SYSTEMS["omp_target"], Path("b"), 3, ["mpiexec.mpich"])
    assert target.command([], "f")[:4] == ["mpiexec.mpich", "-n", "3", "b/bin/taskbench-omp_target"]
    env = target.environment()
    assert env["LD_LIBRARY_PATH"] == "b/lib"
    assert env["OMP_TARGET_OFFLOAD"] == "MANDATORY"
    assert env["LIBOMP_USE_HIDDEN_HELPER_TASK"] == "0"
    # A library path the caller has (the device kit's) stays, after the plugin's folder.
    monkeypatch.setenv("LD_LIBRARY_PATH", "/kit/lib")
    assert target.environment()["LD_LIBRARY_PATH"] == "b/lib:/kit/lib"


def test_host_not_charged_charges_only_the_device_ranks():
    target = make_launch(SYSTEMS["omp_target"], Path("b"), 3, ["mpiexec.mpich"],
                         host_not_charged=True)
    assert (target.layout.ranks, target.layout.cores_used) == (3, 2)
    assert target.command([], "f")[:3] == ["mpiexec.mpich", "-n", "3"]
    # Only offload systems have a host rank; the others are charged as before.
    mpi_omp = make_launch(SYSTEMS["mpi_omp"], Path("b"), 3, ["mpiexec.mpich"],
                          host_not_charged=True)
    assert mpi_omp.layout.cores_used == 3
    with pytest.raises(ValueError, match="2 or more ranks"):
        make_launch(SYSTEMS["omp_target"], Path("b"), 1, ["mpiexec.mpich"], host_not_charged=True)
