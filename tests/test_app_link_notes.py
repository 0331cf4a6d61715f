"""A link's ignored values stay said until the steward acts, not for the second before the risk arrives.

In chromium, a link with a bad seed showed "Ignored from the link: ..." on
its first run only; the page's own rerun when the risk measured behind it
came in (a second later) drew the page without it.  The page's own reruns
(:func:`pages.ui.state.rerun_page`) now keep the notes; the next run the
steward starts drops them.  AppTest runs no fragment, so the page's own
rerun is marked here as :func:`rerun_page` marks it.
"""

from __future__ import annotations

import pytest

from conftest import app, no_exception, places

SANITIZE = "pages/1_Sanitize.py"
IGNORED = "Ignored from the link: the seed must be a whole number"


def _said(at) -> bool:
    return any(IGNORED in w.value for w in at.warning)


@pytest.mark.slow
def test_the_page_s_own_reruns_keep_the_link_s_notes_the_steward_s_next_run_drops_them():
    at = app(SANITIZE, {"data": "adult", "sa": "occupation", "mech": "splu", "seed": "abc"})
    no_exception(at)
    assert _said(at)
    for _ in range(2):  # the risk, then the nearest setting, came in behind the page
        at.session_state["wb_auto_rerun"] = True
        at.run()
        no_exception(at)
        assert _said(at)
    before = places(at)
    at.run()  # the steward's own action
    no_exception(at)
    assert not _said(at)
    assert places(at) == before  # the notes gone, the page below them keeps its place (pages.ui.layout.slot)
    at.session_state["wb_auto_rerun"] = True  # a later measurement does not bring them back
    at.run()
    assert not _said(at)
