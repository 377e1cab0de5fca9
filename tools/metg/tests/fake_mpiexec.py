"""A stand-in mpiexec: `fake_mpiexec -n N cmd...` runs cmd once with FAKE_RANKS=N."""

import os
import sys

args = sys.argv[1:]
assert args[0] == "-n", args
os.environ["FAKE_RANKS"] = args[1]
os.execvp(args[2], args[2:])
