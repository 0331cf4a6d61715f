"""The report compares like with like (issue 13 §4): matched settings, said how, identical rows merged."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from core import mechanisms
from core.experiments.seed002 import subset
from core.report import build, identical_groups
from core.risk import Point
from core.table import load_dataset


@pytest.fixture(scope="module")
def small():
    return subset(load_dataset("adult", "occupation"), np.arange(4000), "first 4000")


def _rows(report: str) -> dict[str, list[str]]:
    """The query-error table's rows by mechanism title: [setting, how matched, band errors...]."""
    section = report[report.index(". Query error</h2>"):]
    table = section[section.index("<tbody>"):section.index("</table>")]
    out = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S):
        cells = [html.unescape(c.strip()) for c in re.findall(r"<td>(.*?)</td>", tr, flags=re.S)]
        out[cells[0]] = cells[1:]
    return out


@pytest.fixture(scope="module")
def up_report(small):
    return build(small, "uniform", {}, 1, ["reconstruction", "sdr", "laplace", "priview"], queries=300, records=300)


@pytest.mark.slow
def test_baselines_run_at_the_setting_their_paper_pairs_and_the_report_says_so(small, up_report):
    rows = _rows(up_report)
    up, rp, sdr = (mechanisms.get(n).title for n in ("uniform", "reconstruction", "sdr"))
    p_up = mechanisms.get("uniform").derived(small, mechanisms.get("uniform").resolve({}))["p"]
    # the case: RP stood at its own p = 0.46 beside UP at p = 0.091; now RP runs at UP's p
    assert f"p = {float(p_up):.4g}" in rows[rp][0]
    assert rows[rp][1] == f"matched to {up}: the same retention p (seed 001 §7)"
    assert "rho1 = 1/13, rho2 = 1/6" in rows[sdr][0] and "the same (ρ₁, ρ₂)" in rows[sdr][1]
    assert rows[up][1] == "the setting this report is about"
    # RP at UP's p resamples nothing here: its row equals UP's, and the report says they are one result
    assert rows[rp][2:] == rows[up][2:]
    assert f"{up} and {rp} measured identically on every band" in html.unescape(up_report)


@pytest.mark.slow
def test_a_mechanism_no_paper_pairs_runs_at_equal_risk(up_report):
    rows = _rows(up_report)
    laplace = rows[mechanisms.get("laplace").title]
    assert laplace[1].startswith("equal risk: no paper pairs it with")
    # the chosen epsilon is one of the swept values, and the lift quoted is the nearest of theirs
    lifts = [float(x) for x in re.findall(r"\(([\d.]+)\)", laplace[1])]
    assert len(lifts) == 2
    assert "epsilon = " in laplace[0]


@pytest.mark.slow
def test_identical_priview_rows_are_merged_and_explained(up_report):
    text = html.unescape(up_report)
    section = _without_figure_tables(text[text.index(". Risk against utility</h2>"):])
    title = mechanisms.get("priview").title
    priview_rows = re.findall(rf"<td>{re.escape(title)}</td>\s*<td>(.*?)</td>", section)
    # the setting cell names every parameter the row ran at (construction=paper is part of the setting: the
    # exact construction measures differently), and only beta, the one that varies, is explained as the merge
    assert priview_rows == ["alpha=0.1, beta ∈ {0.1, 1/7, 0.2}, candidates=32, construction=paper"]
    assert ("beta ∈ {0.1, 1/7, 0.2} measured identically on every figure" in section
            and "the same derived diversity = 10" in section)
    merged = section[section.index("Merged rows."):]
    merged = merged[:merged.index("</p>")]
    assert "construction" not in merged


def _without_figure_tables(section: str) -> str:
    """The section without each figure's own table of numbers (its text alternative, in a <details> block)."""
    return re.sub(r"<details.*?</details>", "", section, flags=re.S)


def _point(mech, lift, small_error, **params):
    return Point(mech, params, 1, 0.1 * lift, lift, 0.1, 1.0, 0.2, small_error,
                 bands=[{"name": "b", "mean_relative_error": small_error}])


def test_identical_groups_keep_distinct_settings_and_mechanisms_apart():
    points = [_point("priview", 1.2, 3.0, beta=0.1), _point("priview", 1.2, 3.0, beta=0.2),
              _point("ambiguity", 1.2, 3.0, beta=0.1), _point("priview", 1.2, 3.1, beta=0.3),
              _point("priview", 1.2, 3.0, beta=0.4)]
    assert identical_groups(points) == [[0, 1, 4], [2], [3]]


@pytest.mark.slow
def test_a_map_already_measured_is_drawn_as_it_is(small):
    # the Trade-offs page hands its measured points over instead of the report measuring them again
    from core.risk import sweep_points, targets
    from core.workload import seed000

    workload, t = seed000(small, queries=300, seed=1), targets(small, records=300, seed=1)
    points, _ = sweep_points(small, ["uniform"], workload, t, 1, sweeps={"uniform": [0.3, 0.6]})
    report = build(small, "anatomy", {"l": 3}, 1, ["uniform"], queries=300, records=300,
                   measured=(points, ["Nothing at all: a sentence from the page."]))
    text = html.unescape(report)
    section = _without_figure_tables(text[text.index(". Risk against utility</h2>"):])
    rows = re.findall(rf"<td>{re.escape(mechanisms.get('uniform').title)}</td>\s*<td>(.*?)</td>", section)
    assert len(rows) == 2 and rows[0].startswith("p=0.3") and rows[1].startswith("p=0.6")
    assert "Not eligible: Nothing at all: a sentence from the page." in section
