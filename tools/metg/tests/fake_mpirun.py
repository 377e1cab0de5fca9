"""A stand-in Open MPI mpirun: `fake_mpirun [--bind-to X] [--oversubscribe]
[--allow-run-as-root] -n N cmd...` runs cmd once with FAKE_RANKS=N and FAKE_MPI=openmpi.
Any other option before -n is an error, so that the tests see the command's shape."""

import os
import sys

args = sys.argv[1:]
while args and args[0] != "-n":
    if args[0] == "--bind-to":
        assert args[1] in ("none", "core"), args
        args = args[2:]
    elif args[0] in ("--oversubscribe", "--allow-run-as-root"):
        args = args[1:]
    else:
        sys.exit(f"fake_mpirun: unknown option {args[0]}")
assert args and args[0] == "-n", sys.argv
os.environ["FAKE_RANKS"] = args[1]
os.environ["FAKE_MPI"] = "openmpi"
os.execvp(args[2], args[2:])
