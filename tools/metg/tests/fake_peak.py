"""A stand-in taskbench-peak: reports FAKE_RATE FLOP/s per thread."""

import json
import os
import sys

args = sys.argv[1:]
threads = int(args[args.index("-threads") + 1])
rate = float(os.environ.get("FAKE_RATE", "1e9")) * threads
with open(args[args.index("-json") + 1], "w") as handle:
    json.dump({"kernel": args[args.index("-kernel") + 1], "threads": threads,
               "iterations": int(args[args.index("-iter") + 1]), "flops_per_second": rate,
               "seconds": 1.0}, handle)
