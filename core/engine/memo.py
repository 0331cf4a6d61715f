"""An optional memo of per-record values that depend on the table and the seed, not on a mechanism's parameters.

A slider move in the app re-runs a release with one parameter changed
(SPLU-Gen's gamma, SDR's rho2, RP's lambda).  Some of each record's work
does not depend on that parameter: SDR's keyed dealing positions and
SPLU-Gen's run positions (keyed permutations of each value's ranks), RP's
uniform-perturbation draws, its micro groups and its records' groups and
ranks.  When the app installs a memo here
(:data:`RECORD_MEMO`, ``memo(data, key, compute)``, pages/ui/cached.py:
its byte-bounded cache, scoped like the dataset, so an upload's entries
stay in its session), a plan made by the local engine keeps those arrays
between releases; otherwise they are computed every time.  The release is
the same byte for byte either way (``tests/test_record_memo.py``).

A plan reaches the memo through :func:`bind`, from the summary it is
planned on: only the local engine's :class:`core.engine.combos.LazyCombos`
carries the dataset, so a Dask plan never holds a memo, and a plan that is
pickled drops it (:func:`drop_memo`).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

import numpy as np

#: optional memo of per-record arrays: ``RECORD_MEMO(data)`` returns ``memo(key, compute)`` for that dataset, or
#: None (None here: computed every time).  It is called when a plan is made (the app resolves the session
#: that owns the dataset then; the memo itself may be called from the engine's apply threads).  ``key`` is a
#: tuple of plain values (a purpose, the seed, a batch's first record and length, the parameters the value
#: depends on); the memo adds the dataset's identity and scope.
RECORD_MEMO = None

#: the type a bound memo has: ``memo(key, compute) -> value``
Memo = Callable[[tuple, Callable[[], Any]], Any]


def local_data(summary):
    """The dataset behind the local engine's summary (a ``LazyCombos``), or None (a Dask or hand-made summary).

    Read from the summary's own attribute, never through the lazily built
    :class:`core.engine.combos.Combos`, so nothing is counted to find it.
    """
    return vars(summary).get("_data") if hasattr(summary, "__dict__") else None


def bind(summary) -> Memo | None:
    """:data:`RECORD_MEMO` bound to the dataset behind ``summary``, or None (no memo, or not a local table)."""
    factory = RECORD_MEMO
    data = local_data(summary) if factory is not None else None
    return None if data is None else factory(data)


def for_data(data) -> Memo | None:
    """:data:`RECORD_MEMO` bound to ``data`` itself (a :class:`core.table.Dataset`), or None."""
    factory = RECORD_MEMO
    return None if factory is None or data is None else factory(data)


def remember(memo: Memo | None, key: Hashable, compute: Callable[[], Any]) -> Any:
    """``memo(key, compute)``, or ``compute()`` without a memo."""
    return compute() if memo is None else memo(key, compute)


def drop_memo(state: dict, name: str = "memo") -> dict:
    """A plan's ``__getstate__``: its attributes without the bound memo (a closure over the dataset)."""
    state = dict(state)
    state[name] = None
    return state


def narrow(values: np.ndarray, top: int) -> np.ndarray:
    """``values`` (non-negative ints below ``top``) as uint8/16/32 when they fit, to keep a memo entry small."""
    for t in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(t).max + 1:
            return np.asarray(values).astype(t, copy=False)
    return np.asarray(values, dtype=np.int64)


__all__ = ["RECORD_MEMO", "Memo", "local_data", "bind", "for_data", "remember", "drop_memo", "narrow"]
