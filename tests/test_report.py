"""The HTML report (core/report.py): numbering, layout that fits the page, the chosen setting on the map."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from core.experiments.seed002 import subset
from core.report import _CSS, build, figure_specs
from core.table import load_dataset


@pytest.fixture(scope="module")
def small():
    return subset(load_dataset("adult", "occupation"), np.arange(4000), "first 4000")


@pytest.fixture(scope="module")
def report(small):
    # anatomy relies on no analytical curve: the report has no "What the papers guarantee" section
    return build(small, "anatomy", {"l": 3}, 1, ["uniform", "dbr", "mondrian"], queries=300, records=300)


@pytest.mark.slow
def test_sections_are_numbered_without_a_gap(report):
    numbers = [int(n) for n in re.findall(r"<h2>(\d+)\. ", report)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) == 4
    assert "What the papers guarantee" not in report


def test_query_error_table_has_one_row_per_mechanism(report):
    # QA: one column per mechanism ran 1,684 px wide at 1,300 px; bands are the columns now
    section = report[report.index(". Query error</h2>"):]
    table = section[:section.index("</table>")]
    header = re.findall(r"<th>(.*?)</th>", table[:table.index("</thead>")])
    assert header[:3] == ["mechanism", "setting", "how matched"] and all(h.endswith(" queries") for h in header[3:])
    assert len(header) == 10  # the small-count band and six selectivity bands, whatever the mechanisms
    assert len(re.findall(r"<tr>", table[table.index("<tbody>"):])) == 4


def test_long_lines_wrap_and_wide_tables_scroll_in_their_box(report):
    css = re.sub(r"\s", "", _CSS)
    pre = re.search(r"pre\{([^}]*)\}", css).group(1)
    assert "white-space:pre-wrap" in pre and "overflow:auto" not in pre
    assert ".wide{max-width:100%;overflow-x:auto}" in css
    assert report.count("<table") == report.count('<div class="wide"><table')


def test_the_chosen_setting_is_a_star_on_the_map(report):
    figures = [f["data"] for f in figure_specs(report)]
    stars = [t for data in figures for t in data if t.get("marker", {}).get("symbol") == "star"]
    assert len(stars) == 1
    assert stars[0]["name"].startswith("chosen setting: Anatomy") and "l = 3" in stars[0]["name"]
    assert "The star is the setting this report is about (l = 3)" in report


@pytest.mark.slow
def test_the_report_carries_the_measured_risk_and_counts_in_people(tmp_path):
    """Issue 22: the chosen release's risk (the manifest's block), its sentence and a count's interval in people."""
    import json as _json
    import re

    from core.cli import main

    out = tmp_path / "r.html"
    assert main(["report", "census:3000", "--sa", "occupation", "--mechanism", "uniform", "--param", "p=0.5",
                 "--mechanisms", "uniform", "--queries", "200", "--records", "200", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<b>Its measured risk</b>: An attacker who knows a person&#x27;s" in text
    assert re.search(r"<b>A count in people</b>: A true count of 10 is published as 10 \+/- \d+", text)
    manifest = text.split("<b>Manifest</b>", 1)[1]
    assert "&quot;risk&quot;: {" in manifest and "&quot;beside_verdict&quot;" in manifest
    # the same block as the command line's manifest
    assert main(["sanitize", "census:3000", "--sa", "occupation", "--mechanism", "uniform", "--param", "p=0.5",
                 "--seed", "1", "--out", str(tmp_path / "r.csv")]) == 0
    risk = _json.loads((tmp_path / "r.manifest.json").read_text())["risk"]
    assert f"{risk['risk']:.3f} of the possible risk" in text
