"""Every figure and table of the five papers' evaluation sections, with a verdict from our run.

Each :class:`Item` names a seed, the paper's number and caption, the data
stand-in (a sample spec with the sensitive attribute and QIs the paper
uses), the experiment of :mod:`core.experiments` that reproduces it and
its parameters (the paper's), the paper's printed statements and a judge
that compares each statement with our result.

Verdicts (per statement, and for the item the weakest of them):

* ``reproduced``: the printed value, range or ordering holds on our run
  (a value within the tolerance the statement names: "around 10%" is
  5-15%, "below 10%" is below 10%).
* ``reproduced in trend``: the direction or ordering holds but not the
  value (or the value only within twice its tolerance).
* ``not reproduced``: neither; the row says why, naming the data
  difference where one explains it.

An item whose paper prints no checkable statement is judged on the trend
its text describes.  An item without an experiment (a parameter table)
is judged against the defaults of the experiments that use it.

The stand-ins: ``census:N`` for CENSUS / OCC-N (Occupation as SA) and
EDU-N (Education as SA), ``hospital:42264`` for CADRMP (42,264 rows as the
paper's, 1,200 diagnoses instead of its 1,346), the densified census for
seed 004's Occ-100K-d.  Sizes are the paper's unless a run would take
more than about half a minute here; the item's ``data`` says which.

References
----------
seed 000 §6; seed 001 §6; seed 002 §6; seed 003 §7; seed 004 §9.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from . import experiments as _experiments
from .errors import ParameterError
from .experiments import ExperimentResult

__all__ = ["Item", "ITEMS", "get", "by_seed", "judge", "VERDICTS", "verdict_of", "load_standin"]

REPRODUCED, TREND, NOT = "reproduced", "reproduced in trend", "not reproduced"
VERDICTS = (REPRODUCED, TREND, NOT)
SEEDS = {
    "000": "Fu et al., small sum privacy and large sum utility (SPLU-Gen)",
    "001": "Wang et al., (λ, δ)-reconstruction privacy",
    "002": "Chaytor & Wang, small domain randomization (PP)",
    "003": "Wang et al., F′-privacy bucketization",
    "004": "Hui Wang, Ambiguity and PriView",
}

EDU_QI = ("age", "workclass", "marital_status", "race", "sex", "native_country", "occupation")


@dataclass(frozen=True)
class Row:
    statement: str
    paper: str
    ours: str
    verdict: str
    why: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"paper's statement": self.statement, "paper": self.paper, "ours": self.ours,
                "verdict": self.verdict, "why": self.why}


Judge = Callable[[ExperimentResult], list[Row]]


@dataclass(frozen=True)
class Item:
    """One figure or table of a paper's evaluation section."""

    key: str               # "000-fig7"
    seed: str              # "000"
    number: str            # "Fig. 7"
    caption: str           # the paper's caption
    section: str           # "§6.2.2"
    experiment: str | None
    params: Mapping[str, Any] = field(default_factory=dict)
    data: str = "census:100000"
    sa: str | None = None
    qi: tuple[str, ...] | None = None
    judge: Judge | None = None
    static: tuple[Row, ...] = ()  # statements judged without a run (parameter tables)
    differences: str = ""  # data differences that explain departures
    why_no_experiment: str = ""
    explore: str = ""  # query string opening the paper's setting on the Sanitize page
    query_error: str = ""  # query string opening the paper's queries on the Query error page
    no_ratio: str = ""  # a timing figure whose paper's times cannot be read: why there is no ratio


    @property
    def standin(self) -> str:
        who = f", SA {self.sa}" if self.sa else ""
        return f"{self.data}{who}"


def _pct(v: float | None) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.1%}"


def _f(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.{digits}g}"


def _ok(cond: bool, trend: bool = False) -> str:
    return REPRODUCED if cond else (TREND if trend else NOT)


def _spearman(y) -> float | None:
    y = [v for v in y if v is not None and np.isfinite(v)]
    if len(y) < 2:
        return None
    x = np.arange(len(y))
    r = pd.Series(y).rank().to_numpy()
    if np.std(r) == 0:
        return 0.0
    return float(np.corrcoef(x, r)[0, 1])


def _at(xs, ys, x):
    """ys at x (or at the nearest x)."""
    i = int(np.argmin([abs(v - x) for v in xs]))
    return ys[i], xs[i]


def verdict_of(rows: list[Row]) -> str:
    if not rows:
        return NOT
    return max((r.verdict for r in rows), key=VERDICTS.index)


# ------------------------------------------------------------------ seed 000 judges
def _j000_fig7(res: ExperimentResult, laplace_small: bool = True) -> list[Row]:
    d = res.data
    g, sp = d["gammas"], d["series"]
    splu = sp["SPLU-Gen"]
    corr = float(np.corrcoef(g, [v if v is not None else np.nan for v in splu])[0, 1]) if len(g) > 2 else None
    rows = [Row("SPLU-Gen's small-count error grows linearly with γ", "positive linear correlation",
                f"Pearson r = {_f(corr)} ({_f(splu[0])} at γ = {g[0]} to {_f(splu[-1])} at γ = {g[-1]})",
                _ok(corr is not None and corr > 0.9, corr is not None and corr > 0))]
    s5, _ = _at(g, splu, 5)
    rows.append(Row("γ = 5 already gives a big relative error", "big (not quantified)", f"{_f(s5)} at γ = 5",
                    _ok(s5 is not None and s5 >= 1.0, s5 is not None and s5 >= 0.5),
                    "an error of 1 or more means a small count is off by at least itself"))
    ln3 = sp["Laplace ε = ln 3"][0]
    others = [v for k in ("SPLU-Gen", "Anatomy", "DBR") for v in [_at(g, sp[k], 5)[0]] if v is not None]
    rows.append(Row("Laplace noise at ε = ln 3 gives a small error compared with the other methods",
                    "smallest", f"{_f(ln3)} vs {', '.join(_f(v) for v in others)} (SPLU-Gen, Anatomy, DBR at γ = 5)",
                    _ok(ln3 is not None and all(ln3 < v for v in others))))
    ln2 = sp["Laplace ε = ln 2"][0]
    rows.append(Row("A smaller ε gives a bigger error", "ε = ln 2 above ε = ln 3", f"{_f(ln2)} vs {_f(ln3)}",
                    _ok(ln2 is not None and ln3 is not None and ln2 > ln3)))
    a_top = sp["Anatomy"][-1]
    rows.append(Row("SPLU-Gen has the highest error at the larger γ (more sensitive to group size than Anatomy)",
                    f"SPLU-Gen above Anatomy at γ = {g[-1]}", f"{_f(splu[-1])} vs {_f(a_top)}",
                    _ok(splu[-1] is not None and a_top is not None and splu[-1] > a_top)))
    return rows


def _j000_fig10(res: ExperimentResult) -> list[Row]:
    d = res.data
    g, sp = d["gammas"], d["series"]
    higher = []
    for i, x in enumerate(g):
        if x < 4:
            continue
        s = sp["SPLU-Gen"][i]
        rest = [sp[k][i] for k in sp if k != "SPLU-Gen" and sp[k][i] is not None]
        higher.append(s is not None and all(s > v for v in rest))
    share = sum(higher) / len(higher) if higher else 0
    rows = [Row("SPLU-Gen has a clearly higher error than every other method at γ ≥ 4", "highest at every γ ≥ 4",
                f"highest at {sum(higher)} of {len(higher)} values of γ ≥ 4", _ok(share == 1, share >= 0.5))]
    return rows + [r for r in _j000_fig7(res) if r.statement.startswith("Laplace")]


def _j000_fig8(res: ExperimentResult) -> list[Row]:
    d = res.data
    names, sp = d["bands"], d["series"]
    rows = []
    s = sp.get("SPLU-Gen")
    if s:
        rho = _spearman(s)
        mono = all(a >= b for a, b in zip(s, s[1:]) if a is not None and b is not None)
        rows.append(Row("SPLU-Gen's error falls as the selectivity grows (law of large numbers)",
                        "decreasing over the bands", ", ".join(f"{n}: {_f(v)}" for n, v in zip(names, s)),
                        _ok(mono, rho is not None and rho < 0),
                        "" if mono else f"falls overall (rank correlation {_f(rho)}) but not band by band"))
    a = sp.get("Anatomy")
    if a:
        rho = _spearman(a)
        rows.append(Row("Anatomy does not show a similar trend", "no clear decrease",
                        f"rank correlation with selectivity {_f(rho)}", _ok(rho is not None and rho > -0.5),
                        "" if rho is None or rho > -0.5 else "on our data Anatomy's error also falls with "
                        "selectivity: a group's estimate spreads a count evenly over l values, which errs less on "
                        "larger counts too"))
    dbr = sp.get("DBR")
    if s and dbr:
        rows.append(Row("DBR errs more than SPLU-Gen at the smaller selectivities", "DBR above SPLU-Gen",
                        f"{_f(dbr[0])} vs {_f(s[0])} in {names[0]}", _ok(dbr[0] is not None and s[0] is not None
                                                                            and dbr[0] > s[0])))
    return rows


def _j000_fig9(res: ExperimentResult) -> list[Row]:
    d = res.data
    names, gammas = d["bands"], d["gammas"]
    g = 5 if 5 in gammas else gammas[0]
    s = d["panels"]["SPLU-Gen"][f"γ = {g}"]
    hi = [v for n, v in zip(names, s) if v is not None and n in ("[2%, 3%)", "[3%, 4%)", "[4%, 5%)")]
    around = float(np.mean(hi)) if hi else None
    rows = [Row("(a) SPLU-Gen: for selectivity 2%-5% the relative error is around 10%", "about 0.10",
                f"{_f(around)} (mean of the 2%-5% bands, γ = {g})",
                _ok(around is not None and 0.05 <= around <= 0.15, around is not None and around <= 0.2),
                "" if around is None or around <= 0.15 else
                "on our census stand-in (Adult resampled, occupation widened to 50 values) the estimator's error "
                "grows with the size of the predicate and the value's frequency")]
    top = max((v for v in s if v is not None), default=None)
    rows.append(Row("(a) the error is bounded by 20% for selectivities 0.5%-5%", "≤ 0.20",
                    f"largest band mean {_f(top)}", _ok(top is not None and top <= 0.2,
                                                        top is not None and top <= 0.4)))
    last = s[-1]
    smallest = last is not None and all(last <= v for v in s if v is not None)
    rows.append(Row("(a) the error is smallest at 4%-5%", "minimum in the last band",
                    f"{names[-1]}: {_f(last)}; minimum {_f(min((v for v in s if v is not None), default=None))}",
                    _ok(smallest, last is not None and last < (s[0] or np.inf))))
    ov = d["overall"]
    i = gammas.index(g)
    a, sp_, db = ov["Anatomy"][i], ov["SPLU-Gen"][i], ov["DBR"][i]
    rows.append(Row("(b) Anatomy's overall error is larger than SPLU-Gen's", "Anatomy above SPLU-Gen",
                    f"{_f(a)} vs {_f(sp_)} (all large counts, γ = {g})",
                    _ok(a is not None and sp_ is not None and a > sp_)))
    rows.append(Row("(c) DBR gives higher errors for large sums", "DBR above SPLU-Gen", f"{_f(db)} vs {_f(sp_)}",
                    _ok(db is not None and sp_ is not None and db > sp_)))
    return rows


def _j000_special(res: ExperimentResult) -> list[Row]:
    s = res.data["series"].get("SPLU-Gen") or [None]
    n = res.data["counts"][0]
    v = s[0]
    return [Row("Queries of 5%-8% selectivity (age generalised), γ = 5, 100 K rows: SPLU-Gen's error is 0.01",
                "0.01", f"{_f(v)} over {n} queries in [5%, 8%)",
                _ok(v is not None and v <= 0.02, v is not None and v <= 0.1),
                "our pool reaches 5%-8% with single-attribute conditions on frequent occupations, without "
                "generalising age; " + ("too few queries in range to judge" if n < 5 else
                                        "the census stand-in's error on large counts is higher (see Fig. 9)"))]


def _j000_fig11(res: ExperimentResult) -> list[Row]:
    d = res.data
    sp = d["series"]
    vals = [v for s in sp.values() for v in s if v is not None]
    lo, hi = (min(vals), max(vals)) if vals else (None, None)
    rows = [Row("Errors range from below 10% to below 30%", "min < 0.10, max < 0.30",
                f"from {_f(lo)} to {_f(hi)}", _ok(lo is not None and lo < 0.1 and hi < 0.3,
                                                   lo is not None and hi < 0.6),
                "" if hi is None or hi < 0.3 else "hospital:42264 has 1,200 Zipf-distributed diagnoses (the paper's "
                "CADRMP 1,346 with one above 10%); its large-count queries rest on few frequent codes")]
    s, a = sp.get("SPLU-Gen"), sp.get("Anatomy")
    empty = [b for b, c in zip(d["bands"], d["counts"]) if c == 0]
    why_empty = (f"no query falls in {', '.join(empty)}: hospital's most frequent diagnosis holds about 4.3% of the "
                 "rows (CADRMP has one above 10%), so no condition AND diagnosis = v selects more") if empty else ""
    if s and a:
        pairs = [(x, y) for x, y in zip(s, a) if x is not None and y is not None]
        r = float(np.corrcoef(*zip(*pairs))[0, 1]) if len(pairs) > 2 else None
        rows.append(Row("SPLU-Gen, Anatomy and DBR are similar in trend", "the curves move together",
                        f"correlation of SPLU-Gen and Anatomy over {len(pairs)} bands with queries: {_f(r)}",
                        _ok(r is not None and r > 0.5, r is not None and r > 0),
                        why_empty or ("" if r is not None else "fewer than three bands with queries")))
    if empty:
        rows[0] = Row(rows[0].statement, rows[0].paper, rows[0].ours + f" ({len(d['bands']) - len(empty)} of "
                      f"{len(d['bands'])} bands have queries)", rows[0].verdict, "; ".join(
                          x for x in (rows[0].why, why_empty) if x))
    return rows


def _j000_fig12(res: ExperimentResult) -> list[Row]:
    g, e = res.data["gammas"], res.data["errors"]
    v5, _ = _at(g, e, 5)
    return [Row("With two sensitive attributes (0.1%-0.7% selectivity) the accuracy matches the single-SA case",
                "about the single-SA large-count error (≤ 0.2, Fig. 9)",
                f"{_f(v5)} at γ = 5 ({res.data['queries']:,} joint queries); {_f(e[0])} to {_f(e[-1])} over γ",
                _ok(v5 is not None and v5 <= 0.2, v5 is not None and v5 <= 0.4),
                "" if v5 is None or v5 <= 0.2 else "joint counts at 0.1%-0.7% hold 100-700 records; the 8-state "
                "reconstruction's variance on them is that of a count this small")]


def _j000_time(res: ExperimentResult) -> list[Row]:
    rows = res.data["rows"]
    worst = max((r["seconds here (median)"] for r in rows if r["seconds here (median)"] is not None), default=None)
    return [Row("SPLU-Gen finishes within 10 s on 500 K rows for every γ from 2 to 10", "< 10 s (C++, i3 3.1 GHz)",
                f"at most {_f(worst)} s on {res.data['n']:,} rows (ratio {_f(worst / 10 if worst else None)})",
                _ok(worst is not None and worst < 10))]


# ------------------------------------------------------------------ seed 001 judges
def _j001_violations(res: ExperimentResult) -> list[Row]:
    t = res.data["table"]
    t = t[t["bound"] == "simplified"]
    rows = []
    for var, label in (("p", "retention probability p"), ("lambda", "λ"), ("delta", "δ"), ("N", "|T|")):
        sub = t[t["varied"] == var].sort_values("value")
        if sub.empty:
            continue
        y = sub["share_groups_violating"].to_numpy()
        mono = bool(np.all(np.diff(y) >= 0))
        rows.append(Row(f"A larger {label} gives more violating micro groups", "increasing",
                        ", ".join(f"{v:g}: {p:.3%}" for v, p in zip(sub["value"], y)),
                        _ok(mono and y[-1] > y[0], y[-1] > y[0])))
    top = float(t["share_groups_violating"].max()) if len(t) else 0.0
    rows.append(Row("A nontrivial share of micro groups violate reconstruction privacy", "nontrivial (> 0)",
                    f"up to {top:.2%} of micro groups", _ok(top > 0)))
    return rows


def _j001_error(res: ExperimentResult) -> list[Row]:
    t = res.data["table"]
    ratio = t["RP / UP (large)"].to_numpy(dtype=float)
    worst = float(np.nanmax(ratio)) if len(ratio) else None
    return [Row("RP's error is only slightly above UP's across all settings", "RP / UP close to 1",
                f"RP / UP on large counts at most {_f(worst)}", _ok(worst is not None and worst <= 1.15,
                                                                    worst is not None and worst <= 1.5))]


def _j001_tables45(res: ExperimentResult) -> list[Row]:
    t = res.data["table"]
    f = t["f in g"].to_numpy(dtype=float)
    ft = t["f in T"].to_numpy(dtype=float)
    return [Row("The 7 micro groups most concentrated on one value have it at 72%-87% (EDU-500K), against 2.5%-17% "
                "in the whole table", "f in g 0.72-0.87", f"f in g {f.min():.2f}-{f.max():.2f}; f in T "
                f"{ft.min():.3f}-{ft.max():.3f}", _ok(f.min() >= 0.6 and f.max() <= 1.0, f.min() >= 0.4),
                "census:500000 is Adult resampled: its micro groups repeat Adult's 45,222 people, so they are "
                "more concentrated than the real CENSUS's")]


# ------------------------------------------------------------------ seed 002 judges
def _j002_table2(res: ExperimentResult) -> list[Row]:
    rows = res.data["rows"]
    up = [r["UP retention"] for r in rows]
    pp = [r["PP retention (record-weighted)"] for r in rows]
    paper_up, paper_pp = [0.029, 0.040, 0.059, 0.094], [0.090, 0.123, 0.173, 0.257]
    close = all(abs(a - b) <= 0.005 for a, b in zip(up, paper_up))
    out = [Row("UP retention for L = 6, 5, 4, 3", "2.9%, 4.0%, 5.9%, 9.4%", ", ".join(_pct(v) for v in up),
               _ok(close, True), "the paper's own eq. 4 and 6 give 2.72%, 3.85%, 5.66%, 9.09% at m = 50; ours "
               "follow the equations")]
    rel = max(abs(a - b) / b for a, b in zip(pp, paper_pp))
    out.append(Row("PP retention for L = 6, 5, 4, 3", "9.0%, 12.3%, 17.3%, 25.7%", ", ".join(_pct(v) for v in pp),
                   _ok(rel <= 0.1, all(p > u for p, u in zip(pp, up))),
                   "" if rel <= 0.1 else "census:300000's occupation counts differ from the paper's OCC-300K"))
    ratio = [p / u for p, u in zip(pp, up)]
    out.append(Row("PP keeps about 3x more records than UP", "PP/UP 2.7-3.1", ", ".join(f"{r:.1f}x" for r in ratio),
                   _ok(all(2.5 <= r <= 4 for r in ratio), all(r > 1 for r in ratio))))
    return out


def _j002_table3(res: ExperimentResult) -> list[Row]:
    st = res.data["stats"]
    r6 = next((r for r in st if r.get("L") == 6), st[0])
    ours = (f"{r6['initial groups t']} initial groups, {r6['sub-tables']} sub-tables, avg m_i {r6['avg m_i']:.1f}, "
            f"avg γ_i {r6['avg γ_i']:.2f}")
    ok = 17 <= r6["initial groups t"] <= 20 and 8 <= r6["sub-tables"] <= 15 and 2.5 <= r6["avg γ_i"] <= 2.9
    return [Row("PP's partition of OCC-300K at ρ₂ = 1/6", "19 initial groups, 10 sub-tables, avg m_i 17.3, avg γ 2.6",
                ours, _ok(ok, True), "sizes 100K-500K other than 300K are not run here")]


def _j002_error(res: ExperimentResult) -> list[Row]:
    e = res.data["errors"]
    pp, up, ana = e.get("PP"), e.get("UP"), e.get("Ana")
    rows = []
    if pp and up:
        flat = [(a, b) for x, y in zip(pp, up) for a, b in zip(x, y) if a is not None and b is not None]
        wins = sum(a <= b + 1e-9 for a, b in flat)
        rows.append(Row("PP's error is at most UP's", "PP ≤ UP", f"PP ≤ UP in {wins} of {len(flat)} (setting, "
                        "threshold) pairs", _ok(wins == len(flat), wins >= len(flat) / 2)))
    if pp and ana:
        flat = [(a, b) for x, y in zip(pp, ana) for a, b in zip(x, y) if a is not None and b is not None]
        wins = sum(a < b for a, b in flat)
        rows.append(Row("Anatomy errs more than PP", "Ana above PP", f"in {wins} of {len(flat)} pairs",
                        _ok(flat != [] and wins == len(flat), wins >= len(flat) / 2)))
    return rows


def _j002_fig4(res: ExperimentResult) -> list[Row]:
    rows = _j002_error(res)
    e = res.data["errors"]
    pp, up = e.get("PP"), e.get("UP")
    if pp and up:
        diff = max(abs(a - b) for x, y in zip(pp, up) for a, b in zip(x, y) if a is not None and b is not None)
        rows.append(Row("On EDU PP degenerates into UP (m = 14 needs no partition)", "PP = UP",
                        f"largest difference {_f(diff)}", _ok(diff < 1e-9, diff < 0.05),
                        "census has 16 education values, not 14"))
    return rows


def _j002_scatter(res: ExperimentResult) -> list[Row]:
    s = {r["mechanism"]: r for r in res.data["summary"]}
    best = max(s, key=lambda k: s[k]["correlation est/act"])
    return [Row("PP has the best concentration of points near the diagonal", "PP",
                ", ".join(f"{k}: r = {v['correlation est/act']:.3f}, error {v['mean relative error']:.3f}"
                          for k, v in s.items()), _ok(best == "PP"))]


def _j002_time(res: ExperimentResult) -> list[Row]:
    rows = [r for r in res.data["rows"] if r["seconds here"] is not None]
    pp = [r for r in rows if r["mechanism"].startswith("sdr")]
    worst = max((r["seconds here"] for r in pp), default=None)
    return [Row("PP finishes within 30 s for every |T| tested and is comparable to Ana and UP", "≤ 30 s",
                f"PP at most {_f(worst)} s (ratio to 30 s: {_f(worst / 30 if worst else None)})",
                _ok(worst is not None and worst <= 30))]


# ------------------------------------------------------------------ seed 003 judges
def _j003_profile_occ(res: ExperimentResult) -> list[Row]:
    st = res.data["stats"]
    occ, edu = st.get("occupation"), st.get("education")
    rows = []
    if occ:
        rows.append(Row("OCC-300K: largest share 7.5%, smallest 0.18%", "7.5%, 0.18%",
                        f"{_pct(occ['max share'])}, {occ['min share']:.3%}",
                        _ok(abs(occ["max share"] - 0.075) < 0.01 and abs(occ["min share"] - 0.0018) < 0.001,
                            abs(occ["max share"] - 0.075) < 0.02),
                        "census widens Adult's 14 occupations to 50 by splitting values with halving shares, so its "
                        "rarest sub-values are far rarer than the real CENSUS's"))
    if edu:
        rows.append(Row("EDU-300K: largest share 27.3%, smallest 0.44%", "27.3%, 0.44%",
                        f"{_pct(edu['max share'])}, {edu['min share']:.3%}",
                        _ok(abs(edu["max share"] - 0.273) < 0.03 and abs(edu["min share"] - 0.0044) < 0.002,
                            abs(edu["max share"] - 0.273) < 0.08), "Adult's education (16 values) is the stand-in"))
    return rows


def _domains_rows(res: ExperimentResult, what: str) -> list[Row]:
    paper, here = res.data["paper"], res.data["domains"]
    diff = [f"{k} {here.get(k, 'absent')} vs {v}" for k, v in paper.items() if here.get(k) != v]
    same = [k for k, v in paper.items() if here.get(k) == v]
    return [Row(f"{what}: distinct values per attribute", ", ".join(f"{k} {v}" for k, v in paper.items()),
                f"same for {', '.join(same) or 'none'}" + (f"; differs: {', '.join(diff)}" if diff else ""),
                _ok(not diff),
                "our stand-in is Adult resampled (ages 17-90, 16 education levels, 7 work classes); occupation, "
                "race and country are widened to the papers' sizes" if diff else "")]


def _j003_fig3(res: ExperimentResult) -> list[Row]:
    rows = res.data["rows"]
    ls = {r["θ"]: r["ℓ = ⌈1/min f′ᵢ⌉"] for r in rows}
    big = all(v > 13 for t, v in ls.items() if t != 32)
    return [Row("Except at θ = 32 a rather large ℓ is needed, above what ℓ-diversity allows (ℓ ≥ 14 infeasible on "
                "OCC-300K)", "ℓ large for θ < 32; ℓ ≈ 13 at θ = 32", ", ".join(f"θ={t}: ℓ={v}" for t, v in ls.items()),
                _ok(big and 10 <= ls.get(32, 0) <= 16, big),
                "our rarest occupation has share 0.006% (the paper's 0.18%), so f′ = θf + 0.02 stays near 0.02 "
                "and ℓ near 50 even at θ = 32")]


def _j003_fig45(res: ExperimentResult, which: str) -> list[Row]:
    d = res.data
    th = d["thetas"]
    rows = []
    if which == "mse":
        m = d["mse"]
        ana = m.get("Anatomy") or m.get(next((k for k in m if k.startswith("Anatomy")), ""), [])
        two, multi, opt = m.get("TwoSize"), m.get("MultiSize"), m.get("Optimal")
        if ana and multi:
            ok = all(a is not None and b is not None and a > b for a, b in zip(ana, multi))
            rows.append(Row("Anatomy has a much higher MSE than every other method at every θ", "Anatomy highest",
                            f"Anatomy {', '.join(_f(v) for v in ana)} vs MultiSize {', '.join(_f(v) for v in multi)}",
                            _ok(ok)))
        if two and multi:
            pairs = [(a, b) for a, b in zip(two, multi) if a is not None and b is not None]
            ok = all(a >= b - 1e-9 for a, b in pairs)
            worst = max((a / b for a, b in pairs if b), default=None)
            rows.append(Row("TwoSize's MSE is only slightly above MultiSize's", "slightly above",
                            f"TwoSize / MultiSize up to {_f(worst)}", _ok(ok and worst is not None and worst <= 1.2,
                                                                         ok)))
        if opt and multi:
            pairs = [(a, b) for a, b in zip(multi, opt) if a is not None and b is not None]
            rows.append(Row("MultiSize's MSE is only slightly above Optimal's", "slightly above",
                            f"{len(pairs)} θ with Optimal solved" + (
                                f"; MultiSize / Optimal up to {_f(max(a / b for a, b in pairs if b))}" if pairs else
                                ": the integer program is too large here for every θ"),
                            _ok(bool(pairs) and all(1 - 1e-9 <= a / b <= 1.2 for a, b in pairs if b), bool(pairs)),
                            "" if pairs else "50 values x up to 49 sizes exceed the integer program's size limit"))
    else:
        e = d["error"]
        vals = [v for k in ("TwoSize", "MultiSize", "Optimal") for v in (e.get(k) or []) if v is not None]
        top = max(vals, default=None)
        rows.append(Row("OCC: the largest relative error is slightly over 10%", "about 0.10",
                        f"largest {_f(top)} (over θ = {', '.join(map(str, th))})",
                        _ok(top is not None and 0.08 <= top <= 0.15, top is not None and top <= 0.25)))
        two, multi = e.get("TwoSize"), e.get("MultiSize")
        if two and multi:
            gap = max(abs(a - b) for a, b in zip(two, multi) if a is not None and b is not None)
            rows.append(Row("TwoSize, MultiSize and Optimal are close to each other", "close",
                            f"largest TwoSize-MultiSize gap {_f(gap)}", _ok(gap <= 0.02, gap <= 0.05)))
    return rows


def _j003_fig6(res: ExperimentResult) -> list[Row]:
    rows = res.data["rows"]
    f = [r.get("Full-pruning") for r in rows]
    lo = [r.get("Loss-pruning") for r in rows]
    no = [r.get("No-pruning") for r in rows]
    op = [r.get("Optimal (MILP)") for r in rows]
    out = [Row("Full-pruning takes the least time, No-pruning the most", "Full < Loss < None",
               "; ".join(f"|T| {r['|T|']:,}: {_f(a)} < {_f(b)} < {_f(c)} s" for r, a, b, c in zip(rows, f, lo, no)),
               _ok(all(a is not None and b is not None and c is not None and a < b < c for a, b, c in zip(f, lo, no)),
                   all(a is not None and b is not None and a < b for a, b in zip(f, lo))))]
    grow = lo[-1] is not None and lo[0] is not None and lo[-1] > lo[0]
    flat = f[-1] is not None and f[0] is not None and f[-1] < 3 * max(f[0], 1e-3)
    out.append(Row("Loss-pruning grows with |T|; Full-pruning hardly changes", "Loss up, Full flat",
                   f"Loss {_f(lo[0])} to {_f(lo[-1])} s, Full {_f(f[0])} to {_f(f[-1])} s",
                   _ok(grow and flat, grow or flat)))
    pairs = [(a, b) for a, b in zip(op, no) if a is not None and b is not None]
    out.append(Row("Optimal takes less time than No-pruning at |SA| = 50", "Optimal < No-pruning",
                   ", ".join(f"{_f(a)} vs {_f(b)} s" for a, b in pairs) or "the integer program did not finish",
                   _ok(bool(pairs) and all(a < b for a, b in pairs), any(a < b for a, b in pairs)),
                   "the paper's |T| are 100K-500K; ours are smaller so the plain scan runs in seconds, and HiGHS "
                   "is not the paper's solver"))
    return out


def _j003_fig7(res: ExperimentResult) -> list[Row]:
    rows = res.data["rows"]
    f = [r.get("Full-pruning") for r in rows]
    op = [r.get("Optimal (multi-size MILP)") for r in rows]
    out = [Row("Full-pruning increases little as |SA| grows (linear in |SA|)", "nearly flat",
               f"{_f(f[0])} s at γ = {rows[0]['γ']} to {_f(f[-1])} s at γ = {rows[-1]['γ']}",
               _ok(f[-1] < 10 * max(f[0], 1e-3), f[-1] < 100 * max(f[0], 1e-3)))]
    solved = [r["γ"] for r, v in zip(rows, op) if v is not None]
    out.append(Row("Optimal's time grows quickly with |SA| (exponential)", "Optimal grows fast",
                   f"the integer program finishes (within its size and time limits) for γ in {solved or 'none'}",
                   _ok(bool(solved) and len(solved) < len(rows), not solved),
                   "past its size limit we stop it instead of timing it" if solved else
                   "it finished at no γ here (HiGHS, 10 s limit), so its growth is not measured"))
    no = [r.get("No-pruning") for r in rows if r.get("No-pruning") is not None]
    if len(no) >= 2:
        out.append(Row("No-pruning gets faster as |SA| grows", "decreasing", f"{_f(no[0])} to {_f(no[-1])} s",
                       _ok(no[-1] < no[0])))
    lo = [r.get("Loss-pruning") for r in rows if r.get("Loss-pruning") is not None]
    if len(lo) >= 2:
        out.append(Row("Loss-pruning increases little", "nearly flat", f"{_f(lo[0])} to {_f(lo[-1])} s",
                       _ok(lo[0] <= lo[-1] <= 3 * lo[0], lo[-1] < lo[0]),
                       "" if lo[0] <= lo[-1] else "ours falls: larger domains raise the smallest bucket size and "
                       "shorten the candidate list, as the paper explains for No-pruning"))
    return out


# ------------------------------------------------------------------ seed 004 judges
def _order_rows(means: Mapping[str, float | None], where: str) -> list[Row]:
    p, a, m = (means.get(k) for k in ("PriView", "Ambiguity", "Mondrian"))
    return [Row(f"PriView always wins {where}", "PriView lowest", f"PriView {_f(p)}, Ambiguity {_f(a)}, Mondrian "
                f"{_f(m)}", _ok(p is not None and a is not None and m is not None and p <= a and p <= m)),
            Row(f"Ambiguity is always more accurate than generalization (Mondrian) {where}", "Ambiguity < Mondrian",
                f"Ambiguity {_f(a)} vs Mondrian {_f(m)}", _ok(a is not None and m is not None and a < m),
                "" if a is None or m is None or a < m else "Ambiguity's groups draw each record from a different "
                "sensitive value and spread over unrelated QI values, while Mondrian's are boxes of similar records; "
                "Theorem 3 compares Ambiguity with a generalization of the same groups, not Mondrian's")]


def _j004_fig13a(res: ExperimentResult) -> list[Row]:
    errs = res.data["errors"]
    rows = []
    for k, ys in errs.items():
        rho = _spearman(ys)
        rows.append(Row(f"{k}: the loss decreases when the queries are more selective",
                        "lower error at 1% than at 5% and 10%", "1%, 5%, 10%: " + ", ".join(_f(v) for v in ys),
                        _ok(rho is not None and rho >= 0.99, rho is not None and rho > 0)))
    return rows + _order_rows(res.data["means"], "over all queries")


def _j004_fig13b(res: ExperimentResult) -> list[Row]:
    errs = res.data["errors"]
    rows = []
    for k, ys in errs.items():
        rho = _spearman(ys)
        rows.append(Row(f"{k}: the loss increases with more attributes in the query", "increasing in d",
                        ", ".join(_f(v) for v in ys), _ok(rho is not None and rho >= 0.99,
                                                          rho is not None and rho > 0)))
    return rows + _order_rows(res.data["means"], "over all queries")


def _j004_fig14(res: ExperimentResult) -> list[Row]:
    errs = res.data["errors"]
    rows = []
    for k, ys in errs.items():
        rho = _spearman(ys)
        rows.append(Row(f"{k}: the loss decreases as β grows", "decreasing in β", ", ".join(_f(v) for v in ys),
                        _ok(rho is not None and rho <= -0.99, rho is not None and rho < 0)))
    m, a = errs.get("Mondrian"), errs.get("Ambiguity")
    if m and a:
        better = sum(x is not None and y is not None and y < x for x, y in zip(m, a))
        rows.append(Row("Ambiguity and PriView are much more accurate than generalization at every β",
                        "below Mondrian", f"Ambiguity below Mondrian at {better} of {len(m)} β",
                        _ok(better == len(m), better > 0)))
    return rows


def _j004_fig15(res: ExperimentResult) -> list[Row]:
    errs = res.data["errors"]
    rows = []
    for k, tag in (("Ambiguity", "(a)"), ("PriView", "(b)")):
        ys = errs.get(k) or []
        rho = _spearman(ys)
        rows.append(Row(f"{tag} {k}: denser tables give worse accuracy", "error increasing in d",
                        ", ".join(_f(v) for v in ys), _ok(rho is not None and rho >= 0.99, rho is not None and rho > 0),
                        "" if rho is not None and rho > 0 else
                        "on our densified census the groups keep the same size (the construction stops at ⌈1/β⌉ "
                        "records once presence holds) and repeated records make each group's QI values fewer, "
                        "so the even split errs less; the paper explains its trend by larger groups"))
    return rows


def _j004_fig11(res: ExperimentResult) -> list[Row]:
    rows = res.data["rows"]
    t = [r["seconds here"] for r in rows if r["seconds here"] is not None]
    spread = max(t) / min(t) if t else None
    return [Row("Construction time is not linear in α or β", "not linear",
                f"{min(t):.2f}-{max(t):.2f} s over the grid (ratio {spread:.1f})" if t else "no run",
                _ok(bool(t)), "the paper prints no times (its figure did not survive extraction), so only the shape "
                "is compared; our times are of Python on 2 shared cores")]


def _j004_fig12(res: ExperimentResult) -> list[Row]:
    rows = res.data["rows"]
    out = []
    for b in res.data["betas"]:
        ys = [r["seconds here"] for r in rows if r["β"] == b]
        rho = _spearman(ys)
        out.append(Row(f"β = {b:g}: the sparser the table, the faster", "time increasing in d",
                       ", ".join(_f(v) for v in ys), _ok(rho is not None and rho >= 0.9, rho is not None and rho > 0),
                       "our construction scores a window of candidates per pick, so its time barely depends on how "
                       "many distinct values a group covers; timings on shared cores are noisy"))
    return out


# ------------------------------------------------------------------ the registry
def _j004_thm6(res: ExperimentResult) -> list[Row]:
    rows = {r["release"]: r for r in res.data["rows"]}
    p = rows.get("PriView (paper's construction)")
    x = rows.get("PriView (construction=exact)")
    out = []
    if p:
        ok = p["exact presence (max)"] <= 0.1 + 1e-12 and p["exact association (max)"] <= 0.1 + 1e-12
        out.append(Row("Theorem 6: PriView's groups satisfy α-presence and β-association (α = β = 0.1)",
                       "presence ≤ 0.1, association ≤ 0.1", f"exact from the published tables: presence "
                       f"{_f(p['exact presence (max)'])}, association {_f(p['exact association (max)'])} (Theorem 6's "
                       f"formulas give {_f(p['Theorem 6 presence'])}, {_f(p['Theorem 6 association'])})", _ok(ok),
                       "" if ok else "the ST keeps A_j beside the sensitive value: an adversary who knows a person's "
                       "A_j reads c(G, a, s)/c(G, a), not c(G, s)/|G| (Theorem 6 understates both)"))
    if x:
        out.append(Row("(ours) construction=exact meets both bounds by the exact measure", "presence ≤ 0.1, "
                       "association ≤ 0.1", f"presence {_f(x['exact presence (max)'])}, association "
                       f"{_f(x['exact association (max)'])}; {x['records published']:,} records published",
                       _ok(bool(x["meets α and β exactly"]))))
    return out


#: why seed 003 Fig. 6 and seed 004 Figs. 11-12 have no ratio of our times to the paper's
NO_PAPER_TIMES = (
    "the paper gives these times only as plotted curves, and the papers are available here only as plain-text "
    "extractions (no PDF, no figure image): the text keeps each figure's caption and the trend it describes but no "
    "axis value, so there is no time of the paper's to divide ours by; we show our times (Python on two shared "
    "cores, the paper's C++/Java on its own machine) and judge the trend the text describes")

_CENSUS_SIZES = "age=78,sex=2,education=17,marital_status=6,race=9,workclass=10,native_country=83,occupation=50"

ITEMS: tuple[Item, ...] = (
    # seed 000
    Item("000-fig7", "000", "Fig. 7", "Comparison of errors for SPLU-Gen, Anatomy, DBR, and differential privacy "
         "(small counts) for CENSUS.", "§6.2.2-6.2.3", "seed000-small-vs-gamma", {}, "census:100000",
         judge=_j000_fig7),
    Item("000-fig8", "000", "Fig. 8", "Comparison of utilities for SPLU-Gen, Anatomy, and DBR for CENSUS.",
         "§6.2.3.2", "seed000-large-by-band", {"gamma": 5}, "census:300000", judge=_j000_fig8),
    Item("000-fig9", "000", "Fig. 9", "Comparison of utilities for CENSUS ((a) SPLU-Gen, (b) Anatomy, (c) DBR).",
         "§6.2.1, §6.2.3", "seed000-large-vs-gamma", {}, "census:100000", judge=_j000_fig9),
    Item("000-s621", "000", "§6.2.1 (text)", "Special queries: age generalised, selectivity 5%-8%, γ = 5, 100 K.",
         "§6.2.1", "seed000-large-by-band", {"gamma": 5, "edges": "0.05,0.08", "queries": 5000}, "census:100000",
         judge=_j000_special),
    Item("000-fig10", "000", "Fig. 10", "Comparison of errors for SPLU-Gen, Anatomy, DBR, and differential privacy "
         "(small counts) for CADRMP.", "§6.3.2", "seed000-small-vs-gamma", {"gammas": "2,3,4,5,6,7,8,9"},
         "hospital:42264", judge=_j000_fig10,
         differences="hospital:42264 is synthetic: 1,200 diagnoses (CADRMP 1,346), top share 4.3% (CADRMP has one "
         "above 10%, which is why the paper stops at γ = 9)"),
    Item("000-fig11", "000", "Fig. 11", "Comparison of utilities for SPLU-Gen, Anatomy, and DBR for CADRMP.",
         "§6.3.1", "seed000-large-by-band", {"gamma": 9, "edges": "0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09"},
         "hospital:42264", judge=_j000_fig11,
         differences="hospital:42264 is synthetic (1,200 diagnoses, Zipf-like)"),
    Item("000-fig12", "000", "Fig. 12", "Utility for SPLU-Gen (two SA's).", "§6.4", "seed000-two-sa", {},
         "census:100000", judge=_j000_fig12,
         explore="data=census-2sa:100000&sa=occupation&mech=splu&gamma=5&sa2=age_interval&seed=1",
         query_error=("data=census-2sa:100000&sa=occupation&mech=splu&gamma=5&sa2=age_interval&seed=1&wl=joint"
                      "&wl.sa2=age_interval&cmp=splu")),
    Item("000-s65", "000", "§6.5 (text)", "Computational overhead: partitioning 500 K records for γ = 2 to 10.",
         "§6.5", "seed000-time", {"gammas": "2,4,6,8,10"}, "census:500000", judge=_j000_time),
    # seed 001
    Item("001-table2", "001", "Table 2", "The 7 discrete attributes of CENSUS and their domain sizes.", "§6.1",
         "data-profile", {"paper": "age=77,sex=2,education=14,marital_status=6,race=9,workclass=7,occupation=50",
                          "columns": "education,occupation"}, "census:300000",
         judge=lambda r: _domains_rows(r, "CENSUS (seed 001)")),
    Item("001-fig1", "001", "Fig. 1", "Frequency distribution of SA for OCC-300K and EDU-300K.", "§6.1",
         "data-profile", {"columns": "education,occupation"}, "census:300000",
         judge=lambda r: [Row("EDU-300K has a more skewed distribution than OCC-300K", "EDU more skewed",
                              f"largest share: education {_pct(r.data['stats']['education']['max share'])}, "
                              f"occupation {_pct(r.data['stats']['occupation']['max share'])}",
                              _ok(r.data["stats"]["education"]["max share"]
                                  > r.data["stats"]["occupation"]["max share"]))]),
    Item("001-table3", "001", "Table 3", "Parameter settings (p, λ, δ, |T|; defaults in bold).", "§6.2", None,
         static=(Row("The settings swept", "p 0.14-0.46, λ and δ 0.1-0.9, |T| 100K-500K",
                     "seed001-violations sweeps p ∈ {0.14, 0.22, 0.30, 0.38, 0.46}, λ and δ ∈ {0.1, 0.3, 0.5, 0.7, "
                     "0.9} and |T| in five steps up to the table's size", REPRODUCED),),
         why_no_experiment="a table of settings, used as the defaults of Fig. 3's experiments"),
    Item("001-fig3-violations", "001", "Fig. 3 (violating micro groups)", "EDU: percentage of violating micro groups "
         "vs p, λ, δ and |T|.", "§6.2.1", "seed001-violations", {}, "census:300000", sa="education", qi=EDU_QI,
         judge=_j001_violations),
    Item("001-fig3-error", "001", "Fig. 3 (relative error)", "EDU: relative error of UP and RP vs p, λ, δ and |T|.",
         "§6.2.1", "seed001-error", {"queries": 1000, "releases": 2}, "census:300000", sa="education", qi=EDU_QI,
         judge=_j001_error),
    Item("001-occ-violations", "001", "§6.2.2 figure (OCC, violating groups)", "OCC: the same study on OCC (the "
         "extracted text of §6.2.2 is empty; the §6.2.1 statements are checked).", "§6.2.2", "seed001-violations", {},
         "census:300000", judge=_j001_violations),
    Item("001-occ-error", "001", "§6.2.2 figure (OCC, relative error)", "OCC: relative error of UP and RP.",
         "§6.2.2", "seed001-error", {"queries": 1000, "releases": 2}, "census:300000", judge=_j001_error),
    Item("001-tables45", "001", "Tables 4-5", "Output perturbation: the 7 most concentrated micro groups of EDU-500K "
         "and OCC-500K and how often ε-DP answers err beyond ±λ.", "§6.3", "seed001-output-perturbation",
         {"min_size": 50}, "census:500000", sa="education", qi=EDU_QI, judge=_j001_tables45),
    # seed 002
    Item("002-fig2-l", "002", "Fig. 2 (upper)", "OCC: Error vs. L (|T| = 300k).", "§6.2", "seed002-error-vs-l", {},
         "census:300000", judge=_j002_error),
    Item("002-fig2-size", "002", "Fig. 2 (lower)", "OCC: Error vs. |T| (L = 6).", "§6.2", "seed002-error-vs-size",
         {}, "census:500000", judge=_j002_error),
    Item("002-table2", "002", "Table 2", "Retention Probability, OCC-300k.", "§6.2", "seed002-retention", {},
         "census:300000", judge=_j002_table2),
    Item("002-table3", "002", "Table 3", "Statistics for PP, OCC-|T|, ρ₂ = 1/6.", "§6.2", "seed002-retention", {},
         "census:300000", judge=_j002_table3),
    Item("002-fig3", "002", "Fig. 3", "est vs. act: OCC-300k, L = 6, s = 0.1%.", "§6.2", "seed002-scatter", {},
         "census:300000", judge=_j002_scatter),
    Item("002-fig4", "002", "Fig. 4", "EDU: Error vs. L (|T| = 300k), Error vs. |T| (L = 10).", "§6.3",
         "seed002-error-vs-l", {"rho1": 1 / 30, "ls": "10,8,6,4"}, "census:300000", sa="education", qi=EDU_QI,
         judge=_j002_fig4, differences="census has 16 education values (EDU 14)"),
    Item("002-fig5", "002", "Fig. 5", "Runtime vs. |T|.", "§6.4", "time-vs-size",
         {"mechanisms": "sdr; uniform; anatomy l=6", "sizes": "100000,200000,300000,400000,500000", "bound": 30.0},
         "census:500000", judge=_j002_time),
    # seed 003
    Item("003-table4", "003", "Table 4", "Parameter settings.", "§7", None,
         static=(Row("The settings", "|T| 100k-500k (300k), f′ = min{1, θf + 0.02}, θ 2-32 (8), M′ = 50",
                     "the seed 003 experiments default to θ ∈ {2, 4, 8, 16, 32}, b = 0.02, M′ = 50, census:300000",
                     REPRODUCED),),
         why_no_experiment="a table of settings, used as the defaults of Figs. 3-7's experiments"),
    Item("003-fig2", "003", "Fig. 2", "Frequency distribution of SA.", "§7", "data-profile",
         {"columns": "occupation,education"}, "census:300000", judge=_j003_profile_occ),
    Item("003-table5", "003", "Table 5", "Statistics of CENSUS.", "§7", "data-profile",
         {"paper": "age=76,sex=2,education=14,marital_status=6,race=9,workclass=10,native_country=83,occupation=50"},
         "census:300000", judge=lambda r: _domains_rows(r, "CENSUS (seed 003)")),
    Item("003-fig3", "003", "Fig. 3", "The relationship between ℓ and privacy coefficient θ.", "§7.1",
         "seed003-l-vs-theta", {}, "census:300000", judge=_j003_fig3),
    Item("003-fig4", "003", "Fig. 4", "MSE vs privacy coefficient θ.", "§7.2.1", "seed003-error-vs-theta",
         {"queries": 500}, "census:100000", judge=lambda r: _j003_fig45(r, "mse"),
         differences="census:100000 instead of OCC-300K, so that a run takes about half a minute here"),
    Item("003-fig5", "003", "Fig. 5", "Relative Error (%) vs privacy coefficient θ.", "§7.2.2",
         "seed003-error-vs-theta", {"queries": 500}, "census:100000", judge=lambda r: _j003_fig45(r, "re"),
         differences="census:100000 instead of OCC-300K, so that a run takes about half a minute here"),
    Item("003-fig6", "003", "Fig. 6", "Runtime (seconds) vs cardinality |T|.", "§7.3.1", "seed003-time-vs-size", {},
         "census:300000", judge=_j003_fig6, no_ratio=NO_PAPER_TIMES),
    Item("003-fig7", "003", "Fig. 7", "Runtime (seconds) vs scale-up factor γ for |SA|.", "§7.3.2", "seed003-scaleup",
         {"gammas": "1,4,16,64"}, "census:50000", judge=_j003_fig7,
         differences="census:50000 instead of OCC-500K so that loss pruning runs in seconds"),
    # seed 004
    Item("004-fig10", "004", "Fig. 10", "Summary of attributes.", "§9", "data-profile",
         {"paper": _CENSUS_SIZES}, "census:100000", judge=lambda r: _domains_rows(r, "Census (seed 004)")),
    Item("004-fig11", "004", "Fig. 11", "Performance: various α and β values.", "§9.2", "seed004-time-vs-alpha-beta",
         {}, "census:100000", judge=_j004_fig11, differences="census:100000 instead of Occ-500K, to take seconds",
         no_ratio=NO_PAPER_TIMES),
    Item("004-fig12", "004", "Fig. 12", "Performance of Ambiguity: various distributions, Occ dataset.", "§9.2",
         "seed004-time-vs-density", {}, "census:100000", judge=_j004_fig12, no_ratio=NO_PAPER_TIMES),
    Item("004-fig13a", "004", "Fig. 13(a)", "Information loss: different queries.", "§9.3",
         "seed004-error-vs-selectivity", {}, "census:100000", judge=_j004_fig13a),
    Item("004-fig13b", "004", "Fig. 13(b)", "Information loss: various numbers of attributes in queries.", "§9.3",
         "seed004-error-vs-attrs", {}, "census:100000", judge=_j004_fig13b),
    Item("004-fig14", "004", "Fig. 14", "Information loss; various β values.", "§9.3", "seed004-error-vs-beta",
         {"betas": "0.025,0.05,0.1"}, "census:100000", judge=_j004_fig14),
    Item("004-fig15", "004", "Fig. 15", "Information loss; various datasets ((a) Ambiguity, (b) PriView).", "§9.3",
         "seed004-loss-vs-density", {}, "census:100000", judge=_j004_fig15,
         differences="Occ-100K-d built as census:100000 made d times denser (occ:100000:d)"),
    Item("004-thm6", "004", "Theorem 6 (beyond the paper)", "PriView's privacy: Theorem 6's presence and "
         "association against the exact ones from the published tables, and the repaired construction.", "§8",
         "seed004-priview-exact", {}, "adult", judge=_j004_thm6,
         explore="data=adult&sa=occupation&mech=priview&alpha=0.1&beta=0.1&construction=exact&seed=1"),
)

_BY_KEY = {i.key: i for i in ITEMS}


def get(key: str) -> Item:
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ParameterError(f"There is no paper figure or table '{key}'; `python -m core experiment --list` lists "
                             "them.") from None


def by_seed() -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {}
    for item in ITEMS:
        out.setdefault(item.seed, []).append(item)
    return out


def load_standin(item: Item):
    """The item's data stand-in as a Dataset (sample spec, SA and QIs)."""
    from .table import load_dataset

    return load_dataset(item.data, item.sa, item.qi)


def settings(item: Item, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The experiment's resolved settings: the paper's parameters, then ``raw`` on top."""
    exp = _experiments.get(item.experiment)
    return exp.resolve({**dict(item.params), **dict(raw or {})})


def judge(item: Item, result: ExperimentResult | None) -> tuple[str, list[Row]]:
    """The item's verdict and the statement rows (static rows need no result)."""
    rows = list(item.static)
    if item.judge is not None and result is not None:
        try:
            rows += item.judge(result)
        except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as exc:
            rows.append(Row("The comparison itself", "", f"could not be computed from this run ({exc})", NOT,
                            "the run lacks a series the comparison needs (a mechanism not eligible: see the notes)"))
    if item.differences:
        rows = [Row(r.statement, r.paper, r.ours, r.verdict, "; ".join(x for x in (r.why, item.differences) if x)
                    if r.verdict != REPRODUCED else r.why) for r in rows]
    return verdict_of(rows), rows


def run(item: Item, data=None, raw: Mapping[str, Any] | None = None, progress=None):
    """Run the item's experiment on ``data`` (default: its stand-in); returns (result, verdict, rows)."""
    if item.experiment is None:
        verdict, rows = judge(item, None)
        return None, verdict, rows
    data = load_standin(item) if data is None else data
    result = _experiments.get(item.experiment).run(data, settings(item, raw), progress)
    verdict, rows = judge(item, result)
    return result, verdict, rows


def listing() -> list[dict[str, Any]]:
    """One entry per figure or table: seed, number, caption, experiment, stand-in, parameters."""
    return [{"key": i.key, "seed": i.seed, "number": i.number, "caption": i.caption, "section": i.section,
             "experiment": i.experiment, "data": i.data, "sensitive": i.sa, "params": dict(i.params),
             "why_no_experiment": i.why_no_experiment or None,
             "sanitize_link": f"Sanitize?{i.explore}" if i.explore else None,
             "query_error_link": f"Query_error?{i.query_error}" if i.query_error else None,
             "no_ratio": i.no_ratio or None} for i in ITEMS]


def rows_frame(rows: list[Row]) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r in rows],
                        columns=["paper's statement", "paper", "ours", "verdict", "why"])



def html_report(item: Item, result: ExperimentResult | None, verdict: str, rows: list[Row], standin: str) -> str:
    """A self-contained HTML page: the item, our figures and tables, the paper's statements beside ours."""
    import html

    def e(v: Any) -> str:
        return html.escape(str(v))

    parts = [f"<h1>Seed {e(item.seed)}, {e(item.number)}: {e(item.caption)}</h1>",
             f"<p>{e(SEEDS.get(item.seed, ''))}, {e(item.section)}. Data: {e(standin)}. "
             f"Experiment: {e(item.experiment or 'none (' + item.why_no_experiment + ')')}.</p>",
             f"<h2>Verdict: {e(verdict)}</h2>",
             *([f"<p>No ratio to the paper's times: {e(item.no_ratio)}.</p>"] if item.no_ratio else []),
             rows_frame(rows).to_html(index=False, escape=True, border=0, na_rep="–")]
    first = True
    if result is not None:
        for note in result.notes:
            parts.append(f"<p class='note'>{e(note)}</p>")
        for title, fig, caption in result.figures:
            parts.append(f"<h3>{e(title)}</h3>" + fig.to_html(full_html=False, include_plotlyjs=first,
                                                                config={"displaylogo": False}))
            parts.append(f"<p class='cap'>{e(caption)}</p>")
            first = False
        for title, frame, caption in result.tables:
            parts.append(f"<h3>{e(title)}</h3>" + frame.to_html(index=False, escape=True, border=0, na_rep="–"))
            parts.append(f"<p class='cap'>{e(caption)}</p>")
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}table{border-collapse:"
             "collapse;font-size:0.9em}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;"
             "vertical-align:top}.cap{color:#555}.note{background:#eef4ff;padding:6px}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Seed {e(item.seed)} {e(item.number)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
