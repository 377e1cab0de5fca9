#!/usr/bin/env python3
"""The README's PGAS example must be apps/examples/pgas_ring.cpp as it is built
and run by the tests (from its first #include on), so the README never shows
code that does not compile. Usage: readme_example_matches.py ROOT"""
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
readme = (root / "README.md").read_text()
source = (root / "apps/examples/pgas_ring.cpp").read_text()
body = source[source.index("#include"):].strip()
start = readme.find("```cpp\n#include <cstdio>")
if start < 0:
    sys.exit("README.md: no PGAS example (a cpp block starting with #include <cstdio>)")
end = readme.index("```", start + 6)
snippet = readme[start + len("```cpp\n"):end].strip()
if snippet != body:
    sys.exit("README.md's PGAS example differs from apps/examples/pgas_ring.cpp")
print("README example matches apps/examples/pgas_ring.cpp")
