"""scripts/bootstrap.sh's build progress: its functions, sourced, against fake build logs
and a fake cmake (the real build is far too slow for a test)."""

import os
import stat
import subprocess

from conftest import REPO_ROOT

BOOTSTRAP = REPO_ROOT / "scripts" / "bootstrap.sh"

MAKE_LOG = """\
[  0%] Building CXX object src/CMakeFiles/taskgrid.dir/coll/broadcast.cpp.o
[  4%] Building CXX object src/CMakeFiles/taskgrid.dir/engine/engine.cpp.o
[  5%] Built target taskbench_core
[ 11%] Linking CXX static library libtaskbench_core.a
[ 15%] Building C object apps/examples/CMakeFiles/c_first.dir/c_first_program.c.o
[ 27%] Linking CXX executable ../../bin/halo2d-mpi
[ 28%] Building CXX object CMakeFiles/top.dir/main.cpp.o
/work/src/x.cpp:3:4: warning: unused variable 'y' [-Wunused-variable]
[100%] Built target taskbench-mpi
"""

NINJA_LOG = """\
[1/212] Building CXX object src/CMakeFiles/taskgrid.dir/engine/engine.cpp.o
[2/212] Building CXX object src/CMakeFiles/taskgrid.dir/engine/plan.cpp.o
[57/212] Linking CXX shared library src/libtaskgrid.so
[212/212] Linking CXX executable bin/taskbench-mpi
"""


def bash(script, stdin="", env=None):
    return subprocess.run(["bash", "-c", f'source "{BOOTSTRAP}"\n{script}'], input=stdin,
                          capture_output=True, text=True, env={**os.environ, **(env or {})})


def progress(log, interval):
    done = bash("build_progress", log, {"TASKGRID_BOOTSTRAP_PROGRESS_SECONDS": str(interval)})
    assert done.returncode == 0 and done.stdout == ""
    return done.stderr.splitlines()


def test_sourcing_runs_nothing():
    done = bash("type build_progress step_name build_with_progress >/dev/null && echo ok")
    assert done.stdout == "ok\n" and done.stderr == ""


def test_every_compile_and_link_step_named_by_its_source():
    assert progress(MAKE_LOG, 0) == [
        "[bootstrap] building: 0% src/coll/broadcast.cpp",
        "[bootstrap] building: 4% src/engine/engine.cpp",
        "[bootstrap] building: 11% linking libtaskbench_core.a",
        "[bootstrap] building: 15% apps/examples/c_first_program.c",
        "[bootstrap] building: 27% linking halo2d-mpi",
        "[bootstrap] building: 28% main.cpp",
    ]
    assert progress(NINJA_LOG, 0) == [
        "[bootstrap] building: 1/212 (0%) src/engine/engine.cpp",
        "[bootstrap] building: 2/212 (0%) src/engine/plan.cpp",
        "[bootstrap] building: 57/212 (26%) linking libtaskgrid.so",
        "[bootstrap] building: 212/212 (100%) linking taskbench-mpi",
    ]


def test_with_a_long_interval_only_the_first_step_and_each_10_percent():
    assert progress(MAKE_LOG, 10 ** 9) == [
        "[bootstrap] building: 0% src/coll/broadcast.cpp",
        "[bootstrap] building: 11% linking libtaskbench_core.a",
        "[bootstrap] building: 27% linking halo2d-mpi",
    ]
    lines = [f"[{i:3d}%] Building CXX object src/CMakeFiles/t.dir/f{i}.cpp.o" for i in range(101)]
    assert len(progress("\n".join(lines), 10 ** 9)) == 11   # 0%, 10%, ..., 100%


def test_up_to_date_build_says_nothing():
    assert progress("[ 50%] Built target a\n[100%] Built target b\n", 0) == []


def fake_cmake(tmp_path, log, status):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "replay.log").write_text(log)
    cmake = bin_dir / "cmake"
    cmake.write_text(f'#!/bin/sh\ncat "{tmp_path / "replay.log"}"\n'
                     f'echo "x.cpp:1:1: error: boom" >&2\nexit {status}\n')
    cmake.chmod(cmake.stat().st_mode | stat.S_IXUSR)
    build = tmp_path / "build"
    build.mkdir()
    return build, {"PATH": f"{bin_dir}:{os.environ['PATH']}",
                   "TASKGRID_BOOTSTRAP_PROGRESS_SECONDS": "0"}


def test_build_keeps_the_whole_log_and_shows_progress(tmp_path):
    build, env = fake_cmake(tmp_path, MAKE_LOG, 0)
    done = bash(f'build_with_progress "{build}"', env=env)
    assert done.returncode == 0
    assert (build / "build.log").read_text() == MAKE_LOG + "x.cpp:1:1: error: boom\n"
    err = done.stderr.splitlines()
    assert err[0] == f"[bootstrap] building (log: {build}/build.log)"
    assert "[bootstrap] building: 4% src/engine/engine.cpp" in err
    assert err[-1].startswith("[bootstrap] built in ") and "Built target" not in done.stderr


def test_up_to_date_build_prints_only_the_log_line(tmp_path):
    build, env = fake_cmake(tmp_path, "[100%] Built target taskbench-mpi\n", 0)
    done = bash(f'build_with_progress "{build}"', env=env)
    assert done.returncode == 0
    assert done.stderr == f"[bootstrap] building (log: {build}/build.log)\n"


def test_failed_build_shows_the_log_tail_and_fails(tmp_path):
    build, env = fake_cmake(tmp_path, MAKE_LOG, 2)
    done = bash(f'build_with_progress "{build}"; echo "status $?"', env=env)
    assert done.stdout == "status 1\n"
    assert "x.cpp:1:1: error: boom\n[bootstrap] error: the build failed\n" in done.stderr
    assert "[100%] Built target taskbench-mpi" in done.stderr   # the tail of the log
