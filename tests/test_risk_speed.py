"""The map's risk measurement made fast (issue 27): the same figures as the per-setting, per-pair computation."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from core import risk
from core.table import bind, make_table


def table(n=1500, seed=0):
    """Two numeric QIs, two categorical ones, an SA of 5 values: nearest rows often tied."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 30, n), "zip": rng.integers(0, 30, n).astype(str),
                          "hours": 10 * rng.integers(1, 6, n), "sex": rng.choice(["f", "m"], n),
                          "s": rng.choice([f"v{i}" for i in range(5)], n)})
    return bind(make_table(frame, "speed"), "s", ["age", "zip", "hours", "sex"])


def reference_success(view, data, qi, truth):
    """The records attacker as defined, pair by pair: Gower distance summed in QI order to every published row,
    then the share of the rows at the smallest distance that hold the target's value."""
    d = len(data.qi)
    pub = [np.asarray(view.labels[j], dtype=object)[view.codes[j]] for j in range(d)]
    out = []
    for t in range(len(qi)):
        dist = np.zeros(len(view.sa))
        for j in range(d):
            target = data.qi_labels[j][qi[t, j]]
            same = np.array_equal(np.asarray(view.labels[j], object), np.asarray(data.qi_labels[j], object))
            if data.qi_numeric[j] and same:
                vals = np.asarray(data.qi_labels[j], float)
                width = float(vals.max() - vals.min()) or 1.0
                dist += np.abs(float(target) - pub[j].astype(float)) / width
            else:
                dist += np.array([risk._key(v) != risk._key(target) for v in pub[j]])
        near = dist == dist.min()
        out.append(np.sum(near & (view.sa == truth[t])) / np.sum(near))
    return np.array(out)


def view_of(data, rows, labels=None):
    """Published rows: the QI codes of ``rows`` of ``data`` (labels: the table's, or ``labels``), SA as is."""
    labs = tuple(labels or data.qi_labels)
    return risk.RowView(labs, tuple(np.asarray(c[rows]) for c in data.qi_codes), data.sa_codes[rows])


@pytest.mark.parametrize("chunk", [risk._CHUNK_CELLS, 300, 7])
def test_the_records_attacker_equals_the_pair_by_pair_definition(monkeypatch, chunk):
    """Exact matches, near matches and ties; whole, chunked and per-pair (a distance table too large) paths."""
    monkeypatch.setattr(risk, "_CHUNK_CELLS", chunk)
    monkeypatch.setattr(risk, "_NEAREST", risk.OrderedDict())  # computed here, not read from another case
    data = table()
    rng = np.random.default_rng(1)
    published = np.sort(rng.choice(data.n, size=300, replace=False))  # most targets have no exact match
    view = view_of(data, published)
    pick = rng.choice(data.n, size=120, replace=False)
    qi = np.stack([c[pick] for c in data.qi_codes], axis=1)
    truth = data.sa_codes[pick]
    got = view.success(data, qi, truth)
    assert np.array_equal(got, reference_success(view, data, qi, truth))
    assert 0 < got.mean() < 1 and np.mean((got > 0) & (got < 1)) > 0.05  # ties split the chance


def test_the_records_attacker_with_generalized_labels_equals_the_definition():
    """A QI published with its own labels (generalized): matched by text, a value never published matches none."""
    data = table(600, seed=3)
    rng = np.random.default_rng(2)
    rows = np.sort(rng.choice(data.n, size=200, replace=False))
    zip_labels = np.asarray([v if int(v) % 3 else "*" for v in data.qi_labels[1]], dtype=object)
    labels = list(data.qi_labels)
    labels[1] = zip_labels
    view = view_of(data, rows, labels)
    qi = np.stack([c[:80] for c in data.qi_codes], axis=1)
    truth = data.sa_codes[:80]
    assert np.array_equal(view.success(data, qi, truth), reference_success(view, data, qi, truth))


def test_every_setting_of_a_table_is_measured_on_one_training_part():
    """The split is cut once per table and split seed; a new table object gets its own, with the same rows."""
    data = table()
    a = risk.training_part(data, 0)
    assert risk.training_part(data, 0)[2] is a[2]
    train_rows, control_rows = risk.split(data.n, 0)
    assert np.array_equal(a[0], train_rows) and np.array_equal(a[1], control_rows)
    assert risk.training_part(data, 4)[2] is not a[2]  # another split seed: cut anew
    other = dataclasses.replace(data)
    assert risk.training_part(other, 0)[2] is not a[2]


@pytest.mark.parametrize("name, params", [("uniform", {}), ("mondrian", {"k": 5, "beta": 0.5}), ("anatomy", {"l": 3})])
def test_a_setting_assessed_on_the_shared_part_equals_one_assessed_alone(name, params):
    """The shared training part (and whatever the mechanism kept on it from other settings) changes no figure."""
    data = table(2000, seed=5)
    for other in ({"p": 0.2} if name == "uniform" else {"k": 8, "beta": 0.5} if name == "mondrian" else {"l": 4},):
        risk.assess(data, name, other, 3, attacks=200)  # another setting first, on the same part
    shared = risk.assess(data, name, params, 3, attacks=200)
    alone = risk.assess(dataclasses.replace(data), name, params, 3, attacks=200)  # a fresh table object
    assert shared.to_json() == alone.to_json()


def test_the_map_measures_with_the_mmap_threshold_raised_and_puts_it_back(thresholds):
    """core.lru.many_releases: raised for the map's dozens of releases on a table of any size, then at rest again."""
    from core import lru

    with lru.many_releases():
        assert thresholds == [lru.LARGE_MMAP_KB * 1024]
    assert thresholds == [lru.LARGE_MMAP_KB * 1024, 128 * 1024] and lru._LARGE == [0]


def test_the_nearest_rows_kept_for_the_same_combinations_give_each_release_its_own_figures(monkeypatch):
    """Two releases with the same published QIs and different SAs: the second reuses the nearest combinations
    (one entry kept) and still scores its own SA values, as the definition does; other QIs: a new entry."""
    monkeypatch.setattr(risk, "_NEAREST", risk.OrderedDict())
    data = table(800, seed=7)
    rng = np.random.default_rng(4)
    rows = np.sort(rng.choice(data.n, size=150, replace=False))
    qi = np.stack([c[:100] for c in data.qi_codes], axis=1)
    truth = data.sa_codes[:100]
    first = view_of(data, rows)
    second = risk.RowView(first.labels, first.codes, rng.permutation(first.sa))
    for view in (first, second):
        assert np.array_equal(view.success(data, qi, truth), reference_success(view, data, qi, truth))
    assert len(risk._NEAREST) == 1
    assert not np.array_equal(first.success(data, qi, truth), second.success(data, qi, truth))
    other = view_of(data, np.sort(rng.choice(data.n, size=150, replace=False)))
    assert np.array_equal(other.success(data, qi, truth), reference_success(other, data, qi, truth))
    assert len(risk._NEAREST) == 2


def test_an_answer_with_too_many_tied_pairs_is_not_kept_and_still_right(monkeypatch):
    """Ties with many combinations: computed chunk by chunk each time, never held whole."""
    monkeypatch.setattr(risk, "_NEAREST", risk.OrderedDict())
    monkeypatch.setattr(risk, "_NEAREST_PAIRS", 5)
    monkeypatch.setattr(risk, "_CHUNK_CELLS", 500)
    data = table(700, seed=9)
    rows = np.arange(0, 700, 5)
    view = view_of(data, rows)
    qi = np.stack([c[1:700:7] for c in data.qi_codes], axis=1)
    truth = data.sa_codes[1:700:7]
    for _ in range(2):
        assert np.array_equal(view.success(data, qi, truth), reference_success(view, data, qi, truth))
    assert len(risk._NEAREST) == 0
