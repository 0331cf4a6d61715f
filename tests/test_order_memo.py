"""The published order's memo (core.engine.local.ORDER_MEMO, installed by the app's cache): same releases."""

from __future__ import annotations

import numpy as np
import pytest

from core import mechanisms
from core.engine import local
from core.release import manifest_bytes
from core.table import bind, load_table


@pytest.fixture
def memo(monkeypatch):
    kept, calls = {}, []

    def order_memo(key, compute):
        calls.append(key)
        if key not in kept:
            kept[key] = compute()
        return kept[key]

    monkeypatch.setattr(local, "ORDER_MEMO", order_memo)
    return kept, calls


def _table(release):
    t = release.main_table
    return {c: np.asarray(v).tobytes() for c, v in t.columns.items()}


@pytest.mark.parametrize("name, a, b", [("uniform", {"rho1": 0.07}, {"rho1": 0.08}),
                                        ("splu", {"gamma": 4}, {"gamma": 5})])
def test_a_remembered_order_gives_the_same_release_byte_for_byte(memo, monkeypatch, name, a, b):
    kept, calls = memo
    data = bind(load_table("census:3000"), "occupation", ["age", "sex", "race"])
    with_memo = [mechanisms.sanitize(data, name, raw, 7) for raw in (a, b)]
    assert len(kept) == 1 and len(calls) == 2  # one order for the seed and n, drawn once, used by both settings
    monkeypatch.setattr(local, "ORDER_MEMO", None)
    without = [mechanisms.sanitize(data, name, raw, 7) for raw in (a, b)]
    for x, y in zip(with_memo, without):
        assert _table(x) == _table(y)
        assert manifest_bytes(x) == manifest_bytes(y)
    assert _table(with_memo[0]) != _table(with_memo[1])  # the settings differ; only the order is shared


def test_another_seed_or_size_is_another_order(memo):
    kept, _ = memo
    o1 = local.record_order(1, 500)
    o2 = local.record_order(2, 500)
    o3 = local.record_order(1, 400)
    assert len(kept) == 3
    assert sorted(o1) == list(range(500)) and not np.array_equal(o1, o2)
    assert sorted(o3) == list(range(400))


def test_a_remembered_order_is_not_reused_for_another_part_size(memo, monkeypatch):
    """The memo's key holds the parts' bit count: bounds cut for small parts are never given to default parts.

    (A CI run reused them: an AppTest installed the memo in the test process, a test with small parts
    filled it, and a later release of the same seed and n wrote 4 parts where it should write 1.)
    """
    data = bind(load_table("census:3000"), "occupation", ["age", "sex", "race"])
    monkeypatch.setattr(local, "PART_ROWS_LOG2", 10)
    small = mechanisms.sanitize(data, "uniform", None, 7)
    monkeypatch.setattr(local, "PART_ROWS_LOG2", 21)
    default = mechanisms.sanitize(data, "uniform", None, 7)
    monkeypatch.setattr(local, "ORDER_MEMO", None)
    fresh = mechanisms.sanitize(data, "uniform", None, 7)
    assert len(small.parts) - 1 == 4 and manifest_bytes(default) == manifest_bytes(fresh)
    assert list(default.parts) == list(fresh.parts) == [0, 3000]
