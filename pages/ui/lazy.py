"""Expanders whose contents are drawn only while they are open (issue 27).

Every element a page draws is drawn again by the browser after each rerun,
and a closed expander's contents are drawn too.  On the Sanitize page a
slider move redrew the mechanism's own view (two to four figures and
tables), the manifest as JSON, each chart's table and the history, all
closed by default: in chromium the view alone cost more than the rest of
the page (RP, bucketization and PriView 0.80-0.84 s a move, 0.38-0.41 s
without).  An expander made here reruns the page when it is opened or
closed (Streamlit's ``on_change="rerun"``) and its body is computed and
sent only while it is open; its key keeps it open across reruns, so a
steward who reads a view keeps it through slider moves and pays for it
only then.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import streamlit as st


@contextmanager
def expander(label: str, *, key: str) -> Iterator[bool]:
    """``with expander(label, key=k) as open_: if open_: ...``: draw the body only when ``open_``.

    Inside the ``with`` block, elements go into the expander.
    """
    box = st.expander(label, key=key, on_change="rerun")
    with box:
        yield bool(box.open)
