"""The document checker itself: it must catch an unannounced block, a block that
differs from its file and a missing file, and accept a matching one."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_doc_examples  # noqa: E402

SOURCE = "// a header comment the document does not show\n#include <cstdio>\nint main() { return 0; }\n"


def make_tree(tmp_path, document):
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps/ok.cpp").write_text(SOURCE)
    (tmp_path / "doc.md").write_text(document)
    return tmp_path


def test_matching_block_passes(tmp_path):
    root = make_tree(tmp_path, "Text\n<!-- example: apps/ok.cpp -->\n```cpp\n#include <cstdio>\n"
                               "int main() { return 0; }\n```\n```sh\nls\n```\n")
    assert check_doc_examples.check(root, "doc.md") == (1, [])


def test_block_without_marker_fails(tmp_path):
    root = make_tree(tmp_path, "```c\nint main(void) { return 0; }\n```\n")
    checked, problems = check_doc_examples.check(root, "doc.md")
    assert checked == 0 and "without <!-- example" in problems[0]


def test_differing_block_fails(tmp_path):
    root = make_tree(tmp_path, "<!-- example: apps/ok.cpp -->\n```cpp\n#include <cstdio>\n"
                               "int main() { return 1; }\n```\n")
    assert "differs from apps/ok.cpp" in check_doc_examples.check(root, "doc.md")[1][0]


def test_missing_file_fails(tmp_path):
    root = make_tree(tmp_path, "<!-- example: apps/gone.cpp -->\n```cpp\n#include <cstdio>\n```\n")
    assert "does not exist" in check_doc_examples.check(root, "doc.md")[1][0]


def test_update_rewrites_an_announced_block_from_its_file(tmp_path):
    root = make_tree(tmp_path, "Text\n<!-- example: apps/ok.cpp -->\n```cpp\nstale\ntext\n```\n"
                               "After\n")
    check_doc_examples.update(root, "doc.md")
    assert check_doc_examples.check(root, "doc.md") == (1, [])
    assert (root / "doc.md").read_text().endswith("```\nAfter\n")
