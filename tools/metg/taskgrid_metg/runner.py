"""Running one benchmark process and reading its report."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

STDERR_TAIL_LINES = 20


@dataclass(frozen=True)
class Report:
    """The figures of one Task Bench run that METG needs."""
    elapsed: float          # seconds
    total_tasks: int
    total_flops: int
    total_bytes: int
    source: str             # "json" or "text": where the figures were read from
    ranks: int | None = None
    threads_per_rank: int | None = None


class RunError(Exception):
    """A run that failed: non-zero exit, timeout, unreadable report."""

    def __init__(self, message: str, command: list[str], stderr: str = ""):
        super().__init__(message)
        self.message = message
        self.command = command
        self.stderr = stderr

    def __str__(self) -> str:
        text = f"{self.message}\n  command: {shlex.join(self.command)}"
        tail = self.stderr.rstrip().splitlines()[-STDERR_TAIL_LINES:]
        if tail:
            text += "\n  stderr (last lines):\n" + "\n".join("    " + line for line in tail)
        return text


def run_process(command: list[str], extra_env: dict[str, str],
                timeout: float | None) -> subprocess.CompletedProcess:
    """Run `command` to completion, capturing its output.

    The child gets its own process group so that a timeout or Ctrl-C can take down
    every MPI rank it started, not only the launcher.
    """
    try:
        proc = subprocess.Popen(command, env={**os.environ, **extra_env}, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as error:
        raise RunError(f"cannot start: {error}", command) from error
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        _, stderr = proc.communicate()
        raise RunError(f"timed out after {timeout:g} s", command, stderr) from None
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def parse_json_report(path: Path) -> Report | None:
    """Report from the -json file, or None when it is missing or incomplete."""
    try:
        data = json.loads(Path(path).read_text())
        return Report(elapsed=float(data["elapsed_seconds"]),
                      total_tasks=int(data["total_tasks"]),
                      total_flops=int(data["total_flops"]),
                      total_bytes=int(data["total_bytes"]),
                      source="json",
                      ranks=data.get("ranks"),
                      threads_per_rank=data.get("threads_per_rank"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


_TEXT_FIELDS = {
    "elapsed": re.compile(r"^Elapsed Time\s+(\S+)\s+seconds\s*$", re.MULTILINE),
    "total_tasks": re.compile(r"^Total Tasks\s+(\d+)\s*$", re.MULTILINE),
    "total_flops": re.compile(r"^Total FLOPs\s+(\d+)\s*$", re.MULTILINE),
    "total_bytes": re.compile(r"^Total Bytes\s+(\d+)\s*$", re.MULTILINE),
}


def parse_text_report(stdout: str) -> Report | None:
    """Report from the spec section 8.2 lines on stdout, or None if any is missing."""
    values = {}
    for name, pattern in _TEXT_FIELDS.items():
        match = pattern.search(stdout)
        if match is None:
            return None
        values[name] = match.group(1)
    try:
        return Report(elapsed=float(values["elapsed"]),
                      total_tasks=int(values["total_tasks"]),
                      total_flops=int(values["total_flops"]),
                      total_bytes=int(values["total_bytes"]),
                      source="text")
    except ValueError:
        return None


def run_benchmark(command: list[str], extra_env: dict[str, str], json_path: Path,
                  timeout: float | None, expected_ranks: int | None = None) -> Report:
    """Run one configuration; the -json file is preferred over the stdout report."""
    json_path = Path(json_path)
    json_path.unlink(missing_ok=True)  # never read a stale report
    done = run_process(command, extra_env, timeout)
    if done.returncode != 0:
        raise RunError(f"exited with status {done.returncode}", command, done.stderr)
    report = parse_json_report(json_path) or parse_text_report(done.stdout)
    if report is None:
        raise RunError("no report: neither a readable -json file nor an "
                       "'Elapsed Time ... seconds' report on stdout", command, done.stderr)
    if report.elapsed <= 0:
        raise RunError(f"reported a non-positive elapsed time ({report.elapsed})", command,
                       done.stderr)
    # A launcher from another MPI library starts independent singletons that each
    # report ranks = 1; the timings would then be meaningless.
    if expected_ranks is not None and report.ranks is not None and report.ranks != expected_ranks:
        raise RunError(f"binary reports {report.ranks} ranks but {expected_ranks} were launched "
                       "(does the launcher match the MPI library the binary was built with? "
                       "--mpiexec for the default build, --openmpi-mpiexec for NAME@openmpi)",
                       command, done.stderr)
    return report
