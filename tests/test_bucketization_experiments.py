"""Seed 003's experiments (Figures 3-5 and 7) on small inputs."""

from __future__ import annotations

import numpy as np
import pytest

from core.experiments import get
from core.experiments.seed003 import anatomy_loss, l_for_theta, scaleup, widen
from core.table import load_dataset


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


def test_l_against_theta_on_adult(adult):
    res = get("seed003-l-vs-theta")(adult, {})
    frame = res.tables[0][1]
    # l = ceil(1 / min(theta f_min + 0.02)), f_min = 14 / 45222 (Armed-Forces): 49, 48, 45, 41, 34
    assert frame["ℓ = ⌈1/min f′ᵢ⌉"].tolist() == [49, 48, 45, 41, 34]
    assert not frame["ℓ-diversity feasible (ℓ ≤ largest)"].any()  # Anatomy reaches at most l = 7 on Adult
    assert res.data["anatomy_max_l"] == 7
    assert l_for_theta(adult.sa_counts, 8) == 45


def test_anatomy_loss_groups_of_l_and_l_plus_1():
    assert anatomy_loss(10, 3) == 2 * 2**2 + 1 * 3**2  # 3 + 3 + 4
    assert anatomy_loss(12, 3) == 4 * 4
    assert anatomy_loss(5, 3) == 16  # one group of 5 (two groups would need 6 records)


@pytest.mark.slow
def test_error_against_theta_reproduces_the_adult_losses(adult):
    res = get("seed003-error-vs-theta")(adult, {"thetas": "8", "queries": 150})
    rows = {r["method"]: r for r in res.data["rows"]}
    assert rows["TwoSize"]["loss"] == 292_920
    assert rows["MultiSize"]["loss"] == 158_967
    assert rows["Optimal"]["loss"] == 97_739
    assert rows["Anatomy (ℓ = 45)"]["mean relative error"] is None  # infeasible on Adult
    assert rows["Anatomy (ℓ = 45)"]["note"].startswith("not eligible: ℓ = 45 is above the largest feasible ℓ = 7")
    assert rows["MultiSize"]["note"] == ""
    assert rows["Optimal"]["MSE (Def. 3)"] < rows["MultiSize"]["MSE (Def. 3)"] < rows["TwoSize"]["MSE (Def. 3)"]
    assert all(0 < rows[k]["mean relative error"] < 1 for k in ("TwoSize", "MultiSize", "Optimal"))
    assert len(res.figures) == 2 and any("infeasible" in n for n in res.notes)


@pytest.mark.slow
def test_scaleup_variants_agree_and_widen_keeps_counts():
    counts = load_dataset("census:5000", "occupation").sa_counts
    w = widen(counts, 4, np.random.default_rng(0))
    assert w.sum() == counts.sum() and len(w) == 4 * len(counts)
    np.testing.assert_array_equal(w.reshape(-1, 4).sum(axis=1), counts)
    rows = scaleup(counts, [1, 2], variants=("full", "loss", "none"), optimal=False)
    assert all(r["same answer"] for r in rows)
    assert [r["|SA|"] for r in rows][0] == np.count_nonzero(counts)


def test_bad_theta_list_is_one_sentence(adult):
    from core.errors import ParameterError

    with pytest.raises(ParameterError) as exc:
        get("seed003-l-vs-theta")(adult, {"thetas": "8,abc"})
    assert "thetas" in str(exc.value) and "\n" not in str(exc.value)
