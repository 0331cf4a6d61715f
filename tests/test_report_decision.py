"""The report's decision section and print stylesheet (issue 13 §4)."""

from __future__ import annotations

import json
import re

import pytest

from core import report
from core import session as S
from core.table import load_dataset


@pytest.fixture(scope="module")
def small():
    return load_dataset("census:3000", "occupation", ["age", "sex", "race"])


def _decision():
    pins = (S.Pin("five", S.Setting("splu", {"gamma": 5}, 3)), S.Pin("<i>up</i>", S.Setting("uniform", {}, 3)))
    dec = S.make_decision("five", pins, "Why:\n<script>alert(1)</script>", ["Ann & Co"], "2026-11-24",
                          {"five": "runs (eligible)", "<i>up</i>": "runs (eligible)"})
    return dec.to_json(pins), [p.to_json() for p in pins]


@pytest.mark.slow
def test_report_opens_with_the_decision_and_escapes_it(small):
    decision, pins = _decision()
    html = report.build(small, "splu", {"gamma": 5}, 3, ["uniform"], queries=300, records=300,
                        decision=decision, pins=pins)
    heads = re.findall(r"<h2[^>]*>([^<]*)</h2>", html)
    assert heads[0] == "1. Decision" and heads[1] == "2. The table"
    section = html[html.index("1. Decision"):html.index("2. The table")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section and "<script>alert" not in html
    assert "&lt;i&gt;up&lt;/i&gt;" in section and "<i>up</i>" not in html
    assert "Ann &amp; Co" in section and "2026-11-24" in section
    assert section.count("<td>chosen</td>") == 1 and section.count("<td>alternative</td>") == 1
    assert "signature" in section
    # the manifest shown carries the record
    pre = html[html.index("<pre>", html.index("Manifest")):]
    assert '&quot;decision&quot;' in pre[:pre.index("</pre>")]


@pytest.mark.slow
def test_without_a_decision_there_is_no_decision_section(small):
    html = report.build(small, "splu", {"gamma": 5}, 3, [], queries=300, records=300)
    assert "Decision" not in re.findall(r"<h2[^>]*>([^<]*)</h2>", html)[0]
    assert "&quot;decision&quot;" not in html


def test_print_stylesheet_breaks_pages_between_sections_and_keeps_rows_whole():
    css = report._CSS
    media = css[css.index("@media print"):]
    assert "h2{break-before:page" in media and "h2:first-of-type{break-before:auto" in media
    assert "tr,.fig" in media and "break-inside:avoid" in media
    assert "thead{display:table-header-group}" in media
    assert ".wide{overflow:visible" in media  # a wide table wraps on paper instead of scrolling off it
    assert "@page{size:A4 landscape" in css


def test_decision_html_alone_names_the_chosen_and_the_alternatives():
    decision, pins = _decision()
    text = report.decision_html(decision, pins)
    assert "<b>Chosen:</b> five." in text and "&lt;i&gt;up&lt;/i&gt;" in text
    assert json.dumps(decision)  # JSON-ready as given to the manifest
