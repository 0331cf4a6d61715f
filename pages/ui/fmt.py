"""Number formatting and readable labels (no streamlit calls).

``param_text`` writes a parameter value the way the papers and the CLI do
(``1/13``, ``ln(3)``, ``auto``) so URLs and sweep lists stay exact and
short.  ``number`` formats a value for display.  ``readable`` turns a key of
a mechanism's derived values, a release's metadata or a curve's notes into
a label with its unit; core declares no labels for these yet, so known keys
are listed in :data:`LABELS` and anything else falls back to the key with
spaces (see the report: ``Curve``/``Mechanism`` could declare them).

A key may mean different things to different mechanisms or curves (SPLU's
``alpha`` is the largest small count, in records; Ambiguity's is the
presence bound, a probability).  Such keys are labelled per *scope* (the
mechanism or curve name that reports them) in :data:`SCOPED`, and their
unscoped label in :data:`LABELS` is the bare symbol with no unit, true for
every scope: callers pass ``scope`` to get the specific label.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from core.params import display_value, format_value  # noqa: F401  (display_value: the one display format)

#: key -> (label, unit); unit "" means a pure number, "%" a probability/share shown as percent too
LABELS: dict[str, tuple[str, str]] = {
    # uniform perturbation and friends
    "p": ("retention p", "probability"),
    "q": ("q (chance of each other value)", "probability"),
    "m": ("m (distinct SA values)", "values"),
    "gamma": ("γ", "ratio"),  # SPLU's γ is a group size: see SCOPED
    "beta": ("β", ""),  # see SCOPED
    "diagonal": ("P[x → x] (value unchanged)", "probability"),
    "off_diagonal": ("P[x → y] (each other value)", "probability"),
    "rho1": ("ρ₁, prior bound", "probability"),
    "rho2": ("ρ₂, posterior bound", "probability"),
    "rho2_guaranteed": ("ρ₂ guaranteed at this ρ₁", "probability"),
    "share_unchanged": ("records whose value did not change", "share"),
    "epsilon": ("ε (privacy budget per answer)", ""),
    "epsilon_per_answer": ("ε per answer (privacy budget)", ""),
    "noise_scale": ("Laplace noise scale 1/ε", "records"),
    "sensitivity": ("sensitivity Δf", "records"),
    "l": ("ℓ", "values"),
    "l_diversity": ("smallest group diversity", "values"),
    "groups": ("groups", "groups"),
    "max_posterior": ("largest posterior belief", "probability"),
    "largest_feasible_gamma": ("largest feasible γ", "values"),
    "q_groups_of_gamma_plus_1": ("q in groups of γ + 1", "probability"),
    # small domain randomization (sdr)
    "gamma_up": ("γ of UP (whole table)", "ratio"),
    "retention_up": ("UP retention p (whole table)", "probability"),
    "retention_pp": ("PP retention (record-weighted)", "probability"),
    "subtables": ("sub-tables", "sub-tables"),
    "initial_groups": ("initial groups t", "groups"),
    "theta_balance": ("θ (PP balancing level)", ""),
    "eps_part": ("ε(Part), PP's error bound", ""),
    "eps_up": ("ε(T), UP's error bound", ""),
    "delta": ("δ", "probability"),  # a different tail per scope: see SCOPED
    "protected_values": ("protected values (share ≤ ρ₁)", "values"),
    "largest_rho1_i": ("largest ρ₁ᵢ", "probability"),
    "every_rho1_i_below_rho2": ("every ρ₁ᵢ < ρ₂", ""),
    "max_posterior_protected": ("largest posterior, protected values", "probability"),
    "max_posterior_unprotected": ("largest posterior, unprotected values", "probability"),
    "unprotected_values": ("values not protected", ""),  # why differs per scope: see SCOPED
    "subtable_column": ("sub-table column", ""),
    "table_rows": ("|T| of your counts", "records"),
    "eps_part_at_counts": ("ε(Part) at your counts", ""),
    "eps_up_at_counts": ("ε(T) of UP at your counts", ""),
    "subtables_at_counts": ("sub-tables at your counts", "sub-tables"),
    "retention_up_at_counts": ("UP retention at your counts", "probability"),
    "retention_pp_at_counts": ("PP retention at your counts", "probability"),
    # curves
    "T_p": ("T_p (small-sum privacy)", "probability"),
    "binding_f": ("binding count f", "records"),
    "binding_count": ("binding count f", "records"),
    "eps": ("ε (relative error)", ""),
    "T_p_by_count": ("T_p(f) per count f", ""),
    "alpha": ("α", ""),  # SPLU's count, Ambiguity's probability: see SCOPED
    "T_E": ("T_E (accepted error chance)", "probability"),
    "T_f_exact": ("T_f exact", "records"),
    "T_f_corrected": ("T_f from corrected Chebyshev", "records"),
    "T_f_published": ("T_f as published (incorrect)", "records"),
    "epsilon_ldp": ("ε of local DP = ln γ", ""),
    "p_at_m": ("retention p at m", "probability"),
    "diagonal_at_m": ("P[x → x] at m", "probability"),
    "off_diagonal_at_m": ("P[x → y] at m", "probability"),
    "mu": ("μ (expected count)", "records"),
    "e": ("e (relative deviation, share of μ)", ""),
    "exact_upper_at_e": ("exact P[X ≥ (1+e)μ]", "probability"),
    "exact_lower_at_e": ("exact P[X ≤ (1−e)μ]", "probability"),
    "chernoff_upper_at_e": ("Chernoff bound, upper", "probability"),
    "chernoff_lower_at_e": ("Chernoff bound, lower", "probability"),
    "simplified_upper_at_e": ("simplified bound, upper", "probability"),
    "simplified_lower_at_e": ("simplified bound, lower", "probability"),
    "upper_threshold": ("(1+e)μ, upper threshold", "records"),
    "lower_threshold": ("(1−e)μ, lower threshold", "records"),
    # reconstruction privacy (seed 001)
    "lambda": ("λ (relative error)", ""),
    "bound": ("Chernoff bounds of the test", ""),
    "threshold_one_value": ("s_g of a group holding one value", "records"),
    "micro_groups": ("micro groups", "groups"),
    "violating_groups_before": ("micro groups open under plain UP", "groups"),
    "share_groups_violating_before": ("micro groups open under plain UP", "share"),
    "violating_groups_after": ("micro groups open in this release", "groups"),
    "resampled_groups": ("micro groups resampled (Algorithm 1)", "groups"),
    "share_records_resampled": ("records in resampled groups", "share"),
    "largest_threshold_gap": ("largest excess of a group over its threshold", "records"),
    "independent_trials": ("independently randomised records", "records"),
    "share_independent_trials": ("independently randomised records", "share"),
    "records_with_value": ("records holding the value", "records"),
    "f_used": ("f used (records holding it / n)", "share"),
    "exact_upper_at_lambda": ("exact P[F′ − f > λf]", "probability"),
    "exact_lower_at_lambda": ("exact P[F′ − f < −λf]", "probability"),
    "chernoff_upper_at_lambda": ("full Chernoff bound, upper, at λ", "probability"),
    "chernoff_lower_at_lambda": ("full Chernoff bound, lower, at λ", "probability"),
    "simplified_upper_at_lambda": ("simplified bound, upper, at λ", "probability"),
    "simplified_lower_at_lambda": ("simplified bound, lower, at λ", "probability"),
    "threshold_simplified": ("size threshold s_g, simplified bounds", "records"),
    "threshold_full": ("size threshold s_g, full bounds", "records"),
    "threshold_simplified_f1": ("s_g at f = 1, simplified", "records"),
    "threshold_full_f1": ("s_g at f = 1, full", "records"),
    "threshold_simplified_f05": ("s_g at f = 0.5, simplified", "records"),
    "threshold_full_f05": ("s_g at f = 0.5, full", "records"),
    # F'-privacy bucketization and the differential inference theorem (seed 003)
    "l_equivalent": ("ℓ an equivalent ℓ-diversity needs, ⌈1/min f′⌉", "values"),
    "smallest_bucket": ("smallest useful bucket M = min ⌈1/f′ᵢ⌉", "records"),
    "fprime_min": ("smallest threshold min f′ᵢ", "probability"),
    "anatomy_max_l": ("largest ℓ Anatomy can deliver, ⌊|T| / max oᵢ⌋", "values"),
    "bucket_setting": ("bucket setting [(size, buckets)]", ""),
    "buckets": ("buckets", "groups"),
    "loss": ("loss Σ(|g| − 1)²", ""),
    "mse": ("MSE = loss / (|T| − 1)", ""),
    "fake_values": ("fake values added to the ST", "values"),
    "fake_share": ("fake share of the ST", "share"),
    "every_bucket_meets_fprime": ("every bucket meets every f′ᵢ", ""),
    "worst_share_over_fprime": ("worst in-bucket share ÷ its f′ᵢ (≤ 1)", "ratio"),
    "corruption_certainty": ("adversary certainty after corrupting all but one, 1/(1+σ)", "probability"),
    "theorem_factor_at_x": ("Theorem 2 factor 1 + 2b²/x² at x", "ratio"),
    "principal_value_factor_at_x": ("exact (principal value) factor at x", "ratio"),
    "noise_scale_b": ("Laplace noise scale b = 1/ε", "records"),
}

_SPLU_ALPHA = ("α (largest small count)", "records")
_PRESENCE = ("α (presence bound)", "")
_ASSOCIATION = ("β (association bound)", "")

#: scope (mechanism or curve name) -> key -> (label, unit), for keys whose meaning depends on who reports them
SCOPED: dict[str, dict[str, tuple[str, str]]] = {
    "splu": {"alpha": _SPLU_ALPHA, "gamma": ("γ (values per decoy group)", "values")},
    "splu-privacy": {"alpha": _SPLU_ALPHA},
    "ambiguity": {"alpha": _PRESENCE, "beta": _ASSOCIATION},
    "priview": {"alpha": _PRESENCE, "beta": _ASSOCIATION},
    "mondrian": {"beta": ("β (sets ℓ = ⌈1/β⌉)", "")},
    "reconstruction": {"delta": ("δ (smallest tail probability)", "probability")},
    "sdr": {"delta": ("δ (chance the error bound fails)", "probability"),
            "unprotected_values": ("values not protected (share > ρ₁)", "")},
    "bucketization": {"unprotected_values": ("values not protected (threshold f′ = 1)", "")},
    "sdr-error": {"delta": ("δ (chance the error bound fails)", "probability")},
}

_PROBABILITY_UNITS = {"probability", "share"}
_SINGULAR = {"records": "record", "values": "value", "groups": "group", "values per group": "value per group",
             "sub-tables": "sub-table", "buckets": "bucket"}


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~$])")
#: what GitHub-flavoured Markdown turns into a link without any markup: a URL scheme's colon, ``www.``, an e-mail's @
_AUTOLINK = re.compile(r"(?i)(?=@)|(?:(?<=https)|(?<=http)|(?<=ftp)|(?<=mailto)|(?<=xmpp))(?=:)|(?<=www)(?=\.)")
#: U+2060 WORD JOINER: invisible and unbreakable; put inside those triggers it stops the autolink
WORD_JOINER = "\u2060"


def md(text: Any) -> str:
    """Escape Markdown (and Streamlit's $...$ LaTeX) in text that carries user data.

    File names, column names and cell values end up in messages; Streamlit
    renders alerts, captions, the sidebar and markdown as Markdown, so
    ``*``, ``_``, ``[..](..)`` or ``$`` in a user's data must not format
    the page.  Streamlit's Markdown (GFM) also links bare ``https://...``,
    ``www.x.y`` and ``a@b.c`` by itself, which no backslash escape stops
    (checked in chromium): an invisible word joiner is put before the
    scheme's colon, after ``www`` and before the ``@``, so the text reads
    and copies the same (give or take that invisible character) and links
    nowhere (issue 12 item 7).

    >>> md("see https://x.org, www.y.org or a@b.org [*]")
    'see https\u2060://x.org, www\u2060.y.org or a\u2060@b.org \\\\[\\\\*\\\\]'
    """
    return _AUTOLINK.sub(WORD_JOINER, _MD_SPECIAL.sub(r"\\\1", str(text)))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def number(value: Any, digits: int = 4) -> str:
    """A value for display: thousands separators, ``digits`` significant digits."""
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            return "∞" if v > 0 else ("−∞" if v < 0 else "—")
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        if abs(v) < 1e-3:
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}g}"
    return str(value)


def _label(key: str, scope: str | None) -> tuple[str, str]:
    scoped = SCOPED.get(scope or "", {}).get(key)
    if scoped is not None:
        return scoped
    return LABELS.get(key, (key.replace("_", " "), ""))


def with_unit(key: str, value: Any, scope: str | None = None) -> str:
    """``number`` plus the unit known for ``key`` in ``scope`` (probabilities also as percent)."""
    _, unit = _label(key, scope)
    text = number(value)
    if is_number(value) and unit in _PROBABILITY_UNITS and 0 <= float(value) <= 1:
        return f"{text} ({float(value):.1%})"
    if unit and is_number(value) and unit not in _PROBABILITY_UNITS and unit != "ratio":
        if unit in _SINGULAR and float(value) == 1:
            unit = _SINGULAR[unit]
        return f"{text} {unit}"
    return text


def readable(key: str, scope: str | None = None) -> str:
    """Short label for a key reported by ``scope`` (a mechanism or curve name; its unit: :func:`with_unit`)."""
    return _label(key, scope)[0]


def param_text(value: Any) -> str:
    """A parameter value as text the CLI and :meth:`Param.parse` read back exactly (``1/13``, ``ln(3)``)."""
    return format_value(value)


def preset_label(value: Any) -> str:
    """Select-slider label for a preset: ``ln 3 ≈ 1.099``, ``1/13 ≈ 0.0769``, ``0.1``."""
    text = param_text(value)
    if text.startswith("ln("):
        return f"ln {text[3:-1]} ≈ {float(value):.3f}"
    if "/" in text:
        return f"{text} ≈ {float(value):.4g}"
    if len(text) > 8 and text.replace(".", "", 1).isdigit():  # a value set exactly (UP's p = 0.18926553672316382)
        return display_value(value)
    return text


def safer_text(safer: str | None) -> str:
    if safer == "higher":
        return "Higher is safer (more privacy, less utility)."
    if safer == "lower":
        return "Lower is safer (more privacy, less utility)."
    return ""


def people_short(p: Any) -> str:
    """A count's 95% interval in people as a table cell: ``10 ± 7 · 1,000 ± 21`` (:func:`core.intervals` JSON).

    ``not measured`` when the figure is turned off or has none; a headline
    count with no query near it in the workload reads ``10: none near``.
    """
    if not p or p.get("measured") is False or not p.get("at"):
        return "not measured"
    parts = []
    for c in p["at"]:
        n = f"{c['count']:,.0f}"
        parts.append(f"{n}: none near" if c.get("half_width") is None
                     else f"{n} ± {math.ceil(c['half_width'] - 1e-9):,}")
    return " · ".join(parts)
