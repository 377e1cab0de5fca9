#!/usr/bin/env python3
"""Runs taskgrid-broadcast-check under mpiexec and checks that it passed AND
that the broadcast strategy it was given really ran.

usage: check_broadcast_run.py [--expect none|routes|mpi|some] [--expect-multichunk]
                              [--ranks N] [--timeout S] -- COMMAND...

The command runs with TASKGRID_STATS=1 (rank 0 prints a line per rank at
exit, "taskgrid bcast stats: rank R rooted N routes_received N chunks_sent N
chunks_received N mpi_bcasts N"), in its own process group; after --timeout
seconds (default 100) it counts as hung and is killed with every process
below it (the ranks too). It passes only when:

  - the command ended by itself with exit status 0;
  - stdout+stderr hold "broadcast-check: N rounds verified" (N equal to the
    command's --rounds when it has one) and no "error:" (any case), "Fatal error",
    "MISMATCH" or "HANG:";
  - there is one bcast stats line per rank (0..N-1; N from --ranks, else
    from the command's -n/-np), and every chunk sent was received;
  - --expect none: no rank rooted a broadcast, received a route, sent or
    received a chunk, or joined an MPI broadcast;
    --expect routes (p2p, tree, pipeline): some rank other than rank 0
    rooted one, two or more ranks received routes, and no MPI broadcast;
    --expect mpi: three or more ranks joined MPI broadcasts;
    --expect some (auto, which picks mpi when every participant shares a
    node and tree or pipeline otherwise): the proof of routes or of mpi;
  - --expect-multichunk: more chunks were sent than routes received, i.e.
    some broadcast went out in several chunks.

The command's output is echoed either way, for the test log.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

STATS = re.compile(
    r"^taskgrid bcast stats: rank (\d+) rooted (\d+) routes_received (\d+) chunks_sent (\d+) "
    r"chunks_received (\d+) mpi_bcasts (\d+)\s*$",
    re.MULTILINE,
)
FIELDS = ("rooted", "routes_received", "chunks_sent", "chunks_received", "mpi_bcasts")
VERIFIED = re.compile(r"^broadcast-check: (\d+) rounds verified", re.MULTILINE)
FAILURE = re.compile(r"(?i:error:)|Fatal error|MISMATCH|HANG:")


def option_value(command, names):
    """The value after the first of `names` in `command`, or None."""
    for i, word in enumerate(command[:-1]):
        if word in names:
            return command[i + 1]
    return None


def descendants(root):
    """Every process below `root` (from /proc): the launcher puts ranks in
    process groups of their own, which a kill of mpiexec's group misses."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as file:
                stat = file.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def run(command, timeout):
    env = dict(os.environ, TASKGRID_STATS="1")
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    timed_out = False
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        below = descendants(process.pid) if os.path.isdir("/proc") else []
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        output, _ = process.communicate()
    return process.returncode, timed_out, output.decode(errors="replace"), time.monotonic() - start


def check_stats(text, ranks, expect, multichunk):
    """(problems, totals): the problems are empty when the stats prove `expect`."""
    rows = {}
    for match in STATS.finditer(text):
        rank = int(match.group(1))
        if rank in rows:
            return [f"two bcast stats lines for rank {rank}"], ""
        rows[rank] = dict(zip(FIELDS, (int(v) for v in match.groups()[1:])))
    if not rows:
        return ["no 'taskgrid bcast stats' lines: TASKGRID_STATS=1 was not honoured, or the "
                "job did not reach finish()"], ""
    if ranks is not None and sorted(rows) != list(range(ranks)):
        return [f"bcast stats for ranks {sorted(rows)}, expected 0..{ranks - 1}"], ""
    total = {f: sum(row[f] for row in rows.values()) for f in FIELDS}
    with_routes = [r for r, row in rows.items() if row["routes_received"] > 0]
    with_mpi = [r for r, row in rows.items() if row["mpi_bcasts"] > 0]
    rooted_not_0 = [r for r, row in rows.items() if r != 0 and row["rooted"] > 0]
    problems = []
    if total["chunks_sent"] != total["chunks_received"]:
        problems.append(f"{total['chunks_sent']} broadcast chunks sent, "
                        f"{total['chunks_received']} received")
    if expect == "none":
        busy = [f"{f} {total[f]}" for f in FIELDS if total[f]]
        if busy:
            problems.append("expected no broadcast at all, the stats show " + ", ".join(busy))
    routes_problems = []
    if total["rooted"] == 0:
        routes_problems.append("expected Dynamic Broadcasts (routes): no rank rooted one")
    elif not rooted_not_0:
        routes_problems.append("every broadcast was rooted on rank 0 (the roots should vary)")
    if len(with_routes) < 2:
        routes_problems.append(f"routes received on ranks {with_routes} only, expected on two "
                               "or more reader ranks")
    mpi_problems = []
    if len(with_mpi) < 3:
        mpi_problems.append(f"expected MPI broadcasts: ranks {with_mpi} joined one, a broadcast "
                            "has three or more members")
    if expect == "routes":
        problems += routes_problems
        if total["mpi_bcasts"]:
            problems.append(f"{total['mpi_bcasts']} MPI broadcasts under a route strategy")
    elif expect == "mpi":
        problems += mpi_problems
    elif expect == "some" and routes_problems and mpi_problems:
        problems += routes_problems + mpi_problems
    if multichunk and total["chunks_sent"] <= total["routes_received"]:
        problems.append(f"expected broadcasts in several chunks: {total['chunks_sent']} chunks "
                        f"sent for {total['routes_received']} routes")
    summary = ", ".join(f"{f} {total[f]}" for f in FIELDS)
    return problems, summary


def main() -> int:
    if "--" not in sys.argv:
        print("check_broadcast_run.py: missing '--' before the command", file=sys.stderr)
        return 2
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser(prog="check_broadcast_run.py")
    parser.add_argument("--expect", choices=("none", "routes", "mpi", "some"))
    parser.add_argument("--expect-multichunk", action="store_true")
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--timeout", type=float, default=100.0)
    options = parser.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    if not command:
        print("check_broadcast_run.py: empty command", file=sys.stderr)
        return 2
    ranks = options.ranks
    if ranks is None:
        value = option_value(command, ("-n", "-np"))
        ranks = int(value) if value and value.isdigit() else None

    status, timed_out, text, elapsed = run(command, options.timeout)
    sys.stdout.write(text)
    if text and not text.endswith("\n"):
        sys.stdout.write("\n")

    problems = []
    if timed_out:
        problems.append(f"hung: still running after {options.timeout:g} s (killed)")
    elif status != 0:
        problems.append(f"exit status {status}")
    verified = VERIFIED.search(text)
    rounds = option_value(command, ("--rounds",))
    if not verified:
        problems.append("no 'broadcast-check: N rounds verified' line")
    elif rounds is not None and verified.group(1) != rounds:
        problems.append(f"{verified.group(1)} rounds verified, the command asked for {rounds}")
    failures = [line for line in text.splitlines() if FAILURE.search(line)]
    if failures:
        problems.append(f"failure line: {failures[0]!r}")
    summary = ""
    if not timed_out and status == 0:
        stats_problems, summary = check_stats(text, ranks, options.expect,
                                              options.expect_multichunk)
        problems += stats_problems

    head = f"check_broadcast_run: status {status}, {elapsed:.1f} s"
    if summary:
        head += f", bcast totals: {summary}"
    if problems:
        print(f"{head}: FAILED: " + "; ".join(problems))
        return 1
    print(f"{head}: ok (expect {options.expect or 'anything'}"
          f"{', several chunks' if options.expect_multichunk else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
