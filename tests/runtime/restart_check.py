#!/usr/bin/env python3
"""Kills a rank of a checkpointed job and checks that the restart ends as an
uninterrupted run does.

Usage: restart_check.py --dir DIR --every N [options] -- LAUNCH_AND_PROGRAM...

  1. the reference: the command alone, no checkpoint (skipped with --no-reference);
  2. the command with TASKGRID_CHECKPOINT=DIR, TASKGRID_CHECKPOINT_EVERY=N;
     as soon as DIR holds a complete checkpoint (ckpt-K/MANIFEST), rank
     --kill-rank is sent SIGKILL: the job must end non-zero;
  3. the command again with TASKGRID_RESTART=DIR (and the checkpoint
     settings): it must say it restarts, exit 0, and print the reference's
     standard output (the lines matching --compare, default all).

With --helper H, step 3 is not run by hand: step 2 runs under
`H --restarts 1 --checkpoint DIR -- command`, which must relaunch the job
itself after the kill and exit 0.

The rank's process is found by an environment marker this script sets
(RESTART_CHECK_ID) and the launcher's rank variable (PMI_RANK,
OMPI_COMM_WORLD_RANK). A job that ends before its first checkpoint is
complete fails the test: the run is too short to test anything.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid

RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def run(command, env, timeout):
    started = time.monotonic()
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, start_new_session=True)
    return done, time.monotonic() - started


def complete_checkpoint(folder):
    if not os.path.isdir(folder):
        return None
    for name in sorted(os.listdir(folder)):
        if name.startswith("ckpt-") and os.path.exists(os.path.join(folder, name, "MANIFEST")):
            return name
    return None


def rank_pid(marker, rank):
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                variables = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
        except OSError:
            continue
        if variables.get(b"RESTART_CHECK_ID") != marker.encode():
            continue
        if any(variables.get(v.encode()) == str(rank).encode() for v in RANK_VARIABLES):
            return int(entry)
    return None


def compared(text, pattern):
    return [line for line in text.splitlines() if re.search(pattern, line)]


def echo(title, done):
    print(f"--- {title}: exit {done.returncode}")
    sys.stdout.write(done.stdout[-4000:])
    sys.stdout.write(done.stderr[-4000:])


def main():
    if "--" not in sys.argv:
        print("restart_check.py: missing '--' before the command", file=sys.stderr)
        return 2
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser(prog="restart_check.py")
    parser.add_argument("--dir", required=True)
    parser.add_argument("--every", type=int, required=True)
    parser.add_argument("--kill-rank", type=int, default=1)
    parser.add_argument("--compare", default="")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--helper")
    parser.add_argument("--timeout", type=float, default=120.0)
    options = parser.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    shutil.rmtree(options.dir, ignore_errors=True)
    base = dict(os.environ)
    for name in ("TASKGRID_CHECKPOINT", "TASKGRID_CHECKPOINT_EVERY", "TASKGRID_RESTART"):
        base.pop(name, None)

    reference = None
    if not options.no_reference:
        reference, seconds = run(command, base, options.timeout)
        echo(f"reference ({seconds:.1f} s)", reference)
        if reference.returncode != 0:
            print("restart_check: FAIL: the reference run failed")
            return 1

    checkpointing = dict(base, TASKGRID_CHECKPOINT=options.dir,
                         TASKGRID_CHECKPOINT_EVERY=str(options.every))
    marker = uuid.uuid4().hex
    first = command
    if options.helper:
        first = [options.helper, "--restarts", "1", "--checkpoint", options.dir, "--"] + command
    job = subprocess.Popen(first, env=dict(checkpointing, RESTART_CHECK_ID=marker),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    started = time.monotonic()
    killed = None
    while job.poll() is None and time.monotonic() - started < options.timeout:
        name = complete_checkpoint(options.dir)
        pid = rank_pid(marker, options.kill_rank) if name else None
        if pid:
            os.kill(pid, signal.SIGKILL)
            killed = (name, time.monotonic())
            print(f"restart_check: {name} complete after {killed[1] - started:.2f} s: "
                  f"sent SIGKILL to rank {options.kill_rank} (pid {pid})")
            break
        time.sleep(0.01)
    try:
        out, err = job.communicate(timeout=options.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        out, err = job.communicate()
        print(out[-4000:] + err[-4000:])
        print("restart_check: FAIL: the job did not end")
        return 1
    ended = time.monotonic()
    first_run = subprocess.CompletedProcess(first, job.returncode, out, err)
    echo("checkpointed run" + (" under the helper" if options.helper else ""), first_run)
    if not killed:
        print("restart_check: FAIL: the job ended before a checkpoint was complete and a rank "
              "could be killed (make the run longer)")
        return 1

    if options.helper:
        final = first_run
        if "restarting from" not in err:
            print("restart_check: FAIL: the helper did not relaunch the job from the checkpoint")
            return 1
    else:
        if job.returncode == 0:
            print("restart_check: FAIL: the job survived the loss of a rank")
            return 1
        final, seconds = run(command, dict(checkpointing, TASKGRID_RESTART=options.dir),
                             options.timeout)
        echo(f"restarted run ({seconds:.1f} s)", final)
        print(f"restart_check: from the kill to the restarted job's end: "
              f"{ended - killed[1] + seconds:.2f} s")
        if "restarting from" not in final.stderr:
            print("restart_check: FAIL: the restarted job did not say it restarts")
            return 1
    if final.returncode != 0:
        print("restart_check: FAIL: the restarted job failed")
        return 1
    if reference is not None:
        want = compared(reference.stdout, options.compare)
        got = compared(final.stdout, options.compare)
        if options.helper:
            # The helper's output holds the killed run's lines too: the
            # restarted run's are its last ones.
            got = got[len(got) - len(want):] if len(got) >= len(want) else got
        if want != got:
            print("restart_check: FAIL: the restarted run's output differs from the reference's")
            for a, b in zip(want, got):
                if a != b:
                    print(f"  reference: {a}\n  restarted: {b}")
                    break
            print(f"  ({len(want)} lines against {len(got)})")
            return 1
        print(f"restart_check: OK: {len(want)} output lines equal the uninterrupted run's")
    else:
        print("restart_check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
