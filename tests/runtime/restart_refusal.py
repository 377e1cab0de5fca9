#!/usr/bin/env python3
"""A restart from a bad checkpoint must be refused with its reason and
status 2; a checkpoint that cannot be written must not stop the job.

Usage: restart_refusal.py --case CASE --dir DIR [--program-args ARGS] -- LAUNCH PROGRAM

  DIR gets a good checkpoint first (an uninterrupted checkpointed run of the
  command), then the case damages a copy of it and runs LAUNCH PROGRAM with
  TASKGRID_RESTART on the copy (--other "LAUNCH PROGRAM..." runs another command):

  missing    TASKGRID_RESTART names no folder
  empty      a folder with no complete checkpoint
  truncated  rank 1's file loses its last 100 bytes
  corrupt    one byte of rank 0's data flipped
  manifest   one byte of the manifest flipped
  other      the command given by --other (another program, other ranks,
             other arguments) restarts from it
  full       no restart: the checkpointed run itself, with the checkpoint's
             files limited to --file-limit bytes (--shim, a preloaded library
             whose fwrite fails with ENOSPC past it): checkpoints fail, the job
             goes on, exits 0 and says which checkpoint failed and which is kept
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

EXPECTED = {
    "missing": r"TASKGRID_RESTART=\S+: no such folder",
    "empty": r"no complete checkpoint there",
    "truncated": r"checkpoint file \S+rank-1\.bin: truncated",
    "corrupt": r"checkpoint file \S+rank-0\.bin: corrupt: the checksum of record \d+",
    "manifest": r"MANIFEST: corrupt \(its checksum does not match\)",
}


def run(command, env, timeout=120):
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, start_new_session=True)
    print(f"--- {' '.join(command)}: exit {done.returncode}")
    sys.stdout.write(done.stdout[-3000:] + done.stderr[-3000:])
    return done


def flip(path, at):
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x40]))


def main():
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser(prog="restart_refusal.py")
    parser.add_argument("--case", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--other", default="")
    parser.add_argument("--expect", default="")
    parser.add_argument("--file-limit", type=int, default=0)
    parser.add_argument("--shim", default="")
    parser.add_argument("--every", type=int, default=100)
    options = parser.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    env = {k: v for k, v in os.environ.items()
           if k not in ("TASKGRID_CHECKPOINT", "TASKGRID_CHECKPOINT_EVERY", "TASKGRID_RESTART")}
    good = os.path.join(options.dir, "good")
    shutil.rmtree(options.dir, ignore_errors=True)
    os.makedirs(options.dir)
    checkpointing = dict(env, TASKGRID_CHECKPOINT=good, TASKGRID_CHECKPOINT_EVERY=str(options.every))

    if options.case == "full":
        reference = run(command, env)
        full = run(command, dict(checkpointing, LD_PRELOAD=options.shim,
                                 FULL_DISK_FILE_BYTES=str(options.file_limit)))
        ok = (full.returncode == 0 and reference.returncode == 0 and full.stdout == reference.stdout
              and re.search(r"warning: taskgrid: rank 0: checkpoint \d+ \(after \d+ submissions\) "
                            r"failed; rank \d+: cannot write .*No space left on device; the job goes on; "
                            r"the previous complete one is kept: \S+/ckpt-\d+", full.stderr))
        print("restart_refusal: " + ("OK" if ok else "FAIL: expected exit 0, the reference's "
                                     "output and a warning naming the failed and the kept checkpoint"))
        return 0 if ok else 1

    made = run(command, checkpointing)
    if made.returncode != 0:
        print("restart_refusal: FAIL: the checkpointed run failed")
        return 1
    damaged = os.path.join(options.dir, "damaged")
    shutil.copytree(good, damaged)
    newest = sorted((d for d in os.listdir(damaged) if d.startswith("ckpt-")),
                    key=lambda d: int(d[5:]))[-1]
    folder = os.path.join(damaged, newest)
    restart_from = damaged
    if options.case == "missing":
        restart_from = os.path.join(options.dir, "no-such-folder")
    elif options.case == "empty":
        os.remove(os.path.join(folder, "MANIFEST"))
    elif options.case == "truncated":
        path = os.path.join(folder, "rank-1.bin")
        os.truncate(path, max(8, os.path.getsize(path) - 100))
    elif options.case == "corrupt":
        flip(os.path.join(folder, "rank-0.bin"), 80)
    elif options.case == "manifest":
        flip(os.path.join(folder, "MANIFEST"), 30)
    elif options.case == "other":
        command = shlex.split(options.other)
    else:
        print(f"restart_refusal: unknown case {options.case}")
        return 2
    expected = options.expect or EXPECTED[options.case]
    refused = run(command, dict(env, TASKGRID_RESTART=restart_from))
    ok = refused.returncode == 2 and re.search(r"error: taskgrid: rank \d+: .*" + expected,
                                               refused.stderr)
    wrong = "done" in refused.stdout
    if ok and not wrong:
        print("restart_refusal: OK")
        return 0
    print(f"restart_refusal: FAIL: expected status 2 and /{expected}/, no result")
    return 1


if __name__ == "__main__":
    sys.exit(main())
