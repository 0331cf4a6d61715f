"""A self-contained HTML report for a review meeting.

One file, opened offline in any browser: the table summary, the chosen
mechanism with its parameters and manifest, the analytical curves that
mechanism relies on, the query error beside the compared mechanisms, and
the risk-utility map.  Figures are plotly figures with plotly.js embedded
once (its offline bundle); no external script, font or stylesheet.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import __version__, figures, mechanisms
from .bounds import BOUNDS
from .errors import WorkbenchError
from .evaluate import evaluate_release
from .release import jsonable
from .recommend import per_answer_budget
from .risk import measure_release, pareto, setting_text, sweep_points, targets
from .table import Dataset
from .workload import seed000

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.8em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.wide{max-width:100%;overflow-x:auto}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ddd;padding:.3em .6em;text-align:left;overflow-wrap:break-word}
th{background:#f4f4f4}.cap{color:#555;font-size:.92em;margin:.2em 0 1.5em}
pre{background:#f7f7f7;padding:1em;font-size:.85em;white-space:pre-wrap;overflow-wrap:anywhere}
.note{background:#eef5fb;border-left:4px solid #0072B2;padding:.5em 1em}.warn{background:#fff4e5;border-left:4px solid #D55E00;padding:.5em 1em}
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _table(frame: pd.DataFrame) -> str:
    # long cells wrap (CSS); a table still wider than the page scrolls in its own box, the page never does
    table = frame.to_html(index=False, escape=True, border=0, na_rep="–")
    return f'<div class="wide">{table}</div>'


class _Sections:
    """Numbered section headings; a section left out (no curves for this mechanism) leaves no gap."""

    def __init__(self):
        self.number = 0

    def __call__(self, title: str) -> str:
        self.number += 1
        return f"<h2>{self.number}. {_e(title)}</h2>"


class _Figures:
    """Embeds plotly.js with the first figure only."""

    def __init__(self):
        self.first = True

    def __call__(self, fig, caption: str) -> str:
        out = fig.to_html(full_html=False, include_plotlyjs=self.first, config={"displaylogo": False})
        self.first = False
        return f'<div class="fig">{out}</div><p class="cap">{_e(caption)}</p>'


def _kv(mapping: Mapping[str, Any]) -> str:
    rows = [{"item": k, "value": json.dumps(jsonable(v), ensure_ascii=False) if isinstance(v, (dict, list)) else v}
            for k, v in mapping.items()]
    return _table(pd.DataFrame(rows)) if rows else "<p>none</p>"


def relevant_bounds(mechanism: str) -> list[str]:
    return [b for b in getattr(mechanisms.get(mechanism), "bounds", ()) if b in BOUNDS]


def build(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None = None, seed: int = 1,
          compare: Sequence[str] | None = None, queries: int = 2000, records: int = 2000,
          progress: Callable[[float, str], None] | None = None) -> str:
    """The report as one HTML string."""
    mech = mechanisms.get(mechanism)
    compare = [c for c in (compare or []) if c != mechanism]
    names = [mechanism, *compare]
    say = progress or (lambda f, t: None)
    fig = _Figures()
    section = _Sections()
    parts: list[str] = []
    now = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    parts.append(f"<h1>Privacy-utility report: {_e(mech.title)} on {_e(data.name)}</h1>")
    parts.append(f"<p class='cap'>Generated {now} by the privacy-utility workbench {__version__}. "
                 f"Everything below is computed from the table and settings listed here; the manifest's "
                 f"command reproduces the release.</p>")

    # ---------------------------------------------------------------- table
    say(0.05, "Table summary")
    parts.append(section("The table"))
    summary = pd.DataFrame([
        {"item": "table", "value": data.name}, {"item": "content hash", "value": data.content_hash},
        {"item": "records used", "value": f"{data.n:,}"},
        {"item": "rows left out (missing values)", "value": f"{data.rows_dropped:,}"},
        {"item": "sensitive attribute", "value": f"{data.sa} ({data.m:,} values)"},
        {"item": "QI columns", "value": ", ".join(data.qi)},
    ])
    parts.append(_table(summary))
    parts.append(fig(figures.sa_distribution(data.sa_labels, data.sa_counts, data.sa),
                     "How often each sensitive value occurs. Mechanisms that group distinct values need the "
                     "tallest bar to be at most 1/γ (or 1/ℓ) of the table."))

    # ---------------------------------------------------------------- release
    say(0.15, "Sanitizing")
    release = mechanisms.sanitize(data, mechanism, raw, seed)
    parts.append(section(f"The release: {mech.title}") + f"<p>{_e(mech.summary)}</p>"
                 f"<p class='cap'>Source: {_e(mech.paper)}.</p>")
    params = pd.DataFrame([{"parameter": p.name, "symbol": p.symbol,
                            "value": _fmt(release.params.get(p.name)), "meaning": p.help} for p in mech.params])
    if len(params):
        parts.append(_table(params))
    derived = {k: v for k, v in release.params.items() if k not in {p.name for p in mech.params}}
    if derived:
        parts.append("<p><b>Derived values</b></p>" + _kv(derived))
    for note in release.notes:
        parts.append(f"<p class='note'>{_e(note)}</p>")
    parts.append("<p><b>Published with the data</b></p>" + _kv(release.published))
    parts.append("<p><b>Privacy checks</b></p>" + _kv(release.privacy))
    parts.append("<p><b>Manifest</b> (reproduce with the command in <code>reproduce</code>)</p>"
                 f"<pre>{_e(json.dumps(release.manifest(), indent=2, ensure_ascii=False))}</pre>")

    # ---------------------------------------------------------------- bounds
    wanted = relevant_bounds(mechanism)
    if wanted:
        parts.append(section("What the papers guarantee"))
        for name in wanted:
            bound = BOUNDS[name]
            try:
                curve = bound.curve(bound.linked(release.params, data))
            except WorkbenchError:  # a combination the curve refuses (e.g. rho1 >= rho2): its defaults
                curve = bound.curve()
            parts.append(fig(figures.curve_figure(curve), curve.caption))

    # ---------------------------------------------------------------- query error
    say(0.3, "Answering the query workload")
    workload = seed000(data, queries=queries, seed=seed)
    parts.append(section("Query error"))
    parts.append(f"<p class='cap'>{len(workload):,} count queries (seed 000's generator, seed {seed}); relative "
                 "error |estimate − true| / true, averaged per band.</p>")
    evals, skipped = {}, []
    for name in names:
        try:
            rel = release if name == mechanism else mechanisms.sanitize(data, name, None, seed)
            evals[name] = evaluate_release(rel, workload)
        except Exception as exc:  # an ineligible comparison is reported, not fatal
            skipped.append(f"{mechanisms.get(name).title}: {exc}")
    for s in skipped:
        parts.append(f"<p class='warn'>Left out: {_e(s)}</p>")
    if evals:
        band_names = [b.name for b in workload.bands]
        counts = [b["queries"] for b in next(iter(evals.values())).bands()]
        errors, rows = {}, []
        for name, ev in evals.items():
            title = mechanisms.get(name).title
            errors[title] = [b["mean_relative_error"] for b in ev.bands()]
            # one row per mechanism (eleven long titles as columns ran 1,684 px wide)
            rows.append({"mechanism": title, **{f"{band}, {q:,} queries": _fmt(v, 3)
                                                for band, q, v in zip(band_names, counts, errors[title])}})
        parts.append(_table(pd.DataFrame(rows)))
        parts.append(fig(figures.band_errors(band_names, errors),
                         "High bars on the small-count band protect individuals; low bars on the selectivity "
                         "bands mean useful large counts. Compared mechanisms run at their default parameters."))
        if mechanism in evals:
            ev = evals[mechanism]
            parts.append(fig(figures.estimate_scatter(ev.true, ev.estimates, workload.band_of(), band_names,
                                                      title=f"{mech.title}: estimated vs true count"),
                             "Each dot is a query; dots on the dashed line are answered exactly."))

    # ---------------------------------------------------------------- map
    say(0.55, "Measuring the risk-utility map")
    t = targets(data, records=records, seed=seed)
    points, not_eligible = sweep_points(data, names, workload, t, seed,
                                        progress=lambda f, s: say(0.55 + 0.4 * f, s))
    parts.append(section("Risk against utility"))
    parts.append("<p class='cap'>Every mechanism along its main parameter, attacked the same way from the "
                 "published data only: the adversary guesses each sampled record's sensitive value from its "
                 f"micro group ({len(t.truth):,} records sampled); lift = accuracy / share of the most common "
                 "value.</p>")
    chosen = None
    if mechanism in evals:  # the release this report is about, measured like the map's points
        chosen = measure_release(data, release, workload, t, evals[mechanism])
    if points:
        front = pareto(points)
        titles = {n: mechanisms.get(n).title for n in names}
        per_answer = "".join(f" {titles[m]} on the front: {note}"
                             for m in dict.fromkeys(points[i].mechanism for i in front)
                             if (note := per_answer_budget(m)) is not None)
        star = ("" if chosen is None else
                f" The star is the setting this report is about ({setting_text(chosen.params)}): lift "
                f"{_fmt(chosen.inference_lift, 3)}, large-count error {_fmt(chosen.large_error, 3)}.")
        parts.append(fig(figures.risk_utility_map(points, front, titles=titles, chosen=chosen),
                         "Lower left is better on both axes. The dashed line joins the settings no other "
                         "setting beats on both risk and error (the Pareto front)." + star + per_answer))
        rows = [{"mechanism": titles[p.mechanism], "parameters": ", ".join(f"{k}={_fmt(v)}" for k, v in p.params.items()),
                 "inference accuracy": _fmt(p.inference_accuracy, 3), "lift": _fmt(p.inference_lift, 3),
                 "small counts within 30%": _fmt(p.small_sum_disclosure, 3), "presence": _fmt(p.presence, 3),
                 "large-count error": _fmt(p.large_error, 3), "small-count error": _fmt(p.small_error, 3),
                 "on the front": "yes" if i in front else ""} for i, p in enumerate(points)]
        parts.append(_table(pd.DataFrame(rows)))
    for s in not_eligible:
        parts.append(f"<p class='warn'>Not eligible: {_e(s)}</p>")
    parts.append(f"<h2>Reproduce</h2><pre>{_e(release.reproduce_command())}</pre>")
    say(1.0, "done")
    body = "\n".join(parts)
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{_e(mech.title)} on {_e(data.name)}: privacy-utility report</title>"
            f"<style>{_CSS}</style></head><body>{body}</body></html>")


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, (float, np.floating)):
        from .params import format_value

        if digits != 4:
            return f"{float(value):.{digits}g}"
        return format_value(value)
    return str(value)
