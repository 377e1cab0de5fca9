"""Facts about the machine a sweep ran on."""

from __future__ import annotations

import os
import platform
import socket
import sys


def available_cores() -> int:
    """Cores this process may run on (the CPU affinity mask honours container limits
    that os.cpu_count() does not see)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def load_average() -> list[float] | None:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def describe(cores: int) -> dict:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "available_cores": available_cores(),
        "cores": cores,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
    }
