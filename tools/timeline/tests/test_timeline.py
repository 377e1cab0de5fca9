"""The timeline tool on hand-written traces (no TaskGrid run needed)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "taskgrid_timeline.py"
sys.path.insert(0, str(TOOL.parent))
import taskgrid_timeline  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def span(pid, tid, name, ts, dur, cat="task", **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def small_trace():
    return {"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "rank 0"}},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "rank 1"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 0, "args": {"name": "engine"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "worker 1"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 0, "args": {"name": "engine"}},
        span(0, 0, "stencil", 100.0, 50.0, id=1),
        span(0, 1, "stencil", 110.0, 40.0, id=2),
        span(0, 0, "send", 150.0, 0.0, cat="comm", id=7, peer=1, bytes=8),
        span(1, 0, "receive", 120.0, 40.0, cat="comm", id=7, peer=0, bytes=8),
        span(1, 0, "reduce \ufffd", 160.0, 20.0, id=3),
        {"ph": "s", "cat": "transfer", "name": "transfer", "id": 1, "pid": 0, "tid": 0, "ts": 150.0},
        {"ph": "f", "bp": "e", "cat": "transfer", "name": "transfer", "id": 1, "pid": 1, "tid": 0,
         "ts": 159.0},
        # A flow with one end only is ignored, not drawn.
        {"ph": "s", "cat": "dependency", "name": "dependency", "id": 2, "pid": 0, "tid": 0,
         "ts": 149.0},
    ], "displayTimeUnit": "ns"}


def run_tool(*args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def test_rows_labels_and_flows():
    timeline = taskgrid_timeline.build_timeline(small_trace()["traceEvents"])
    assert timeline.rows == [(0, 0), (0, 1), (1, 0)]
    assert timeline.labels[(0, 1)] == "rank 0 / worker 1"
    assert timeline.labels[(1, 0)] == "rank 1 / engine"
    assert timeline.flows == [((0, 0), 150.0, (1, 0), 159.0)]
    assert sum(s.category == "comm" for s in timeline.spans) == 2


def test_draws_a_png_and_prints_its_rows(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(small_trace()))
    out = tmp_path / "t.png"
    result = run_tool(trace, "-o", out, "--flows", "--print-rows")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == PNG_SIGNATURE
    lines = result.stdout.splitlines()
    assert lines[0] == "rows: 3"
    assert lines[1:] == ["rank 0 / engine", "rank 0 / worker 1", "rank 1 / engine"]


def test_default_output_name_next_to_the_trace(tmp_path):
    trace = tmp_path / "run.json"
    trace.write_text(json.dumps(small_trace()["traceEvents"]))  # a bare list is accepted too
    assert run_tool(trace).returncode == 0
    assert (tmp_path / "run.png").read_bytes()[:8] == PNG_SIGNATURE


def test_many_names_share_the_other_colour(tmp_path):
    events = [span(0, 0, f"task{i % 30}", float(i), 0.5, id=i) for i in range(3000)]
    trace = tmp_path / "many.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    result = run_tool(trace, "-o", tmp_path / "many.png", "--legend", "5", "--print-rows")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "rows: 1"


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    ("{not json", "is not JSON"),
    ('{"events": []}', "no \"traceEvents\" list"),
    ('{"traceEvents": []}', "no spans to draw"),
    ('{"traceEvents": [{"ph": "X", "pid": 0, "tid": 0, "name": "a"}]}', "no numeric \"ts\""),
])
def test_bad_files_give_clear_errors(tmp_path, content, message):
    trace = tmp_path / "bad.json"
    if content is not None:
        trace.write_text(content)
    result = run_tool(trace, "-o", tmp_path / "bad.png")
    assert result.returncode == 2
    assert result.stderr.startswith("taskgrid_timeline: error: ")
    assert message in result.stderr
    assert not (tmp_path / "bad.png").exists()


def test_help_and_version():
    help_run = run_tool("--help")
    assert help_run.returncode == 0 and "--flows" in help_run.stdout
    version = run_tool("--version")
    assert version.returncode == 0
    assert version.stdout.strip() == f"taskgrid_timeline {taskgrid_timeline.__version__}"


def test_version_matches_the_project():
    cmake = (TOOL.parents[2] / "CMakeLists.txt").read_text()
    assert f"VERSION {taskgrid_timeline.__version__} " in cmake


def test_no_task_gets_the_communication_or_other_colour():
    # The old palette (tab10) gave the fourth task name communication's red.
    for count in (1, 4, 10, 16, 40):
        colours = taskgrid_timeline.task_colours([f"task{i}" for i in range(count)])
        assert len(colours) == count
        assert taskgrid_timeline.COMM_COLOUR not in colours.values()
        assert taskgrid_timeline.OTHER_COLOUR not in colours.values()
    sixteen = taskgrid_timeline.task_colours([f"task{i}" for i in range(16)])
    assert len(set(sixteen.values())) == 16  # distinct while the palette lasts


def test_communication_has_a_lane_apart_from_the_tasks():
    # A broadcast wait covering the whole run on the row of its tasks.
    events = [span(0, 0, "broadcast received", 0.0, 1000.0, cat="comm", id=9),
              span(0, 0, "stencil", 100.0, 50.0, id=1),
              span(0, 0, "stencil", 400.0, 50.0, id=2),
              span(0, 1, "reduce", 200.0, 50.0, id=3)]
    timeline = taskgrid_timeline.build_timeline(events)
    colours = taskgrid_timeline.task_colours(["stencil", "reduce"])
    groups = taskgrid_timeline.bar_groups(timeline, colours, minimum=0.001)
    comm = [(y, h) for (y, h, c) in groups if c == taskgrid_timeline.COMM_COLOUR]
    tasks = [(y, h) for (y, h, c) in groups if c != taskgrid_timeline.COMM_COLOUR]
    assert comm == [pytest.approx(taskgrid_timeline.COMM_LANE)]  # row 0
    assert len(tasks) == 2
    for y, h in tasks + comm:  # each bar stays inside its row (rows are 1 apart)
        row = round(y + h / 2)
        assert row - 0.5 <= y and y + h <= row + 0.5
    (comm_y, comm_h), = comm
    for y, h in tasks:  # no task bar shares height with the communication lane
        assert y + h <= comm_y or y >= comm_y + comm_h
    # The whole span is kept: a long wait is drawn at its length, on its lane.
    assert groups[(comm_y, comm_h, taskgrid_timeline.COMM_COLOUR)] == [(0.0, 1.0)]
