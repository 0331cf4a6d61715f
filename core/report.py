"""A self-contained HTML report for a review meeting.

One file, opened offline in any browser: the table summary, the pinned
settings of the decision side by side, the chosen mechanism with its
parameters and manifest, the analytical curves that mechanism relies on,
the query error beside the compared mechanisms, and the risk-utility map.
No external script, font or stylesheet.

Size (issue 13): plotly.js is 4.8 MB of the 4.9 MB a report used to weigh.
It is now embedded once, gzip-compressed and base64-encoded (about
1.9 MB), and unpacked by the browser's own ``DecompressionStream``
(Chrome 80, Firefox 113, Safari 16.4 and later); every figure is a JSON
block drawn by one loader at the end of the page, so the page's text and
tables show at once and the figures follow.  A browser without
``DecompressionStream`` shows one sentence where each figure would be.
The estimate scatter is thinned to :data:`SCATTER_POINTS` dots, evenly
along the queries (its caption says so).
"""

from __future__ import annotations

import base64
import datetime as _dt
import functools
import gzip
import html
import json
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

import plotly.graph_objects as go

from . import __version__, figures, mechanisms
from .bounds import BOUNDS
from .errors import WorkbenchError
from .evaluate import evaluate_release
from .release import jsonable
from .recommend import per_answer_budget
from .baselines import matched
from .intervals import block as intervals_block
from .risk import Point, Targets, measure, measure_release, pareto, risk_block, setting_text, sweep_points, targets
from .session import Setting
from .table import Dataset
from .workload import Workload, seed000

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.8em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.wide{max-width:100%;overflow-x:auto}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ddd;padding:.3em .6em;text-align:left;overflow-wrap:break-word}
th{background:#f4f4f4}.cap{color:#555;font-size:.92em;margin:.2em 0 1.5em}
pre{background:#f7f7f7;padding:1em;font-size:.85em;white-space:pre-wrap;overflow-wrap:anywhere}
.note{background:#eef5fb;border-left:4px solid #0072B2;padding:.5em 1em}.warn{background:#fff4e5;border-left:4px solid #D55E00;padding:.5em 1em}.ok{background:#eaf7ee;border-left:4px solid #009E73;padding:.5em 1em}
.rationale{white-space:pre-wrap;border-left:4px solid #999;padding:.3em 1em;background:#fafafa}
.sign td{height:2.2em;min-width:14em}
@page{size:A4 landscape;margin:12mm}
@media print{
body{max-width:none;margin:0;padding:0;font-size:10pt}
h2{break-before:page;page-break-before:always;break-after:avoid;page-break-after:avoid}
h2:first-of-type{break-before:auto;page-break-before:auto}
.wide{overflow:visible;max-width:none}
table{width:100%;page-break-inside:auto}tr,.fig,.note,.warn,.sign{break-inside:avoid;page-break-inside:avoid}
thead{display:table-header-group}td,th{overflow-wrap:break-word}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.75em}
.modebar,.modebar-container{display:none!important}
}
.plot{width:100%}.plot .nojs{color:#555;font-style:italic}
"""

#: the workload every pin is measured on, here and on the Compare page: the Query error page's default
#: (seed 000's generator), fixed so the pins of one table stay comparable from page to report
PIN_WORKLOAD = {"queries": 2000, "max_attrs": 3, "seed": 1}

#: dots drawn at most in the report's estimate scatter (thinned evenly; the Query error page draws them all)
SCATTER_POINTS = 600


def _e(value: Any) -> str:
    return html.escape(str(value))


def _cell(value: Any) -> Any:
    """A table cell as text: whole numbers as integers (14, not 14.000000), other reals to 4 significant digits."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not np.isfinite(v):
            return "–" if np.isnan(v) else ("∞" if v > 0 else "−∞")
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return _fmt(v)
    return value


def _table(frame: pd.DataFrame) -> str:
    # long cells wrap (CSS); a table still wider than the page scrolls in its own box, the page never does
    # every cell is text first: pandas printed a float column's 14.0 as 14.000000
    frame = frame.astype(object).map(_cell) if len(frame) else frame
    table = frame.to_html(index=False, escape=True, border=0, na_rep="–")
    return f'<div class="wide">{table}</div>'


class _Sections:
    """Numbered section headings; a section left out (no curves for this mechanism) leaves no gap."""

    def __init__(self):
        self.number = 0

    def __call__(self, title: str) -> str:
        self.number += 1
        return f"<h2>{self.number}. {_e(title)}</h2>"


@functools.lru_cache(maxsize=1)
def _plotly_packed() -> str:
    """plotly.js (the offline bundle of the installed plotly) gzip-compressed and base64-encoded, once per process.

    ``mtime=0`` keeps the bytes the same from run to run.
    """
    from plotly.offline import get_plotlyjs

    return base64.b64encode(gzip.compress(get_plotlyjs().encode("utf-8"), 9, mtime=0)).decode("ascii")


_LOADER = """
(function(){
  var plots=document.querySelectorAll('.plot');
  function say(text){plots.forEach(function(el){el.innerHTML='<p class="nojs">'+text+'</p>';});}
  if(!window.DecompressionStream){say('This browser cannot unpack the figures (it lacks DecompressionStream: '
    +'use Chrome 80, Firefox 113, Safari 16.4 or later). The tables carry every number.');return;}
  var packed=document.getElementById('plotlyjs-gz').textContent, raw=atob(packed), bytes=new Uint8Array(raw.length);
  for(var i=0;i<raw.length;i++){bytes[i]=raw.charCodeAt(i);}
  new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text().then(function(code){
    window.PlotlyConfig={MathJaxConfig:'local'};
    var s=document.createElement('script');s.text=code;document.head.appendChild(s);
    var chain=Promise.resolve();
    plots.forEach(function(el){chain=chain.then(function(){
      var fig=JSON.parse(document.getElementById(el.id+'-data').textContent);
      return Plotly.newPlot(el,fig.data,fig.layout,{displaylogo:false,responsive:true});});});
    return chain;
  }).then(function(){document.body.setAttribute('data-figures','drawn');},
          function(err){say('The figures could not be drawn ('+err+'). The tables carry every number.');});
})();
"""


class _Figures:
    """Each figure as a JSON block and an empty box; :meth:`scripts` adds plotly.js once and the loader."""

    def __init__(self):
        self.specs: list[str] = []

    def __call__(self, fig, caption: str) -> str:
        i = len(self.specs)
        # "<" only occurs inside JSON strings, where \u003c is the same character: no "</script>" can close the block
        fig = figures.tidy(go.Figure(fig))  # the pages' layout rule: nothing cut or drawn over an axis title
        self.specs.append(fig.to_json().replace("<", "\\u003c"))
        height = int(fig.layout.height or 450)
        summary = figures.figure_summary(fig)  # the chart's text alternative, its numbers in the table below
        return (f'<div class="fig" role="group" aria-label="{_e(summary)}">'
                f'<div class="plot" id="fig{i}" style="min-height:{height}px"></div></div>'
                f'<p class="cap">{_e(caption)}</p>'
                f'<details class="cap"><summary>Show as table: {_e(summary)}</summary>'
                f'{_table(figures.figure_table(fig))}</details>')

    def scripts(self) -> str:
        if not self.specs:
            return ""
        blocks = "".join(f'<script type="application/json" id="fig{i}-data">{spec}</script>'
                         for i, spec in enumerate(self.specs))
        return (f'{blocks}<script type="application/octet-stream" id="plotlyjs-gz">{_plotly_packed()}</script>'
                f"<script>{_LOADER}</script>")


def _rounded(value: Any) -> Any:
    """A JSON-ready value with whole reals as integers and other reals to 4 significant digits, at any depth."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return int(value)
        return float(f"{value:.4g}") if np.isfinite(value) else value
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _compact(value: Any, limit: int | None = None) -> str:
    """A dict or list figure on one line (rounded as :func:`_rounded`), clipped to ``limit`` characters."""
    text = json.dumps(_rounded(jsonable(value)), ensure_ascii=False)
    return text if limit is None or len(text) <= limit else text[:limit - 1] + "…"


def _kv(mapping: Mapping[str, Any]) -> str:
    """Items as words (``violating_groups_before`` -> ``violating groups before``; issue 23 §4) and their values."""
    from .guarantee import _name

    rows = [{"item": _name(str(k)), "value": _compact(v) if isinstance(v, (dict, list, tuple, np.ndarray)) else v}
            for k, v in mapping.items()]
    return _table(pd.DataFrame(rows)) if rows else "<p>none</p>"


def relevant_bounds(mechanism: str) -> list[str]:
    return [b for b in getattr(mechanisms.get(mechanism), "bounds", ()) if b in BOUNDS]


def build(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None = None, seed: int = 1,
          compare: Sequence[str] | None = None, queries: int = 2000, records: int = 2000,
          progress: Callable[[float, str], None] | None = None, decision: Mapping[str, Any] | None = None,
          pins: Sequence[Mapping[str, Any]] = (),
          measured: tuple[Sequence[Point], Sequence[str]] | None = None) -> str:
    """The report as one HTML string.

    ``measured`` is the risk-utility map already measured on the same
    table, seed, queries and records (the Trade-offs page's points and its
    not-eligible sentences): the report draws it instead of measuring every
    setting again, which took most of the report's time.

    ``decision`` is the steward's decision record
    (:meth:`core.session.Decision.to_json`) and ``pins`` the pinned
    settings it chose among (:meth:`core.session.Pin.to_json`); with a
    decision the report opens with a "Decision" section (the chosen
    setting, the alternatives with their verdicts, the rationale,
    reviewers, date and lines to sign) and the manifest shown carries the
    record.  The report prints on A4 landscape pages: each section starts
    a page, table rows and figures are not split, wide cells wrap.
    """
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

    if decision and decision.get("table") and decision["table"] != data.key:
        # a record made on another table (or other columns, bands) is never reported as this table's
        raise WorkbenchError("This decision record was made on another table or with other columns or bands "
                             f"({str(decision['table'])[:80]}); this report is about {data.key[:80]}. Use the "
                             "table it was made on, or record the decision again on this one.")
    results = None
    chosen_pin = str((decision or {}).get("chosen") or "")
    if pins:
        say(0.02, "Sanitizing the pinned settings")
        workload = seed000(data, **PIN_WORKLOAD)
        ordered = sorted(pins, key=lambda p: str(p.get("name")) != chosen_pin) if chosen_pin else list(pins)
        results = pin_results(data, ordered, workload)
    if decision:
        now_text = {r["name"]: _verdict_cell(r["verdict"]) if r["verdict"] is not None
                    else f"cannot run: {r.get('problem', '')}" for r in results or ()}
        parts.append(section("Decision") + decision_html(decision, pins, now_text))
    if pins:
        parts.append(section("The pinned settings side by side")
                     + pins_html(data, pins, chosen_pin, fig, workload=workload, results=results,
                                 recorded=bool(decision)))

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
    verdict = mechanisms.judge(data, release)
    parts.append("<p><b>Its guarantee</b>: " + _e(verdict.guarantee) + "</p>" + verdict_html(verdict))
    risk = risk_block(data, Setting(mechanism, dict(raw or {}), int(seed)), verdict)
    parts.append(risk_html(risk))
    people = intervals_block(data, mechanism, dict(raw or {}), int(seed), release=release)
    if people["measured"]:
        parts.append(f"<p><b>A count in people</b>: {_e(people['sentence'][0].upper() + people['sentence'][1:])}.</p>")
    else:
        parts.append(f"<p class='note'>A count's interval in people could not be measured: {_e(people['why'])}</p>")
    for note in release.notes:
        if note not in verdict.explains:  # the verdict above already says these
            parts.append(f"<p class='note'>{_e(note)}</p>")
    parts.append("<p><b>Published with the data</b></p>" + _kv(release.published))
    parts.append("<p><b>Privacy checks</b></p>" + _kv(release.privacy))
    parts.append("<p><b>Manifest</b> (reproduce with the command in <code>reproduce</code>)</p>"
                 f"<pre>{_e(json.dumps(release.manifest(decision, risk), indent=2, ensure_ascii=False))}</pre>")

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
    say(0.2, "Answering the query workload")
    workload = seed000(data, queries=queries, seed=seed)
    t = targets(data, records=records, seed=seed)
    chosen_eval = None
    try:
        chosen_eval = evaluate_release(release, workload)
    except Exception as exc:  # noqa: BLE001 - reported in the comparison, not fatal
        chosen_failed = f"{mech.title}: {exc}"
    if measured is None:
        points, not_eligible = sweep_points(data, names, workload, t, seed,
                                            progress=lambda f, s: say(0.25 + 0.55 * f, s))
    else:
        points, not_eligible = list(measured[0]), list(measured[1])
    chosen = None if chosen_eval is None else measure_release(data, release, workload, t, chosen_eval)
    say(0.85, "Matching the compared settings")
    rows, errors = compare_rows(data, mechanism, raw or {}, compare, points, chosen, workload, t, seed)
    parts.append(section("Query error"))
    parts.append(f"<p class='cap'>{len(workload):,} count queries (seed 000's generator, seed {seed}); relative "
                 "error |estimate − true| / true, averaged per band. Like with like: each compared mechanism runs "
                 "at the setting its paper pairs with the chosen one where a paper does, and otherwise at the "
                 "swept setting nearest the chosen release in inference risk; the column 'how matched' says "
                 "which.</p>")
    if chosen_eval is None:
        parts.append(f"<p class='warn'>Left out: {_e(chosen_failed)}</p>")
    for row in rows:
        if "left out" in row:
            parts.append(f"<p class='warn'>Left out: {_e(row['left out'])}</p>")
    shown = [r for r in rows if "left out" not in r]
    for same in _same_errors(shown):
        parts.append(f"<p class='note'>{_e(' and '.join(same))} measured identically on every band (same queries "
                     "and seed): at these settings their releases answer every query alike, so they count as "
                     "one result, not several.</p>")
    if shown:
        band_names = [b.name for b in workload.bands]
        counts = [int(m.sum()) for m in workload.membership]
        # one row per mechanism (eleven long titles as columns ran 1,684 px wide)
        parts.append(_table(pd.DataFrame([{
            "mechanism": r["title"], "setting": r["setting"], "how matched": r["how"],
            **{f"{band}, {q:,} queries": _fmt(v, 3) for band, q, v in zip(band_names, counts, r["errors"])}}
            for r in shown])))
        parts.append(fig(figures.band_errors(band_names, errors),
                         "High bars on the small-count band protect individuals; low bars on the selectivity "
                         "bands mean useful large counts. Each mechanism runs at the setting in the table's "
                         "'setting' column, matched as its 'how matched' column says."))
        if chosen_eval is not None:
            ev = chosen_eval
            drawn = int(np.count_nonzero(np.asarray(ev.true) > 0))
            thinned = (f" {SCATTER_POINTS:,} of the {drawn:,} queries with a true count above 0 are drawn, "
                       "taken evenly along the workload (every band keeps its share); the table above "
                       "averages all of them." if drawn > SCATTER_POINTS else "")
            parts.append(fig(figures.estimate_scatter(ev.true, ev.estimates, workload.band_of(), band_names,
                                                      title=f"{mech.title}: estimated vs true count",
                                                      max_points=SCATTER_POINTS),
                             "Each dot is a query; dots on the dashed line are answered exactly." + thinned))

    # ---------------------------------------------------------------- map
    parts.append(section("Risk against utility"))
    parts.append("<p class='cap'>Every mechanism along its main parameter, attacked the same way from the "
                 "published data only: the adversary guesses each sampled record's sensitive value from its "
                 f"micro group ({len(t.truth):,} records sampled); lift = accuracy / share of the most common "
                 "value.</p>")
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
                         "setting beats on both risk and error (the Pareto front). Hollow markers: settings whose release "
                         "does not meet its mechanism's own guarantee (the 'guarantee' column)." + star + per_answer))
        rows, notes = [], []
        for group in identical_groups(points):
            p = points[group[0]]
            row = {"mechanism": titles[p.mechanism],
                   "parameters": ", ".join(f"{k}={_fmt(v)}" for k, v in p.params.items()),
                   "inference accuracy": _fmt(p.inference_accuracy, 3), "lift": _fmt(p.inference_lift, 3),
                   "small counts within 30%": _fmt(p.small_sum_disclosure, 3), "presence": _fmt(p.presence, 3),
                   "large-count error": _fmt(p.large_error, 3), "small-count error": _fmt(p.small_error, 3),
                   "guarantee": _verdict_word(p),
                   "on the front": "yes" if any(i in front for i in group) else ""}
            if len(group) > 1:
                row["parameters"], note = _merged_setting(data, [points[i] for i in group])
                notes.append(f"{titles[p.mechanism]}: {note}")
            rows.append(row)
        parts.append(_table(pd.DataFrame(rows)))
        for note in notes:
            parts.append(f"<p class='note'>Merged rows. {_e(note)}</p>")
    for s in not_eligible:
        parts.append(f"<p class='warn'>Not eligible: {_e(s)}</p>")
    parts.append(f"<h2>Reproduce</h2><pre>{_e(release.reproduce_command())}</pre>")
    parts.append(fig.scripts())
    say(1.0, "done")
    body = "\n".join(parts)
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{_e(mech.title)} on {_e(data.name)}: privacy-utility report</title>"
            f"<style>{_CSS}</style></head><body><main>{body}</main></body></html>")  # one landmark: axe "region"


def figure_specs(report: str) -> list[dict[str, Any]]:
    """The plotly figures a report embeds (``data`` and ``layout``), in page order: for tests and tools."""
    import re

    return [json.loads(m) for m in re.findall(r'<script type="application/json" id="fig\d+-data">(.*?)</script>',
                                              report, flags=re.S)]


def risk_html(risk: Mapping[str, Any]) -> str:
    """The measured risk as the report shows it (the manifest's block): the plain sentence and, beside the verdict,
    a warning where they disagree; or why it was not measured."""
    if not risk.get("measured"):
        return f"<p class='warn'><b>Measured risk</b>: not measured. {_e(risk.get('why', ''))}</p>"
    out = (f"<p><b>Its measured risk</b>: {_e(risk['sentence'])} ({risk['attacks']:,} attacks on people in a "
           f"measurement release of {risk['split']['train']:,} records and as many on {risk['split']['control']:,} "
           f"held out of it, split seed {risk['split']['seed']}; docs/risk.md)</p>")
    so = risk.get("singling_out")
    if so and so.get("applicable"):
        out += (f"<p><b>Singling out</b>: {so['risk']:.3f} (95% interval {so['interval'][0]:.3f}-"
                f"{so['interval'][1]:.3f}), {so['mode']} predicates on {so['n_cols']} QIs, {so['attacks']:,} asked "
                f"({so['predicates']:,} isolate a published row), seed {'-'.join(str(x) for x in so['seed'])}; "
                "beside the added risk, not part of it (docs/risk.md)</p>")
    elif so:
        out += f"<p><b>Singling out</b>: {_e(so.get('why', ''))}</p>"
    beside = risk.get("beside_verdict")
    if beside:
        out += f"<p class='{'cap' if 'agrees' in beside else 'warn'}'>{_e(beside)}</p>"
    return out


def verdict_html(verdict) -> str:
    """The verdict as the report shows it: a warning unless it meets plainly, with the release notes that explain it."""
    head = verdict.heading[0].upper() + verdict.heading[1:]  # plain, qualified, vacuous, publishes little, ...
    fix = ""
    if verdict.suggestion:
        fix = " " + verdict.fix()
    why = "".join(f"<br>{_e(t)}" for t in verdict.explains)
    cls = "ok" if verdict.plain else "warn"
    return f"<p class='{cls}'><b>{_e(head)}:</b> {_e(verdict.detail() + fix)}{why}</p>"


def _verdict_word(p: Point) -> str:
    if p.verdict is None:
        return "–"
    if p.verdict == "meets":
        return "meets" if p.verdict_plain else "meets, qualified"
    return "fails" if p.verdict == "fails" else "cannot run"


def _shown(text: Any) -> str:
    """A parameter value as the pages show it (``39/59`` -> ``0.661``, :func:`core.params.display_value`)."""
    from .params import display_value, parse_number

    number = parse_number(str(text)) if isinstance(text, str) else text
    return display_value(number) if isinstance(number, (int, float)) else str(text)


def decision_html(decision: Mapping[str, Any], pins: Sequence[Mapping[str, Any]] = (),
                  now: Mapping[str, str] | None = None) -> str:
    """The decision record as HTML: what was chosen over what, why, by whom, when; every user text escaped.

    The verdicts are the ones *recorded* with the decision (what the
    reviewers saw) and are labelled so; ``now`` (pin name -> the verdict
    recomputed on this table for this report) adds a column beside them,
    and a pin whose two verdicts differ is named in a warning, so the report
    never prints a recomputed verdict as the recorded one (issue 23 §1).
    """
    chosen = str(decision.get("chosen", ""))
    verdicts = decision.get("verdicts") or {}
    by_name = {str(p.get("name")): p for p in pins}
    if chosen not in by_name and decision.get("setting"):
        by_name[chosen] = {"name": chosen, **decision["setting"]}
    names = [chosen, *[a for a in decision.get("alternatives", []) if a != chosen]]
    rows = []
    for name in names:
        p = by_name.get(name, {})
        title = mechanisms.MECHANISMS[p["mechanism"]].title if p.get("mechanism") in mechanisms.MECHANISMS else "–"
        params = ", ".join(f"{k} = {_shown(v)}" for k, v in (p.get("params") or {}).items() if v is not None) \
            or "defaults"
        row = {"pin": name, "role": "chosen" if name == chosen else "alternative", "mechanism": title,
               "parameters": params if p else "–", "seed": p.get("seed", "–"),
               "verdict as recorded": verdicts.get(name, "–")}
        if now is not None:
            row["verdict recomputed for this report"] = now.get(name, "–")
        rows.append(row)
    when = str(decision.get("date") or "")
    out = [f"<p><b>Chosen:</b> {_e(chosen)}. <b>Alternatives considered:</b> "
           f"{_e(', '.join(names[1:]) or 'none')}.</p>", _table(pd.DataFrame(rows)),
           "<p class='cap'>'Verdict as recorded': the text shown when the decision was recorded"
           + (f" ({_e(when)})" if when else "") + "; "
           + ("'verdict recomputed': the same pin sanitized again on this table for this report, as in the side by "
              "side below." if now is not None else "the report does not recompute it here.") + "</p>"]
    if now is not None:
        differ = [n for n in names if n in verdicts and n in now and verdicts[n] != now[n]]
        if differ:
            out.append(f"<p class='warn'>The recorded and the recomputed verdicts differ for "
                       f"{_e(', '.join(differ))}: the record was made with another version of the workbench or "
                       "another table; review the decision again before signing.</p>")
    rationale = str(decision.get("rationale") or "")
    out.append("<p><b>Rationale</b></p>" + (f"<div class='rationale'>{_e(rationale)}</div>" if rationale
                                             else "<p class='warn'>No rationale was written.</p>"))
    reviewers = [str(r) for r in decision.get("reviewers") or []]
    date = str(decision.get("date") or "")
    out.append(f"<p><b>Reviewers:</b> {_e(', '.join(reviewers) or 'none named')}. "
               f"<b>Date:</b> {_e(date or 'not given')}."
               + (f" <b>Recorded by:</b> {_e(decision['author'])} (signed in)." if decision.get("author") else "")
               + "</p>")
    sign = "".join(f"<tr><td>{_e(r)}</td><td></td><td></td></tr>" for r in (reviewers or ["", ""]))
    out.append(f"<table class='sign'><thead><tr><th>reviewer</th><th>signature</th><th>date</th></tr></thead>"
               f"<tbody>{sign}</tbody></table>")
    return "\n".join(out)


def _privacy_items(privacy: Mapping[str, Any]) -> dict[str, str]:
    """A release's privacy figures as ``{item: text}``; a dict of figures gives one item each, longer ones a clip."""
    from .guarantee import _name

    out: dict[str, str] = {}
    def text(value: Any) -> str:
        if isinstance(value, (Mapping, list, tuple, np.ndarray)):
            return _compact(value, 80)
        return str(_cell(value))

    for key, value in privacy.items():
        if isinstance(value, Mapping):
            for sub, v in value.items():
                out[f"{_name(str(key))} · {_name(str(sub))}"] = text(v)
        else:
            out[_name(str(key))] = text(value)
    return out


def pin_results(data: Dataset, pins: Sequence[Mapping[str, Any]], workload: Workload) -> list[dict[str, Any]]:
    """Every pin sanitized at exactly its setting and measured on one workload: the like-for-like comparison.

    Each pin (:meth:`core.session.Pin.to_json`) runs with its own
    mechanism, parameters and release seed (the setting is what is
    compared, so it is not re-matched), on the same table and answers the
    same queries of ``workload`` (one generator, size and seed for all).

    Returns
    -------
    list of dict
        Per pin: ``name``, ``title``, ``setting``, ``seed``, ``verdict``
        (:class:`core.guarantee.Verdict`, without a suggestion), and when it
        runs ``records`` (records published), ``rows`` (rows published),
        ``privacy`` (item -> text) and ``errors`` (mean relative error per
        band, None for a band with no query); or ``problem`` (one sentence)
        when it cannot run.
    """
    out = []
    for pin in pins:
        name = str(pin.get("name", ""))
        mech = mechanisms.MECHANISMS.get(str(pin.get("mechanism")))
        row: dict[str, Any] = {"name": name, "title": mech.title if mech else str(pin.get("mechanism")),
                               "seed": int(pin.get("seed", 1)), "verdict": None}
        raw = {k: v for k, v in (pin.get("params") or {}).items() if v is not None}
        row["setting"] = _setting(raw)
        if mech is None:
            row["problem"] = f"this workbench has no mechanism named '{pin.get('mechanism')}'"
            out.append(row)
            continue
        try:
            try:
                mech.check(data, mech.resolve(raw))
            except WorkbenchError:  # not eligible: the cannot-run verdict says why (it sanitizes nothing)
                v = mechanisms.verdict(data, mech.name, raw, row["seed"], suggest=False)
                row["verdict"] = v
                if not v.runs:
                    row["problem"] = v.reason
                    out.append(row)
                    continue
            release = mechanisms.sanitize(data, mech.name, raw, row["seed"])
            row["verdict"] = v = mechanisms.judge(data, release, suggest=False)
            ev = evaluate_release(release, workload)
            row["risk"] = risk_block(data, Setting(mech.name, raw, row["seed"]), v)
        except WorkbenchError as exc:
            row["problem"] = str(exc)
            out.append(row)
            continue
        row["setting"] = _setting({p.name: release.params.get(p.name) for p in mech.params})
        row["rows"] = int(release.rows_out)
        unpublished = int((v.unpublished or {}).get("records", 0))
        row["records"] = data.n - unpublished
        row["privacy"] = _privacy_items(release.privacy)
        row["errors"] = [b["mean_relative_error"] for b in ev.bands()]
        out.append(row)
    return out


def _verdict_cell(v) -> str:
    if v is None:
        return "–"
    head = v.heading
    return f"{head}: {v.detail()}"


def pins_html(data: Dataset, pins: Sequence[Mapping[str, Any]], chosen: str = "", fig: Callable | None = None,
              workload: Workload | None = None, results: list[dict[str, Any]] | None = None,
              recorded: bool = False) -> str:
    """The decision's pins side by side (chosen first): verdict, records published, privacy figures, error by band.

    Like for like, and said so in the caption: one table, one workload
    (:data:`PIN_WORKLOAD`, the Compare page's), each pin at exactly its
    pinned parameters and release seed.  Pins whose release seeds differ
    are flagged: the seed is part of the setting compared.
    """
    if workload is None:
        workload = seed000(data, **PIN_WORKLOAD)
    ordered = sorted(pins, key=lambda p: str(p.get("name")) != chosen) if chosen else list(pins)
    if results is None:
        results = pin_results(data, ordered, workload)
    verdict_item = "verdict (recomputed for this report)" if recorded else "verdict"
    band_names = [b.name for b in workload.bands]
    counts = [int(m.sum()) for m in workload.membership]
    heads = [f"{r['name']} (chosen)" if chosen and r["name"] == chosen else
             (f"{r['name']} (alternative)" if chosen else r["name"]) for r in results]
    rows: dict[str, dict[str, str]] = {}

    def put(item: str, head: str, value: Any) -> None:
        rows.setdefault(item, {})[head] = str(value)

    for head, r in zip(heads, results):
        put("mechanism", head, r["title"])
        put("parameters", head, r["setting"])
        put("release seed", head, r["seed"])
        put(verdict_item, head, _verdict_cell(r["verdict"]) if "problem" not in r or r["verdict"] is not None
            else f"cannot run: {r['problem']}")
    for head, r in zip(heads, results):
        if "errors" not in r:
            continue
        put("records published", head, f"{r['records']:,} of {data.n:,}")
        put("rows published", head, f"{r['rows']:,}")
        for band, q, err in zip(band_names, counts, r["errors"]):
            put(f"query error · {band} ({q:,} queries)", head, "–" if err is None else _fmt(err, 3))
    for head, r in zip(heads, results):
        risk = r.get("risk")
        if risk is None:
            continue
        if risk.get("measured"):
            low, high = risk["interval"]
            put("measured risk (added, 95% interval)", head, f"{risk['risk']:.3f} [{low:.3f}-{high:.3f}]")
            put("measured risk · in words", head, risk["sentence"])
            if risk.get("beside_verdict"):
                put("verdict and risk", head, risk["beside_verdict"])
        else:
            put("measured risk (added, 95% interval)", head, f"not measured: {risk.get('why', '')}")
    for head, r in zip(heads, results):
        for item, text in (r.get("privacy") or {}).items():
            put(f"privacy · {item}", head, text)
    frame = pd.DataFrame([{"": item, **{h: values.get(h, "–") for h in heads}} for item, values in rows.items()])
    seeds = sorted({r["seed"] for r in results})
    seed_note = ("" if len(seeds) == 1 else
                 f" The pins carry different release seeds ({', '.join(map(str, seeds))}): each is the release its "
                 "pin names, so part of a difference may be the random draw, not the parameters.")
    out = [f"<p class='cap'>Like for like: every pin is sanitized at exactly its pinned parameters and release "
           f"seed on this table ({_e(data.name)}, content hash {_e(data.content_hash)}), and answers the same "
           f"{len(workload):,} count queries (seed 000's generator, at most {PIN_WORKLOAD['max_attrs']} QI "
           f"attributes per query, workload seed {PIN_WORKLOAD['seed']}: the Compare page's). Query error is the "
           "mean relative error |estimate − true| / true per band; privacy figures are measured on each release; "
           "'–': that release does not report the figure, or the setting cannot run." + _e(seed_note) + "</p>",
           _table(frame)]
    for r in results:
        v = r["verdict"]
        if "problem" in r:
            out.append(f"<p class='warn'>{_e(r['name'])} cannot run on this table: {_e(r['problem'])}</p>")
        elif v is not None and v.outcome == "fails":
            out.append(f"<p class='warn'>{_e(r['name'])} runs but does not meet its guarantee: "
                       f"{_e(v.detail())}</p>")
    ran = {r["name"]: r["errors"] for r in results if "errors" in r}
    if ran and fig is not None:
        out.append(fig(figures.band_errors(band_names, ran),
                       "The pinned settings' mean relative error per band on the same queries (log scale): high "
                       "on the small-count band protects individuals, low on the selectivity bands keeps large "
                       "counts useful."))
    return "\n".join(out)


def compare_rows(data: Dataset, mechanism: str, raw: Mapping[str, Any], compare: Sequence[str],
                 points: Sequence[Point], chosen: Point | None, workload: Workload, t: Targets,
                 seed: int) -> tuple[list[dict[str, Any]], dict[str, list]]:
    """The query-error comparison, like with like: each compared mechanism at a setting matched to the chosen one.

    A mechanism the chosen one's paper compares it with runs at the setting
    the paper pairs with it (:func:`core.baselines.matched`, the rule the
    Query error page applies).  The papers pair no setting for the others;
    for them we choose the swept setting (a point of the risk-utility map)
    whose inference lift is nearest the chosen release's, so both run at
    about the same risk and the error column compares utility at equal
    risk.  A mechanism eligible at no setting is left out with the reason.

    Returns
    -------
    rows : list of dict
        ``title``, ``setting``, ``how`` and ``errors`` (mean relative error
        per band), or ``left out`` (one sentence) for a mechanism not run.
    errors : dict
        Title -> per-band errors, for :func:`core.figures.band_errors`.
    """
    mech = mechanisms.get(mechanism)
    rows: list[dict[str, Any]] = []
    if chosen is not None:
        rows.append({"title": mech.title, "setting": _setting(chosen.params),
                     "how": "the setting this report is about",
                     "errors": [b["mean_relative_error"] for b in chosen.bands]})
    try:
        values = mech.resolve(raw)
    except WorkbenchError:
        values = None
    for name in compare:
        other = mechanisms.get(name)
        paired = None if values is None else matched(mechanism, values, name, data)
        try:
            if paired is not None:
                setting, rule = paired
                want = other.resolve(setting)
                point = next((p for p in points if p.mechanism == name and _same_values(other, p.params, want)),
                             None) or measure(data, name, setting, workload, t, seed)
                how = f"matched to {mech.title}: {rule}"
            else:
                own = [p for p in points if p.mechanism == name]
                if not own:
                    rows.append({"left out": f"{other.title}: eligible at none of its swept settings on this "
                                             "table (see the map's notes)."})
                    continue
                if chosen is None or len(own) == 1:
                    point = own[0]
                    how = ("no parameter to match" if not other.params else
                           f"its only measured setting; no paper pairs it with {mech.title}")
                else:
                    point = min(own, key=lambda p: abs(p.inference_lift - chosen.inference_lift))
                    how = (f"equal risk: no paper pairs it with {mech.title}, so of its swept settings the one "
                           f"whose inference lift ({_fmt(point.inference_lift, 3)}) is nearest {mech.title}'s "
                           f"({_fmt(chosen.inference_lift, 3)})")
        except WorkbenchError as exc:
            rows.append({"left out": f"{other.title}: {exc}"})
            continue
        rows.append({"title": other.title, "setting": _setting(point.params), "how": how,
                     "errors": [b["mean_relative_error"] for b in point.bands]})
    errors = {r["title"]: r["errors"] for r in rows if "errors" in r}
    return rows, errors


def _setting(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {_fmt(v)}" for k, v in params.items()) or "no parameters"


def _same_values(mech, params: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    try:
        have = mech.resolve(params)
    except WorkbenchError:
        return False
    return all(_close(have.get(k), v) for k, v in want.items())


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)):
        return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=0))
    return a == b


def _same_errors(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Titles of compared rows whose errors agree on every band, in groups of two or more."""
    groups: dict[tuple, list[str]] = {}
    for r in rows:
        groups.setdefault(tuple(r["errors"]), []).append(r["title"])
    return [g for g in groups.values() if len(g) > 1]


def identical_groups(points: Sequence[Point]) -> list[list[int]]:
    """Indices of the points grouped by mechanism and every measured figure (first occurrence order).

    Two settings of one mechanism that measure the same on every figure
    (inference accuracy, small-count disclosure, presence, the error of every
    band, on the same queries, sample and seed) are one row of the report,
    not several rows that look like independent evidence.
    """
    groups: dict[tuple, list[int]] = {}
    for i, p in enumerate(points):
        key = (p.mechanism, p.inference_accuracy, p.small_sum_disclosure, p.presence, p.large_error,
               p.small_error, tuple(b.get("mean_relative_error") for b in p.bands))
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _merged_setting(data: Dataset, pts: Sequence[Point]) -> tuple[str, str]:
    """The parameters cell of merged rows and the sentence saying why their settings measured identically."""
    mech = mechanisms.get(pts[0].mechanism)
    keys = list(dict.fromkeys(k for p in pts for k in p.params))
    varying = [k for k in keys if len({_fmt(p.params.get(k)) for p in pts}) > 1]
    cell = ", ".join(f"{k}={_fmt(pts[0].params.get(k))}" if k not in varying else
                     f"{k} ∈ {{{', '.join(_fmt(p.params.get(k)) for p in pts)}}}" for k in keys)
    what = " and ".join(f"{k} ∈ {{{', '.join(_fmt(p.params.get(k)) for p in pts)}}}" for k in varying)
    try:
        derived = [mech.derived(data, mech.resolve(p.params)) for p in pts]
    except WorkbenchError:
        derived = []
    same = {k: v for k, v in (derived[0] if derived else {}).items()
            if k not in keys and all(_close(d.get(k), v) for d in derived[1:])}
    why = (f"at each of them {mech.title} runs with the same derived "
           + ", ".join(f"{k} = {_fmt(v)}" for k, v in same.items())
           + f", so moving {' and '.join(varying)} changes nothing on this table"
           if same else "the setting changes nothing the attack or the queries see on this table")
    return cell, (f"{what} measured identically on every figure (same queries, records and seed): {why}. "
                  "They are one row here.")


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, (float, np.floating)):
        from .params import format_value

        if digits != 4:
            return f"{float(value):.{digits}g}"
        text = format_value(value)
        # a derived value (p = 0.0909090909090909 from rho1, rho2) reads as 4 digits; fractions and ln() stay
        return f"{float(value):.4g}" if len(text) > 10 and text[0].isdigit() and "/" not in text else text
    return str(value)
