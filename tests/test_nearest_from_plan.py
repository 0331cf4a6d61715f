"""The nearest-setting search judges SPLU-Gen's and Mondrian's candidates from their plan (core.mechanisms.setting_verdict).

Its guarantee reads only gamma, p and the group sizes, which the plan decides:
the verdict of a release without records must be the verdict of the release.
"""

from __future__ import annotations

import numpy as np
import pytest

from core import mechanisms
from core.mechanisms import MECHANISMS, setting_verdict
from core.table import bind, load_table


@pytest.fixture(scope="module")
def data():
    # 2,003 records: not a multiple of most gammas, so groups of gamma + 1 are published too
    return bind(load_table("census:2003"), "occupation", ["age", "sex", "race"])


def _plan_verdict_is_the_releases(data, name: str, raw: dict) -> None:
    """The verdict judged from the plan alone equals the one of the whole release (outcome, figures, line)."""
    mech = MECHANISMS[name]
    values = mech.resolve(raw)
    mech.check(data, values)
    full = mechanisms.sanitize(data, name, values, 11).verdict
    dry = setting_verdict(data, mech, values, 11)
    assert dry.outcome == full.outcome
    assert dry.figures == full.figures
    assert dry.line() == full.line()


@pytest.mark.parametrize("raw", [{"gamma": 3}, {"gamma": 5}, {"gamma": 7}, {"gamma": 4, "p": 0.5},
                                 {"gamma": 6, "partition": "sorted"}, {"gamma": 5, "t_p": 0.5, "alpha": 2},
                                 {"gamma": 3, "sa2": "education"}])
def test_the_plans_verdict_is_the_releases(data, raw):
    _plan_verdict_is_the_releases(data, "splu", raw)


def test_the_search_finds_the_same_setting_with_and_without_records(data, monkeypatch):
    from core.mechanisms.splu import SPLU

    got = mechanisms.verdict(data, "splu", {"gamma": 4}, 11)
    assert got.suggestion and got.suggestion["verified"]
    monkeypatch.setattr(SPLU, "verdict_from_plan", False)  # every candidate sanitized, as before
    assert mechanisms.verdict(data, "splu", {"gamma": 4}, 11).suggestion == got.suggestion


# ------------------------------------------------------------------ Mondrian (its guarantee reads the groups table)
@pytest.mark.parametrize("raw", [{"beta": 0.1}, {"beta": 0.2, "k": 20}, {"beta": 0.5, "k": 3}, {"beta": 0.25, "l": 2}])
def test_mondrians_plan_verdict_is_the_releases(data, raw):
    _plan_verdict_is_the_releases(data, "mondrian", raw)


def test_mondrians_search_finds_the_same_setting_with_and_without_records(data, monkeypatch):
    from core.mechanisms.mondrian import Mondrian

    got = mechanisms.verdict(data, "mondrian", {"beta": 0.2, "k": 5}, 11)
    assert got.suggestion and got.suggestion["verified"]
    monkeypatch.setattr(Mondrian, "verdict_from_plan", False)
    assert mechanisms.verdict(data, "mondrian", {"beta": 0.2, "k": 5}, 11).suggestion == got.suggestion


def test_mondrians_search_stops_at_the_largest_k_it_could_set(data, monkeypatch):
    """A k above the parameter's range is never searched for (census 5M spent 23 partitions on candidates it refused)."""
    import dataclasses

    from core.engine.combos import Combos
    from core.mechanisms import mondrian as M

    mech = MECHANISMS["mondrian"]
    # the smallest k that meets: the first candidate that moves k (β is searched at k = 5 first, issue 23 §2)
    needed = next(c["k"] for c in mech.nearest(data, mech.resolve({"beta": 0.2, "k": 5}), None) if "k" in c)
    Combos.of(data)._derived[0].clear()  # no partition kept from the search above
    calls = []
    real = M.mondrian_partition
    monkeypatch.setattr(M, "mondrian_partition", lambda *a, **kw: calls.append(a[4]) or real(*a, **kw))
    cap = needed - 1  # the smallest k that meets beta is just out of the parameter's range
    params = tuple(dataclasses.replace(p, high=cap) if p.name == "k" else p for p in mech.params)
    monkeypatch.setattr(M.Mondrian, "params", params)
    v = mechanisms.verdict(data, "mondrian", {"beta": 0.2, "k": 5}, 11)
    assert v.suggestion is None or "k" not in v.suggestion["params"]
    assert calls.count(cap) == 1 and max(calls) == cap  # one partition at the cap, none above, no bisection
    assert len(set(calls)) <= 2  # the release's own k (5) and the cap


def test_the_partition_is_kept_for_its_k_and_l(data, monkeypatch):
    """beta's slider moves that keep l = ceil(1/beta) reuse the partition (Combos.remember); the bytes are the same."""
    from core.engine.combos import Combos
    from core.mechanisms import mondrian as M

    Combos.of(data)._derived[0].clear()
    first = mechanisms.sanitize(data, "mondrian", {"beta": 0.1, "k": 7}, 3)
    calls = []
    real = M.mondrian_partition
    monkeypatch.setattr(M, "mondrian_partition", lambda *a, **kw: calls.append(a[4:6]) or real(*a, **kw))
    again = mechanisms.sanitize(data, "mondrian", {"beta": 0.105, "k": 7}, 3)  # l = 10 both times
    assert calls == []
    Combos.of(data)._derived[0].clear()
    fresh = mechanisms.sanitize(data, "mondrian", {"beta": 0.105, "k": 7}, 3)
    assert calls == [(7, 10)]
    for a, b in ((first, again), (again, fresh)):
        for name, table in a.tables.items():
            for col, values in table.columns.items():
                got = b.tables[name].columns[col]
                assert got.dtype == values.dtype and np.array_equal(got, values)
    assert again.manifest() == fresh.manifest()


def test_combos_remember_keeps_a_few_of_each_kind(data):
    from core.engine.combos import Combos

    c = Combos.of(data)
    c._derived[0].clear()
    for i in range(6):
        assert c.remember(("kind-a", i), lambda i=i: [i]) == [i]
    kept = [k for k in c._derived[0] if k[0] == "kind-a"]
    assert kept == [("kind-a", i) for i in range(2, 6)]
    box = c.remember(("kind-a", 5), lambda: ["recomputed"])
    assert box == [5]
