"""The command line starts at once: ``--help`` imports none of the algorithms, and its text stays the registries'.

``python -m core --help`` lists every sample, mechanism, workload and curve
with its parameters; those texts are kept in ``core/_helptext.py``
(``python -m core.helptext`` writes it), so printing them imports no
mechanism, no pandas and no scipy.  The mechanisms and curves themselves
import scipy's heavy parts (stats, signal, optimize) only where they use them.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core import cli, helptext, registry

ROOT = Path(__file__).resolve().parents[1]

_LOADED = ("import runpy, sys, json\n"
           "sys.argv = ['core', *sys.argv[1:]]\n"
           "try:\n"
           "    runpy.run_module('core', run_name='__main__', alter_sys=True)\n"
           "except SystemExit:\n"
           "    pass\n"
           "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n")


def _modules_after(*args: str, script: str = _LOADED) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert got.returncode == 0, got.stderr
    return set(json.loads(got.stderr.strip().splitlines()[-1]))


def test_help_imports_no_algorithm():
    loaded = _modules_after("--help")
    heavy = {m for m in loaded if m.split(".")[0] in ("scipy", "pandas", "pyarrow", "numpy")}
    assert heavy == set()
    assert not any(m.startswith(("core.mechanisms", "core.bounds", "core.workloads")) for m in loaded)


@pytest.mark.slow
def test_mechanisms_do_not_import_scipy_stats_signal_or_optimize():
    loaded = _modules_after(script="import sys, json\nimport core.mechanisms, core.bounds, core.workloads\n"
                                   "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n")
    assert "core.mechanisms.splu" in loaded and "core.bounds.chernoff" in loaded
    assert not {"scipy.stats", "scipy.signal", "scipy.optimize"} & loaded


@pytest.mark.slow
def test_sanitize_with_its_risk_imports_no_plotting(tmp_path):
    """The risk measurement's training part is cut by ``core.table.subset``: it imported the experiments'
    module, and with it plotly (40 ms of a 0.9 s ``sanitize`` of Adult)."""
    loaded = _modules_after("sanitize", "adult", "--sa", "occupation", "--qi", "age,sex,education",
                            "--mechanism", "uniform", "--seed", "1", "--out", str(tmp_path / "r.csv"))
    assert "core.risk" in loaded and "core.singling_out" in loaded  # the risk was measured
    assert not any(m.split(".")[0] == "plotly" or m.startswith("core.experiments") for m in loaded)


@pytest.mark.slow
def test_kept_help_texts_are_the_registries():
    """core/_helptext.py is what the registries give now (else: run ``python -m core.helptext``)."""
    built = helptext.built_help_texts()
    from core._helptext import TEXT

    assert set(TEXT) == set(registry.HELP_TEXTS)
    for name, text in built.items():
        assert TEXT[name] == text, f"core/_helptext.py is out of date ({name}): run python -m core.helptext"
        assert getattr(cli, registry.HELP_TEXTS[name])() == text
    assert "splu" in built["mechanisms"] and "sdr-error" in built["bounds"]


def test_a_help_text_not_kept_is_built(monkeypatch):
    import core._helptext as kept

    monkeypatch.setattr(kept, "TEXT", {})
    assert registry.help_text("mechanisms", lambda: "built here") == "built here"
    monkeypatch.setattr(kept, "TEXT", {"mechanisms": "kept"})
    assert registry.help_text("mechanisms", lambda: "built here") == "kept"


def test_write_help_texts_round_trips(tmp_path, monkeypatch):
    monkeypatch.setattr(helptext, "built_help_texts", lambda: {"samples": "a 'quoted'\nline", "bounds": "é"})
    path = helptext.write_help_texts(tmp_path / "_helptext.py")
    space: dict = {}
    exec(path.read_text(encoding="utf-8"), space)  # noqa: S102 - our own generated file
    assert space["TEXT"] == {"samples": "a 'quoted'\nline", "bounds": "é"}


def _imports(path: Path) -> set[str]:
    """Every module a source file imports, at any depth (function-level imports count), as absolute names."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            mod = ".".join([*base, node.module] if node.module else base)
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_sdr_bound_and_mechanism_import_each_other_one_way():
    assert "core.mechanisms.sdr" in _imports(ROOT / "core/bounds/sdr.py")
    assert not any(m.startswith("core.bounds.sdr") for m in _imports(ROOT / "core/mechanisms/sdr.py"))
