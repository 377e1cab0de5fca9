#!/usr/bin/env python3
"""The simulator charges the MPI library's own work per message
(message_overhead) to the MPI baseline on SMPI as it does to TaskGrid on S4U,
on the send side and on the receive side.

    check_sim_message_charge.py TASKGRID_SIM PLATFORM_FILE [SYSTEMS]

Runs Task Bench's stencil on 2 simulated nodes (1 core each) twice per system
(SYSTEMS, default mpi,taskgrid_spmd), on two copies of PLATFORM_FILE that
differ only in message_overhead (1 ns and 10 us). Each rank sends one message
and receives one per timestep after the first, all on the critical path, so
the dear run must take at least three quarters of what they cost more: 9
timesteps x 2 messages x 10 us (a charge on one side only, or one hidden
behind the transfer, fails). SMPI charges MPI_Isend through smpi/ois, not
smpi/os, and smpi/or only for detached sends: the baseline was once charged
nothing. Exits 0 on success, 1 with the reason.
"""
import sys
import tempfile
from pathlib import Path

from sim_cost_runs import elapsed, platform_variants

CHECKER = "check_sim_message_charge"
CHEAP, DEAR = 1e-9, 1e-5
STEPS = 10
GRAPH = ["-steps", str(STEPS), "-width", "2", "-type", "stencil_1d", "-kernel", "compute_bound",
         "-iter", "64"]


def main() -> int:
    sim, platform = sys.argv[1], Path(sys.argv[2])
    systems = sys.argv[3].split(",") if len(sys.argv) > 3 else ["mpi", "taskgrid_spmd"]
    needed = 0.75 * (STEPS - 1) * 2 * (DEAR - CHEAP)
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        files = platform_variants(platform, "message_overhead", {"cheap": CHEAP, "dear": DEAR},
                                  Path(folder))
        if files is None:
            print(f"{CHECKER}: {platform} gives no message_overhead")
            return 1
        for system in systems:
            cheap, dear = (elapsed(CHECKER, sim, system, files[label], 2, GRAPH)
                           for label in ("cheap", "dear"))
            print(f"{system}: {cheap * 1e3:.4f} ms cheap, {dear * 1e3:.4f} ms dear")
            if dear - cheap < needed:
                print(f"{CHECKER}: {system} took {(dear - cheap) * 1e3:.4f} ms more with the "
                      f"dear messages, not the {needed * 1e3:.4f} ms or more they cost")
                failed = True
    if failed:
        return 1
    print(f"{CHECKER}: every system charged for its messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
