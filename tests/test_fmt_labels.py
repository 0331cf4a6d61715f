"""Labels and units of derived values, published metadata, privacy checks and curve read-outs (pages/ui/fmt.py).

A key that means different things to different mechanisms or curves must
not carry one mechanism's meaning into another's table (QA: Ambiguity's
presence bound alpha = 0.1 read "α (largest small count) | 0.1 records",
SPLU's label and unit).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from core import mechanisms
from core.bounds import BOUNDS
from core.experiments.seed002 import subset
from core.table import load_dataset
from pages.ui.fmt import LABELS, SCOPED, readable, with_unit

FMT = Path(__file__).resolve().parent.parent / "pages" / "ui" / "fmt.py"

#: keys reported by several mechanisms or curves that were read and found to mean the same thing in each
SAME_MEANING = {
    "T_p", "alpha_met", "beta_met", "diagonal", "off_diagonal", "diversity", "domain", "e", "group_sizes",
    "comparison_tolerance", "groups", "l", "m", "max_association", "max_placeable", "max_posterior", "max_presence", "min_diversity",
    "mu", "p", "placed", "rho1", "rho2_guaranteed", "share_unchanged", "tables", "unplaced", "unplaced_by_value",
}


def test_labels_declare_each_key_once():
    """A key written twice in the LABELS literal silently keeps the second label (delta did)."""
    tree = ast.parse(FMT.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") in {"LABELS", "SCOPED"}:
            dicts = [d for d in ast.walk(node.value) if isinstance(d, ast.Dict)]
            for d in dicts:
                keys = [k.value for k in d.keys if isinstance(k, ast.Constant)]
                assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


def test_alpha_reads_as_each_mechanism_means_it():
    assert readable("alpha", "ambiguity") == "α (presence bound)"
    assert readable("alpha", "priview") == "α (presence bound)"
    assert with_unit("alpha", 0.1, "ambiguity") == "0.1"  # a probability bound, not records
    assert readable("beta", "ambiguity") == "β (association bound)"
    assert readable("alpha", "splu") == "α (largest small count)"
    assert with_unit("alpha", 10, "splu") == "10 records"
    assert with_unit("alpha", 3, "splu-privacy") == "3 records"
    # without a scope only what is true for every mechanism: the symbol, no unit
    assert readable("alpha") == "α" and with_unit("alpha", 0.1) == "0.1"


def test_scoped_keys_fall_back_to_a_label_true_everywhere():
    for scope, labels in SCOPED.items():
        assert scope in mechanisms.MECHANISMS or scope in BOUNDS, scope
        for key in labels:
            label, _ = LABELS[key]
            assert "(" not in label, (key, label)
            assert with_unit(key, 3) == "3", (key, with_unit(key, 3))


@pytest.fixture(scope="module")
def reported():
    """key -> the mechanisms and curves that report it (derived, published, privacy, curve notes)."""
    data = subset(load_dataset("adult", "occupation"), np.arange(4000), "first 4000")
    data_words = set(data.qi) | {data.sa} | {str(v) for v in data.sa_labels}
    out: dict[str, set[str]] = defaultdict(set)

    def add(scope, mapping):
        for key, value in mapping.items():
            out[key].add(scope)
            if isinstance(value, dict):
                for sub in value:
                    if str(sub) not in data_words and not str(sub).lstrip("-").replace(".", "").isdigit():
                        out[str(sub)].add(scope)

    for name, mech in mechanisms.MECHANISMS.items():
        release = mechanisms.sanitize(data, name, None, seed=1)
        add(name, mech.derived(data, mech.resolve(None)))
        add(name, release.published)
        add(name, release.privacy)
    for name, bound in BOUNDS.items():
        add(name, bound.curve(bound.resolve(None)).notes)
    return out


def test_every_shared_key_is_scoped_or_reviewed(reported):
    """A key reported by two mechanisms or curves is either labelled per scope or checked to mean one thing.

    A new mechanism reusing a key (``alpha``, ``delta``...) in another sense fails here until its label is
    scoped in ``SCOPED`` or the key is added to ``SAME_MEANING`` after reading both.
    """
    unreviewed = {key: sorted(scopes) for key, scopes in reported.items()
                  if len(scopes) > 1 and key not in SAME_MEANING
                  and not any(key in SCOPED.get(s, {}) for s in scopes)}
    assert not unreviewed, unreviewed


def test_keys_with_several_meanings_are_labelled_for_every_reporter(reported):
    """alpha, delta and unprotected_values mean something different to each reporter: each needs its own label."""
    for key in ("alpha", "delta", "unprotected_values"):
        assert len(reported[key]) > 1, key
        for scope in reported[key]:
            assert key in SCOPED.get(scope, {}), (key, scope)


# ------------------------------------------------------------------ user data as text (issue 12 item 7)
@pytest.mark.parametrize("text", ["https://evil.example/x", "HTTP://evil.example", "www.evil.example", "bob@evil.example",
                                  "mailto:bob@evil.example", "[click](https://evil.example)", "<a href='x'>y</a>"])
def test_md_leaves_nothing_markdown_would_link(text):
    import re

    from pages.ui.fmt import WORD_JOINER, md

    out = md(text)
    assert out.replace(WORD_JOINER, "").replace("\\", "") == text.replace("\\", "")  # reads the same
    # what GFM links without markup: a scheme's '://', 'www.', an e-mail's '@'
    assert not re.search(r"(?i)(https?|ftp|mailto)://|www\.|\w@", out), out
    assert "](" not in out.replace("\\](", "")
