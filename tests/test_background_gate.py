"""What the Sanitize page measures behind the page starts once the page is drawn (issue 27).

``cached.hold_background()`` (called before the page starts its
background computations) makes them wait; ``cached.release_background()``
(the page's last line) starts them.  A run that ends early leaves its gate
to the session's next hold, which opens it; another page's computations
never wait on it.
"""

from __future__ import annotations

import threading

import pytest

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


def test_the_next_hold_opens_the_gate_of_a_run_that_ended_early(page):
    cached.hold_background()
    job = _Job("early")
    future = cached.in_background(job, 3)
    cached.hold_background()  # the session's next run (the first never reached release_background)
    assert future.result(timeout=30) == "early"


def test_another_page_never_waits_on_the_gate(page):
    cached.hold_background()
    page["page"] = "home"
    job = _Job("home")
    assert cached.in_background(job, 4).result(timeout=30) == "home"
