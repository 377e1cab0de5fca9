"""Shared fixtures: the tool importable as `bcast_bench`, and a fake netlab test bed."""

import json
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

TESTS_DIR = Path(__file__).resolve().parent
TOOL_DIR = TESTS_DIR.parent
REPO_ROOT = TOOL_DIR.parents[1]
sys.path.insert(0, str(TOOL_DIR))


def wrapper(path: Path, script: str) -> Path:
    """An executable `path` that runs tests/`script` with this Python."""
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{TESTS_DIR / script}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_lab(tmp_path, monkeypatch):
    """A fake netlab (state and call log in tmp_path/netlab) and a fake build whose
    taskbench-taskgrid writes a report; `calls()` lists the netlab calls so far."""
    state = tmp_path / "netlab"
    state.mkdir()
    bin_dir = tmp_path / "build" / "bin"
    bin_dir.mkdir(parents=True)
    wrapper(bin_dir / "taskbench-taskgrid", "fake_taskbench.py")
    netlab = wrapper(tmp_path / "netlab-fake", "fake_netlab.py")
    monkeypatch.setenv("FAKE_NETLAB_DIR", str(state))
    for name in ("FAKE_FAIL", "FAKE_HANG", "FAKE_EXIT", "FAKE_RANKS", "FAKE_NETLAB_FAIL_UP",
                 "TASKGRID_BCAST_CHUNK"):
        monkeypatch.delenv(name, raising=False)

    def calls() -> list[dict]:
        log = state / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def set_hosts(count: int) -> None:
        (state / "hosts").write_text(str(count))

    return SimpleNamespace(netlab=str(netlab), build=str(tmp_path / "build"),
                           out=tmp_path / "out", calls=calls, set_hosts=set_hosts)
