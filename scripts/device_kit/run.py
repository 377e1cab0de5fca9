#!/usr/bin/env python3
"""The device kit's run: every GPU and many-core figure from one command.

Runs from an unpacked kit (scripts/device_kit/pack.py puts this file at its top). First a
preflight (GPU, driver, the kit's MPI launcher and transports, NCCL, Python's matplotlib),
then the steps in order of value, each bounded in time; a step whose preflight failed, or for
which the run's budget has no time left, is skipped with the reason. The report goes to $OUT
(or --out): report.md, report.json, the METG plots and logs.tar.gz, at most 8 files.

    run.py                         on a GPU node: CUDA devices, full sizes (about 6 minutes)
    run.py --emulated              here: emulated devices, small sizes, the same steps
    run.py --steps scaling,offload only these steps (a rerun after a step ran out of time)
"""
from __future__ import annotations

import argparse
import ctypes
import datetime
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

KIT = Path(__file__).resolve().parent
STEP_NAMES = ("conformance", "nccl", "gpu_peak", "gpu_metg", "scaling", "engine", "offload",
              "transfers", "pgas")


class Skip(Exception):
    """A step that cannot run here, with the reason."""


class Failed(Exception):
    """A step that ran and found something wrong."""


class Stopped(Failed):
    """A step whose time ran out before it finished."""


@dataclass
class Outcome:
    status: str = "ok"  # ok, failed, skipped, stopped (its time ran out)
    reason: str = ""
    seconds: float = 0.0
    figures: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)  # [{"name", "ok", "detail"}]


def log(message: str) -> None:
    print(f"[device-kit] {message}", file=sys.stderr, flush=True)


class Runner:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.emulated = args.emulated
        self.work = Path(tempfile.mkdtemp(prefix="taskgrid-kit-run-"))
        self.logs = self.work / "logs"
        self.logs.mkdir()
        self.started = time.monotonic()
        self.deadline = self.started + args.budget
        self.env = dict(os.environ)
        self.env["PATH"] = f"{KIT / 'bin'}:{self.env.get('PATH', '')}"
        self.env["LD_LIBRARY_PATH"] = ":".join(
            [str(KIT / "lib")] + [p for p in self.env.get("LD_LIBRARY_PATH", "").split(":") if p])
        self.env["PYTHONPATH"] = str(KIT / "tools" / "metg")
        self.env["HYDRA_LAUNCHER"] = "fork"  # one node: no ssh
        self.env["UCX_WARN_UNUSED_ENV_VARS"] = "n"
        self.env.setdefault("TASKGRID_FAILURE_TIMEOUT", "30")  # 16 busy ranks on a shared node
        self.mpiexec = [str(KIT / "bin" / "mpiexec.hydra")]
        self.device = "emulated" if self.emulated else "cuda"
        self.preflight: dict = {}
        self.gpu: dict = {}
        self.nccl: str | None = None
        self.outcomes: dict[str, Outcome] = {}
        self.command_count = 0

    # ------------------------------------------------------------ commands --
    def left(self) -> float:
        return self.deadline - time.monotonic()

    def run(self, command: list[str], timeout: float, extra_env: dict | None = None,
            name: str = "", cpus: list[int] | None = None) -> tuple[int, str, bool]:
        """(status, output, timed_out); the output also goes to logs/. cpus: the command and
        everything it starts run on these CPUs alone (the affinity mask is inherited)."""
        self.command_count += 1
        env = dict(self.env)
        env.update(extra_env or {})
        timeout = max(1.0, min(timeout, self.left()))
        label = f"{self.command_count:03d}-{name or Path(command[0]).name}"
        started = time.monotonic()
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   env=env, text=True, errors="replace", start_new_session=True,
                                   preexec_fn=pin)
        timed_out = False
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
        took = time.monotonic() - started
        header = (f"$ {' '.join(command)}\n# env: {extra_env or {}}"
                  f"{f', cpus {cpus}' if cpus else ''}\n# status {process.returncode}"
                  f"{' (stopped at its time limit)' if timed_out else ''}, {took:.1f} s\n")
        (self.logs / f"{label}.log").write_text(header + output)
        return process.returncode, output, timed_out

    def mpi(self, ranks: int, program: str, arguments: list[str], timeout: float,
            extra_env: dict | None = None, name: str = "",
            cpus: list[int] | None = None) -> tuple[int, str, bool]:
        command = self.mpiexec + ["-n", str(ranks), str(KIT / "bin" / program), *arguments]
        return self.run(command, timeout, extra_env, name or f"{program}-np{ranks}", cpus)

    def have(self, program: str) -> bool:
        return (KIT / "bin" / program).exists() or (KIT / "lib" / program).exists()

    # ----------------------------------------------------------- preflight --
    def run_preflight(self) -> None:
        p = self.preflight
        p["mode"] = "emulated devices (not GPU figures)" if self.emulated else "CUDA GPU"
        p["host"] = os.uname().nodename
        p["cores"] = os.cpu_count()
        p["load_before"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        # MPICH's shared-memory transport lives in /dev/shm, which containers keep small.
        if Path("/dev/shm").exists():
            shm = shutil.disk_usage("/dev/shm")
            p["dev_shm"] = f"{shm.free / 2**30:.1f} GiB free of {shm.total / 2**30:.1f} GiB"
        manifest = KIT / "MANIFEST.json"
        if manifest.exists():
            data = json.loads(manifest.read_text())
            p["kit"] = {"commit": data.get("commit"), "packed": data.get("packed"),
                        "build": data.get("build"), "steps": data.get("steps"),
                        "notes": data.get("notes"), "left_out": data.get("left_out")}
        # Libraries: every kit program must find all of its libraries.
        missing = {}
        for path in sorted((KIT / "bin").iterdir()) + sorted((KIT / "lib").glob("*.so*")):
            result = subprocess.run(["ldd", str(path)], capture_output=True, text=True,
                                    env=self.env)
            lost = [line.split("=>")[0].strip() for line in result.stdout.splitlines()
                    if "not found" in line]
            if result.returncode != 0 and "not a dynamic executable" not in result.stderr:
                said = (result.stdout + result.stderr).splitlines()
                lost.append(next((line.split(": ", 1)[-1] for line in said if "error" in line),
                                 f"ldd: status {result.returncode}"))
            if lost:
                missing[path.name] = lost
        p["libraries_missing"] = missing
        # The GPU.
        if self.emulated:
            p["gpu"] = "none needed (TASKGRID_DEVICE=emulated)"
        else:
            self.gpu = probe_gpu(KIT / "lib")
            p["gpu"] = self.gpu
        # MPI: the launcher and a two-rank exchange through UCX.
        status, output, _ = self.mpi(2, "taskbench-mpi", ["-steps", "4", "-width", "2"], 60,
                                     name="preflight-mpi")
        p["mpi"] = {"launcher": str(self.mpiexec[0]), "two_ranks_ok": status == 0,
                    "detail": output.strip().splitlines()[-1] if status else "ok"}
        # NCCL (never carried).
        self.nccl = find_nccl()
        p["nccl"] = self.nccl or "not found (NCCL steps run the staged path only)"
        try:
            import matplotlib  # noqa: F401
            p["matplotlib"] = True
        except ImportError:
            p["matplotlib"] = False
        p["python"] = sys.version.split()[0]

    def gpu_ready(self) -> None:
        if self.emulated:
            return
        if not self.gpu.get("ok"):
            raise Skip(f"no usable GPU: {self.gpu.get('error', 'unknown')}")

    def mpi_ready(self) -> None:
        if not self.preflight["mpi"]["two_ranks_ok"]:
            raise Skip(f"the kit's MPI does not run: {self.preflight['mpi']['detail']}")

    # --------------------------------------------------------------- steps --
    def step_conformance(self, out: Outcome, budget: float) -> None:
        self.gpu_ready()
        env = {"TASKGRID_DEVICE": self.device}
        if not self.emulated:
            # The suite tests every backend it finds: CUDA must be one of them here.
            status, listing, _ = self.run([str(KIT / "bin" / "taskgrid_device_tests"),
                                           "--gtest_list_tests"], 30, name="device-tests-list")
            check(out, "CUDA backend in the conformance suite", "cuda" in listing.lower(),
                  "the suite lists CUDA tests" if "cuda" in listing.lower() else listing[-300:])
        status, output, timed_out = self.run([str(KIT / "bin" / "taskgrid_device_tests")],
                                             budget * 0.35, name="device-tests")
        passed = parse_gtest(output)
        check(out, "device conformance suite", status == 0 and not timed_out,
              f"{passed} tests passed" if status == 0 else tail(output))
        out.figures["conformance_tests_passed"] = passed
        cases = [(1, "cluster", {}), (2, "cluster", {}), (4, "cluster", {}), (2, "spmd", {}),
                 (2, "spmd", {"TASKGRID_DEVICE_STAGING_BYTES": "64"})]
        for index, (ranks, mode, extra) in enumerate(cases):
            if self.left() < 10:
                raise Stopped("out of time before every differential case ran")
            case_env = {"TASKGRID_MODE": mode, "TASKGRID_DEVICE": self.device,
                        "TASKGRID_DEVICE_MEMORY": "16384", "TASKGRID_DEVICE_STREAMS": "2",
                        "TASKGRID_STATS": "1", **extra}
            if self.emulated:
                case_env["TASKGRID_EMULATED_DEVICES"] = "2"
            graphs = "60" if self.emulated else "200"
            status, output, timed_out = self.mpi(
                ranks, "taskgrid-differential",
                ["--graphs", graphs, "--seed", str(9100 + index), "--tasks-max", "60",
                 "--hang-seconds", "30"], budget * 0.1, case_env,
                name=f"differential-{mode}-np{ranks}")
            # As the differential device tests require: rank 0's device ran tasks.
            ok = (status == 0 and not timed_out
                  and re.search(r"taskgrid device stats: rank 0 tasks [1-9]", output) is not None)
            label = f"differential graphs on {self.device} devices, {mode}, {ranks} ranks" + (
                ", staged in 64-byte pieces" if extra else "")
            check(out, label, ok, f"{graphs} graphs match sequential execution" if ok
                  else tail(output))
        if self.have("cuda_scale"):
            status, output, _ = self.mpi(2, "cuda_scale", [], 60, env, name="cuda_scale")
            check(out, "cuda_scale example, 2 ranks", status == 0 and "every value is 8" in output,
                  tail(output, 1))
        if not all(c["ok"] for c in out.checks):
            raise Failed("a conformance check failed")

    def step_nccl(self, out: Outcome, budget: float) -> None:
        self.gpu_ready()
        program = "taskgrid-pgas-device-check"
        if not self.have(program):
            raise Skip(f"{program} is not in this kit")
        env = {"TASKGRID_DEVICE": self.device}
        expected_one = "nccl" if (self.nccl and not self.emulated) else "staged"
        if self.nccl:
            env["TASKGRID_NCCL_LIBRARY"] = self.nccl
        for ranks, expected in ((1, expected_one), (2, "staged")):
            # Two ranks share the node's one GPU, which NCCL refuses: the staged path.
            status, output, timed_out = self.mpi(ranks, program, ["--expect-path", expected],
                                                 budget / 2, env, name=f"pgas-device-np{ranks}")
            ok = status == 0 and not timed_out and f"path {expected}" in output
            check(out, f"PGAS device broadcast and all-reduce, {ranks} rank(s), {expected} path",
                  ok, first_line_with(output, "pgas device collectives: ok on") or tail(output))
            out.figures[f"np{ranks}"] = [line for line in output.splitlines()
                                         if "pgas device" in line][:4]
        if self.nccl is None and not self.emulated:
            out.reason = "libnccl.so.2 not found on this node: NCCL itself not exercised"
        if not all(c["ok"] for c in out.checks):
            raise Failed("a device collective check failed")

    def kernel_flags(self) -> list[str]:
        lanes = self.gpu.get("lanes", 262144) if not self.emulated else 256
        return ["-kernel", "gpu_compute_bound", "-gpu-lanes", str(lanes)]

    def step_gpu_peak(self, out: Outcome, budget: float) -> None:
        self.gpu_ready()
        iterations = "4096" if self.emulated else "4000000"
        runs = {
            "mpi_omp": ("taskbench-mpi_omp", ["-device", "gpu", "-worker", "1"], {}),
            "taskgrid_spmd": ("taskbench-taskgrid_spmd", ["-taskgrid:device", "gpu"],
                              {"TASKGRID_DEVICE": self.device}),
        }
        if self.emulated:
            del runs["mpi_omp"]
            out.reason = "mpi_omp -device gpu needs CUDA: only TaskGrid's device tasks run here"
        peak = self.gpu.get("fp64_peak")
        out.figures["fp64_peak"] = peak
        for system, (program, flags, env) in runs.items():
            best = None
            for _ in range(3):
                status, output, _ = self.mpi(
                    1, program, ["-steps", "1", "-width", "1", *self.kernel_flags(), "-iter",
                                 iterations, *flags], budget / 7, env, name=f"peak-{system}")
                rate = parse_rate(output)
                if status != 0 or rate is None:
                    raise Failed(f"{system}: {tail(output)}")
                best = rate if best is None else max(best, rate)
            out.figures[f"{system}_flops"] = best
            if peak:
                out.figures[f"{system}_fraction_of_peak"] = best / peak

    def metg(self, name: str, systems: str, cores: int, graph: list[str], extra: list[str],
             timeout: float, env: dict | None = None, cpus: list[int] | None = None) -> dict:
        """One METG sweep; its metg.json as a dict (raises Failed when it did not finish)."""
        out_dir = self.work / "metg" / name
        command = [sys.executable, "-m", "taskgrid_metg", "--systems", systems, "--cores",
                   str(cores), "--build-dir", str(KIT), "--mpiexec", " ".join(self.mpiexec),
                   "--out-dir", str(out_dir), "--run-timeout", "60", *extra, "--", *graph]
        status, output, timed_out = self.run(command, timeout, env, name=f"metg-{name}",
                                             cpus=cpus)
        document = out_dir / "metg.json"
        if timed_out:
            raise Stopped(f"METG sweep '{name}' did not finish within {timeout:.0f} s")
        if status != 0 or not document.exists():
            raise Failed(f"METG sweep '{name}' failed: {tail(output)}")
        return json.loads(document.read_text())

    def step_gpu_metg(self, out: Outcome, budget: float) -> None:
        self.gpu_ready()
        self.mpi_ready()
        peak = self.outcomes.get("gpu_peak", Outcome()).figures.get("fp64_peak")
        if self.emulated:
            systems, exps, reps, steps = "taskgrid,taskgrid_spmd", (3, 10), 1, "20"
            out.reason = "emulated devices: mpi_omp -device gpu needs CUDA"
        else:
            # Granularity per iteration: 8 x lanes FLOPs at the FP64 peak, about 65 ns on an
            # H100 with 270,336 lanes: 2^4..2^15 spans 1 us to 2 ms (MPI+OpenMP's METG in the
            # MPI Proxy Plugin paper: 0.09 ms; the plugin's: 0.65 ms). On an H200, mpi_omp was
            # still at 62% efficiency at 2^7 (13 us): the sweep starts at 2^4.
            systems, exps, reps, steps = "mpi_omp,taskgrid,taskgrid_spmd", (4, 15), 2, "50"
        env = {"TASKGRID_DEVICE": self.device}
        document = self.metg(
            "gpu", systems, 1,
            ["-type", "stencil_1d", "-steps", steps, "-width", "4", *self.kernel_flags()],
            ["--device", "gpu", "--peak", f"{peak:.6g}" if peak else "sweep",
             "--min-exp", str(exps[0]), "--max-exp", str(exps[1]), "--reps", str(reps)],
            budget, env)
        out.figures["metg_us"] = metg_values(document)
        out.figures["why_na"] = metg_reasons(document)
        out.figures["peak"] = document["headline"]["peak"]
        base = out.figures["metg_us"].get("mpi_omp")
        if base:
            out.figures["ratio_to_mpi_omp"] = {
                s: v / base for s, v in out.figures["metg_us"].items() if v}

    def metg_over_sizes(self, out: Outcome, label: str, systems: str, sizes: tuple[int, ...],
                        unit: str, graph: tuple[int, int, int, int], extra: list[str],
                        budget: float) -> tuple[dict, list[int], Failed | None]:
        """One METG sweep per size (ranks or cores), each its own share of the budget, so
        that running out of time loses one size, not the step. graph: steps, min and max
        -iter exponent, reps. Returns {system: {size: METG us}}, the sizes that ran (both
        also in out.figures) and what ended the sweeps early, if anything."""
        steps, low, high, reps = graph
        table: dict[str, dict[int, float | None]] = {}
        done: list[int] = []
        out.figures[unit] = done
        out.figures["metg_us"] = table
        for index, size in enumerate(sizes):
            # An equal share of what is left; the last size gets all of it.
            share = min(self.left(), budget / (len(sizes) - index))
            if share < 15:
                return table, done, Stopped(f"out of time before {size} {unit}")
            started = time.monotonic()
            try:
                document = self.metg(
                    f"{label}-np{size}", systems, size,
                    ["-type", "stencil_1d", "-steps", str(steps), "-width", str(size), "-kernel",
                     "compute_bound"],
                    [*extra, "--min-exp", str(low), "--max-exp", str(high), "--reps", str(reps)],
                    share)
            except Failed as why:  # keep the sizes that ran; larger ones would not fit either
                return table, done, type(why)(f"{size} {unit}: {why}")
            for system, value in metg_values(document).items():
                table.setdefault(system, {})[size] = value
            for system, why in metg_reasons(document).items():
                out.figures.setdefault("why_na", {})[f"{system} at {size} {unit}"] = why
            done.append(size)
            budget -= time.monotonic() - started
        return table, done, None

    def step_scaling(self, out: Outcome, budget: float) -> None:
        self.mpi_ready()
        sizes = (2, 4) if self.emulated else (2, 4, 8, 16)
        graph = (100, 4, 12, 1) if self.emulated else (300, 6, 15, 2)
        table, done, ended = self.metg_over_sizes(out, "cpu", "mpi,taskgrid_spmd,taskgrid",
                                                  sizes, "ranks", graph, [], budget)
        if done:
            first, last = done[0], done[-1]
            out.figures["growth"] = {s: (v[last] / v[first]) if v.get(first) and v.get(last)
                                     else None for s, v in table.items()}
            out.figures["ratio_to_mpi"] = {
                s: {r: ratio(v.get(r), table.get("mpi", {}).get(r)) for r in done}
                for s, v in table.items()}
        if ended:
            raise ended  # the figures of the sizes that ran stay

    def two_cores(self) -> list[int]:
        """Two CPUs of this process on different physical cores where sysfs tells the
        hardware threads of a core apart: "2 cores" means two cores, as on the 2-core VM."""
        allowed = sorted(os.sched_getaffinity(0))
        chosen: list[int] = []
        cores_seen: set[str] = set()
        for cpu in allowed:
            siblings = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
            try:
                core = siblings.read_text().strip()
            except OSError:
                core = str(cpu)
            if core not in cores_seen:
                cores_seen.add(core)
                chosen.append(cpu)
            if len(chosen) == 2:
                return chosen
        raise Skip(f"fewer than two cores to pin to (CPUs {allowed})")

    def hop(self, mode: str, cpus: list[int], timeout: float) -> dict:
        """taskgrid-hop-bench in one mode: {bytes: {taskgrid_us, mpi_us, ratio, goal_us}}."""
        hops, rounds = ("200", "3") if self.emulated else ("1000", "5")
        status, output, timed_out = self.mpi(
            2, "taskgrid-hop-bench",
            ["--mode", mode, "--bytes", "8,1024,65536", "--hops", hops, "--rounds", rounds],
            timeout, name=f"hop-{mode}", cpus=cpus)
        if timed_out:
            raise Stopped(f"the hop benchmark ({mode}) did not finish within {timeout:.0f} s")
        if status != 0:
            raise Failed(f"hop benchmark ({mode}): {tail(output)}")
        rows: dict[int, dict] = {}
        for line in output.splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[0].isdigit():
                hop_us, mpi_us = float(fields[1]), float(fields[2])
                rows[int(fields[0])] = {"taskgrid_us": hop_us, "mpi_us": mpi_us,
                                        "ratio": hop_us / mpi_us if mpi_us else None,
                                        "goal_us": 1.5 * mpi_us + 0.3}
        if not rows:
            raise Failed(f"hop benchmark ({mode}) printed no figures: {tail(output)}")
        return rows

    def step_engine(self, out: Outcome, budget: float) -> None:
        """Issue #31's figures on two cores of this node (pinned): a hop of the cross-rank
        critical path against MPI, METG at 2 ranks (one and eight tasks per core, repeated),
        and at 3 and 4 ranks on the same two cores (oversubscribed)."""
        self.mpi_ready()
        cpus = self.two_cores()
        out.figures["cpus"] = cpus
        started = time.monotonic()
        hops = out.figures["hop"] = {}
        for mode in ("spmd", "cluster"):
            hops[mode] = self.hop(mode, cpus, budget * 0.1)
        # (label, systems, ranks, width, (steps, min and max -iter exponent, reps)): 2 ranks
        # at one task per core three times (#31 asks for the median of 3), at eight tasks per
        # core once, then 3 and 4 ranks on the same two cores. mpi is left out of those: its
        # ranks busy-poll, a step takes milliseconds there, and #31 does not gate it.
        both, taskgrid = "mpi,taskgrid_spmd,taskgrid", "taskgrid_spmd,taskgrid"
        if self.emulated:
            small = (50, 4, 11, 1)
            plan = [("2r-w2-run1", both, 2, 2, small), ("2r-w16", both, 2, 16, small),
                    ("3r-w3", taskgrid, 3, 3, small), ("4r-w4", taskgrid, 4, 4, small)]
        else:
            plan = [(f"2r-w2-run{i}", both, 2, 2, (300, 6, 15, 2)) for i in (1, 2, 3)]
            plan += [("2r-w16", both, 2, 16, (100, 4, 13, 2)),
                     ("3r-w3", taskgrid, 3, 3, (100, 6, 16, 1)),
                     ("4r-w4", taskgrid, 4, 4, (100, 6, 16, 1))]
        table = out.figures["metg_us"] = {}
        try:
            for index, (label, systems, ranks, width, graph) in enumerate(plan):
                left = budget - (time.monotonic() - started)
                share = min(self.left(), left / (len(plan) - index))
                if share < 10:
                    raise Stopped(f"out of time before {label}")
                steps, low, high, reps = graph
                overrides = [] if ranks == 2 else [
                    a for s in systems.split(",") for a in ("--ranks", f"{s}={ranks}")]
                document = self.metg(
                    f"engine-{label}", systems, 2,
                    ["-type", "stencil_1d", "-steps", str(steps), "-width", str(width),
                     "-kernel", "compute_bound"],
                    [*overrides, "--min-exp", str(low), "--max-exp", str(high), "--reps",
                     str(reps)], share, cpus=cpus)
                table[label] = metg_values(document)
                for system, why in metg_reasons(document).items():
                    out.figures.setdefault("why_na", {})[f"{system} at {label}"] = why
        finally:  # the summary of what ran, also when the time ran out
            out.figures["summary"] = engine_summary(table)

    def step_offload(self, out: Outcome, budget: float) -> None:
        self.mpi_ready()
        if not self.have("taskbench-omp_target"):
            raise Skip("omp_target is not in this kit (left out to fit, or clang-16 missing)")
        sizes = (2,) if self.emulated else (2, 4, 8, 16)
        graph = (50, 6, 12, 1) if self.emulated else (200, 7, 16, 2)
        table, done, ended = self.metg_over_sizes(out, "offload", "mpi_omp,omp_target", sizes,
                                                  "cores", graph, ["--host-not-charged"], budget)
        out.figures["omp_target_over_mpi_omp"] = {
            c: ratio(table.get("omp_target", {}).get(c), table.get("mpi_omp", {}).get(c))
            for c in done}
        if ended:
            raise ended

    def step_transfers(self, out: Outcome, budget: float) -> None:
        self.gpu_ready()
        self.mpi_ready()
        result = self.work / "transfers.json"
        max_bytes = "1M" if self.emulated else "256M"
        status, output, timed_out = self.mpi(
            2, "taskgrid-transfer-bench",
            ["--min-bytes", "4K", "--max-bytes", max_bytes, "--repeat", "5", "--json",
             str(result)], budget, {"TASKGRID_DEVICE": self.device}, name="transfers")
        if timed_out:
            raise Stopped(f"the transfer benchmark did not finish within {budget:.0f} s")
        if status != 0 or not result.exists():
            raise Failed(f"transfer benchmark: {tail(output)}")
        data = json.loads(result.read_text())
        out.figures["transfers"] = data
        out.figures["summary"] = [line for line in output.splitlines()
                                  if line.startswith(("h2d", "d2h", "d2d")) or "GB/s" in line][:40]

    def step_pgas(self, out: Outcome, budget: float) -> None:
        self.mpi_ready()
        ranks = 2 if self.emulated else min(16, os.cpu_count() or 2)
        csv = self.work / "pgas.csv"
        status, output, timed_out = self.mpi(
            ranks, "taskgrid-pgas-bench",
            ["--sections", "latency,collectives", "--max-bytes", "64K" if self.emulated else "1M",
             "--rounds", "3", "--csv", str(csv)], budget, name="pgas")
        if timed_out:
            raise Stopped(f"the PGAS benchmark did not finish within {budget:.0f} s")
        if status != 0:
            raise Failed(f"PGAS benchmark: {tail(output)}")
        out.figures["ranks"] = ranks
        out.figures["csv_lines"] = csv.read_text().splitlines()[:60] if csv.exists() else []

    # -------------------------------------------------------------- driver --
    def execute(self, steps: list[str]) -> None:
        # Seconds per step on the GPU node (16 cores): 510 in all, so that the run, the
        # machine's start and the transfers fit its 15 minutes (a rerun of what did not
        # finish takes --steps and a smaller --budget). A step of
        # sweeps gives each size an equal share, and a share under 15 s is not started:
        # offload's four sizes need 60 s at least (on an H200 gpu_metg took 29 s).
        budgets = {"conformance": 50, "nccl": 15, "gpu_peak": 20, "gpu_metg": 50, "scaling": 95,
                   "engine": 180, "offload": 70, "transfers": 20, "pgas": 10}
        functions: dict[str, Callable[[Outcome, float], None]] = {
            name: getattr(self, f"step_{name}") for name in STEP_NAMES}
        for name in steps:
            out = Outcome()
            self.outcomes[name] = out
            budget = budgets[name] * self.args.scale
            if self.left() < 10:
                out.status, out.reason = "skipped", (
                    f"the run's budget ({self.args.budget:.0f} s) is used up")
                log(f"{name}: skipped ({out.reason})")
                continue
            started = time.monotonic()
            log(f"{name}: running (budget {min(budget, self.left()):.0f} s)")
            try:
                functions[name](out, min(budget, self.left()))
            except Skip as why:
                out.status, out.reason = "skipped", str(why)
            except Failed as why:
                out.status = "stopped" if isinstance(why, Stopped) else "failed"
                out.reason = str(why)
            except Exception as error:  # a bug in this runner: report it, go on
                out.status, out.reason = "failed", f"{type(error).__name__}: {error}"
            out.seconds = time.monotonic() - started
            log(f"{name}: {out.status} in {out.seconds:.0f} s"
                + (f" ({out.reason})" if out.reason else ""))


# ------------------------------------------------------------------ probes --
def probe_gpu(lib: Path) -> dict:
    info: dict = {"ok": False}
    smi = shutil.which("nvidia-smi")
    if smi:
        result = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                                 "--format=csv,noheader,nounits"], capture_output=True, text=True)
        if result.returncode == 0 and result.stdout.strip():
            fields = [s.strip() for s in result.stdout.splitlines()[0].split(",")]
            info.update(name=fields[0], driver=fields[1], memory_mib=fields[2],
                        count=len(result.stdout.strip().splitlines()))
            if len(fields) > 3 and fields[3].isdigit():
                info["smi_max_clock_mhz"] = int(fields[3])
    try:
        cudart = ctypes.CDLL(str(next(lib.glob("libcudart.so.*"))))
    except (StopIteration, OSError) as error:
        info["error"] = f"the CUDA runtime does not load: {error}"
        return info
    count = ctypes.c_int(0)
    status = cudart.cudaGetDeviceCount(ctypes.byref(count))
    if status != 0 or count.value == 0:
        cudart.cudaGetErrorString.restype = ctypes.c_char_p
        said = (cudart.cudaGetErrorString(status) or b"").decode(errors="replace")
        info["error"] = f"cudaGetDeviceCount: error {status} ({said}), {count.value} devices"
        return info

    def attribute(code: int) -> int:
        value = ctypes.c_int(0)
        cudart.cudaDeviceGetAttribute(ctypes.byref(value), code, 0)
        return value.value

    sms, clock_khz = attribute(16), attribute(13)
    if clock_khz <= 0 and info.get("smi_max_clock_mhz"):  # the attribute may be retired
        clock_khz = info["smi_max_clock_mhz"] * 1000
    major, minor, threads = attribute(75), attribute(76), attribute(39)
    info.update(ok=True, devices=count.value, sms=sms, clock_mhz=clock_khz / 1000,
                compute_capability=f"{major}.{minor}", lanes=sms * threads)
    # FP64 FMA units per SM without tensor cores: 64 on the data-centre parts (sm_60, sm_70,
    # sm_80, sm_90); others are not FP64 parts and get no peak.
    if (major, minor) in ((6, 0), (7, 0), (8, 0), (9, 0)) and clock_khz > 0:
        info["fp64_peak"] = sms * clock_khz * 1e3 * 64 * 2
    return info


def find_nccl() -> str | None:
    explicit = os.environ.get("TASKGRID_NCCL_LIBRARY")
    if explicit and Path(explicit).exists():
        return explicit
    result = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True)
    for line in result.stdout.splitlines():
        if "libnccl.so.2" in line and "=>" in line:
            return line.split("=>")[1].strip()
    candidates = []
    for base in sys.path + ["/usr/local/lib", "/usr/lib", "/opt"]:
        candidates += glob.glob(f"{base}/nvidia/nccl/lib/libnccl.so.2")
        candidates += glob.glob(f"{base}/torch/lib/libnccl*.so*")
    candidates += glob.glob("/usr/local/cuda*/lib*/libnccl.so.2")
    return candidates[0] if candidates else None


# ----------------------------------------------------------------- parsing --
def engine_summary(table: dict[str, dict[str, float | None]]) -> dict:
    """Per system: the median and spread of the 2-rank runs at one task per core, the other
    figures, and the ratios #31 sets goals on (to mpi at 2 ranks; 3 and 4 ranks over the
    system's own 2-rank median, goal at most 1.5)."""
    summary: dict[str, dict] = {}
    runs = [values for label, values in table.items() if label.startswith("2r-w2-")]
    for system in sorted({s for values in table.values() for s in values}):
        values = sorted(v for v in (run.get(system) for run in runs) if v)
        median = values[len(values) // 2] if values else None
        row = summary[system] = {"2r_w2_median_us": median, "2r_w2_spread_us": values}
        for label in ("2r-w16", "3r-w3", "4r-w4"):
            value = table.get(label, {}).get(system)
            if label in table:
                row[f"{label}_us"] = value
            if label != "2r-w16" and value and median:
                row[f"{label}_over_own_2r"] = value / median
    base = summary.get("mpi", {})
    for system in ("taskgrid_spmd", "taskgrid"):
        row = summary.get(system)
        if not row:
            continue
        row["2r_w2_over_mpi"] = ratio(row.get("2r_w2_median_us"), base.get("2r_w2_median_us"))
        row["2r_w16_over_mpi"] = ratio(row.get("2r-w16_us"), base.get("2r-w16_us"))
    return summary


def check(out: Outcome, name: str, ok: bool, detail: str) -> None:
    out.checks.append({"name": name, "ok": bool(ok), "detail": detail})


def tail(text: str, lines: int = 3) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def first_line_with(text: str, needle: str) -> str:
    return next((line.strip() for line in text.splitlines() if needle in line), "")


def parse_gtest(output: str) -> int:
    for line in output.splitlines():
        if line.startswith("[  PASSED  ]"):
            return int(line.split()[3])
    return 0


def parse_rate(output: str) -> float | None:
    for line in output.splitlines():
        if line.startswith("FLOP/s"):
            return float(line.split()[1])
    return None


def metg_values(document: dict) -> dict[str, float | None]:
    return {system: record["headline"]["metg_us"] for system, record in document["metg"].items()}


def ratio(value: float | None, base: float | None) -> float | None:
    return value / base if value and base else None


def metg_reasons(document: dict) -> dict[str, str]:
    """Why a system has no METG (the tool's reason), for the systems that have none."""
    return {system: record["headline"]["reason"] for system, record in document["metg"].items()
            if record["headline"]["metg_us"] is None}


# ------------------------------------------------------------------ report --
def fmt(value, unit: str = "", digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}g}{unit}"
    return f"{value}{unit}"


def markdown(runner: Runner) -> str:
    p = runner.preflight
    lines = [f"# TaskGrid device kit report ({'emulated' if runner.emulated else 'GPU'})", "",
             f"{datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}, "
             f"host {p.get('host')}, {p.get('cores')} cores, load before {p.get('load_before')}, "
             f"after {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; "
             f"run took {time.monotonic() - runner.started:.0f} s.", ""]
    if runner.emulated:
        lines += ["**Emulated devices: these figures test the kit's steps, not a GPU.**", ""]
    kit = p.get("kit", {})
    lines += ["## Preflight", "", "| item | value |", "|---|---|",
              f"| kit | commit {kit.get('commit')}, packed {kit.get('packed')}, build "
              f"{kit.get('build')} |",
              f"| GPU | {json.dumps(p.get('gpu'))} |",
              f"| MPI | {p['mpi']['launcher']}: two ranks {'ok' if p['mpi']['two_ranks_ok'] else 'FAILED: ' + p['mpi']['detail']} |",
              f"| libraries | {'all found' if not p['libraries_missing'] else json.dumps(p['libraries_missing'])} |",
              f"| NCCL | {p.get('nccl')} |",
              f"| /dev/shm | {p.get('dev_shm', 'n/a')} |",
              f"| Python | {p.get('python')}, matplotlib {'yes' if p.get('matplotlib') else 'no (no plots)'} |"]
    for note in kit.get("notes") or []:
        lines.append(f"| kit note | {note} |")
    for item in kit.get("left_out") or []:
        lines.append(f"| left out | {item['program']}: {item['why']} |")
    lines += ["", "## Steps", "", "| step | status | seconds | reason |", "|---|---|---|---|"]
    for name, out in runner.outcomes.items():
        lines.append(f"| {name} | {out.status} | {out.seconds:.0f} | {out.reason} |")
    for name, out in runner.outcomes.items():
        if out.status == "skipped":
            continue
        lines += ["", f"## {name}", ""]
        for c in out.checks:
            lines.append(f"- {'PASS' if c['ok'] else 'FAIL'} {c['name']}: {c['detail']}")
        f = out.figures
        if name == "gpu_peak":
            lines.append(f"- FP64 peak (SMs x clock x 128): {fmt(f.get('fp64_peak'), ' FLOP/s')}")
            for system in ("mpi_omp", "taskgrid_spmd"):
                if f"{system}_flops" in f:
                    lines.append(f"- {system}: {fmt(f[system + '_flops'], ' FLOP/s')}"
                                 f" ({fmt(f.get(system + '_fraction_of_peak'))} of peak)")
        if f.get("why_na"):
            lines += [f"- no METG for {key}: {why}" for key, why in f["why_na"].items()]
        if name == "gpu_metg":
            for system, value in f.get("metg_us", {}).items():
                ratio = f.get("ratio_to_mpi_omp", {}).get(system)
                lines.append(f"- {system}: METG {fmt(value, ' us')}"
                             + (f" ({ratio:.2f}x mpi_omp)" if ratio else ""))
        elif name in ("scaling", "offload"):
            sizes = f.get("ranks") or f.get("cores") or []
            table = f.get("metg_us", {})
            lines += ["", "| system | " + " | ".join(f"{n} {'ranks' if name == 'scaling' else 'cores'}"
                                                   for n in sizes) + " |",
                      "|---|" + "---|" * len(sizes)]
            for system, values in table.items():
                lines.append(f"| {system} | " + " | ".join(fmt(values.get(n), " us")
                                                           for n in sizes) + " |")
            if name == "scaling":
                for system, growth in (f.get("growth") or {}).items():
                    lines.append(f"- {system}: METG at {sizes[-1]} ranks / at {sizes[0]}: "
                                 f"{fmt(growth)} (goal: at most 2)")
            else:
                for cores, ratio in (f.get("omp_target_over_mpi_omp") or {}).items():
                    lines.append(f"- {cores} cores: omp_target / mpi_omp {fmt(ratio)}")
        elif name == "engine":
            lines.append(f"- pinned to CPUs {f.get('cpus')} (two cores)")
            for mode, rows in (f.get("hop") or {}).items():
                for size, row in rows.items():
                    lines.append(
                        f"- hop, {mode}, {size} B: {fmt(row['taskgrid_us'], ' us')} against MPI's "
                        f"one-way {fmt(row['mpi_us'], ' us')} ({fmt(row['ratio'])}x; goal "
                        f"{fmt(row['goal_us'], ' us')})")
            labels = list(f.get("metg_us", {}))
            lines += ["", "| system | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
            systems = sorted({s for values in f.get("metg_us", {}).values() for s in values})
            for system in systems:
                lines.append(f"| {system} | " + " | ".join(
                    fmt(f["metg_us"][label].get(system), " us") for label in labels) + " |")
            lines.append("")
            for system, row in (f.get("summary") or {}).items():
                lines.append(f"- {system}: " + ", ".join(
                    f"{key} " + ("/".join(fmt(v) for v in value) if isinstance(value, list)
                                 else fmt(value)) for key, value in row.items()))
        elif name == "transfers":
            lines += [f"    {line}" for line in f.get("summary", [])]
        elif name == "nccl":
            for key in ("np1", "np2"):
                lines += [f"    {line}" for line in f.get(key, [])]
        elif name == "pgas":
            lines += [f"    {line}" for line in f.get("csv_lines", [])[:20]]
    return "\n".join(lines) + "\n"


def matplotlib_figure(width: float, height: float):
    """A Figure on the Agg canvas, or None without matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return None
    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    return figure


def scaling_plot(figures_by_step: dict[str, dict], path: Path) -> bool:
    """METG against ranks (scaling) and cores (offload), one panel each."""
    panels = [(n, figures_by_step[n]) for n in ("scaling", "offload")
              if figures_by_step.get(n, {}).get("metg_us")]
    figure = matplotlib_figure(6 * len(panels), 4.2) if panels else None
    if figure is None:
        return False
    for index, (name, figures) in enumerate(panels):
        axes = figure.add_subplot(1, len(panels), index + 1)
        for system, values in figures["metg_us"].items():
            points = sorted((int(n), v) for n, v in values.items() if v)
            if points:
                axes.plot([n for n, _ in points], [v for _, v in points], marker="o", label=system)
        axes.set_xscale("log", base=2)
        axes.set_yscale("log")
        axes.set_xlabel("ranks" if name == "scaling" else "cores (host not charged)")
        axes.set_ylabel("METG(50%), us")
        axes.set_title(f"{name}: stencil_1d, compute_bound")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return True


def efficiency_plot(document: dict, title: str, path: Path) -> bool:
    """Efficiency against granularity per system, from a sweep's metg.json (where the node
    had no matplotlib, so the METG tool drew nothing)."""
    figure = matplotlib_figure(6.5, 4.2)
    if figure is None:
        return False
    peak = document["headline"]["peak"]
    axes = figure.add_subplot(1, 1, 1)
    for system in document["metg"]:
        points = sorted((p["granularity_us"], p["efficiency_pct"].get(peak))
                        for p in document["points"] if p["system"] == system)
        points = [(g, e) for g, e in points if g and e is not None]
        if points:
            axes.plot([g for g, _ in points], [e for _, e in points], marker="o", label=system)
    axes.axhline(100 * document["headline"]["threshold"], color="grey", linestyle="--")
    axes.set_xscale("log")
    axes.set_xlabel("task granularity, us")
    axes.set_ylabel(f"efficiency, % of peak ({peak})")
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return True


def replot(report_dir: Path) -> list[Path]:
    """The plots of a report whose node had no matplotlib, drawn here from report.json and
    the sweeps' metg.json in logs.tar.gz."""
    document = json.loads((report_dir / "report.json").read_text())
    figures = {name: step.get("figures", {}) for name, step in document["steps"].items()}
    drawn = []
    if scaling_plot(figures, report_dir / "metg-scaling.png"):
        drawn.append(report_dir / "metg-scaling.png")
    logs = report_dir / "logs.tar.gz"
    if logs.exists():
        with tarfile.open(logs) as tar:
            for member, target, title in (
                    ("metg/gpu/metg.json", "metg-gpu.png", "METG on one GPU"),
                    ("metg/cpu-np16/metg.json", "metg-cpu-np16.png", "16 ranks, CPU")):
                try:
                    sweep = json.load(tar.extractfile(member))
                except KeyError:
                    continue
                if efficiency_plot(sweep, title, report_dir / target):
                    drawn.append(report_dir / target)
    return drawn


def write_report(runner: Runner, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    document = {
        "mode": "emulated" if runner.emulated else "gpu",
        "preflight": runner.preflight,
        "steps": {name: out.__dict__ for name, out in runner.outcomes.items()},
        "seconds": time.monotonic() - runner.started,
    }
    (out_dir / "report.json").write_text(json.dumps(document, indent=1, default=str) + "\n")
    (out_dir / "report.md").write_text(markdown(runner))
    files += [out_dir / "report.md", out_dir / "report.json"]
    gpu_plot = runner.work / "metg" / "gpu" / "metg.png"
    if gpu_plot.exists():
        shutil.copy2(gpu_plot, out_dir / "metg-gpu.png")
        files.append(out_dir / "metg-gpu.png")
    if scaling_plot({n: o.figures for n, o in runner.outcomes.items()},
                    out_dir / "metg-scaling.png"):
        files.append(out_dir / "metg-scaling.png")
    largest = runner.work / "metg" / "cpu-np16" / "metg.png"
    if largest.exists():
        shutil.copy2(largest, out_dir / "metg-cpu-np16.png")
        files.append(out_dir / "metg-cpu-np16.png")
    with tarfile.open(out_dir / "logs.tar.gz", "w:gz") as tar:
        tar.add(runner.logs, arcname="logs")
        if (runner.work / "metg").exists():
            tar.add(runner.work / "metg", arcname="metg")
    files.append(out_dir / "logs.tar.gz")
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="device-kit.sh run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--emulated", action="store_true",
                        help="emulated devices and small sizes (no GPU needed)")
    parser.add_argument("--steps", default=",".join(STEP_NAMES),
                        help=f"comma-separated, in this order: {','.join(STEP_NAMES)}")
    parser.add_argument("--out", type=Path, default=None,
                        help="report folder (default: $OUT if set, else device-kit-report/)")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds for the whole run (default 510 on a GPU, 600 emulated)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply each step's time budget (default 1)")
    parser.add_argument("--replot", type=Path, metavar="REPORT_DIR",
                        help="run nothing: draw a report's plots here (its node had no "
                        "matplotlib) from its report.json and logs.tar.gz")
    args = parser.parse_args(argv)
    if args.replot:
        drawn = replot(args.replot)
        print("drew " + (", ".join(str(p) for p in drawn) if drawn else "nothing "
                         "(no matplotlib, or no METG figures in the report)"))
        return 0 if drawn else 1
    steps = [s for s in args.steps.split(",") if s]
    unknown = [s for s in steps if s not in STEP_NAMES]
    if unknown:
        parser.error(f"unknown steps {unknown}; the steps are {', '.join(STEP_NAMES)}")
    steps = [s for s in STEP_NAMES if s in steps]
    if args.budget is None:
        args.budget = 600.0 if args.emulated else 510.0
    out_dir = args.out or Path(os.environ.get("OUT") or "device-kit-report")
    runner = Runner(args)
    log(f"preflight ({'emulated devices' if args.emulated else 'CUDA'}; kit {KIT})")
    runner.run_preflight()
    for key in ("gpu", "mpi", "nccl", "matplotlib", "libraries_missing"):
        log(f"  {key}: {runner.preflight.get(key)}")
    runner.execute(steps)
    files = write_report(runner, out_dir)
    log("report: " + ", ".join(str(f) for f in files))
    print((out_dir / "report.md").read_text())
    shutil.rmtree(runner.work, ignore_errors=True)
    # Emulated runs test the kit itself (CI): every step must run and pass there.
    bad = [n for n, o in runner.outcomes.items()
           if o.status == "failed" or (args.emulated and o.status != "ok")]
    if bad:
        log(f"failed steps: {', '.join(bad)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
