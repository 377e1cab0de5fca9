"""METG (minimum effective task granularity) measurement for TaskGrid's Task Bench binaries.

The command-line tool is `taskgrid-metg` (see cli.py); the analysis is usable on its own
through `taskgrid_metg.analysis.compute_metg`.
"""

from importlib import metadata

# pyproject.toml is the single source of the version; this copy serves only when the
# package runs uninstalled (python -m from a checkout, tools/bcast_bench), and a test
# keeps the two equal.
FALLBACK_VERSION = "0.1.0"

try:
    __version__ = metadata.version("taskgrid-metg")
except metadata.PackageNotFoundError:
    __version__ = FALLBACK_VERSION
