"""How each Task Bench system is launched on one node.

Adding a system is one entry in SYSTEMS. Everything else (command line, environment,
number of cores a run occupies) is derived from that entry by `make_launch`.

TaskGrid is built once per MPI library (CMake -DTASKGRID_MPI=mpich|openmpi), each build in
its own directory with its own launcher. A system named `NAME@openmpi` runs
`taskbench-NAME` of the Open MPI build; `NAME` or `NAME@mpich` that of the default (MPICH)
build, except for systems that exist in one build only (`starpu`: Open MPI).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

# Layout value meaning "one per core of the node" (for ranks or for threads per rank).
PER_CORE = "per-core"

# Where the kernels run (--device): "gpu" adds `<device_flag> gpu` to every run.
DEVICES = ("cpu", "gpu")
# The kernel the systems run on GPUs.
GPU_KERNEL = "gpu_compute_bound"

# The MPI libraries of the builds, the default first; `NAME@FAMILY` picks one.
MPI_FAMILIES = ("mpich", "openmpi")
DEFAULT_MPI = "mpich"
MPI_SEPARATOR = "@"


@dataclass(frozen=True)
class SystemSpec:
    name: str
    binary: str                      # file name under <build>/bin
    mpi: bool = False                # started through mpiexec with `ranks` processes
    ranks: int | str = 1             # default ranks: a number or PER_CORE
    threads: int | str = 1           # default threads per rank: a number or PER_CORE
    thread_flag: str | None = None   # binary option that sets threads per rank
    thread_env: str | None = None    # environment variable that sets threads per rank
    env: dict[str, str] = field(default_factory=dict)
    device_flag: str | None = None   # binary option `FLAG gpu` that runs the kernel on GPUs
    # Runs with TaskGrid's OpenMP offload plugin (<build>/lib on LD_LIBRARY_PATH): rank 0 runs
    # the program, the other ranks are its OpenMP devices.
    offload_plugin: bool = False
    # The MPI builds that have this system; a plain name means DEFAULT_MPI if it is one of
    # them, else the first.
    builds: tuple[str, ...] = MPI_FAMILIES

    @property
    def threaded(self) -> bool:
        return self.thread_flag is not None or self.thread_env is not None

    @property
    def default_build(self) -> str:
        return DEFAULT_MPI if DEFAULT_MPI in self.builds else self.builds[0]


SYSTEMS: dict[str, SystemSpec] = {
    spec.name: spec
    for spec in (
        SystemSpec("serial", "taskbench-serial"),
        SystemSpec("omp", "taskbench-omp", threads=PER_CORE, thread_flag="-worker"),
        SystemSpec("mpi", "taskbench-mpi", mpi=True, ranks=PER_CORE),
        # OMP_SCHEDULE as in the published MPI+OpenMP experiments (spec section 9).
        SystemSpec("mpi_omp", "taskbench-mpi_omp", mpi=True, threads=PER_CORE,
                   thread_flag="-worker", env={"OMP_SCHEDULE": "static,1"},
                   device_flag="-device"),
        SystemSpec("taskgrid", "taskbench-taskgrid", mpi=True, ranks=PER_CORE,
                   thread_env="TASKGRID_THREADS", device_flag="-taskgrid:device"),
        SystemSpec("taskgrid_spmd", "taskbench-taskgrid_spmd", mpi=True, ranks=PER_CORE,
                   thread_env="TASKGRID_THREADS", device_flag="-taskgrid:device"),
        # Each task an OpenMP target region on a remote rank (built with clang-16 only).
        # LIBOMP_USE_HIDDEN_HELPER_TASK=0, as the README advises for TaskGrid's plugin: the
        # program's own threads submit the regions (which never wait), instead of libomp's
        # helper threads, which lose the core to threads spinning in taskwait.
        SystemSpec("omp_target", "taskbench-omp_target", mpi=True, ranks=PER_CORE,
                   thread_env="TASKGRID_THREADS",
                   env={"OMP_TARGET_OFFLOAD": "MANDATORY", "LIBOMP_USE_HIDDEN_HELPER_TASK": "0"},
                   offload_plugin=True),
        # StarPU-MPI: built only against Open MPI (build-openmpi/); -worker sets its CPU
        # workers per rank, as for omp. STARPU_SILENT keeps its banner off stdout.
        SystemSpec("starpu", "taskbench-starpu", mpi=True, ranks=PER_CORE,
                   thread_flag="-worker", env={"STARPU_SILENT": "1"}, builds=("openmpi",)),
    )
}


@dataclass(frozen=True)
class SystemChoice:
    """A system as named in --systems: which table entry, from which MPI build."""
    label: str       # the name as given, suffix included: 'mpi', 'mpi@openmpi', 'starpu'
    name: str        # key of the launch table
    family: str      # the MPI build it runs from: one of MPI_FAMILIES

    @property
    def key(self) -> tuple[str, str]:
        """Identity: 'mpi' and 'mpi@mpich' are the same system."""
        return self.name, self.family


def check_build(spec: SystemSpec, family: str) -> None:
    if family not in MPI_FAMILIES:
        raise ValueError(f"unknown MPI '{family}' for system '{spec.name}' "
                         f"(known: {', '.join(MPI_FAMILIES)})")
    if family not in spec.builds:
        only = " and ".join(spec.builds)
        raise ValueError(f"system '{spec.name}' is built only with {only}, there is no "
                         f"'{spec.name}{MPI_SEPARATOR}{family}': use '{spec.name}' or "
                         + " or ".join(f"'{spec.name}{MPI_SEPARATOR}{b}'" for b in spec.builds))


def parse_system(text: str, systems: dict[str, SystemSpec]) -> SystemChoice:
    """`NAME`, `NAME@mpich` or `NAME@openmpi` as a SystemChoice; ValueError if unknown."""
    label = text.strip()
    name, separator, family = label.partition(MPI_SEPARATOR)
    if name not in systems:
        raise ValueError(f"unknown system '{label}' (known: {', '.join(systems)}; "
                         f"append {MPI_SEPARATOR}openmpi for the Open MPI build)")
    spec = systems[name]
    if separator and not family:
        raise ValueError(f"system '{label}': no MPI after '{MPI_SEPARATOR}' "
                         f"(known: {', '.join(MPI_FAMILIES)})")
    family = family or spec.default_build
    check_build(spec, family)
    return SystemChoice(label, name, family)


@dataclass(frozen=True)
class Layout:
    ranks: int
    threads: int
    # Ranks whose cores are not charged: the offload host (rank 0 of an offload_plugin
    # system runs no tasks) under --host-not-charged, as the MPP's figures charge no head node.
    uncharged_ranks: int = 0
    # The node's cores (--cores): a run with more ranks x threads than that shares them
    # (--cores 2 --ranks taskgrid=4) and is charged for the cores it has, not for more.
    node_cores: int = 0

    @property
    def threads_charged(self) -> int:
        return (self.ranks - self.uncharged_ranks) * self.threads

    @property
    def oversubscribed(self) -> bool:
        return 0 < self.node_cores < self.threads_charged

    @property
    def cores_used(self) -> int:
        """Cores a run is charged for; the granularity formula multiplies by this."""
        return self.node_cores if self.oversubscribed else self.threads_charged


def resolve_layout(spec: SystemSpec, cores: int,
                   ranks: int | None = None, threads: int | None = None) -> Layout:
    """Ranks and threads per rank for `spec` on a node of `cores` cores.

    A PER_CORE default shares the node with an override of the other dimension, so
    `--ranks mpi_omp=2` on 16 cores gives 2 ranks x 8 threads, not 2 x 16.
    """
    if ranks is not None and not spec.mpi:
        raise ValueError(f"system '{spec.name}' is not launched through MPI; it has no ranks to set")
    if threads is not None and not spec.threaded:
        raise ValueError(f"system '{spec.name}' is single-threaded; it has no threads to set")

    def fill(default: int | str, other_override: int | None) -> int:
        if default != PER_CORE:
            return int(default)
        return max(1, cores // other_override) if other_override else cores

    return Layout(ranks=ranks if ranks is not None else fill(spec.ranks, threads),
                  threads=threads if threads is not None else fill(spec.threads, ranks),
                  node_cores=cores)


@dataclass(frozen=True)
class Launch:
    """A system ready to run: binary path, layout and launcher."""
    spec: SystemSpec
    layout: Layout
    binary: Path
    mpiexec: tuple[str, ...]
    device: str = "cpu"
    family: str = DEFAULT_MPI   # the MPI build the binary comes from
    # A simulated run (--sim-nodes): `binary` is the build's taskgrid-sim and these its
    # options before '--' (system, platform, nodes, cores per node).
    sim_options: tuple[str, ...] = ()

    @property
    def mpi_family(self) -> str | None:
        """The MPI the system runs on; None for a system not launched through MPI."""
        return self.family if self.spec.mpi and not self.sim_options else None

    def command(self, graph_flags: list[str], json_path: str | Path) -> list[str]:
        if self.sim_options:
            return [str(self.binary), *self.sim_options, "--", "-json", str(json_path),
                    *graph_flags]
        prefix = [*self.mpiexec, "-n", str(self.layout.ranks)] if self.spec.mpi else []
        threads = [self.spec.thread_flag, str(self.layout.threads)] if self.spec.thread_flag else []
        device = [self.spec.device_flag, self.device] if self.device != "cpu" else []
        return [*prefix, str(self.binary), *threads, *device, "-json", str(json_path),
                *graph_flags]

    def environment(self) -> dict[str, str]:
        """Variables added to the inherited environment."""
        env = dict(self.spec.env)
        if self.spec.thread_env:
            env[self.spec.thread_env] = str(self.layout.threads)
        # Keeps any OpenMP runtime inside a binary to its share of the node, so that
        # e.g. one-rank-per-core MPI runs do not each start a thread per core.
        env["OMP_NUM_THREADS"] = str(self.layout.threads)
        if self.spec.offload_plugin:
            # The plugin's folder first; what the caller already has (a kit's libraries) after.
            inherited = os.environ.get("LD_LIBRARY_PATH", "")
            env["LD_LIBRARY_PATH"] = str(self.binary.parent.parent / "lib") + (
                f":{inherited}" if inherited else "")
        return env


# The systems taskgrid-sim runs (bench/sim/): TaskGrid's on SimGrid's S4U, one rank per
# node with the node's cores as threads; the MPI baseline on SMPI, one rank per core.
SIM_SYSTEMS = ("mpi", "taskgrid", "taskgrid_spmd")
SIM_LAUNCHER = "taskgrid-sim"


def make_sim_launch(spec: SystemSpec, build_dir: Path, nodes: int, cores_per_node: int,
                    platform: str) -> Launch:
    """`spec` on `nodes` simulated nodes of `platform` with `cores_per_node` cores each."""
    if spec.name not in SIM_SYSTEMS:
        raise ValueError(f"--sim-nodes: system '{spec.name}' does not run in the simulator "
                         f"(it runs {', '.join(SIM_SYSTEMS)})")
    per_rank = spec.name != "mpi"
    layout = Layout(ranks=nodes if per_rank else nodes * cores_per_node,
                    threads=cores_per_node if per_rank else 1)
    return Launch(spec=spec, layout=layout, binary=Path(build_dir) / "bin" / SIM_LAUNCHER,
                  mpiexec=(), sim_options=("--system", spec.name, "--platform", platform,
                                           "--nodes", str(nodes), "--cores-per-node",
                                           str(cores_per_node)))


def make_launch(spec: SystemSpec, build_dir: Path, cores: int, mpiexec: list[str],
                ranks: int | None = None, threads: int | None = None,
                device: str = "cpu", host_not_charged: bool = False,
                family: str | None = None) -> Launch:
    """`spec` run from `build_dir`, the build of MPI `family` (default: the spec's default
    build), with the launcher `mpiexec`."""
    family = family or spec.default_build
    check_build(spec, family)
    if device not in DEVICES:
        raise ValueError(f"unknown device '{device}' (known: {', '.join(DEVICES)})")
    if device != "cpu" and spec.device_flag is None:
        raise ValueError(f"system '{spec.name}' has no {device.upper()} option "
                         "(--device gpu: mpi_omp, taskgrid, taskgrid_spmd)")
    layout = resolve_layout(spec, cores, ranks, threads)
    if host_not_charged and spec.offload_plugin:
        if layout.ranks < 2:
            raise ValueError(f"--host-not-charged: system '{spec.name}' needs 2 or more ranks "
                             "(rank 0 is the host, the others its devices)")
        layout = replace(layout, uncharged_ranks=1)
    return Launch(spec=spec,
                  layout=layout,
                  binary=Path(build_dir) / "bin" / spec.binary,
                  mpiexec=tuple(mpiexec), device=device, family=family)
