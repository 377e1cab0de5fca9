"""Shared fixtures: a fake build directory whose binaries are the Python fakes here."""

import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from taskgrid_metg.systems import PER_CORE, SystemSpec

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parents[2]

# Launch table for the tests: the same shapes as the real systems, one fake binary.
FAKE_SYSTEMS = {
    spec.name: spec
    for spec in (
        SystemSpec("fake", "taskbench-fake"),
        SystemSpec("fake_omp", "taskbench-fake", threads=PER_CORE, thread_flag="-worker"),
        SystemSpec("fake_mpi", "taskbench-fake", mpi=True, ranks=PER_CORE),
        SystemSpec("fake_grid", "taskbench-fake", mpi=True, ranks=PER_CORE,
                   thread_env="TASKGRID_THREADS"),
        SystemSpec("fake_gpu", "taskbench-fake", mpi=True, ranks=1, threads=PER_CORE,
                   thread_flag="-worker", device_flag="-fake:device"),
    )
}


def _wrapper(path: Path, script: str) -> None:
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{TESTS_DIR / script}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    """build/bin/taskbench-fake, build/bin/taskbench-peak and a fake mpiexec."""
    bin_dir = tmp_path / "build" / "bin"
    bin_dir.mkdir(parents=True)
    _wrapper(bin_dir / "taskbench-fake", "fake_taskbench.py")
    _wrapper(bin_dir / "taskbench-peak", "fake_peak.py")
    _wrapper(tmp_path / "fake-mpiexec", "fake_mpiexec.py")
    for name in ("FAKE_RANKS", "FAKE_NO_JSON", "FAKE_FAIL_ITER", "FAKE_OVERHEAD", "FAKE_RATE"):
        monkeypatch.delenv(name, raising=False)
    return SimpleNamespace(build_dir=tmp_path / "build", mpiexec=str(tmp_path / "fake-mpiexec"),
                           out_dir=tmp_path / "out")
