"""The report's decision section and print stylesheet (issue 13 §4)."""

from __future__ import annotations

import json
import re

import numpy as np
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
    assert heads[:3] == ["1. Decision", "2. The pinned settings side by side", "3. The table"]
    section = html[html.index("1. Decision"):html.index("2. The pinned settings")]
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


# ------------------------------------------------------------------ the pinned alternatives (closing note item 1)
@pytest.fixture(scope="module")
def pinned(small):
    pins = (S.Pin("seven", S.Setting("splu", {"gamma": 7}, 3)), S.Pin("five", S.Setting("splu", {"gamma": 5}, 3)),
            S.Pin("<b>up</b>", S.Setting("uniform", {}, 4)), S.Pin("too many", S.Setting("anatomy", {"l": 40}, 3)))
    dec = S.make_decision("five", pins, "Small counts stay hidden.", ["Ann"], "2026-11-24", {})
    html = report.build(small, "splu", {"gamma": 5}, 3, ["uniform"], queries=300, records=300,
                        decision=dec.to_json(pins), pins=[p.to_json() for p in pins])
    return html, html[html.index("2. The pinned settings side by side"):html.index("3. The table")]


def _pin_table(section: str) -> dict[str, list[str]]:
    table = section[section.index("<table"):section.index("</table>")]
    heads = re.findall(r"<th>(.*?)</th>", table[:table.index("</thead>")])
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody>"):], flags=re.S):
        cells = re.findall(r"<td>(.*?)</td>", tr, flags=re.S)
        rows[cells[0]] = cells[1:]
    return {"": heads[1:], **rows}


@pytest.mark.slow
def test_the_chosen_pin_and_each_alternative_stand_side_by_side_like_for_like(small, pinned):
    html, section = pinned
    rows = _pin_table(section)
    # the chosen pin first, then the alternatives in pin order; the pin name is user text, escaped
    assert rows[""] == ["five (chosen)", "seven (alternative)", "&lt;b&gt;up&lt;/b&gt; (alternative)",
                        "too many (alternative)"]
    assert "<b>up</b>" not in html
    assert rows["release seed"] == ["3", "3", "4", "3"]
    verdict = rows["verdict (recomputed for this report)"]  # beside a decision's recorded verdicts: said which
    assert verdict[0].startswith("runs but does not meet its guarantee")  # SPLU gamma 5 misses T_p 0.6
    assert verdict[1].startswith("meets its guarantee")  # gamma 7 meets it
    assert verdict[2].startswith("meets its guarantee")  # UP at its defaults
    assert verdict[3].startswith("cannot run: ")
    assert rows["records published"][:3] == [f"{small.n:,} of {small.n:,}"] * 3 and rows["records published"][3] == "–"
    # query error by band on one workload: the numbers are the pins' own evaluations on the Compare page's workload
    from core import mechanisms
    from core.evaluate import evaluate_release
    from core.workload import seed000

    workload = seed000(small, **report.PIN_WORKLOAD)
    bands = [k for k in rows if k.startswith("query error · ")]
    assert len(bands) == len(workload.bands)
    for col, (mech, params, seed) in enumerate([("splu", {"gamma": 5}, 3), ("splu", {"gamma": 7}, 3),
                                                ("uniform", {}, 4)]):
        ev = evaluate_release(mechanisms.sanitize(small, mech, params, seed), workload)
        want = [report._fmt(b["mean_relative_error"], 3) if b["mean_relative_error"] is not None else "–"
                for b in ev.bands()]
        assert [rows[b][col] for b in bands] == want
    assert rows[bands[0]][0] != rows[bands[0]][2]  # SPLU and UP do differ: the table is not one column repeated
    assert any(k.startswith("privacy · ") for k in rows)
    # how they were matched, and the different seeds flagged
    assert "exactly its pinned parameters and release seed" in section
    assert f"the same {len(workload):,} count queries" in section and "workload seed 1" in section
    assert "different release seeds (3, 4)" in section
    assert "too many cannot run on this table" in section
    # a figure of the pins' errors, one bar series per pin that ran
    figs = [f for f in report.figure_specs(html) if f["layout"]["title"]["text"].startswith("Mean relative error")]
    assert [t["name"] for t in figs[0]["data"]] == ["five", "seven", "&lt;b&gt;up&lt;/b&gt;"]


def test_report_cells_print_integers_as_integers():
    assert report._cell(14.0) == "14" and report._cell(np.float64(2.0)) == "2" and report._cell(np.int64(7)) == "7"
    assert report._cell(2.4) == "2.4" and report._cell(0.6034305433960341) == "0.6034"
    assert report._compact({"m": 14.0, "T_p": {"1": 0.6034305433960341}}) == '{"m": 14, "T_p": {"1": 0.6034}}'
    html = report._kv({"m": 14.0, "p": 0.5, "groups": np.int64(97), "sizes": {"7": 6458.0}})
    assert "14.000000" not in html and "<td>14</td>" in html and "<td>97</td>" in html
    assert '{"7": 6458}' in html.replace("&quot;", '"')


@pytest.mark.slow
def test_report_is_small_and_draws_its_figures_from_one_packed_plotly(pinned):
    html, _ = pinned
    assert not re.search(r"\.0{6}\b", re.sub(r"<script.*?</script>", "", html, flags=re.S))  # no 14.000000 anywhere
    assert len(html.encode("utf-8")) < 2.5 * 2**20  # was 4.9 MB with plotly.js embedded raw
    assert html.count('id="plotlyjs-gz"') == 1 and "<script src" not in html
    import base64
    import gzip

    packed = re.search(r'<script type="application/octet-stream" id="plotlyjs-gz">(.*?)</script>', html).group(1)
    js = gzip.decompress(base64.b64decode(packed)).decode("utf-8")
    assert "plotly.js" in js[:300]
    specs = report.figure_specs(html)
    assert len(specs) == html.count('class="plot"') >= 5
    assert all("<" not in json.dumps(s) or "\\u003c" in html for s in specs)


@pytest.mark.slow
def test_estimate_scatter_is_thinned_with_a_note(small):
    import base64

    html = report.build(small, "uniform", {}, 3, [], queries=1600, records=200)
    scatter = [f for f in report.figure_specs(html) if "estimated vs true" in f["layout"]["title"]["text"].replace("<br>", " ")][0]  # titles wrap

    def length(x):  # plotly packs numeric arrays as {"dtype", "bdata"}
        if isinstance(x, dict):
            return len(np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"])))
        return len(x)

    dots = sum(length(t["x"]) for t in scatter["data"] if t.get("mode") == "markers")
    assert dots == report.SCATTER_POINTS
    assert f"{report.SCATTER_POINTS:,} of the" in html and "are drawn, taken evenly along the workload" in html


# ------------------------------------------------------------------ recorded vs recomputed (issue 23 §1)
@pytest.mark.slow
def test_recorded_verdicts_are_labelled_and_a_disagreement_is_said(small):
    """Issue 23: section 1 printed the recorded verdicts and section 2 recomputed ones that contradicted them,
    with nothing saying which was which."""
    from core.workload import seed000

    pins = (S.Pin("five", S.Setting("splu", {"gamma": 5}, 3)), S.Pin("seven", S.Setting("splu", {"gamma": 7}, 3)))
    now = report.pin_results(small, [p.to_json() for p in pins], seed000(small, **report.PIN_WORKLOAD))
    seven = report._verdict_cell(now[1]["verdict"])
    assert now[0]["verdict"].outcome == "fails" and seven.startswith("meets")
    # the record says gamma 5 met its guarantee (a record made elsewhere, or edited): the report says they differ
    dec = S.make_decision("seven", pins, "", [], "2026-11-24", {"five": "meets its guarantee: as recorded",
                                                                  "seven": seven}, table=small.key)
    html = report.build(small, "splu", {"gamma": 7}, 3, [], queries=300, records=300,
                        decision=dec.to_json(pins), pins=[p.to_json() for p in pins])
    section = html[html.index("1. Decision"):html.index("2. The pinned settings")]
    assert "<th>verdict as recorded</th>" in section and "<th>verdict recomputed for this report</th>" in section
    # SPLU gamma 5 does not meet T_p 0.6 on this table: the record said it meets, so the report says they differ
    assert "recorded and the recomputed verdicts differ for five" in section
    assert "differ for seven" not in section and "differ for five, seven" not in section
    assert "verdict (recomputed for this report)" in html[html.index("2. The pinned settings"):]


def test_a_decision_made_on_another_table_is_not_reported_as_this_ones(small):
    pins = (S.Pin("five", S.Setting("splu", {"gamma": 5}, 3)),)
    dec = S.make_decision("five", pins, "A's reasons", [], "", {}, table="0123456789abcdef|other|a,b")
    with pytest.raises(report.WorkbenchError, match="made on another table"):
        report.build(small, "splu", {"gamma": 5}, 3, [], queries=300, records=300, decision=dec.to_json(pins),
                     pins=[p.to_json() for p in pins])


def test_the_decision_keeps_its_table_through_the_session_file():
    pins = (S.Pin("five", S.Setting("splu", {"gamma": 5}, 3)),)
    dec = S.make_decision("five", pins, "", [], "", {}, table="0123456789abcdef|occupation|age")
    sess = S.Session(S.TableRef("sample", "adult", "0123456789abcdef"), "occupation", ("age",),
                     pins[0].setting, pins=pins, decision=dec)
    back = S.loads(S.dumps(sess))
    assert back.decision.table == dec.table and back.decision.made_on(dec.table)
    assert not back.decision.made_on("fedcba9876543210|occupation|age")
