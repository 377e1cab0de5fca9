"""Allows `python -m taskgrid_metg ...`."""

import sys

from .cli import main

sys.exit(main())
