"""Registry of mechanisms and the entry points every caller uses.

Each module in this package exports ``MECHANISMS = [SomeMechanism()]``;
:data:`MECHANISMS` maps names to instances in display order.  Pages, CLI,
tests and benchmark call :func:`sanitize` and :func:`estimate` here; nothing
else dispatches on mechanism names.
"""

from __future__ import annotations

import dataclasses
import secrets
import sys
from typing import Any, Mapping

import numpy as np

from .. import cancel
from .. import guarantee as _g
from ..errors import NotEligible, ParameterError, WorkbenchError, clip
from ..params import format_value
from ..registry import MAX_SEED, collect
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
             seed: int | None = None, batch_rows: int | None = None) -> Release:
    """Validate, check eligibility and sanitize ``data`` with ``mechanism``.

    Raises ParameterError for a bad parameter and NotEligible when the table
    cannot be sanitized with these parameters.  Same seed, same release; no
    seed draws one from OS entropy (recorded in the release).

    A mechanism with a plan (``planned``, :mod:`core.engine.protocol`) is
    run on the local engine (:func:`core.engine.local.publish`) in batches
    of ``batch_rows`` records (default :data:`core.engine.local.DEFAULT_BATCH`;
    the release is the same for any value); the others by their own
    ``sanitize(data, values, rng)`` with a numpy generator seeded by ``seed``.

    Work behind a page that nobody waits for any more stops here
    (:func:`core.cancel.check`; nothing outside such work).
    """
    cancel.check()
    mech = get(mechanism)
    values = mech.resolve(raw)
    mech.check(data, values)
    seed = fresh_seed() if seed is None else check_seed(seed)
    if mech.planned:
        out = mech.publish(data, values, seed, batch_rows)
    else:
        out = mech.sanitize(data, values, np.random.default_rng(seed))
    derived = mech.derived(data, values)
    params = {**values, **{k: v for k, v in derived.items()}}
    main = next(iter(out.tables.values()), None)
    rows_out = out.rows_out if out.rows_out is not None else (len(main) if main is not None else 0)
    release = Release(
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
            # the table's other columns, not published: the manifest and the CLI say them (issue 24)
            **({"left_out": [c for c in data.table.columns if c not in (data.sa, *data.qi)]}
               if data.table is not None else {}),
            "raw_params": {k: v for k, v in values.items() if v is not None},
            **({"read": dict(data.table.read)} if data.table is not None and data.table.read else {}),
        },
        tables=dict(out.tables),
        published=dict(out.published),
        privacy=dict(out.privacy),
        notes=tuple(data.table.notes if data.table is not None else ()) + tuple(out.notes),
        state=dict(out.state),
        rows_out=rows_out,
        parts=out.parts,
    )
    if type(mech).guarantee is Mechanism.guarantee:  # a mechanism declaring no guarantee (tests' stand-ins)
        return release
    return dataclasses.replace(release, verdict=mech.guarantee(data, values, release))


#: settings :func:`verdict` sanitizes at most while looking for the nearest one that meets the guarantee
MAX_TRIES = 16


def describe(mechanism: str, params: Mapping[str, Any]) -> str:
    """Parameter changes as a steward reads them: ``γ = 7, p = auto``."""
    mech = get(mechanism)
    symbols = {p.name: p.symbol or p.name for p in mech.params}
    return ", ".join(f"{symbols.get(k, k)} = {format_value(v)}" for k, v in params.items())


def verdict(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None = None, seed: int = 0,
            suggest: bool = True, release: Release | None = None) -> "_g.Verdict":
    """Whether ``mechanism`` at ``raw`` can run on ``data`` and whether its release meets its guarantee.

    Parameters
    ----------
    data : Dataset
    mechanism : str
    raw : mapping, optional
        Parameters as for :func:`sanitize` (a bad value raises ParameterError).
    seed : int
        The release's seed (the verdict is computed on that release).
    suggest : bool
        When the release does not meet its guarantee plainly, look for the
        nearest setting that does (:func:`nearest`).
    release : Release, optional
        The release of exactly these parameters and seed, when the caller has it.

    Returns
    -------
    core.guarantee.Verdict
        ``cannot_run`` with the mechanism's reason and suggestion when the
        table is not eligible; otherwise the release's verdict, with a
        verified suggestion when one was found.
    """
    mech = get(mechanism)
    values = mech.resolve(raw)
    try:
        mech.check(data, values)
    except WorkbenchError as exc:  # NotEligible, or a DataError (a text parameter naming a missing column)
        fix = dict(exc.suggestion) if getattr(exc, "suggestion", None) else None
        sugg = None
        if fix and suggest:
            sugg = _what_would_work(data, mech, values, fix, seed)
        elif fix:
            sugg = {"params": fix, "text": describe(mech.name, fix), "verified": False}
        return _g.cannot_run(mech.name, mech.promise(values), str(exc), sugg)
    rel = release if release is not None else sanitize(data, mechanism, values, seed)
    v = rel.verdict
    if v is None:
        raise NotImplementedError(f"{mech.name} declares no guarantee")
    # values outside the guarantee's scope alone do not start a search: they come with the guarantee's terms
    if suggest and searches_nearest(v):
        v = v.with_suggestion(nearest(data, mechanism, values, rel.seed, v))
    return v


def searches_nearest(v: "_g.Verdict") -> bool:
    """Whether :func:`verdict` looks for the nearest setting for a release with verdict ``v``.

    A release that fails its guarantee, or meets it but not on every record it
    could publish.  (The Sanitize page runs that search behind the page.)
    """
    return v.outcome == _g.FAILS or (v.meets and not v.covers)


def nearest(data: Dataset, mechanism: str, values: Mapping[str, Any], seed: int,
            current: "_g.Verdict") -> dict[str, Any] | None:
    """The first of the mechanism's candidate settings whose release meets its guarantee on every record.

    Candidates come from :meth:`Mechanism.nearest`, nearest first; each is
    resolved, checked and sanitized with the same ``seed`` and kept only if
    its verdict meets on every record, non-vacuously
    (:attr:`core.guarantee.Verdict.covers`), so a suggestion is never a
    guess.  At most :data:`MAX_TRIES` settings are sanitized.  Returns
    ``{"params": changes, "text": ..., "verified": True, "plain": bool,
    "figures": ...}`` (with ``"outside": {"values": n, "records": r}`` when
    values stay outside the guarantee's scope, as they do at any setting of
    (ρ₁, ρ₂)-privacy for a value more frequent than ρ₁) or None.

    When ``current`` fails its guarantee and no candidate meets it plainly,
    the first candidate whose release meets it on the records it publishes
    (a meets qualified only by unpublished records, not vacuous) is returned
    instead, marked ``"plain": False`` with its ``"unpublished"`` count, so
    the fix is worded as meeting on the records it publishes (PriView's
    ``construction = exact``).  A current verdict that already meets is only
    ever offered a plain meets.
    """
    mech = get(mechanism)
    seen: set = set()
    tries = 0
    qualified = None
    found: list[tuple[tuple, int, dict[str, Any]]] = []  # (utility, order, suggestion) of the candidates that meet
    for change in mech.nearest(data, values, current):
        key = tuple(sorted((k, repr(v)) for k, v in change.items()))
        if key in seen or all(values.get(k) == v for k, v in change.items()):
            continue
        seen.add(key)
        if tries >= MAX_TRIES:
            break
        try:
            new = mech.resolve({**values, **change})
            mech.check(data, new)
        except WorkbenchError:
            continue
        tries += 1
        try:  # some settings fail only while sanitizing (PriView's exact construction placing no record)
            got = setting_verdict(data, mech, new, seed)
        except WorkbenchError:
            continue
        if got.covers:
            suggestion = {"params": dict(change), "text": describe(mechanism, change), "verified": True,
                          **_how_far(got), "figures": dict(got.figures)}
            if not mech.rank_by_utility and not got.little():
                return suggestion
            found.append((mech.utility(data, new, got), -len(found), suggestion))
            continue
        if (qualified is None and current.outcome == _g.FAILS and got.meets and got.unpublished
                and not got.vacuous):
            u = got.unpublished
            qualified = {"params": dict(change), "text": describe(mechanism, change), "verified": True,
                         "plain": False, "unpublished": {"records": int(u["records"]), "of": int(u["of"])},
                         "figures": dict(got.figures), **({"little": got.little()} if got.little() else {})}
    if found:  # the most useful that meets; equal utility: the nearest (tried first)
        ranked = sorted(found, key=lambda f: (f[0], f[1]), reverse=True)
        best = dict(ranked[0][2])
        if len(ranked) > 1:  # the other settings found that meet, named beside it (at most two)
            best["others"] = [{"params": o["params"], "text": o["text"],
                               **({"groups": o["figures"]["groups"]} if "groups" in o["figures"] else {}),
                               **({"little": o["little"]} if o.get("little") else {})} for _, _, o in ranked[1:3]]
        return best
    return qualified


def setting_verdict(data: Dataset, mech: Mechanism, values: Mapping[str, Any], seed: int) -> "_g.Verdict":
    """The verdict of the release of resolved, checked ``values`` with ``seed`` (for :func:`nearest`).

    A planned mechanism that declares ``verdict_from_plan`` (its guarantee
    reads only what its plan publishes: SPLU-Gen's gamma, p and group sizes;
    Mondrian's groups table) is judged on a release holding the plan's
    published values and static tables and no per-record table, which is
    the same verdict without applying the plan to every record (census 5M:
    milliseconds instead of a second per setting tried).
    Any other mechanism is sanitized.
    """
    if not (mech.planned and getattr(mech, "verdict_from_plan", False)):
        return sanitize(data, mech.name, values, seed).verdict
    from ..engine.combos import LazyCombos

    plan = mech.plan(LazyCombos(data), values, seed)
    out = plan.published_result({}, {})
    dry = Release(mechanism=mech.name, title=mech.title, params=dict(values), seed=int(seed), source={},
                  tables=dict(out.tables), published=dict(out.published), privacy=dict(out.privacy),
                  notes=tuple(out.notes), state=dict(out.state), rows_out=int(data.n))
    return mech.guarantee(data, values, dry)


def _how_far(got: "_g.Verdict") -> dict[str, Any]:
    """A verified suggestion's marks: ``plain`` (:attr:`Verdict.plain`) and, if any, its ``outside`` counts."""
    out: dict[str, Any] = {"plain": got.plain}
    if got.little():  # a fix that leaves one group or publishes little says so (issue 23 §2)
        out["little"] = got.little()
    if got.outside:
        out["outside"] = {"values": len(got.outside.get("values", ())), "records": int(got.outside.get("records", 0))}
    return out


def _what_would_work(data: Dataset, mech: Mechanism, values: Mapping[str, Any], fix: dict, seed: int) -> dict:
    """The mechanism's eligibility fix, then the nearest setting from there that meets the guarantee.

    ``verified`` is True when the returned setting's release was checked to
    meet the guarantee plainly; otherwise the setting only makes the table
    eligible (``runs`` says so) and its verdict's line is given.
    """
    out = {"params": fix, "text": describe(mech.name, fix), "verified": False}
    try:
        new = mech.resolve({**values, **fix})
        mech.check(data, new)
    except WorkbenchError:
        return out
    got = sanitize(data, mech.name, new, seed).verdict
    if got is None:
        return out
    if got.covers:
        return {**out, "verified": True, **_how_far(got), "figures": dict(got.figures)}
    more = nearest(data, mech.name, new, seed, got)
    if more:
        both = {**fix, **more["params"]}
        return {**more, "params": both, "text": describe(mech.name, both)}
    return {**out, "runs": True, "then": got.line()}


def judge(data: Dataset, release: Release, suggest: bool = True) -> "_g.Verdict":
    """The verdict of an existing release (with the nearest setting that meets it, when asked)."""
    return verdict(data, release.mechanism, release.source.get("raw_params"), release.seed, suggest, release)


def estimate(release: Release, batches, seed: int | None = None) -> np.ndarray:
    """Estimated answers of every query in ``batches`` (a Workload or a list of batches).

    Randomness used at query time (Laplace noise) comes from ``seed`` or, by
    default, from the release's seed, so an evaluation is reproducible.
    """
    from .base import share_groups

    cancel.check()  # work behind a page that nobody waits for any more stops here (core.cancel)
    mech = get(release.mechanism)
    # a workload drawn from the release's table brings the table's QI combinations: counted on once
    share_groups(release, getattr(batches, "groups", None))
    batches = getattr(batches, "batches", batches)
    rng = np.random.default_rng([release.seed if seed is None else seed, 0x5EED])
    parts = [np.asarray(x, dtype=float) for x in mech.estimate_many(release, list(batches), rng)]
    return np.concatenate(parts) if parts else np.zeros(0)


def estimate_grid(release: Release, conditions: np.ndarray, m: int, seed: int | None = None) -> np.ndarray:
    """(C, m): the estimated count of ``QI = conditions[c] AND SA = v`` for every condition row c and SA value v.

    The same numbers as :func:`estimate` of :func:`core.mechanisms.base.grid_batch`
    (one query per condition and value, Laplace's noise drawn in that order
    from the same generator), reshaped; a mechanism whose estimator allows
    it counts each condition once (:meth:`Mechanism.estimate_grid`).
    ``conditions``: codes of every QI, one distinct row per condition.
    """
    cancel.check()
    mech = get(release.mechanism)
    rng = np.random.default_rng([release.seed if seed is None else seed, 0x5EED])
    return np.asarray(mech.estimate_grid(release, np.asarray(conditions, dtype=np.int64), int(m), rng), float)


__all__ = ["MECHANISMS", "Mechanism", "Eligibility", "get", "sanitize", "estimate", "estimate_grid", "fresh_seed",
           "check_seed", "MAX_SEED", "verdict", "nearest", "judge", "describe"]
