"""The device kit's runner (scripts/device_kit/run.py) without running any program:
the step driver's budget and error handling, and the report from synthetic outcomes."""
import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


run = load("device_kit_run", ROOT / "scripts" / "device_kit" / "run.py")
pack = load("device_kit_pack", ROOT / "scripts" / "device_kit" / "pack.py")


def make_runner(budget=100.0, emulated=True):
    args = argparse.Namespace(emulated=emulated, budget=budget, scale=1.0)
    runner = run.Runner(args)
    runner.preflight = {"host": "h", "cores": 2, "load_before": "0 0 0",
                        "mpi": {"launcher": "mpiexec.hydra", "two_ranks_ok": True, "detail": "ok"},
                        "libraries_missing": {}, "nccl": None, "matplotlib": False,
                        "python": "3", "gpu": "none", "kit": {"notes": ["a note"],
                                                              "left_out": []}}
    return runner


def test_steps_run_in_order_and_report_skips_failures_and_bugs(monkeypatch):
    runner = make_runner()
    calls = []

    def ok(out, budget):
        calls.append("conformance")
        out.figures["conformance_tests_passed"] = 3

    def skip(out, budget):
        raise run.Skip("no GPU here")

    def fail(out, budget):
        raise run.Failed("METG sweep 'gpu' failed: boom")

    def bug(out, budget):
        raise KeyError("metg")

    monkeypatch.setattr(runner, "step_conformance", ok)
    monkeypatch.setattr(runner, "step_nccl", skip)
    monkeypatch.setattr(runner, "step_gpu_peak", fail)
    monkeypatch.setattr(runner, "step_gpu_metg", bug)
    runner.execute(["conformance", "nccl", "gpu_peak", "gpu_metg"])
    status = {name: (o.status, o.reason) for name, o in runner.outcomes.items()}
    assert calls == ["conformance"]
    assert status["conformance"] == ("ok", "")
    assert status["nccl"] == ("skipped", "no GPU here")
    assert status["gpu_peak"] == ("failed", "METG sweep 'gpu' failed: boom")
    assert status["gpu_metg"] == ("failed", "KeyError: 'metg'")


def test_a_step_that_runs_out_of_time_is_stopped_and_later_steps_skipped(monkeypatch):
    runner = make_runner(budget=30.0)

    def slow(out, budget):
        runner.deadline -= 100  # as if the step had used the whole run's time
        raise run.Stopped("METG sweep 'cpu-np16' did not finish within 20 s")

    monkeypatch.setattr(runner, "step_scaling", slow)
    runner.execute(["scaling", "offload"])
    assert runner.outcomes["scaling"].status == "stopped"
    assert runner.outcomes["offload"].status == "skipped"
    assert "budget (30 s) is used up" in runner.outcomes["offload"].reason


def test_report_shows_figures_and_reasons(tmp_path):
    runner = make_runner()
    scaling = run.Outcome(seconds=12.0)
    scaling.figures = {"ranks": [2, 16], "metg_us": {"mpi": {2: 1.5, 16: 2.0},
                                                     "taskgrid": {2: 6.0, 16: None}},
                       "growth": {"mpi": 2.0 / 1.5, "taskgrid": None},
                       "why_na": {"taskgrid at 16 ranks": "no point reaches 50% efficiency"}}
    skipped = run.Outcome(status="skipped", reason="omp_target is not in this kit")
    peak = run.Outcome()
    peak.figures = {"fp64_peak": 3.35e13, "mpi_omp_flops": 3.3e13,
                    "mpi_omp_fraction_of_peak": 3.3 / 3.35}
    runner.outcomes = {"gpu_peak": peak, "scaling": scaling, "offload": skipped}
    files = run.write_report(runner, tmp_path / "out")
    assert len(files) <= 8
    text = (tmp_path / "out" / "report.md").read_text()
    assert "| offload | skipped | 0 | omp_target is not in this kit |" in text
    assert "| mpi | 1.5 us | 2 us |" in text
    assert "| taskgrid | 6 us | n/a |" in text
    assert "no METG for taskgrid at 16 ranks: no point reaches 50% efficiency" in text
    assert "mpi_omp: 3.3e+13 FLOP/s (0.985 of peak)" in text
    assert "Emulated devices" in text
    document = json.loads((tmp_path / "out" / "report.json").read_text())
    assert document["steps"]["scaling"]["figures"]["metg_us"]["mpi"]["16"] == 2.0
    assert (tmp_path / "out" / "logs.tar.gz").exists()


def test_metg_values_and_reasons():
    document = {"metg": {"mpi": {"headline": {"metg_us": 1.2, "reason": ""}},
                         "taskgrid": {"headline": {"metg_us": None, "reason": "no point"}}}}
    assert run.metg_values(document) == {"mpi": 1.2, "taskgrid": None}
    assert run.metg_reasons(document) == {"taskgrid": "no point"}
    assert run.ratio(3.0, 1.5) == 2.0
    assert run.ratio(None, 1.5) is None and run.ratio(1.0, None) is None


def test_parsers():
    assert run.parse_rate("Elapsed Time 1 seconds\nFLOP/s 3.2e+13\nB/s 0\n") == 3.2e13
    assert run.parse_rate("no rate") is None
    assert run.parse_gtest("[==========] 16 tests ran.\n[  PASSED  ] 16 tests.\n") == 16


def test_pack_leaves_glibc_and_the_cxx_runtime_to_the_node():
    assert not pack.carried("libc.so.6")
    assert not pack.carried("libstdc++.so.6")
    assert not pack.carried("ld-linux-x86-64.so.2")
    assert pack.carried("libmpich.so.12")
    assert pack.carried("libucp.so.0")
    # Every program's steps are steps the runner knows, in the same order of value.
    assert pack.STEPS_BY_VALUE == run.STEP_NAMES
    for program in pack.PROGRAMS:
        assert set(program.steps) <= set(run.STEP_NAMES), program


def test_unknown_steps_are_refused(capsys):
    with pytest.raises(SystemExit):
        run.main(["--steps", "conformance,warp"])
    assert "unknown steps ['warp']" in capsys.readouterr().err


# ---- the GPU-only branches, with the programs' outputs faked ----------------

def gpu_runner(monkeypatch, outputs):
    """A runner in GPU mode whose programs answer from `outputs` (program -> text)."""
    runner = make_runner(emulated=False)
    runner.gpu = {"ok": True, "lanes": 270336, "fp64_peak": 3.345e13, "sms": 132}
    commands = []

    def fake_mpi(ranks, program, arguments, timeout, extra_env=None, name="", cpus=None):
        commands.append((ranks, program, list(arguments), dict(extra_env or {})))
        return 0, outputs[program], False

    monkeypatch.setattr(runner, "mpi", fake_mpi)
    monkeypatch.setattr(runner, "have", lambda program: True)
    return runner, commands


def test_gpu_peak_compares_both_systems_with_the_fp64_peak(monkeypatch):
    runner, commands = gpu_runner(monkeypatch, {
        "taskbench-mpi_omp": "FLOP/s 3.30e+13\n", "taskbench-taskgrid_spmd": "FLOP/s 3.20e+13\n"})
    out = run.Outcome()
    runner.step_gpu_peak(out, 20)
    assert out.figures["mpi_omp_flops"] == 3.3e13
    assert out.figures["taskgrid_spmd_fraction_of_peak"] == pytest.approx(3.2e13 / 3.345e13)
    ranks, program, arguments, env = commands[-1]
    assert "-gpu-lanes" in arguments and arguments[arguments.index("-gpu-lanes") + 1] == "270336"
    assert env == {"TASKGRID_DEVICE": "cuda"}
    assert {c[1] for c in commands} == {"taskbench-mpi_omp", "taskbench-taskgrid_spmd"}


def test_gpu_metg_uses_the_measured_peak_and_reports_ratios(monkeypatch):
    runner, _ = gpu_runner(monkeypatch, {})
    peak = run.Outcome()
    peak.figures["fp64_peak"] = 3.345e13
    runner.outcomes["gpu_peak"] = peak
    seen = {}

    def fake_metg(name, systems, cores, graph, extra, timeout, env=None):
        seen.update(name=name, systems=systems, cores=cores, extra=extra, env=env)
        return {"headline": {"peak": "fixed"}, "metg": {
            "mpi_omp": {"headline": {"metg_us": 90.0, "reason": ""}},
            "taskgrid": {"headline": {"metg_us": 180.0, "reason": ""}},
            "taskgrid_spmd": {"headline": {"metg_us": None, "reason": "no point"}}}}

    monkeypatch.setattr(runner, "metg", fake_metg)
    out = run.Outcome()
    runner.step_gpu_metg(out, 80)
    assert seen["systems"] == "mpi_omp,taskgrid,taskgrid_spmd" and seen["cores"] == 1
    assert seen["extra"][seen["extra"].index("--peak") + 1] == "3.345e+13"
    assert seen["env"] == {"TASKGRID_DEVICE": "cuda"}
    assert out.figures["ratio_to_mpi_omp"] == {"mpi_omp": 1.0, "taskgrid": 2.0}
    assert out.figures["why_na"] == {"taskgrid_spmd": "no point"}


def test_nccl_step_expects_nccl_at_one_rank_where_the_library_is_found(monkeypatch):
    text = "pgas device collectives: ok on 1 ranks, path nccl ()\n"
    runner, commands = gpu_runner(monkeypatch, {"taskgrid-pgas-device-check": text})
    runner.nccl = "/opt/nccl/libnccl.so.2"
    out = run.Outcome()
    with pytest.raises(run.Failed):  # the faked 2-rank run says nccl, not staged
        runner.step_nccl(out, 20)
    assert commands[0][2] == ["--expect-path", "nccl"]
    assert commands[0][3]["TASKGRID_NCCL_LIBRARY"] == "/opt/nccl/libnccl.so.2"
    assert commands[1][0] == 2 and commands[1][2] == ["--expect-path", "staged"]
    assert [c["ok"] for c in out.checks] == [True, False]


def test_gpu_steps_are_skipped_without_a_gpu():
    runner = make_runner(emulated=False)
    runner.gpu = {"ok": False, "error": "cudaGetDeviceCount: error 100, 0 devices"}
    runner.execute(["conformance", "gpu_peak", "transfers"])
    for name in ("conformance", "gpu_peak", "transfers"):
        assert runner.outcomes[name].status == "skipped"
        assert "no usable GPU: cudaGetDeviceCount: error 100" in runner.outcomes[name].reason


def test_scaling_keeps_the_rank_counts_that_ran_when_a_larger_one_runs_out_of_time(monkeypatch):
    runner, _ = gpu_runner(monkeypatch, {})
    sizes = []

    def fake_metg(name, systems, cores, graph, extra, timeout, env=None):
        sizes.append((cores, timeout))
        if cores == 8:
            raise run.Stopped(f"METG sweep '{name}' did not finish within {timeout:.0f} s")
        return {"metg": {"mpi": {"headline": {"metg_us": 1.0 * cores, "reason": ""}},
                         "taskgrid": {"headline": {"metg_us": 5.0 * cores, "reason": ""}}}}

    monkeypatch.setattr(runner, "metg", fake_metg)
    runner.execute(["scaling"])
    out = runner.outcomes["scaling"]
    assert out.status == "stopped"
    assert out.figures["ranks"] == [2, 4]
    assert out.figures["metg_us"]["taskgrid"] == {2: 10.0, 4: 20.0}
    assert "8 ranks: METG sweep 'cpu-np8' did not finish" in out.reason
    assert [c for c, _ in sizes] == [2, 4, 8]
    # Each size gets an equal share of what is left: the first a quarter of the step's budget.
    assert sizes[0][1] == pytest.approx(95 / 4, rel=0.05)


def test_every_size_of_the_sweep_steps_gets_a_share_it_can_start(monkeypatch):
    # On an H200 the offload step's 40 s gave its first size 10 s, under the 15 s a sweep
    # needs to start: no size ran. With sweeps that take no time, every size must run.
    runner, _ = gpu_runner(monkeypatch, {})
    runner.deadline += 330 - runner.args.budget  # a whole run's budget
    ran = []

    def fake_metg(name, systems, cores, graph, extra, timeout, env=None):
        ran.append(name)
        return {"metg": {"mpi_omp": {"headline": {"metg_us": 1.0, "reason": ""}}}}

    monkeypatch.setattr(runner, "metg", fake_metg)
    runner.execute(["scaling", "offload"])
    assert runner.outcomes["scaling"].status == "ok", runner.outcomes["scaling"].reason
    assert runner.outcomes["offload"].status == "ok", runner.outcomes["offload"].reason
    assert ran == [f"cpu-np{n}" for n in (2, 4, 8, 16)] + [f"offload-np{n}" for n in (2, 4, 8, 16)]


HOP_OUTPUT = """hop bench: spmd mode, 2 ranks (chain on 0 and 1), 1000 hops x 5 rounds, medians
     bytes  taskgrid us/hop   mpi us/one-way    ratio  goal 1.5x+0.3
         8            1.200            0.500     2.40        not met
     65536           20.000           18.000     1.11            met
hop bench: ok (every chain's count checked)
"""


def test_engine_step_pins_two_cores_and_sets_the_ratios_31_asks_for(monkeypatch):
    runner, commands = gpu_runner(monkeypatch, {"taskgrid-hop-bench": HOP_OUTPUT})
    monkeypatch.setattr(runner, "mpi_ready", lambda: None)
    monkeypatch.setattr(runner, "two_cores", lambda: [0, 2])
    sweeps = []
    # METG per sweep label: mpi 2 us and taskgrid 5 us at 2 ranks, 3 runs with a spread.
    metg_by_label = {"2r-w2-run1": {"mpi": 2.0, "taskgrid_spmd": 5.0, "taskgrid": 6.0},
                     "2r-w2-run2": {"mpi": 1.0, "taskgrid_spmd": 4.0, "taskgrid": 7.0},
                     "2r-w2-run3": {"mpi": 3.0, "taskgrid_spmd": 6.0, "taskgrid": 8.0},
                     "2r-w16": {"mpi": 0.5, "taskgrid_spmd": 2.0, "taskgrid": None},
                     "3r-w3": {"taskgrid_spmd": 7.5, "taskgrid": 21.0},
                     "4r-w4": {"taskgrid_spmd": 10.0, "taskgrid": None}}

    def fake_metg(name, systems, cores, graph, extra, timeout, env=None, cpus=None):
        label = name.removeprefix("engine-")
        sweeps.append((label, systems, cores, extra, cpus))
        return {"metg": {s: {"headline": {"metg_us": v, "reason": "" if v else "no point"}}
                         for s, v in metg_by_label[label].items()}}

    monkeypatch.setattr(runner, "metg", fake_metg)
    runner.execute(["engine"])
    out = runner.outcomes["engine"]
    assert out.status == "ok", out.reason
    assert [c[1] for c in commands] == ["taskgrid-hop-bench"] * 2
    assert [c[2][1] for c in commands] == ["spmd", "cluster"]
    hop = out.figures["hop"]["spmd"][8]
    assert hop["ratio"] == pytest.approx(2.4) and hop["goal_us"] == pytest.approx(1.05)
    # Every sweep on the two pinned CPUs, as 2 cores; ranks given for 3 and 4 only.
    assert all(cores == 2 and cpus == [0, 2] for _, _, cores, _, cpus in sweeps)
    assert [label for label, *_ in sweeps] == list(metg_by_label)
    extra_3r = sweeps[4][3]
    assert "--ranks" in extra_3r and "taskgrid=3" in extra_3r and "mpi" not in sweeps[4][1]
    assert "--ranks" not in sweeps[0][3]
    summary = out.figures["summary"]
    assert summary["taskgrid_spmd"]["2r_w2_median_us"] == 5.0
    assert summary["taskgrid_spmd"]["2r_w2_spread_us"] == [4.0, 5.0, 6.0]
    assert summary["taskgrid_spmd"]["2r_w2_over_mpi"] == pytest.approx(2.5)
    assert summary["taskgrid_spmd"]["2r_w16_over_mpi"] == pytest.approx(4.0)
    assert summary["taskgrid_spmd"]["3r-w3_over_own_2r"] == pytest.approx(1.5)
    assert summary["taskgrid_spmd"]["4r-w4_over_own_2r"] == pytest.approx(2.0)
    assert summary["taskgrid"]["2r_w16_over_mpi"] is None
    assert "4r-w4_over_own_2r" not in summary["taskgrid"]
    assert "taskgrid at 4r-w4" in out.figures["why_na"]
    text = run.markdown(runner)
    assert "hop, spmd, 8 B: 1.2 us against MPI's one-way 0.5 us (2.4x" in text
    assert "| taskgrid_spmd | 5 us | 4 us | 6 us | 2 us | 7.5 us | 10 us |" in text


def test_engine_step_keeps_what_ran_when_its_time_runs_out(monkeypatch):
    runner, _ = gpu_runner(monkeypatch, {"taskgrid-hop-bench": HOP_OUTPUT})
    monkeypatch.setattr(runner, "mpi_ready", lambda: None)
    monkeypatch.setattr(runner, "two_cores", lambda: [0, 1])

    def fake_metg(name, systems, cores, graph, extra, timeout, env=None, cpus=None):
        if name.endswith("run2"):
            raise run.Stopped(f"METG sweep '{name}' did not finish within {timeout:.0f} s")
        return {"metg": {"mpi": {"headline": {"metg_us": 2.0, "reason": ""}},
                         "taskgrid_spmd": {"headline": {"metg_us": 6.0, "reason": ""}}}}

    monkeypatch.setattr(runner, "metg", fake_metg)
    runner.execute(["engine"])
    out = runner.outcomes["engine"]
    assert out.status == "stopped"
    assert list(out.figures["metg_us"]) == ["2r-w2-run1"]
    assert out.figures["summary"]["taskgrid_spmd"]["2r_w2_over_mpi"] == pytest.approx(3.0)


def test_two_cores_are_on_different_physical_cores_where_sysfs_says_so(monkeypatch, tmp_path):
    runner = make_runner()
    monkeypatch.setattr(run.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    siblings = {0: "0,1", 1: "0,1", 2: "2,3", 3: "2,3"}
    real_path = run.Path

    def fake_path(text):
        for cpu, value in siblings.items():
            if text == f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list":
                file = tmp_path / f"cpu{cpu}"
                file.write_text(value + "\n")
                return file
        return real_path(text)

    monkeypatch.setattr(run, "Path", fake_path)
    assert runner.two_cores() == [0, 2]
    monkeypatch.setattr(run.os, "sched_getaffinity", lambda pid: {5})
    with pytest.raises(run.Skip):
        runner.two_cores()


def test_plots_are_drawn_here_from_a_report_whose_node_had_no_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    runner = make_runner()
    scaling = run.Outcome()
    scaling.figures = {"ranks": [2, 4], "metg_us": {"mpi": {2: 1.5, 4: 1.7}}}
    runner.outcomes = {"scaling": scaling}
    sweep = runner.work / "metg" / "gpu"
    sweep.mkdir(parents=True)
    points = [{"system": "mpi_omp", "granularity_us": g, "efficiency_pct": {"fixed": e}}
              for g, e in ((10.0, 20.0), (100.0, 60.0), (1000.0, 95.0))]
    (sweep / "metg.json").write_text(json.dumps({
        "headline": {"peak": "fixed", "threshold": 0.5},
        "metg": {"mpi_omp": {}}, "points": points}))
    out = tmp_path / "report"
    run.write_report(runner, out)
    for png in out.glob("*.png"):
        png.unlink()
    drawn = run.replot(out)
    assert sorted(p.name for p in drawn) == ["metg-gpu.png", "metg-scaling.png"]
    assert all(p.stat().st_size > 1000 for p in drawn)
