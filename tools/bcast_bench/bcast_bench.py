#!/usr/bin/env python3
"""Broadcast benchmark: Task Bench -broadcast BYTES under every TASKGRID_BCAST strategy.

Each run is `taskbench-<system> -steps 1 -width H -type stencil_1d -kernel empty
-broadcast BYTES -taskgrid:warmup 0 -json FILE` on H netlab hosts (`netlab run --`) or on
H shared-memory ranks of this machine (`mpiexec.mpich -n H`). Writes runs.csv, bcast.json,
table.md and bcast.png into --out. See README.md next to this file.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

# The METG tool's machine facts (load average, CPU model), also without its venv.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "metg"))
from taskgrid_metg.machine import cpu_model, load_average  # noqa: E402
# Released with the METG tool: one version for the tools (tools/metg/pyproject.toml).
from taskgrid_metg import __version__  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
STRATEGIES = ("none", "p2p", "mpi", "tree", "pipeline", "auto")
SYSTEMS = ("taskgrid", "taskgrid_spmd")
NETLAB = "netlab"
SHARED_MEMORY = "shared-memory"
MPIEXEC = "mpiexec.mpich"
# Timeout model of a shared-memory run: copies at 1 GB/s at worst.
SHARED_MEMORY_BYTES_PER_S = 1e9
TIMEOUT_FACTOR, TIMEOUT_SLACK_S = 3.0, 60.0
GOAL_MIN_BYTES = 256 << 20
GOAL_HOSTS = 8  # the issue states its goals for 8 hosts (at 4, p2p/tree cannot exceed 1.5)
# (slower, faster): the table's ratio columns.
RATIOS = (("p2p", "tree"), ("none", "tree"), ("p2p", "pipeline"), ("mpi", "pipeline"))
# (faster, slower, factor): "faster is at least factor times faster than slower".
GOALS = (("tree", "p2p", 2.0), ("tree", "none", 2.0), ("pipeline", "p2p", 4.0),
         ("pipeline", "mpi", 1.0))
OUTPUT_TAIL_LINES = 12
CSV_COLUMNS = ("network", "rate", "delay_us", "hosts", "size_bytes", "strategy", "repetition",
               "elapsed_s", "status", "mpiexec_exit")


class UsageError(Exception):
    """A bad option or a refused set-up: message for the user, exit status 2."""


@dataclass
class Run:
    """One launch of the benchmark and what came of it."""
    network: str                     # NETLAB or SHARED_MEMORY
    rate: str                        # link rate ("" for shared memory)
    delay_us: int
    hosts: int                       # hosts (netlab) or ranks (shared memory)
    size: int                        # broadcast bytes
    strategy: str
    repetition: int                  # 1-based
    status: str = "failed"           # "ok", "failed" or "timeout"
    elapsed: float | None = None     # seconds, from the -json report
    exit_code: int | None = None     # the launcher's exit status (None: killed)
    reason: str = ""                 # why it is not "ok"
    wall: float | None = None        # seconds from launch to exit
    time_limit: float | None = None  # seconds it was allowed
    finalize_warnings: int = 0       # ranks that gave up on MPI_Finalize
    load_before: list[float] | None = None
    load_after: list[float] | None = None
    command: list[str] = field(default_factory=list)
    output_tail: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict) -> "Run":
        names = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in names})


# ---------------------------------------------------------------- parsing

_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(?:i?b)?\s*$", re.IGNORECASE)
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(bit|bps)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'16M' -> 16 MiB in bytes; K/M/G are KiB/MiB/GiB; a plain number is bytes."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"bad size {text!r} (expected e.g. 65536, 64K, 16M, 1G)")
    shift = {"": 0, "k": 10, "m": 20, "g": 30}[match.group(2).lower()]
    size = int(match.group(1)) << shift
    if size <= 0:
        raise ValueError(f"size {text!r} must be positive")
    return size


def format_size(size: int) -> str:
    """Bytes as the largest binary unit that divides them: 16 MiB, 64 KiB, 1000 B."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def parse_rate(text: str) -> float:
    """A tc rate ('200mbit', '1gbit', '10mbps') in bits per second (SI prefixes)."""
    match = _RATE.match(text)
    if not match:
        raise ValueError(f"bad rate {text!r} (expected e.g. 200mbit, 1gbit)")
    prefix = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[match.group(2).lower()]
    value = float(match.group(1)) * prefix * (8 if match.group(3).lower() == "bps" else 1)
    if value <= 0:
        raise ValueError(f"rate {text!r} must be positive")
    return value


def parse_list(text: str, item) -> list:
    """Comma-separated list, each element converted by `item`."""
    values = [item(part.strip()) for part in text.split(",") if part.strip()]
    if not values:
        raise ValueError("empty list")
    return values


def parse_hosts(text: str) -> int:
    hosts = int(text)
    if hosts < 2:
        raise ValueError(f"{hosts} hosts: a broadcast needs at least 2")
    return hosts


def parse_strategy(text: str) -> str:
    if text not in STRATEGIES:
        raise ValueError(f"unknown strategy {text!r} (one of {', '.join(STRATEGIES)})")
    return text


def check_rate(text: str) -> str:
    """The rate as given, once parse_rate accepts it."""
    parse_rate(text)
    return text


def parse_env(items: list[str]) -> dict[str, str]:
    """['K=V', ...] -> {'K': 'V', ...}."""
    env = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--env {item!r}: expected KEY=VALUE")
        env[key] = value
    return env


# ---------------------------------------------------------------- schedule and timing

def schedule(sizes: list[int], strategies: list[str], repeat: int):
    """(size, repetition, strategy) in run order: per size and repetition every strategy
    once, the order rotated by one per repetition."""
    for size in sizes:
        for rep in range(repeat):
            shift = rep % len(strategies)
            for strategy in strategies[shift:] + strategies[:shift]:
                yield size, rep + 1, strategy


def run_timeout(size: int, hosts: int, bytes_per_s: float) -> float:
    """Generous limit of one run: every host's link moving the buffer three times over."""
    return TIMEOUT_FACTOR * hosts * size / bytes_per_s + TIMEOUT_SLACK_S


# ---------------------------------------------------------------- machine facts

def git_commit() -> str | None:
    """HEAD of this repository, with '+dirty' for local changes (None outside git)."""
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain"],
                               text=True, capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def describe_machine() -> dict:
    return {"uname": platform.uname()._asdict(),
            "nproc": len(os.sched_getaffinity(0)),
            "cpu_count": os.cpu_count(),
            "cpu_model": cpu_model(),
            "python": sys.version.split()[0],
            "commit": git_commit()}


# ---------------------------------------------------------------- processes

@dataclass
class Outcome:
    """What a finished (or killed) process left."""
    exit_code: int | None
    output: str
    wall: float
    timed_out: bool


def run_process(command: list[str], env: dict[str, str], timeout: float) -> Outcome:
    """Run `command` in its own session, stdout and stderr merged; on timeout or Ctrl-C kill
    its whole process group (the launcher and every rank it started)."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(command, env={**os.environ, **env}, text=True,
                                errors="replace", stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as error:
        return Outcome(None, f"cannot start: {error}", 0.0, False)
    try:
        output, _ = proc.communicate(timeout=timeout)
        return Outcome(proc.returncode, output, time.monotonic() - start, False)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        output, _ = proc.communicate()
        return Outcome(None, output, time.monotonic() - start, True)
    except BaseException:
        kill_group(proc)
        proc.communicate()
        raise


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_HOST_LINE = re.compile(r"^\S+\s+\d+\.\d+\.\d+\.\d+\s")


class Netlab:
    """The netlab test bed: brings hosts up and down, prefixes runs with `netlab run --`."""

    def __init__(self, path: str, rate: str, delay_us: int):
        self.path, self.rate, self.delay_us = path, rate, delay_us

    def _call(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run([self.path, *args], env={**os.environ, **(env or {})},
                              text=True, capture_output=True)
        if done.returncode != 0:
            raise RuntimeError(f"netlab {' '.join(args)} failed (status {done.returncode}): "
                               f"{(done.stderr or done.stdout).strip()}")
        return done.stdout

    def host_count(self) -> int:
        """Hosts up now, from `netlab status` (one 'tlN ADDRESS sent ...' line per host)."""
        status = self._call("status")
        return sum(1 for line in status.splitlines() if _HOST_LINE.match(line))

    def up(self, hosts: int) -> None:
        self._call("up", str(hosts), env={"RATE": self.rate, "DELAY_US": str(self.delay_us)})

    def down(self) -> None:
        self._call("down")

    def prefix(self) -> list[str]:
        return [self.path, "run", "--"]


def find_netlab(explicit: str | None) -> str | None:
    """--netlab, else $NETLAB, else ../shared/tools/netlab beside the repository, else PATH."""
    for candidate in (explicit, os.environ.get("NETLAB"),
                      str(REPO_ROOT.parent / "shared" / "tools" / "netlab")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("netlab")


# ---------------------------------------------------------------- one run

def benchmark_command(binary: Path, hosts: int, size: int, json_path: Path) -> list[str]:
    return [str(binary), "-steps", "1", "-width", str(hosts), "-type", "stencil_1d",
            "-kernel", "empty", "-broadcast", str(size), "-taskgrid:warmup", "0",
            "-json", str(json_path)]


def run_environment(strategy: str, extra: dict[str, str]) -> dict[str, str]:
    return {"TASKGRID_THREADS": "1", "TASKGRID_FINALIZE_TIMEOUT": "3", **extra,
            "TASKGRID_BCAST": strategy}


def read_report(json_path: Path) -> dict | None:
    try:
        return json.loads(json_path.read_text())
    except (OSError, ValueError):
        return None


def judge(run: Run, outcome: Outcome, report: dict | None) -> None:
    """Set run.status, elapsed and reason: good means a parsed -json report with the expected
    ranks and size, and no output line starting with 'error:' (mpiexec's status is only
    recorded: MPICH may exit 255 after a bounded MPI_Finalize)."""
    run.status, run.elapsed, run.reason = "failed", None, ""
    errors = [line for line in outcome.output.splitlines() if line.startswith("error:")]
    if outcome.timed_out:
        run.status, run.reason = "timeout", f"killed after {run.time_limit:g} s"
    elif errors:
        run.reason = errors[0]
    elif report is None:
        run.reason = f"no readable -json report (exit status {outcome.exit_code})"
    elif report.get("ranks") != run.hosts or report.get("broadcast_bytes") != run.size:
        run.reason = (f"report says {report.get('ranks')} ranks, {report.get('broadcast_bytes')}"
                      f" bytes; launched {run.hosts} ranks, {run.size} bytes")
    elif not isinstance(report.get("elapsed_seconds"), (int, float)):
        run.reason = "report has no elapsed_seconds"
    else:
        run.status, run.elapsed = "ok", float(report["elapsed_seconds"])


def execute(run: Run, prefix: list[str], binary: Path, report_dir: Path,
            extra_env: dict[str, str], timeout: float) -> Run:
    """Launch one run, wait for it (at most `timeout` s) and fill in its results."""
    json_path = report_dir / f"h{run.hosts}-{run.size}-{run.strategy}-r{run.repetition}.json"
    json_path.unlink(missing_ok=True)
    run.command = prefix + benchmark_command(binary, run.hosts, run.size, json_path)
    run.time_limit = round(timeout, 1)
    run.load_before = load_average()
    outcome = run_process(run.command, run_environment(run.strategy, extra_env), timeout)
    run.load_after = load_average()
    run.exit_code, run.wall = outcome.exit_code, round(outcome.wall, 3)
    run.finalize_warnings = outcome.output.count("MPI_Finalize did not return")
    run.output_tail = outcome.output.splitlines()[-OUTPUT_TAIL_LINES:]
    judge(run, outcome, read_report(json_path))
    return run


# ---------------------------------------------------------------- results files

def write_csv(runs: list[Run], path: Path) -> None:
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for run in runs:
            writer.writerow([run.network, run.rate, run.delay_us, run.hosts, run.size,
                             run.strategy, run.repetition,
                             "" if run.elapsed is None else f"{run.elapsed:.6g}", run.status,
                             "" if run.exit_code is None else run.exit_code])


def write_json(document: dict, runs: list[Run], path: Path) -> None:
    """bcast.json: machine, settings and every run (written atomically)."""
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps({**document, "runs": [asdict(run) for run in runs]},
                                    indent=2) + "\n")
    temporary.replace(path)


def load_json(path: Path) -> tuple[dict, list[Run]]:
    document = json.loads(path.read_text())
    return document, [Run.from_dict(run) for run in document.pop("runs", [])]


# ---------------------------------------------------------------- table

def group_runs(runs: list[Run]) -> dict[tuple, list[Run]]:
    """Runs per (network, rate, delay_us, hosts), in order of first appearance."""
    groups: dict[tuple, list[Run]] = {}
    for run in runs:
        groups.setdefault((run.network, run.rate, run.delay_us, run.hosts), []).append(run)
    return groups


def group_title(key: tuple) -> str:
    network, rate, delay_us, hosts = key
    if network == SHARED_MEMORY:
        return f"shared memory, {hosts} ranks"
    delay = f", +{delay_us} µs delay" if delay_us else ""
    return f"netlab {rate}{delay}, {hosts} hosts"


def best_times(runs: list[Run]) -> dict[int, dict[str, float]]:
    """size -> strategy -> fastest successful elapsed time."""
    best: dict[int, dict[str, float]] = {}
    for run in runs:
        if run.status == "ok" and run.elapsed is not None:
            row = best.setdefault(run.size, {})
            row[run.strategy] = min(run.elapsed, row.get(run.strategy, float("inf")))
    return best


def ratio(times: dict[str, float], slower: str, faster: str) -> float | None:
    if slower in times and faster in times and times[faster] > 0:
        return times[slower] / times[faster]
    return None


def goal_checks(times: dict[str, float]) -> list[tuple[str, float | None, bool | None]]:
    """(label, ratio, passed) per goal; ratio and passed are None when a time is missing."""
    checks = []
    for faster, slower, factor in GOALS:
        value = ratio(times, slower, faster)
        label = (f"{faster} >= {factor:g}x faster than {slower}" if factor != 1
                 else f"{faster} at least as fast as {slower}")
        checks.append((label, value, None if value is None else value >= factor))
    return checks


def format_seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:#.4g}"


def format_check(value: float | None, passed: bool | None) -> str:
    return "n/a" if passed is None else f"{'PASS' if passed else 'FAIL'} ({value:.2f}x)"


def markdown_row(cells) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def group_table(runs: list[Run], strategies: list[str]) -> list[str]:
    """Best time per size and strategy, then the ratio columns."""
    best, sizes = best_times(runs), sorted({run.size for run in runs})
    ratios = [(a, b) for a, b in RATIOS if a in strategies and b in strategies]
    header = ["size", *strategies, *(f"{a}/{b}" for a, b in ratios)]
    lines = [markdown_row(header), markdown_row(["---:"] * len(header))]
    for size in sizes:
        times = best.get(size, {})
        cells = [format_size(size)]
        cells += [format_seconds(times.get(s)) if s in times else failed_cell(runs, size, s)
                  for s in strategies]
        cells += [format_ratio(ratio(times, a, b)) for a, b in ratios]
        lines.append(markdown_row(cells))
    return lines


def failed_cell(runs: list[Run], size: int, strategy: str) -> str:
    """'failed'/'timeout' when every run of that cell went wrong, '—' when none ran."""
    statuses = {run.status for run in runs if run.size == size and run.strategy == strategy}
    return "timeout" if statuses == {"timeout"} else ("failed" if statuses else "—")


def format_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def ceiling_tree(hosts: int) -> float:
    """Best p2p/tree ratio on a link per host: H - 1 link transfers from the root against
    ceil(log2 H) rounds of a binomial tree."""
    return (hosts - 1) / math.ceil(math.log2(hosts))


def goal_table(runs: list[Run]) -> list[str]:
    """PASS/FAIL of every goal for each size >= GOAL_MIN_BYTES."""
    best = best_times(runs)
    sizes = sorted(size for size in {run.size for run in runs} if size >= GOAL_MIN_BYTES)
    if not sizes:
        return [f"No size >= {format_size(GOAL_MIN_BYTES)} measured."]
    labels = [label for label, _, _ in goal_checks({})]
    lines = [markdown_row(["size", *labels]), markdown_row(["---:"] + ["---"] * len(labels))]
    for size in sizes:
        checks = goal_checks(best.get(size, {}))
        lines.append(markdown_row([format_size(size),
                                   *(format_check(value, ok) for _, value, ok in checks)]))
    return lines


def render_table(document: dict, runs: list[Run]) -> str:
    """table.md: one section per network and host count."""
    settings = document.get("settings", {})
    strategies = settings.get("strategies") or sorted({run.strategy for run in runs},
                                                       key=STRATEGIES.index)
    repeat = settings.get("repeat", 1)
    lines = ["# Broadcast benchmark", "",
             f"Task Bench `-type stencil_1d -steps 1 -kernel empty -width H -broadcast SIZE`, "
             f"system `{settings.get('system', 'taskgrid')}`; best of {repeat} run(s) per cell, "
             "seconds (elapsed of the timed pass). `a/b` = time of a / time of b.", ""]
    for key, group in group_runs(runs).items():
        bad = sum(run.status != "ok" for run in group)
        lines += [f"## {group_title(key)}", "", *group_table(group, strategies), ""]
        if bad:
            lines += [f"{bad} of {len(group)} runs failed or timed out (see runs.csv).", ""]
        hosts = group[0].hosts
        if group[0].network != NETLAB:  # the goals assume a link per host
            lines += ["No goals here: in shared memory every copy crosses the same memory, "
                      "not a link of its own.", ""]
        elif hosts < GOAL_HOSTS:
            lines += [f"No goals here (they are set for {GOAL_HOSTS} hosts). Ceilings at "
                      f"{hosts} hosts: p2p/tree {ceiling_tree(hosts):.2f}, "
                      f"p2p/pipeline {hosts - 1}.", ""]
        else:
            lines += [f"Goals at >= {format_size(GOAL_MIN_BYTES)}:", "", *goal_table(group), ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- plot

def render_plot(document: dict, runs: list[Run], path: Path) -> bool:
    """bcast.png: time vs size, log-log, a line per strategy, a panel per network and host
    count. False (and a warning) when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("warning: matplotlib is not installed: no bcast.png "
              "(run with the repository's .venv/bin/python)", file=sys.stderr)
        return False
    groups = group_runs(runs)
    strategies = document.get("settings", {}).get("strategies") or list(STRATEGIES)
    columns = min(len(groups), 2) or 1
    rows = max(1, -(-len(groups) // columns))
    figure, axes = plt.subplots(rows, columns, figsize=(6.4 * columns, 4.8 * rows),
                                squeeze=False)
    for ax, (key, group) in zip(axes.flat, groups.items()):
        plot_panel(ax, key, group, strategies)
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    figure.suptitle("Broadcast time vs size (Task Bench stencil_1d, width = hosts)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


def plot_panel(ax, key: tuple, runs: list[Run], strategies: list[str]) -> None:
    from matplotlib.ticker import NullLocator
    best = best_times(runs)
    markers = "os^Dv*"
    for index, strategy in enumerate(strategies):
        points = [(size, times[strategy]) for size, times in sorted(best.items())
                  if strategy in times]
        if points:
            ax.plot(*zip(*points), marker=markers[index % len(markers)], color=f"C{index}",
                    label=strategy)  # a strategy keeps its colour in every panel
    sizes = sorted({run.size for run in runs})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes, [format_size(size) for size in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("broadcast size")
    ax.set_ylabel("time (s)")
    ax.set_title(group_title(key))
    ax.grid(True, which="major", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend()


def write_reports(document: dict, runs: list[Run], out: Path) -> str:
    """table.md and bcast.png in `out`; returns the table."""
    table = render_table(document, runs)
    (out / "table.md").write_text(table + "\n")
    render_plot(document, runs, out / "bcast.png")
    return table


# ---------------------------------------------------------------- the benchmark

class Bench:
    """One benchmark session: the runs so far and where they are written."""

    def __init__(self, args: argparse.Namespace, binary: Path, netlab: Netlab | None):
        self.args, self.binary, self.netlab = args, binary, netlab
        self.runs: list[Run] = []
        self.out = Path(args.out).resolve()  # ranks may start in another directory
        self.report_dir = self.out / "reports"
        self.document = {"tool": "bcast_bench", "version": 1, "machine": describe_machine(),
                         "settings": settings_of(args, binary, netlab)}
        self.total = len(args.hosts) * len(args.sizes) * args.repeat * len(args.strategies)

    def run_all(self) -> None:
        """Every host count. In netlab mode the hosts are brought up for each count and always
        taken down at the end (also on errors and Ctrl-C); hosts that were up before are
        refused (or reused, see claim_hosts) before anything is touched."""
        if self.netlab:
            self.claim_hosts()
        self.report_dir.mkdir(parents=True, exist_ok=True)
        try:
            for hosts in self.args.hosts:
                if self.netlab:
                    self.prepare_hosts(hosts)
                self.run_host_count(hosts)
        finally:
            if self.netlab:
                self.take_hosts_down()

    def claim_hosts(self) -> None:
        """Refuse hosts that are already up, unless --reuse-hosts and their count is the
        first one wanted."""
        present, first = self.netlab.host_count(), self.args.hosts[0]
        if present == 0:
            return
        if self.args.reuse_hosts and present == first:
            progress(f"netlab: reusing the {present} hosts that are up")
            return
        hint = (f" (--reuse-hosts needs {first} hosts, the first of --hosts)"
                if self.args.reuse_hosts else
                ", or pass --reuse-hosts when their count is the first of --hosts")
        raise UsageError(f"netlab has {present} hosts up already (someone else's?): "
                         f"run 'netlab down' first{hint}")

    def prepare_hosts(self, hosts: int) -> None:
        """Make exactly `hosts` netlab hosts exist (ours: claim_hosts ran)."""
        present = self.netlab.host_count()
        if present == hosts:
            return
        if present:
            progress("netlab down")
            self.netlab.down()
        progress(f"netlab up {hosts} (RATE={self.netlab.rate} DELAY_US={self.netlab.delay_us})")
        self.netlab.up(hosts)

    def take_hosts_down(self) -> None:
        progress("netlab down")
        try:
            self.netlab.down()
        except RuntimeError as error:  # do not hide the exception that brought us here
            progress(f"warning: {error}")

    def run_host_count(self, hosts: int) -> None:
        prefix = (self.netlab.prefix() if self.netlab
                  else shlex.split(self.args.mpiexec) + ["-n", str(hosts)])
        for size, repetition, strategy in schedule(self.args.sizes, self.args.strategies,
                                                   self.args.repeat):
            run = Run(network=NETLAB if self.netlab else SHARED_MEMORY,
                      rate=self.args.rate if self.netlab else "",
                      delay_us=self.args.delay_us if self.netlab else 0,
                      hosts=hosts, size=size, strategy=strategy, repetition=repetition)
            execute(run, prefix, self.binary, self.report_dir, self.args.env,
                    self.timeout_of(size, hosts))
            self.runs.append(run)
            self.save()
            self.report_progress(run)

    def timeout_of(self, size: int, hosts: int) -> float:
        if self.args.timeout:
            return self.args.timeout
        bytes_per_s = (parse_rate(self.args.rate) / 8 if self.netlab
                       else SHARED_MEMORY_BYTES_PER_S)
        return run_timeout(size, hosts, bytes_per_s)

    def report_progress(self, run: Run) -> None:
        result = (f"{run.elapsed:.4g} s" if run.status == "ok"
                  else f"{run.status.upper()}: {run.reason}")
        where = f"{run.hosts} {'hosts' if self.netlab else 'ranks'}"
        progress(f"[{len(self.runs)}/{self.total}] {where} {format_size(run.size):>8}"
                 f" {run.strategy:<8} rep {run.repetition}: {result}"
                 f" (exit {run.exit_code}, wall {run.wall:.1f} s)")

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        write_csv(self.runs, self.out / "runs.csv")
        write_json(self.document, self.runs, self.out / "bcast.json")


def settings_of(args: argparse.Namespace, binary: Path, netlab: Netlab | None) -> dict:
    return {"network": NETLAB if netlab else SHARED_MEMORY,
            "hosts": args.hosts, "sizes": args.sizes, "strategies": args.strategies,
            "repeat": args.repeat, "rate": args.rate if netlab else None,
            "delay_us": args.delay_us if netlab else None, "system": args.system,
            "binary": str(binary), "launcher": netlab.path if netlab else args.mpiexec,
            "env": run_environment("<strategy>", args.env),
            "timeout_s": args.timeout or None,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- command line

def option_parser() -> argparse.ArgumentParser:
    def typed(convert):
        def wrapper(text):
            try:
                return convert(text)
            except ValueError as error:
                raise argparse.ArgumentTypeError(str(error)) from None
        return wrapper

    parser = argparse.ArgumentParser(
        prog="bcast_bench.py",
        description="Time Task Bench -broadcast BYTES under every TASKGRID_BCAST strategy, on "
                    "netlab hosts (default) or shared-memory ranks; writes runs.csv, bcast.json, "
                    "table.md and bcast.png.")
    add = parser.add_argument
    add("--version", action="version", version=f"%(prog)s {__version__}")
    add("--hosts", type=typed(lambda t: parse_list(t, parse_hosts)), default=[4, 8],
        help="host counts (= ranks = -width), comma-separated (default 4,8)")
    add("--sizes", type=typed(lambda t: parse_list(t, parse_size)),
        default=[16 << 20, 64 << 20, 256 << 20, 1 << 30],
        help="broadcast sizes, K/M/G = KiB/MiB/GiB (default 16M,64M,256M,1G)")
    add("--strategies", type=typed(lambda t: parse_list(t, parse_strategy)),
        default=list(STRATEGIES), help=f"TASKGRID_BCAST values (default {','.join(STRATEGIES)})")
    add("--repeat", type=int, default=1,
        help="runs per size and strategy, strategies interleaved (default 1)")
    add("--rate", type=typed(check_rate), default="200mbit",
        help="netlab link rate, tc syntax (default 200mbit)")
    add("--delay-us", type=int, default=0, help="netlab added one-way delay (default 0)")
    add("--shared-memory", action="store_true",
        help="no netlab: mpiexec.mpich -n H on this machine")
    add("--netlab", help="netlab script (default $NETLAB, ../shared/tools/netlab, PATH)")
    add("--reuse-hosts", action="store_true",
        help="use netlab hosts that are already up when their count is the one wanted")
    add("--mpiexec", default=MPIEXEC, help=f"launcher for --shared-memory (default {MPIEXEC})")
    add("--build", default=str(REPO_ROOT / "build"), help="build directory (default build/)")
    add("--system", choices=SYSTEMS, default="taskgrid", help="Task Bench system")
    add("--env", action="append", default=[], metavar="K=V",
        help="extra environment of every run (repeatable), e.g. TASKGRID_BCAST_CHUNK=1048576")
    add("--timeout", type=float, default=0,
        help="seconds per run (default 0: 3 x hosts x size / rate + 60)")
    add("--out", default="bcast-results", help="output directory (default bcast-results/)")
    add("--replot", metavar="DIR",
        help="only re-render DIR/table.md and DIR/bcast.png from DIR/bcast.json")
    return parser


def check_args(args: argparse.Namespace) -> None:
    """Cross-option checks and conversions; UsageError on a problem."""
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    for name in ("hosts", "sizes", "strategies"):
        if len(set(getattr(args, name))) != len(getattr(args, name)):
            raise UsageError(f"--{name} lists a value twice")
    if args.delay_us < 0:
        raise UsageError("--delay-us must be >= 0")
    try:
        args.env = parse_env(args.env)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if "TASKGRID_BCAST" in args.env:
        raise UsageError("--env TASKGRID_BCAST: use --strategies")


def replot(directory: Path) -> int:
    try:
        document, runs = load_json(directory / "bcast.json")
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read {directory / 'bcast.json'}: {error}") from None
    print(write_reports(document, runs, directory))
    return 0


def benchmark(args: argparse.Namespace) -> int:
    check_args(args)
    binary = (Path(args.build) / "bin" / f"taskbench-{args.system}").resolve()
    if not os.access(binary, os.X_OK):
        raise UsageError(f"{binary} not found: build the project first (or pass --build)")
    netlab = None
    if not args.shared_memory:
        path = find_netlab(args.netlab)
        if path is None:
            raise UsageError("netlab not found: pass --netlab PATH, set NETLAB, "
                             "or use --shared-memory")
        netlab = Netlab(path, args.rate, args.delay_us)
    bench = Bench(args, binary, netlab)
    status = None
    try:
        bench.run_all()
    except KeyboardInterrupt:
        progress("interrupted: writing the results so far")
        status = 130
    except RuntimeError as error:  # a netlab command failed
        progress(f"bcast_bench: {error}")
        status = 1
    if not bench.runs and status is not None:
        return status
    bench.save()
    print(write_reports(bench.document, bench.runs, bench.out))
    if status is not None:
        return status
    return 0 if all(run.status == "ok" for run in bench.runs) else 1


@contextlib.contextmanager
def termination_as_interrupt():
    """SIGTERM and SIGHUP raise KeyboardInterrupt, as Ctrl-C does, so that netlab hosts
    still come down; the previous handlers are restored afterwards."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = {signum: signal.signal(signum, interrupt)
                for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv: list[str] | None = None) -> int:
    args = option_parser().parse_args(argv)
    try:
        if args.replot:
            return replot(Path(args.replot))
        with termination_as_interrupt():
            return benchmark(args)
    except UsageError as error:
        print(f"bcast_bench: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
