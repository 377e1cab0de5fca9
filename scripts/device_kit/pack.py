#!/usr/bin/env python3
"""Packs the device kit: what `scripts/device-kit.sh run` needs on a bare GPU node.

The kit is one folder, `taskgrid-kit/`, laid out as a build folder (so the METG tool takes it
as `--build-dir`), archived as `device-kit/taskgrid-kit.tar.<xz|gz>`:

    bin/        the programs, stripped; MPICH's launcher (mpiexec.hydra, hydra_pmi_proxy)
    lib/        every shared library they load that a bare Linux may lack (MPICH, UCX and its
                transport modules in lib/ucx/, hwloc, OpenBLAS, the CUDA runtime, clang-16's
                OpenMP runtime and libomptarget with LLVM, TaskGrid's offload plugin), taken
                from this machine's Debian packages
    tools/metg/ the METG tool (Python; matplotlib optional there)
    run.py      the runner (scripts/device_kit/run.py)
    MANIFEST.json, MANIFEST.txt

Only glibc's own libraries, libstdc++ and libgcc_s are left to the node (a newer glibc runs
these Debian 12 binaries). With `--dry-run` nothing is built: the list of what would go in,
with sizes, from the build folder as it is (or the names alone where it is not built).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KIT_NAME = "taskgrid-kit"
# What a lent GPU machine accepts with each command: the tree plus the carried files.
CARRY_LIMIT = 64 * 2**20
# The working tree travels beside the archive; keep this much room for it.
TREE_ALLOWANCE = 6 * 2**20


@dataclass(frozen=True)
class Program:
    target: str          # CMake target
    path: str            # under the build folder
    steps: tuple[str, ...]
    optional: bool = False  # built only where configure found its parts


PROGRAMS = [
    Program("taskgrid_device_tests", "bin/taskgrid_device_tests", ("conformance",)),
    Program("taskgrid-differential", "bin/taskgrid-differential", ("conformance",)),
    Program("cuda_scale", "bin/cuda_scale", ("conformance",), optional=True),
    Program("taskgrid-pgas-device-check", "bin/taskgrid-pgas-device-check", ("nccl",),
            optional=True),
    Program("taskbench-mpi_omp", "bin/taskbench-mpi_omp", ("gpu_peak", "gpu_metg", "offload")),
    Program("taskbench-taskgrid", "bin/taskbench-taskgrid",
            ("gpu_peak", "gpu_metg", "scaling", "engine")),
    Program("taskbench-taskgrid_spmd", "bin/taskbench-taskgrid_spmd",
            ("gpu_peak", "gpu_metg", "scaling", "engine")),
    Program("taskbench-mpi", "bin/taskbench-mpi", ("scaling", "engine")),
    Program("taskgrid-hop-bench", "bin/taskgrid-hop-bench", ("engine",)),
    Program("taskbench-peak", "bin/taskbench-peak", ("scaling", "engine", "offload")),
    Program("taskbench-omp_target", "bin/taskbench-omp_target", ("offload",), optional=True),
    Program("taskgrid-omptarget", "lib/libomptarget.rtl.ppc64.so", ("offload",), optional=True),
    Program("taskgrid-transfer-bench", "bin/taskgrid-transfer-bench", ("transfers",)),
    Program("taskgrid-pgas-bench", "bin/taskgrid-pgas-bench", ("pgas",)),
]

# Left to the node: glibc's own libraries and the C++ runtime (always there, and a newer one
# than Debian 12's runs these binaries).
SYSTEM_LIBRARIES = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so", "libpthread.so",
                    "librt.so", "libresolv.so", "libutil.so", "libstdc++.so", "libgcc_s.so")

# MPICH's launcher: mpiexec.hydra starts hydra_pmi_proxy from its own folder.
LAUNCHER = ("mpiexec.hydra", "hydra_pmi_proxy")
# UCX loads its transports at run time from <folder of libucs>/ucx/; the shared-memory ones
# are in libuct itself, cross-memory attach in a module. InfiniBand modules need libibverbs,
# which a node with InfiniBand has; a one-node kit does not need them.
UCX_MODULES = ("libuct_cma.so.0",)
UCX_MODULE_DIR = Path("/usr/lib/x86_64-linux-gnu/ucx")

# The steps in order of value; the lowest-value one goes first when the kit is too large.
STEPS_BY_VALUE = ("conformance", "nccl", "gpu_peak", "gpu_metg", "scaling", "engine", "offload",
                  "transfers", "pgas")


def log(message: str) -> None:
    print(f"[device-kit] {message}", file=sys.stderr, flush=True)


def human(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.0f} KiB"


def shared_libraries(path: Path, env: dict[str, str] | None = None) -> dict[str, Path | None]:
    """soname -> the file the loader resolves it to (None: not found), from ldd."""
    result = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env)
    found: dict[str, Path | None] = {}
    for line in result.stdout.splitlines():
        line = line.strip()
        if "=>" in line:
            name, _, rest = line.partition("=>")
            target = rest.strip().split(" (")[0].strip()
            found[name.strip()] = None if target == "not found" else Path(target)
    return found


def carried(name: str) -> bool:
    return not any(name.startswith(prefix) for prefix in SYSTEM_LIBRARIES)


def launcher_paths() -> list[Path]:
    mpiexec = shutil.which("mpiexec.mpich")
    if mpiexec is None:
        raise SystemExit("device-kit: mpiexec.mpich not found (scripts/bootstrap.sh installs MPICH)")
    hydra = Path(mpiexec).resolve()
    return [hydra.parent / name for name in LAUNCHER]


@dataclass
class Plan:
    build_dir: Path
    programs: list[tuple[Program, Path]] = field(default_factory=list)
    missing: list[tuple[Program, str]] = field(default_factory=list)
    libraries: dict[str, Path] = field(default_factory=dict)   # soname -> file
    unresolved: dict[str, str] = field(default_factory=dict)   # soname -> needed by

    def elf_files(self) -> list[Path]:
        return [path for _, path in self.programs] + launcher_paths() + [
            UCX_MODULE_DIR / module for module in UCX_MODULES]


def make_plan(build_dir: Path, steps: set[str]) -> Plan:
    plan = Plan(build_dir)
    for program in PROGRAMS:
        if not steps.intersection(program.steps):
            continue
        path = build_dir / program.path
        if path.exists():
            plan.programs.append((program, path))
        else:
            plan.missing.append((program, "not built" if not program.optional
                                 else "not built (optional: configure did not find its parts)"))
    # The closure of every ELF file's libraries (ldd already follows them transitively).
    search = dict(os.environ)
    search["LD_LIBRARY_PATH"] = ":".join(
        [str(build_dir / "lib"), "/usr/lib/llvm-16/lib", "/usr/local/cuda/lib64",
         "/usr/local/cuda/lib"] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p])
    for elf in plan.elf_files():
        if not elf.exists():
            continue
        for name, target in shared_libraries(elf, search).items():
            if not carried(name):
                continue
            if target is None:
                plan.unresolved.setdefault(name, elf.name)
            else:
                plan.libraries.setdefault(name, target)
    return plan


def dry_run(args: argparse.Namespace) -> int:
    steps = set(args.steps)
    plan = make_plan(args.build_dir, steps)
    total = 0
    print(f"device kit (dry run): programs from {args.build_dir}, libraries from this machine")
    print(f"{'size':>10}  item")
    for program, path in plan.programs:
        size = path.stat().st_size
        total += size
        print(f"{human(size):>10}  {program.path}  (unstripped; steps: {', '.join(program.steps)})")
    for program, why in plan.missing:
        print(f"{'?':>10}  {program.path}  ({why}; `pack` builds it)")
    for path in launcher_paths():
        total += path.stat().st_size
        print(f"{human(path.stat().st_size):>10}  bin/{path.name}  (MPICH's launcher)")
    for module in UCX_MODULES:
        size = (UCX_MODULE_DIR / module).resolve().stat().st_size
        total += size
        print(f"{human(size):>10}  lib/ucx/{module}  (UCX transport)")
    for name, path in sorted(plan.libraries.items()):
        size = path.resolve().stat().st_size
        total += size
        print(f"{human(size):>10}  lib/{name}  ({path})")
    for name, needed_by in sorted(plan.unresolved.items()):
        print(f"{'missing':>10}  lib/{name}  (needed by {needed_by}, not found here)")
    print(f"{human(total):>10}  in all, uncompressed (xz brings it to about a quarter; "
          f"the limit is {human(CARRY_LIMIT - TREE_ALLOWANCE)} compressed)")
    print("NCCL is not carried: the run looks for libnccl.so.2 on the node.")
    return 1 if plan.unresolved else 0


def configure_and_build(build_dir: Path, targets: list[str]) -> None:
    if not (build_dir / "CMakeCache.txt").exists():
        log(f"configuring {build_dir} (Release, x86-64-v3, CUDA sm_90 + PTX)")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        mpiexec = shutil.which("mpiexec.mpich") or "mpiexec.mpich"
        subprocess.run(
            ["cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
             "-DCMAKE_BUILD_TYPE=Release", "-DTASKGRID_NATIVE=OFF",
             "-DCMAKE_C_FLAGS=-march=x86-64-v3", "-DCMAKE_CXX_FLAGS=-march=x86-64-v3",
             "-DCMAKE_CUDA_ARCHITECTURES=90", "-DTASKBENCH_CUDA_ARCHITECTURES=90-real;90-virtual",
             "-DMPI_C_COMPILER=mpicc.mpich", "-DMPI_CXX_COMPILER=mpicxx.mpich",
             f"-DMPIEXEC_EXECUTABLE={mpiexec}", "-DTASKGRID_BUILD_TESTS=ON",
             "-DTASKGRID_BUILD_BENCH=ON", "-DTASKGRID_BUILD_APPS=ON", "-DTASKGRID_INSTALL=OFF",
             f"-DTASKGRID_PYTHON={sys.executable}"],
            check=True, stdout=subprocess.DEVNULL)
    available = subprocess.run(["cmake", "--build", str(build_dir), "--target", "help"],
                               capture_output=True, text=True, check=True).stdout
    known = {line.strip().removeprefix("... ").split(":")[0].split(" ")[0]
             for line in available.splitlines()}
    wanted = [t for t in targets if t in known]
    log(f"building {len(wanted)} targets in {build_dir} (log: {build_dir}/kit-build.log)")
    with open(build_dir / "kit-build.log", "w") as out:
        result = subprocess.run(["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 2),
                                 "--target", *wanted], stdout=out, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        tail = (build_dir / "kit-build.log").read_text().splitlines()[-40:]
        print("\n".join(tail), file=sys.stderr)
        raise SystemExit("device-kit: the kit's build failed")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def copy_elf(source: Path, target: Path, strip: bool) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source.resolve(), target)
    target.chmod(0o755)
    if strip and shutil.which("strip"):
        subprocess.run(["strip", "--strip-unneeded", str(target)], check=False,
                       stderr=subprocess.DEVNULL)


def git_commit() -> str:
    result = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                            capture_output=True, text=True)
    return result.stdout.strip() or "unknown"


def assemble(plan: Plan, kit: Path, strip: bool, notes: list[str]) -> None:
    if kit.exists():
        shutil.rmtree(kit)
    (kit / "bin").mkdir(parents=True)
    (kit / "lib" / "ucx").mkdir(parents=True)
    for program, path in plan.programs:
        copy_elf(path, kit / program.path, strip)
    for path in launcher_paths():
        copy_elf(path, kit / "bin" / path.name, strip=False)
    for module in UCX_MODULES:
        copy_elf(UCX_MODULE_DIR / module, kit / "lib" / "ucx" / module, strip=False)
    for name, path in plan.libraries.items():
        copy_elf(path, kit / "lib" / name, strip=False)
    shutil.copytree(ROOT / "tools" / "metg" / "taskgrid_metg", kit / "tools" / "metg" / "taskgrid_metg",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "scripts" / "device_kit" / "run.py", kit / "run.py")
    (kit / "run.py").chmod(0o755)

    files = sorted(p for p in kit.rglob("*") if p.is_file())
    cache = (plan.build_dir / "CMakeCache.txt")
    config = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            for key in ("CMAKE_BUILD_TYPE", "TASKGRID_NATIVE", "CMAKE_CXX_FLAGS",
                        "CMAKE_CUDA_ARCHITECTURES", "TASKBENCH_CUDA_ARCHITECTURES"):
                if line.startswith(key + ":"):
                    config[key] = line.split("=", 1)[1]
    steps_present = sorted({s for program, _ in plan.programs for s in program.steps})
    manifest = {
        "kit": KIT_NAME, "commit": git_commit(),
        "packed": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "build_dir": str(plan.build_dir), "build": config,
        "steps": steps_present, "notes": notes,
        "left_out": [{"program": program.path, "why": why} for program, why in plan.missing],
        "files": [{"path": str(p.relative_to(kit)), "bytes": p.stat().st_size,
                   "sha256": sha256(p)} for p in files],
    }
    (kit / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    lines = [f"TaskGrid device kit, commit {manifest['commit']}, packed {manifest['packed']}",
             f"build: {plan.build_dir} {config}", f"steps: {', '.join(steps_present)}"]
    lines += [f"note: {note}" for note in notes]
    lines += [f"left out: {item['program']} ({item['why']})" for item in manifest["left_out"]]
    lines += [f"{human(item['bytes']):>10}  {item['path']}" for item in manifest["files"]]
    (kit / "MANIFEST.txt").write_text("\n".join(lines) + "\n")


def archive(kit: Path, compress: str) -> Path:
    suffix = {"xz": ".tar.xz", "gzip": ".tar.gz", "none": ".tar"}[compress]
    target = kit.parent / (KIT_NAME + suffix)
    for old in kit.parent.glob(KIT_NAME + ".tar*"):
        old.unlink()
    started = time.monotonic()
    command = ["tar", "-C", str(kit.parent), "-cf", "-", KIT_NAME]
    # xz with threads: the libraries are most of the kit; gzip -1 for quick kits (CI).
    compressor = {"xz": ["xz", "-T0", "-7", "-c"], "gzip": ["gzip", "-1", "-c"], "none": None}
    with open(target, "wb") as out:
        if compressor[compress] is None:
            status = subprocess.run(command, stdout=out).returncode
        else:
            tar = subprocess.Popen(command, stdout=subprocess.PIPE)
            status = subprocess.run(compressor[compress], stdin=tar.stdout, stdout=out).returncode
            status = tar.wait() or status
    if status:
        raise SystemExit("device-kit: archiving the kit failed")
    log(f"archived in {time.monotonic() - started:.0f} s")
    return target


def pack(args: argparse.Namespace) -> int:
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    steps = list(args.steps)
    notes: list[str] = []
    if args.build_dir is None:
        args.build_dir = ROOT / "build-kit"
        configure_and_build(args.build_dir, [p.target for p in PROGRAMS])
    else:
        notes.append(f"programs from the existing build {args.build_dir} (its flags, not the "
                     "kit's own x86-64-v3 / sm_90 build): for checking the kit, not for figures")
    while True:
        plan = make_plan(args.build_dir, set(steps))
        if plan.unresolved:
            for name, needed_by in plan.unresolved.items():
                log(f"error: {name} (needed by {needed_by}) is not on this machine")
            return 1
        kit = out / KIT_NAME
        assemble(plan, kit, strip=not args.no_strip, notes=notes)
        target = archive(kit, args.compress)
        size = target.stat().st_size
        limit = CARRY_LIMIT - TREE_ALLOWANCE
        if args.compress != "xz" or size <= limit:
            break
        dropped = next((s for s in reversed(STEPS_BY_VALUE) if s in steps and s not in
                        ("conformance", "gpu_peak", "gpu_metg", "scaling", "engine")), None)
        if dropped is None:
            log(f"error: the kit is {human(size)}, over {human(limit)}, with nothing left to drop")
            return 1
        steps.remove(dropped)
        notes.append(f"step '{dropped}' left out: the kit was {human(size)}, over {human(limit)}")
        log(notes[-1])
    unpacked = sum(p.stat().st_size for p in kit.rglob("*") if p.is_file())
    shutil.copy2(kit / "MANIFEST.txt", out / "MANIFEST.txt")
    if not args.keep_folder:
        shutil.rmtree(kit)
    print(f"device kit: {target} {human(size)} ({human(unpacked)} unpacked; carry limit "
          f"{human(CARRY_LIMIT)} with the tree), steps: {', '.join(steps)}")
    for note in notes:
        print(f"  note: {note}")
    print(f"  manifest: {out / 'MANIFEST.txt'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="device-kit.sh pack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true",
                        help="build nothing; list what would go in, with sizes")
    parser.add_argument("--build-dir", type=Path,
                        help="take the programs from this build (default: build build-kit/ "
                        "for the GPU node: Release, x86-64-v3, CUDA sm_90 plus PTX)")
    parser.add_argument("--out", type=Path, default=ROOT / "device-kit",
                        help="where the archive goes (default device-kit/, ignored by git)")
    parser.add_argument("--compress", choices=("xz", "gzip", "none"), default="xz")
    parser.add_argument("--steps", default=",".join(STEPS_BY_VALUE),
                        help="the steps to pack for (default: all)")
    parser.add_argument("--no-strip", action="store_true")
    parser.add_argument("--keep-folder", action="store_true",
                        help="keep the unpacked kit folder beside the archive")
    args = parser.parse_args(argv)
    args.steps = [s for s in args.steps.split(",") if s]
    unknown = [s for s in args.steps if s not in STEPS_BY_VALUE]
    if unknown:
        parser.error(f"unknown steps {unknown}; the steps are {', '.join(STEPS_BY_VALUE)}")
    if args.dry_run:
        if args.build_dir is None:
            args.build_dir = ROOT / ("build-kit" if (ROOT / "build-kit").exists() else "build")
        return dry_run(args)
    return pack(args)


if __name__ == "__main__":
    sys.exit(main())
