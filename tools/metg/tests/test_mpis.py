"""Systems from two MPI builds: NAME@openmpi, starpu, and the `mpi` column of the outputs.

Two fake build directories (build/ for MPICH, build-openmpi/ for Open MPI) hold wrappers of
fake_taskbench.py; each binary's task overhead is set by its wrapper, so that every system
has its own METG and the `vs mpi` ratios are known."""

import csv
import json
import stat
import sys
from pathlib import Path

import pytest

from taskgrid_metg import cli
from taskgrid_metg.cli import default_openmpi_mpiexec, main
from taskgrid_metg.peak import Peak
from taskgrid_metg.results import evaluate
from taskgrid_metg.runner import Report
from taskgrid_metg.sweep import RunRecord, plan_sweep
from taskgrid_metg.systems import (PER_CORE, SYSTEMS, SystemChoice, SystemSpec, make_launch,
                                   parse_system)
from taskgrid_metg import output
from taskgrid_metg.plot import draw

from conftest import TESTS_DIR

GRAPH = ["-kernel", "compute_bound", "-type", "stencil_1d", "-steps", "10", "-width", "2"]

# The real systems' shapes, each with its own binary (as in the real builds).
TWO_MPI_SYSTEMS = {
    spec.name: spec
    for spec in (
        SystemSpec("serial", "taskbench-serial"),
        SystemSpec("omp", "taskbench-omp", threads=PER_CORE, thread_flag="-worker"),
        SystemSpec("mpi", "taskbench-mpi", mpi=True, ranks=PER_CORE),
        SystemSpec("taskgrid", "taskbench-taskgrid", mpi=True, ranks=PER_CORE,
                   thread_env="TASKGRID_THREADS"),
        SystemSpec("starpu", "taskbench-starpu", mpi=True, ranks=PER_CORE,
                   thread_flag="-worker", env={"STARPU_SILENT": "1"}, builds=("openmpi",)),
    )
}

# Seconds per task of each binary, per build: METG is about twice the overhead.
OVERHEADS = {
    "build": {"serial": 1e-6, "omp": 1e-6, "mpi": 1e-6, "taskgrid": 2e-6},
    "build-openmpi": {"serial": 1e-6, "omp": 1e-6, "mpi": 2e-6, "taskgrid": 3e-6,
                      "starpu": 8e-6},
}


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def two_builds(tmp_path, monkeypatch):
    """build/ and build-openmpi/ with fake binaries, a fake mpiexec and a fake mpirun."""
    for build, overheads in OVERHEADS.items():
        bin_dir = tmp_path / build / "bin"
        bin_dir.mkdir(parents=True)
        for name, overhead in overheads.items():
            _script(bin_dir / f"taskbench-{name}",
                    f'#!/bin/sh\nFAKE_OVERHEAD={overhead} exec "{sys.executable}" '
                    f'"{TESTS_DIR / "fake_taskbench.py"}" "$@"\n')
        _script(bin_dir / "taskbench-peak",
                f'#!/bin/sh\nexec "{sys.executable}" "{TESTS_DIR / "fake_peak.py"}" "$@"\n')
    for name, script in (("fake-mpiexec", "fake_mpiexec.py"), ("fake-mpirun", "fake_mpirun.py")):
        _script(tmp_path / name, f'#!/bin/sh\nexec "{sys.executable}" "{TESTS_DIR / script}" "$@"\n')
    for name in ("FAKE_RANKS", "FAKE_NO_JSON", "FAKE_FAIL_ITER", "FAKE_OVERHEAD", "FAKE_RATE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(root: Path, *options, openmpi_build="build-openmpi", graph=GRAPH):
    argv = ["--build-dir", str(root / "build"), "--mpiexec", str(root / "fake-mpiexec"),
            "--openmpi-build-dir", str(root / openmpi_build),
            "--openmpi-mpiexec", f"{root / 'fake-mpirun'} --bind-to none --oversubscribe",
            "--out-dir", str(root / "out"), "--cores", "2", *options, "--", *graph]
    return main(argv, systems=TWO_MPI_SYSTEMS)


def error_of(capsys, *argv_and_systems):
    argv, systems = argv_and_systems
    with pytest.raises(SystemExit) as caught:
        main(argv, systems=systems)
    assert caught.value.code == 2
    return capsys.readouterr().err


# ---------------------------------------------------------------- names

@pytest.mark.parametrize("text, name, family", [
    ("mpi", "mpi", "mpich"), ("mpi@mpich", "mpi", "mpich"), ("mpi@openmpi", "mpi", "openmpi"),
    (" taskgrid_spmd@openmpi ", "taskgrid_spmd", "openmpi"), ("serial@openmpi", "serial", "openmpi"),
    ("starpu", "starpu", "openmpi"), ("starpu@openmpi", "starpu", "openmpi")])
def test_suffix_parsing(text, name, family):
    assert parse_system(text, SYSTEMS) == SystemChoice(text.strip(), name, family)


def test_plain_and_mpich_suffix_are_the_same_system():
    assert parse_system("mpi", SYSTEMS).key == parse_system("mpi@mpich", SYSTEMS).key
    assert parse_system("mpi", SYSTEMS).key != parse_system("mpi@openmpi", SYSTEMS).key


@pytest.mark.parametrize("text, message", [
    ("starpu@mpich", "system 'starpu' is built only with openmpi, there is no 'starpu@mpich': "
                     "use 'starpu' or 'starpu@openmpi'"),
    ("mpi@intel", "unknown MPI 'intel' for system 'mpi' (known: mpich, openmpi)"),
    ("mpi@", "system 'mpi@': no MPI after '@'"),
    ("nope@openmpi", "unknown system 'nope@openmpi'"),
])
def test_bad_names(text, message):
    with pytest.raises(ValueError) as caught:
        parse_system(text, SYSTEMS)
    assert message in str(caught.value)


def test_starpu_spec():
    spec = SYSTEMS["starpu"]
    assert (spec.mpi, spec.ranks, spec.thread_flag, spec.env) == (
        True, PER_CORE, "-worker", {"STARPU_SILENT": "1"})
    assert spec.builds == ("openmpi",) and spec.default_build == "openmpi"
    # make_launch without a family takes the spec's only build.
    launch = make_launch(spec, Path("build-openmpi"), 4, ["mpirun.openmpi"], threads=1)
    assert launch.family == launch.mpi_family == "openmpi"
    assert launch.command([], "f") == ["mpirun.openmpi", "-n", "4",
                                       "build-openmpi/bin/taskbench-starpu", "-worker", "1",
                                       "-json", "f"]
    assert launch.environment()["STARPU_SILENT"] == "1"
    with pytest.raises(ValueError, match="built only with openmpi"):
        make_launch(spec, Path("build"), 4, ["mpiexec.mpich"], family="mpich")


# ---------------------------------------------------------------- launchers

def test_openmpi_launcher_default_and_root_flag(monkeypatch):
    monkeypatch.setattr(cli.os, "geteuid", lambda: 1000)
    assert default_openmpi_mpiexec() == ["mpirun.openmpi", "--bind-to", "none", "--oversubscribe"]
    monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
    assert default_openmpi_mpiexec() == ["mpirun.openmpi", "--bind-to", "none", "--oversubscribe",
                                         "--allow-run-as-root"]


@pytest.mark.parametrize("euid, root_flag", [(0, True), (1000, False)])
def test_dry_run_picks_build_and_launcher_per_system(two_builds, capsys, monkeypatch, euid,
                                                     root_flag):
    monkeypatch.setattr(cli.os, "geteuid", lambda: euid)
    assert main(["--systems", "mpi,mpi@openmpi,taskgrid@mpich,starpu,omp@openmpi", "--cores", "2",
                 "--dry-run"], systems=TWO_MPI_SYSTEMS) == 0
    lines = {line.split(":")[0]: line for line in capsys.readouterr().out.splitlines()}
    root = " --allow-run-as-root" if root_flag else ""
    openmpi = f"mpirun.openmpi --bind-to none --oversubscribe{root} -n 2"
    assert "mpiexec.mpich -n 2 build/bin/taskbench-mpi -json" in lines["mpi"]
    assert f"{openmpi} build-openmpi/bin/taskbench-mpi -json" in lines["mpi@openmpi"]
    assert "mpiexec.mpich -n 2 build/bin/taskbench-taskgrid -json" in lines["taskgrid@mpich"]
    assert (f"{openmpi} build-openmpi/bin/taskbench-starpu -worker 1 -json"
            in lines["starpu"]) and "STARPU_SILENT=1" in lines["starpu"]
    # Not an MPI program: no launcher, the binary of the Open MPI build.
    assert " build-openmpi/bin/taskbench-omp -worker 2 -json" in lines["omp@openmpi"]
    assert "mpirun" not in lines["omp@openmpi"]


def test_given_openmpi_launcher_is_used_as_is(two_builds, capsys, monkeypatch):
    monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
    assert main(["--systems", "mpi@openmpi", "--cores", "2", "--dry-run",
                 "--openmpi-mpiexec", "/opt/ompi/bin/mpirun --bind-to core",
                 "--openmpi-build-dir", "/opt/b"], systems=TWO_MPI_SYSTEMS) == 0
    assert ("/opt/ompi/bin/mpirun --bind-to core -n 2 /opt/b/bin/taskbench-mpi -json"
            in capsys.readouterr().out)


def test_overrides_accept_suffixed_names(two_builds, capsys):
    assert main(["--systems", "mpi,mpi@openmpi,starpu", "--cores", "4", "--dry-run",
                 "--ranks", "mpi@openmpi=3", "--ranks", "starpu@openmpi=2",
                 "--threads", "starpu=2"], systems=TWO_MPI_SYSTEMS) == 0
    lines = {line.split(":")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "-n 4 build/bin/taskbench-mpi " in lines["mpi"]
    assert "-n 3 build-openmpi/bin/taskbench-mpi " in lines["mpi@openmpi"]
    assert "-n 2 build-openmpi/bin/taskbench-starpu -worker 2 " in lines["starpu"]


@pytest.mark.parametrize("options, message", [
    (["--systems", "starpu@mpich"], "system 'starpu' is built only with openmpi, there is no "
                                    "'starpu@mpich': use 'starpu' or 'starpu@openmpi'"),
    (["--systems", "mpi,mpi@mpich"], "--systems lists a system twice: 'mpi' and 'mpi@mpich'"),
    (["--systems", "starpu,starpu@openmpi"], "lists a system twice"),
    (["--systems", "mpi@openmpi", "--ranks", "mpi=2"], "--ranks mpi=2: 'mpi' is not one of --systems"),
    (["--systems", "mpi", "--ranks", "starpu@mpich=2"], "--ranks starpu@mpich=2: system 'starpu'"),
    (["--systems", "mpi@openmpi", "--openmpi-mpiexec", ""], "--openmpi-mpiexec is empty"),
    (["--systems", "mpi@mvapich"], "unknown MPI 'mvapich' for system 'mpi'"),
])
def test_bad_arguments(two_builds, capsys, options, message):
    assert message in error_of(capsys, [*options, "--dry-run"], TWO_MPI_SYSTEMS)


def test_missing_binary_in_the_openmpi_build(two_builds, capsys):
    with pytest.raises(SystemExit) as caught:
        run(two_builds, "--systems", "mpi,taskgrid@openmpi", openmpi_build="nowhere")
    assert caught.value.code == 2
    err = capsys.readouterr().err
    binary = two_builds / "nowhere" / "bin" / "taskbench-taskgrid"
    assert (f"missing binary {binary} for system 'taskgrid@openmpi' (Open MPI build "
            f"{two_builds / 'nowhere'})") in err
    assert "-DTASKGRID_MPI=openmpi" in err and "--openmpi-build-dir" in err


def test_missing_starpu_binary_names_the_openmpi_build(tmp_path, capsys):
    # The real table, nothing built: plain 'starpu' is looked for in the Open MPI build.
    err = error_of(capsys, ["--systems", "starpu", "--openmpi-build-dir", str(tmp_path / "ob")],
                   SYSTEMS)
    assert f"missing binary {tmp_path / 'ob' / 'bin' / 'taskbench-starpu'} for system 'starpu'" in err
    assert "point --openmpi-build-dir at the Open MPI build directory" in err


def test_missing_openmpi_launcher(two_builds, capsys):
    err = error_of(capsys, ["--systems", "mpi,mpi@openmpi,starpu",
                            "--build-dir", str(two_builds / "build"),
                            "--mpiexec", str(two_builds / "fake-mpiexec"),
                            "--openmpi-build-dir", str(two_builds / "build-openmpi"),
                            "--openmpi-mpiexec", "/no/such/mpirun --bind-to none"],
                   TWO_MPI_SYSTEMS)
    assert ("MPI launcher '/no/such/mpirun' not found (for mpi@openmpi, starpu); "
            "set --openmpi-mpiexec") in err


def test_missing_mpich_launcher_is_not_asked_for_openmpi_only_runs(two_builds, capsys):
    assert run(two_builds, "--systems", "mpi@openmpi", "--mpiexec", "/no/such/mpiexec",
               "--min-exp", "3", "--max-exp", "4", "--reps", "1", "--peak", "sweep") == 0
    err = error_of(capsys, ["--systems", "mpi", "--build-dir", str(two_builds / "build"),
                            "--mpiexec", "/no/such/mpiexec"], TWO_MPI_SYSTEMS)
    assert "MPI launcher '/no/such/mpiexec' not found (for mpi); set --mpiexec" in err


# ---------------------------------------------------------------- a sweep over both builds

def test_sweep_over_both_builds(two_builds, capsys):
    systems = "mpi,taskgrid,mpi@openmpi,taskgrid@openmpi,starpu,omp"
    assert run(two_builds, "--systems", systems, "--min-exp", "0", "--max-exp", "8",
               "--reps", "1") == 0
    doc = json.loads((two_builds / "out" / "metg.json").read_text())
    labels = systems.split(",")
    assert list(doc["systems"]) == labels and list(doc["metg"]) == labels

    # Which binary and launcher each system ran with.
    mpirun = str(two_builds / "fake-mpirun")
    commands = {run["system"]: run["command"] for run in doc["runs"]}
    assert commands["mpi"][0] == str(two_builds / "fake-mpiexec")
    assert commands["mpi"][3] == str(two_builds / "build" / "bin" / "taskbench-mpi")
    assert commands["mpi@openmpi"][:6] == [mpirun, "--bind-to", "none", "--oversubscribe",
                                           "-n", "2"]
    assert commands["mpi@openmpi"][6] == str(two_builds / "build-openmpi" / "bin" / "taskbench-mpi")
    assert commands["starpu"][6:9] == [
        str(two_builds / "build-openmpi" / "bin" / "taskbench-starpu"), "-worker", "1"]
    assert commands["omp"][0] == str(two_builds / "build" / "bin" / "taskbench-omp")

    # The `mpi` field everywhere.
    mpi = {"mpi": "mpich", "taskgrid": "mpich", "mpi@openmpi": "openmpi",
           "taskgrid@openmpi": "openmpi", "starpu": "openmpi", "omp": ""}
    assert {name: record["mpi"] for name, record in doc["systems"].items()} == mpi
    assert {name: record["build"] for name, record in doc["systems"].items()} == {
        **{name: family or "mpich" for name, family in mpi.items()}}
    assert doc["systems"]["starpu"]["system"] == "starpu"
    assert doc["systems"]["mpi@openmpi"]["launcher"] == [mpirun, "--bind-to", "none",
                                                         "--oversubscribe"]
    assert doc["systems"]["omp"]["launcher"] is None
    assert all(point["mpi"] == mpi[point["system"]] for point in doc["points"])
    assert all(run["mpi"] == mpi[run["system"]] for run in doc["runs"])
    assert doc["config"]["system_mpi"] == mpi
    rows = list(csv.DictReader(open(two_builds / "out" / "metg.csv")))
    assert list(rows[0])[:3] == ["system", "mpi", "iterations"]
    assert {row["system"]: row["mpi"] for row in rows} == mpi

    # Both builds and both launchers in the settings.
    config = doc["config"]
    assert config["build_dir"] == str(two_builds / "build")
    assert config["mpiexec"] == [str(two_builds / "fake-mpiexec")]
    assert config["openmpi_build_dir"] == str(two_builds / "build-openmpi")
    assert config["openmpi_mpiexec"] == [mpirun, "--bind-to", "none", "--oversubscribe"]
    assert config["mpi_builds"] == {
        "mpich": {"build_dir": config["build_dir"], "mpiexec": config["mpiexec"]},
        "openmpi": {"build_dir": config["openmpi_build_dir"], "mpiexec": config["openmpi_mpiexec"]}}

    # vs mpi: each MPI system against `mpi` of its own MPI family.
    metg = {name: doc["metg"][name]["headline"]["metg_us"] for name in labels}
    assert all(metg.values())
    expected = {"mpi": ("mpi", 1.0), "taskgrid": ("mpi", metg["taskgrid"] / metg["mpi"]),
                "mpi@openmpi": ("mpi@openmpi", 1.0),
                "taskgrid@openmpi": ("mpi@openmpi", metg["taskgrid@openmpi"] / metg["mpi@openmpi"]),
                "starpu": ("mpi@openmpi", metg["starpu"] / metg["mpi@openmpi"]),
                "omp": (None, None)}
    for name, (baseline, ratio) in expected.items():
        assert doc["vs_mpi"][name]["baseline"] == baseline
        assert doc["vs_mpi"][name]["ratio"] == pytest.approx(ratio)
    # The fakes' overheads: taskgrid 2x mpi with MPICH, 1.5x with Open MPI; starpu 4x.
    assert doc["vs_mpi"]["taskgrid"]["ratio"] == pytest.approx(2, rel=0.15)
    assert doc["vs_mpi"]["taskgrid@openmpi"]["ratio"] == pytest.approx(1.5, rel=0.15)
    assert doc["vs_mpi"]["starpu"]["ratio"] == pytest.approx(4, rel=0.15)

    # The table: a summary row per system with its MPI and ratio, distinct rows per MPI.
    out = capsys.readouterr().out
    summary = {line.split()[0]: line.split() for line in out.splitlines()
               if line.startswith("  ") and len(line.split()) in (3, 4)
               and line.split()[0] in labels}
    assert summary["mpi"][1:] == ["mpich", output.format_us(metg["mpi"] / 1e6), "1.00"]
    assert summary["mpi@openmpi"][1:] == ["openmpi", output.format_us(metg["mpi@openmpi"] / 1e6),
                                          "1.00"]
    assert summary["starpu"][1] == "openmpi"
    assert float(summary["taskgrid@openmpi"][3]) == pytest.approx(
        doc["vs_mpi"]["taskgrid@openmpi"]["ratio"], rel=1e-2)
    assert summary["omp"][1:] == ["-", output.format_us(metg["omp"] / 1e6)]   # no ratio
    assert "taskgrid@openmpi: 2 rank(s) x 1 thread(s) = 2 core(s), MPI openmpi" in out
    assert "  taskgrid@openmpi METG(50%) = " in out


def test_no_ratio_without_the_mpi_of_the_same_family(two_builds, capsys):
    assert run(two_builds, "--systems", "mpi,taskgrid@openmpi", "--min-exp", "0",
               "--max-exp", "8", "--reps", "1", "--peak", "sweep") == 0
    doc = json.loads((two_builds / "out" / "metg.json").read_text())
    assert doc["vs_mpi"]["mpi"] == {"baseline": "mpi", "ratio": 1.0}
    assert doc["vs_mpi"]["taskgrid@openmpi"] == {"baseline": None, "ratio": None}


# ---------------------------------------------------------------- outputs, synthetic

def synthetic_two_mpis():
    """mpi and taskgrid from each build, one core each; METG known from the overheads."""
    overhead = {"mpi": 1e-6, "taskgrid": 3e-6, "mpi@openmpi": 2e-6, "taskgrid@openmpi": 2e-6,
                "serial": 1e-6}
    launches = {}
    for label in overhead:
        choice = parse_system(label, SYSTEMS)
        launches[label] = make_launch(SYSTEMS[choice.name], Path(f"b-{choice.family}"), 1,
                                      [f"run-{choice.family}"], family=choice.family)
    records = []
    for planned in plan_sweep(list(overhead), 0, 8, reps=1):
        tasks, rate = 100, 1e9
        flops = tasks * (128 * planned.iterations + 64)
        elapsed = overhead[planned.system] * tasks + flops / rate
        records.append(RunRecord(planned, ["cmd"], Report(elapsed, tasks, flops, 0, "json"),
                                 elapsed))
    calibration = Peak("calibrated", "FLOP/s", "fake", {1: 1e9}, {1: [1e9]})
    machine = {"hostname": "h", "cpu_model": "cpu", "cores": 1,
               "loadavg_start": [0.1, 0, 0], "loadavg_end": [0.2, 0, 0]}
    return evaluate(records, launches, calibration, "auto", None, 1, 0.5, "linear",
                    {"graph_flags": []}, machine)


def test_per_family_ratio():
    results = synthetic_two_mpis()
    value = {name: results.headline(name).value for name in results.launches}
    assert results.baseline("taskgrid") == "mpi"
    assert results.baseline("taskgrid@openmpi") == "mpi@openmpi"
    assert results.baseline("serial") is None and results.vs_baseline("serial") is None
    assert results.vs_baseline("taskgrid") == pytest.approx(value["taskgrid"] / value["mpi"])
    assert results.vs_baseline("taskgrid@openmpi") == pytest.approx(
        value["taskgrid@openmpi"] / value["mpi@openmpi"])
    # Same overhead as its own baseline: 1, though 2x the MPICH `mpi`.
    assert results.vs_baseline("taskgrid@openmpi") == pytest.approx(1.0)
    assert results.vs_baseline("mpi@openmpi") == 1.0


def test_table_csv_json_and_legend_carry_the_mpi(tmp_path):
    results = synthetic_two_mpis()
    table = output.format_table(results)
    header = next(line for line in table.splitlines() if "vs mpi" in line)
    assert header.split() == ["system", "mpi", "METG(50%)", "µs", "vs", "mpi"]
    rows = {line.split()[0]: line.split()[1] for line in table.splitlines()
            if line.startswith("  ") and len(line.split()) in (3, 4)}
    assert rows == {"mpi": "mpich", "taskgrid": "mpich", "mpi@openmpi": "openmpi",
                    "taskgrid@openmpi": "openmpi", "serial": "-"}

    output.write_csv(results, tmp_path / "metg.csv")
    output.write_json(results, tmp_path / "metg.json")
    csv_rows = list(csv.DictReader(open(tmp_path / "metg.csv")))
    assert {row["system"]: row["mpi"] for row in csv_rows} == {
        "mpi": "mpich", "taskgrid": "mpich", "mpi@openmpi": "openmpi",
        "taskgrid@openmpi": "openmpi", "serial": ""}
    doc = json.loads((tmp_path / "metg.json").read_text())
    assert doc["systems"]["taskgrid@openmpi"]["binary"] == "b-openmpi/bin/taskbench-taskgrid"
    assert doc["systems"]["taskgrid@openmpi"]["launcher"] == ["run-openmpi"]
    assert doc["vs_mpi"]["taskgrid"]["baseline"] == "mpi"

    labels = [container.get_label() for container in draw(results).axes[0].containers]
    assert [label.split(":")[0] for label in labels] == list(results.launches)
    assert labels[0].endswith(" [mpich]") and labels[2].endswith(" [openmpi]")
    assert "[" not in labels[4]   # serial: no MPI
