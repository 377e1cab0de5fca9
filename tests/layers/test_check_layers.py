"""scripts/check_layers.py: passes on the tree, fails on each kind of broken include.

Run: python3 tests/layers/test_check_layers.py (CTest: layers.*).
"""

import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check_layers.py"


def run(root):
    return subprocess.run([sys.executable, str(CHECK), "--root", str(root)],
                          capture_output=True, text=True, timeout=60)


class FakeTree:
    """A tree with src/<folder>/ files; the rest is what a test writes."""

    def __init__(self, files):
        self.dir = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.dir.name)
        (self.root / "include" / "taskgrid").mkdir(parents=True)
        (self.root / "include" / "taskgrid" / "taskgrid.hpp").write_text("#pragma once\n")
        for path, text in files.items():
            file = self.root / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text)

    def __enter__(self):
        return self.root

    def __exit__(self, *exc):
        self.dir.cleanup()


BASE = {
    "src/data/pool.h": "#pragma once\n",
    "src/comm/transport.h": '#pragma once\n#include "data/pool.h"\n',
    "src/core/sink.h": '#pragma once\n#include "comm/transport.h"\n#include "taskgrid/taskgrid.hpp"\n',
    "src/engine/engine.h": '#pragma once\n#include "core/sink.h"\n',
    "src/plan/planner.h": '#pragma once\n#include "core/sink.h"\n',
    "src/comm/mpi/backend.cpp": '#include "comm/transport.h"\n',
    "src/runtime/api.cpp": '#include "engine/engine.h"\n#include "plan/planner.h"\n'
                           '#include "comm/mpi/backend.cpp"\n',
}


class CheckLayers(unittest.TestCase):
    def test_the_tree_passes(self):
        result = run(ROOT)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("layer check: ok", result.stdout)

    def test_a_downward_tree_passes(self):
        with FakeTree(BASE) as root:
            result = run(root)
            self.assertEqual(result.returncode, 0, result.stderr)

    def test_an_upward_include_fails_naming_file_line_and_layers(self):
        files = dict(BASE)
        files["src/core/sink.h"] += '#include "engine/engine.h"\n'
        with FakeTree(files) as root:
            result = run(root)
            self.assertEqual(result.returncode, 1)
            self.assertIn('src/core/sink.h:4: core (layer 2) includes "engine/engine.h" of engine '
                          "(layer 5), a higher layer", result.stderr)

    def test_an_upward_include_without_a_cycle_fails(self):
        # comm -> core is upward though core does not include comm back here.
        files = dict(BASE)
        files["src/core/sink.h"] = "#pragma once\n"
        files["src/comm/transport.h"] += '#include "core/sink.h"\n'
        with FakeTree(files) as root:
            result = run(root)
            self.assertEqual(result.returncode, 1)
            self.assertIn("a higher layer", result.stderr)

    def test_a_peer_include_fails(self):
        files = dict(BASE)
        files["src/plan/planner.h"] += '#include "engine/engine.h"\n'
        with FakeTree(files) as root:
            result = run(root)
            self.assertEqual(result.returncode, 1)
            self.assertIn("a peer in the same layer", result.stderr)

    def test_a_backend_below_runtime_fails(self):
        files = dict(BASE)
        files["src/engine/engine.h"] += '#include "comm/mpi/backend.cpp"\n'
        with FakeTree(files) as root:
            result = run(root)
            self.assertEqual(result.returncode, 1)
            self.assertIn("comm/mpi (layer 6)", result.stderr)

    def test_a_folder_in_no_layer_fails(self):
        files = dict(BASE)
        files["src/extras/thing.cpp"] = '#include "core/sink.h"\n'
        with FakeTree(files) as root:
            result = run(root)
            self.assertEqual(result.returncode, 1)
            self.assertIn("src/extras", result.stderr)

    def test_a_public_header_including_src_fails(self):
        files = dict(BASE)
        files["include/taskgrid/extra.hpp"] = '#include "core/sink.h"\n'
        with FakeTree(files) as root:
            result = run(root)
            self.assertEqual(result.returncode, 1)
            self.assertIn("public headers include only taskgrid/ ones", result.stderr)


if __name__ == "__main__":
    unittest.main()
