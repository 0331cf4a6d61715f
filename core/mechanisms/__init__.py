"""Registry of mechanisms and the entry points every caller uses.

Each module in this package exports ``MECHANISMS = [SomeMechanism()]``;
:data:`MECHANISMS` maps names to instances in display order.  Pages, CLI,
tests and benchmark call :func:`sanitize` and :func:`estimate` here; nothing
else dispatches on mechanism names.
"""

from __future__ import annotations

import secrets
import sys
from typing import Any, Mapping

import numpy as np

from ..errors import ParameterError, clip
from ..registry import collect
from ..release import Release
from ..table import Dataset
from .base import Eligibility, Mechanism

MECHANISMS: dict[str, Mechanism] = collect(sys.modules[__name__], "MECHANISMS")


def get(name: str) -> Mechanism:
    try:
        return MECHANISMS[name]
    except KeyError:
        raise ParameterError(
            f"There is no mechanism named '{clip(name)}'; choose one of: {', '.join(MECHANISMS)}."
        ) from None


#: largest release seed: fresh seeds draw 31 bits, and the pages take 0 .. MAX_SEED (one range everywhere)
MAX_SEED = 2**31 - 1


def fresh_seed() -> int:
    """A seed from OS entropy, recorded in the manifest so the release can be reproduced."""
    return secrets.randbits(31)


def check_seed(seed: Any) -> int:
    """``seed`` as an int from 0 to :data:`MAX_SEED`, or ParameterError.

    numpy refuses negative seeds with a ValueError (``--seed -1`` was an
    internal error); the upper end is the pages' and :func:`fresh_seed`'s,
    so any release can be reopened on the pages with its seed.
    """
    ok = isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and 0 <= seed <= MAX_SEED
    if not ok:
        raise ParameterError(f"The seed must be a whole number from 0 to {MAX_SEED:,}. Got {clip(seed)}.")
    return int(seed)


def sanitize(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None = None,
             seed: int | None = None) -> Release:
    """Validate, check eligibility and sanitize ``data`` with ``mechanism``.

    Raises ParameterError for a bad parameter and NotEligible when the table
    cannot be sanitized with these parameters.  Same seed, same release; no
    seed draws one from OS entropy (recorded in the release).
    """
    mech = get(mechanism)
    values = mech.resolve(raw)
    mech.check(data, values)
    seed = fresh_seed() if seed is None else check_seed(seed)
    rng = np.random.default_rng(seed)
    out = mech.sanitize(data, values, rng)
    derived = mech.derived(data, values)
    params = {**values, **{k: v for k, v in derived.items()}}
    main = next(iter(out.tables.values()), None)
    rows_out = out.rows_out if out.rows_out is not None else (len(main) if main is not None else 0)
    return Release(
        mechanism=mech.name,
        title=mech.title,
        params=params,
        seed=seed,
        source={
            "name": data.name,
            "content_hash": data.content_hash,
            "sensitive": data.sa,
            "qi": list(data.qi),
            "rows": data.n,
            "rows_dropped": data.rows_dropped,
            "bands": data.band_specs(),
            "raw_params": {k: v for k, v in values.items() if v is not None},
        },
        tables=dict(out.tables),
        published=dict(out.published),
        privacy=dict(out.privacy),
        notes=tuple(out.notes),
        state=dict(out.state),
        rows_out=rows_out,
    )


def estimate(release: Release, batches, seed: int | None = None) -> np.ndarray:
    """Estimated answers of every query in ``batches`` (a Workload or a list of batches).

    Randomness used at query time (Laplace noise) comes from ``seed`` or, by
    default, from the release's seed, so an evaluation is reproducible.
    """
    mech = get(release.mechanism)
    batches = getattr(batches, "batches", batches)
    rng = np.random.default_rng([release.seed if seed is None else seed, 0x5EED])
    parts = [np.asarray(x, dtype=float) for x in mech.estimate_many(release, list(batches), rng)]
    return np.concatenate(parts) if parts else np.zeros(0)


__all__ = ["MECHANISMS", "Mechanism", "Eligibility", "get", "sanitize", "estimate", "fresh_seed",
           "check_seed", "MAX_SEED"]
