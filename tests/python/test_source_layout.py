"""The source tree keeps its layers (issue 24): no import circles among the package's modules
(function-level imports count: a deferred import is still a circle), and no source file in
cpp/ or python/ninetoothed/ over 600 lines (split a file before it passes that, or two jobs)."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "ninetoothed"


def imports_of(path, modules):
    """The package's modules that `path` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ninetoothed":
            parts = node.module.split(".")
            found.update([parts[1]] if len(parts) > 1 else [alias.name for alias in node.names])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "ninetoothed" and len(parts) > 1:
                    found.add(parts[1])
    return {name for name in found if name in modules and name != path.stem}


def circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles_in_the_package():
    modules = {path.stem: path for path in PACKAGE.glob("*.py")}
    graph = {name: imports_of(path, modules) for name, path in modules.items()}
    assert "_frontend" in graph["kernel"]  # the graph is read, not empty
    assert circles(graph) == []


def test_no_source_file_over_600_lines():
    files = [*ROOT.joinpath("cpp").rglob("*.cpp"), *ROOT.joinpath("cpp").rglob("*.h"), *PACKAGE.glob("*.py")]
    assert len(files) > 100
    long = {str(path.relative_to(ROOT)): n for path in files if (n := len(path.read_text().splitlines())) > 600}
    assert long == {}
