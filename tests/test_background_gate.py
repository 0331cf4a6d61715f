"""What the Sanitize page measures behind the page starts once the page is drawn (issue 27).

``cached.hold_background()`` (called before the page starts its
background computations) makes them wait; ``cached.release_background()``
(the page's last line) starts them.  A run that ends early (the slider moved
again) leaves its gate closed for the session's next run of the page, whose
release cancels what that run no longer asks for (:mod:`core.cancel`) and
starts the rest; another page's computations never wait on it.
"""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError

import pytest

from core import cancel

from pages.ui import cached


class _Job:
    """A stand-in for a :func:`cached.memo` function: records when it runs."""

    def __init__(self, name: str):
        self.name = name
        self.started = threading.Event()

    def key(self, *args):
        return ("test-gate", self.name, args)

    def __call__(self, *args):
        self.started.set()
        return self.name


@pytest.fixture
def page(monkeypatch):
    where = {"page": "sanitize"}
    monkeypatch.setattr(cached, "session_id", lambda: "gate-session")
    monkeypatch.setattr(cached, "_page", lambda: where["page"])
    yield where
    cached.release_background()


def test_held_computation_starts_when_the_page_is_released(page):
    cached.hold_background()
    job = _Job("held")
    future = cached.in_background(job, 1)
    assert not job.started.wait(0.3)  # held while the page is drawn
    cached.release_background()
    assert future.result(timeout=30) == "held" and job.started.is_set()


def test_without_a_hold_a_computation_starts_at_once(page):
    job = _Job("free")
    assert cached.in_background(job, 2).result(timeout=30) == "free"


def test_a_run_that_ended_early_keeps_its_gate_until_the_next_run_is_drawn(page):
    cached.hold_background()
    job = _Job("early")
    future = cached.in_background(job, 3)
    cached.hold_background()  # the session's next run (the first never reached release_background)
    assert not job.started.wait(0.3)  # still held: the next run is being drawn
    cached.in_background(job, 3)  # the next run asks for the same result: the same computation
    cached.release_background()
    assert future.result(timeout=30) == "early"


def test_what_the_next_run_no_longer_asks_for_is_cancelled_and_never_starts(page):
    cached.hold_background()
    left, kept = _Job("left behind"), _Job("kept")
    stale = cached.in_background(left, 5)
    cached.hold_background()  # the slider moved: the next run asks for another setting only
    fresh = cached.in_background(kept, 6)
    cached.release_background()
    assert fresh.result(timeout=30) == "kept"
    # cancelled while waiting for a worker, or stopped by its first check once past the gate
    with pytest.raises((CancelledError, cancel.Cancelled)):
        stale.result(timeout=30)
    assert not left.started.is_set()
    # asked for again later, it is computed again
    assert cached.in_background(left, 5).result(timeout=30) == "left behind"


class _Long:
    """A long computation that checks for cancellation at each step, as sanitize and estimate do."""

    def __init__(self):
        self.started, self.steps, self.finish = threading.Event(), 0, threading.Event()

    def key(self, *args):
        return ("test-gate", "long", args)

    def __call__(self, *args):
        self.started.set()
        while not self.finish.wait(0.01):
            cancel.check()
            self.steps += 1
        return "done"


def test_a_running_computation_left_behind_stops_at_its_next_step(page):
    job = _Long()
    cached.hold_background()
    running = cached.in_background(job, 7)
    cached.release_background()
    assert job.started.wait(30)
    cached.hold_background()  # the next run asks for nothing of it
    cached.release_background()
    with pytest.raises(cancel.Cancelled):
        running.result(timeout=30)
    assert not job.finish.is_set()


def test_a_computation_another_session_asked_for_is_not_cancelled(page, monkeypatch):
    job = _Long()
    cached.hold_background()
    running = cached.in_background(job, 8)
    cached.release_background()
    monkeypatch.setattr(cached, "session_id", lambda: "other-session")
    cached.hold_background()
    assert cached.in_background(job, 8) is running  # the other session waits for the same computation
    cached.release_background()
    monkeypatch.setattr(cached, "session_id", lambda: "gate-session")
    cached.hold_background()  # the first session moves on
    cached.release_background()
    job.finish.set()
    assert running.result(timeout=30) == "done"


def test_cancellation_is_not_an_exception_a_search_could_swallow():
    event = threading.Event()
    event.set()
    caught = []
    with pytest.raises(cancel.Cancelled):
        with cancel.scope(event):
            try:
                cancel.check()
            except Exception as exc:  # a search turning a failed candidate into "not found"
                caught.append(exc)
    assert caught == []
    cancel.check()  # outside a scope: nothing


def test_a_sanitization_under_a_cancelled_scope_stops_before_it_starts():
    from core import mechanisms
    from core.table import load_dataset

    data = load_dataset("adult", "occupation")
    event = threading.Event()
    with cancel.scope(event):
        assert mechanisms.sanitize(data, "uniform", {"p": 0.3}, 1).rows_out > 0
        event.set()
        with pytest.raises(cancel.Cancelled):
            mechanisms.sanitize(data, "uniform", {"p": 0.3}, 1)


def test_what_the_session_started_on_a_page_it_left_is_cancelled(page, monkeypatch):
    """A session shows one page at a time: a page's release cancels what the session started on another page
    (Home's verdict table left running behind Query error), unless another session waits for it too."""
    page["page"] = "home"
    job, shared = _Long(), _Long()
    running = cached.in_background(job, 10)  # Home starts its computations without a gate
    both = cached.in_background(shared, 11)
    monkeypatch.setattr(cached, "session_id", lambda: "other-session")
    assert cached.in_background(shared, 11) is both  # another session on Home waits for this one
    monkeypatch.setattr(cached, "session_id", lambda: "gate-session")
    assert job.started.wait(30) and shared.started.wait(30)
    page["page"] = "query error"
    cached.hold_background()
    cached.release_background()
    with pytest.raises(cancel.Cancelled):
        running.result(timeout=30)
    assert not both.done() and ("gate-session", "home") not in cached._WANTED
    shared.finish.set()
    assert both.result(timeout=30) == "done"
    monkeypatch.setattr(cached, "session_id", lambda: "other-session")
    cached._session_released("other-session")


def test_every_page_as_it_starts_cancels_what_the_session_left_behind_on_other_pages(page):
    """page_setup calls leave_other_pages: the trade-off map or the Attacks page no longer shares the processors
    with Home's verdict table; a page's own computations, asked for again by its next run, are not touched."""
    page["page"] = "home"
    job, own = _Long(), _Long()
    running = cached.in_background(job, 12)
    assert job.started.wait(30)
    cached.leave_other_pages()  # Home's next run: its own computation runs on
    assert not running.done()
    page["page"] = "trade-offs"
    cached.leave_other_pages()
    with pytest.raises(cancel.Cancelled):
        running.result(timeout=30)
    mine = cached.in_background(own, 13)
    cached.leave_other_pages()  # the page's next run
    own.finish.set()
    assert mine.result(timeout=30) == "done"


def test_every_page_calls_leave_other_pages_as_it_starts(monkeypatch):
    from conftest import app

    called = []
    monkeypatch.setattr(cached, "leave_other_pages", lambda: called.append(cached._page()))
    app("pages/7_Compare.py", query={"data": "adult", "sa": "occupation"})
    assert len(called) == 1


def test_another_page_never_waits_on_the_gate(page):
    cached.hold_background()
    page["page"] = "home"
    job = _Job("home")
    assert cached.in_background(job, 4).result(timeout=30) == "home"


def test_a_closed_session_owns_nothing_behind_its_pages_and_its_work_runs_on(page):
    job = _Long()
    running = cached.in_background(job, 9)
    assert ("gate-session", "sanitize") in cached._WANTED
    cached._session_released("gate-session")
    assert not any(o[0] == "gate-session" for o in cached._WANTED)
    assert not any(o[0] == "gate-session" for owners in cached._OWNERS.values() for o in owners)
    job.finish.set()
    assert running.result(timeout=30) == "done"  # a tab that reconnects finds it


class _Blocked(_Job):
    """A computation that runs until told to end (the page's nearest-setting search)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.finish = threading.Event()

    def __call__(self, *args):
        self.started.set()
        self.finish.wait(30)
        return self.name


def test_a_computation_after_another_starts_when_that_one_ends(page):
    """The Sanitize page's risk and count in people wait for its search (``after``), so the fix comes first."""
    search, risk = _Blocked("search"), _Job("risk")
    first = cached.in_background(search, 7)
    assert search.started.wait(30)
    then = cached.in_background(risk, 8, after=first)
    assert not risk.started.wait(0.3)  # a worker is free, but the search is still running
    search.finish.set()
    assert first.result(timeout=30) == "search" and then.result(timeout=30) == "risk"


def test_a_computation_after_a_cancelled_one_still_runs(page):
    cached.hold_background()
    search, risk = _Job("cancelled search"), _Job("risk after it")
    first = cached.in_background(search, 9)
    cached.hold_background()  # the next run no longer asks for the search, but asks for the risk
    then = cached.in_background(risk, 10, after=first)
    cached.release_background()
    assert then.result(timeout=30) == "risk after it"
    assert not search.started.is_set()
