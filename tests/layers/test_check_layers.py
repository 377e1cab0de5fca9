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
    def assert_refused(self, changes, message):
        """BASE with `changes` (path: text to append, or to write where new) fails naming `message`."""
        files = dict(BASE)
        for path, text in changes.items():
            files[path] = files.get(path, "") + text
        with FakeTree(files) as root:
            result = run(root)
            self.assertEqual(result.returncode, 1, result.stdout)
            self.assertIn(message, result.stderr)

    def test_the_tree_passes(self):
        result = run(ROOT)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("layer check: ok", result.stdout)

    def test_a_downward_tree_passes(self):
        with FakeTree(BASE) as root:
            result = run(root)
            self.assertEqual(result.returncode, 0, result.stderr)

    def test_an_upward_include_fails_naming_file_line_and_layers(self):
        self.assert_refused({"src/core/sink.h": '#include "engine/engine.h"\n'},
                            'src/core/sink.h:4: core (layer 2) includes "engine/engine.h" of '
                            "engine (layer 5), a higher layer")

    def test_an_upward_include_without_a_cycle_fails(self):
        # coll -> core is upward, though nothing includes coll: no cycle.
        self.assert_refused({"src/coll/plan.cpp": '#include "core/sink.h"\n'},
                            'coll (layer 0) includes "core/sink.h" of core (layer 2), a higher layer')

    def test_a_peer_include_fails(self):
        self.assert_refused({"src/plan/planner.h": '#include "engine/engine.h"\n'},
                            "a peer in the same layer")

    def test_a_backend_below_runtime_fails(self):
        self.assert_refused({"src/engine/engine.h": '#include "comm/mpi/backend.cpp"\n'},
                            "comm/mpi (layer 6)")

    def test_a_folder_in_no_layer_fails(self):
        self.assert_refused({"src/extras/thing.cpp": '#include "core/sink.h"\n'}, "src/extras")

    def test_a_public_header_including_src_fails(self):
        self.assert_refused({"include/taskgrid/extra.hpp": '#include "core/sink.h"\n'},
                            "public headers include only taskgrid/ ones")


if __name__ == "__main__":
    unittest.main()
