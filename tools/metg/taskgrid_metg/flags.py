"""Task Bench graph flags: splitting at -and and injecting the swept -iter."""

from __future__ import annotations

GRAPH_SEPARATOR = "-and"

# Set by this tool on every run; a user-supplied value would silently fight the sweep.
RESERVED_FLAGS = ("-iter", "-worker", "-json")


def default_graph_flags(cores: int) -> list[str]:
    """The published CPU METG shape (spec section 9): one task per core per timestep."""
    return ["-kernel", "compute_bound", "-type", "stencil_1d", "-steps", "1000",
            "-width", str(cores)]


def check_graph_flags(flags: list[str]) -> None:
    for flag in RESERVED_FLAGS:
        if flag in flags:
            raise ValueError(f"graph flags must not contain {flag}: taskgrid-metg sets it on every run")


def split_graphs(flags: list[str]) -> list[list[str]]:
    """One list of flags per graph; -and starts a new graph."""
    graphs: list[list[str]] = [[]]
    for arg in flags:
        if arg == GRAPH_SEPARATOR:
            graphs.append([])
        else:
            graphs[-1].append(arg)
    return graphs


def with_iterations(flags: list[str], iterations: int | str) -> list[str]:
    """`flags` with `-iter iterations` added to every graph.

    Every -and resets a graph to the defaults (iter 0), so -iter must go into each one.
    """
    result: list[str] = []
    for index, graph in enumerate(split_graphs(flags)):
        if index:
            result.append(GRAPH_SEPARATOR)
        result += [*graph, "-iter", str(iterations)]
    return result


def graph_option(graph: list[str], option: str, default: str) -> str:
    """Value of `option` in one graph's flags; the last occurrence wins, as in Task Bench."""
    value = default
    for position, arg in enumerate(graph[:-1]):
        if arg == option:
            value = graph[position + 1]
    return value


def graph_kernels(flags: list[str]) -> list[str]:
    """The kernel of every graph (Task Bench's default kernel is `empty`)."""
    return [graph_option(graph, "-kernel", "empty") for graph in split_graphs(flags)]
