"""taskgrid-metg: sweep -iter for several systems and report METG.

    taskgrid-metg --systems mpi,omp,mpi_omp [options] -- <graph flags without -iter>

A system name may end in @mpich or @openmpi: the build directory and the launcher it runs
with (--build-dir/--mpiexec, --openmpi-build-dir/--openmpi-mpiexec).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import __version__, machine, output, peak
from .analysis import INTERPOLATIONS
from .flags import check_graph_flags, default_graph_flags, graph_kernels
from .results import Results, evaluate
from .runner import RunError
from .sweep import RunRecord, SweepAborted, plan_sweep, run_sweep
from .systems import (DEFAULT_MPI, DEVICES, GPU_KERNEL, MPI_FAMILIES, SYSTEMS, Launch,
                      SystemChoice, SystemSpec, make_launch, make_sim_launch, parse_system)

PEAK_BINARY = "taskbench-peak"
MAX_EXP_LIMIT = 40
BUSY_LOAD_PER_CORE = 0.5   # 1-minute load average per core above which timings are suspect

DEFAULT_MPIEXEC = "mpiexec.mpich"
# Open MPI binds each rank to a core by default, MPICH's hydra binds nothing: --bind-to none
# runs both alike. --oversubscribe allows more ranks than cores.
OPENMPI_MPIEXEC = ("mpirun.openmpi", "--bind-to", "none", "--oversubscribe")
OPENMPI_ROOT_FLAG = "--allow-run-as-root"   # Open MPI refuses to run as root without it

# The option that sets each MPI build's launcher, for messages.
MPIEXEC_OPTIONS = {"mpich": "--mpiexec", "openmpi": "--openmpi-mpiexec"}


def running_as_root() -> bool:
    geteuid = getattr(os, "geteuid", None)
    return geteuid is not None and geteuid() == 0


def default_openmpi_mpiexec() -> list[str]:
    """The Open MPI launcher: unbound ranks, oversubscription, and root allowed as root."""
    return [*OPENMPI_MPIEXEC, *([OPENMPI_ROOT_FLAG] if running_as_root() else [])]


@dataclass(frozen=True)
class Settings:
    systems: list[str]
    min_exp: int
    max_exp: int
    reps: int | None             # None: the spec's min(s + 1, 5) rule
    cores: int
    peak: str                    # auto, calibrated, sweep or given
    peak_value: float | None     # node peak for --peak NUMBER
    interp: str
    threshold: float
    out_dir: Path
    build_dir: Path
    mpiexec: list[str]
    run_timeout: float | None
    peak_iter: int
    peak_reps: int
    graph_flags: list[str]
    graph_flags_source: str      # "command line" or "default"
    dry_run: bool
    device: str = "cpu"          # cpu, or gpu (the systems' device option)
    host_not_charged: bool = False  # offload systems: rank 0's cores not charged
    openmpi_build_dir: Path = Path("build-openmpi")
    openmpi_mpiexec: list[str] = field(default_factory=default_openmpi_mpiexec)
    choices: dict[str, SystemChoice] = field(default_factory=dict)  # by label (`systems`)
    simulated: bool = False      # --sim-nodes: no calibration, the platform's peak

    def build_dir_for(self, family: str) -> Path:
        return self.openmpi_build_dir if family == "openmpi" else self.build_dir

    def mpiexec_for(self, family: str) -> list[str]:
        return self.openmpi_mpiexec if family == "openmpi" else self.mpiexec

    def families(self) -> list[str]:
        """The MPI builds the selected systems run from, the default first."""
        used = {choice.family for choice in self.choices.values()}
        return sorted(used, key=lambda family: family != DEFAULT_MPI)


def build_parser(systems: dict[str, SystemSpec]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="taskgrid-metg",
        usage="%(prog)s --systems LIST [options] [-- GRAPH_FLAGS...]",
        description="Measure METG (minimum effective task granularity) of Task Bench systems "
                    "by sweeping -iter over powers of two, largest first, interleaving systems.",
        epilog="Graph flags after '--' are passed to every run with '-iter 2^k' added to each "
               "graph ('-and' separates graphs). Without them: "
               + " ".join(default_graph_flags(0)).replace(" 0", " <cores>"))
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--systems", required=True,
                        help=f"comma-separated systems: {', '.join(systems)}; NAME@openmpi runs "
                             "NAME from the Open MPI build, NAME or NAME@mpich from --build-dir "
                             "(systems built with Open MPI only, such as starpu, default to it)")
    parser.add_argument("--min-exp", type=int, default=4, help="smallest -iter is 2^MIN_EXP (default 4)")
    parser.add_argument("--max-exp", type=int, default=16, help="largest -iter is 2^MAX_EXP (default 16)")
    parser.add_argument("--reps", type=int,
                        help="repetitions per size (default: min(s+1, 5), s = 0 for the largest size)")
    parser.add_argument("--cores", type=int, default=machine.available_cores(),
                        help="cores of the node to use (default: all available, %(default)s)")
    parser.add_argument("--ranks", action="append", default=[], metavar="SYS=N",
                        help="override MPI ranks of a system, e.g. mpi_omp=2 or "
                             "mpi@openmpi=2 (repeatable)")
    parser.add_argument("--threads", action="append", default=[], metavar="SYS=N",
                        help="override threads per rank of a system, e.g. omp=8 (repeatable)")
    parser.add_argument("--peak", default="auto",
                        help="headline peak: auto (calibrate when possible, else sweep), calibrate, "
                             "sweep, or a node peak number in the sweep's unit (FLOP/s or B/s)")
    parser.add_argument("--interp", choices=INTERPOLATIONS, default="linear",
                        help="headline interpolation (default linear, as in the spec)")
    parser.add_argument("--threshold", type=float, default=0.5,
                        help="efficiency threshold as a fraction (default 0.5)")
    parser.add_argument("--out-dir", type=Path, default=Path("metg-results"))
    parser.add_argument("--build-dir", type=Path, default=Path("build"),
                        help="CMake build directory holding bin/taskbench-*, for NAME and "
                             "NAME@mpich (default build)")
    parser.add_argument("--mpiexec", default=DEFAULT_MPIEXEC,
                        help="MPI launcher command of that build, may include options "
                             f"(default {DEFAULT_MPIEXEC})")
    parser.add_argument("--openmpi-build-dir", type=Path, default=Path("build-openmpi"),
                        help="CMake build directory configured with -DTASKGRID_MPI=openmpi, for "
                             "NAME@openmpi and starpu (default build-openmpi)")
    parser.add_argument("--openmpi-mpiexec",
                        help="Open MPI launcher command, may include options (default "
                             f"'{shlex.join(OPENMPI_MPIEXEC)}', plus {OPENMPI_ROOT_FLAG} "
                             "when run as root)")
    parser.add_argument("--run-timeout", type=float, default=600,
                        help="seconds before one run is killed; 0 = never (default 600)")
    parser.add_argument("--peak-iter", type=int, default=2 ** 24,
                        help="kernel iterations per calibration run (default 2^24)")
    parser.add_argument("--peak-reps", type=int, default=3, help="calibration runs (default 3)")
    parser.add_argument("--device", choices=DEVICES, default="cpu",
                        help="where the kernels run: cpu (default), or gpu (adds each system's "
                             "device option: mpi_omp -device gpu, taskgrid[_spmd] "
                             "-taskgrid:device gpu; kernel gpu_compute_bound; no calibrated peak)")
    parser.add_argument("--host-not-charged", action="store_true",
                        help="omp_target: charge only the device ranks' cores, not rank 0's (the "
                             "host runs no tasks; the MPP's figures charge no head node)")
    parser.add_argument("--sim-nodes", type=int, default=0, metavar="N",
                        help="run the systems on N simulated nodes (taskgrid-sim: mpi, "
                             "taskgrid, taskgrid_spmd); the peak is the platform's")
    parser.add_argument("--sim-platform", default="thismachine",
                        help="the simulated machine (bench/sim/platforms/NAME.platform)")
    parser.add_argument("--sim-cores-per-node", type=int, default=0, metavar="C",
                        help="cores per simulated node (default: the platform's)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands that would run, run nothing")
    return parser


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """(tool options, graph flags): graph flags follow the first '--'."""
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return argv, []


def parse_overrides(values: list[str], option: str, selected: dict[str, SystemChoice],
                    systems: dict[str, SystemSpec]) -> dict[str, int]:
    """{label in --systems: N}. SYSTEM may be written with or without its MPI suffix
    ('starpu' and 'starpu@openmpi' are one system), but names the same build."""
    by_key = {choice.key: label for label, choice in selected.items()}
    overrides = {}
    for item in (part for value in values for part in value.split(",") if part):
        name, sep, number = item.partition("=")
        if not sep or not number.isdigit() or int(number) < 1:
            raise ValueError(f"{option} expects SYSTEM=N with N >= 1, got '{item}'")
        try:
            label = by_key.get(parse_system(name, systems).key)
        except ValueError as error:
            raise ValueError(f"{option} {item}: {error}") from None
        if label is None:
            raise ValueError(f"{option} {item}: '{name}' is not one of --systems")
        overrides[label] = int(number)
    return overrides


def parse_peak(value: str) -> tuple[str, float | None]:
    if value in ("auto", "sweep"):
        return value, None
    if value in ("calibrate", "calibrated"):
        return "calibrated", None
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"--peak must be auto, calibrate, sweep or a number, got '{value}'") from None
    if not number > 0:
        raise ValueError(f"--peak number must be > 0, got {value}")
    return "given", number


def make_settings(args: argparse.Namespace, graph_flags: list[str],
                  systems: dict[str, SystemSpec]) -> Settings:
    selected = [name.strip() for name in args.systems.split(",") if name.strip()]
    if not selected:
        raise ValueError("--systems is empty")
    choices: dict[str, SystemChoice] = {}
    for name in selected:
        choice = parse_system(name, systems)
        twin = next((c.label for c in choices.values() if c.key == choice.key), None)
        if twin is not None:
            same = f"'{name}'" if twin == name else f"'{twin}' and '{name}'"
            raise ValueError(f"--systems lists a system twice: {same}")
        choices[name] = choice
    if args.min_exp < 0:
        raise ValueError("--min-exp must be >= 0")
    if args.min_exp > args.max_exp:
        raise ValueError(f"--min-exp ({args.min_exp}) is greater than --max-exp ({args.max_exp})")
    if args.max_exp > MAX_EXP_LIMIT:
        raise ValueError(f"--max-exp must be <= {MAX_EXP_LIMIT}")
    if args.reps is not None and args.reps < 1:
        raise ValueError("--reps must be >= 1")
    if args.cores < 1:
        raise ValueError("--cores must be >= 1")
    if not 0 < args.threshold <= 1:
        raise ValueError("--threshold must be a fraction in (0, 1], e.g. 0.5 for 50%")
    if args.run_timeout < 0 or args.peak_iter < 1 or args.peak_reps < 1:
        raise ValueError("--run-timeout must be >= 0, --peak-iter and --peak-reps >= 1")
    mpiexec = shlex.split(args.mpiexec)
    if not mpiexec:
        raise ValueError("--mpiexec is empty")
    openmpi_mpiexec = (default_openmpi_mpiexec() if args.openmpi_mpiexec is None
                       else shlex.split(args.openmpi_mpiexec))
    if not openmpi_mpiexec:
        raise ValueError("--openmpi-mpiexec is empty")
    check_graph_flags(graph_flags)
    if args.device == "gpu":
        if not graph_flags:
            raise ValueError("--device gpu needs graph flags (after '--') with "
                             "-kernel gpu_compute_bound")
        others = sorted(set(graph_kernels(graph_flags)) - {GPU_KERNEL})
        if others:
            raise ValueError(f"--device gpu runs the {GPU_KERNEL} kernel only, the graph flags "
                             f"use {', '.join(others)}")
    peak_choice, peak_value = parse_peak(args.peak)
    if args.device == "gpu" and peak_choice == "calibrated":
        raise ValueError("--peak calibrate measures CPU cores; with --device gpu use --peak sweep "
                         "or the GPU's peak (--peak NUMBER)")
    return Settings(
        systems=selected, min_exp=args.min_exp, max_exp=args.max_exp, reps=args.reps,
        cores=args.cores, peak=peak_choice, peak_value=peak_value, interp=args.interp,
        threshold=args.threshold, out_dir=args.out_dir, build_dir=args.build_dir, mpiexec=mpiexec,
        run_timeout=args.run_timeout or None, peak_iter=args.peak_iter, peak_reps=args.peak_reps,
        graph_flags=graph_flags or default_graph_flags(args.cores),
        graph_flags_source="command line" if graph_flags else "default", dry_run=args.dry_run,
        device=args.device, host_not_charged=args.host_not_charged,
        openmpi_build_dir=args.openmpi_build_dir, openmpi_mpiexec=openmpi_mpiexec,
        choices=choices)


def sim_platform_value(platform: str, key: str) -> str:
    """A key of a simulated platform file (a path, or NAME in the tree's bench/sim/platforms/)."""
    path = Path(platform)
    if "/" not in platform and not platform.endswith(".platform"):
        path = Path(__file__).resolve().parents[3] / "bench" / "sim" / "platforms" / f"{platform}.platform"
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise ValueError(f"--sim-platform {platform}: cannot read {path} ({error.strerror})") from None
    for line in lines:
        name, _, value = line.split("#", 1)[0].partition("=")
        if name.strip() == key:
            return value.strip()
    raise ValueError(f"--sim-platform {platform}: {path} gives no {key}")


def make_sim_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    """--sim-nodes: the whole simulated machine's cores, and its peak (unless --peak NUMBER)."""
    if args.sim_nodes < 1 or args.sim_cores_per_node < 0:
        raise ValueError("--sim-nodes must be >= 1 and --sim-cores-per-node >= 0")
    if args.ranks or args.threads:
        raise ValueError("--sim-nodes: the layout is the simulator's (--ranks and --threads "
                         "do not apply)")
    cores = args.sim_cores_per_node or int(
        sim_platform_value(args.sim_platform, "cores_per_node"))
    speed = float(sim_platform_value(args.sim_platform, "core_speed"))
    total = args.sim_nodes * cores
    peak_choice, peak_value = settings.peak, settings.peak_value
    if peak_choice != "given":
        peak_choice, peak_value = "given", total * speed
    # A simulated run is deterministic: one repetition unless --reps says otherwise.
    return replace(settings, cores=total, peak=peak_choice, peak_value=peak_value,
                   reps=settings.reps or 1, simulated=True,
                   graph_flags=settings.graph_flags if settings.graph_flags_source != "default"
                   else default_graph_flags(total))


def make_launches(settings: Settings, args: argparse.Namespace,
                  systems: dict[str, SystemSpec]) -> dict[str, Launch]:
    if getattr(args, "sim_nodes", 0):
        cores = settings.cores // args.sim_nodes
        return {label: make_sim_launch(systems[choice.name], settings.build_dir, args.sim_nodes,
                                       cores, args.sim_platform)
                for label, choice in settings.choices.items()}
    ranks = parse_overrides(args.ranks, "--ranks", settings.choices, systems)
    threads = parse_overrides(args.threads, "--threads", settings.choices, systems)
    launches = {}
    for label, choice in settings.choices.items():
        family = choice.family
        launches[label] = make_launch(
            systems[choice.name], settings.build_dir_for(family), settings.cores,
            settings.mpiexec_for(family), ranks.get(label), threads.get(label), settings.device,
            settings.host_not_charged, family=family)
    return launches


def missing_binary_message(settings: Settings, name: str, launch: Launch) -> str:
    build_dir = settings.build_dir_for(launch.family)
    if launch.family == "openmpi":
        return (f"missing binary {launch.binary} for system '{name}' (Open MPI build "
                f"{build_dir}): build it first (cmake -B {build_dir} -DTASKGRID_MPI=openmpi "
                f"&& cmake --build {build_dir}) or point --openmpi-build-dir at the Open MPI "
                "build directory")
    return (f"missing binary {launch.binary} for system '{name}': "
            f"build the project first (cmake --build {build_dir}) "
            "or point --build-dir at the build directory")


def check_executables(settings: Settings, launches: dict[str, Launch]) -> None:
    for name, launch in launches.items():
        if not (launch.binary.is_file() and os.access(launch.binary, os.X_OK)):
            raise ValueError(missing_binary_message(settings, name, launch))
    for family in settings.families():
        users = [name for name, launch in launches.items() if launch.mpi_family == family]
        launcher = settings.mpiexec_for(family)[0]
        if users and shutil.which(launcher) is None:
            raise ValueError(f"MPI launcher '{launcher}' not found (for {', '.join(users)}); "
                             f"set {MPIEXEC_OPTIONS[family]}")
    if settings.peak == "calibrated":
        kernel, reason = peak.calibration_kernel(graph_kernels(settings.graph_flags))
        if kernel is None:
            raise ValueError(f"--peak calibrate is not possible: {reason}; use --peak sweep")
        if not peak_binary(settings).is_file():
            raise ValueError(f"--peak calibrate needs {peak_binary(settings)}: build the project "
                             "first, or use --peak sweep")


def peak_binary(settings: Settings) -> Path:
    """taskbench-peak of the default build; that of the Open MPI build where only it has one
    (a run of @openmpi systems alone)."""
    candidates = [settings.build_dir_for(family) / "bin" / PEAK_BINARY
                  for family in [DEFAULT_MPI, *settings.families()]]
    return next((path for path in candidates if path.is_file()), candidates[0])


def config_record(settings: Settings, launches: dict[str, Launch], argv: list[str]) -> dict:
    """The session's settings as stored in metg.json."""
    return {
        "argv": argv,
        "systems": settings.systems,
        "min_exp": settings.min_exp, "max_exp": settings.max_exp,
        "reps": settings.reps,
        "reps_rule": f"fixed {settings.reps}" if settings.reps else "min(s + 1, 5), s = 0 for 2^max_exp",
        "cores": settings.cores,
        "layouts": {name: {"ranks": launch.layout.ranks, "threads": launch.layout.threads}
                    for name, launch in launches.items()},
        "peak": settings.peak, "peak_value": settings.peak_value,
        "interp": settings.interp, "threshold": settings.threshold,
        "out_dir": str(settings.out_dir), "build_dir": str(settings.build_dir),
        "mpiexec": settings.mpiexec,
        "openmpi_build_dir": str(settings.openmpi_build_dir),
        "openmpi_mpiexec": settings.openmpi_mpiexec,
        # Per MPI build: its directory and launcher ('mpich' is --build-dir / --mpiexec).
        "mpi_builds": {family: {"build_dir": str(settings.build_dir_for(family)),
                                "mpiexec": settings.mpiexec_for(family)}
                       for family in MPI_FAMILIES},
        "system_mpi": {name: launch.mpi_family or "" for name, launch in launches.items()},
        "run_timeout_s": settings.run_timeout,
        "peak_iter": settings.peak_iter, "peak_reps": settings.peak_reps,
        "graph_flags": settings.graph_flags, "graph_flags_source": settings.graph_flags_source,
        "device": settings.device, "host_not_charged": settings.host_not_charged,
    }


def core_counts(launches: dict[str, Launch]) -> list[int]:
    """Distinct numbers of cores the systems run on; each gets its own calibration."""
    return sorted({launch.layout.cores_used for launch in launches.values()}, reverse=True)


def run_calibration(settings: Settings, launches: dict[str, Launch], workdir: Path) -> peak.Peak:
    if settings.simulated:
        return peak.unavailable("calibrated", "FLOP/s", "a simulated machine: the platform's peak")
    kernel, reason = peak.calibration_kernel(graph_kernels(settings.graph_flags))
    if kernel is None:
        return peak.unavailable("calibrated", "FLOP/s", reason)
    binary = peak_binary(settings)
    if not binary.is_file():
        return peak.unavailable("calibrated", "FLOP/s", f"{binary} not found")
    try:
        return peak.calibrate(binary, kernel, settings.peak_iter, core_counts(launches),
                              settings.peak_reps, workdir, settings.run_timeout,
                              progress=lambda message: print(message, file=sys.stderr, flush=True))
    except RunError as error:
        if settings.peak == "calibrated":
            raise
        print(f"taskgrid-metg: warning: calibration failed, no calibrated peak:\n{error}",
              file=sys.stderr)
        return peak.unavailable("calibrated", "FLOP/s", f"calibration failed: {error.message}")


def print_dry_run(settings: Settings, launches: dict[str, Launch]) -> None:
    plan = plan_sweep(settings.systems, settings.min_exp, settings.max_exp, settings.reps)
    print(f"{len(plan)} runs, -iter 2^{settings.max_exp} down to 2^{settings.min_exp}")
    for name, launch in launches.items():
        env = " ".join(f"{key}={value}" for key, value in launch.environment().items())
        print(f"{name}: {env} {shlex.join(output.command_template(launch, settings.graph_flags))}")
    threads = ",".join(map(str, core_counts(launches)))
    print(f"calibration: {peak_binary(settings)} -kernel K -iter {settings.peak_iter} "
          f"-threads {{{threads}}} -json FILE")


def measure(settings: Settings, launches: dict[str, Launch]
            ) -> tuple[peak.Peak, list[RunRecord], str | None]:
    """Calibrate, then sweep: (calibrated peak, completed runs, why the sweep stopped early).

    A failed or interrupted sweep still returns the runs completed before, so that
    they are reported; a failed calibration raises RunError only for --peak calibrate.
    """
    with tempfile.TemporaryDirectory(prefix="taskgrid-metg-") as workdir:
        calibration = run_calibration(settings, launches, Path(workdir))
        plan = plan_sweep(settings.systems, settings.min_exp, settings.max_exp, settings.reps)
        try:
            records = run_sweep(plan, launches, settings.graph_flags, Path(workdir),
                                settings.run_timeout)
        except SweepAborted as stop:
            print(f"taskgrid-metg: error: sweep stopped after {len(stop.records)} of {len(plan)} "
                  f"runs: {stop.reason}", file=sys.stderr)
            return calibration, stop.records, stop.reason
    return calibration, records, None


def write_outputs(results: Results, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path, png_path = (out_dir / name for name in ("metg.csv", "metg.json", "metg.png"))
    output.write_csv(results, csv_path)
    output.write_json(results, json_path)
    try:  # matplotlib is optional where the tool is copied without its install (the device kit)
        from .plot import write_png
    except ImportError as error:
        print(f"warning: no plot ({error})", file=sys.stderr)
        return [csv_path, json_path]
    write_png(results, png_path)
    return [csv_path, json_path, png_path]


def _raise_keyboard_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None, systems: dict[str, SystemSpec] | None = None) -> int:
    """Entry point. `systems` replaces the launch table (tests use fake systems)."""
    systems = SYSTEMS if systems is None else systems
    argv = list(sys.argv[1:] if argv is None else argv)
    tool_args, graph_flags = split_argv(argv)
    parser = build_parser(systems)
    args = parser.parse_args(tool_args)
    try:
        settings = make_settings(args, graph_flags, systems)
        if args.sim_nodes:
            settings = make_sim_settings(settings, args)
        launches = make_launches(settings, args, systems)
        if not settings.dry_run:
            check_executables(settings, launches)
    except ValueError as error:
        parser.error(str(error))
    for name, launch in launches.items():
        if launch.layout.oversubscribed:
            print(f"taskgrid-metg: note: {name} runs {launch.layout.threads_charged} threads "
                  f"on --cores {settings.cores}: it is charged for {settings.cores} cores",
                  file=sys.stderr)
    if settings.dry_run:
        print_dry_run(settings, launches)
        return 0

    # SIGTERM (a CI or batch timeout) gets the same clean-up as Ctrl-C: the running
    # benchmark's process group is killed and the runs so far are reported.
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    machine_info = machine.describe(settings.cores)
    machine_info["loadavg_start"] = load = machine.load_average()
    if load and load[0] >= BUSY_LOAD_PER_CORE * settings.cores:
        print(f"taskgrid-metg: warning: machine busy (load average {load[0]} on "
              f"{settings.cores} cores): timings will be noisy", file=sys.stderr)
    try:
        calibration, records, aborted = measure(settings, launches)
    except RunError as error:
        print(f"taskgrid-metg: error: calibration failed:\n{error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("taskgrid-metg: interrupted during calibration", file=sys.stderr)
        return 1
    machine_info["loadavg_end"] = machine.load_average()

    results = evaluate(records, launches, calibration, settings.peak, settings.peak_value,
                       settings.cores, settings.threshold, settings.interp,
                       config_record(settings, launches, argv), machine_info, aborted)
    paths = write_outputs(results, settings.out_dir)
    print(output.format_table(results))
    print(f"taskgrid-metg: wrote {', '.join(map(str, paths))}", file=sys.stderr)
    return 0 if aborted is None else 1
