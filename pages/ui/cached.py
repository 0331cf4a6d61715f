"""Thin caching wrappers around the core functions the pages call.

Each wrapper is keyed by primitives only: the dataset ``key``
(content hash | SA | QIs), a mechanism or bound name, the *resolved*
parameters as a sorted tuple of items (so an explicit default and an
omitted one share an entry), the seed and the workload settings.  Objects
that should not be hashed (the :class:`core.table.Dataset`, a ``Table``)
are passed as underscore arguments, which Streamlit leaves out of the key.

``st.cache_resource`` is used for results holding large arrays (tables,
releases, workloads, evaluations): they are shared, not copied, and a
:class:`core.release.Release` caches its query index in ``state`` so the
second evaluation on it is faster.  Pages never mutate these objects.
``st.cache_data`` holds the small, picklable results (curves,
eligibility answers, query texts).  Every entry lives in memory only.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import streamlit as st

from core import evaluate as _evaluate
from core import mechanisms as _mechanisms
from core.bounds import BOUNDS
from core.table import Dataset, Table, bind, load_table

TTL = 2 * 3600  # seconds; uploads leave memory at the latest after this


def items(values: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Hashable, order-independent form of a parameter mapping."""
    return tuple(sorted((str(k), v) for k, v in values.items()))


@st.cache_resource(max_entries=6, ttl=TTL, show_spinner="Loading the sample table…")
def sample_table(spec: str) -> Table:
    """A bundled sample by spec (``"adult"``, ``"census:500000"``)."""
    return load_table(spec)


@st.cache_resource(max_entries=12, ttl=TTL, show_spinner="Encoding the chosen columns…")
def dataset(_table: Table, content_hash: str, sa: str, qi: tuple[str, ...], bands: tuple = ()) -> Dataset:
    """``core.table.bind`` keyed by (content hash, SA, QIs, bands).

    ``bands`` is :func:`band_items` of the ``{column: spec}`` to apply.
    """
    return bind(_table, sa, qi, {col: json.loads(spec) for col, spec in bands})


def band_items(bands: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """Hashable, order-independent form of ``{column: band spec}`` (the key of :func:`dataset`)."""
    return tuple(sorted((str(c), json.dumps(spec, sort_keys=True)) for c, spec in (bands or {}).items()))


@st.cache_data(max_entries=64, ttl=TTL, show_spinner=False)
def micro_groups(_data: Dataset, data_key: str) -> dict:
    """:func:`core.data.banding.micro_groups` of a dataset's QIs, as a dict."""
    from core.data.banding import micro_groups as _micro_groups

    return _micro_groups(_data.qi_codes, _data.domains).to_json()


@st.cache_data(max_entries=512, ttl=TTL, show_spinner=False)
def eligibility(_data: Dataset, data_key: str, mechanism: str, params: tuple) -> tuple[bool, str, dict | None]:
    """``Mechanism.eligibility`` as ``(ok, message, suggestion)``."""
    mech = _mechanisms.get(mechanism)
    e = mech.eligibility(_data, dict(params))
    return bool(e.ok), str(e.message), (dict(e.suggestion) if e.suggestion else None)


@st.cache_data(max_entries=512, ttl=TTL, show_spinner=False)
def verdict(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int):
    """``core.mechanisms.verdict`` (with the nearest setting that meets the guarantee), on the cached release."""
    ok = eligibility(_data, data_key, mechanism, params)[0]
    rel = release(_data, data_key, mechanism, params, seed) if ok else None
    return _mechanisms.verdict(_data, mechanism, dict(params), int(seed), release=rel)


@st.cache_resource(max_entries=48, ttl=TTL, show_spinner=False)
def release(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int):
    """``core.mechanisms.sanitize`` for resolved ``params`` and an int ``seed``."""
    return _mechanisms.sanitize(_data, mechanism, dict(params), int(seed))


@st.cache_resource(max_entries=12, ttl=TTL, show_spinner=False)
def workload(_data: Dataset, data_key: str, kind: str, settings: tuple):
    """``core.evaluate.make_workload`` (true answers included)."""
    return _evaluate.make_workload(_data, kind, **dict(settings))


@st.cache_resource(max_entries=128, ttl=TTL, show_spinner=False)
def evaluation(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int,
               kind: str, settings: tuple):
    """Sanitize (cached) and estimate every query of the workload (cached)."""
    rel = release(_data, data_key, mechanism, params, seed)
    wl = workload(_data, data_key, kind, settings)
    return _evaluate.evaluate_release(rel, wl)


@st.cache_data(max_entries=16, ttl=TTL, show_spinner=False)
def query_texts(_data: Dataset, data_key: str, kind: str, settings: tuple) -> list[str]:
    """Every query of the workload as text (hover labels)."""
    wl = workload(_data, data_key, kind, settings)
    return [wl.describe(_data, i) for i in range(len(wl))]


@st.cache_data(max_entries=256, ttl=TTL, show_spinner=False)
def curve(bound: str, params: tuple):
    """``Bound.curve`` for resolved parameters."""
    return BOUNDS[bound].curve(dict(params))


@st.cache_resource(max_entries=8, ttl=TTL, show_spinner=False)
def targets(_data: Dataset, data_key: str, records: int, seed: int):
    """The records sampled for the inference attack (same sample for every setting)."""
    from core.risk import targets as _targets

    return _targets(_data, records, seed)


@st.cache_resource(max_entries=512, ttl=TTL, show_spinner=False)
def point(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int, queries: int, records: int):
    """One mechanism setting measured for the risk-utility map (cached per point)."""
    from core.risk import measure_release

    wl = workload(_data, data_key, "seed000", items({"queries": queries, "max_attrs": 3, "seed": seed}))
    rel = release(_data, data_key, mechanism, params, seed)
    ev = evaluation(_data, data_key, mechanism, params, seed, "seed000",
                    items({"queries": queries, "max_attrs": 3, "seed": seed}))
    return measure_release(_data, rel, wl, targets(_data, data_key, records, seed), ev)
