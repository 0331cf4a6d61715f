"""The measured risk beside every verdict: one block, the manifest's, drawn the same on every page.

The block is :func:`core.api.measure_risk`'s (the CLI's manifest carries
the same one): the added risk with its 95% interval, the plain sentence,
and the sentence that sets the verdict and the risk side by side.  It is
computed behind the page (:func:`pages.ui.cached.in_background`, one
sanitization of 80% of the table plus 1,000 attacks each side, about a
second on Adult) so a slider move never waits for it; a fragment polls it
and draws it when it is there.  AppTest runs no fragment timers, so :func:`mode` lets the page tests
choose: ``WORKBENCH_RISK=inline`` computes it in the run, ``off`` (the
suite's default, set in ``tests/conftest.py``: eleven measurements on every
Home run would cost each page test seconds of CPU) leaves the figure out
and says so on the page.
"""

from __future__ import annotations

import os

from typing import Any, Mapping

import streamlit as st

from core import api
from pages.ui import cached, lazy, state
from pages.ui.fmt import md
from pages.ui.layout import slot


def block(args: tuple, verdict=None) -> dict[str, Any]:
    """The manifest's risk block of ``args`` (``(data, key, mechanism, params, seed)``), computed if need be."""
    return api.beside_verdict(OFF if mode() == "off" else cached.risk(*args), verdict)


def short(b: Mapping[str, Any] | None) -> str:
    """``0.165 [0.128-0.203]``: a table cell (``…`` while measuring, ``not measured`` with no figure)."""
    if b is None:
        return "…"
    if not b.get("measured"):
        return "not measured"
    low, high = b["interval"]
    return f"{b['risk']:.3f} [{low:.3f}-{high:.3f}]"


def singling_short(b: Mapping[str, Any] | None) -> str:
    """The singling-out figure as a table cell: ``0.998 [0.995-1.000]``, ``not applicable (...)`` or ``…``."""
    if b is None:
        return "…"
    so = b.get("singling_out") if b.get("measured") else None
    if not so:
        return "not measured"
    if not so.get("applicable"):
        return so.get("why") or "not applicable"
    low, high = so["interval"]
    return f"{so['risk']:.3f} [{low:.3f}-{high:.3f}]"


#: seconds between the runs of the fragments that poll what the Sanitize page measures behind it (the risk and a
#: count in people here, the nearest-setting search on the page): what came in is drawn at most this long after
POLL_SECONDS = 0.3

#: the key of the Sanitize page's "Manifest as JSON" box (:mod:`pages.ui.lazy`), which shows the risk block
MANIFEST_BOX = "w_open_manifest"

#: the block drawn when the measurement is turned off (``WORKBENCH_RISK=off``): said, never a silent gap
OFF = {"measured": False, "why": "The risk measurement is turned off on this server (WORKBENCH_RISK=off)."}


def mode() -> str:
    """``background`` (the default: behind the page), ``inline`` (in the run) or ``off``."""
    value = os.environ.get("WORKBENCH_RISK", "background").strip().lower()
    return value if value in ("inline", "off") else "background"


def ready(args: tuple, func=None, after=None) -> dict[str, Any] | None:
    """The risk block (or ``func``'s result, e.g. :func:`cached.people`) when cached; started behind the page
    otherwise (see :func:`mode`).

    On a table above the measurement's size limit the result is the one
    sentence saying so, known without reading the table: it is given at
    once.  Behind the page it cost a fragment and a second run of the whole
    page to show that sentence (census 5M: half a second to a second a
    slider move).  ``after``: a computation behind the page (a Future) to
    wait for before starting (:func:`cached.in_background`).
    """
    func = func or cached.risk
    how = mode()
    if how == "off":
        return OFF
    if how == "inline" or func.is_cached(*args) or _too_large(args[0], func):
        return func(*args)
    cached.in_background(func, *args, after=after)
    return None


def _too_large(data, func) -> bool:
    """Whether ``func`` (:func:`cached.risk` or :func:`cached.people`) only says the table is too large for it."""
    from core.intervals import MAX_ROWS
    from core.risk import RISK_ROWS

    limit = RISK_ROWS if func is cached.risk else MAX_ROWS if func is cached.people else None
    return limit is not None and int(data.n) > limit


def draw(b: Mapping[str, Any], verdict=None) -> None:
    """The risk block as the page shows it: the sentence, and the verdict beside it when they disagree."""
    b = api.beside_verdict(b, verdict)
    if not b.get("measured"):
        st.caption(f"**Measured risk:** not measured. {md(b.get('why', ''))}")  # said, not a failure
        return
    low, high = b["interval"]
    left, right = st.columns(2)
    # the point figure in the metric, its interval under it: "0.044 [0.011-0.078]" in a metric's large type was
    # cut at 1,024 px ("0.044 [0.011-0.0…")
    left.metric("Added risk", f"{b['risk']:.3f}", help="What the release teaches an attacker about the "
                "people in it beyond what it teaches about people not in it, as a share of the most it could "
                f"(0: nothing; 1: everything). 95% interval {low:.3f} to {high:.3f}, from {b['attacks']:,} attacks "
                "on each side (docs/risk.md).")
    left.caption(f"95% interval {low:.3f} to {high:.3f}")
    so = b.get("singling_out")
    if so is not None:
        applies = bool(so.get("applicable"))
        right.metric("Singling out", f"{so['risk']:.3f}" if applies else "not applicable",
                     help="How often a combination of QI values read off the published rows isolates exactly one "
                     "person of the table, beyond how often it isolates one person not in it (anonymeter's singling "
                     "out; 'not applicable' where the release publishes no row per person). Shown beside the added "
                     "risk, not part of it: see docs/risk.md.")
        if applies:
            s_low, s_high = so["interval"]
            right.caption(f"95% interval {s_low:.3f} to {s_high:.3f}")
    st.markdown(md(b["sentence"]))
    beside = b.get("beside_verdict")
    if beside:
        agrees = "agrees" in beside
        (st.caption if agrees else st.warning)(md(beside))


def people_line(p: Mapping[str, Any] | None) -> None:
    """A count's 95% interval in people, as one line (or why it is not shown)."""
    if p is None:
        st.caption("Measuring how far a published count lies from the true one…")
    elif p.get("measured") is False:
        st.caption(f"A count in people: not measured. {md(p.get('why', ''))}")
    else:
        text = p["sentence"]
        st.markdown(f"**A count in people:** {md(text[0].upper() + text[1:])}; method: {md(p['method'])}.")


def section(args: tuple, verdict=None, after=None) -> None:
    """'Its measured risk' and a count in people: drawn at once when cached, else polled from behind the page.

    The poll draws what came in; once both are in, it ends itself (:func:`state.stop_polling`) and the
    page settles as it is, without a second run of the whole page.  ``after``: the page's search behind
    it (a Future), which both measurements wait for (:func:`ready`).
    """
    st.subheader("Its measured risk")
    with slot():  # the measured risk, or its poll: one place on the page either way
        _section_body(args, verdict, after)


def _section_body(args: tuple, verdict, after=None) -> None:
    now, people = ready(args, after=after), ready(args, cached.people, after=after)
    if now is not None and people is not None:
        _drawn(now, people, verdict)
        return

    @st.fragment(run_every=POLL_SECONDS)
    def _poll() -> None:
        # ready() again, not only the cache: a measurement cancelled meanwhile (nobody asked for it any more,
        # cached.release_background) is started again rather than waited for
        now, people = ready(args, after=after), ready(args, cached.people, after=after)
        _drawn(now, people, verdict)
        if now is not None and people is not None:
            if lazy.is_open(MANIFEST_BOX):
                state.rerun_page()  # the open manifest below says the block is measured: drawn again, with it
            state.stop_polling()  # both measured and drawn: the page settles as it is

    _poll()


def _drawn(now: Mapping[str, Any] | None, people: Mapping[str, Any] | None, verdict) -> None:
    """The risk block (or that it is being measured) and the count in people (or that it is being measured)."""
    if now is not None:
        draw(now, verdict)
    else:
        st.caption("Measuring the risk: attacking a release of 80% of the table and 20% held out…")
    people_line(people)
