"""What the simulator's cost-model checks share: a Task Bench run through
taskgrid-sim and its simulated time, and copies of a platform file with one
charge changed (check_sim_foreign_charge.py, check_sim_message_charge.py)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def elapsed(checker: str, sim: str, system: str, platform: Path, nodes: int,
            graph: list[str]) -> float:
    """The run's simulated "Elapsed Time" in seconds; exits naming the run if it failed."""
    command = [sim, "--system", system, "--platform", str(platform), "--nodes", str(nodes),
               "--cores-per-node", "1", "--"] + graph
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    found = re.search(r"^Elapsed Time ([0-9.e+-]+)", done.stdout, re.M)
    if done.returncode != 0 or not found:
        sys.exit(f"{checker}: {' '.join(command)} failed ({done.returncode}):\n"
                 f"{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return float(found.group(1))


def platform_variants(platform: Path, key: str, values: dict[str, float],
                      folder: Path) -> dict[str, Path] | None:
    """Copies of `platform` in `folder`, one per label, with `key` set to its value;
    None when the platform does not give `key`."""
    text = platform.read_text()
    pattern = rf"^{re.escape(key)} = .*$"
    if not re.search(pattern, text, re.M):
        return None
    files = {}
    for label, value in values.items():
        files[label] = folder / f"{label}.platform"
        files[label].write_text(re.sub(pattern, f"{key} = {value}", text, flags=re.M))
    return files
