"""Declared parameters: one rule per parameter, used by pages, CLI and tests.

A mechanism (or an analytical curve) declares its parameters once as a tuple
of :class:`Param`.  The Sanitize and Bounds pages build their sliders from
the declaration, the CLI parses ``--param key=value`` with :meth:`Param.parse`,
and :func:`resolve` fills defaults and validates, so every message has one
form (after scikit-learn's ``_param_validation``)::

    The 'gamma' parameter of splu must be an integer in [2, 50]. Got 1.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from .errors import ParameterError, clip

_BRACKETS = {"both": "[]", "left": "[)", "right": "(]", "neither": "()"}


@dataclass(frozen=True)
class Param:
    """One declared parameter.

    Parameters
    ----------
    name : str
        Key used in the CLI (``--param gamma=5``), the URL and the manifest.
    symbol : str
        Symbol as printed in the papers (``"γ"``, ``"ρ₁"``).
    help : str
        One-line plain-language meaning, shown beside the slider.
    default : object
        Default from the paper (``None`` for an optional parameter that is
        derived from others when left unset, e.g. SPLU's ``p = 1/γ``).
    kind : {"int", "float", "choice", "bool", "text"}
    low, high : float, optional
        Range for numbers; ``closed`` says which ends are included.
    choices : tuple
        Allowed values for ``kind="choice"``.
    step : float, optional
        Slider step (pages only).
    optional : bool
        ``None`` is an allowed value (the parameter is then derived or off).
    safer : {"higher", "lower", None}
        Which direction gives more privacy, for the guidance texts.
    paper : str
        Where the default comes from (``"seed 000 §6.2"``).
    presets : tuple
        Values worth offering as a select-slider instead of a continuous
        range (e.g. epsilon in {0.01, 0.1, ln 2, ln 3}).
    """

    name: str
    symbol: str
    help: str
    default: Any
    kind: str = "float"
    low: float | None = None
    high: float | None = None
    closed: str = "both"
    choices: tuple = ()
    step: float | None = None
    optional: bool = False
    safer: str | None = None
    paper: str = ""
    presets: tuple = field(default=())

    def __post_init__(self):
        if self.kind not in {"int", "float", "choice", "bool", "text"}:
            raise TypeError(f"unknown parameter kind {self.kind!r}")
        if self.closed not in _BRACKETS:
            raise TypeError(f"unknown interval closure {self.closed!r}")

    # ------------------------------------------------------------------ text
    def describe(self) -> str:
        """What a valid value is, as the second half of an error sentence."""
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "text":
            return "a text"
        noun = "an integer" if self.kind == "int" else "a number"
        if self.low is None and self.high is None:
            rng = ""
        else:
            left, right = _BRACKETS[self.closed]
            lo = "-inf" if self.low is None else _fmt(self.low)
            hi = "inf" if self.high is None else _fmt(self.high)
            rng = f" in {left}{lo}, {hi}{right}"
        tail = " (or empty to derive it)" if self.optional else ""
        return noun + rng + tail

    def _fail(self, owner: str, got: Any) -> ParameterError:
        shown = clip(got if isinstance(got, str) else repr(got))
        return ParameterError(
            f"The '{self.name}' parameter of {owner} must be {self.describe()}. Got {shown}."
        )

    # ------------------------------------------------------------ validation
    def validate(self, value: Any, owner: str = "this mechanism") -> Any:
        """Return ``value`` coerced to the declared type, or raise ParameterError."""
        if value is None or (isinstance(value, str) and value.strip().lower() in {"", "none", "auto"}):
            if self.optional:
                return None
            raise self._fail(owner, "nothing")
        if isinstance(value, str) and self.kind not in {"choice", "text"}:
            value = self.parse(value, owner)
        if self.kind == "choice":
            if value not in self.choices:
                raise self._fail(owner, value)
            return value
        if self.kind == "text":
            return str(value)
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise self._fail(owner, value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            # numpy scalars are fine, bools and everything else are not
            try:
                import numpy as np

                if isinstance(value, np.generic) and not isinstance(value, np.bool_):
                    value = value.item()
                else:
                    raise TypeError
            except TypeError:
                raise self._fail(owner, value) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise self._fail(owner, value)
        if self.kind == "int":
            if isinstance(value, float):
                if not value.is_integer():
                    raise self._fail(owner, value)
                value = int(value)
        else:
            value = float(value)
        if not self.contains(value):
            raise self._fail(owner, value)
        return value

    def contains(self, value: float) -> bool:
        lo_ok = self.low is None or (value >= self.low if self.closed in {"both", "left"} else value > self.low)
        hi_ok = self.high is None or (value <= self.high if self.closed in {"both", "right"} else value < self.high)
        return lo_ok and hi_ok

    def parse(self, text: str, owner: str = "this mechanism") -> Any:
        """Parse a command-line or URL value.

        Numbers may be written as fractions (``1/13``) or natural logarithms
        (``ln(3)``, ``ln3``), as the papers write them.
        """
        raw = text.strip()
        if raw.lower() in {"", "none", "auto"}:
            return self.validate(None, owner)
        if self.kind == "choice":
            for choice in self.choices:
                if str(choice) == raw:
                    return choice
            raise self._fail(owner, raw)
        if self.kind == "text":
            return raw
        if self.kind == "bool":
            low = raw.lower()
            if low in {"true", "yes", "1", "on"}:
                return True
            if low in {"false", "no", "0", "off"}:
                return False
            raise self._fail(owner, raw)
        number = parse_number(raw)
        if number is None:
            raise self._fail(owner, raw)
        try:
            return self.validate(number, owner)
        except ParameterError:  # said with the text as typed ("Got 7", not "Got 7.0")
            raise self._fail(owner, raw) from None

    def invalid_examples(self) -> list[Any]:
        """Values that must be refused (for property tests)."""
        if self.kind == "text":
            return []  # any text is valid; whether it names a column is the table's business
        bad: list[Any] = ["abc", float("nan")]
        if self.kind in {"int", "float"}:
            if self.low is not None:
                bad.append(self.low - 1 if self.kind == "int" else self.low - 0.5)
                if self.closed in {"right", "neither"}:
                    bad.append(self.low)
            if self.high is not None:
                bad.append(self.high + 1 if self.kind == "int" else self.high + 0.5)
                if self.closed in {"left", "neither"}:
                    bad.append(self.high)
            if self.kind == "int":
                bad.append((self.low if self.low is not None else 0) + 0.5)
        elif self.kind == "choice":
            bad.append("no-such-choice")
        return bad


_LN = re.compile(r"^ln\(?\s*([0-9.eE+-]+)\s*\)?$")


def parse_number(text: str) -> float | None:
    """Parse ``"0.5"``, ``"1/13"``, ``"ln(3)"`` or ``"ln3"``; ``None`` if not a finite number.

    A fraction too large for a float (400 digits over 1) is not a number
    here (None, so the caller says which values are allowed), not an
    OverflowError.
    """
    text = text.strip()
    try:
        value = float(text)
        return value if math.isfinite(value) else None
    except ValueError:
        pass
    match = _LN.match(text.lower())
    if match:
        try:
            arg = float(match.group(1))
        except ValueError:
            return None
        value = math.log(arg) if arg > 0 else None
        return value if value is not None and math.isfinite(value) else None
    try:
        value = float(Fraction(text.replace(" ", "")))
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return value if math.isfinite(value) else None


_WHOLE = re.compile(r"[+]?[0-9]+")


def parse_whole(text: str) -> int | None:
    """A whole number written in ASCII digits (``"1000"``, ``"+7"``, blanks around); None for anything else.

    Python's ``int()`` also takes ``"1_000"`` and other scripts' digits
    (``"٣"``); a seed or a count typed on the command line is refused for
    those, as the README promises digits.  Negative numbers are None too
    (no whole-number setting of the CLI is negative).
    """
    text = text.strip()
    if not _WHOLE.fullmatch(text) or len(text) > 4000:
        return None
    return int(text)


#: the largest k written as ln(k) (the papers' ln 2, ln 3, ln 10 ...; issue 23 §4: "ln(9518639013453586)")
LN_LARGEST = 10_000
#: the largest denominator shown as one of the papers' fractions (1/13, 2/3, 1/7, 1/14) in display text
PAPER_DENOMINATOR = 20


def display_value(value: Any, kind: str | None = None) -> str:
    """A number for a label or a report (issue 23 §4): counts, years, probabilities and the papers' fractions.

    * ``None`` -> ``"derived"`` (a parameter left to be derived);
    * a whole number -> thousands separators (``45,222``), or none for
      ``kind="year"`` (``1974``);
    * one of the papers' fractions (denominator up to
      :data:`PAPER_DENOMINATOR`) -> ``1/13 ≈ 0.07692``; ``ln k`` (k up to
      100) -> ``ln 3 ≈ 1.099``;
    * any other real -> 4 significant digits (``0.1893``, ``0.661``), with
      separators from 1,000 and an exponent below 0.001.

    Unlike :func:`format_value` (exact, for links, manifests and the
    command line), this is for reading; ``39/59`` is shown as ``0.661``.
    """
    if value is None:
        return "derived"
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(v):
        return "∞" if v > 0 else ("−∞" if v < 0 else "—")
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v)) if kind == "year" else f"{int(v):,}"
    frac = Fraction(v).limit_denominator(PAPER_DENOMINATOR)
    if float(frac) == v:
        return f"{frac.numerator}/{frac.denominator} ≈ {v:.4g}"
    if 0 < v < math.log(101):
        e = math.exp(v)
        if abs(e - round(e)) < 1e-9 and round(e) >= 2:
            return f"ln {int(round(e))} ≈ {v:.4g}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) < 1e-3:
        return f"{v:.3e}"
    return f"{v:.4g}"


def format_value(value: Any) -> str:
    """A parameter value as text that :meth:`Param.parse` reads back exactly.

    Fractions and natural logarithms are written as the papers write them,
    so a manifest or a link stays readable.

    >>> format_value(1/13), format_value(math.log(3)), format_value(None), format_value(5), format_value(0.25)
    ('1/13', 'ln(3)', 'auto', '5', '0.25')
    """
    if value is None:
        return "auto"
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true" if value else "false"
    if isinstance(value, int) or type(value).__module__ == "numpy" and "int" in type(value).__name__:
        return str(int(value))
    if isinstance(value, float) or type(value).__module__ == "numpy" and "float" in type(value).__name__:
        v = float(value)
        if v.is_integer():
            return str(int(v))
        short = f"{v:.6g}"
        if float(short) == v:
            return short
        if 0 < v < math.log(LN_LARGEST + 1):  # ln(k) of a small k only: e^36.8 is "whole" by float precision alone
            e = math.exp(v)
            if abs(e - round(e)) < 1e-9 and round(e) >= 2:
                return f"ln({int(round(e))})"
        frac = Fraction(v).limit_denominator(1000)
        if float(frac) == v:
            return f"{frac.numerator}/{frac.denominator}"
        return repr(v)
    return str(value)


def _fmt(x: float) -> str:
    if float(x).is_integer():
        return str(int(x))
    return f"{x:g}"


def resolve(params: Sequence[Param], raw: Mapping[str, Any] | None, owner: str) -> dict[str, Any]:
    """Fill defaults, validate every value and refuse unknown keys.

    Values may be typed (from a page) or strings (from the CLI or the URL).
    """
    raw = dict(raw or {})
    known = {p.name: p for p in params}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        names = ", ".join(known) or "none"
        raise ParameterError(
            f"{owner} has no parameter '{clip(unknown[0])}'; its parameters are: {names}."
        )
    out: dict[str, Any] = {}
    for p in params:
        if p.name in raw:
            value = raw[p.name]
            out[p.name] = p.parse(value, owner) if isinstance(value, str) else p.validate(value, owner)
        else:
            out[p.name] = p.default
    return out


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """Split CLI ``key=value`` strings into a dict (values stay strings)."""
    out: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise ParameterError(f"Parameters are written key=value; got '{clip(item)}'.")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise ParameterError(f"Parameters are written key=value; got '{clip(item)}'.")
        if key in out and out[key] != value.strip():
            raise ParameterError(f"'{clip(key)}' is given twice ({clip(key + '=' + out[key])} and "
                                 f"{clip(key + '=' + value.strip())}); give each parameter once.")
        out[key] = value.strip()
    return out
