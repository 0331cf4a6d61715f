"""The guided tour: every step's live numbers agree with the paper, and the page walks through them."""

from __future__ import annotations

import pytest

from conftest import app, charts, frame_with, no_exception
from core import tour


@pytest.mark.parametrize("step", tour.steps(), ids=lambda s: s.key)
def test_step_reproduces_the_paper(step):
    checks = step.run()
    assert checks
    bad = [(c.quantity, c.value, c.paper) for c in checks if not c.ok]
    assert not bad


def test_a_wrong_number_is_flagged():
    assert not tour.Check("x", 0.31, "0.316", 0.316).ok
    assert not tour.Check("x", float("nan"), "1", 1).ok
    assert tour.Check("x", 0.3162, "0.316", 0.316).ok


def test_fractions_are_printed_as_the_papers_print_them():
    assert tour.frac(4 / 13) == "4/13"
    assert tour.frac(0.480067) == "0.4801"
    assert tour.frac(36) == "36"


def test_steps_and_links_are_well_formed():
    keys = [s.key for s in tour.STEPS]
    assert len(keys) == len(set(keys))
    for s in tour.steps():
        page, _, query = s.link.partition("?")
        assert page in {"Sanitize", "Bounds", "Query_error", "Attacks", "Trade-offs"}, s.link
        assert query


@pytest.mark.slow
def test_page_walks_through_every_step():
    at = app("pages/6_Guided_tour.py")
    no_exception(at)
    steps = tour.steps()
    assert at.selectbox(key="w_tour_step").value == steps[0].key
    assert at.button(key="tour_back").disabled
    seen = []
    for i, step in enumerate(steps):
        no_exception(at)
        assert at.header[0].value == step.title
        table = frame_with(at, "Agrees")
        assert (table["Agrees"] == "✓").all(), table
        assert at.query_params["step"] == step.key
        if step.curve is not None:
            assert charts(at)
        seen.append(step.key)
        if i < len(steps) - 1:
            at.button(key="tour_next").click().run()
    assert seen == [s.key for s in steps]
    assert at.button(key="tour_next").disabled
    at.button(key="tour_back").click().run()
    assert at.selectbox(key="w_tour_step").value == steps[-2].key


@pytest.mark.slow  # over 1 s of CPU (the conftest check)
def test_page_opens_at_the_step_in_the_link():
    key = tour.steps()[1].key
    at = app("pages/6_Guided_tour.py", {"step": key})
    no_exception(at)
    assert at.selectbox(key="w_tour_step").value == key
    at = app("pages/6_Guided_tour.py", {"step": "nonsense"})
    no_exception(at)
    assert at.selectbox(key="w_tour_step").value == tour.steps()[0].key
