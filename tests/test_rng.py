"""core.rng: per-record draws are independent of chunking and statistically uniform."""

import numpy as np
import pytest
from scipy import stats

from core import rng


@pytest.mark.parametrize("k", [1, 3])
def test_any_chunking_gives_the_same_words(k):
    whole = rng.words(7, "keep", 0, 10_000, k)
    cuts = [0, 1, 17, 4096, 4097, 9_999, 10_000]
    parts = [rng.words(7, "keep", a, b - a, k) for a, b in zip(cuts, cuts[1:])]
    assert np.array_equal(np.concatenate(parts), whole)
    # any order of work: a chunk read alone equals its slice of the whole
    assert np.array_equal(rng.words(7, "keep", 4096, 100, k), whole[4096:4196])


def test_purposes_and_seeds_are_different_streams():
    a = rng.words(1, "keep", 0, 1000)
    assert not np.array_equal(a, rng.words(1, "value", 0, 1000))
    assert not np.array_equal(a, rng.words(2, "keep", 0, 1000))
    assert np.array_equal(a, rng.words(1, "keep", 0, 1000))


def test_uniforms_are_uniform_and_choices_cover_their_range():
    u = rng.uniforms(3, "u", 0, 200_000)
    assert u.min() >= 0 and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 0.01
    c = rng.choices(3, "c", 0, 140_000, 7)
    counts = np.bincount(c, minlength=7)
    assert len(counts) == 7
    assert stats.chisquare(counts).pvalue > 0.01
    per_record = rng.choices(3, "c", 0, 6, np.array([1, 2, 3, 4, 5, 6]))
    assert np.all(per_record < np.arange(1, 7)) and per_record[0] == 0


def test_columns_of_a_block_are_independent():
    u = rng.uniforms(5, "pair", 0, 100_000, 2)
    assert abs(stats.pearsonr(u[:, 0], u[:, 1])[0]) < 0.02


def test_a_record_needs_at_most_four_words():
    with pytest.raises(ValueError):
        rng.words(0, "x", 0, 3, 5)


@pytest.mark.parametrize("batch", [1, 7, 1 << 14])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_uniforms_are_the_words_formula_whatever_the_read_batch(monkeypatch, batch, k):
    """uniforms() converts batch by batch into its result: the same doubles as ``(word >> 11) * 2**-53``."""
    want = {(s, n): (rng.words(3, "u", s, n, k) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
            for s, n in [(0, 0), (11, 1), (5, 100), (1 << 30, 40_001)]}
    monkeypatch.setattr(rng, "WORDS_BATCH", batch)
    for (s, n), w in want.items():
        if batch == 1 and n > 1000:
            continue
        got = rng.uniforms(3, "u", s, n, k)
        assert got.dtype == np.float64 and got.shape == w.shape and got.tobytes() == w.tobytes()
        assert got.min(initial=0.0) >= 0.0 and got.max(initial=0.0) < 1.0
