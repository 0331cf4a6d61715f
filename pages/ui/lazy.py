"""Expanders whose contents are drawn only while they are open (issue 27).

Every element a page draws is drawn again by the browser after each rerun,
and a closed expander's contents are drawn too.  On the Sanitize page a
slider move redrew the mechanism's own view (two to four figures and
tables), the manifest as JSON, each chart's table and the history, all
closed by default: in chromium the view alone cost more than the rest of
the page (RP, bucketization and PriView 0.80-0.84 s a move, 0.38-0.41 s
without).  An expander made here reruns the page when it is opened or
closed, and its body is computed and sent only while it is open.

Which expanders the steward opened is kept in the session (:data:`OPENED`),
not only in the widget: Streamlit names an expander by its label too, and
these labels change with what they hold ("History: 3 settings tried",
a chart's summary, the mechanism's name), which would close the box at
every move.  Kept here, a box stays open through slider moves, mechanisms
and pages, and costs a move only then.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import streamlit as st

#: session key: the set of expander keys the steward has opened
OPENED = "wb_opened"


def _remember(key: str) -> None:
    """The expander ``key`` was opened or closed (its widget value is in the session state)."""
    opened = set(st.session_state.get(OPENED, ()))
    (opened.add if st.session_state.get(key) else opened.discard)(key)
    st.session_state[OPENED] = opened


def is_open(key: str) -> bool:
    """Whether the steward left the expander ``key`` open."""
    return key in st.session_state.get(OPENED, ())


@contextmanager
def expander(label: str, *, key: str) -> Iterator[bool]:
    """``with expander(label, key=k) as open_: if open_: ...``: draw the body only when ``open_``.

    Inside the ``with`` block, elements go into the expander.
    """
    box = st.expander(label, expanded=is_open(key), key=key, on_change=_remember, args=(key,))
    with box:
        yield bool(box.open)
