"""Tests of tools/bcast_bench: parsing, tables and plot from synthetic results, --replot,
the netlab up/run/down sequence with a fake netlab, one real shared-memory run, and a real
netlab smoke test where the machine allows network namespaces."""

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bcast_bench as bb
from conftest import REPO_ROOT, TOOL_DIR

MiB = 1 << 20
BUILD = Path(os.environ.get("TASKGRID_BUILD_DIR", REPO_ROOT / "build"))
BINARY = BUILD / "bin" / "taskbench-taskgrid"


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as rows:
        return list(csv.DictReader(rows))


def synthetic(network="netlab", hosts=8, size=256 * MiB, strategy="tree", elapsed=1.0,
              status="ok", repetition=1) -> bb.Run:
    return bb.Run(network=network, rate="200mbit" if network == "netlab" else "", delay_us=0,
                  hosts=hosts, size=size, strategy=strategy, repetition=repetition,
                  status=status, elapsed=elapsed if status == "ok" else None, exit_code=0)


def synthetic_results() -> tuple[dict, list[bb.Run]]:
    """Two repetitions at 8 hosts (16 MiB, 256 MiB, 1 GiB) and one shared-memory group.
    At 256 MiB every goal holds; at 1 GiB pipeline is slower than mpi; one tree run failed."""
    times = {  # size -> strategy -> elapsed of repetition 1
        16 * MiB: {"none": 2.0, "p2p": 2.0, "mpi": 1.0, "tree": 1.0, "pipeline": 0.8, "auto": 0.8},
        256 * MiB: {"none": 30.0, "p2p": 32.0, "mpi": 8.0, "tree": 12.0, "pipeline": 7.0,
                    "auto": 7.5},
        1024 * MiB: {"none": 120.0, "p2p": 120.0, "mpi": 25.0, "tree": 50.0, "pipeline": 29.0,
                     "auto": 29.0},
    }
    runs = []
    for size, row in times.items():
        for strategy, elapsed in row.items():
            runs.append(synthetic(size=size, strategy=strategy, elapsed=elapsed))
            runs.append(synthetic(size=size, strategy=strategy, elapsed=elapsed * 1.5,
                                  repetition=2))
    runs.append(synthetic(size=16 * MiB, strategy="tree", status="failed", repetition=3))
    for strategy in ("none", "tree"):
        runs.append(synthetic(network=bb.SHARED_MEMORY, hosts=3, size=MiB, strategy=strategy,
                              elapsed=0.01))
    document = {"settings": {"strategies": list(bb.STRATEGIES), "repeat": 2,
                             "system": "taskgrid"}}
    return document, runs


def section(table: str, title: str) -> str:
    """The lines of one '## title' section of table.md."""
    return table.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def row(text: str, first_cell: str) -> list[str]:
    """The cells of the first table row of `text` that starts with `first_cell`."""
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{text}")


# ---------------------------------------------------------------- parsing

def test_parse_size_suffixes():
    assert bb.parse_size("16M") == 16 * MiB
    assert bb.parse_size("1G") == 1 << 30
    assert bb.parse_size("64k") == 65536
    assert bb.parse_size("4MiB") == 4 * MiB
    assert bb.parse_size("65536") == 65536
    for bad in ("", "M", "1T", "1.5M", "0", "-1M", "16 MB extra"):
        with pytest.raises(ValueError):
            bb.parse_size(bad)


def test_format_size():
    assert [bb.format_size(n) for n in (1 << 30, 256 * MiB, 65536, 1000, 1536)] == \
        ["1 GiB", "256 MiB", "64 KiB", "1000 B", "1536 B"]


def test_parse_rate_and_timeout():
    assert bb.parse_rate("200mbit") == 200e6
    assert bb.parse_rate("1gbit") == 1e9
    assert bb.parse_rate("10mbps") == 80e6
    with pytest.raises(ValueError):
        bb.parse_rate("fast")
    # 8 hosts, 1 GiB at 25 MB/s: 3 x 8 x 1 GiB / 25e6 + 60 s.
    assert bb.run_timeout(1 << 30, 8, 25e6) == pytest.approx(3 * 8 * (1 << 30) / 25e6 + 60)


def test_schedule_interleaves_and_rotates():
    order = list(bb.schedule([1, 2], ["a", "b", "c"], 3))
    assert [s for size, _, s in order if size == 1] == list("abc" "bca" "cab")
    assert [rep for size, rep, _ in order if size == 2] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert [size for size, _, _ in order] == [1] * 9 + [2] * 9


def test_command_line_options():
    args = bb.option_parser().parse_args(["--hosts", "4,8", "--sizes", "16M,1G",
                                          "--strategies", "tree,pipeline", "--env", "A=1"])
    assert args.hosts == [4, 8] and args.sizes == [16 * MiB, 1 << 30]
    assert args.strategies == ["tree", "pipeline"] and args.env == ["A=1"]
    defaults = bb.option_parser().parse_args([])
    assert defaults.strategies == list(bb.STRATEGIES) and defaults.repeat == 1
    assert defaults.sizes == [16 * MiB, 64 * MiB, 256 * MiB, 1 << 30]
    assert defaults.rate == "200mbit" and defaults.out == "bcast-results"


@pytest.mark.parametrize("argv", [["--strategies", "tree,fast"], ["--hosts", "1"],
                                  ["--sizes", "12X"], ["--rate", "quick"]])
def test_bad_options_exit_2(argv):
    with pytest.raises(SystemExit) as exit_info:
        bb.option_parser().parse_args(argv)
    assert exit_info.value.code == 2


def test_help_runs_as_a_script():
    done = subprocess.run([sys.executable, str(TOOL_DIR / "bcast_bench.py"), "--help"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "--shared-memory" in done.stdout


def test_version_is_the_tools_version():
    # As a script, with the METG package found next to it: the version of its pyproject.
    pyproject = (TOOL_DIR.parent / "metg" / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1)
    done = subprocess.run([sys.executable, str(TOOL_DIR / "bcast_bench.py"), "--version"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == f"bcast_bench.py {version}\n"


# ---------------------------------------------------------------- table and plot

def test_table_best_times_and_ratios():
    document, runs = synthetic_results()
    table = bb.render_table(document, runs)
    netlab = section(table, "netlab 200mbit, 8 hosts")
    header = row(netlab, "size")
    assert header == ["size", *bb.STRATEGIES, "p2p/tree", "none/tree", "p2p/pipeline",
                      "mpi/pipeline"]
    cells = dict(zip(header, row(netlab, "256 MiB")))
    assert cells["tree"] == "12.00" and cells["p2p"] == "32.00"  # fastest of the repetitions
    assert cells["p2p/tree"] == "2.67" and cells["mpi/pipeline"] == "1.14"
    assert "1 of 37 runs failed or timed out" in netlab
    shared = section(table, "shared memory, 3 ranks")
    assert row(shared, "1 MiB")[1:3] == ["0.01000", "—"]  # none measured, p2p never ran


def test_goals_pass_and_fail_per_size():
    document, runs = synthetic_results()
    netlab = section(bb.render_table(document, runs), "netlab 200mbit, 8 hosts")
    goals = netlab.split("Goals at >= 256 MiB", 1)[1]
    assert row(goals, "256 MiB")[1:] == ["PASS (2.67x)", "PASS (2.50x)", "PASS (4.57x)",
                                        "PASS (1.14x)"]
    assert row(goals, "1 GiB")[1:] == ["PASS (2.40x)", "PASS (2.40x)", "PASS (4.14x)",
                                      "FAIL (0.86x)"]
    with pytest.raises(AssertionError):
        row(goals, "16 MiB")  # below the goals' threshold
    shared = section(bb.render_table(document, runs), "shared memory, 3 ranks")
    assert "Goals" not in shared and "No goals here" in shared


def test_goals_only_at_eight_hosts():
    runs = [synthetic(hosts=4, strategy=strategy, elapsed=1.0) for strategy in bb.STRATEGIES]
    four = section(bb.render_table({"settings": {}}, runs), "netlab 200mbit, 4 hosts")
    assert "Goals at" not in four
    assert "Ceilings at 4 hosts: p2p/tree 1.50, p2p/pipeline 3." in four


def test_goal_checks_missing_strategy_is_na():
    checks = bb.goal_checks({"tree": 1.0, "p2p": 3.0})
    assert [passed for _, _, passed in checks] == [True, None, None, None]
    assert bb.format_check(None, None) == "n/a"


def test_failed_cells():
    runs = [synthetic(strategy="tree", status="failed"),
            synthetic(strategy="mpi", status="timeout")]
    cells = dict(zip(["size", "none", "mpi", "tree"],
                     row("\n".join(bb.group_table(runs, ["none", "mpi", "tree"])), "256 MiB")))
    assert cells == {"size": "256 MiB", "none": "—", "mpi": "timeout", "tree": "failed"}


def test_plot_one_panel_per_group(tmp_path):
    pytest.importorskip("matplotlib")
    document, runs = synthetic_results()
    runs += [synthetic(hosts=4, size=size, strategy="tree", elapsed=2.0)
             for size in (16 * MiB, 1 << 30)]
    assert bb.render_plot(document, runs, tmp_path / "bcast.png")
    assert (tmp_path / "bcast.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [bb.group_title(key) for key in bb.group_runs(runs)] == \
        ["netlab 200mbit, 8 hosts", "shared memory, 3 ranks", "netlab 200mbit, 4 hosts"]


def test_json_round_trip_and_replot(tmp_path, capsys):
    document, runs = synthetic_results()
    bb.write_json(document, runs, tmp_path / "bcast.json")
    loaded_document, loaded_runs = bb.load_json(tmp_path / "bcast.json")
    assert loaded_runs == runs and loaded_document == document
    assert bb.main(["--replot", str(tmp_path)]) == 0
    table = (tmp_path / "table.md").read_text()
    assert table == bb.render_table(document, runs) + "\n"
    assert "FAIL (0.86x)" in capsys.readouterr().out
    pytest.importorskip("matplotlib")
    assert (tmp_path / "bcast.png").stat().st_size > 0


def test_replot_without_results_exit_2(tmp_path, capsys):
    assert bb.main(["--replot", str(tmp_path)]) == 2
    assert "cannot read" in capsys.readouterr().err


# ---------------------------------------------------------------- fake netlab

def bench_args(lab, *extra: str) -> list[str]:
    return ["--netlab", lab.netlab, "--build", lab.build, "--out", str(lab.out), *extra]


def commands(lab) -> list[str]:
    """The netlab subcommands called so far ('up 2', 'run', 'down', ...)."""
    return [" ".join(c["argv"][:2]) if c["argv"][0] == "up" else c["argv"][0]
            for c in lab.calls()]


def test_netlab_sequence_and_command_line(fake_lab, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_EXIT", "255")  # hydra's exit after a bounded finalize: still good
    status = bb.main(bench_args(fake_lab, "--hosts", "2,3", "--sizes", "1K,2K",
                                "--strategies", "none,tree", "--rate", "1gbit",
                                "--delay-us", "5", "--env", "TASKGRID_BCAST_CHUNK=4096"))
    assert status == 0
    assert commands(fake_lab) == ["status", "status", "up 2", *["run"] * 4,
                                  "status", "down", "up 3", *["run"] * 4, "down"]
    ups = [c for c in fake_lab.calls() if c["argv"][0] == "up"]
    assert all(c["RATE"] == "1gbit" and c["DELAY_US"] == "5" for c in ups)
    first_run = next(c for c in fake_lab.calls() if c["argv"][0] == "run")
    program = first_run["argv"][2:]
    assert first_run["argv"][:2] == ["run", "--"]
    assert program[0] == str(Path(fake_lab.build, "bin", "taskbench-taskgrid").resolve())
    assert program[1:14] == ["-steps", "1", "-width", "2", "-type", "stencil_1d", "-kernel",
                             "empty", "-broadcast", "1024", "-taskgrid:warmup", "0", "-json"]
    expected_env = {"TASKGRID_BCAST": "none", "TASKGRID_THREADS": "1",
                    "TASKGRID_FINALIZE_TIMEOUT": "3", "TASKGRID_BCAST_CHUNK": "4096"}
    assert expected_env.items() <= first_run["env"].items()  # CTest adds TASKGRID_BUILD_DIR
    rows = read_csv(fake_lab.out / "runs.csv")
    assert len(rows) == 8 and {r["status"] for r in rows} == {"ok"}
    assert {r["mpiexec_exit"] for r in rows} == {"255"}
    assert [(r["hosts"], r["size_bytes"], r["strategy"]) for r in rows[:4]] == \
        [("2", "1024", "none"), ("2", "1024", "tree"), ("2", "2048", "none"),
         ("2", "2048", "tree")]
    assert rows[0]["network"] == "netlab" and rows[0]["rate"] == "1gbit"
    document = json.loads((fake_lab.out / "bcast.json").read_text())
    assert document["machine"]["nproc"] >= 1 and "uname" in document["machine"]
    assert document["settings"]["hosts"] == [2, 3]
    assert all(len(run["load_before"]) == 3 and run["load_after"] for run in document["runs"])
    captured = capsys.readouterr()
    assert "## netlab 1gbit, +5 µs delay, 2 hosts" in captured.out  # the table is printed
    assert "[8/8] 3 hosts    2 KiB tree     rep 1:" in captured.err  # progress on stderr
    assert (fake_lab.out / "table.md").exists()


def test_failed_and_hung_runs_are_recorded(fake_lab, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "tree")
    monkeypatch.setenv("FAKE_HANG", "pipeline")
    status = bb.main(bench_args(fake_lab, "--hosts", "2", "--sizes", "1K",
                                "--strategies", "none,tree,pipeline", "--timeout", "2"))
    assert status == 1
    rows = {r["strategy"]: r for r in read_csv(fake_lab.out / "runs.csv")}
    assert rows["none"]["status"] == "ok"
    assert rows["tree"]["status"] == "failed" and rows["tree"]["mpiexec_exit"] == "1"
    assert rows["pipeline"]["status"] == "timeout" and rows["pipeline"]["mpiexec_exit"] == ""
    runs = json.loads((fake_lab.out / "bcast.json").read_text())["runs"]
    assert runs[1]["reason"] == "error: taskgrid: rank 1: fake failure"
    assert 2 <= runs[2]["wall"] < 30
    assert commands(fake_lab)[-1] == "down"
    table = (fake_lab.out / "table.md").read_text()
    assert row(table, "1 KiB")[2:4] == ["failed", "timeout"]


def test_error_line_fails_a_run_with_a_report():
    run = synthetic(hosts=2, size=1024)
    outcome = bb.Outcome(0, "Elapsed Time 1 seconds\nerror: taskbench: mismatch\n", 1.0, False)
    bb.judge(run, outcome, {"ranks": 2, "broadcast_bytes": 1024, "elapsed_seconds": 0.5})
    assert run.status == "failed" and run.reason == "error: taskbench: mismatch"
    run = synthetic(hosts=2, size=1024)
    bb.judge(run, bb.Outcome(0, "", 1.0, False),
             {"ranks": 1, "broadcast_bytes": 1024, "elapsed_seconds": 0.5})
    assert run.status == "failed" and "1 ranks" in run.reason


def test_down_runs_after_interrupt(fake_lab, monkeypatch):
    real_execute, count = bb.execute, []

    def interrupted_execute(*args, **kwargs):
        count.append(1)
        if len(count) == 2:
            raise KeyboardInterrupt
        return real_execute(*args, **kwargs)

    monkeypatch.setattr(bb, "execute", interrupted_execute)
    status = bb.main(bench_args(fake_lab, "--hosts", "2", "--sizes", "1K",
                                "--strategies", "none,tree,pipeline"))
    assert status == 130
    assert commands(fake_lab)[-2:] == ["run", "down"]
    assert len(read_csv(fake_lab.out / "runs.csv")) == 1  # the results so far are kept


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_down_runs_after_a_signal(fake_lab, monkeypatch, signum):
    """A real Ctrl-C (or SIGTERM) during a hung run: the run is killed, hosts come down."""
    monkeypatch.setenv("FAKE_HANG", "tree")
    proc = subprocess.Popen([sys.executable, str(TOOL_DIR / "bcast_bench.py"),
                             *bench_args(fake_lab, "--hosts", "2", "--sizes", "1K",
                                         "--strategies", "none,tree")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while commands(fake_lab).count("run") < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the hung run has started
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert commands(fake_lab)[-1] == "down"
    rows = read_csv(fake_lab.out / "runs.csv")
    assert [r["strategy"] for r in rows] == ["none"]
    assert "interrupted" in stderr


def test_down_runs_after_netlab_up_fails(fake_lab, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_NETLAB_FAIL_UP", "3")
    status = bb.main(bench_args(fake_lab, "--hosts", "2,3", "--sizes", "1K",
                                "--strategies", "none"))
    assert status == 1
    assert commands(fake_lab)[-3:] == ["down", "up 3", "down"]
    assert "netlab up 3 failed" in capsys.readouterr().err
    assert len(read_csv(fake_lab.out / "runs.csv")) == 1


def test_refuses_hosts_already_up(fake_lab, capsys):
    fake_lab.set_hosts(8)
    status = bb.main(bench_args(fake_lab, "--hosts", "4,8", "--sizes", "1K"))
    assert status == 2
    assert commands(fake_lab) == ["status"]  # nothing brought up, nothing taken down
    assert "8 hosts up already" in capsys.readouterr().err
    assert not fake_lab.out.exists()
    assert bb.main(bench_args(fake_lab, "--hosts", "4,8", "--sizes", "1K", "--reuse-hosts")) == 2
    assert commands(fake_lab) == ["status", "status"]


def test_reuse_hosts_when_the_count_matches(fake_lab):
    fake_lab.set_hosts(3)
    status = bb.main(bench_args(fake_lab, "--hosts", "3", "--sizes", "1K",
                                "--strategies", "tree", "--reuse-hosts"))
    assert status == 0
    assert commands(fake_lab) == ["status", "status", "run", "down"]


def test_missing_binary_exit_2(fake_lab, tmp_path, capsys):
    assert bb.main(bench_args(fake_lab, "--build", str(tmp_path / "nowhere"))) == 2
    assert "not found" in capsys.readouterr().err
    assert fake_lab.calls() == []


# ---------------------------------------------------------------- real runs

@pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} not built: run the CMake build first")
@pytest.mark.skipif(shutil.which(bb.MPIEXEC) is None, reason=f"{bb.MPIEXEC} not installed")
def test_real_shared_memory_run(tmp_path):
    out = tmp_path / "out"
    status = bb.main(["--shared-memory", "--hosts", "3", "--sizes", "64K,1M",
                      "--strategies", "none,tree,pipeline", "--repeat", "1",
                      "--build", str(BUILD), "--out", str(out)])
    rows = read_csv(out / "runs.csv")
    assert [(r["status"], r["hosts"]) for r in rows] == [("ok", "3")] * 6, rows
    assert status == 0
    assert all(float(r["elapsed_s"]) > 0 for r in rows)
    table = (out / "table.md").read_text()
    assert row(table, "64 KiB")[0] == "64 KiB" and row(table, "1 MiB")[0] == "1 MiB"
    assert "## shared memory, 3 ranks" in table


def netlab_unavailable() -> str | None:
    """Why the real netlab cannot be used here, or None."""
    path = bb.find_netlab(None)
    if path is None:
        return "netlab not found (looked at $NETLAB, ../shared/tools/netlab and PATH)"
    if os.geteuid() != 0:
        return "netlab needs root"
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed"
    try:
        present = bb.Netlab(path, "1gbit", 0).host_count()
    except RuntimeError as error:
        return f"netlab status failed: {error}"
    if present:
        return f"netlab hosts are already up ({present}): someone is using the test bed"
    probe = f"bcastbench-probe-{os.getpid()}"
    added = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if added.returncode != 0:
        return f"the kernel refuses network namespaces (ip netns add: {added.stderr.strip()})"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


@pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} not built: run the CMake build first")
def test_real_netlab_smoke(tmp_path):
    reason = netlab_unavailable()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "out"
    status = bb.main(["--hosts", "3", "--sizes", "1M", "--rate", "1gbit",
                      "--build", str(BUILD), "--out", str(out)])
    rows = read_csv(out / "runs.csv")
    assert [r["status"] for r in rows] == ["ok"] * len(bb.STRATEGIES), rows
    assert status == 0
    assert bb.Netlab(bb.find_netlab(None), "1gbit", 0).host_count() == 0  # taken down
