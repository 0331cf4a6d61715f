"""Banding numeric QI columns: equal width, quantiles or cut points, as a plain spec.

A numeric quasi-identifier with many values (age in years, income,
length of stay) makes almost every record unique on its QIs: every micro
group (records sharing all QI values) is tiny and the mechanisms that
publish QI values exactly have nothing to hide in.  Banding replaces each
value by the interval holding it (``[20, 30)``), the simplest
generalization of ARX and sdcMicro's ``globalRecode``.

A :class:`Banding` is plain data: :meth:`Banding.spec` is a JSON-able dict
(the session keeps it, the manifest records it under ``input.bands``) and
:meth:`Banding.text` is the command line's ``--band`` value, so the page,
the CLI and a reproduced release band identically.  Bands are applied by
:func:`core.table.bind` (``bands=``), after rows with a missing value in a
chosen column are left out.

``--band`` syntax (:func:`parse`)
---------------------------------
``COL=W`` or ``COL=width:W``
    equal width ``W`` (> 0): bands ``[k W, (k+1) W)`` aligned on multiples
    of ``W`` (``age=10``: ``[10, 20)``, ``[20, 30)`` ...).
``COL=qK`` or ``COL=quantiles:K``
    at most ``K`` bands (2..100) holding about equal numbers of records.
``COL=A,B,C`` or ``COL=cuts:A[,B...]``
    cut points, increasing: ``< A``, ``[A, B)``, ``[B, C)``, ``>= C``
    (``cuts:`` also takes a single cut point).

Choices where the issue is silent
---------------------------------
* Intervals are closed on the left and open on the right, the way ARX
  and pandas' ``cut(right=False)`` write age bands (``[18, 25)`` holds 18
  to 24); the last quantile band is closed (``[52, 90]``) since it ends at
  the largest value.
* Equal-width bands start at a multiple of the width (at or below the
  smallest value), so ``age=10`` gives decades, not bands starting at 17.
* Quantile cut points are values that occur in the column, so labels show
  real values: the i-th cut is the value with the number of records below
  it nearest to ``i n / K``.  Tied values never straddle a cut, so a
  column with heavy ties can get fewer than ``K`` bands.
  They are computed over the rows used (after rows with a missing value in
  a chosen column are dropped), identically on the page and in the CLI.
* Only bands that hold records become values of the banded column
  (an empty band is no value of the domain).
* ARX-style multi-level hierarchies are not offered: one banding per
  column is the hierarchy's chosen level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError

METHODS = ("width", "quantiles", "cuts")
#: banding is offered by default for numeric columns with more distinct values than this
MANY_VALUES = 20
#: refuse a banding that would make more bands than this (a typo such as width 0.001)
MAX_BANDS = 1000
MAX_QUANTILES = 100


@dataclass(frozen=True)
class Banding:
    """How one numeric column is banded.

    Parameters
    ----------
    column : str
    method : {"width", "quantiles", "cuts"}
    width : float, optional
        Band width (``method="width"``).
    count : int, optional
        Number of quantile bands asked for (``method="quantiles"``).
    cuts : tuple of float, optional
        Increasing cut points (``method="cuts"``).
    """

    column: str
    method: str
    width: float | None = None
    count: int | None = None
    cuts: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        where = f"The banding of '{self.column}'"
        if self.method not in METHODS:
            raise ParameterError(f"{where} must be by width, quantiles or cut points. Got {self.method!r}.")
        if self.method == "width":
            if self.width is None or not math.isfinite(self.width) or self.width <= 0:
                raise ParameterError(f"{where} needs a width above 0 (e.g. {self.column}=10). Got {self.width}.")
        elif self.method == "quantiles":
            if self.count is None or not 2 <= self.count <= MAX_QUANTILES:
                raise ParameterError(f"{where} needs 2 to {MAX_QUANTILES} quantile bands (e.g. {self.column}=q5). "
                                     f"Got {self.count}.")
        else:
            cuts = self.cuts or ()
            if not cuts:
                raise ParameterError(f"{where} needs at least one cut point (e.g. {self.column}=18,25,35,50,65).")
            if not all(math.isfinite(c) for c in cuts):
                raise ParameterError(f"{where} has a cut point that is not a finite number.")
            for a, b in zip(cuts, cuts[1:]):
                if b <= a:
                    raise ParameterError(f"{where}: cut points must increase, but {_num(b)} follows {_num(a)}.")
            if len(cuts) + 1 > MAX_BANDS:
                raise ParameterError(f"{where} has {len(cuts):,} cut points; at most {MAX_BANDS - 1:,} are allowed.")

    # ------------------------------------------------------------ plain forms
    def spec(self) -> dict[str, Any]:
        """A JSON-able dict: ``{"method": "width", "width": 10}`` (the column is the key it is stored under)."""
        if self.method == "width":
            return {"method": "width", "width": _plain(self.width)}
        if self.method == "quantiles":
            return {"method": "quantiles", "count": int(self.count)}
        return {"method": "cuts", "cuts": [_plain(c) for c in self.cuts]}

    @classmethod
    def from_spec(cls, column: str, spec: Mapping[str, Any]) -> "Banding":
        """The inverse of :meth:`spec`; a malformed spec raises ParameterError."""
        if not isinstance(spec, Mapping):
            raise ParameterError(f"The banding of '{column}' must be a mapping with a 'method'. Got {spec!r}.")
        method = spec.get("method")
        try:
            if method == "width":
                return cls(column, "width", width=float(spec["width"]))
            if method == "quantiles":
                return cls(column, "quantiles", count=int(spec["count"]))
            if method == "cuts":
                return cls(column, "cuts", cuts=tuple(float(c) for c in spec["cuts"]))
        except (KeyError, TypeError, ValueError):
            raise ParameterError(f"The banding of '{column}' is incomplete or malformed: {spec!r}.") from None
        raise ParameterError(f"The banding of '{column}' must be by width, quantiles or cuts. Got {method!r}.")

    def text(self) -> str:
        """The command line's ``--band`` value (``age=10``, ``age=q5``, ``age=18,25,35``, ``age=cuts:40``)."""
        if self.method == "width":
            return f"{self.column}={_num(self.width)}"
        if self.method == "quantiles":
            return f"{self.column}=q{self.count}"
        body = ",".join(_num(c) for c in self.cuts)
        return f"{self.column}={'cuts:' if len(self.cuts) == 1 else ''}{body}"

    def describe(self) -> str:
        """In words: ``equal width 10``, ``5 quantile bands``, ``cut points 18, 25, 35``."""
        if self.method == "width":
            return f"equal width {_num(self.width)}"
        if self.method == "quantiles":
            return f"{self.count} quantile bands"
        return "cut points " + ", ".join(_num(c) for c in self.cuts)

    # ------------------------------------------------------------ applying
    def edges(self, values: np.ndarray) -> np.ndarray:
        """The band edges over ``values`` (finite floats): band i is ``[edges[i], edges[i+1])``.

        The first edge is at or below the smallest value and the last above
        the largest, except for cut points, whose open ends are -inf/+inf.
        """
        values = np.asarray(values, dtype=float)
        lo, hi = float(values.min()), float(values.max())
        if self.method == "width":
            w = float(self.width)
            # edges k*w rounded to 12 significant digits, so 3 x 0.1 is the edge 0.3 that 0.3 itself reaches
            start = math.floor(lo / w + 1e-9)
            stop = math.floor(hi / w + 1e-9) + 1
            if stop - start > MAX_BANDS:
                raise ParameterError(
                    f"A width of {_num(w)} on '{self.column}' ({_num(lo)} to {_num(hi)}) makes "
                    f"{stop - start:,} bands, more than {MAX_BANDS:,}; choose a wider band.")
            edges = np.array([float(f"{k * w:.12g}") for k in range(start, stop + 1)], dtype=float)
            if edges[0] > lo:  # a value just below a rounded edge still gets a band
                edges = np.concatenate([[float(f"{(start - 1) * w:.12g}")], edges])
            return edges
        if self.method == "quantiles":
            uniq, counts = np.unique(values, return_counts=True)
            if len(uniq) < 2:
                return np.array([lo, np.nextafter(hi, np.inf)])
            below = (np.cumsum(counts) - counts)[1:]  # records below each candidate cut (a value > min)
            targets = np.arange(1, self.count) * len(values) / self.count
            picks = np.abs(below[None, :] - targets[:, None]).argmin(axis=1) + 1
            inner = np.unique(uniq[picks])
            return np.concatenate([[lo], inner, [np.nextafter(hi, np.inf)]])
        return np.concatenate([[-np.inf], np.asarray(self.cuts, dtype=float), [np.inf]])

    def labels(self, edges: np.ndarray) -> list[str]:
        """One label per band of ``edges``: ``[18, 25)``, ``< 18``, ``>= 65``, a closed last quantile band."""
        out = []
        last = len(edges) - 2
        for i in range(len(edges) - 1):
            a, b = edges[i], edges[i + 1]
            if a == -np.inf:
                out.append(f"< {_num(b)}")
            elif b == np.inf:
                out.append(f">= {_num(a)}")
            elif self.method == "quantiles" and i == last:
                out.append(f"[{_num(a)}, {_num(np.nextafter(b, -np.inf))}]")
            else:
                out.append(f"[{_num(a)}, {_num(b)})")
        return out

    def apply(self, series: pd.Series) -> pd.Series:
        """The banded column: an ordered categorical of band labels (no missing values expected).

        Raises DataError when the column is not numeric.
        """
        if not is_numeric(series):
            sample = next((str(v) for v in series.dropna().head(1)), "")
            raise DataError(f"'{self.column}' is not numeric (values like '{sample}'), so it cannot be banded; "
                            "band only numeric QI columns.")
        values = series.to_numpy(dtype=float)
        if not np.isfinite(values).all():
            raise DataError(f"'{self.column}' has a value that is not a finite number; it cannot be banded.")
        edges = self.edges(values)
        labels = self.labels(edges)
        idx = np.searchsorted(edges, values, side="right") - 1
        idx = np.clip(idx, 0, len(labels) - 1)
        cat = pd.Categorical.from_codes(idx, categories=labels, ordered=True)
        return pd.Series(cat, index=series.index, name=series.name)


def is_numeric(series: pd.Series) -> bool:
    """A numeric column (not boolean) that can be banded."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _plain(x: float) -> int | float:
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _num(x: float) -> str:
    """A number as a label shows it (up to 10 significant digits): ``18``, ``2.5``, ``40123.45``, ``-inf``."""
    x = float(x)
    if not math.isfinite(x):
        return "inf" if x > 0 else "-inf"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.10g}"


# ---------------------------------------------------------------- parsing
def parse(text: str) -> Banding:
    """One ``--band`` value (see the module docstring) as a :class:`Banding`.

    >>> parse("age=10").spec(), parse("age=q5").spec(), parse("age=18,25").spec()
    ({'method': 'width', 'width': 10}, {'method': 'quantiles', 'count': 5}, {'method': 'cuts', 'cuts': [18, 25]})
    """
    column, sep, body = str(text).partition("=")
    column, body = column.strip(), body.strip()
    if not sep or not column or not body:
        raise ParameterError(f"--band takes COLUMN=SPEC (e.g. age=10, age=q5 or age=18,25,35,50,65). Got '{text}'.")
    method, colon, rest = body.partition(":")
    method = method.strip().lower()
    try:
        if colon:
            if method in ("width", "w"):
                return Banding(column, "width", width=_float(rest))
            if method in ("quantiles", "quantile", "q"):
                return Banding(column, "quantiles", count=_int(rest))
            if method in ("cuts", "cut"):
                return Banding(column, "cuts", cuts=tuple(_float(c) for c in rest.split(",") if c.strip()))
            raise ParameterError(f"--band {text}: the method before ':' is width, quantiles or cuts. Got '{method}'.")
        if body[:1] in "qQ":
            return Banding(column, "quantiles", count=_int(body[1:]))
        parts = [p for p in body.split(",") if p.strip()]
        if len(parts) == 1 and "," not in body:
            return Banding(column, "width", width=_float(parts[0]))
        return Banding(column, "cuts", cuts=tuple(_float(p) for p in parts))
    except ParameterError:
        raise
    except ValueError:
        raise ParameterError(f"--band {text}: '{body}' is not a width (age=10), quantiles (age=q5) or "
                             "cut points (age=18,25,35,50,65).") from None


def _float(text: str) -> float:
    return float(text.strip())


def _int(text: str) -> int:
    value = float(text.strip())
    if not value.is_integer():
        raise ValueError(text)
    return int(value)


def cuts_from_text(column: str, text: str) -> Banding:
    """Cut points typed as ``18, 25, 35`` (the page's text box) as a :class:`Banding`."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    try:
        cuts = tuple(float(p) for p in parts)
    except ValueError:
        bad = next(p for p in parts if not _is_float(p))
        raise ParameterError(f"The cut points of '{column}' must be numbers separated by commas; "
                             f"'{bad}' is not a number.") from None
    return Banding(column, "cuts", cuts=cuts)


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def parse_many(texts: Iterable[str]) -> dict[str, Banding]:
    """Every ``--band`` given, by column; a column banded twice is refused (nothing is dropped silently)."""
    out: dict[str, Banding] = {}
    for text in texts:
        band = parse(text)
        if band.column in out:
            raise ParameterError(f"--band names '{band.column}' twice ({out[band.column].text()} and "
                                 f"{band.text()}); give one banding per column.")
        out[band.column] = band
    return out


def normalise(bands: Mapping[str, Any] | Sequence[Banding] | None) -> dict[str, Banding]:
    """Bands given as ``{column: Banding or spec dict}`` or a sequence of :class:`Banding`, by column."""
    if not bands:
        return {}
    if isinstance(bands, Mapping):
        out = {}
        for col, b in bands.items():
            band = b if isinstance(b, Banding) else Banding.from_spec(str(col), b)
            if band.column != str(col):
                band = Banding(str(col), band.method, band.width, band.count, band.cuts)
            out[str(col)] = band
        return out
    out = {}
    for b in bands:
        if b.column in out:
            raise ParameterError(f"'{b.column}' is banded twice; give one banding per column.")
        out[b.column] = b
    return out


def specs(bands: Mapping[str, Banding]) -> dict[str, dict[str, Any]]:
    """``{column: spec}``, JSON-able (manifest ``input.bands``, session state)."""
    return {col: b.spec() for col, b in bands.items()}


def suggest(series: pd.Series) -> Banding | None:
    """A default banding for a numeric column with many values, or None.

    Equal width, a round width (1, 2 or 5 times a power of ten) that gives
    about 5 to 10 bands: age 17..90 gets width 10.  None for a non-numeric
    column or one with at most :data:`MANY_VALUES` values.
    """
    if not is_numeric(series):
        return None
    values = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0 or len(np.unique(values)) <= MANY_VALUES:
        return None
    span = float(values.max() - values.min())
    if span <= 0:
        return None
    raw = span / 8
    power = 10 ** math.floor(math.log10(raw))
    width = min((m * power for m in (1, 2, 5, 10) if m * power >= raw), default=10 * power)
    return Banding(str(series.name), "width", width=float(width))


# ---------------------------------------------------------------- micro groups
@dataclass(frozen=True)
class MicroGroups:
    """Sizes of the micro groups (records sharing every QI value).

    ``groups`` micro groups over ``records`` records; ``median_size`` is the
    median over groups; ``singleton_share`` the share of records alone in
    their group (unique on their QIs).
    """

    records: int
    groups: int
    median_size: float
    singleton_share: float

    def to_json(self) -> dict[str, Any]:
        return {"records": self.records, "groups": self.groups, "median_size": self.median_size,
                "singleton_share": self.singleton_share}


def micro_groups(qi_codes: Sequence[np.ndarray], domains: Sequence[int]) -> MicroGroups:
    """Micro-group statistics of encoded QI columns (``Dataset.qi_codes`` and ``domains``)."""
    n = len(qi_codes[0]) if len(qi_codes) else 0
    if n == 0:
        return MicroGroups(0, 0, 0.0, 0.0)
    if math.prod(max(1, int(d)) for d in domains) < 2**62:
        key = np.zeros(n, dtype=np.int64)
        for codes, d in zip(qi_codes, domains):
            key = key * max(1, int(d)) + codes.astype(np.int64)
        _, sizes = np.unique(key, return_counts=True)
    else:
        _, sizes = np.unique(np.stack([c.astype(np.int64) for c in qi_codes], axis=1), axis=0, return_counts=True)
    return MicroGroups(records=int(n), groups=int(len(sizes)), median_size=float(np.median(sizes)),
                       singleton_share=float((sizes == 1).sum() / n))
