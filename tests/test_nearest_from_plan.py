"""The nearest-setting search judges SPLU-Gen's candidates from their plan (core.mechanisms.setting_verdict).

Its guarantee reads only gamma, p and the group sizes, which the plan decides:
the verdict of a release without records must be the verdict of the release.
"""

from __future__ import annotations

import pytest

from core import mechanisms
from core.mechanisms import MECHANISMS, setting_verdict
from core.table import bind, load_table


@pytest.fixture(scope="module")
def data():
    # 2,003 records: not a multiple of most gammas, so groups of gamma + 1 are published too
    return bind(load_table("census:2003"), "occupation", ["age", "sex", "race"])


@pytest.mark.parametrize("raw", [{"gamma": 3}, {"gamma": 5}, {"gamma": 7}, {"gamma": 4, "p": 0.5},
                                 {"gamma": 6, "partition": "sorted"}, {"gamma": 5, "t_p": 0.5, "alpha": 2},
                                 {"gamma": 3, "sa2": "education"}])
def test_the_plans_verdict_is_the_releases(data, raw):
    mech = MECHANISMS["splu"]
    values = mech.resolve(raw)
    mech.check(data, values)
    full = mechanisms.sanitize(data, "splu", values, 11).verdict
    dry = setting_verdict(data, mech, values, 11)
    assert dry.outcome == full.outcome
    assert dry.figures == full.figures
    assert dry.line() == full.line()


def test_the_search_finds_the_same_setting_with_and_without_records(data, monkeypatch):
    from core.mechanisms.splu import SPLU

    got = mechanisms.verdict(data, "splu", {"gamma": 4}, 11)
    assert got.suggestion and got.suggestion["verified"]
    monkeypatch.setattr(SPLU, "verdict_from_plan", False)  # every candidate sanitized, as before
    assert mechanisms.verdict(data, "splu", {"gamma": 4}, 11).suggestion == got.suggestion
