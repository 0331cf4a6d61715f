"""Widgets generated from declared parameters (:class:`core.params.Param`).

One function, :func:`param_inputs`, draws a widget per parameter and returns
the raw values; the pages never name a parameter.  The widget kind follows
the declaration:

* ``float`` with both ends and at most 1,000 steps, or any ``presets`` ->
  ``st.select_slider`` over the multiples of the step plus the default and
  presets exactly (:func:`grid_options`); ``int`` with both ends and at most
  1,000 steps -> ``st.slider``; otherwise ``st.number_input``;
* ``choice`` -> ``st.radio`` (up to 4 choices) or ``st.selectbox``;
* ``bool`` -> ``st.toggle``; ``text`` -> ``st.text_input``;
* ``optional`` -> a checkbox "derive automatically" and, when unticked, the
  widget above seeded with the derived value.

Labels carry the symbol and the name (``γ (gamma)``), help texts the
meaning, the range, the paper's default and which way is safer.  Widget keys
are ``w_<namespace>_<param>``; values are seeded from and copied back into
the caller's plain store, which is the truth: a widget is drawn from the
store unless the user has just moved it (:func:`pages.ui.state.bind_widget`),
so a fix, an undo or a switch back to a mechanism always shows the value
the release uses.  Each widget is given that value as its default too
(``value=``, ``index=``): drawn from the session state alone, a slider was
first painted at its minimum (gamma = 2 for a moment before gamma = 7), and
a widget whose state the browser dropped showed and sent back its default
(:func:`pages.ui.state.bind_widget`).  The key alone names a widget
(Streamlit leaves the default out of its id), so a moved slider keeps its
state.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import streamlit as st

from core.params import Param

from .fmt import number, param_text, preset_label, safer_text
from .state import auto_key, bind_widget, drawn, index_of, widget_key  # noqa: F401  (widget_key, auto_key: re-exported)

MAX_SLIDER_STEPS = 1000


def symbol(p: Param) -> str:
    return p.symbol or p.name


def label(p: Param) -> str:
    return p.name if not p.symbol or p.symbol == p.name else f"{p.symbol} ({p.name})"


def help_text(p: Param) -> str:
    default = "derived automatically" if p.default is None else param_text(p.default)
    parts = [p.help, f"Allowed: {p.describe()}.", f"Paper default: {default}"
             + (f" ({p.paper})." if p.paper else ".")]
    safer = safer_text(p.safer)
    if safer:
        parts.append(safer)
    return "\n\n".join(parts)


def _step(p: Param) -> float:
    if p.step:
        return p.step
    if p.kind == "int":
        return 1
    if p.low is not None and p.high is not None:
        return (p.high - p.low) / 100
    return 0.01


def _range(p: Param) -> tuple[float | None, float | None]:
    """Widget ends: the declared interval, moved one step inward at an open end."""
    step = _step(p)
    lo, hi = p.low, p.high
    if lo is not None and p.closed in {"right", "neither"}:
        lo = lo + step
    if hi is not None and p.closed in {"left", "neither"}:
        hi = hi - step
    if p.kind == "int":
        lo = None if lo is None else int(math.ceil(lo))
        hi = None if hi is None else int(math.floor(hi))
    else:
        lo = None if lo is None else float(lo)
        hi = None if hi is None else float(hi)
    return lo, hi


def _clamp(p: Param, value: Any) -> Any:
    lo, hi = _range(p)
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float(lo if lo is not None else 0)
    if lo is not None:
        v = max(v, lo)
    if hi is not None:
        v = min(v, hi)
    return int(round(v)) if p.kind == "int" else float(v)


def _decimals(step: float) -> int:
    if step >= 1:
        return 0
    return max(1, min(6, int(math.ceil(-math.log10(step) - 1e-9))))


def _fallback(p: Param) -> Any:
    lo, hi = _range(p)
    if lo is not None and hi is not None:
        return _clamp(p, (lo + hi) / 2)
    return _clamp(p, lo if lo is not None else (hi if hi is not None else 0))


def grid_options(p: Param, extra: Sequence[Any] = ()) -> list[float] | list[int] | None:
    """The values a slider over ``p`` stops at, or None when ``p`` is not drawn as one.

    A float parameter with both ends and a step (at most
    :data:`MAX_SLIDER_STEPS` of them), or any parameter with presets, gets a
    ``select_slider`` over the multiples of its step inside its interval
    plus, exactly, its default, its presets (the papers' values: 1/13,
    ln 3, 1/7) and any valid value in ``extra`` (the stored value, one set
    by a button).  So the arrow keys move by one fine step and the papers'
    values are stops of their own, labelled as the papers write them
    (``1/13 ≈ 0.0769``), not rounded to the nearest step.  Integer
    parameters without presets keep ``st.slider`` (their steps are exact).
    """
    if p.kind not in {"int", "float"} or (p.kind == "int" and not p.presets):
        return None
    step = p.step  # a declared step only: an undeclared one (a hundredth of the range) is no fine step
    if p.low is None or p.high is None or not step or (p.high - p.low) / step > MAX_SLIDER_STEPS:
        if not p.presets:
            return None
        grid = []
    else:
        grid = [float(f"{k * step:.12g}") for k in range(int(math.ceil(p.low / step - 1e-9)),
                                                          int(math.floor(p.high / step + 1e-9)) + 1)]
    exact = [p.default, *p.presets, *extra]
    values: dict[float, float] = {}
    for v in grid:
        if p.contains(v):
            values[round(v, 9)] = v
    for v in exact:  # the papers' values replace a grid point they round to
        try:
            v = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(v) and p.contains(v):
            values[round(v, 9)] = v
    if p.kind == "int":
        return sorted({int(round(v)) for v in values.values()})
    return sorted(values.values())


def _number_widget(p: Param, key: str, start: Any, disabled: bool = False) -> Any:
    """Draw the widget for a numeric (or choice/bool/text) parameter from ``start``; return its value."""
    return drawn(key, _draw(p, key, start, disabled))


def _draw(p: Param, key: str, start: Any, disabled: bool = False) -> Any:
    text = label(p)
    helps = help_text(p)
    if p.kind == "choice":
        options = list(p.choices)
        at = index_of(options, bind_widget(key, start if start in options else options[0], lambda v: v in options))
        if len(options) <= 4:
            return st.radio(text, options, key=key, index=at, help=helps, horizontal=True, disabled=disabled,
                            format_func=str)
        return st.selectbox(text, options, key=key, index=at, help=helps, disabled=disabled, format_func=str)
    if p.kind == "bool":
        shown = bind_widget(key, bool(start), lambda v: isinstance(v, bool))
        return st.toggle(text, key=key, value=shown, help=helps, disabled=disabled)
    if p.kind == "text":
        shown = bind_widget(key, "" if start is None else str(start), lambda v: isinstance(v, str))
        return st.text_input(text, key=key, value=shown, help=helps, disabled=disabled)
    options = grid_options(p, (start, st.session_state.get(key)))
    if options is not None:
        value = _clamp(p, start)
        shown = bind_widget(key, min(options, key=lambda o: abs(o - value)), lambda v: v in options)
        return st.select_slider(text, options=options, value=shown, key=key, help=helps, disabled=disabled,
                                format_func=preset_label)
    lo, hi = _range(p)
    step = _step(p)
    value = _clamp(p, start)
    if p.kind == "int":
        step = max(1, int(step))
        value = int(value)
    else:
        step = float(step)
    is_valid = (lambda v: isinstance(v, int) and not isinstance(v, bool)) if p.kind == "int" else \
        (lambda v: isinstance(v, float))
    shown = bind_widget(key, value, lambda v: is_valid(v) and p.contains(v))
    # a float without a declared step (differential inference x in [1, 1e7]) is typed: a hundredth of its range
    # as the step would make its default unreachable
    if lo is not None and hi is not None and (hi - lo) / step <= MAX_SLIDER_STEPS and (p.kind == "int" or p.step):
        fmt = None if p.kind == "int" else f"%.{_decimals(step)}f"
        return st.slider(text, min_value=lo, max_value=hi, step=step, value=shown, key=key, help=helps,
                         disabled=disabled, format=fmt)
    if p.kind == "float" and not p.step and lo is not None and hi is not None and hi - lo >= 100:
        step = 1.0  # a typed float over a wide range (x in [1, 1e7]): +/- moves by one, not a hundredth of it
    fmt = None if p.kind == "int" else f"%.{max(_decimals(step), 3)}f"
    return st.number_input(text, min_value=lo, max_value=hi, step=step, value=shown, key=key, help=helps,
                           disabled=disabled, format=fmt)


def param_inputs(params: Sequence[Param], store: Mapping[str, Any], ns: str,
                 derive: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None,
                 columns: int = 3, locked: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Draw one widget per parameter; return ``{name: value}`` (``None`` = derive).

    ``store`` holds the stored values (missing = default); ``derive(raw)``
    computes derived values (e.g. a mechanism's ``derived``) and seeds an
    optional parameter's widget when the user unticks "derive".  ``locked``
    parameters are shown with the given values and cannot be moved (e.g. the
    Bounds page following the release).
    """
    raw: dict[str, Any] = {}
    if not params:
        st.caption("Nothing to set: no parameters are declared.")
        return raw
    cols = st.columns(columns)
    for i, p in enumerate(params):
        current = store.get(p.name, p.default)
        with cols[i % len(cols)]:
            if locked and p.name in locked:
                key = widget_key(ns, p)
                value = locked[p.name]
                if p.kind in {"int", "float"}:
                    value = _clamp(p, value)
                elif p.kind == "text":
                    value = "" if value is None else str(value)
                st.session_state[key] = value
                raw[p.name] = _number_widget(p, key, value, disabled=True)
                continue
            if p.optional:
                akey = auto_key(ns, p)
                shown = bind_widget(akey, current is None, lambda v: isinstance(v, bool))
                numeric = p.kind in {"int", "float"}
                text = f"derive {symbol(p)} automatically" if numeric else f"leave {symbol(p)} unset"
                auto = drawn(akey, st.checkbox(text, key=akey, value=shown,
                                   help=f"{p.help}\n\nTicked: {symbol(p)} is "
                                        + ("computed from the other parameters (see Derived values)."
                                           if numeric else "not used.")))
                if auto:
                    raw[p.name] = None
                    st.caption(f"{label(p)}: " + ("derived from the other parameters." if numeric else "unset."))
                    continue
                if current is None:
                    # a text parameter (a column name, a list of limits) starts empty: a made-up number such as
                    # "0.0" would be read as a column name (issue 12 item 2)
                    current = "" if p.kind == "text" else _derived_start(p, raw, store, params, derive)
            raw[p.name] = _number_widget(p, widget_key(ns, p), current)
    return raw


def _derived_start(p: Param, raw: dict, store: Mapping[str, Any], params: Sequence[Param],
                   derive: Callable | None) -> Any:
    if derive is not None:
        trial = {q.name: store.get(q.name, q.default) for q in params}
        trial.update(raw)
        trial[p.name] = None
        try:
            value = derive(trial).get(p.name)
            if value is not None and math.isfinite(float(value)):
                return value
        except Exception:  # derived values are a convenience here; fall back quietly
            pass
    return _fallback(p)


def set_values(params: Sequence[Param], ns: str, values: Mapping[str, Any]) -> None:
    """Set widgets to ``values`` (for a callback, e.g. "use gamma = 7"): next run draws them."""
    by_name = {p.name: p for p in params}
    for name, value in values.items():
        p = by_name.get(name)
        if p is None:
            continue
        if p.optional:
            st.session_state[auto_key(ns, p)] = value is None
        if value is not None:
            st.session_state[widget_key(ns, p)] = _clamp(p, value) if p.kind in {"int", "float"} else value


def summary(params: Sequence[Param], values: Mapping[str, Any]) -> str:
    """``γ = 5, p = derived``: a one-line summary of parameter values."""
    parts = []
    for p in params:
        v = values.get(p.name, p.default)
        shown = ("derived" if p.kind in {"int", "float"} else "unset") if v is None else number(v)
        parts.append(f"{symbol(p)} = {shown}")
    return ", ".join(parts) if parts else "no parameters"
