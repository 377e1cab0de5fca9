#!/usr/bin/env python3
"""Counts the lines of the halo exchange in the two distributed minimod programs.

Usage: halo_loc.py [PGAS_SOURCE MPI_SOURCE]

In each source (default: minimod_pgas.cpp and minimod_mpi.cpp beside this
script) the halo exchange lies between the lines `// halo exchange: begin`
and `// halo exchange: end`, exactly once. Counted are the lines between
them that are neither blank nor only a `//` comment; a statement wrapped
over two lines counts two. Prints

  halo_loc pgas N
  halo_loc mpi M
  halo_loc ratio N/M

and exits 0; exits 1, saying why, when a source lacks the markers or has
more than one pair.
"""
import os
import sys

BEGIN = "// halo exchange: begin"
END = "// halo exchange: end"


def count_lines(path):
    """Returns (the counted lines between the markers, or None) and a problem."""
    with open(path, encoding="utf-8") as source:
        lines = [line.strip() for line in source]
    begins = [i for i, line in enumerate(lines) if line == BEGIN]
    ends = [i for i, line in enumerate(lines) if line == END]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        return None, (f"{path}: expected one '{BEGIN}' line followed by one '{END}' line, "
                      f"found {len(begins)} and {len(ends)}")
    body = lines[begins[0] + 1:ends[0]]
    return sum(1 for line in body if line and not line.startswith("//")), None


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    if len(sys.argv) == 3:
        sources = sys.argv[1:]
    elif len(sys.argv) == 1:
        sources = [os.path.join(here, "minimod_pgas.cpp"), os.path.join(here, "minimod_mpi.cpp")]
    else:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    counts = []
    for path in sources:
        count, problem = count_lines(path)
        if problem:
            print(f"halo_loc.py: {problem}", file=sys.stderr)
            return 1
        counts.append(count)
    pgas, mpi = counts
    print(f"halo_loc pgas {pgas}")
    print(f"halo_loc mpi {mpi}")
    print(f"halo_loc ratio {pgas / mpi:.2f}" if mpi else "halo_loc ratio n/a")
    return 0


if __name__ == "__main__":
    sys.exit(main())
