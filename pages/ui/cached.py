"""Thin caching wrappers around the core functions the pages call.

Each wrapper is keyed by primitives only: the dataset ``key``
(content hash | SA | QIs), a mechanism or bound name, the *resolved*
parameters as a sorted tuple of items (so an explicit default and an
omitted one share an entry), the seed and the workload settings.  Objects
that should not be hashed (the :class:`core.table.Dataset`, a ``Table``)
are passed as underscore arguments, left out of the key but for their
*name* (the file name of an upload, which the manifest, the reproduce
command and the download names carry).

Results holding large arrays (sample tables, encoded datasets, releases,
workloads, evaluations, measured points) live in one
:class:`core.lru.ByteLRU` (:func:`memo`): least recently used entries go
once they take more than ``WORKBENCH_CACHE_MB`` megabytes together
(:data:`core.lru.BUDGET_MB` by default), measured with numpy/pandas ``nbytes``.
They are shared, not copied, and a :class:`core.release.Release` caches its
query index in ``state`` (re-measured on every hit).  Pages never mutate
these objects.

**Uploads are private to their session.**  An entry computed from a table
that is not a bundled sample (an upload) is stored under the session's id:
no other session can hit it, even with the same bytes, and it is dropped
when the session's browser tab disconnects (:func:`session_guard`).  The
parsed upload itself lives only in ``st.session_state``; Streamlit keeps a
disconnected session for ``server.disconnectedSessionTTL`` seconds (120 by
default) so that a dropped connection can resume, and :func:`session_guard`
closes it once that time is up, which frees its state and the uploaded
bytes Streamlit holds.  When the last session has gone, the shared entries
are dropped too and the memory is handed back (:func:`core.lru.give_back_memory`:
gc, Arrow's pool, glibc ``malloc_trim``; glibc's mmap threshold is fixed at
128 KiB when this module loads (``WORKBENCH_MMAP_KB`` to change it,
:func:`core.lru.fix_mmap_threshold`) and raised to 16 MiB while a result
on a table of 1M records or more is computed, :func:`core.lru.large_arrays`).

``st.cache_data`` still holds the bounds' curves (no table data).  Every
entry lives in memory only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import os
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from concurrent.futures import wait as futures_wait
from typing import Any, Callable, Mapping, Sequence

import streamlit as st
from streamlit.logger import get_logger

from core import api as _api
from core import cancel as _cancel
from core import evaluate as _evaluate
from core import mechanisms as _mechanisms
from core.bounds import BOUNDS
from core import lru as core_lru
from core.lru import ByteLRU, budget_bytes, fix_mmap_threshold, give_back_memory, nbytes
from core.session import Setting
from core.table import Dataset, Table, bind, load_table
from core.workload import Workload

TTL = 2 * 3600  # seconds; st.cache_data entries (curves, attack simulations) leave memory at the latest after this
#: an upload's own entries are stored under its session's id; this scope is for bundled samples
SHARED = None


_LOG = get_logger(__name__)
try:
    fix_mmap_threshold()  # large arrays in their own mappings, returned to the system when freed
except ValueError as _exc:  # the server's setting, not a page's input: said in the server's log, default used
    _LOG.warning("%s Ignored; using %d KiB.", _exc, core_lru.MMAP_KB)
    fix_mmap_threshold(core_lru.MMAP_KB * 1024)
core_lru.no_huge_pages()  # a large table's temporaries faulted in 4 KiB at a time, not zeroed 2 MiB at a time

#: the store in use (for the event-loop callbacks, which run outside any script)
_STORES: list[ByteLRU] = []


#: objects a cached value may hold but does not own (cached once under their own key, or the table itself): not
#: counted again in each value that holds them (a map's 47 evaluations each counted Adult's 5 MB workload)
NOT_OWNED = (Table, Dataset, Workload)


@st.cache_resource(show_spinner=False, on_release=lambda lru: lru.clear())
def store() -> ByteLRU:
    """The process-wide byte-bounded cache (a cache resource, so Streamlit's "Clear caches" empties it)."""
    lru = ByteLRU(budget_bytes(), size=lambda v: nbytes(v, skip=NOT_OWNED))
    _STORES[:] = [lru]
    return lru


def _order_memo(key, compute):
    """:data:`core.engine.local.ORDER_MEMO`: the published order of a seed and n, kept in :func:`store`.

    It depends on the seed and the number of records only (no table data),
    so it is shared between sessions; a slider move on a large table reuses
    it instead of drawing and sorting n order keys again (census 5M: 40 MB).
    """
    lru = _STORES[0] if _STORES else None
    if lru is None:
        return compute()
    return lru.get_or_compute(key, compute, scope=SHARED, kind="published orders")


#: id(dataset) -> (weak reference, token): the identity of a Dataset object in :func:`_qi_memo`'s keys
_DATA_TOKENS: dict[int, tuple] = {}
_TOKENS_LOCK = threading.Lock()
_NEXT_TOKEN = [0]


def _data_token(data) -> int:
    """A number naming this Dataset object for as long as it lives (never reused, unlike ``id``)."""
    with _TOKENS_LOCK:
        got = _DATA_TOKENS.get(id(data))
        if got is not None and got[0]() is data:
            return got[1]
        _NEXT_TOKEN[0] += 1
        token = _NEXT_TOKEN[0]
        ident = id(data)
        try:
            ref = weakref.ref(data, lambda _r, ident=ident, token=token: _forget_token(ident, token))
        except TypeError:  # an object without weak references: no memo
            return -1
        _DATA_TOKENS[ident] = (ref, token)
        return token


def _forget_token(ident: int, token: int) -> None:
    with _TOKENS_LOCK:
        got = _DATA_TOKENS.get(ident)
        if got is not None and got[1] == token:
            del _DATA_TOKENS[ident]


def _qi_memo(data, key, compute):
    """:data:`core.engine.local.QI_MEMO`: a dataset's QI columns in the published order of a seed.

    They depend on the table and the seed only, so a slider move reuses
    them (census 5M: 7 columns, 35 MB, a quarter of SPLU's release).  The
    entry is keyed by the Dataset object itself (a token that is never
    reused) and scoped like it: an upload's columns stay under its session
    (:func:`_scope`) and leave with it.
    """
    lru = _STORES[0] if _STORES else None
    token = _data_token(data)
    if lru is None or token < 0:
        return compute()
    scope = _scope([data])
    return lru.get_or_compute((*key, token, scope), compute, scope=scope, kind="published QI columns")


def _record_memo(data):
    """:data:`core.engine.memo.RECORD_MEMO`: per-record arrays of a dataset that a slider move does not change.

    SDR's dealing positions, SPLU-Gen's run positions, RP's draws, micro
    groups and ranks (:mod:`core.engine.memo`):
    they depend on the table and the seed only.  Kept like :func:`_qi_memo`:
    keyed by the Dataset object (a token never reused) and scoped like it,
    so an upload's arrays stay in its session and leave with it.  Called
    when a plan is made, on the script's thread, so the session is known;
    the returned ``memo(key, compute)`` may then run on the apply threads.
    """
    lru = _STORES[0] if _STORES else None
    token = _data_token(data)
    if lru is None or token < 0:
        return None
    scope = _scope([data])

    def memo(key, compute):
        return lru.get_or_compute((*key, token, scope), compute, scope=scope, kind="per-record draws",
                                  most_bytes=RECORD_DRAWS_MB * 2**20)

    return memo


#: the per-record draws kept together, in MB (least recently used dropped first).  Choice: enough for any one
#: mechanism's on census 5M (RP's, the largest, about 70 MB), so the slider in use stays fast, but not every
#: mechanism's a steward has visited (seven: 195 MB); a mechanism opened again draws its own again (its first
#: release, seconds, does anyway)
RECORD_DRAWS_MB = 128


def _install_order_memo() -> None:
    from core.engine import local
    from core.engine import memo

    local.ORDER_MEMO = _order_memo
    local.QI_MEMO = _qi_memo
    memo.RECORD_MEMO = _record_memo


_install_order_memo()


def _purge(scope: str | None = None, everything: bool = False) -> None:
    for lru in list(_STORES):
        lru.clear() if everything else lru.purge(scope)


# ---------------------------------------------------------------- sessions
#: tables loaded from bundled samples (shared between sessions); anything else is session-private
_SAMPLE_TABLES: "weakref.WeakSet[Table]" = weakref.WeakSet()
#: sessions that have run a page and not been closed yet
_LIVE: set[str] = set()
#: session id -> monotonic time of its last disconnect
_DISCONNECTED: dict[str, float] = {}
#: sessions with a :func:`_close_if_gone` check pending on the event loop (one chain each)
_SCHEDULED: set[str] = set()
_SESSIONS_LOCK = threading.Lock()


def session_id() -> str:
    """The current Streamlit session's id (``"no-session"`` outside a script run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else "no-session"


def _disconnected_ttl() -> float:
    return float(st.get_option("server.disconnectedSessionTTL"))


def _session_released(sid: str) -> None:
    """The session's tab disconnected (or the caches were cleared): drop its upload's derived results.

    Called by Streamlit on the event-loop thread when the session
    disconnects.  Its state stays in Streamlit's session storage for
    ``server.disconnectedSessionTTL`` seconds so that a dropped connection
    can resume; :func:`_close_if_gone` closes it just before that time is up.
    """
    _purge(sid)
    got = _GATES.pop(sid, None)  # nothing of the session waits for a page that is gone
    if got is not None:
        got[1].set()
    with _BACKGROUND_LOCK:  # what it asked for behind its pages runs on (a tab that reconnects finds it) unowned
        for owner in [o for o in _WANTED if o[0] == sid]:
            del _WANTED[owner]
        for owners in _OWNERS.values():
            owners.difference_update({o for o in owners if o[0] == sid})
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # called from a script thread (caches cleared): nothing to schedule
        loop = None
    with _SESSIONS_LOCK:
        _DISCONNECTED[sid] = time.monotonic()
        first = sid not in _SCHEDULED
        if loop is not None:
            _SCHEDULED.add(sid)
    if loop is not None and first:
        loop.call_later(_close_after(_disconnected_ttl()), _close_if_gone, sid)
    give_back_memory()


def _close_after(ttl: float) -> float:
    """Seconds after a disconnect at which :func:`_close_if_gone` closes the session: just before Streamlit's TTL.

    Streamlit keeps a disconnected session in a store whose entries cannot
    be read once their TTL is up but stay in it until the store is next
    written to (cachetools' ``TTLCache``).  Asked to close a session after
    its TTL, Streamlit no longer found it and did nothing: the session, its
    state and its pages' releases stayed in memory until another tab
    disconnected (census 5M: 832 MB held for one session).  So it is closed
    :data:`CLOSE_BEFORE_TTL` seconds (a tenth of a shorter TTL) before the
    TTL is up; a tab that reconnects in that last second starts afresh.
    """
    return max(ttl - min(CLOSE_BEFORE_TTL, ttl / 10), 0.0)


#: how long before Streamlit's ``server.disconnectedSessionTTL`` is up a disconnected session is closed (:func:`_close_after`)
CLOSE_BEFORE_TTL = 1.0


def _close_if_gone(sid: str) -> None:
    """On the event loop: close ``sid`` if it stayed disconnected for the whole TTL; look again later if not."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        with _SESSIONS_LOCK:
            _SCHEDULED.discard(sid)
        return
    rt = Runtime.instance()
    ttl = _disconnected_ttl()
    loop = asyncio.get_running_loop()
    with _SESSIONS_LOCK:
        since = time.monotonic() - _DISCONNECTED.get(sid, 0.0)
    after = _close_after(ttl)
    if rt.is_active_session(sid):  # resumed: look again later (it may leave without a rerun)
        loop.call_later(after, _close_if_gone, sid)
        return
    if since < after:  # disconnected again since this check was scheduled
        loop.call_later(after - since, _close_if_gone, sid)
        return
    info = rt._session_mgr.get_session_info(sid) if hasattr(rt, "_session_mgr") else None
    rt.close_session(sid)  # frees its session_state (the upload), its uploaded bytes and session caches
    if info is not None:
        _empty_closed(info.session)
    with _SESSIONS_LOCK:
        _LIVE.discard(sid)
        _DISCONNECTED.pop(sid, None)
        _SCHEDULED.discard(sid)
        live = len(_LIVE)
    _purge(sid, everything=not live)
    if not live and core_lru.frozen():
        core_lru.refreeze()  # no session's data alive: frozen garbage collected, the modules frozen again
    give_back_memory()
    kept = sum(lru.total for lru in _STORES)
    _LOG.info("Closed session %s after %.0f s disconnected%s; %d live, %.1f MB cached.", sid, since,
              "" if info is not None else " (Streamlit no longer had it)", live, kept / 2**20)


def _empty_closed(session) -> None:
    """Empty a closed session's state and fragments, so that nothing it held outlives it.

    The objects alive when the server's first page run started were frozen
    out of the collector's scans (:func:`core.lru.freeze_startup`), the
    first session's state among them: once closed, it was never collected,
    and its widgets' callbacks kept its pages' last namespaces alive with
    their releases (census 5M: up to 160 MB).  Emptied, only the empty
    containers stay.  Uses the session's ``session_state`` and
    ``_fragment_storage`` (Streamlit 1.67); a version without them is left
    as it is.
    """
    state = getattr(session, "session_state", None)
    if state is not None and hasattr(state, "clear"):
        state.clear()
        widgets = getattr(state, "_new_widget_state", None)  # its clear() leaves the widgets' callbacks
        metadata = getattr(widgets, "widget_metadata", None)
        if isinstance(metadata, dict):
            metadata.clear()
    fragments = getattr(session, "_fragment_storage", None)
    if fragments is not None and hasattr(fragments, "clear"):
        fragments.clear()


@st.cache_resource(scope="session", on_release=_session_released, show_spinner=False)
def _guard(sid: str) -> str:
    with _SESSIONS_LOCK:
        _LIVE.add(sid)
    return sid


def session_guard() -> None:
    """Register the current session so that its uploads leave memory when it ends (every page calls this)."""
    sid = session_id()
    if sid != "no-session":
        _guard(sid)


def forget_session_results() -> None:
    """Drop what this session cached from its upload (it was replaced or forgotten) and give the memory back."""
    _purge(session_id())
    give_back_memory()


def _scope(hidden: list[Any]) -> str | None:
    """:data:`SHARED` when every table behind ``hidden`` is a bundled sample, else the session's id."""
    tables = [h.table if isinstance(h, Dataset) else h for h in hidden if isinstance(h, (Dataset, Table))]
    if any(t is None or t not in _SAMPLE_TABLES for t in tables):
        return session_id()
    return SHARED


def memo(kind: str, spinner: str | None = None, remeasure: bool = False, sticky: bool = False,
         large_keep: int | None = None) -> Callable:
    """Decorator: keep the function's results in :func:`store`, keyed by its plain arguments.

    Underscore arguments are left out of the key, except for the name of a
    ``Dataset`` or ``Table`` among them (the file name an upload carries into
    manifests).  A result computed from a table that is not a bundled sample
    is kept under the current session's id (:func:`_scope`), so it is never
    served to another session and is purged when this one ends.
    ``spinner`` is shown while the value is computed; ``remeasure`` sizes
    the value again on every hit (it grows after it is stored); ``sticky``
    marks a base value (tables, encoded datasets) that the budget evicts only
    after every derived one (:meth:`core.lru.ByteLRU.get_or_compute`).
    ``large_keep``: at most this many results computed from a table of
    :data:`core.lru.LARGE_ROWS` records or more are kept at a time (kind
    ``"<kind> of large tables"``), the least recently used going first.
    """
    def decorate(func: Callable) -> Callable:
        signature = inspect.signature(func)
        name = f"{func.__module__}.{func.__qualname__}"

        def parts(args, kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            plain = tuple((k, v) for k, v in bound.arguments.items() if not k.startswith("_"))
            hidden = [v for k, v in bound.arguments.items() if k.startswith("_")]
            names = tuple(h.name for h in hidden if isinstance(h, (Dataset, Table)))
            scope = _scope(hidden)
            rows = max((h.n for h in hidden if isinstance(h, Dataset)), default=0)
            return (name, scope, names, plain), scope, rows

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            key, scope, rows = parts(args, kwargs)

            def compute():
                with core_lru.large_arrays(rows):  # a table of 1M records or more: batch temporaries reused
                    if spinner:
                        with st.spinner(spinner):
                            return func(*args, **kwargs)
                    return func(*args, **kwargs)

            return store().get_or_compute(key, compute, scope=scope, remeasure=remeasure, sticky=sticky,
                                          **_kind(rows))

        def _kind(rows: int) -> dict:
            if large_keep is not None and rows >= core_lru.LARGE_ROWS:
                return {"kind": f"{kind} of large tables", "most": large_keep}
            return {"kind": kind}

        def key(*args, **kwargs):
            return parts(args, kwargs)[0]

        def put(value, *args, **kwargs):
            """Keep ``value`` as the result of these arguments (computed elsewhere: a forked process)."""
            key, scope, rows = parts(args, kwargs)
            return store().get_or_compute(key, lambda: value, scope=scope, remeasure=remeasure, sticky=sticky,
                                          **_kind(rows))

        wrapper.key = key
        wrapper.put = put
        wrapper.is_cached = lambda *args, **kwargs: key(*args, **kwargs) in store()
        return wrapper

    return decorate


#: threads computing independent cached results at the same time (:func:`in_parallel`)
WORKERS = max(1, min(2, os.cpu_count() or 1))


def in_parallel(calls: Sequence[Callable[[], Any]], done: Callable[[int, int], None] | None = None,
                each: Callable[[int, Any], None] | None = None) -> list[Any]:
    """Run independent ``calls`` on :data:`WORKERS` threads; their results in the order given.

    For the pages' loops over settings (the trade-off map's settings, the
    Query error comparison and sweep): each call computes cached results that
    do not depend on one another, so running them at the same time changes
    no figure, only when each is ready (most of the work is numpy, which
    runs outside the interpreter lock).  The threads carry the script's
    context, so :func:`memo` keys an upload's entries by the session as it
    does on the script's thread.  As each call finishes, on the script's
    thread: ``done(finished, total)`` (a progress bar) and ``each(i,
    result)`` of call ``i`` (the points measured so far).  An exception of
    a call is raised here; a rerun or stop while waiting cancels the calls
    not started (those running finish, and their results stay cached).
    """
    if len(calls) <= 1 or WORKERS == 1:
        out = []
        for i, call in enumerate(calls):
            out.append(call())
            if each:
                each(i, out[-1])
            if done:
                done(i + 1, len(calls))
        return out
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)

    def run(call):
        with _script_context(ctx):
            return call()

    pool = ThreadPoolExecutor(max_workers=min(WORKERS, len(calls)), thread_name_prefix="workbench")
    try:
        futures = {pool.submit(run, call): i for i, call in enumerate(calls)}
        for n, fut in enumerate(as_completed(futures), start=1):
            if each:
                each(futures[fut], fut.result())
            if done:
                done(n, len(calls))
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


@contextlib.contextmanager
def _script_context(ctx):
    """The script's context attached to this pool thread while the block runs, and taken off after it.

    The thread carries the script's context so that an upload's entry is
    stored under its session.  A pool thread that kept it after the task
    kept that session's state alive through it (and the last namespace of
    its pages, releases included) after Streamlit had closed the session.
    """
    from streamlit.runtime.scriptrunner import add_script_run_ctx
    from streamlit.runtime.scriptrunner_utils.script_run_context import SCRIPT_RUN_CONTEXT_ATTR_NAME

    if ctx is None:
        yield
        return
    thread = threading.current_thread()
    add_script_run_ctx(thread, ctx)
    try:
        yield
    finally:
        setattr(thread, SCRIPT_RUN_CONTEXT_ATTR_NAME, None)


def search_behind_page() -> bool:
    """Whether Sanitize looks for the nearest setting that meets a guarantee behind the page (the default).

    ``WORKBENCH_VERDICT_SEARCH=inline`` makes the rerun wait for it instead
    (the page tests set it: AppTest runs no fragment timers, so the fix must
    be on the page when the run ends).
    """
    return os.environ.get("WORKBENCH_VERDICT_SEARCH", "background").strip().lower() != "inline"


#: results being computed behind the page (:func:`in_background`): cache key -> Future
_BACKGROUND: dict = {}
_BACKGROUND_LOCK = threading.Lock()
_BACKGROUND_POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="workbench-background")
#: cache key -> the event that cancels its computation (:mod:`core.cancel`)
_CANCEL: dict = {}
#: cache key -> the (session, page) pairs that asked for it and may still draw it
_OWNERS: dict = {}
#: (session, page) -> the keys its current run of the page asked for (since its :func:`hold_background`)
_WANTED: dict = {}


#: session id -> (page, gate): what its background computations wait on while that page is drawn
_GATES: dict[str, tuple[str, threading.Event]] = {}
#: longest a held computation waits for its page (a run that ends without :func:`release_background`)
GATE_SECONDS = 10.0


def hold_background() -> None:
    """Computations this session starts behind the page from now on wait until :func:`release_background`.

    The Sanitize page starts the nearest-setting search and the risk
    measurement halfway down (their fragments poll them), then draws the
    release's tables, figures and views; on two cores those computations
    took the interpreter and the processors from the rest of the page
    while a slider move was being answered.  Held, they start when the page
    has been drawn.  A run that ends early (a newer run: the slider moved
    again) leaves its gate closed for the next run of the page, whose
    :func:`release_background` opens it once it has cancelled what that
    run no longer asks for; :data:`GATE_SECONDS` bounds the wait otherwise.
    """
    sid, page = session_id(), _page()
    with _BACKGROUND_LOCK:
        _WANTED[(sid, page)] = set()
        old = _GATES.get(sid)
        if old is None or old[0] != page or old[1].is_set():
            if old is not None:
                old[1].set()  # another page's gate: its work is not this page's to hold
            _GATES[sid] = (page, threading.Event())


def release_background() -> None:
    """The page has been drawn: cancel what its earlier runs started and this one no longer asks for, then start
    what :func:`hold_background` held.

    A setting the slider has left behind is of no use to anybody unless
    another session or page asked for it too: its search, risk measurement
    and interval are cancelled (:mod:`core.cancel`: one still waiting never
    starts, one running stops at its next sanitization or estimate), so
    they no longer take the processors from the answer to the next move.
    So is what this session started on another page: a session shows one
    page at a time, and the one it left (Home's verdict table, a Sanitize
    setting) no longer waits for it (opening Query error took 2.8-3.5 s in
    chromium with Home's and Sanitize's computations still running behind
    it, 0.9 s alone).  Asked for again later, they are computed again.
    """
    sid, page = session_id(), _page()
    owner = (sid, page)
    with _BACKGROUND_LOCK:
        wanted = _WANTED.get(owner, set())
        _let_go(sid, lambda o, key: o != owner or key not in wanted)
        got = _GATES.pop(sid, None)
    if got is not None:
        got[1].set()


def leave_other_pages() -> None:
    """Cancel what this session started behind its other pages (every page calls it as it starts).

    A session shows one page at a time: Home's verdict table or a Sanitize
    setting's risk left running took the processors from the page the
    steward went to (the trade-off map, Query error).  What another session
    waits for runs on; what this page asks for is never touched.
    """
    sid, page = session_id(), _page()
    with _BACKGROUND_LOCK:
        _let_go(sid, lambda o, key: o[1] != page)


def _let_go(sid: str, leaving: Callable[[tuple, Any], bool]) -> None:
    """Drop session ``sid``'s ownership of the computations ``leaving(owner, key)`` names; cancel those nobody
    owns any more.  Called with :data:`_BACKGROUND_LOCK` held."""
    for other in [o for o in _WANTED if o[0] == sid and o[1] != _page()]:
        del _WANTED[other]  # the pages this session left
    for key, owners in list(_OWNERS.items()):
        left = {o for o in owners if o[0] == sid and leaving(o, key)}
        if not left:
            continue
        owners -= left
        if owners:
            continue  # someone else still waits for it
        _OWNERS.pop(key, None)
        future = _BACKGROUND.pop(key, None)
        event = _CANCEL.pop(key, None)
        if event is not None:
            event.set()
        if future is not None:
            future.cancel()  # one not started yet never starts


def _page() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return "" if ctx is None else str(ctx.page_script_hash)


def _gate() -> threading.Event | None:
    """The gate held for this session's current page, if any (another page's computations never wait)."""
    got = _GATES.get(session_id())
    return got[1] if got is not None and got[0] == _page() else None


def in_background(func: Callable, *args, after: Future | None = None) -> Future:
    """Start ``func(*args)`` (a :func:`memo` function) on a background thread; its Future.

    For a result the page can draw without (the nearest setting that meets a
    guarantee, whose search sanitizes up to 16 settings): the rerun ends
    without waiting, and a fragment polls the Future.  The result lands in
    the cache like any other; one computation per key runs at a time (asking
    again while it runs returns the same Future).  The thread carries the
    script's context, so an upload's entry is stored under its session.
    The computation is cancelled when no session's page asks for it any
    more (:func:`release_background`); its Future then ends with
    :class:`concurrent.futures.CancelledError` or :class:`core.cancel.Cancelled`,
    and nothing is cached.

    ``after``: a Future started earlier (the page's nearest-setting search)
    that this computation waits for (at most :data:`GATE_SECONDS`) before it
    starts, so that the result the page shows first gets the processor to
    itself.  Choice (issue 27): on Adult the search, the risk and the count in
    people ran together on the pool's two threads and shared one interpreter;
    Ambiguity's search took 1.0 s behind the page against 0.3 s alone.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    key = func.key(*args)
    ctx = get_script_run_ctx(suppress_warning=True)
    gate = _gate()
    owner = (session_id(), _page())
    event = threading.Event()

    def run():
        try:
            if gate is not None:  # the page is still being drawn: start when it is (hold_background)
                gate.wait(GATE_SECONDS)
            if after is not None:  # what the page shows first is computed first
                futures_wait([after], timeout=GATE_SECONDS)
            with _script_context(ctx), _cancel.scope(event):
                _cancel.check()
                return func(*args)
        finally:
            with _BACKGROUND_LOCK:
                if _CANCEL.get(key) is event:  # still this computation's entry (not a newer one for the key)
                    _BACKGROUND.pop(key, None)
                    _CANCEL.pop(key, None)
                    _OWNERS.pop(key, None)

    with _BACKGROUND_LOCK:
        _WANTED.setdefault(owner, set()).add(key)
        _OWNERS.setdefault(key, set()).add(owner)
        future = _BACKGROUND.get(key)
        if future is None:
            _CANCEL[key] = event
            future = _BACKGROUND[key] = _BACKGROUND_POOL.submit(run)
    return future


def items(values: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Hashable, order-independent form of a parameter mapping."""
    return tuple(sorted((str(k), v) for k, v in values.items()))


@memo("tables", spinner="Loading the sample table…", sticky=True)
def sample_table(spec: str) -> Table:
    """A bundled sample by spec (``"adult"``, ``"census:500000"``), shared between sessions."""
    table = load_table(spec)
    _SAMPLE_TABLES.add(table)
    return table


@memo("datasets", spinner="Encoding the chosen columns…", sticky=True)
def dataset(_table: Table, table_key: str, sa: str, qi: tuple[str, ...], bands: tuple = ()) -> Dataset:
    """``core.table.bind`` keyed by (:attr:`core.table.Table.key`: content hash and read options, SA, QIs, bands).

    ``bands`` is :func:`band_items` of the ``{column: spec}`` to apply.
    """
    return bind(_table, sa, qi, {col: json.loads(spec) for col, spec in bands})


def band_items(bands: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """Hashable, order-independent form of ``{column: band spec}`` (the key of :func:`dataset`)."""
    return tuple(sorted((str(c), json.dumps(spec, sort_keys=True)) for c, spec in (bands or {}).items()))


@memo("micro groups")
def micro_groups(_data: Dataset, data_key: str) -> dict:
    """:func:`core.data.banding.micro_groups` of a dataset's QIs, as a dict."""
    from core.data.banding import micro_groups as _micro_groups

    return _micro_groups(_data.qi_codes, _data.domains).to_json()


@memo("eligibility")
def eligibility(_data: Dataset, data_key: str, mechanism: str, params: tuple) -> tuple[bool, str, dict | None]:
    """``Mechanism.eligibility`` as ``(ok, message, suggestion)``."""
    mech = _mechanisms.get(mechanism)
    e = mech.eligibility(_data, dict(params))
    return bool(e.ok), str(e.message), (dict(e.suggestion) if e.suggestion else None)


@memo("verdicts")
def verdict(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int):
    """``core.api.verdict`` (with the nearest setting that meets the guarantee), on the cached release."""
    ok = eligibility(_data, data_key, mechanism, params)[0]
    rel = release(_data, data_key, mechanism, params, seed) if ok else None
    return _api.verdict(_data, Setting(mechanism, dict(params), int(seed)), release=rel)


#: releases of a table of 1M records or more kept at a time: the one shown, not every setting tried (census 5M:
#: 40-160 MB a release; issue 27's 700 MB).  Choice: one, not also the one before it (kept before, so that a
#: slider moved back answered at once): a Sanitize rerun asks for one release (checked on census 1M for four
#: mechanisms), and a move back now costs what any move costs (0.2-0.4 s of server time there)
LARGE_RELEASES = 1


@memo("releases", remeasure=True, large_keep=LARGE_RELEASES)
def release(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int):
    """``core.api.build``: the release of resolved ``params`` and an int ``seed`` (the front door's)."""
    return _api.build(_data, Setting(mechanism, dict(params), int(seed)))


@memo("risks")
def risk(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int) -> dict:
    """``core.api.assess_risk``: the release's measured risk block (the manifest's, before the verdict's sentence)."""
    return _api.assess_risk(_data, Setting(mechanism, dict(params), int(seed)))


@memo("intervals")
def people(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int) -> dict:
    """``core.intervals.block``: a count's 95% interval in people, at 10 and 1,000 and per band, or why not."""
    from core.intervals import DEFAULT_QUERIES, MAX_ROWS, block

    if _data.n > MAX_ROWS:
        return block(_data, mechanism, dict(params), int(seed))  # says why, without a release
    rel = release(_data, data_key, mechanism, params, seed)
    # the seed-000 workload of the release seed, kept beside the map's: a slider move keeps the seed (0.09 s on Adult)
    wl = workload(_data, data_key, "seed000", items({"queries": DEFAULT_QUERIES, "max_attrs": 3, "seed": int(seed)}))
    return block(_data, mechanism, dict(params), int(seed), release=rel, workload=wl)


@memo("workloads")
def workload(_data: Dataset, data_key: str, kind: str, settings: tuple):
    """``core.evaluate.make_workload`` (true answers included)."""
    return _evaluate.make_workload(_data, kind, **dict(settings))


@memo("evaluations")
def evaluation(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int,
               kind: str, settings: tuple):
    """Sanitize (cached) and estimate every query of the workload (cached)."""
    rel = release(_data, data_key, mechanism, params, seed)
    wl = workload(_data, data_key, kind, settings)
    return _evaluate.evaluate_release(rel, wl)


@memo("query texts")
def query_texts(_data: Dataset, data_key: str, kind: str, settings: tuple) -> list[str]:
    """Every query of the workload as text (hover labels)."""
    wl = workload(_data, data_key, kind, settings)
    return [wl.describe(_data, i) for i in range(len(wl))]


@st.cache_data(max_entries=256, ttl=TTL, show_spinner=False)
def curve(bound: str, params: tuple):
    """``Bound.curve`` for resolved parameters."""
    return BOUNDS[bound].curve(dict(params))


@memo("targets")
def targets(_data: Dataset, data_key: str, records: int, seed: int):
    """The records sampled for the inference attack (same sample for every setting)."""
    from core.risk import targets as _targets

    return _targets(_data, records, seed)


@memo("points")
def point(_data: Dataset, data_key: str, mechanism: str, params: tuple, seed: int, queries: int, records: int):
    """One mechanism setting measured for the risk-utility map (cached per point)."""
    from core.risk import measure_release

    wl = workload(_data, data_key, "seed000", items({"queries": queries, "max_attrs": 3, "seed": seed}))
    rel = release(_data, data_key, mechanism, params, seed)
    ev = evaluation(_data, data_key, mechanism, params, seed, "seed000",
                    items({"queries": queries, "max_attrs": 3, "seed": seed}))
    return measure_release(_data, rel, wl, targets(_data, data_key, records, seed), ev)


def map_outcome(_data: Dataset, name: str, raw: Mapping[str, Any], seed: int, queries: int,
                records: int) -> tuple[str, Any]:
    """One setting of the risk-utility map: ``("point", Point)`` (cached by :func:`point`) or ``("skipped", why)``.

    The sentence names the setting as :func:`core.risk.outcome` does, so
    the Trade-offs page, the Compare page's report and the CLI say the same
    thing about a setting that cannot run.
    """
    from core.errors import WorkbenchError
    from core.risk import setting_text

    got = _known_outcome(_data, name, raw, seed, queries, records)
    if got is not None:
        return got
    mech = _mechanisms.get(name)
    try:
        return "point", point(_data, _data.key, name, items(mech.resolve(raw)), seed, queries, records)
    except WorkbenchError as exc:
        return "skipped", f"{mech.title} at {setting_text(raw)}: {exc}"


def _known_outcome(_data: Dataset, name: str, raw: Mapping[str, Any], seed: int, queries: int,
                   records: int) -> tuple[str, Any] | None:
    """The outcome of a setting without measuring it: skipped (cannot run), or its cached point; else None."""
    from core.errors import WorkbenchError
    from core.risk import setting_text

    mech = _mechanisms.get(name)
    try:
        values = mech.resolve(raw)
        ok, message, _ = eligibility(_data, _data.key, name, items(values))
    except WorkbenchError as exc:
        return "skipped", f"{mech.title} at {setting_text(raw)}: {exc}"
    if not ok:
        return "skipped", f"{mech.title} at {setting_text(raw)}: {message}"
    args = (_data, _data.key, name, items(values), seed, queries, records)
    return ("point", point(*args)) if point.is_cached(*args) else None


def map_outcomes(_data: Dataset, jobs: Sequence[tuple[str, Mapping[str, Any]]], seed: int, queries: int,
                 records: int, done: Callable[[int, tuple[str, Any]], None] | None = None) -> list[tuple[str, Any]]:
    """:func:`map_outcome` of every ``(mechanism, raw)`` of ``jobs``, in their order; each measured once.

    The settings cached or unable to run are answered first, the others
    measured at the same time: in :data:`WORKERS` processes forked for the
    purpose (:func:`_measure_forked`) where the table allows it, on threads
    otherwise (:func:`in_parallel`).  ``done(i, outcome)`` is called on the
    script's thread as job ``i`` is answered.  The settings are independent
    (each sanitized with the same seed, answered on the same workload,
    attacked on the same sample), so measuring them at the same time changes
    no figure.

    Choice: processes forked when the map is asked for, not threads and not
    a pool started with the server.  The measurement is mostly many small
    numpy calls, which hold the interpreter lock: two threads measured
    Adult's map only 1.2x faster than one (8.1-8.7 s in chromium).  A pool
    started with the server was tried too: its processes start cold (no
    workload, targets or table indexes) and were 1.2-1.4x slower than the
    threads in the app.  Processes forked *after* the workload and the
    targets are built inherit them (copy-on-write) and measure the settings
    on two cores.
    """
    out: list = [None] * len(jobs)
    todo = []
    for i, (name, raw) in enumerate(jobs):
        out[i] = _known_outcome(_data, name, raw, seed, queries, records)
        if out[i] is None:
            todo.append(i)
        elif done:
            done(i, out[i])

    def finished(i, outcome):
        out[i] = outcome
        if done:
            done(i, outcome)

    if todo:
        wl, t = map_inputs(_data, seed, queries, records)
        with core_lru.many_releases():  # dozens of releases in a row: their temporaries reuse the heap's pages
            if _can_fork(_data, len(todo)):
                todo = _measure_forked(_data, jobs, todo, wl, t, seed, queries, records, finished)
            if todo:
                in_parallel([lambda i=i: map_outcome(_data, *jobs[i], seed, queries, records) for i in todo],
                            each=lambda j, outcome: finished(todo[j], outcome))
    return out


def map_inputs(_data: Dataset, seed: int, queries: int, records: int):
    """What every setting of the map shares, built once and cached: ``(workload, targets)``, and the 80% training part.

    :func:`map_outcomes` calls it before measuring; the Trade-offs page
    calls it too while it waits for "Measure every setting" on a table of
    at most :data:`FORK_MAX_ROWS` records (Adult: 0.45 s, after the page is
    drawn), so that the measurement starts at once when the button is
    pressed (the map's first points were drawn 1.3-1.5 s after the click,
    a third of it building these).
    """
    from core.risk import DEFAULT_SPLIT_SEED, training_part

    wl = workload(_data, _data.key, "seed000", items({"queries": queries, "max_attrs": 3, "seed": seed}))
    t = targets(_data, _data.key, records, seed)
    training_part(_data, DEFAULT_SPLIT_SEED)
    return wl, t


def map_ready(_data: Dataset, jobs: Sequence[tuple[str, Mapping[str, Any]]], seed: int, queries: int,
              records: int) -> None:
    """Build what "Measure every setting" needs before its first measurement; the page calls it while it waits.

    The Trade-offs page calls it after it is drawn, on a table of at most
    :data:`FORK_MAX_ROWS` records, so that the click measures at once:

    * :func:`map_inputs` (the workload, the attacked records, the training part);
    * each setting's eligibility (:func:`_known_outcome`, cached);
    * scipy.stats, imported once here rather than in each forked process (SPLU-Gen's privacy tail);
    * the first setting the processes would be handed (:func:`_hand_out_order`: a quick one), measured and
      kept in :func:`point`'s cache, which also builds the per-table indexes every measurement reads.

    Measured on Adult in chromium, a fresh server (issue 27): the click spent 0.19 s answering the settings'
    eligibility and 0.43 s importing scipy.stats before the processes were forked, and the first point
    came 0.17 s after the fork.  Choice: one setting measured before it is asked for (Adult: about 0.2 s of
    one core while the steward reads the page); a steward who never presses the button has paid that.
    """
    import scipy.stats  # noqa: F401

    map_inputs(_data, seed, queries, records)
    todo = [i for i, (name, raw) in enumerate(jobs) if _known_outcome(_data, name, raw, seed, queries, records) is None]
    if todo:
        map_outcome(_data, *jobs[_hand_out_order(jobs, todo)[0]], seed, queries, records)


#: the largest table whose map is measured in forked processes (:func:`_measure_forked`): each process holds
#: what it changes of the server's memory, and a larger table's map is measured on threads
FORK_MAX_ROWS = 250_000
#: a forked measurement that answers no setting for this long is given up; its settings left are measured on
#: threads (a process forked while another session's thread held a lock it then needs would wait for ever)
FORK_STALL_SECONDS = 60.0
#: what the forked processes measure: set, under :data:`_FORK_LOCK`, just before they are forked
_FORKED: dict[str, Any] = {}
_FORK_LOCK = threading.Lock()


#: the mechanisms whose settings take longest to measure, slowest first: :func:`_measure_forked` hands them out
#: first, so the two processes end together instead of one finishing a slow setting alone (longest job first).
#: Measured on Adult's map (per setting: Ambiguity 0.55 s, PriView 0.3 s, SPLU-Gen 0.19 s, bucketization and
#: Mondrian 0.1-0.15 s, the others under 0.08 s); the map ended 0.35-0.45 s sooner in three runs of each order
SLOWEST_FIRST = ("ambiguity", "priview", "splu", "bucketization", "mondrian", "anatomy")


def _hand_out_order(jobs, todo: list[int]) -> list[int]:
    """The order :func:`_measure_forked` hands the settings out in: one quick setting, then the slowest first.

    The quick one first (the first in the page's order not in
    :data:`SLOWEST_FIRST`) so that the map's first points are drawn at once
    (issue 27: within 1 s); then :data:`SLOWEST_FIRST`'s mechanisms in its
    order, then the rest in the page's order.
    """
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    order = sorted(todo, key=lambda i: rank.get(jobs[i][0], len(SLOWEST_FIRST)))
    quick = next((i for i in todo if jobs[i][0] not in rank), None)
    return order if quick is None else [quick] + [i for i in order if i != quick]


def _can_fork(data: Dataset, settings: int) -> bool:
    """Whether :func:`map_outcomes` measures in forked processes: Linux, two cores, two settings, a small table."""
    import sys

    return (sys.platform.startswith("linux") and WORKERS > 1 and settings > 1 and data.n <= FORK_MAX_ROWS
            and os.environ.get("WORKBENCH_MAP_PROCESSES", "1") != "0")


def _measure_forked(_data: Dataset, jobs, todo: list[int], wl: Workload, t, seed: int, queries: int, records: int,
                    finished: Callable[[int, tuple[str, Any]], None]) -> list[int]:
    """Measure the settings ``todo`` of ``jobs`` in :data:`WORKERS` forked processes; the ones left unanswered.

    Each process measures one setting at a time, a quick one and then the
    slowest mechanisms' first (:func:`_hand_out_order`), with :func:`core.risk.outcome`
    (the function the CLI's map uses: the same point as :func:`point`) and
    sends it back; the parent keeps each point in :func:`point`'s entry, so
    a rerun finds it, and calls ``finished(i, outcome)``.  Nothing else a
    process computes comes back (its releases stay in it).  Left unanswered,
    for the caller to measure on threads: every setting not answered when
    no answer came for :data:`FORK_STALL_SECONDS`.  A rerun or stop while
    waiting ends the processes.
    """
    import multiprocessing
    import warnings

    # the workload, targets and training part were built before (map_inputs; map_ready while the page waited
    # for the click): the processes inherit them; scipy.stats is imported before the fork too, or each process
    # would import it for itself (1 s each; SPLU-Gen's privacy tail, and the recommender after the map, need it)
    import scipy.stats  # noqa: F401
    with _FORK_LOCK:
        _FORKED["work"] = (_data, jobs, wl, t, seed)
        try:
            # Python 3.12+ warns of a fork beside threads; the processes use none of the server's locks but the
            # memos' (replaced by _forked_start), and a process stalled on one is measured on threads instead
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                pool = multiprocessing.get_context("fork").Pool(min(WORKERS, len(todo)), initializer=_forked_start)
        finally:
            _FORKED.clear()
    left = set(todo)
    try:
        answers = pool.imap_unordered(_forked_outcome, _hand_out_order(jobs, todo), chunksize=1)
        while left:
            try:
                i, outcome = answers.next(timeout=FORK_STALL_SECONDS)
            except multiprocessing.TimeoutError:
                _LOG.warning("The map's processes answered nothing for %.0f s; measuring its %d settings left on "
                             "threads.", FORK_STALL_SECONDS, len(left))
                break
            left.discard(i)
            if outcome[0] == "point":
                name, raw = jobs[i]
                point.put(outcome[1], _data, _data.key, name, items(_mechanisms.get(name).resolve(raw)), seed,
                          queries, records)
            finished(i, outcome)
    finally:
        pool.terminate()
        pool.join()
    return [i for i in todo if i in left]


def _forked_start() -> None:
    """A forked measuring process's start: its own memos, and a signal ends it (not the server's handlers).

    The memos the server installs in the core (:func:`_install_order_memo`)
    keep values in the server's store under its locks; a forked process
    gets plain memos of its own instead, which it drops when it ends.
    """
    import signal

    from core.engine import local
    from core.engine import memo

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    kept: dict = {}

    def plain(key, compute):
        if key not in kept:
            kept[key] = compute()
        return kept[key]

    local.ORDER_MEMO = plain
    local.QI_MEMO = lambda data, key, compute: plain((id(data), *key), compute)
    memo.RECORD_MEMO = lambda data: (lambda key, compute: plain((id(data), *key), compute))


def _forked_outcome(i: int) -> tuple[int, tuple[str, Any]]:
    """Job ``i`` of the map being measured (in a forked process: :func:`_measure_forked`)."""
    from core.risk import outcome

    data, jobs, wl, t, seed = _FORKED["work"]
    name, raw = jobs[i]
    return i, outcome(data, name, raw, wl, t, seed)
