"""A verdict for every setting: does a release meet its mechanism's own guarantee?

"Runs" is not "protects" (issue 13 §1).  Every mechanism declares its own
guarantee as a check computed on the release it produced
(:meth:`core.mechanisms.base.Mechanism.guarantee`), and every caller (Home,
Sanitize, the manifest, the CLI, the trade-off map, the report) shows the
answer the same way, as a :class:`Verdict` with one of three outcomes:

``cannot_run``
    The table cannot be sanitized with these parameters (not eligible): why,
    and what would work.
``fails``
    The release exists but does not meet the guarantee: which part fails
    (:class:`Failure`: the measured figure, the bound, by how much, on how
    many records, groups, sub-tables or counts) and, where one exists, the
    nearest setting that meets it (``suggestion``, machine readable: the
    parameter values to apply, verified by sanitizing with them).
``meets``
    The figures that show it.  A meets can be qualified: records left
    unpublished (``unpublished``: the guarantee holds on the records it
    publishes, with the unpublished count and values beside it), values
    outside the guarantee's scope (``outside``: e.g. values more frequent
    than rho1 under (rho1, rho2)-privacy), or a guarantee that is vacuous at
    this setting (``vacuous``: RP with no open micro group is UP under
    another name; a value with f' = 1).  Only an unqualified meets (none of
    the three) is :attr:`Verdict.plain`.

Where a guarantee is only a paper's claim and the exact figure differs
(PriView's Theorem 6), the verdict uses the exact figure.

This module holds the data types and their wording only; the checks live with
each mechanism and the driver (:func:`core.mechanisms.verdict`) runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

CANNOT_RUN = "cannot_run"
FAILS = "fails"
MEETS = "meets"
OUTCOMES = (CANNOT_RUN, FAILS, MEETS)

#: how each outcome is named on the pages, in the CLI and the report (one column each on Home)
LABELS = {
    CANNOT_RUN: "cannot run",
    FAILS: "runs but does not meet its guarantee",
    MEETS: "meets its guarantee",
}
#: short forms (table headers, chart legends)
SHORT = {CANNOT_RUN: "cannot run", FAILS: "runs but fails", MEETS: "meets"}

#: what a verdict stands for as the pages, the report and the CLI show it (issue 23 §2): the three outcomes, with a
#: meets split by what qualifies it, so "meets" (green) is kept for a plain meet.  :attr:`Verdict.standing`.
PLAIN = "meets"
QUALIFIED = "qualified"
VACUOUS = "vacuous"
LITTLE = "publishes_little"
STANDINGS = (PLAIN, QUALIFIED, VACUOUS, LITTLE, FAILS, CANNOT_RUN)
STANDING_LABELS = {
    PLAIN: "meets its guarantee",
    QUALIFIED: "meets its guarantee, qualified",
    VACUOUS: "meets its guarantee only vacuously",
    LITTLE: "meets its guarantee but publishes little",
    FAILS: LABELS[FAILS],
    CANNOT_RUN: LABELS[CANNOT_RUN],
}
#: short forms of the standings (table cells, legends)
STANDING_SHORT = {PLAIN: "meets", QUALIFIED: "meets, qualified", VACUOUS: "vacuous", LITTLE: "publishes little",
                  FAILS: "fails", CANNOT_RUN: "cannot run"}
#: a release that publishes fewer than this share of the records meets its guarantee but "publishes little"
LITTLE_SHARE = 0.5

#: the CLI's exit status when ``--require-guarantee`` is given and the release does not meet its guarantee
EXIT_NOT_MET = 3


def fmt(value: Any) -> str:
    """A figure as the verdict texts write it: integers with thousands separators, reals to 4 significant digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.4g}"
    return str(value)


def _name(key: str) -> str:
    """A figure's key as words (``largest_share`` -> ``largest share``; ``T_p`` stays ``T_p``)."""
    return key.replace("T_p", "T\0p").replace("_", " ").replace("\0", "_")


@dataclass(frozen=True)
class Failure:
    """One part of a guarantee that the release does not meet.

    Attributes
    ----------
    part : str
        The requirement in words with its bound, e.g. ``"association ≤ β = 0.1"``.
    measured : float
        The worst figure measured on the release.
    limit : float
        The bound it should respect.
    by : float
        How far the measured figure is on the wrong side of the bound (positive).
    count, of : int
        How many items fail, out of how many.
    unit : str
        What the items are ("groups", "records", "sub-tables", "counts").
    """

    part: str
    measured: float
    limit: float
    by: float
    count: int
    of: int
    unit: str

    def text(self) -> str:
        return (f"{self.part} fails on {self.count:,} of {self.of:,} {self.unit} "
                f"(worst {fmt(self.measured)}, off by {fmt(self.by)})")

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.part, "measured": float(self.measured), "limit": float(self.limit),
                "by": float(self.by), "count": int(self.count), "of": int(self.of), "unit": self.unit}


@dataclass(frozen=True)
class Verdict:
    """Whether a setting runs and whether its release meets the mechanism's own guarantee.

    Attributes
    ----------
    mechanism : str
    outcome : str
        :data:`CANNOT_RUN`, :data:`FAILS` or :data:`MEETS`.
    guarantee : str
        The guarantee in one sentence, with this setting's numbers.
    figures : mapping
        The figures measured on the release that decide it (JSON-ready).
    failures : tuple of Failure
        Empty unless ``outcome == FAILS``.
    unpublished : mapping or None
        ``{"records": n, "of": N, "by_value": {value: n}}`` when records are left out.
    outside : mapping or None
        ``{"values": [...], "records": n, "of": N, "why": text}``: values (and their records) that are
        published but outside the guarantee's scope.
    vacuous : str or None
        Why the guarantee says nothing (or nothing for some values) at this setting.
    reason : str
        Why the setting cannot run (``CANNOT_RUN`` only).
    suggestion : mapping or None
        ``{"params": {...}, "text": "γ = 7", "verified": bool, "plain": bool, ...}``: the nearest
        setting found whose release meets the guarantee (verified by sanitizing with it; ``plain``,
        ``unpublished`` and ``outside`` say how far, see :func:`core.mechanisms.nearest`), or, for
        ``CANNOT_RUN``, what would make the table eligible (``verified`` only when its release was
        checked too).
    notes : tuple of str
        Other things a steward should know beside the verdict (composition of answers, ...).
    explains : tuple of str
        The release's notes that this verdict restates (``Release.notes``): shown with the verdict, as its
        explanation, and not again on their own, so each message appears once.
    """

    mechanism: str
    outcome: str
    guarantee: str
    figures: Mapping[str, Any] = field(default_factory=dict)
    failures: tuple[Failure, ...] = ()
    unpublished: Mapping[str, Any] | None = None
    outside: Mapping[str, Any] | None = None
    vacuous: str | None = None
    reason: str = ""
    suggestion: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()
    explains: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}")
        if (self.outcome == FAILS) != bool(self.failures):
            raise ValueError("a verdict fails exactly when it lists failures")

    # ------------------------------------------------------------ reading
    @property
    def runs(self) -> bool:
        return self.outcome != CANNOT_RUN

    @property
    def meets(self) -> bool:
        """Meets its guarantee (possibly on the published records only, or vacuously)."""
        return self.outcome == MEETS

    @property
    def plain(self) -> bool:
        """Meets its guarantee unqualified: every record published, every value within its scope, non-vacuously.

        Exactly a meets with no :meth:`qualifiers`: records left unpublished,
        values outside the guarantee's scope (``outside``), a vacuous
        guarantee or a release that publishes little (:meth:`little`: under
        half of the records, or one group) each make it a qualified meets,
        never a plain one (the
        manifest's ``plain``, the green box on the pages, the CLI's
        ``--require-guarantee``).
        """
        return self.standing == PLAIN

    @property
    def covers(self) -> bool:
        """Meets its guarantee on every record it could publish, non-vacuously (``outside`` values allowed).

        What a suggestion must reach (:func:`core.mechanisms.nearest`):
        values outside the guarantee's scope come from the table and the
        guarantee's own terms (a value more frequent than ρ₁), so no nearby
        setting of the same guarantee removes them; the suggestion says so
        (its ``outside``) instead of being withheld.
        """
        return self.outcome == MEETS and not self.unpublished and not self.vacuous

    @property
    def label(self) -> str:
        return LABELS[self.outcome]

    def little(self) -> str:
        """Why a meets publishes little (empty when it does not): under half of the records, or one group.

        Read from ``unpublished`` (records left out) and the ``groups``
        figure (Mondrian's, Anatomy's ...): a guarantee met on the 0 records
        a release publishes, or by putting everyone in one group, protects by
        publishing (almost) nothing and is never shown as a plain meet.
        """
        if self.outcome != MEETS:
            return ""
        u = self.unpublished or {}
        of = int(u.get("of") or 0)
        if of and of - int(u.get("records") or 0) < LITTLE_SHARE * of:
            kept = of - int(u["records"])
            return f"it publishes {kept:,} of {of:,} records ({kept / of:.0%})"
        groups = self.figures.get("groups")
        if isinstance(groups, (int, float)) and not isinstance(groups, bool) and int(groups) <= 1:
            return f"it publishes {int(groups)} group{'' if int(groups) == 1 else 's'}: every record in one range"
        return ""

    @property
    def standing(self) -> str:
        """One of :data:`STANDINGS`: plain meet, qualified, vacuous, publishes little, fails, cannot run.

        A meets is ``publishes_little`` when :meth:`little` says so, else
        ``vacuous`` when the guarantee is vacuous, else ``qualified`` when
        records are unpublished or values are outside its scope, else a
        plain ``meets``.
        """
        if self.outcome != MEETS:
            return self.outcome
        if self.little():
            return LITTLE
        if self.vacuous:
            return VACUOUS
        if self.unpublished or self.outside:
            return QUALIFIED
        return PLAIN

    @property
    def heading(self) -> str:
        """The standing as words (:data:`STANDING_LABELS`), e.g. "meets its guarantee but publishes little"."""
        return STANDING_LABELS[self.standing]

    def qualifiers(self) -> list[str]:
        """What qualifies a meets: unpublished records, values outside the scope, vacuity."""
        out = []
        little = self.little()
        if little and not self.unpublished:
            out.append(little)
        if self.unpublished:
            u = self.unpublished
            values = ", ".join(f"'{k}': {v:,}" for k, v in list(u.get("by_value", {}).items())[:4])
            more = " …" if len(u.get("by_value", {})) > 4 else ""
            out.append(f"on the {u['of'] - u['records']:,} records it publishes only: {u['records']:,} of "
                       f"{u['of']:,} records are not published" + (f" ({values}{more})" if values else ""))
        if self.vacuous:
            out.append(f"vacuous: {self.vacuous}")
        if self.outside:
            out.append(self.outside["why"])
        return out

    def detail(self) -> str:
        """The verdict without its label: why not, what fails, or what qualifies it."""
        if self.outcome == CANNOT_RUN:
            return self.reason
        if self.outcome == FAILS:
            return "; ".join(f.text() for f in self.failures) + "."
        quals = self.qualifiers()
        return ("; ".join(quals) + ".") if quals else self.evidence()

    def evidence(self) -> str:
        """The figures that show a meets, as text."""
        shown = [(k, v) for k, v in self.figures.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        return ", ".join(f"{_name(k)} {fmt(v)}" for k, v in shown[:4]) + "."

    def suggestion_text(self) -> str:
        if not self.suggestion:
            return ""
        return str(self.suggestion.get("text", ""))

    @property
    def suggestion_plain(self) -> bool:
        """The suggestion was verified to meet the guarantee plainly (no record unpublished, no value outside).

        A suggestion dict carries ``"plain"`` (the verified release's
        :attr:`plain`), ``"unpublished"`` and ``"outside"`` counts when
        qualified; one without the mark (before issue 16) is plain.
        """
        s = self.suggestion
        return bool(s) and bool(s.get("verified", True)) and s.get("plain", True) is not False

    def _suggestion_scope(self) -> str:
        """How far the verified suggestion meets the guarantee, as a clause (empty for a plain one)."""
        s = self.suggestion or {}
        if s.get("little"):
            return f"but {s['little']}"
        u = s.get("unpublished")
        if u:
            return (f"on the {u['of'] - u['records']:,} records it publishes; {u['records']:,} of {u['of']:,} "
                    "not published")
        o = s.get("outside")
        if o:
            n = o.get("values", 0)
            n = len(n) if isinstance(n, (list, tuple)) else int(n)
            return (f"for the values within its scope; {n:,} value{'s' if n != 1 else ''} with "
                    f"{int(o.get('records', 0)):,} records outside it")
        return ""

    def suggestion_meets(self) -> str:
        """How the suggested setting was verified to meet the guarantee (for its button); empty if unverified.

        A suggestion that meets only on the records it publishes, or only
        for the values within the guarantee's scope, says so with the count.
        """
        s = self.suggestion
        if not s or not s.get("verified"):
            return ""
        scope = self._suggestion_scope()
        return "meets its guarantee" + (f" {scope}" if scope else "")

    def _others(self) -> str:
        """The other settings found that meet, as a clause (issue 23 §2: each with its groups), or empty."""
        others = (self.suggestion or {}).get("others") or ()
        if not others:
            return ""
        parts = []
        for o in others:
            extra = f"{fmt(o['groups'])} group{'' if o['groups'] == 1 else 's'}" if "groups" in o else ""
            if o.get("little"):
                extra = ", ".join(x for x in (extra, "publishes little") if x)
            parts.append(str(o["text"]) + (f" ({extra})" if extra else ""))
        return " Also meets: " + "; ".join(parts) + "."

    def fix(self) -> str:
        """The sentence offering the suggestion, worded by what it was verified to do (empty without one).

        For :data:`CANNOT_RUN` the suggestion is the mechanism's own idea of
        what would make the table eligible; only when its release was
        sanitized and checked (``verified``) is it said to meet the
        guarantee, otherwise the sentence says it was not checked, or what
        its release does not meet (``then``).
        """
        if not self.suggestion:
            return ""
        s = self.suggestion
        text = self.suggestion_text()
        scope = self._suggestion_scope()
        if self.outcome == CANNOT_RUN:
            if s.get("verified"):
                return f"What would work: {text} ({self.suggestion_meets()})."
            if s.get("then"):
                return (f"What would make it run: {text}; its release then: {s['then'].rstrip('.')} "
                        "(no nearby setting found that also meets the guarantee).")
            return f"What would make it run: {text} (not checked against the guarantee)."
        if self.outcome == MEETS:
            if s.get("unpublished"):
                return f"{text} meets it {scope}."
            return f"{text} meets it on every record" + (f" it publishes, {scope}." if scope else ".")
        if s.get("unpublished"):
            u = s["unpublished"]
            return (f"Nearest setting that meets it on the records it publishes: {text} "
                    f"({u['records']:,} of {u['of']:,} records not published; none found that meets it "
                    "on every record).")
        groups = (s.get("figures") or {}).get("groups")
        size = f"{fmt(groups)} group{'' if groups == 1 else 's'}" if isinstance(groups, (int, float)) else ""
        said = ", ".join(x for x in (size, scope) if x)
        return f"Nearest setting that meets it: {text}" + (f" ({said})." if said else ".") + self._others()

    def line(self) -> str:
        """One line for the CLI and logs: outcome, detail and the fix."""
        head = {CANNOT_RUN: "cannot run", FAILS: "does not meet its guarantee"}.get(self.outcome, self.heading)
        text = f"{self.mechanism}: {head}: {self.detail()}"
        if self.suggestion:
            text += " " + self.fix()
        return text

    def to_dict(self, suggestion: bool = True) -> dict[str, Any]:
        """JSON-ready form (the manifest's ``verdict``); ``suggestion=False`` leaves the fix out."""
        out: dict[str, Any] = {
            "outcome": self.outcome,
            "label": self.label,
            "standing": self.standing,
            "plain": self.plain,
            "guarantee": self.guarantee,
            "figures": dict(self.figures),
        }
        if self.failures:
            out["failures"] = [f.to_dict() for f in self.failures]
        if self.unpublished:
            out["unpublished"] = dict(self.unpublished)
        if self.outside:
            out["outside"] = dict(self.outside)
        if self.vacuous:
            out["vacuous"] = self.vacuous
        if self.reason:
            out["reason"] = self.reason
        if self.notes:
            out["notes"] = list(self.notes)
        if suggestion and self.suggestion:
            out["suggestion"] = dict(self.suggestion)
        return out

    def cells(self) -> dict[str, str]:
        """One text per outcome (:data:`SHORT` labels), filled for this verdict's outcome only (Home's table)."""
        out = {SHORT[o]: "" for o in OUTCOMES}
        if self.outcome == CANNOT_RUN:
            text = self.reason
            if self.suggestion:
                text += " " + self.fix()
        elif self.outcome == FAILS:
            text = self.detail()
            text += (" " + self.fix()) if self.suggestion else " No nearby setting meets it."
        else:
            quals = self.qualifiers()
            lead = {PLAIN: "Yes", QUALIFIED: "Yes, qualified", VACUOUS: "Only vacuously",
                    LITTLE: "Yes, but it publishes little"}[self.standing]
            text = (f"{lead}: " + "; ".join(quals) + ".") if quals else (f"{lead}: " + self.evidence())
            if self.suggestion:
                text += " " + self.fix()
        out[SHORT[self.outcome]] = text
        return out

    def with_suggestion(self, suggestion: Mapping[str, Any] | None) -> "Verdict":
        return replace(self, suggestion=dict(suggestion) if suggestion else None)


# ------------------------------------------------------------------ helpers for the mechanisms
def failure(part: str, measured: float, limit: float, count: int, of: int, unit: str,
            upper: bool = True) -> Failure:
    """A :class:`Failure` of an upper bound (``measured <= limit``) or, with ``upper=False``, a lower one."""
    by = (measured - limit) if upper else (limit - measured)
    return Failure(part, float(measured), float(limit), float(by), int(count), int(of), unit)


def restating(notes, *phrases: str) -> tuple[str, ...]:
    """The notes containing any of ``phrases`` (for :attr:`Verdict.explains`)."""
    return tuple(n for n in notes if any(p in n for p in phrases))


def judge(mechanism: str, guarantee: str, figures: Mapping[str, Any], failures=(), **kwargs) -> Verdict:
    """A runs-verdict: :data:`FAILS` when ``failures`` lists any, else :data:`MEETS`."""
    failures = tuple(f for f in failures if f is not None)
    return Verdict(mechanism=mechanism, outcome=FAILS if failures else MEETS, guarantee=guarantee,
                   figures=dict(figures), failures=failures, **kwargs)


def cannot_run(mechanism: str, guarantee: str, reason: str, suggestion: Mapping[str, Any] | None = None) -> Verdict:
    return Verdict(mechanism=mechanism, outcome=CANNOT_RUN, guarantee=guarantee, reason=reason,
                   suggestion=dict(suggestion) if suggestion else None)


def by_value(labels, counts, limit: int | None = None) -> dict[str, int]:
    """``{label: count}`` for the non-zero counts, largest first (ties: label order)."""
    pairs = [(str(labels[i]), int(c)) for i, c in enumerate(counts) if c > 0]
    pairs.sort(key=lambda kv: -kv[1])
    return dict(pairs[:limit] if limit else pairs)
