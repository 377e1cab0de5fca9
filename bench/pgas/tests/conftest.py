"""The report script importable as `pgas_report`."""

import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
BENCH_DIR = TESTS_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
