"""Plotly figure builders shared by the pages and (later) the HTML report.

Every function takes plain data (arrays, a :class:`core.bounds.Curve`, an
:class:`core.evaluate.Evaluation`) and returns a ``plotly.graph_objects.Figure``;
nothing here imports streamlit, so a CLI report can embed the same figures
with ``fig.to_html(include_plotlyjs="cdn")``.

Conventions: every axis title carries its unit; a figure's title says what
is drawn, the caption beside it (written by the caller) says what to look
for.  Each mechanism has one fixed colour and marker shape
(:mod:`core.palette`), the same in every figure, experiment and the report;
other series (bands, curves) take the qualitative palette in a fixed order,
and bar series of one chart differ by fill pattern too, so colour never
carries meaning alone.  :func:`figure_table` gives any figure's numbers as a
table (the text alternative of pages and report).
"""

from __future__ import annotations

import math
import re

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from . import palette
from .palette import BREAKS, BREAKS_PATTERN, MEETS, PALETTE, TRUTH  # noqa: F401  (re-exported: older callers)

#: one fixed colour and one marker shape per mechanism: :mod:`core.palette` holds them (and their caption words)
MECHANISM_COLOURS = palette.COLOURS
MECHANISM_SYMBOLS = palette.SYMBOLS
mechanism_colour = palette.colour

_DASHES = {"dash", "dot", "dashdot", "longdash", "longdashdot", "solid"}

__all__ = [
    "PALETTE",
    "MECHANISM_COLOURS",
    "mechanism_colour",
    "sa_distribution",
    "sa_before_after",
    "curve_figure",
    "band_errors",
    "sa_overlay",
    "sweep_errors",
    "estimate_scatter",
    "risk_utility_map",
    "bound_bins",
    "bound_histograms",
    "figure_summary",
    "figure_table",
]


def user_text(value) -> str:
    """User data (a column name, a value, a query's text) as plotly label text that shows as typed.

    Plotly reads a subset of HTML in every label, tick and hover text
    (``<a href=...>`` becomes a link, ``<b>`` bold); ``&``, ``<`` and ``>``
    are escaped so a value such as ``<a href="https://x">click</a>`` is shown
    as those characters and links nowhere.  Plotly does not turn a bare
    ``https://...`` into a link (checked in chromium), so nothing else is
    needed.  Label text built around user data keeps its own markup
    (``<br>``, ``<b>``): escape the user part only.

    >>> user_text("<a href='https://x'>A & B</a>")
    "&lt;a href='https://x'&gt;A &amp; B&lt;/a&gt;"
    """
    import html

    return html.escape(str(value), quote=False)


_AXIS = re.compile(r"[xy]axis\d*")


def _axes(fig: go.Figure, x: dict | None, y: dict | None) -> dict:
    """``{"xaxis": x, "xaxis2": x, ..., "yaxis": y, ...}``: what ``update_xaxes(**x)`` and ``update_yaxes(**y)``
    would set, as one layout update (plotly validates and walks the subplots on every ``update_*`` call: the
    three or four calls of a bar chart took 10 of the 17 ms spent building it on every rerun)."""
    out = {}
    for name in fig.layout:
        if _AXIS.fullmatch(name):
            props = x if name[0] == "x" else y
            if props:
                out[name] = props
    return out


#: the legend in one row above the plot, right-aligned (the title is left-aligned); for charts whose x axis holds
#: the sensitive values: their labels are drawn slanted, and a long one ("Prof-specialty", "Exec-managerial") ran
#: under a legend placed below the plot, which hid it
LEGEND_ON_TOP = {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1}


#: a log axis whose ticks read 10^k
LOG_AXIS = {"type": "log", "exponentformat": "power"}


def _base(fig: go.Figure | Sequence, title: str, x_label: str, y_label: str, height: int = 420, *,
          legend: dict | None = None, x: dict | None = None, y: dict | None = None, **layout) -> go.Figure:
    """Title, size, margins, legend and axis titles (``x``, ``y``: more for every x or y axis; ``layout``: more
    layout properties) in one layout update of ``fig``; given a list of traces, the figure is built with them.

    Built in one go, a chart of two bar traces takes 3 ms; a figure updated
    afterwards, 13-17 ms (plotly walks its relayout machinery on every update).
    """
    update = {
        "title": {"text": title, "x": 0, "xanchor": "left"},
        "height": height,
        "margin": {"l": 60, "r": 20, "t": 60, "b": 60},
        "legend": legend or {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0},
        "hovermode": "closest",
        **layout,
    }
    x = {"title": {"text": _wrap(x_label, 90)}, **(x or {})}
    y = {"title": {"text": _wrap(y_label, 48)}, **(y or {})}
    if isinstance(fig, go.Figure):
        return fig.update_layout({**update, **_axes(fig, x, y)})
    return go.Figure(data=list(fig), layout={**update, "xaxis": x, "yaxis": y})


#: one layout rule for every figure (issue 23 §4: legends over axis titles, a cut title): the title wrapped to
#: lines of at most this many characters (a figure in half of a 1,024 px page holds about 40 bold ones) ...
TITLE_CHARS = 40
#: ... then the legend in rows under it, above the plot, each row holding about this many characters of entries
#: (an entry's symbol counts as six), and the axes pushing the margins out to fit their tick labels and titles
LEGEND_ROW_CHARS = 64
TITLE_LINE_PX, LEGEND_ROW_PX, TOP_PAD_PX = 22, 21, 14


def _wrap_lines(text: str, width: int) -> str:
    """Break ``text`` into lines of at most ``width`` characters at spaces (``<br>`` between them)."""
    if "<br>" in text or len(text) <= width:
        return text
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "<br>".join([*lines, line])


def legend_rows(fig: go.Figure, row_chars: int = LEGEND_ROW_CHARS) -> int:
    """How many rows the horizontal legend of ``fig`` takes (0: no legend shown), packing entries greedily."""
    if fig.layout.showlegend is False:
        return 0
    names, seen = [], set()
    for t in fig.data:
        name = plain_text(t.name) if t.name else ""
        group = t.legendgroup or name
        if t.showlegend is False or not name or (group, name) in seen:
            continue
        seen.add((group, name))
        names.append(name)
    if not names or (len(names) == 1 and fig.layout.showlegend is not True):
        return 0  # plotly shows no legend for one trace unless asked
    legend_title = fig.layout.legend.title.text if fig.layout.legend and fig.layout.legend.title else None
    rows, used = 1, len(plain_text(legend_title)) + 2 if legend_title else 0
    for name in names:
        size = len(name) + 6
        if used and used + size > row_chars:
            rows, used = rows + 1, 0
        used += size
    return rows


def tidy(fig: go.Figure) -> go.Figure:
    """:func:`tidy_update` applied to ``fig`` (in place; returned)."""
    return fig.update_layout(tidy_update(fig))


def tidy_update(fig: go.Figure) -> dict:
    """Lay out ``fig`` so that nothing is cut or drawn over anything else; every figure of the pages and the
    report goes through it (:func:`pages.ui.charts.chart`, the report's figures).

    From the top: the title, wrapped to :data:`TITLE_CHARS` a line; the
    legend, horizontal, in as many rows as its entries need
    (:func:`legend_rows`), placed under the title in the figure's own
    coordinates; subplot titles; then the plot, whose top margin is the sum
    of those heights (the figure grows by what the margin grows, so the
    plot keeps its size).  Every axis pushes the margins out to fit its tick
    labels and title (``automargin``), so a legend never sits over an axis
    title or slanted labels, as a legend placed under the plot did.

    Returns the layout update that does it (:func:`tidy` applies it).
    """
    lay = fig.layout
    title = lay.title.text if lay.title and lay.title.text else ""
    if title:
        title = _wrap_lines(title, TITLE_CHARS)
    title_px = TOP_PAD_PX + TITLE_LINE_PX * (title.count("<br>") + 1) if title else TOP_PAD_PX
    rows = legend_rows(fig)
    legend_px = LEGEND_ROW_PX * rows
    subplot_px = 24 if any(a.yref == "paper" and (a.y or 0) >= 1 for a in (lay.annotations or ())) else 0
    top = title_px + legend_px + subplot_px + 10
    height = int(lay.height or 450)
    old_top = lay.margin.t if lay.margin and lay.margin.t is not None else 80
    height = max(height, height + top - int(old_top))
    update = {"height": height, "margin": {"t": top}}
    if title:
        # plotly places a multi-line title by its first line and draws the others below it (anchored by its top,
        # the block was shifted up and its first line cut): the first line's bottom goes where a one-line title's
        # would, the others follow down to the legend
        first = title_px - 4 - TITLE_LINE_PX * title.count("<br>")
        update["title"] = {"text": title, "yref": "container", "y": 1 - first / height, "yanchor": "bottom"}
    if rows:
        update["legend"] = {"orientation": "h", "xanchor": "left", "x": 0, "yref": "container", "yanchor": "top",
                            "y": 1 - title_px / height}
    return {**update, **_axes(fig, {"automargin": True}, {"automargin": True})}


def _wrap(text: str, width: int) -> str:
    """Break a long axis title onto two lines (plotly does not wrap)."""
    if len(text) <= width or " " not in text:
        return text
    middle = len(text) // 2
    spaces = [i for i, c in enumerate(text) if c == " "]
    cut = min(spaces, key=lambda i: abs(i - middle))
    return text[:cut] + "<br>" + text[cut + 1:]


def _top(labels: Sequence, counts: np.ndarray, top: int | None) -> tuple[list[str], np.ndarray, int]:
    """Labels and counts sorted by descending count, cut to ``top``; also how many were left out."""
    counts = np.asarray(counts, dtype=float)
    order = np.argsort(-counts, kind="stable")
    if top is not None and len(order) > top:
        left = len(order) - top
        order = order[:top]
    else:
        left = 0
    return [user_text(labels[i]) for i in order], order, left


# ---------------------------------------------------------------- tables
def sa_distribution(labels: Sequence, counts: np.ndarray, sa: str, top: int = 40) -> go.Figure:
    """Bar chart of records per sensitive value, most frequent first."""
    names, order, left = _top(labels, counts, top)
    values = np.asarray(counts)[order]
    n = float(np.sum(counts)) or 1.0
    bars = go.Bar(x=names, y=values, marker_color=PALETTE[0], name="records", customdata=np.asarray(values) / n,
                  hovertemplate="%{x}<br>%{y:,} records (%{customdata:.2%})<extra></extra>")
    title = f"Records per value of '{user_text(sa)}'"
    if left:
        title += f" (the {len(names)} most frequent of {len(names) + left:,} values)"
    # type category: codes such as '205.4' are labels, not numbers
    return _base([bars], title, f"value of {user_text(sa)}", "records (count)", height=380, x={"type": "category"})


def sa_before_after(labels: Sequence, before: np.ndarray, after: np.ndarray, sa: str,
                    after_label: str = "published", top: int = 40) -> go.Figure:
    """Grouped bars: records per sensitive value in the original and in the release."""
    after_label = _hover_safe(str(after_label))  # may name a published table: text, not markup or a template
    names, order, left = _top(labels, before, top)
    before = np.asarray(before, dtype=float)[order]
    after = np.asarray(after, dtype=float)[order]
    bars = [go.Bar(x=names, y=before, name="original", marker_color=TRUTH,
                   hovertemplate="%{x}<br>original: %{y:,.0f} records<extra></extra>"),
            go.Bar(x=names, y=after, name=after_label, marker_color=PALETTE[1],
                   marker_pattern_shape=palette.pattern(1),
                   hovertemplate="%{x}<br>" + after_label + ": %{y:,.1f} records<extra></extra>")]
    title = f"Records per value of '{user_text(sa)}': original vs {after_label}"
    if left:
        title += f" (the {len(names)} most frequent of {len(names) + left:,} values)"
    return _base(bars, title, f"value of {user_text(sa)}", "records (count)", height=400, legend=LEGEND_ON_TOP,
                 x={"type": "category"}, barmode="group")


def sa_overlay(labels: Sequence, original: np.ndarray, published: Mapping[str, np.ndarray | None], sa: str,
               top: int = 40) -> go.Figure:
    """Records per sensitive value: the original as grey bars, each named release overlaid as a line of markers.

    ``published[name]`` is aligned with ``labels`` (None: that release has
    no table carrying the SA, left out and said so in the legend title).
    Lines rather than more bar groups keep up to six releases readable on
    one chart: the eye follows each line against the grey bars.
    """
    names, order, left = _top(labels, original, top)
    traces = [go.Bar(x=names, y=np.asarray(original, dtype=float)[order], name="original", marker_color=TRUTH,
                     hovertemplate="%{x}<br>original: %{y:,.0f} records<extra></extra>")]
    missing = []
    for i, (name, counts) in enumerate(published.items()):
        if counts is None:
            missing.append(_hover_safe(str(name)))
            continue
        traces.append(go.Scatter(
            x=names, y=np.asarray(counts, dtype=float)[order], name=_hover_safe(str(name)), mode="lines+markers",
            line={"color": PALETTE[(i + 1) % len(PALETTE)], "dash": _LINE_DASHES[i % len(_LINE_DASHES)]},
            hovertemplate="%{x}<br>" + _hover_safe(str(name)) + ": %{y:,.1f} records<extra></extra>"))
    title = f"Records per value of '{user_text(sa)}': original and each pinned release"
    if left:
        title += f" (the {len(names)} most frequent of {len(names) + left:,} values)"
    legend = {**LEGEND_ON_TOP, "title": {"text": "no SA table: " + ", ".join(missing)}} if missing else LEGEND_ON_TOP
    return _base(traces, title, f"value of {sa}", "records (count)", height=420, legend=legend,
                 x={"type": "category"})


_LINE_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def _hover_safe(text: str) -> str:
    """User text (a pin name) as plotly label text: markup escaped, braces that a template would read replaced."""
    import html

    return html.escape(text).replace("{", "(").replace("}", ")")


# ---------------------------------------------------------------- bounds
def _style(style: str | None) -> dict:
    """Plotly keyword arguments for a :class:`Curve` style string.

    Styles may combine words with ``+`` or spaces: ``"dash"``, ``"dot"``,
    ``"markers"``, ``"lines+markers"``, ``"step"``.
    """
    out: dict = {"mode": "lines", "line": {}}
    if not style:
        return out
    words = set(style.replace("+", " ").split())
    if "markers" in words and not ({"lines"} | _DASHES | {"step"}) & words:
        out["mode"] = "markers"
    elif "markers" in words:
        out["mode"] = "lines+markers"
    dash = next((w for w in words if w in _DASHES), None)
    if dash:
        out["line"]["dash"] = dash
    if "step" in words:
        out["line"]["shape"] = "hv"
    return out


def curve_figure(curve) -> go.Figure:
    """Draw a :class:`core.bounds.Curve`: every series labelled, styles, reference lines, log axes.

    The first series (the exact value, by the bound modules' convention) is
    drawn solid and on top; bounds and the published formulas use the dashes
    and dots their :attr:`Curve.styles` ask for, so exact, bound and
    as-published stay distinguishable in greyscale too.
    """
    x = np.asarray(curve.x, dtype=float)
    fig = go.Figure()
    keys = list(curve.series)
    # draw the first (exact) series last so it stays on top
    for rank, key in reversed(list(enumerate(keys))):
        y = np.asarray(curve.series[key], dtype=float)
        kw = _style(curve.styles.get(key))
        colour = PALETTE[rank % len(PALETTE)]
        # solid series (the exact values) thicker than the dashed/dotted bounds
        line = {"color": colour, "width": 2 if kw["line"].get("dash") else 3, **kw["line"]}
        y_plot = np.where(np.isfinite(y), y, np.nan)
        if curve.log_y:
            y_plot = np.where(y_plot > 0, y_plot, np.nan)
        fig.add_trace(go.Scatter(
            x=x, y=y_plot, name=curve.label(key), mode=kw["mode"], line=line,
            marker={"color": colour, "size": 8},
            hovertemplate=f"{curve.label(key)}<br>x = %{{x:,.4g}}<br>y = %{{y:.4g}}<extra></extra>",
            legendrank=rank,
        ))
    # the lines are shapes (data coordinates on any axis type); their labels are separate annotations, whose
    # position on a log axis is the value's log10: add_vline(annotation_text=...) put "x = 100" at 10^100 and
    # stretched the differential-inference chart's x axis to 1e99
    for name, value in curve.hlines.items():
        v = float(value)
        fig.add_hline(y=v, line={"color": "#666666", "dash": "longdash", "width": 1})
        if not curve.log_y or v > 0:
            fig.add_annotation(x=1, xref="x domain", y=math.log10(v) if curve.log_y else v, yref="y",
                               text=f"{name} = {v:.4g}", showarrow=False, xanchor="right", yanchor="bottom")
    for name, value in getattr(curve, "vlines", {}).items():
        v = float(value)
        fig.add_vline(x=v, line={"color": "#666666", "dash": "dot", "width": 1})
        if not curve.log_x or v > 0:
            fig.add_annotation(x=math.log10(v) if curve.log_x else v, xref="x", y=1, yref="y domain",
                               text=f"{name} = {v:.4g}", showarrow=False, xanchor="right", yanchor="top")
    if curve.log_x and len(x[np.isfinite(x) & (x > 0)]):  # the range the data spans, never an annotation's
        fin = x[np.isfinite(x) & (x > 0)]
        lines = [float(v) for v in getattr(curve, "vlines", {}).values() if float(v) > 0]
        lo, hi = min(fin.min(), *lines) if lines else fin.min(), max(fin.max(), *lines) if lines else fin.max()
        pad = 0.03 * max(math.log10(hi) - math.log10(lo), 1e-9)
        fig.update_xaxes(range=[math.log10(lo) - pad, math.log10(hi) + pad])
    _base(fig, curve.title, curve.x_label, curve.y_label, height=460)
    if curve.log_x:
        fig.update_xaxes(type="log")
    if curve.log_y:
        fig.update_yaxes(type="log", exponentformat="power")
    return fig


# ---------------------------------------------------------------- query error
def band_errors(bands: Sequence[str], errors: Mapping[str, Sequence[float | None]],
                log_y: bool = True) -> go.Figure:
    """Grouped bars: mean relative error per band (x), one bar per mechanism.

    ``errors[mechanism][i]`` is the mean relative error of band ``bands[i]``
    (``None`` when the band has no query); a key that is a mechanism's name
    or title gets the mechanism's fixed colour (:data:`MECHANISM_COLOURS`).
    """
    bars = []
    for i, (name, values) in enumerate(errors.items()):
        y = np.array([np.nan if v is None else float(v) for v in values])
        shown = user_text(name)  # a pin's name is user text: shown as typed, never as markup
        bars.append(go.Bar(
            x=list(bands), y=y, name=shown, marker_color=mechanism_colour(name) or PALETTE[i % len(PALETTE)],
            marker_pattern_shape=palette.pattern(i),  # series told apart by pattern too, not by colour alone
            hovertemplate=f"{shown}<br>%{{x}}: mean relative error %{{y:.3g}}<extra></extra>",
        ))
    return _base(bars, "Mean relative error by query band", "query band (true count or selectivity)",
                 "mean relative error" + (" (log scale)" if log_y else ""), barmode="group", x={"type": "category"},
                 y=LOG_AXIS if log_y else None)


def sweep_errors(x: Sequence[float], errors: Mapping[str, Sequence[float | None]], x_label: str,
                 log_y: bool = True, log_x: bool = False) -> go.Figure:
    """Lines: mean relative error per band (one line each) against a swept parameter."""
    lines = []
    for i, (band, values) in enumerate(errors.items()):
        y = np.array([np.nan if v is None else float(v) for v in values])
        lines.append(go.Scatter(
            x=list(x), y=y, name=band, mode="lines+markers",
            line={"color": PALETTE[i % len(PALETTE)]},
            hovertemplate=f"{band}<br>{x_label} = %{{x:.4g}}<br>mean relative error %{{y:.3g}}<extra></extra>",
        ))
    return _base(lines, f"Mean relative error by band against {x_label}", x_label,
                 "mean relative error" + (" (log scale)" if log_y else ""), x={"type": "log"} if log_x else None,
                 y=LOG_AXIS if log_y else None)


def estimate_scatter(true: np.ndarray, estimates: np.ndarray, band: np.ndarray,
                     band_names: Sequence[str], text: Sequence[str] | None = None,
                     title: str = "Estimated vs true answer", floor: float = 0.5,
                     max_points: int = 6000) -> go.Figure:
    """Log-log scatter of estimated against true counts, coloured by band, with the y = x line.

    Estimates below ``floor`` (zero or negative, which unbiased estimators
    produce) are drawn at ``floor`` so they stay visible on log axes; the
    hover text gives the value as estimated.
    """
    true = np.asarray(true, dtype=float)
    est = np.asarray(estimates, dtype=float)
    band = np.asarray(band)
    keep = true > 0
    idx = np.flatnonzero(keep)
    if len(idx) > max_points:  # thin evenly, deterministic
        idx = idx[np.linspace(0, len(idx) - 1, max_points).astype(int)]
    traces = []
    for b, name in enumerate(band_names):
        sel = idx[band[idx] == b]
        if not len(sel):
            continue
        # numbers stay numeric arrays (sent packed) and the query texts a plain list: an object array mixing
        # both was serialised value by value and made this the slowest figure of the Query error page
        traces.append(go.Scattergl(
            x=true[sel], y=np.maximum(est[sel], floor), mode="markers", name=name,
            marker={"color": PALETTE[b % len(PALETTE)], "size": 5, "opacity": 0.6},
            customdata=est[sel], text=[user_text(text[i]) for i in sel] if text is not None else None,
            hovertemplate=("%{text}<br>" if text is not None else "")
                          + "true %{x:,.0f}, estimated %{customdata:,.1f}<extra>" + name + "</extra>",
        ))
    if len(idx):
        lo = max(floor, float(min(true[idx].min(), np.maximum(est[idx], floor).min())))
        hi = float(max(true[idx].max(), est[idx].max()))
        traces.append(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="estimate = true",
                                 line={"color": TRUTH, "dash": "dash", "width": 1}, hoverinfo="skip"))
    return _base(traces, title, "true answer (records, log scale)", "estimated answer (records, log scale)",
                 height=520, x=LOG_AXIS, y=LOG_AXIS)


# ---------------------------------------------------------------- values against a bound
#: values this close to their bound count as at the bound (c/|G| and |G|/prod|dom| carry float noise)
BOUND_TOLERANCE = 1e-12


def bound_bins(values: np.ndarray, bound: float, bins: int = 40) -> tuple[np.ndarray, float, np.ndarray]:
    """Right-closed bins with an edge on ``bound``: ``(left edges, width, counts)``.

    Bin ``i`` holds the values in ``(left[i], left[i] + width]``, and
    ``bound`` is a right edge, so a value equal to the bound (within
    :data:`BOUND_TOLERANCE`) is counted in the bin ending at the bound and
    reads as meeting it, never in a bar that straddles or lies past the
    bound line.  About ``bins`` bins span the values and the bound; when
    every value equals the bound the one bar ends at it.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    bound = float(bound)
    v = np.where(np.abs(v - bound) <= BOUND_TOLERANCE, bound, v)
    lo = min(float(v.min()), bound) if len(v) else bound
    hi = max(float(v.max()), bound) if len(v) else bound
    span = hi - lo
    width = span / bins if span > 0 else (abs(bound) / 10 or 0.1)
    # bin i (from below) covers (bound + (i - 1) w, bound + i w]; index i = ceil((v - bound) / w)
    idx = np.ceil(np.round((v - bound) / width, 9)).astype(np.int64) if len(v) else np.zeros(0, np.int64)
    first = int(idx.min()) if len(idx) else 0
    last = int(idx.max()) if len(idx) else 0
    first, last = min(first, 0), max(last, 0)  # the bins reach the bound from either side
    counts = np.bincount(idx - first, minlength=last - first + 1)
    left = bound + (np.arange(first, last + 1) - 1) * width
    return left, width, counts


def bound_histograms(presence: np.ndarray, association: np.ndarray, alpha: float, beta: float,
                     title_suffix: str = "") -> go.Figure:
    """Two histograms over groups, presence against α and association against β, binned on the bounds.

    Bins are right-closed with an edge on each bound (:func:`bound_bins`):
    a group exactly at the bound is drawn left of the dashed line, in the
    colour of groups that meet it; only groups above the bound are drawn
    right of the line, in the warning colour.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=(f"presence per group{title_suffix}",
                                                        f"association per group{title_suffix}"))
    shown: set[str] = set()
    for col, (vals, bound, name) in enumerate(((presence, alpha, "α"), (association, beta, "β")), start=1):
        left, width, counts = bound_bins(vals, bound)
        above = left >= float(bound) - BOUND_TOLERANCE
        for mask, colour, hatch, text in ((~above, MEETS, "", "groups meeting the bound"),
                                          (above, BREAKS, BREAKS_PATTERN, "groups above the bound")):
            keep = mask & (counts > 0)
            if not keep.any():
                continue
            fig.add_trace(go.Bar(
                x=(left[keep] + width / 2).tolist(), y=counts[keep].tolist(), width=width, marker_color=colour,
                marker_pattern_shape=hatch,
                name=text, legendgroup=text, showlegend=text not in shown,
                customdata=np.stack([left[keep], left[keep] + width], axis=1).tolist(),
                hovertemplate=f"{name}: (%{{customdata[0]:.4g}}, %{{customdata[1]:.4g}}]<br>%{{y:,}} groups"
                              f"<extra>{text}</extra>"), row=1, col=col)
            shown.add(text)
        fig.add_vline(x=float(bound), line={"color": TRUTH, "dash": "dash"},
                      annotation_text=f"{name} = {float(bound):g}", row=1, col=col)
        # plotly's autorange around a single narrow bar runs far below zero: fix the range to the bins
        lo, hi = min(0.0, float(left[0])), max(float(left[-1]) + width, float(bound)) + width
        fig.update_xaxes(range=[lo, hi], row=1, col=col)
    fig.update_xaxes(title_text="Pr(t ∈ T), presence", row=1, col=1)
    fig.update_xaxes(title_text="Pr((t, s) ∈ T | t ∈ T), association", row=1, col=2)
    fig.update_yaxes(title_text="groups", row=1, col=1)
    fig.update_layout(height=360, margin={"l": 60, "r": 20, "t": 40, "b": 40}, bargap=0,
                      legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0})
    return fig


# ---------------------------------------------------------------- trade-offs
RISK_MEASURES = {
    "added_risk": "added risk: what the release teaches about people in it beyond people not in it (0-1, with its "
                  "95% interval; lower = more private)",
    "inference_lift": "inference lift over guessing the most common value (×; lower = more private)",
    "inference_accuracy": "share of records whose sensitive value the adversary guesses (lower = more private)",
    "small_sum_disclosure": "share of small counts (1-10) answered within 30% (lower = more private)",
    "presence": "largest chance a person is known to be in the table (lower = more private)",
}
UTILITY_MEASURES = {
    "large_error": "mean relative error of large counts (lower = more useful)",
    "small_error": "mean relative error of small counts (1-10)",
}


#: each measure's short name, for a picker whose box cuts a long label (the axis title keeps the full one)
MEASURE_NAMES = {"added_risk": "added risk (0-1)", "inference_lift": "inference lift (×)",
                 "inference_accuracy": "inference accuracy", "small_sum_disclosure": "small counts disclosed",
                 "presence": "presence", "large_error": "error of large counts", "small_error": "error of small counts"}


def measure_name(key: str) -> str:
    """The short name of a map measure (:data:`MEASURE_NAMES`), or its key."""
    return MEASURE_NAMES.get(key, key)


def _point_hover(p, title: str) -> str:
    params = ", ".join(f"{key} = {user_text(_short(v))}" for key, v in p.params.items())
    scale = getattr(p, "added_risk", None)
    added = ("" if scale is None else f"added risk {scale:.3f} (95% interval {p.risk_low:.3f}-{p.risk_high:.3f}): "
             f"guessed right {p.train_success:.1%} in the table, {p.control_success:.1%} outside<br>")
    return (f"<b>{title}</b><br>{params or 'no parameters'}<br>" + added +
            f"inference accuracy {p.inference_accuracy:.1%} (lift {p.inference_lift:.2f}×)<br>"
            f"small counts within 30%: {_pct(p.small_sum_disclosure)}<br>"
            f"presence {p.presence:.3g}<br>large-count error {_num(p.large_error)}, "
            f"small-count error {_num(p.small_error)}"
            + (f"<br>guarantee: {_VERDICT_WORDS.get(p.verdict, p.verdict)}" if getattr(p, "verdict", None) else ""))


_VERDICT_WORDS = {"meets": "meets it", "fails": "does not meet it", "cannot_run": "cannot run"}


def risk_utility_map(points: Sequence, front: Sequence[int] = (), risk: str = "inference_lift",
                     utility: str = "large_error", titles: Mapping[str, str] | None = None,
                     log_y: bool = True, chosen=None) -> go.Figure:
    """One trace per mechanism along its parameter sweep; the Pareto front as a dashed line.

    ``points`` are :class:`core.risk.Point`; hover shows the parameters and
    every measure.  Points towards the lower left are better on both axes.
    ``chosen`` (a Point, e.g. the setting a report is about, which need not
    be on any sweep) is drawn as a large star with its own legend entry.
    A point whose release does not meet its mechanism's own guarantee
    (``Point.verdict == "fails"``, :mod:`core.guarantee`) is drawn hollow,
    with a legend entry saying so.
    """
    titles = titles or {}
    traces = []
    by_mech: dict[str, list[int]] = {}
    for i, p in enumerate(points):
        by_mech.setdefault(p.mechanism, []).append(i)
    for k, (mech, idx) in enumerate(by_mech.items()):
        xs = [getattr(points[i], risk) for i in idx]
        ys = [getattr(points[i], utility) for i in idx]
        hover = [_point_hover(points[i], titles.get(mech, mech)) for i in idx]
        colour = MECHANISM_COLOURS.get(mech, PALETTE[k % len(PALETTE)])
        base = MECHANISM_SYMBOLS.get(mech, "circle")
        symbols = [base + "-open" if getattr(points[i], "verdict", None) == "fails" else base for i in idx]
        error_x = None
        if risk == "added_risk":  # the risk scale's 95% interval as error bars
            lo = [getattr(points[i], "risk_low", None) for i in idx]
            hi = [getattr(points[i], "risk_high", None) for i in idx]
            error_x = {"type": "data", "symmetric": False, "color": colour, "thickness": 1,
                       "array": [np.nan if h is None or x is None else h - x for h, x in zip(hi, xs)],
                       "arrayminus": [np.nan if v is None or x is None else x - v for v, x in zip(lo, xs)]}
        traces.append(go.Scatter(
            x=[np.nan if v is None else v for v in xs], y=[np.nan if v is None else v for v in ys],
            error_x=error_x,
            mode="lines+markers", name=titles.get(mech, mech), customdata=idx,
            marker={"color": colour, "size": 10, "symbol": symbols, "line": {"color": colour, "width": 2}},
            line={"color": colour, "width": 1},
            hovertext=hover, hovertemplate="%{hovertext}<extra></extra>",
        ))
    failing = [i for i, p in enumerate(points) if getattr(p, "verdict", None) == "fails"]
    if failing:  # hollow and crossed through: a different shape, not only a different fill (WCAG 1.4.1)
        traces.append(go.Scatter(
            x=[np.nan if (v := getattr(points[i], risk)) is None else v for i in failing],
            y=[np.nan if (v := getattr(points[i], utility)) is None else v for i in failing],
            mode="markers", hoverinfo="skip", name="hollow and crossed: does not meet its own guarantee",
            customdata=failing,  # a click on the cross selects the point under it
            marker={"symbol": palette.FAILS_SYMBOL, "size": 16, "color": TRUTH, "line": {"color": TRUTH, "width": 1.5}}))
    if front:
        fx = [getattr(points[i], risk) for i in front]
        fy = [getattr(points[i], utility) for i in front]
        traces.append(go.Scatter(x=fx, y=fy, mode="lines", name="Pareto front (best trade-offs)",
                                 line={"color": TRUTH, "dash": "dash", "width": 2, "shape": "hv"},
                                 hoverinfo="skip"))
    if chosen is not None:
        x, y = getattr(chosen, risk), getattr(chosen, utility)
        title = titles.get(chosen.mechanism, chosen.mechanism)
        params = ", ".join(f"{key} = {user_text(_short(v))}" for key, v in chosen.params.items()) or "no parameters"
        traces.append(go.Scatter(
            x=[np.nan if x is None else x], y=[np.nan if y is None else y], mode="markers",
            name=f"chosen setting: {title} at {params}",
            marker={"symbol": "star", "size": 22, "color": MECHANISM_COLOURS.get(chosen.mechanism, TRUTH),
                    "line": {"color": TRUTH, "width": 1.5}},
            hovertext=["<b>chosen setting</b><br>" + _point_hover(chosen, title)],
            hovertemplate="%{hovertext}<extra></extra>",
        ))
    return _base(traces, "Risk against utility: every mechanism along its main parameter",
                 RISK_MEASURES.get(risk, risk),
                 UTILITY_MEASURES.get(utility, utility) + (" (log scale)" if log_y else ""), height=560,
                 y=LOG_AXIS if log_y else None)


def _short(v) -> str:
    from .params import format_value

    return format_value(v)


def _pct(v) -> str:
    return "n/a" if v is None else f"{v:.0%}"


def _num(v) -> str:
    return "n/a" if v is None else f"{v:.3g}"


# ---------------------------------------------------------------- text alternatives (WCAG 1.1.1)
_KINDS = {"bar": "Bar chart", "histogram": "Histogram", "scatter": "Chart", "scattergl": "Scatter plot"}


def plain_text(label) -> str:
    """Plotly label text as plain text: ``<br>`` a space, other tags dropped, entities read (``&lt;`` is ``<``)."""
    import html
    import re

    text = re.sub(r"<br\s*/?>", " ", str(label or ""), flags=re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", text)).strip()


def _axis_title(fig: go.Figure, axis: str) -> str:
    ax = getattr(fig.layout, axis, None)
    return plain_text(ax.title.text) if ax is not None and ax.title and ax.title.text else ""


def _shown(trace) -> bool:
    """A trace with something drawn (legend placeholders hold only NaN)."""
    values = trace.y if getattr(trace, "y", None) is not None else getattr(trace, "x", None)
    if values is None:
        return False
    arr = np.asarray(values, dtype=object).ravel()
    return any(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in arr)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def figure_summary(fig: go.Figure) -> str:
    """One sentence saying what a figure draws: its kind and title, its series, what the axes measure.

    The default text alternative of a chart (pages and report); a caller
    with something more specific to say passes its own sentence.

    >>> figure_summary(band_errors(["1-10", "11-100"], {"uniform": [0.5, 0.1]}))
    'Bar chart "Mean relative error by query band": 1 series (uniform); x axis: query band (true count or selectivity) (2 values); y axis: mean relative error (log scale).'
    """
    traces = [t for t in fig.data if _shown(t)]
    kinds = {t.type for t in traces}
    kind = _KINDS.get(kinds.pop(), "Chart") if len(kinds) == 1 else "Chart"
    title = plain_text(fig.layout.title.text) if fig.layout.title and fig.layout.title.text else ""
    names = [_clip(plain_text(t.name), 40) for t in traces if t.name]
    listed = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    x_title, y_title = _axis_title(fig, "xaxis"), _axis_title(fig, "yaxis")
    xs = {v for t in traces if getattr(t, "x", None) is not None for v in np.asarray(t.x, dtype=object).ravel()}
    text = f'{kind} "{title}"' if title else kind
    text += f": {len(traces)} series" + (f" ({listed})" if listed else "")
    if x_title:
        text += f"; x axis: {x_title} ({len(xs):,} values)"
    if y_title:
        text += f"; y axis: {y_title}"
    return text + "."


def figure_table(fig: go.Figure, max_rows: int = 20_000):
    """The numbers a figure draws, as a ``pandas.DataFrame`` (the "show as table" of pages and report).

    One row per drawn point or bar: the series (the legend name), the
    panel (a subplot's x-axis title, when the figure has several), x and y
    under their axis titles, and the hover text when a point carries one
    (the trade-off map's parameters and measures).  A ``go.Histogram`` of
    raw values is tabulated as the counts of its bins (numpy's bins, as
    many as the trace asks, ``nbinsx``; plotly may place its edges a little
    differently).  Reference lines (``add_vline``) are shapes, not data, and
    their value is in the caption or annotation.  At most ``max_rows`` rows
    (evenly thinned), said in a last row.
    """
    import pandas as pd

    x_label = _axis_title(fig, "xaxis") or "x"
    y_label = _axis_title(fig, "yaxis") or "y"
    if x_label == y_label:
        x_label, y_label = f"{x_label} (x)", f"{y_label} (y)"
    panels = {t.xaxis for t in fig.data if getattr(t, "xaxis", None)}
    rows = []
    for i, t in enumerate(fig.data):
        if not _shown(t):
            continue
        name = plain_text(t.name) or f"series {i + 1}"
        if t.type == "histogram" and t.x is not None and t.y is None:
            v = np.asarray(t.x, dtype=float)
            v = v[np.isfinite(v)]
            counts, edges = np.histogram(v, bins=int(t.nbinsx or 40))
            xs = [f"{a:.4g} to {b:.4g}" for a, b in zip(edges[:-1], edges[1:])]
            ys = counts.tolist()
        else:
            n = len(t.y) if t.y is not None else len(t.x)
            xs = list(t.x) if t.x is not None else list(range(n))
            ys = list(t.y) if t.y is not None else [None] * n
        hover = t.hovertext if getattr(t, "hovertext", None) is not None else getattr(t, "text", None)
        hover = list(hover) if hover is not None and not isinstance(hover, str) and len(hover) == len(xs) else None
        panel = _axis_title(fig, "xaxis" + (t.xaxis or "x")[1:]) if len(panels) > 1 else None
        for j, (x, y) in enumerate(zip(xs, ys)):
            row = {"series": name}
            if panel is not None:
                row["panel"] = panel
            row[x_label] = plain_text(x) if isinstance(x, str) else x
            row[y_label] = None if y is None or (isinstance(y, float) and math.isnan(y)) else y
            if hover is not None:
                row["details"] = plain_text(hover[j])
            rows.append(row)
    frame = pd.DataFrame(rows)
    if len(frame) > max_rows:
        keep = np.linspace(0, len(frame) - 1, max_rows).astype(int)
        total = len(frame)
        frame = frame.iloc[keep].reset_index(drop=True)
        frame.loc[len(frame), "series"] = f"(every {total / max_rows:.1f}th of {total:,} rows shown)"
    return frame
