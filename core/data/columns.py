"""Proposing the sensitive attribute, the QIs and the identifiers of an unknown table.

:func:`propose` looks at each column's name and shape and returns a
:class:`Proposal`: the sensitive attribute (SA), the quasi-identifiers
(QIs), the identifiers to leave out, and a one-line reason for each, which
the Home page shows beside the pickers (the user overrides any of it).  A
bundled sample keeps its papers' choice.

Rules (checked in this order; where the issue is silent, these are our choices)
------------------------------------------------------------------------------
* **Identifier**: a column whose name says so (``id``, ``name``, ``ssn``,
  ``email`` ... as a whole word) with a different value in at least 90% of
  the rows, or, on a table of at least 20 rows, any text or whole-number
  column with a different value in at least 95% of its rows (a numeric
  column with fractions, e.g. an exact income, is a measurement to band,
  not an identifier).  It must not be published: it is never proposed as
  the SA or a QI, and a mechanism publishes only the chosen columns.
* A column missing in more than half of its rows, or with one value only,
  is left out.
* **SA**: among the other columns, the best of: a name that suggests a
  sensitive value (diagnosis, disease, occupation, income, salary,
  religion ...), then several values (3 or more: a 2-valued flag is a poor
  SA), then text rather than numbers, then a name that does not look
  demographic (age, sex, zip ...), then the last such column (a file
  usually ends with its outcome column).  A column with more distinct
  values than a third of the rows (and more than 20) is not a candidate.
* **QIs**: the columns whose names look demographic (age, sex, gender,
  race, zip, postcode, country, marital, education, birth ...); when no
  name does (a headerless file), every remaining column with 2 values or
  more and fewer distinct values than half the rows, numeric columns with
  many values too (their reason suggests banding them).  At most 8, in
  table order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .banding import MANY_VALUES, is_numeric

MAX_QI = 8
#: whole-word name hints (lower case, split on non-letters and camelCase)
ID_WORDS = {"id", "ids", "uid", "uuid", "guid", "key", "name", "names", "firstname", "lastname", "surname",
            "fullname", "ssn", "nhs", "mrn", "email", "mail", "phone", "telephone", "mobile", "passport",
            "record", "rowid", "index", "patientid", "personid", "username", "login", "address", "iban",
            "account", "licence", "license", "row", "rownames"}  # row: R write.csv's row names
SENSITIVE_WORDS = {"diagnosis", "diagnoses", "diag", "disease", "diseases", "illness", "condition", "conditions",
                   "icd", "icd9", "icd10", "occupation", "occupations", "job", "profession", "income", "salary",
                   "wage", "wages", "earnings", "religion", "treatment", "medication", "drug", "drugs", "health",
                   "hiv", "cancer", "crime", "offence", "offense", "conviction", "disability", "sexuality",
                   "orientation", "political", "party", "debt", "pregnancy", "symptom", "symptoms", "procedure"}
DEMOGRAPHIC_WORDS = {"age", "ages", "sex", "gender", "race", "ethnicity", "ethnic", "zip", "zipcode", "postcode",
                     "postal", "plz", "country", "nationality", "native", "citizenship", "marital", "married",
                     "education", "edu", "degree", "birth", "born", "dob", "birthdate", "birthyear", "yob",
                     "city", "town", "region", "state", "county", "district", "province", "municipality",
                     "workclass", "language", "household", "children", "height", "weight", "year", "zip3"}


def words(name: str) -> list[str]:
    """A column name as lower-case words: ``"zipCode"`` and ``"zip_code"`` give ``["zip", "code"]``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    parts = [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]
    joined = "".join(parts)
    return parts + ([joined] if len(parts) > 1 else [])


def _hint(name: str, vocabulary: set[str]) -> str | None:
    return next((w for w in words(name) if w in vocabulary), None)


@dataclass(frozen=True)
class ColumnInfo:
    """What :func:`propose` saw in one column."""

    name: str
    numeric: bool
    distinct: int
    present: int  # rows with a value
    fractional: bool  # numeric with a non-whole value

    @property
    def unique_share(self) -> float:
        return self.distinct / self.present if self.present else 0.0


@dataclass(frozen=True)
class Proposal:
    """Proposed columns and why.

    ``reasons`` has one line per column of the table (its proposed role and
    why), ``sa_reason`` and ``qi_reason`` one line each for the pickers.
    ``bandable`` lists the proposed QIs that are numeric with many values.
    """

    sa: str
    qi: tuple[str, ...]
    identifiers: tuple[str, ...]
    sa_reason: str
    qi_reason: str
    reasons: dict[str, str] = field(default_factory=dict)
    bandable: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"sa": self.sa, "qi": list(self.qi), "identifiers": list(self.identifiers),
                "sa_reason": self.sa_reason, "qi_reason": self.qi_reason, "reasons": dict(self.reasons),
                "bandable": list(self.bandable)}


def inspect_columns(frame: pd.DataFrame) -> dict[str, ColumnInfo]:
    """Name, kind and counts of every column."""
    out = {}
    for col in frame.columns:
        s = frame[col]
        present = s.dropna()
        numeric = is_numeric(s)
        fractional = False
        if numeric and len(present):
            v = present.to_numpy(dtype=float)
            fractional = bool(np.any(np.isfinite(v) & (v != np.round(v))))
        out[str(col)] = ColumnInfo(str(col), numeric, int(present.nunique()), int(len(present)), fractional)
    return out


def identifier_reason(info: ColumnInfo, rows: int) -> str | None:
    """Why ``info`` looks like an identifier, or None."""
    hint = _hint(info.name, ID_WORDS)
    if hint and info.present and info.unique_share >= 0.9 and info.distinct > 1:
        return (f"its name says '{hint}' and {info.distinct:,} of {info.present:,} rows have their own value: "
                "an identifier")
    if rows >= 20 and info.present >= 20 and info.unique_share >= 0.95 and not info.fractional:
        same = "a different value in every row" if info.distinct == info.present else \
            f"{info.distinct:,} values in {info.present:,} rows"
        return f"{same}: an identifier"
    return None


def identifiers(frame: pd.DataFrame) -> dict[str, str]:
    """``{column: reason}`` for every column that looks like an identifier."""
    infos = inspect_columns(frame)
    out = {}
    for name, info in infos.items():
        why = identifier_reason(info, len(frame))
        if why:
            out[name] = why
    return out


def propose(frame: pd.DataFrame, sa: str | None = None) -> Proposal:
    """SA, QIs and identifiers of ``frame`` by the rules of the module docstring.

    ``sa`` fixes the sensitive attribute (the QIs are then proposed around it).
    """
    n = len(frame)
    infos = inspect_columns(frame)
    reasons: dict[str, str] = {}
    ids = []
    usable = []
    for name, info in infos.items():
        why = identifier_reason(info, n)
        if why and name != sa:
            ids.append(name)
            reasons[name] = f"left out: {why}; it must not be published"
        elif info.present < max(1, n) / 2 and name != sa:
            reasons[name] = f"left out: missing in {n - info.present:,} of {n:,} rows"
        elif info.distinct < 2 and name != sa:
            reasons[name] = "left out: a single value"
        else:
            usable.append(name)

    if sa is None:
        sa, sa_reason = _choose_sa(usable, infos, n)
    else:
        info = infos.get(sa)
        sa_reason = "chosen by you" if info is None else f"chosen by you ({info.distinct:,} values)"
    reasons[sa] = "sensitive attribute: " + sa_reason

    rest = [c for c in usable if c != sa]
    demographic = [c for c in rest if _hint(c, DEMOGRAPHIC_WORDS)]
    bandable = []
    if demographic:
        qi = demographic[:MAX_QI]
        qi_reason = "the columns whose names look demographic, which an attacker may know"
        for c in qi:
            reasons[c] = f"QI: its name says '{_hint(c, DEMOGRAPHIC_WORDS)}'"
        for c in rest:
            if c not in qi:
                reasons[c] = ("not a QI: no demographic name" if c not in demographic
                              else f"not a QI: beyond the first {MAX_QI} demographic columns")
    else:
        limit = max(2, n // 2)
        qi_list = []
        for c in rest:
            info = infos[c]
            if info.distinct < limit or (info.numeric and info.distinct > MANY_VALUES and info.distinct < n):
                qi_list.append(c)
            else:
                reasons[c] = f"not a QI: {info.distinct:,} values in {n:,} rows, close to one per row"
        qi = qi_list[:MAX_QI]
        for c in qi_list[MAX_QI:]:
            reasons[c] = f"not a QI: beyond the first {MAX_QI} columns"
        qi_reason = ("no column name looks demographic, so every other column with repeated values is proposed"
                     + (f" (the first {MAX_QI})" if len(qi_list) > MAX_QI else "") + "; remove those an attacker "
                     "cannot know")
        for c in qi:
            reasons[c] = f"QI: {infos[c].distinct:,} values, repeated across rows"
    if not qi:
        others = [c for c in infos if c != sa and c not in ids]
        qi = tuple(others[:MAX_QI]) or tuple(c for c in infos if c != sa)[:1]
        qi_reason = "no column qualifies, so the other columns are proposed; check them"
        for c in qi:
            reasons[c] = "QI: no better column"
    for c in qi:
        info = infos[c]
        if info.numeric and info.distinct > MANY_VALUES:
            bandable.append(c)
            reasons[c] += f"; numeric with {info.distinct:,} values: band it"
    if bandable:
        qi_reason += "; band " + ", ".join(bandable) + " (many numeric values make tiny micro groups)"
    for c in infos:
        reasons.setdefault(c, "not used")
    ordered = {c: reasons[c] for c in infos}
    return Proposal(sa=str(sa), qi=tuple(qi), identifiers=tuple(ids), sa_reason=sa_reason, qi_reason=qi_reason,
                    reasons=ordered, bandable=tuple(bandable))


def _choose_sa(usable: list[str], infos: dict[str, ColumnInfo], n: int) -> tuple[str, str]:
    """The best SA candidate and its reason (module docstring's order)."""
    cap = max(20, n // 3)
    candidates = [c for c in usable if infos[c].distinct <= cap] or usable or list(infos)

    def score(item: tuple[int, str]) -> tuple:
        pos, c = item
        info = infos[c]
        return (_hint(c, SENSITIVE_WORDS) is not None, info.distinct >= 3, not info.numeric,
                _hint(c, DEMOGRAPHIC_WORDS) is None, pos)

    pos, best = max(enumerate(candidates), key=score)
    info = infos[best]
    hint = _hint(best, SENSITIVE_WORDS)
    kind = "numbers" if info.numeric else "text"
    if hint:
        why = f"its name says '{hint}'"
        why += f" and it has {info.distinct:,} values" if info.distinct >= 3 else \
            f", though it has only {info.distinct} values"
    elif info.distinct >= 3:
        why = (f"no name suggests a sensitive value; the last {kind} column with several values "
               f"({info.distinct:,})")
    else:
        why = f"no column has several values; '{best}' has {info.distinct}"
    return best, why


def proposal_for_sample(frame: pd.DataFrame, sa: str, qi: tuple[str, ...], source: str) -> Proposal:
    """A bundled sample's choice as a :class:`Proposal` (identifiers still detected, for the warning)."""
    ids = identifiers(frame)
    reasons = {}
    for c in frame.columns:
        c = str(c)
        if c == sa:
            reasons[c] = f"sensitive attribute: {source}"
        elif c in qi:
            reasons[c] = f"QI: {source}"
        elif c in ids:
            reasons[c] = f"left out: {ids[c]}; it must not be published"
        else:
            reasons[c] = f"not used: {source}"
    infos = inspect_columns(frame)
    bandable = tuple(c for c in qi if c in infos and infos[c].numeric and infos[c].distinct > MANY_VALUES)
    return Proposal(sa=sa, qi=tuple(qi), identifiers=tuple(c for c in ids if c != sa and c not in qi),
                    sa_reason=f"it is {source}", qi_reason=source, reasons=reasons, bandable=bandable)
