"""The risk's grid of estimates (every sampled micro group under every SA value), each group counted once.

:func:`core.mechanisms.estimate_grid` must give, bit for bit, what the one
batch of ``G * m`` queries gave (:func:`core.risk.group_batches` through
:func:`core.mechanisms.estimate`), for every mechanism and with Laplace's
noise drawn in the same order: the measured risk in every manifest rests on
it (``tests/test_release_corpus.py`` holds their hashes).  The batch held
``G * m * m`` counts once answered: 3.4 GB and 3-12 s for one risk
measurement on the hospital sample's 749 diagnoses.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from core import mechanisms, risk
from core.engine.combos import Combos
from core.mechanisms.base import share_groups
from core.table import load_dataset

#: every mechanism, with a setting that runs on the small tables below (SPLU-Gen both estimators)
SETTINGS = [("uniform", {}), ("reconstruction", {"p": 0.5}), ("sdr", {}), ("splu", {}),
            ("splu", {"estimator": "direct"}), ("bucketization", {}), ("anatomy", {}), ("ambiguity", {}),
            ("dbr", {}), ("priview", {}), ("laplace", {"epsilon": 0.5}), ("mondrian", {"k": 5})]


@pytest.fixture(scope="module")
def tables():
    return {"census": load_dataset("census:3000", "occupation"), "hospital": load_dataset("hospital:400", "diagnosis")}


def _both(data, name, params, seed, shared):
    """(grid, batch answers reshaped) on two releases made alike (a release keeps what it counted)."""
    t = risk.targets(data, 60, seed)
    out = []
    for path in ("grid", "batch"):
        try:
            release = mechanisms.sanitize(data, name, params, seed)
        except mechanisms.WorkbenchError as exc:
            pytest.fail(f"{name} {params} cannot run on {data.name}: {exc}")
        if shared:
            share_groups(release, Combos.of(data).groups)
        if path == "grid":
            out.append(mechanisms.estimate_grid(release, t.values, data.m))
        else:
            out.append(mechanisms.estimate(release, risk.group_batches(data, t)).reshape(-1, data.m))
    return t, out


@pytest.mark.parametrize("table", ["census", "hospital"])
@pytest.mark.parametrize("name,params", SETTINGS, ids=[f"{n}-{'-'.join(p) or 'default'}" for n, p in SETTINGS])
def test_the_grid_is_the_batch_bit_for_bit(tables, table, name, params):
    data = tables[table]
    for seed, shared in ((3, False), (8, True)):
        t, (grid, batch) = _both(data, name, params, seed, shared)
        assert grid.shape == batch.shape == (len(t.values), data.m)
        assert grid.tobytes() == batch.tobytes(), (name, params, table, seed, np.abs(grid - batch).max())
        assert np.abs(grid).sum() > 0  # something was estimated


def test_the_table_s_own_guess_is_the_batch_s():
    data = load_dataset("census:3000", "occupation")
    t = risk.targets(data, 200, 4)
    from core.counting import select
    from core.workload import data_records

    batch = risk.group_batches(data, t)[0]
    want = select(data_records(data).counts(batch), batch.sa)
    guess = risk.guesses(want, t, data.m)
    assert risk.bayes_accuracy(data, t) == float(np.mean(guess == t.truth))
    assert 0 < risk.bayes_accuracy(data, t) <= 1


@pytest.mark.slow
def test_a_risk_measurement_on_749_diagnoses_stays_small():
    """The hospital sample's risk: at most 200 MB at the peak (numpy's arrays, traced), where it took 3.4 GB."""
    data = load_dataset("hospital:3000", "diagnosis")
    assert data.m > 700
    for name in ("uniform", "sdr", "laplace"):
        tracemalloc.start()
        try:
            a = risk.assess(data, name, {}, 1, singling=False)
            peak = tracemalloc.get_traced_memory()[1] / 2**20
        finally:
            tracemalloc.stop()
        assert peak < 200, (name, peak)
        assert 0 <= a.risk <= 1
