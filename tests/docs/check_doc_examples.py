#!/usr/bin/env python3
"""Every C or C++ example in the README and the user guide is a file in the tree.

A code block in a checked document must be announced by a comment on the line
above it, `<!-- example: apps/examples/NAME -->`, and its text must be that
file's text from its first #include on (the file may start with a comment that
the document does not show). The files themselves are built and run by the
tests (apps/CMakeLists.txt, tests/*), so no document shows code that does not
compile. A cpp or c block without the comment is an error: it would be code
nobody compiles.

Usage: check_doc_examples.py [--update] ROOT [DOCUMENT...]
       (default documents: README.md docs/guide.md; --update rewrites each announced
       block from its file instead of checking it)
"""
import pathlib
import re
import sys

MARKER = re.compile(r"<!-- example: (\S+) -->")
FENCE = re.compile(r"^```(\w*)\s*$")


def checked_blocks(text):
    """Yields (line number, language, announced file or None, block text)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        language = fence.group(1)
        start = i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            raise ValueError(f"line {start + 1}: a code block is never closed")
        announced = None
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0:
            marker = MARKER.fullmatch(lines[k].strip())
            announced = marker.group(1) if marker else None
        yield start + 1, language, announced, "\n".join(lines[start + 1:j])
        i = j + 1


def check(root, document):
    problems = []
    checked = 0
    for line, language, announced, block in checked_blocks((root / document).read_text()):
        if language not in ("c", "cpp"):
            continue
        where = f"{document}:{line}"
        if announced is None:
            problems.append(f"{where}: a {language} block without <!-- example: FILE --> above it")
            continue
        path = root / announced
        if not path.is_file():
            problems.append(f"{where}: {announced} does not exist")
            continue
        if block.strip() != file_body(path).strip():
            problems.append(f"{where}: the block differs from {announced} (from its first #include)")
            continue
        checked += 1
    return checked, problems


def file_body(path):
    """The file's text from its first #include on (all of it without one)."""
    source = path.read_text()
    first_include = source.find("#include")
    return (source[first_include:] if first_include >= 0 else source).strip("\n")


def update(root, document):
    """Rewrites every announced block of `document` from its file."""
    lines = (root / document).read_text().split("\n")
    out = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        marker = MARKER.fullmatch(lines[i].strip())
        if marker and i + 1 < len(lines) and FENCE.match(lines[i + 1]):
            out.append(lines[i + 1])
            j = i + 2
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.extend(file_body(root / marker.group(1)).split("\n"))
            i = j
            continue
        i += 1
    (root / document).write_text("\n".join(out))


def main(argv):
    updating = "--update" in argv[1:]
    argv = [a for a in argv if a != "--update"]
    if len(argv) < 2:
        sys.exit(__doc__)
    root = pathlib.Path(argv[1])
    documents = argv[2:] or ["README.md", "docs/guide.md"]
    if updating:
        for document in documents:
            update(root, document)
    total = 0
    problems = []
    for document in documents:
        checked, found = check(root, document)
        total += checked
        problems += found
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"{total} examples in {', '.join(documents)} match their files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
