"""Page frame: page config, state initialisation, sidebar status, empty states."""

from __future__ import annotations

import streamlit as st

from core.mechanisms import MECHANISMS

from . import cached, state
from .data import TableProblem, current_dataset, link_column_notes, table_label
from .fmt import md
from .params import summary

APP_NAME = "Privacy-utility workbench"
#: every page of the app in sidebar order: (file, title, icon); app.py hands this list to st.navigation
PAGES = (
    ("pages/0_Home.py", "Home", "🛡️"),
    ("pages/1_Sanitize.py", "Sanitize", "🧪"),
    ("pages/2_Bounds.py", "Bounds", "📈"),
    ("pages/3_Query_error.py", "Query error", "🎯"),
    ("pages/4_Attacks.py", "Attacks", "🕵️"),
    ("pages/5_Trade-offs.py", "Trade-offs", "⚖️"),
    ("pages/6_Guided_tour.py", "Guided tour", "🧭"),
    ("pages/7_Compare.py", "Compare", "📌"),
    ("pages/8_Papers.py", "Papers", "📄"),
)
HOME = PAGES[0][0]

#: the Attacks page's tab labels (issue 23 §4: five long titles did not fit one strip, the last was cut and scrolled);
#: each tab starts with its full title.  A view not named here is labelled by its title up to " (".
TAB_LABELS = {
    "Micro-group reconstruction (seed 001)": "Micro groups",
    "Reconstruction from Laplace answers (seed 001 §6.3)": "Laplace answers",
    "Differential inference and corruption (seed 003)": "Differential inference",
    "Negative association against fake values (seed 003 §6.2)": "Fake values",
    "Possible worlds of one person (seed 004)": "Possible worlds",
}


def tab_label(title: str) -> str:
    """The short label of an attack view's tab (:data:`TAB_LABELS`); its full title is the tab's first line."""
    return TAB_LABELS.get(title) or title.split(" (")[0]


def _leave_pages_folder_mode() -> None:
    """Run every page through app.py's ``st.navigation``, also on a server's very first request.

    Streamlit decides once per process whether an app "uses the pages
    folder" (classic discovery): true when ``pages/`` exists, until some run
    of app.py calls ``st.navigation``.  When the first request a fresh server
    gets is a page URL (``/Sanitize``, a shared link), Streamlit runs that
    page file directly in folder mode, never runs app.py, and every session
    then sees the folder's sidebar ("app" above Home, no icons) until
    someone opens the root URL.  A page that finds itself in folder mode
    turns it off and reruns, which goes through app.py's navigation to the
    same page.  ``PagesManager.uses_pages_directory`` is Streamlit's own
    switch (``st.navigation`` sets it to False the same way).
    """
    from streamlit.runtime import Runtime
    from streamlit.runtime.pages_manager import PagesManager

    # AppTest runs on a mock Runtime and resets the switch before every run: it runs pages as before
    served = type(getattr(Runtime, "_instance", None)) is Runtime
    if PagesManager.uses_pages_directory and served:
        PagesManager.uses_pages_directory = False
        st.rerun()


def sign_in_required() -> bool:
    """True when the app's secrets have an ``[auth]`` section: then every page asks for sign-in first.

    Streamlit's own OpenID Connect support (``st.login``, ``st.user``,
    ``st.logout``; needs Authlib) does the sign-in; docs/deployment.md says
    how to configure it.  Without secrets, or without ``[auth]`` in them, the
    app runs as it always did, for anyone who reaches it.
    """
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all (StreamlitSecretNotFoundError), or one that does not parse
        return False


def signed_in_name() -> str:
    """Who is signed in (the provider's ``name``, else its ``email``, else its subject); "" without sign-in."""
    if not sign_in_required() or not st.user.is_logged_in:
        return ""
    return str(st.user.get("name") or st.user.get("email") or st.user.get("sub") or "")


def sign_in_page() -> None:
    """The only page a visitor sees before signing in (any address shows it)."""
    focus_style()
    st.title(APP_NAME)
    st.markdown("This workbench is run by your office and shows its tables only to people who have signed in.")
    st.button("Sign in", type="primary", on_click=st.login, icon=":material/login:")


def signed_in_bar() -> None:
    """In the sidebar: who is signed in, and a button to sign out (nothing without sign-in)."""
    name = signed_in_name()
    if name:
        with st.sidebar:
            st.caption(f"Signed in as **{md(name)}**")
            st.button("Sign out", key="w_sign_out", on_click=st.logout, icon=":material/logout:")


#: a visible focus ring on whatever the keyboard reaches (WCAG 2.2, 2.4.7 "Focus Visible"): Streamlit's own
#: sidebar page links showed none (tests/test_browser_a11y.py checks every Tab stop); the palette's blue at
#: 3 px is 5.2:1 against white
FOCUS_CSS = ("<style>*:focus-visible{outline:3px solid #0072B2 !important;outline-offset:2px !important}"
             "[data-testid='stSidebarNav'] a:focus-visible{outline-offset:-3px !important}</style>")


def focus_style() -> None:
    """Inject :data:`FOCUS_CSS` (an ``st.html`` of a style only takes no room on the page)."""
    st.html(FOCUS_CSS)


#: the link's notes (:data:`state.URL_NOTES`) have been shown: the next run the steward starts drops them
NOTES_SHOWN = "wb_url_notes_shown"


def slot():
    """A container that takes one place on the page, however many elements are drawn in it: ``with slot(): ...``.

    Streamlit's browser client pairs each element of a rerun with the
    previous run's element at the same position in the same container.  When
    a section draws more or fewer elements than it did in the previous run (a
    message, a note, a fragment waiting for a result in place of the
    result), every element after it moves to another position, and the
    browser builds each of them anew instead of updating it.  On Sanitize a
    slider move rebuilt both previews and the chart that way (the risk
    section's poll in place of the measured risk): chromium took 0.4-0.5 s
    for the move, 0.24-0.31 s when nothing moved.  A section whose number of
    elements changes from run to run is drawn in a slot.
    """
    return st.container()


def page_setup(title: str, icon: str) -> None:
    """``st.set_page_config`` (wide), shared state, and notes about ignored link values."""
    _leave_pages_folder_mode()
    if sign_in_required() and not st.user.is_logged_in:  # a page never runs for a visitor not signed in
        st.stop()
    st.set_page_config(page_title=f"{title} · {APP_NAME}", page_icon=icon, layout="wide")
    focus_style()
    cached.session_guard()  # the session's uploads leave memory when it ends
    cached.leave_other_pages()  # what the session started behind the page it left no longer runs
    state.init()
    ss = st.session_state
    # the link's ignored values stay said until the steward acts: a run the page starts itself (the risk measured
    # behind it came in, :func:`state.rerun_page`) keeps them; they used to vanish with it, a second after the page
    # opened, before anybody could read them
    auto = ss.pop(state.AUTO_RERUN, False)
    if ss.get(NOTES_SHOWN) and not auto:
        ss[state.URL_NOTES] = []  # said in the run before; this run is the steward's
        ss[NOTES_SHOWN] = False
    ss[state.URL_NOTES] = [*(ss.get(state.URL_NOTES) or []), *link_column_notes()]
    with slot():  # said until the steward acts, then gone: the page below keeps its place (see slot)
        for note in ss[state.URL_NOTES]:
            st.warning(md(note))
    if ss[state.URL_NOTES]:
        ss[NOTES_SHOWN] = True


def need_table(message: str, failure: bool = False) -> None:
    """Empty state: say what to do and link to the Home page (a table that cannot be opened: a warning)."""
    (st.warning if failure else st.info)(md(message))
    st.page_link(HOME, label="Go to the Home page to choose a table", icon=":material/home:")


def dataset_or_empty_state():
    """The current dataset, or None after drawing the empty state."""
    try:
        return current_dataset()
    except TableProblem as exc:
        need_table(str(exc), exc.failure)
        return None


def sidebar_status() -> None:
    """A short status of the current table, columns, mechanism and seed."""
    ss = st.session_state
    with st.sidebar:
        st.markdown("**Current choices**")
        try:
            data = current_dataset()
        except TableProblem:
            data = None
        lines = [f"Table: {md(table_label())}"]
        if data is not None:
            lines.append(f"Records: {data.n:,} · SA: {md(data.sa)} ({data.m:,} values)")
            qi = ", ".join(md(c) for c in data.qi[:6]) + (" …" if len(data.qi) > 6 else "")
            lines.append(f"QIs ({len(data.qi)}): {qi}")
            if data.bands:
                lines.append("Banded: " + "; ".join(md(f"{b.column} ({b.describe()})") for b in data.bands))
        mech = MECHANISMS.get(ss.get(state.MECH))
        if mech is not None:
            lines.append(f"Mechanism: {mech.title}")
            lines.append(f"Parameters: {md(summary(mech.params, state.mech_params(mech.name)))}")
        lines.append(f"Seed: {int(ss.get(state.SEED, state.DEFAULT_SEED))}")
        st.caption("  \n".join(lines))
        if ss.get(state.SOURCE) == "upload":
            st.caption("The link in the address bar names the uploaded table by its content hash only: "
                       "opened elsewhere or reloaded, it asks for the same file again.")
        else:
            st.caption("The address bar holds these choices: copy the link to share them.")
    from .pins import sidebar_undo

    sidebar_undo()
