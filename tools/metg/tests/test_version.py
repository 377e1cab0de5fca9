"""--version: one version, the one in pyproject.toml."""

import re
import subprocess
import sys

import pytest

import taskgrid_metg
from taskgrid_metg.cli import main

from conftest import REPO_ROOT

PYPROJECT = REPO_ROOT / "tools" / "metg" / "pyproject.toml"


def pyproject_version():
    return re.search(r'^version = "([^"]+)"', PYPROJECT.read_text(), re.MULTILINE).group(1)


def test_fallback_constant_matches_pyproject():
    # The constant serves uninstalled checkouts; it must not drift from pyproject.toml.
    assert taskgrid_metg.FALLBACK_VERSION == pyproject_version()
    assert taskgrid_metg.__version__ == pyproject_version()


def test_version_option_prints_and_exits_0_without_systems(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"taskgrid-metg {pyproject_version()}\n"


def test_version_as_a_module():
    done = subprocess.run([sys.executable, "-m", "taskgrid_metg", "--version"],
                          capture_output=True, text=True, cwd=REPO_ROOT / "tools" / "metg")
    assert done.returncode == 0 and done.stdout == f"taskgrid-metg {pyproject_version()}\n"
