"""Seed 003 §6.2: negative association learnt from a release, the attack on fake values, the defence."""

from __future__ import annotations

import numpy as np
import pytest

from core import mechanisms, negassoc
from core.table import load_dataset


def test_learn_finds_a_planted_negative_pair():
    # attribute value 0 never occurs with SA value 0; buckets of one record make the release exact
    rng = np.random.default_rng(0)
    z = rng.integers(0, 2, 400)
    x = np.where(z == 0, rng.integers(1, 3, 400), rng.integers(0, 3, 400))
    bucket = np.arange(400)
    neg = negassoc.learn([z], [2], bucket, bucket, x, np.ones(400), 3)
    assert neg[0][0, 0] and not neg[0][1].any() and neg[0][0, 1:].sum() == 0


@pytest.mark.slow
def test_defence_leaves_no_fake_to_strike():
    data = load_dataset("census:20000")
    out = {}
    for fakes in ("random", "negassoc"):
        rel = mechanisms.sanitize(data, "bucketization", {"sigma": 2, "fakes": fakes}, 1)
        qit, st, s = rel.tables["qit"], rel.tables["st"], rel.state
        out[fakes] = negassoc.attack([qit.columns[c] for c in data.qi], data.domains, qit.columns["bid"],
                                     np.asarray(st.columns["bid"]),
                                     np.asarray(st.columns[data.sa]), np.asarray(st.columns["count"]),
                                     s["fake_bucket"], s["fake_value"], data.m, 2)
    assert out["negassoc"]["records_with_a_fake_struck"] == 0
    assert out["negassoc"]["mean_certainty"] == pytest.approx(1 / 3)
    assert out["random"]["records_with_a_fake_struck"] > 0  # the attack bites on random fakes (fixed seed)
    assert out["random"]["mean_certainty"] > 1 / 3


@pytest.mark.slow
def test_attacks_tab_shows_attack_and_defence():
    from conftest import app, no_exception

    at = app("pages/4_Attacks.py", query={"data": "census:20000"})
    no_exception(at)
    at.button(key="atk_neg_run").click().run()
    no_exception(at)
    table = next(t.value for t in at.table if "records with a fake struck" in t.value.columns)
    assert table.loc["defence (seed 003 §6.2)", "records with a fake struck"] == 0
    assert table.loc["random (seed 003 §6)", "records with a fake struck"] > 0
