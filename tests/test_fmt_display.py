"""One display format for numbers (issue 23 §4): counts, years, probabilities, the papers' fractions."""

from __future__ import annotations

import math

from core.params import Param, display_value, format_value


def test_counts_years_probabilities_and_the_papers_fractions():
    assert display_value(45222) == "45,222" and display_value(45222.0) == "45,222"
    assert display_value(1974, "year") == "1974" and display_value(2018.0, "year") == "2018"
    assert display_value(1 / 13) == "1/13 ≈ 0.07692" and display_value(2 / 3) == "2/3 ≈ 0.6667"
    assert display_value(math.log(3)) == "ln 3 ≈ 1.099"
    assert display_value(39 / 59) == "0.661"  # not one of the papers' fractions: as Compare shows it
    assert display_value(0.18926553672316382) == "0.1893"
    assert display_value(None) == "derived" and display_value(0.0001234) == "1.234e-04"


def test_ln_is_written_only_for_a_small_whole_number():
    """The report wrote "ln(9518639013453586)": a float of 36.8 whose exp is "whole" by precision alone."""
    v = math.log(9518639013453586)
    text = format_value(v)
    assert not text.startswith("ln(") and Param("x", "x", "", 1.0).parse(text, "t") == v
    assert format_value(math.log(3)) == "ln(3)" and format_value(math.log(10)) == "ln(10)"


def test_a_slider_label_of_a_value_set_exactly_is_short():
    from pages.ui.fmt import preset_label

    assert preset_label(0.18926553672316382) == "0.1893"  # UP's p, set by a fix
    assert preset_label(1 / 13) == "1/13 ≈ 0.07692" and preset_label(0.25) == "0.25"


def test_the_report_shows_parameters_as_the_pages_do():
    from core import report

    html = report.decision_html({"chosen": "a", "alternatives": [], "verdicts": {}},
                                [{"name": "a", "mechanism": "mondrian", "params": {"beta": "39/59", "k": "20"},
                                  "seed": 1}])
    assert "beta = 0.661, k = 20" in html and "39/59" not in html


def test_the_reports_tables_name_items_in_words():
    from core import report

    html = report._kv({"violating_groups_before": 3, "T_p": 0.6})
    assert "<td>violating groups before</td>" in html and "violating_groups_before" not in html
    assert "<td>T_p</td>" in html
