"""Seed 003 §6.2: negative association learnt from a bucketized release, the attack it enables, the defence.

An adversary (and the publisher) learns from the published QIT/ST that a
QI value z and a sensitive value x are *negatively associated* when the
count of x the release implies among the records having z is far below
what independence gives:

    E[n(z, x)] = sum_b n_b(z) c_b(x) / |b|   <   tau * n(z) f(x),
    with n(z) f(x) >= min_expected

(``n_b(z)`` records with z in bucket b, ``c_b(x)`` the ST count of x in b,
``f(x)`` x's share of the table).  The paper cites the attack ([13], [17])
but gives no learning rule; this one, with ``tau = 0.25`` and
``min_expected = 5``, is our choice (written here and on the page).

Attack (:func:`attack`): the corruption attack of §6 leaves a target's
real value among sigma fakes; the adversary strikes the fakes negatively
associated with one of the target's QI values, and its certainty rises
from 1/(1 + sigma) towards 1.

Defence (§6.2, "inject only those fake values into a bucket that cannot be
removed using the learnt negative association"): a bucket's fakes are drawn
only from the absent values no record of the bucket excludes; where fewer
than sigma such values exist, the rest are drawn from the other absent
values and counted (never silently).

References
----------
seed 003 (Wang et al.) §6 (corruption attack, sigma fake values), §6.2
(negative association).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

TAU = 0.25
MIN_EXPECTED = 5.0


def learn(qi_codes: Sequence[np.ndarray], domains: Sequence[int], bucket: np.ndarray, st_bucket: np.ndarray,
          st_value: np.ndarray, st_count: np.ndarray, m: int, tau: float = TAU,
          min_expected: float = MIN_EXPECTED) -> list[np.ndarray]:
    """Per QI attribute, a (domain, m) boolean matrix: (z, x) negatively associated in the release."""
    bucket = np.asarray(bucket, dtype=np.int64)
    B = int(max(bucket.max(initial=-1), np.max(st_bucket, initial=-1))) + 1
    share = np.zeros((B, m))
    np.add.at(share, (np.asarray(st_bucket, np.int64), np.asarray(st_value, np.int64)), np.asarray(st_count, float))
    share /= np.maximum(share.sum(axis=1, keepdims=True), 1)
    f = np.bincount(np.asarray(st_value, np.int64), weights=np.asarray(st_count, float), minlength=m)
    f = f / max(f.sum(), 1)
    out = []
    for codes, dom in zip(qi_codes, domains):
        codes = np.asarray(codes, dtype=np.int64)
        n_bz = np.zeros((B, int(dom)))
        np.add.at(n_bz, (bucket, codes), 1.0)
        expected = n_bz.T @ share                    # (dom, m): E[n(z, x)] from the release
        indep = np.bincount(codes, minlength=int(dom))[:, None] * f[None, :]
        out.append((indep >= min_expected) & (expected < tau * indep))
    return out


def excluded(qi_codes: Sequence[np.ndarray], bucket: np.ndarray, neg: list[np.ndarray], n_buckets: int,
             m: int, every: bool = True) -> np.ndarray:
    """(buckets, m): values excluded for every record of the bucket (``every``) or for at least one."""
    bucket = np.asarray(bucket, dtype=np.int64)
    per_record = np.zeros((len(bucket), m), dtype=bool)
    for codes, mat in zip(qi_codes, neg):
        per_record |= mat[np.asarray(codes, dtype=np.int64)]
    if every:
        out = np.ones((n_buckets, m), dtype=bool)
        np.logical_and.at(out, bucket, per_record)
        out[np.bincount(bucket, minlength=n_buckets) == 0] = False
    else:
        out = np.zeros((n_buckets, m), dtype=bool)
        np.logical_or.at(out, bucket, per_record)
    return out


def attack(qi_codes, domains, bucket, st_bucket, st_value, st_count, fake_bucket, fake_value, m, sigma: int,
           neg: list[np.ndarray] | None = None) -> dict:
    """Corruption plus negative association on a release (seed 003 §6-6.2), per record.

    The adversary corrupts every other record of a target's bucket, so the
    target's value is its real one or one of the sigma fakes; it then
    strikes the fakes negatively associated with one of the target's QI
    values.  Without the strike its certainty is ``1/(1 + sigma)``; with it
    ``1/(1 + sigma - k)`` for k fakes struck.  Returns the share of records
    with at least one fake struck and the mean certainty.
    """
    real = ~_is_fake(st_bucket, st_value, fake_bucket, fake_value)
    if neg is None:  # learnt from the real entries, as the publisher does (the adversary's best case)
        neg = learn(qi_codes, domains, bucket, st_bucket[real], st_value[real], st_count[real], m)
    bucket = np.asarray(bucket, dtype=np.int64)
    per_record = np.zeros((len(bucket), m), dtype=bool)
    for codes, mat in zip(qi_codes, neg):
        per_record |= mat[np.asarray(codes, dtype=np.int64)]
    B = int(np.max(st_bucket, initial=-1)) + 1
    fake = np.zeros((B, m), dtype=bool)
    fake[np.asarray(fake_bucket, np.int64), np.asarray(fake_value, np.int64)] = True
    k = (per_record & fake[bucket]).sum(axis=1)
    certainty = 1.0 / (1 + sigma - k) if sigma else np.ones(len(bucket))
    return {"records": int(len(bucket)), "records_with_a_fake_struck": int((k > 0).sum()),
            "share_struck": float((k > 0).mean()) if len(k) else 0.0,
            "mean_certainty": float(np.mean(certainty)) if len(k) else 0.0,
            "certainty_without_strike": 1.0 / (1 + sigma), "pairs_learnt": int(sum(int(x.sum()) for x in neg))}


def _is_fake(st_bucket, st_value, fake_bucket, fake_value) -> np.ndarray:
    key = np.asarray(st_bucket, np.int64) * (1 << 20) + np.asarray(st_value, np.int64)
    fk = np.asarray(fake_bucket, np.int64) * (1 << 20) + np.asarray(fake_value, np.int64)
    return np.isin(key, fk)
