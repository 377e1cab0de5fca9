"""A stand-in for netlab: keeps a host count in $FAKE_NETLAB_DIR/hosts, logs every call to
$FAKE_NETLAB_DIR/calls.jsonl, and `run --` starts the program once (FAKE_RANKS = hosts).

FAKE_NETLAB_FAIL_UP=N: `up N` creates the hosts, then fails (a half-done set-up)."""

import json
import os
import sys
from pathlib import Path

STATE = Path(os.environ["FAKE_NETLAB_DIR"])


def hosts() -> int:
    path = STATE / "hosts"
    return int(path.read_text()) if path.exists() else 0


def set_hosts(count: int) -> None:
    (STATE / "hosts").write_text(str(count))


def log(argv: list[str]) -> None:
    entry = {"argv": argv, "RATE": os.environ.get("RATE"), "DELAY_US": os.environ.get("DELAY_US"),
             "env": {k: v for k, v in os.environ.items() if k.startswith("TASKGRID_")}}
    with open(STATE / "calls.jsonl", "a") as out:
        out.write(json.dumps(entry) + "\n")


def main(argv: list[str]) -> int:
    log(argv)
    command = argv[0] if argv else ""
    if command == "status":
        if hosts() == 0:
            print("netlab: no hosts")
        for i in range(hosts()):
            print(f"tl{i} 10.77.0.{i + 1} sent 0 bytes")
        return 0
    if command == "up":
        if hosts():
            print("netlab: hosts already up: run 'netlab down' first", file=sys.stderr)
            return 1
        set_hosts(int(argv[1]))
        if os.environ.get("FAKE_NETLAB_FAIL_UP") == argv[1]:
            print("netlab: cannot create bridge", file=sys.stderr)
            return 1
        return 0
    if command == "down":
        set_hosts(0)
        print("netlab: down")
        return 0
    if command == "run" and argv[1:2] == ["--"]:
        if hosts() == 0:
            print("netlab: no hosts: run 'netlab up N' first", file=sys.stderr)
            return 1
        os.environ["FAKE_RANKS"] = str(hosts())
        os.execvp(argv[2], argv[2:])
    print(f"fake netlab: unexpected arguments {argv}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
