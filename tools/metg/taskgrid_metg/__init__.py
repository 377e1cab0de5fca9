"""METG (minimum effective task granularity) measurement for TaskGrid's Task Bench binaries.

The command-line tool is `taskgrid-metg` (see cli.py); the analysis is usable on its own
through `taskgrid_metg.analysis.compute_metg`.
"""

__version__ = "0.1.0"
