"""The app's memo of QI columns in published order (core.engine.local.QI_MEMO, pages/ui/cached._qi_memo).

Same releases byte for byte; one entry per dataset object and seed; an
upload's entry is private to its session and leaves with it (issue 12).
"""

from __future__ import annotations

import numpy as np
import pytest

from core import mechanisms
from core.mechanisms import MECHANISMS as MECHS
from core.engine import local
from core.lru import ByteLRU
from core.release import manifest_bytes
from core.table import bind, load_table


def _table(release):
    return {c: np.asarray(v).tobytes() for c, v in release.main_table.columns.items()}


def _qi_entries(lru):
    return [(k, e.scope) for k, e in lru._data.items() if e.kind == "published QI columns"]


@pytest.mark.parametrize("name, a, b", [("uniform", {"rho1": 0.07}, {"rho1": 0.08}),
                                        ("splu", {"gamma": 4}, {"gamma": 5}),
                                        ("sdr", {}, {"rho2": 0.3})])
def test_remembered_qi_columns_give_the_same_release_byte_for_byte(app_memo, monkeypatch, name, a, b):
    cached, lru, _ = app_memo
    data = bind(load_table("census:3000"), "occupation", ["age", "sex", "race"])
    with_memo = [mechanisms.sanitize(data, name, raw, 7) for raw in (a, b)]
    assert len(_qi_entries(lru)) == 1  # gathered once for the seed, used by both settings
    monkeypatch.setattr(local, "QI_MEMO", None)
    monkeypatch.setattr(local, "ORDER_MEMO", None)
    without = [mechanisms.sanitize(data, name, raw, 7) for raw in (a, b)]
    for x, y in zip(with_memo, without):
        assert _table(x) == _table(y)
        assert manifest_bytes(x) == manifest_bytes(y)
    assert _table(with_memo[0]) != _table(with_memo[1])


def test_another_seed_or_dataset_is_another_entry(app_memo):
    cached, lru, _ = app_memo
    table = load_table("census:2000")
    one = bind(table, "occupation", ["age", "sex"])
    mechanisms.sanitize(one, "uniform", None, 1)
    mechanisms.sanitize(one, "uniform", None, 2)
    assert len(_qi_entries(lru)) == 2
    # another Dataset object (here: other QIs) never reads the first one's columns, whatever its key says
    other = bind(table, "occupation", ["race", "workclass"])
    rel = mechanisms.sanitize(other, "uniform", None, 1)
    assert len(_qi_entries(lru)) == 3
    assert list(rel.main_table.columns)[:2] == ["race", "workclass"]


def test_an_uploads_columns_stay_in_its_session_and_leave_with_it(app_memo):
    cached, lru, session = app_memo
    raw = load_table("census:1500").frame.to_csv(index=False).encode()
    a = bind(load_table(raw, "mine.csv"), "occupation", ["age", "sex"])  # an upload: not a bundled sample
    mechanisms.sanitize(a, "uniform", None, 3)
    assert [scope for _, scope in _qi_entries(lru)] == ["session-a"]
    session["id"] = "session-b"  # another session uploads the same bytes: its own dataset, its own entry
    b = bind(load_table(raw, "mine.csv"), "occupation", ["age", "sex"])
    mechanisms.sanitize(b, "uniform", None, 3)
    assert sorted(scope for _, scope in _qi_entries(lru)) == ["session-a", "session-b"]
    lru.purge("session-a")  # session a ends
    assert [scope for _, scope in _qi_entries(lru)] == ["session-b"]
    # a bundled sample's columns are shared (no table data of anyone's upload)
    sample = load_table("census:1000")
    cached._SAMPLE_TABLES.add(sample)  # as cached.sample_table registers the samples it loads
    mechanisms.sanitize(bind(sample, "occupation", ["age"]), "uniform", None, 3)
    assert None in [scope for _, scope in _qi_entries(lru)]


@pytest.mark.slow
def test_nine_sessions_sliding_on_their_uploads_stay_within_the_byte_budget(app_memo, monkeypatch):
    """Issue 15: the caches are bounded in bytes, memo entries included, whatever the number of sessions.

    Nine sessions, each with its own upload (a Dataset of 20,000 records), move SPLU-Gen's and UP's
    sliders through the pages' cached release; after every release the store holds at most its budget,
    and every entry derived from an upload is scoped to the session that made it.
    """
    cached, _, session = app_memo
    budget = 2**20  # a few releases' worth: evictions happen all along
    lru = ByteLRU(budget, size=lambda v: cached.nbytes(v, skip=(cached.Table, cached.Dataset)))
    monkeypatch.setattr(cached, "_STORES", [lru])
    monkeypatch.setattr(cached, "store", lambda: lru)
    raw = load_table("census:20000").frame.to_csv(index=False).encode()
    seen = 0
    for s in range(9):
        session["id"] = f"session-{s}"
        data = bind(load_table(raw, f"upload-{s}.csv"), "occupation", ["age", "sex", "race"])
        for name, values in [("splu", {"gamma": g}) for g in (4, 5, 6)] + [("uniform", {"rho1": r})
                                                                          for r in (0.07, 0.08)]:
            resolved = MECHS[name].resolve(values)
            cached.release(data, data.key, name, cached.items(resolved), 1)
            seen += 1
            assert lru.total <= budget
            scopes = {e.scope for k, e in lru._data.items() if e.kind in ("releases", "published QI columns")}
            assert scopes <= {f"session-{i}" for i in range(s + 1)}
    assert lru.evictions > 0 and seen == 45
