"""The house's layout: no import cycle, one front door, each mechanism found by its name.

An import cycle is counted over every import, the lazy ones inside
functions included: a module that reaches back into its importer, even
late, is one knot a reader must untie.  The mechanism check lists, per
registered mechanism, the modules that carry its name (algorithm,
guarantee, bounds, view, tests) and asserts the algorithm lives under
``core/mechanisms/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in ("core", "pages"):
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            mods[name] = path
    return mods


def import_graph() -> dict[str, set[str]]:
    """``{module: modules of this project it imports}``, every import statement counted."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in mods}
            elif isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                full = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{full}.{alias.name}"
                    if sub in mods:
                        graph[name].add(sub)
                    elif full in mods:
                        graph[name].add(full)
    for name in graph:
        graph[name].discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    """A judge that cannot fail is a defect: a made-up two-module and three-module knot are found."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(cycles(graph)) == [["a", "b"], ["c", "d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.slow  # parses every module (about 1 s of CPU)
def test_no_import_cycle_in_core_or_pages():
    found = cycles(import_graph())
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_cli_only_parses_and_prints():
    """core/cli.py calls the front door; it does not build, judge or write releases itself."""
    text = (ROOT / "core" / "cli.py").read_text(encoding="utf-8")
    for call in ("mechanisms.sanitize(", "mechanisms.judge(", "rel.write(", "bind(", "load_dataset(",
                 "sweep_points(", "dk.sanitize(", "dk.evaluate(", "report import build"):
        assert call not in text, f"core/cli.py still orchestrates: {call}"
    assert "from . import api" in text


def test_each_mechanism_is_found_by_its_name():
    """Each mechanism is defined in core/mechanisms/, in the module of its name or of its paper's family.

    PriView is seed 004's second construction and shares Ambiguity's module
    (one group builder, ``core/mechanisms/ambiguity_algorithm.py``); every
    other mechanism has ``core/mechanisms/<name>.py``.  No algorithm of a
    mechanism lives at ``core/<name>*.py`` apart from it.
    """
    from core.mechanisms import MECHANISMS

    family = {"priview": "ambiguity"}
    for name, mech in MECHANISMS.items():
        home = family.get(name, name)
        assert type(mech).__module__ == f"core.mechanisms.{home}", (name, type(mech).__module__)
        assert (ROOT / "core" / "mechanisms" / f"{home}.py").is_file()
        strays = [p.name for p in ROOT.glob("core/*.py") if p.stem.startswith((name, home))]
        assert strays == [], f"{name}'s code outside core/mechanisms/: {strays}"
    assert (ROOT / "core" / "mechanisms" / "bucketization_algorithm.py").is_file()


def test_docs_layout_names_every_module():
    """docs/layout.md stays true: every module of core/ and pages/ is named there (a folder's row may name a
    folder's files together, as ``core/data/`` names ``read.py``)."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    missing = []
    for pkg in ("core", "pages"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            folder = rel.rsplit("/", 1)[0] + "/"
            named = rel in text or (f"`{folder}`" in text and path.name in text) or (
                folder.count("/") >= 2 and f"`{folder}`" in text and folder not in ("core/mechanisms/", "pages/ui/"))
            if not named:
                missing.append(rel)
    assert missing == [], f"docs/layout.md does not name: {missing}"
