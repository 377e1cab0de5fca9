"""End-to-end runs of the CLI against the fake systems of conftest.py."""

import json
import re

import pytest

from taskgrid_metg.cli import main

from conftest import FAKE_SYSTEMS

OVERHEAD, RATE = 1e-6, 1e9      # the fake's cost model: seconds per task, FLOP/s per core
GRAPH = ["-kernel", "compute_bound", "-type", "stencil_1d", "-steps", "10", "-width", "2"]
GPU_GRAPH = ["-kernel", "gpu_compute_bound", "-gpu-lanes", "4096", "-steps", "10", "-width", "2"]


def run(fake_build, *options, graph=GRAPH):
    argv = ["--build-dir", str(fake_build.build_dir), "--out-dir", str(fake_build.out_dir),
            "--mpiexec", fake_build.mpiexec, "--cores", "2", *options, "--", *graph]
    return main(argv, systems=FAKE_SYSTEMS)


def load(fake_build):
    return json.loads((fake_build.out_dir / "metg.json").read_text())


def analytic_metg(interp):
    """The METG rule applied by hand to the fake's closed form.

    Task duration g = OVERHEAD + w with w = (128 n + 64) / RATE, efficiency w / g against
    the calibrated peak RATE. 50% falls between n = 8 (52.1%) and n = 4 (36.5%).
    """
    def point(n):
        work = (128 * n + 64) / RATE
        return OVERHEAD + work, work / (OVERHEAD + work)
    (g1, e1), (g2, e2) = point(8), point(4)
    fraction = (0.5 - e1) / (e2 - e1)
    if interp == "linear":
        return g1 + fraction * (g2 - g1)
    return g1 * (g2 / g1) ** fraction


def test_fake_sweep_matches_analytic_metg(fake_build, capsys):
    assert run(fake_build, "--systems", "fake,fake_mpi,fake_omp", "--min-exp", "0",
               "--max-exp", "8", "--reps", "1") == 0
    doc = load(fake_build)
    assert doc["complete"] and doc["headline"]["peak"] == "calibrated"
    # Calibrated once per core count in use: 2 (fake_mpi, fake_omp) and 1 (fake).
    assert doc["peaks"]["calibrated"]["per_core"] == {"2": RATE, "1": RATE}
    assert [len(doc["peaks"]["calibrated"]["samples"][n]) for n in ("2", "1")] == [3, 3]
    assert doc["peaks"]["calibrated"]["node"] == pytest.approx(2 * RATE)
    for system in ("fake", "fake_mpi", "fake_omp"):
        for interp in ("linear", "log"):
            result = doc["metg"][system]["calibrated"][interp]
            assert result["status"] == "ok" and result["method"] == "interpolated"
            assert result["metg_us"] == pytest.approx(analytic_metg(interp) * 1e6, rel=1e-9)
            assert result["chosen"]["iterations"] == 8 and result["next"]["iterations"] == 4
        # The continuous curve crosses 50% at g = 2 x OVERHEAD.
        assert doc["metg"][system]["headline"]["metg_us"] == pytest.approx(2.0, abs=0.05)
        # The sweep-best peak (97% of RATE here) scales efficiencies up: smaller METG.
        assert doc["metg"][system]["sweep"]["linear"]["metg_us"] < 2.0
    assert doc["systems"]["fake_mpi"]["ranks"] == 2 and doc["systems"]["fake_omp"]["threads"] == 2
    assert doc["systems"]["fake"]["cores_used"] == 1

    # Interleaving: per size and repetition, the systems run in turn.
    order = [(run["system"], run["iterations"]) for run in doc["runs"][:6]]
    assert order == [("fake", 256), ("fake_mpi", 256), ("fake_omp", 256),
                     ("fake", 128), ("fake_mpi", 128), ("fake_omp", 128)]
    assert doc["runs"][1]["command"][:3] == [fake_build.mpiexec, "-n", "2"]

    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if re.match(r"\[\d+/", line)]
    assert lines[0].startswith("[1/27] fake iter=2^8 rep 1/1: ") and "(ETA " in lines[0]
    assert lines[-1].startswith("[27/27] ") and "ETA" not in lines[-1]
    assert "fake_mpi       METG(50%) = 2.01" in captured.out
    for name in ("metg.csv", "metg.json", "metg.png"):
        assert (fake_build.out_dir / name).stat().st_size > 0


def test_default_repetition_rule_and_log_headline(fake_build):
    assert run(fake_build, "--systems", "fake_grid", "--min-exp", "2", "--max-exp", "5",
               "--interp", "log", "--peak", "sweep") == 0
    doc = load(fake_build)
    assert [(p["iterations"], p["reps"]) for p in doc["points"]] == [(32, 1), (16, 2), (8, 3), (4, 4)]
    assert doc["headline"] == {**doc["headline"], "peak": "sweep", "interp": "log"}
    assert doc["metg"]["fake_grid"]["headline"] == doc["metg"]["fake_grid"]["sweep"]["log"]
    assert doc["systems"]["fake_grid"]["env"]["TASKGRID_THREADS"] == "1"


def test_memory_bound_sweep_uses_bytes_and_sweep_peak(fake_build):
    graph = ["-kernel", "memory_bound", "-scratch", "1024", "-sample", "16", "-steps", "10",
             "-width", "2", "-and", "-kernel", "memory_bound", "-scratch", "1024", "-steps", "5"]
    assert run(fake_build, "--systems", "fake", "--min-exp", "1", "--max-exp", "9", "--reps", "1",
               graph=graph) == 0
    doc = load(fake_build)
    assert doc["metric"] == "bytes" and doc["rate_unit"] == "B/s"
    assert doc["headline"]["peak"] == "sweep"
    assert "no FLOP/s calibration for kernel memory_bound" in doc["peaks"]["calibrated"]["detail"]
    # 20 + 20 tasks (the second graph has the default width 4), scratch x iter / sample each
    assert doc["points"][0]["total_bytes"] == 40 * 1024 * 512 // 16
    assert doc["metg"]["fake"]["headline"]["status"] == "ok"


def test_failed_run_stops_the_sweep_and_keeps_partial_results(fake_build, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_FAIL_ITER", "16")
    assert run(fake_build, "--systems", "fake", "--min-exp", "3", "--max-exp", "6", "--reps", "1") == 1
    err = capsys.readouterr().err
    assert "fake run failed: exited with status 3" in err
    assert "taskbench-fake -json" in err and "-iter 16" in err and "simulated crash" in err
    doc = load(fake_build)
    assert not doc["complete"] and "exited with status 3" in doc["aborted_reason"]
    assert [p["iterations"] for p in doc["points"]] == [64, 32]
    assert doc["metg"]["fake"]["headline"]["status"] == "n/a"


def test_refusal_is_reported_not_raised(fake_build, capsys):
    # Only large tasks: every point is above 50%, so no METG can be given.
    assert run(fake_build, "--systems", "fake", "--min-exp", "10", "--max-exp", "11", "--reps", "1") == 0
    out = capsys.readouterr().out
    assert "METG(50%) = n/a (no point below 50% efficiency" in out


def test_dry_run_prints_commands(fake_build, capsys):
    assert run(fake_build, "--systems", "fake_mpi,fake_omp", "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"{fake_build.mpiexec} -n 2 " in out and "-worker 2" in out and "-iter N" in out
    # Sizes 2^16 .. 2^4 with min(s+1, 5) repetitions: 1+2+3+4+5*9 = 55 per system.
    assert "110 runs" in out


def test_dry_run_with_device_gpu_adds_the_systems_device_option(fake_build, capsys):
    assert run(fake_build, "--systems", "fake_gpu", "--device", "gpu", "--dry-run",
               graph=GPU_GRAPH) == 0
    out = capsys.readouterr().out
    assert "-fake:device gpu" in out and "-kernel gpu_compute_bound" in out


@pytest.mark.parametrize("options, graph, message", [
    (["--systems", "fake,nope"], GRAPH, "unknown system 'nope'"),
    (["--systems", "fake", "--min-exp", "9", "--max-exp", "3"], GRAPH, "--min-exp (9) is greater"),
    (["--systems", "fake"], [*GRAPH, "-iter", "4"], "must not contain -iter"),
    (["--systems", "fake", "--peak", "calibrate"], ["-kernel", "busy_wait"],
     "--peak calibrate is not possible: no FLOP/s calibration for kernel busy_wait"),
    (["--systems", "fake", "--ranks", "fake=2"], GRAPH, "not launched through MPI"),
    (["--systems", "fake", "--threshold", "50"], GRAPH, "--threshold must be a fraction"),
    (["--systems", "fake", "--peak", "fast"], GRAPH, "--peak must be auto"),
    (["--systems", "fake", "--reps", "0"], GRAPH, "--reps must be >= 1"),
    (["--systems", "fake_gpu,fake", "--device", "gpu"], GPU_GRAPH, "system 'fake' has no GPU option"),
    (["--systems", "fake_gpu", "--device", "gpu"], GRAPH,
     "--device gpu runs the gpu_compute_bound kernel only, the graph flags use compute_bound"),
    (["--systems", "fake_gpu", "--device", "gpu"], [], "--device gpu needs graph flags"),
    (["--systems", "fake_gpu", "--device", "gpu", "--peak", "calibrate"], GPU_GRAPH,
     "--peak calibrate measures CPU cores"),
    (["--systems", "fake_gpu", "--device", "tpu"], GPU_GRAPH, "invalid choice: 'tpu'"),
])
def test_bad_arguments_exit_2_with_a_message(fake_build, capsys, options, graph, message):
    with pytest.raises(SystemExit) as caught:
        run(fake_build, *options, graph=graph)
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_binary_names_the_path_and_the_build(tmp_path, capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--systems", "serial,mpi", "--build-dir", str(tmp_path / "nobuild")])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert f"missing binary {tmp_path / 'nobuild' / 'bin' / 'taskbench-serial'}" in err
    assert "build the project first" in err
