"""The bytes of a download button, made on the click from what the button names, not from the run that drew it.

Streamlit (1.67) keeps a download button's callable in a registry keyed by
the button's place on the page, and drops it only when a later run of the
session draws a button at that same place, or when the session ends.  A
lambda written in a page script holds the whole namespace of the run that
drew it: the table, the release, every figure.  On census 5M a session
kept an earlier setting's release alive this way after the page had moved
on (bucketization's 160 MB beside Anatomy's; issue 27 asks 700 MB for one
session).

So the callables made here hold the table and the release weakly and the
setting by value.  On the click they use the release if it is still alive
(the page that shows the button holds it, or the pages' cache does); else
they make it again from its seed, which gives the same bytes (the same seed
gives the same release, byte for byte).  Choice: made again rather than
kept alive, since a release that nothing else holds belongs to a page no
longer shown, or to one the cache dropped for a larger table's sake.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Mapping

from core import api
from core.errors import WorkbenchError
from core.release import Release, csv_bytes, manifest_bytes, parquet_bytes, zip_bytes
from core.session import Setting

#: what :func:`release_file` makes, by the name the Sanitize page gives it
KINDS = ("csv", "parquet", "zip-csv", "zip-parquet", "manifest")


def release_file(kind: str, args: tuple, release: Release, decision: Mapping[str, Any] | None,
                 risk_mode: str) -> Callable[[], bytes]:
    """A download callable for ``kind`` of the release of ``args`` (``(data, key, mechanism, params, seed)``).

    ``decision``: the decision record the manifest carries (a small dict,
    held as is).  ``risk_mode``: :func:`pages.ui.risk.mode` when the button
    is drawn ("off": the manifest says the risk was not measured).  The risk
    block is the pages' cached one when it is there, else measured on the
    click (:func:`core.api.assess_risk`, the same figures).
    """
    if kind not in KINDS:
        raise ValueError(f"Unknown download {kind!r}: one of {', '.join(KINDS)}.")
    data_ref, release_ref = weakref.ref(args[0]), weakref.ref(release)
    rest = tuple(args[1:])

    def make() -> bytes:
        data = data_ref()
        if data is None:
            raise WorkbenchError("This button belongs to a table that is no longer loaded: open Sanitize again "
                                 "and download from there.")
        got = release_ref()
        if got is None:  # nothing holds it any more: made again from its seed, the same bytes
            got = api.build(data, Setting(rest[1], dict(rest[2]), int(rest[3])))
        if kind == "csv":
            return csv_bytes(got.main_table.to_frame())
        if kind == "parquet":
            return parquet_bytes(got.main_table.to_frame())
        risk = _risk_block((data, *rest), got, risk_mode)
        if kind == "manifest":
            return manifest_bytes(got, decision, risk)
        return zip_bytes(got, kind.split("-")[1], decision, risk)

    return make


def _risk_block(args: tuple, release: Release, risk_mode: str) -> dict[str, Any]:
    """The manifest's risk block as :func:`pages.ui.risk.block` gives it, beside the verdict the page showed."""
    from pages.ui import cached
    from pages.ui import risk as uirisk

    verdict = cached.verdict(*args) if cached.verdict.is_cached(*args) else release.verdict
    if risk_mode == "off":
        measured = uirisk.OFF
    elif cached.risk.is_cached(*args):
        measured = cached.risk(*args)
    else:  # outside a script run an upload's entry is not found (it is kept under the session): measured again
        data, _, name, params, seed = args
        measured = api.assess_risk(data, Setting(name, dict(params), int(seed)))
    return api.beside_verdict(measured, verdict)


def table_inside(make: Callable[[Any, Any], bytes], small: Any, table: Any) -> Callable[[], bytes]:
    """``make(small, table.frame)`` on the click, holding ``table`` weakly (Home's session file with the table)."""
    table_ref = weakref.ref(table)

    def later() -> bytes:
        t = table_ref()
        if t is None:
            raise WorkbenchError("This button belongs to a table that is no longer loaded: open Home again and "
                                 "save from there.")
        return make(small, t.frame)

    return later
