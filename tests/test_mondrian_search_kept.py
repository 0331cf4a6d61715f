"""Mondrian's nearest-setting search keeps what it reads of each (k, l) partition (issue 27).

A slider move of beta re-runs the search, which tries the same (k, l)
partitions every time (beta raised at the current k for each l, then a
bisection on k); their groups' counts are kept with the table's
combinations, so the second search partitions (almost) nothing and finds
what a search on a fresh table finds.
"""

from __future__ import annotations

from core import mechanisms
from core.mechanisms import mondrian
from core.table import bind, load_table


def _search(data, beta):
    mech = mechanisms.get("mondrian")
    values = mech.resolve({"beta": beta})
    rel = mechanisms.sanitize(data, "mondrian", values, 3)
    return mechanisms.nearest(data, "mondrian", values, 3, rel.verdict)


def test_second_search_reuses_the_partitions_and_finds_the_same(monkeypatch):
    table = load_table("census:6000")
    data = bind(table, "occupation", ["age", "sex", "race", "education"])
    calls = []
    real = mondrian.mondrian_partition
    monkeypatch.setattr(mondrian, "mondrian_partition", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    first = _search(data, 0.1)
    n_first = len(calls)
    calls.clear()
    second = _search(data, 0.105)
    assert first is not None and n_first > 8  # the search tried many partitions
    assert len(calls) <= 2, len(calls)  # the candidates' own groups at most: the shares were kept
    fresh = bind(table, "occupation", ["age", "sex", "race", "education"])  # a new object: nothing kept
    assert second == _search(fresh, 0.105)
