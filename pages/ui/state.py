"""Shared choices in plain ``st.session_state`` keys, mirrored into the URL.

A widget's own key is dropped when its page is not rendered, so every
widget here is *seeded* from a plain key before it is drawn and copies its
value back after (:func:`seed_widget`).  The plain keys are the truth:

=====================  ==================================================
key                    holds
=====================  ==================================================
``wb_source``          ``"sample"``, ``"upload"`` or ``"folder"``
``wb_folder``          data-folder table: ``{"name", "rows", "seed"}``
``wb_sample``          bundled sample name (``"adult"``, ``"census"`` ...)
``wb_size``            ``{sample name: rows}`` for sized samples
``wb_upload``          ``{"name", "file_id", "table"}``: the parsed upload,
                       kept in this session's memory only
``wb_sa``, ``wb_qi``   sensitive column, tuple of QI columns
``wb_bands``           ``{column: spec}``: banded numeric QIs, each spec a
                       plain dict (:meth:`core.data.banding.Banding.spec`,
                       e.g. ``{"method": "width", "width": 10}``); applied
                       to the chosen QIs that are numeric columns
``wb_mech``            current mechanism name
``wb_params``          ``{mechanism: {param: value}}`` (typed values;
                       ``None`` = derive automatically)
``wb_seed``            release seed (int)
``wb_bound``           current bound name
``wb_bound_params``    ``{bound: {param: value}}``
``wb_query``           Query error page settings: ``kind``,
                       ``settings`` (``{kind: {param: value}}``),
                       ``compare`` (None = the chosen mechanism and its
                       papers' baselines), ``match`` (baselines' parameters
                       matched to the chosen mechanism), sweep and scatter
                       choices
``wb_tradeoff``        Trade-offs page: ``settings`` (declared in
                       ``core.recommend.SETTINGS``), ``mechanisms``
``wb_suggested``       ``{"for": sample name, "applied": {mechanism:
                       {param: value}}}``: the paper's parameters a toy
                       table applied (:func:`follow_sample`)
``wb_pins``            tuple of :class:`core.session.Pin` (at most 6)
``wb_history``         tuple of :class:`core.session.Setting`, the last 50
                       settings tried on the Sanitize page
``wb_decision``        :class:`core.session.Decision` or None
``wb_want_upload``     ``{"hash", "name"}``: the upload a link or reload
                       named that this session does not hold (Home asks
                       for the file and accepts only that content hash)
``wb_table_records``   ``{table key: {"pins", "decision", "draft"}}``: the
                       pins and decision record of the tables used before
                       in this session (:func:`bind_table`)
``wb_bound_table``     the table key (:attr:`core.table.Dataset.key`:
                       content hash, SA, QIs, bands) the current pins and
                       decision belong to
``wb_drawn``           ``{widget key: value}`` drawn by this run's bound
                       widgets (:func:`bind_widget`); ``wb_drawn_before``
                       the previous run's
=====================  ==================================================

One value for a setting (issue 23 §1): the current
:class:`core.session.Setting` is ``wb_mech`` + ``wb_params[wb_mech]`` +
``wb_seed`` (:func:`current_setting`); the Sanitize widgets are drawn from
it by :func:`bind_widget` (a widget not drawn in the previous run, or one
whose stored value changed outside it, is *assigned* the stored value, so
the browser is sent it) and write back to it; pins, the manifest, the link,
the history and the session file are all made from it.

URL format (``st.query_params``), written by every page from the plain keys
and read once, on a session's first run::

    ?data=adult&sa=occupation&qi=age,sex&band.age=10&mech=uniform&p=auto&rho1=1/13&rho2=1/6&seed=1
     &bound=splu-utility&bound.gamma=10&wl=seed000&wl.queries=5000&wl.max_attrs=3&wl.seed=0&cmp=uniform,dbr
     &cmp.match=false&pins=[{"name":"five","mechanism":"splu","params":{"gamma":"5"},"seed":1}]

The pins travel in the link (``pins=``, :func:`core.session.pins_text`),
so a reload keeps them; the decision record and the history do not (a
rationale can be long): the saved session keeps those.

Parameter values use :func:`pages.ui.fmt.param_text` (fractions such as
``1/13`` and ``ln(3)`` stay exact and readable) and are parsed back with
:meth:`core.params.Param.parse`.  An uploaded table cannot be in a URL: the
link then names it by its content hash (``data=upload:<hash>``): a reload or
a link opened elsewhere asks for the same file again on the Home page and
accepts only a file with that hash (:data:`WANT_UPLOAD`).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import streamlit as st

from core import samples
from core.bounds import BOUNDS
from core.errors import WorkbenchError, clip
from core.evaluate import WORKLOADS
from core.mechanisms import MECHANISMS

from core.session import (Pin, Session, SessionError, Setting, TableRef, add_pin, moved, pins_from_text, pins_text,
                          record, undo)

from .fmt import param_text


def widget_key(ns: str, p) -> str:
    """The key of parameter ``p``'s widget in namespace ``ns`` (``w_m_splu_gamma``)."""
    return f"w_{ns}_{p.name}"


def auto_key(ns: str, p) -> str:
    """The key of an optional parameter's "derive automatically" checkbox."""
    return f"w_{ns}_{p.name}__auto"

SOURCE = "wb_source"
#: the data-folder table in use: {"name", "rows" (of the sample), "seed" (of the sample)}
FOLDER = "wb_folder"
SAMPLE = "wb_sample"
SIZE = "wb_size"
UPLOAD = "wb_upload"
SA = "wb_sa"
QI = "wb_qi"
BANDS = "wb_bands"
MECH = "wb_mech"
PARAMS = "wb_params"
SEED = "wb_seed"
BOUND = "wb_bound"
BOUND_PARAMS = "wb_bound_params"
QUERY = "wb_query"
TRADEOFF = "wb_tradeoff"
URL_RESTORED = "wb_url_restored"
URL_NOTES = "wb_url_notes"
SUGGESTED = "wb_suggested"
PINS = "wb_pins"
HISTORY = "wb_history"
DECISION = "wb_decision"
WANT_UPLOAD = "wb_want_upload"
#: the pins and decision of the other tables used in this session: {table key: {"pins", "decision", "draft"}}
TABLE_RECORDS = "wb_table_records"
#: the table key the current pins and decision belong to (None: not yet bound, e.g. just restored from a link)
BOUND_TABLE = "wb_bound_table"
#: widget values drawn by :func:`bind_widget` in this run and in the previous one
DRAWN = "wb_drawn"
DRAWN_BEFORE = "wb_drawn_before"
#: set by a callback that changes the setting as one action (a fix, a restore, an undo, make current)
ACTION = "wb_action"
#: set by :func:`rerun_page`: the next run is the page's own, not the steward's (a measurement came in)
AUTO_RERUN = "wb_auto_rerun"
#: the parameter whose run of moves the newest history entry holds (None: the entry is closed)
HISTORY_TAIL = "wb_history_tail"
#: ``data=upload:<content hash>`` in a link names an uploaded table
UPLOAD_PREFIX = "upload:"
#: ``data=folder:<name>`` in a link names a table of the server's data folder (with ``folder.rows`` and
#: ``folder.seed``, its sample's size and seed)
FOLDER_PREFIX = "folder:"
#: the SA/QI columns a link named, checked against the table by :func:`pages.ui.data.link_column_notes`
LINK_COLUMNS = "wb_link_columns"

DEFAULT_SAMPLE = "adult"
DEFAULT_SEED = 1
#: seeds the Sanitize page accepts (``core.mechanisms.fresh_seed`` draws 31 bits)
MAX_SEED = 2**31 - 1

#: query-parameter names used for the shared state (mechanism parameters use their own names)
RESERVED = {"data", "sa", "qi", "mech", "seed", "bound", "wl", "cmp", "to", "pins"}
#: query parameters owned by one page (the Guided tour's ``step``) or by Streamlit itself (``embed``)
OTHER_KEYS = {"step", "embed", "embed_options"}


def _first_mechanism() -> str:
    return next(iter(MECHANISMS), "")


def init() -> None:
    """Fill missing plain keys with defaults; on a session's first run, restore from the URL."""
    forget_earlier_fragments()
    ss = st.session_state
    ss.setdefault(SOURCE, "sample")
    ss.setdefault(SAMPLE, DEFAULT_SAMPLE if samples.is_sample(DEFAULT_SAMPLE) else samples.list_samples()[0].name)
    ss.setdefault(SIZE, {})
    ss.setdefault(UPLOAD, None)
    ss.setdefault(SA, None)
    ss.setdefault(QI, None)
    ss.setdefault(BANDS, {})
    ss.setdefault(MECH, _first_mechanism())
    ss.setdefault(PARAMS, {})
    ss.setdefault(SEED, DEFAULT_SEED)
    ss.setdefault(BOUND, next(iter(BOUNDS), ""))
    ss.setdefault(BOUND_PARAMS, {})
    ss.setdefault(QUERY, {})
    ss.setdefault(TRADEOFF, {})
    ss.setdefault(URL_NOTES, [])
    ss.setdefault(PINS, ())
    ss.setdefault(HISTORY, ())
    ss.setdefault(DECISION, None)
    if ss[MECH] not in MECHANISMS:
        ss[MECH] = _first_mechanism()
    if ss[BOUND] not in BOUNDS:
        ss[BOUND] = next(iter(BOUNDS), "")
    if not ss.get(URL_RESTORED):
        ss[URL_RESTORED] = True
        ss[URL_NOTES] = clip_echoes(restore(dict(st.query_params)), dict(st.query_params))
    follow_sample()
    # a new run: what the bound widgets drew in the run before is what the browser shows now
    ss[DRAWN_BEFORE] = ss.get(DRAWN) or {}
    ss[DRAWN] = {}


# ---------------------------------------------------------------- widgets
def seed_widget(key: str, value: Any, valid: Callable[[Any], bool] | None = None) -> Any:
    """Give widget ``key`` the stored ``value`` unless it already holds a valid one.

    Call before drawing the widget (without ``value=``), then copy the
    widget's value back into the plain key.

    The value is also given again when the widget was not drawn in the run
    before and still holds it.  A run that ends without drawing a widget
    (``st.stop()`` above it) makes the browser drop the widget's state while
    Streamlit's server keeps it; drawn again without a value, the widget
    shows its empty default and sends it back with the next rerun (issue 24:
    Trade-offs lost its mechanism list after a click on the map).  A value
    the user has just changed differs from the stored one and is kept.

    Returns the value the widget is to show: pass it as the widget's
    default too (``value=``, ``index=``, ``default=``; see :func:`bind_widget`).
    """
    ss = st.session_state
    if (key not in ss or (valid is not None and not valid(ss[key]))
            or (key not in (ss.get(DRAWN_BEFORE) or {}) and _same(ss[key], value))):
        ss[key] = value
    return drawn(key, ss[key])


def bind_widget(key: str, value: Any, valid: Callable[[Any], bool] | None = None) -> Any:
    """Draw widget ``key`` from the stored ``value`` unless the user has just moved it (then it wins).

    The stored value is the truth (issue 23 §1).  The widget's own value is
    kept only when it was drawn in the previous run and differs from what was
    drawn then (the user moved it: the caller copies it back into the store).
    Otherwise, when the widget was not drawn in the previous run (another
    mechanism was shown, another page), or the store changed outside it (a
    fix, an undo, a restored or opened session), the value is *assigned*: a
    value assigned before the widget is drawn is sent to the browser, so the
    browser never shows a leftover or default value while the release uses
    the stored one.  Call before drawing, then :func:`drawn` with the
    widget's value.

    Returns the value the widget is to show, which the caller passes as the
    widget's default as well (``value=``, ``index=`` of it, ``default=``).
    The browser can drop a widget's state while the server still counts the
    widget as drawn: right after a page opens, a fragment's timed rerun that
    races the first run's drawing left the seed box and the "derive
    automatically" boxes without their state in chromium (3 to 7 of 12-23
    fresh loads of a link).  Such a widget shows and sends back its
    *default*, which this function can only read as a move: the link's
    seed became 0.  With the shown value as the default, a widget drawn
    without its state shows and sends the stored value, and nothing is lost.
    """
    ss = st.session_state
    before = ss.get(DRAWN_BEFORE) or {}
    held = ss[key] if key in ss else None
    ok = key in ss and (valid is None or valid(held))
    if ok and key in before and not _same(held, before[key]):
        return held  # moved by the user in this rerun
    if ok and key in before and _same(held, value):
        return held  # already showing the stored value
    ss[key] = value
    return value


def index_of(options, value: Any) -> int:
    """Where ``value`` is among ``options``, as a choice widget's ``index=``; 0 when it is not one of them.

    0 is what Streamlit draws a choice widget at without a valid state: a
    stored value the options no longer hold (a link's data-folder source on
    a server without a data folder) is drawn as it always was, and said
    where it is read (the Home page's warning), never an error.
    """
    options = list(options)
    return options.index(value) if value in options else 0


def rerun_page() -> None:
    """``st.rerun()`` for a run the page starts itself (what it measured behind the page came in).

    The run is marked (:data:`AUTO_RERUN`) so that what the page said to the
    steward, such as the values a link had that were ignored, is said again
    in it rather than dropped as after one of the steward's own actions
    (:func:`pages.ui.layout.page_setup`).
    """
    st.session_state[AUTO_RERUN] = True
    st.rerun()


#: the namespace of the last run of a page that went to its end, in this session (:func:`end_of_run`)
LAST_RUN = "wb_last_run_namespace"


def end_of_run(namespace: dict) -> None:
    """At the end of a page's run: empty the namespace the session's previous completed page run left behind.

    Streamlit keeps references to the namespaces of runs that have ended:
    through the callbacks and format functions of widgets it still lists
    (the seed's ``on_change``, the fix button's, a selectbox's
    ``format_func``), functions written in a page script hold that run's
    globals, the table and the release among them.  On census 5M a session
    kept an earlier setting's release this way beside the one on the page
    (bucketization's: 160 MB; issue 27 asks 700 MB for one session).  Once a run has gone to
    its end it has drawn its own widgets and fragments, so nothing on the
    page can call into the earlier run any more; its namespace is emptied
    and what only it held is freed.  A run stopped early (``st.stop``, a
    rerun) does not call this: the earlier namespace stays until one ends.
    Choice: emptied, not left for Streamlit to drop, since which of its
    registries keeps a stale widget's callback, and for how long, is not
    part of its API.
    """
    earlier = st.session_state.get(LAST_RUN)
    if earlier is not None and earlier is not namespace:
        earlier.clear()
    st.session_state[LAST_RUN] = namespace


def forget_earlier_fragments() -> None:
    """At the start of a page's full run: forget the fragments earlier runs of the session drew.

    Streamlit (1.67) forgets a run's fragments only when a later run of the
    whole page goes to its end (``FragmentStorage.clear`` after the script).
    A run that ends in ``st.stop()`` (Home waiting for an upload, a page
    without a table) or is cut short by a rerun leaves them registered, and
    a polling fragment's timer request that reaches the server after such a
    run runs the old fragment: Streamlit first sends the fragment's block
    again at its old place on the page (``add_block`` at ``[0, 22]``), which
    that run has taken away.  The browser fails with "Bad delta path index
    22 (should be between [0, 11])" and shows a blank page; ``bench/load.py``
    met it as a session that clicked "Upload a file" while Home's verdict
    table was polling.  Forgotten here, such a request finds no fragment,
    which Streamlit skips without a word (a timer's request for a fragment
    no longer drawn is expected).  The fragments this run draws register
    after this call.  Uses the run context's ``fragment_storage``, which is
    not public API: where it is missing, nothing is done.
    """
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    storage = getattr(ctx, "fragment_storage", None)
    if storage is None or getattr(ctx, "current_fragment_id", None):
        return  # no Streamlit run (a plain import), or called from within a fragment's own run
    storage.clear()


def stop_polling() -> None:
    """End the timer of the polling fragment this is called from, without a run of the whole page.

    A fragment drawn with ``run_every`` is rerun by a timer in the browser
    until a run of the page (or of a fragment around it) no longer draws
    it.  A poll whose results are all in (the measured risk, the nearest
    setting) has drawn them and has nothing left to do; it used to end its
    timer with :func:`rerun_page`, a second run of the whole page after
    every slider move (0.2-0.3 s in chromium, and the page drawn again).
    This sends the browser the message Streamlit itself sends for a polling
    fragment that is no longer drawn (``stop_auto_rerun`` with the
    fragment's id), and the page is left as the poll drew it.

    Streamlit has no public call for this: where the running version does
    not expose the fragment's id (``ThreadState.fragment_id``, 1.6x; the
    run context's ``current_fragment_id`` before) or its message, it falls
    back to :func:`rerun_page`, the slower way to the same page.  Called
    while the page's run draws the fragment (its results came in just
    then), the message follows the one that started the timer.
    """
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    fragment = getattr(ctx, "current_fragment_id", None)
    if fragment is None:
        try:
            from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

            fragment = ThreadState.get().fragment_id
        except (ImportError, AttributeError):
            fragment = None
    if ctx is None or not fragment or "stop_auto_rerun" not in ForwardMsg.DESCRIPTOR.fields_by_name:
        rerun_page()
    msg = ForwardMsg()
    msg.stop_auto_rerun.fragment_ids.append(fragment)
    ctx.enqueue(msg)


def drawn(key: str, value: Any) -> Any:
    """Note what widget ``key`` shows after this run (see :func:`bind_widget`); returns ``value``."""
    st.session_state.setdefault(DRAWN, {})[key] = value
    return value


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - values that do not compare
        return False


def mech_params(name: str) -> dict[str, Any]:
    """Stored raw parameter values of a mechanism (missing = its default)."""
    return dict(st.session_state.get(PARAMS, {}).get(name, {}))


def set_mech_params(name: str, values: Mapping[str, Any]) -> None:
    st.session_state.setdefault(PARAMS, {})[name] = dict(values)


def bound_params(name: str) -> dict[str, Any]:
    return dict(st.session_state.get(BOUND_PARAMS, {}).get(name, {}))


def set_bound_params(name: str, values: Mapping[str, Any]) -> None:
    st.session_state.setdefault(BOUND_PARAMS, {})[name] = dict(values)


def current_sample():
    """The bundled :class:`core.samples.Sample` in use, or None for an upload."""
    ss = st.session_state
    return _sample(ss.get(SAMPLE) or DEFAULT_SAMPLE) if ss.get(SOURCE) == "sample" else None


def suggestion(mechanism: str):
    """The paper's parameters of ``mechanism`` for the current table (a toy table's), or None."""
    sample = current_sample()
    return sample.suggestion(mechanism) if sample is not None else None


def exact_values(mech, values: Mapping[str, Any]) -> str:
    """``ρ₁ = 1/3, ρ₂ = 2/3``: parameter values as the papers write them (unset ones left out)."""
    symbols = {p.name: p.symbol or p.name for p in mech.params}
    return ", ".join(f"{symbols.get(k, k)} = {param_text(v)}" for k, v in values.items() if v is not None)


def follow_sample() -> None:
    """Apply the parameters the chosen table's paper uses; take back those of the table before.

    A toy table declares them (:attr:`core.samples.Sample.suggested`, e.g.
    seed 002 Example 1's (rho1, rho2) = (1/3, 2/3)).  A suggested value is
    applied only where the user has not set the parameter (not stored, or
    at its declared default), and taken back when another table is chosen
    only where it still holds the suggested value, so a value the user
    moved is never overwritten.  Call after the table choice changes (the
    Home page, a link); it does nothing while the table stays the same.
    """
    ss = st.session_state
    sample = current_sample()
    name = sample.name if sample is not None else None
    memo = ss.get(SUGGESTED) or {"for": None, "applied": {}}
    if memo["for"] == name:
        return
    for mech, values in memo["applied"].items():
        stored = mech_params(mech)
        for key, value in values.items():
            if key in stored and stored[key] == value:
                del stored[key]  # back to the declared default
        set_mech_params(mech, stored)
    applied: dict[str, dict[str, Any]] = {}
    for sug in (sample.suggested if sample is not None else ()):
        mech = MECHANISMS.get(sug.mechanism)
        if mech is None:
            continue
        stored = mech_params(sug.mechanism)
        declared = {p.name: p for p in mech.params}
        for key, value in sug.values:
            if key in declared and (key not in stored or stored[key] == declared[key].default):
                stored[key] = value
                applied.setdefault(sug.mechanism, {})[key] = value
        set_mech_params(sug.mechanism, stored)
    ss[SUGGESTED] = {"for": name, "applied": applied}


def query_settings() -> dict[str, Any]:
    return st.session_state.setdefault(QUERY, {})


def sample_spec() -> str | None:
    """The bundled sample spec in use (``"census:500000"``), or None for an upload."""
    ss = st.session_state
    if ss.get(SOURCE) != "sample":
        return None
    name = ss.get(SAMPLE) or DEFAULT_SAMPLE
    sample = _sample(name)
    if sample is not None and sample.sized:
        size = ss.get(SIZE, {}).get(name, sample.default_size)
        return f"{name}:{int(size)}"
    return name


def _is_hash(text: str) -> bool:
    return len(text) == 16 and all(c in "0123456789abcdef" for c in text)


def _sample(name: str):
    return next((s for s in samples.list_samples() if s.name == name), None)


# ---------------------------------------------------------------- settings, pins, history
def current_setting() -> Setting:
    """The current mechanism, its stored parameters and the seed as a :class:`core.session.Setting`."""
    ss = st.session_state
    mech = ss.get(MECH)
    return Setting(mech, mech_params(mech), int(ss.get(SEED, DEFAULT_SEED)))


def apply_setting(setting: Setting) -> None:
    """Make ``setting`` current as one action (a fix, an undo, a restore, "make current").

    Safe in a callback: only the plain keys change; the widgets are drawn
    from them on the next run (:func:`bind_widget`), and the history
    records the change as one entry of its own (:func:`record_history`).
    """
    ss = st.session_state
    ss[MECH] = setting.mechanism
    set_mech_params(setting.mechanism, dict(setting.params))
    ss[SEED] = int(setting.seed)
    ss[ACTION] = True


def record_history() -> None:
    """Add the current setting to the history as one action (the last 50 kept).

    Consecutive moves of one parameter (each arrow-key press, each slider
    stop) are one action: the newest entry is replaced while the same
    parameter keeps moving, so undo goes back to before the run of moves.
    A mechanism switch, a seed change, another parameter, a fix, a restore,
    an undo or "make current" start an entry of their own.
    """
    ss = st.session_state
    history = tuple(ss.get(HISTORY) or ())
    now = current_setting()
    action = bool(ss.pop(ACTION, False))
    if history and history[-1].key() == now.key():
        if action:
            ss[HISTORY_TAIL] = None
        return
    param = moved(history[-1], now) if history else None
    extend = not action and param is not None and param == ss.get(HISTORY_TAIL)
    ss[HISTORY] = record(history, now, replace_last=extend)
    ss[HISTORY_TAIL] = None if action else param


def undo_setting() -> bool:
    """One action back in the history; False when there is nothing to undo."""
    ss = st.session_state
    history, back = undo(ss.get(HISTORY) or ())
    if back is None:
        return False
    ss[HISTORY] = history
    apply_setting(back)
    return True


def restore_setting(index: int) -> None:
    """Make history entry ``index`` current again (it becomes the newest entry)."""
    ss = st.session_state
    history = ss.get(HISTORY) or ()
    apply_setting(history[index])
    record_history()


def pins() -> tuple[Pin, ...]:
    return tuple(st.session_state.get(PINS) or ())


def pin_current(name: str) -> Pin:
    """Pin the current setting as ``name`` (:class:`core.session.SessionError` if the name is taken or too long)."""
    setting = current_setting()
    st.session_state[PINS] = add_pin(pins(), name, setting)
    return st.session_state[PINS][-1]


def unpin(name: str) -> None:
    """Drop a pin; a decision that chose it is dropped too (it would name a pin no longer there)."""
    ss = st.session_state
    ss[PINS] = tuple(p for p in pins() if p.name != name)
    if ss.get(DECISION) is not None and ss[DECISION].chosen == name:
        ss[DECISION] = None


def bind_table(key: str) -> None:
    """Keep each table's pins and decision apart (issue 23 §1); call whenever the current table is resolved.

    ``key`` names the table as the release sees it
    (:attr:`core.table.Dataset.key`: the content hash of the table as read,
    so its read options, and the SA, QIs and bands).  When it changes, the
    pins, the decision record and its draft of the table before are put
    aside and those of ``key`` (none for a table not used yet) become
    current; switching back brings the first table's back.  Pins restored
    from a link or an opened session (nothing bound yet) belong to the first
    table resolved.
    """
    ss = st.session_state
    bound = ss.get(BOUND_TABLE)
    if bound == key:
        return
    records = dict(ss.get(TABLE_RECORDS) or {})
    if bound is not None:
        records[bound] = {"pins": pins(), "decision": ss.get(DECISION), "draft": ss.get("wb_decision_draft")}
        mine = records.pop(key, None) or {"pins": (), "decision": None, "draft": None}
        ss[PINS] = tuple(mine["pins"])
        ss[DECISION] = mine["decision"]
        ss["wb_decision_draft"] = mine["draft"]
        ss.pop("wb_decision_report", None)  # a report of another table's record
        for k in ("w_decision_chosen", "w_decision_rationale", "w_decision_reviewers", "w_decision_date"):
            ss.pop(k, None)
    else:
        records.pop(key, None)  # what was restored wins over an older record of the same table
    ss[TABLE_RECORDS] = records
    ss[BOUND_TABLE] = key


def decision_for(setting: Setting) -> dict | None:
    """The decision record as JSON when ``setting`` is the chosen pin's (for its manifest and report), else None."""
    decision = st.session_state.get(DECISION)
    if decision is None:
        return None
    if decision.table and decision.table != st.session_state.get(BOUND_TABLE):
        return None  # recorded on another table (never shown as this one's)
    chosen = next((p for p in pins() if p.name == decision.chosen), None)
    if chosen is None or chosen.setting.key() != setting.key():
        return None
    return decision.to_json(pins())


def default_pin_name(setting: Setting | None = None) -> str:
    """``splu γ=5 seed 1``: a short, unique name for a new pin."""
    setting = setting or current_setting()
    mech = MECHANISMS.get(setting.mechanism)
    symbols = {p.name: (p.symbol or p.name) for p in mech.params} if mech else {}
    defaults = {p.name: p.default for p in mech.params} if mech else {}
    values = " ".join(f"{symbols.get(k, k)}={param_text(v)}" for k, v in setting.params.items()
                      if v is not None and v != defaults.get(k))  # the values moved from the defaults
    base = f"{setting.mechanism} {values}".strip()[:45] + f" seed {setting.seed}"
    taken = {p.name for p in pins()}
    name, i = base[:60], 2
    while name in taken:
        name = f"{base[:55]} ({i})"
        i += 1
    return name


# ---------------------------------------------------------------- session files
def session_now(table) -> Session:
    """Everything chosen in this session as a :class:`core.session.Session` on ``table`` (the current one)."""
    ss = st.session_state
    # a data-folder table is its seeded sample, named by content hash like an upload (no sample spec holds it)
    kind = "upload" if ss.get(SOURCE) in ("upload", "folder") else "sample"
    name = (table.name if ss.get(SOURCE) == "folder" else (ss.get(UPLOAD) or {}).get("name", table.name)) \
        if kind == "upload" else (sample_spec() or table.name)
    params = {m: dict(v) for m, v in (ss.get(PARAMS) or {}).items() if m in MECHANISMS}
    read = dict(table.read) if kind == "upload" and getattr(table, "read", None) else None  # reopened the same way
    notes = tuple(getattr(table, "notes", ()) or ()) if kind == "upload" else ()
    return Session(TableRef(kind, name, table.content_hash, len(table), read, notes=notes), ss.get(SA),
                   tuple(ss.get(QI) or ()),
                   current_setting(), params, pins(), tuple(ss.get(HISTORY) or ()), ss.get(DECISION),
                   {c: dict(spec) for c, spec in (ss.get(BANDS) or {}).items()})


def apply_session(session: Session, upload: dict | None = None) -> None:
    """Make an opened session current, all at once (call after every check passed, in a callback).

    ``upload`` is ``{"name", "file_id", "table"}`` for an uploaded table (the
    one embedded in the file, or the upload in use whose content hash
    matched).  Every widget that holds a choice is dropped so the next run
    draws it from the session.
    """
    ss = st.session_state
    if ss.get(BOUND_TABLE) is not None:  # the table in use keeps its own pins and decision for a switch back
        ss[TABLE_RECORDS] = {**(ss.get(TABLE_RECORDS) or {}), ss[BOUND_TABLE]: {
            "pins": pins(), "decision": ss.get(DECISION), "draft": ss.get("wb_decision_draft")}}
    if session.table.kind == "sample":
        name, _, size = session.table.name.partition(":")
        ss[SOURCE] = "sample"
        ss[SAMPLE] = name
        if size:
            ss[SIZE] = {**(ss.get(SIZE) or {}), name: int(size)}
    else:
        ss[SOURCE] = "upload"
        ss[UPLOAD] = upload
    ss[WANT_UPLOAD] = None
    ss[SUGGESTED] = {"for": current_sample().name if current_sample() else None, "applied": {}}
    ss[SA], ss[QI] = session.sensitive, tuple(session.qi)
    ss[BANDS] = {c: dict(spec) for c, spec in session.bands.items()}
    ss[PARAMS] = {m: dict(v) for m, v in session.params.items()}
    ss[PINS] = tuple(session.pins)
    ss[HISTORY] = tuple(session.history)
    ss[DECISION] = session.decision
    ss[BOUND_TABLE] = None  # the session's pins and decision belong to the table it opens
    ss.pop("wb_decision_draft", None)
    apply_setting(session.current)
    ss[HISTORY_TAIL] = None
    for key in list(ss):
        if isinstance(key, str) and (key.startswith(("w_m_", "w_decision_", "w_size_", "w_band_"))
                                     or key in {"w_source", "w_sample", "w_sa", "w_qi", "_w_cols_for",
                                                "w_history_pick", "wb_decision_draft"}):
            del ss[key]


# ---------------------------------------------------------------- URL
def _band_params(bands: Mapping[str, Any], qi) -> dict[str, str]:
    """``band.<column>`` = the ``--band`` spec (``10``, ``q5``, ``18,25,35``) of each banded QI."""
    from core.data.banding import Banding

    out = {}
    for column, spec in bands.items():
        if column in qi:
            try:
                out[f"band.{column}"] = Banding.from_spec(column, spec).text().partition("=")[2]
            except WorkbenchError:
                continue
    return out


def url_params() -> dict[str, str]:
    """The current shared state as query parameters (strings)."""
    ss = st.session_state
    out: dict[str, str] = {}
    spec = sample_spec()
    if spec is None and ss.get(SOURCE) == "upload":
        # an upload is named by its content hash only: a reload or link asks for the same file again
        up = ss.get(UPLOAD)
        wanted = ss.get(WANT_UPLOAD)
        chash = up["table"].content_hash if up else (wanted or {}).get("hash")
        if chash:
            spec = f"{UPLOAD_PREFIX}{chash}"
    folder = ss.get(FOLDER) or {}
    if spec is None and ss.get(SOURCE) == "folder" and folder.get("name"):
        # the server's file by its name in the data folder (a reload opens the same sample again)
        spec = f"{FOLDER_PREFIX}{folder['name']}"
        out["folder.rows"] = str(int(folder.get("rows") or 0))
        out["folder.seed"] = str(int(folder.get("seed") or 0))
    if spec is not None:
        out["data"] = spec
        if ss.get(SA):
            out["sa"] = str(ss[SA])
        if ss.get(QI):
            out["qi"] = ",".join(map(str, ss[QI]))
            out.update(_band_params(ss.get(BANDS) or {}, ss[QI]))
    mech = ss.get(MECH)
    if mech in MECHANISMS:
        out["mech"] = mech
        stored = mech_params(mech)
        for p in MECHANISMS[mech].params:
            if p.name in RESERVED or p.name not in stored:
                continue
            out[p.name] = param_text(stored[p.name])
    out["seed"] = str(int(ss.get(SEED, DEFAULT_SEED)))
    bound = ss.get(BOUND)
    if bound in BOUNDS and bound in ss.get(BOUND_PARAMS, {}):
        out["bound"] = bound
        for key, value in bound_params(bound).items():
            out[f"bound.{key}"] = param_text(value)
    q = ss.get(QUERY) or {}
    if q.get("kind") in WORKLOADS:
        out["wl"] = str(q["kind"])
        for key, value in (q.get("settings", {}).get(q["kind"]) or {}).items():
            out[f"wl.{key}"] = param_text(value)
    if q.get("compare") is not None:  # None: the chosen mechanism and its baselines (the page's default)
        out["cmp"] = ",".join(q["compare"])
    if q.get("match") is False:
        out["cmp.match"] = "false"
    t = ss.get(TRADEOFF) or {}
    for key, value in (t.get("settings") or {}).items():
        out[f"to.{key}"] = param_text(value)
    if t.get("mechanisms") is not None:
        out["to"] = ",".join(t["mechanisms"])
    if pins():  # a reload keeps the pins (the decision record and history are in the saved session only)
        out["pins"] = pins_text(pins())
    return out


def sync_url() -> None:
    """Write the shared state into ``st.query_params``, on every run.

    ``st.query_params`` is what the server last *sent*, not what the
    address bar shows: a query-string message sent in a run that ends in
    ``st.rerun()`` can fail to reach the address bar
    (streamlit/streamlit#7961, #5511), and a sync that compared with the
    server's copy would then never send it again, leaving the address bar
    one change behind until something else changed.  So the message is
    sent on every run: the browser applies a query string only when it
    differs from its address bar (no history entry for an equal one), so
    this costs one small message per run and heals a lost one on the next
    run.  (The reload-after-upload flake of tests/test_browser_decide.py
    was mostly the test reading Playwright's ``page.url``, which is only
    updated while a call waits on the browser; it now reads
    ``location.search``.)
    """
    wanted = url_params()
    try:
        st.query_params.from_dict(wanted)
    except Exception:  # pragma: no cover - outside a script run
        return


def valid_seed(value: Any) -> bool:
    """A release seed the Sanitize page can show: a whole number from 0 to :data:`MAX_SEED`."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SEED


def clip_echoes(notes: list[str], query: Mapping[str, Any]) -> list[str]:
    """Notes with every long value of the link they repeat cut to a readable length (issue 12 item 10).

    The notes quote what the link gave (``Got ...``, ``named '...'``); a
    100 KB value would make a 100 KB warning.  Each key or value longer than
    :data:`core.errors.ECHO_LIMIT` is replaced, wherever a note repeats it,
    by its first characters and an ellipsis (:func:`core.errors.clip`).
    """
    from core.errors import ECHO_LIMIT, clip

    long = set()
    for k, v in query.items():
        for text in [k, *(v if isinstance(v, list) else [v])]:
            text = str(text)
            if len(text) > ECHO_LIMIT:
                long |= {text, text.strip()}
    if not long:
        return notes
    out = []
    for note in notes:
        for text in sorted(long, key=len, reverse=True):
            note = note.replace(text, clip(text))
        out.append(clip(note, 2000))
    return out


def _folder_missing(name: str, notes: list[str]) -> bool:
    """Whether a link's data-folder table is not one (missing, ``../``, ``/etc``): said in ``notes``, the table kept.

    Checked when the link is read, so no page opens another table in its
    place (Home used to fall back to the folder's first table and rewrite
    the address bar).  A server without a data folder is left to the pages,
    which say so.
    """
    from core.data import folder as _folder

    base = _folder.root()
    if base is None:
        return False
    try:
        _folder.resolve(base, name)
    except WorkbenchError as exc:
        notes.append(f"The link names the data-folder table '{clip(name)}': {str(exc).rstrip('.')}. The current "
                     "table is kept.")
        return True
    return False


def restore(query: Mapping[str, Any]) -> list[str]:
    """Load shared state from query parameters; return one note per value that is not used as given.

    Every key of the link is either used exactly as written or named in a
    note ("Ignored from the link: ..."), never silently replaced: values
    outside their declared range, unknown names, settings of a workload or
    curve the link does not name (they apply to the current one), and keys
    no page reads.  The SA and QI columns can only be checked once the
    table is loaded: they are kept in :data:`LINK_COLUMNS` for
    :func:`pages.ui.data.link_column_notes`.
    """
    ss = st.session_state
    notes: list[str] = []
    q = {k: (v[-1] if isinstance(v, list) else str(v)) for k, v in query.items()}
    if not q:
        return notes
    used: set[str] = set(RESERVED) | OTHER_KEYS
    if "data" in q:
        spec = q["data"]
        if samples.is_sample(spec):
            name, sep, size = spec.partition(":")
            name = name.strip().lower()
            sample = _sample(name)
            ss[SOURCE] = "sample"
            ss[SAMPLE] = name
            if sample is not None and sample.sized and size:
                digits = size.replace("_", "").replace(",", "")
                if digits.isdigit() and 1 <= int(digits) <= samples.MAX_SIZE:
                    ss[SIZE] = {**ss.get(SIZE, {}), name: int(digits)}
                else:
                    notes.append(f"The link's table size '{size}' is not a whole number of rows from 1 to "
                                 f"{samples.MAX_SIZE:,}; the default size is used.")
            elif sample is not None and not sample.sized and sep:
                notes.append(f"Ignored from the link: the size ':{size}' of '{name}', a table of fixed size "
                             "(only census:N and hospital:N take a size).")
            follow_sample()  # before the link's own parameters, which win
        elif spec.startswith(UPLOAD_PREFIX) and _is_hash(spec[len(UPLOAD_PREFIX):]):
            # nothing in a new session holds the uploaded table: Home asks for the same file again
            ss[SOURCE] = "upload"
            ss[WANT_UPLOAD] = {"hash": spec[len(UPLOAD_PREFIX):]}
        elif spec.startswith(FOLDER_PREFIX) and spec[len(FOLDER_PREFIX):].strip() \
                and not _folder_missing(spec[len(FOLDER_PREFIX):], notes):
            # opened (or refused in one sentence: no data folder) when a page reads the table
            from core.data import folder as _folder

            choice = {"name": spec[len(FOLDER_PREFIX):], "rows": _folder.DEFAULT_SAMPLE_ROWS, "seed": 0}
            for key, top in (("rows", _folder.MAX_SAMPLE_ROWS), ("seed", 2**31 - 1)):
                text = q.get(f"folder.{key}")
                if text is None:
                    continue
                used.add(f"folder.{key}")
                digits = str(text).replace("_", "").replace(",", "")
                if digits.isdigit() and (key == "seed" or int(digits) >= 1) and int(digits) <= top:
                    choice[key] = int(digits)
                else:
                    notes.append(f"The link's data-folder sample {'size' if key == 'rows' else 'seed'} '{text}' is "
                                 f"not a whole number from {1 if key == 'rows' else 0} to {top:,}; "
                                 f"{choice[key]:,} is used.")
            ss[SOURCE] = "folder"
            ss[FOLDER] = choice
        else:
            notes.append(f"The link names the table '{spec}', which is not a bundled sample, an upload's "
                         "content hash (upload:<16 hex digits>) nor a table of the server's data folder "
                         "(folder:<name>); choose the table on the Home page.")
    link_columns: dict[str, Any] = {}
    if "sa" in q:
        if q["sa"]:
            ss[SA] = q["sa"]
            link_columns["sa"] = q["sa"]
        else:
            notes.append("Ignored from the link: an empty sensitive attribute (sa=).")
    if "qi" in q:
        qi = tuple(c for c in q["qi"].split(",") if c)
        if qi:
            ss[QI] = qi
            link_columns["qi"] = qi
        else:
            notes.append("Ignored from the link: an empty list of QI columns (qi=).")
    if link_columns:
        ss[LINK_COLUMNS] = link_columns
    for key in [k for k in q if k.startswith("band.")]:
        used.add(key)
        column = key[len("band."):]
        try:
            from core.data.banding import parse as parse_band

            ss[BANDS] = {**(ss.get(BANDS) or {}), column: parse_band(f"{column}={q[key]}").spec()}
        except WorkbenchError as exc:
            notes.append(f"Ignored from the link: {exc}")
    if "mech" in q:
        if q["mech"] in MECHANISMS:
            ss[MECH] = q["mech"]
        else:
            notes.append(f"The link names the mechanism '{q['mech']}', which this workbench does not have; "
                         f"choose one of: {', '.join(MECHANISMS)}.")
    mech = ss.get(MECH)
    if mech in MECHANISMS:
        values = mech_params(mech)
        for p in MECHANISMS[mech].params:
            if p.name in q and p.name not in RESERVED:
                used.add(p.name)
                try:
                    values[p.name] = p.parse(q[p.name], mech)
                except WorkbenchError as exc:
                    notes.append(f"Ignored from the link: {exc}")
        set_mech_params(mech, values)
    if "seed" in q:
        try:
            seed = int(q["seed"].strip())
        except ValueError:
            seed = None
        if seed is not None and valid_seed(seed):
            ss[SEED] = seed
        else:
            notes.append(f"Ignored from the link: the seed must be a whole number from 0 to {MAX_SEED:,}. "
                         f"Got {q['seed']}.")
    # curve settings (bound.*) apply to the curve the link names, else to the current one
    bound_keys = [k for k in q if k.startswith("bound.")]
    if "bound" in q and q["bound"] not in BOUNDS:
        notes.append(f"The link names the curve '{q['bound']}', which this workbench does not have.")
    elif "bound" in q or bound_keys:
        name = q.get("bound") or ss.get(BOUND)
        if name in BOUNDS:
            ss[BOUND] = name
            values = bound_params(name)
            for p in BOUNDS[name].params:
                key = f"bound.{p.name}"
                if key in q:
                    used.add(key)
                    try:
                        values[p.name] = p.parse(q[key], f"bound {name}")
                    except WorkbenchError as exc:
                        notes.append(f"Ignored from the link: {exc}")
            set_bound_params(name, values)
    # workload settings (wl.*) apply to the workload the link names, else to the current one
    wl_keys = [k for k in q if k.startswith("wl.")]
    if "wl" in q and q["wl"] not in WORKLOADS:
        notes.append(f"The link names the workload '{q['wl']}'; choose one of: {', '.join(WORKLOADS)}.")
    elif "wl" in q or wl_keys:
        settings = query_settings()
        kind = q.get("wl") or settings.get("kind") or next(iter(WORKLOADS), "")
        if kind in WORKLOADS:
            settings["kind"] = kind
            values = dict(settings.setdefault("settings", {}).get(kind, {}))
            for p in WORKLOADS[kind].params:
                key = f"wl.{p.name}"
                if key in q:
                    used.add(key)
                    try:
                        values[p.name] = p.parse(q[key], f"workload {kind}")
                    except WorkbenchError as exc:
                        notes.append(f"Ignored from the link: {exc}")
            settings["settings"][kind] = values
    if "cmp" in q:
        chosen = [c for c in q["cmp"].split(",") if c]
        unknown = [c for c in chosen if c not in MECHANISMS]
        if unknown:
            notes.append(f"Ignored from the link: no mechanism named {', '.join(unknown)}.")
        query_settings()["compare"] = [c for c in chosen if c in MECHANISMS]
    if "cmp.match" in q:
        flag = q["cmp.match"].strip().lower()
        if flag in {"true", "yes", "1", "on", "false", "no", "0", "off"}:
            query_settings()["match"] = flag in {"true", "yes", "1", "on"}
            used.add("cmp.match")
        else:
            notes.append(f"Ignored from the link: cmp.match must be true or false. Got {q['cmp.match']}.")
            used.add("cmp.match")
    from core.recommend import SETTINGS

    t = ss.setdefault(TRADEOFF, {})
    for p in SETTINGS:
        key = f"to.{p.name}"
        if key in q:
            used.add(key)
            try:
                t.setdefault("settings", {})[p.name] = p.parse(q[key], "the trade-offs page")
            except WorkbenchError as exc:
                notes.append(f"Ignored from the link: {exc}")
    if "to" in q:
        chosen = [c for c in q["to"].split(",") if c]
        unknown = [c for c in chosen if c not in MECHANISMS]
        if unknown:
            notes.append(f"Ignored from the link: no mechanism named {', '.join(unknown)}.")
        t["mechanisms"] = [c for c in chosen if c in MECHANISMS]
    if "pins" in q:
        try:
            ss[PINS] = pins_from_text(q["pins"])
        except SessionError as exc:
            notes.append(str(exc))
    unread = [k for k in q if k not in used]
    if unread:
        owner = MECHANISMS[mech].title if mech in MECHANISMS else "the current mechanism"
        notes.append(f"Ignored from the link: {', '.join(f'{k}={q[k]}' for k in unread)} (not a parameter of "
                     f"{owner}, of the current curve or workload, nor a setting any page reads).")
    return notes
