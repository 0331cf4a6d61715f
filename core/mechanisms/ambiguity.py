"""Ambiguity and PriView (seed 004): (alpha, beta)-private QI-groups published as separate tables.

Ambiguity publishes, per QI-group, one auxiliary table per QI attribute
``AT_i(A_i, GID)`` with the group's DISTINCT values of A_i, and
``ST(GID, SA, Count)``.  Presence of a covered person is
``|G| / prod_i |G_ATi|`` (Theorem 1), association ``c/|G|`` (Theorem 2).
PriView publishes ``AT(QI minus A_j, GID)`` (one row per record, as in
Fig. 9a) and ``ST(GID, A_j, SA, Count)``; the split A_j with the lowest
expected loss is kept.  Groups come from the greedy of section 7
(:func:`core.mechanisms.ambiguity_algorithm.build_groups`, where the choices the paper leaves
open are written down).

Estimation is Fig. 5: per group, ``c x prod_i l_i/k_i`` for equality, range
and IN conditions (:class:`core.mechanisms.ambiguity_algorithm.AmbiguityIndex`); PriView's
two-table form via :func:`core.mechanisms.ambiguity_algorithm.priview_records` (weighted cells
from one sparse product of the AT's group index and the ST, counted per
attribute subset by :class:`core.counting.Records`).

Records that no group can take (e.g. Adult's most frequent occupation at
beta = 0.1: its share exceeds beta, so no beta-associated partition holds
all of it) are *unplaced*: not published, counted in ``privacy["unplaced"]``
and explained in the notes.

Privacy (manifest): ``max_presence`` and ``max_association`` recomputed
from the published tables; for PriView these are the exact values (the
paper's Theorem 6 understates them: module docstring of
:mod:`core.mechanisms.ambiguity_algorithm`), with Theorem 6's printed values beside them as
``max_presence_paper`` and ``max_association_paper``.

Guarantee (``_Grouped.guarantee``): (alpha, beta)-privacy (Definition
4.1) of every published group, recomputed from the published tables
(:func:`group_stats`; for PriView the exact presence and association, not
Theorem 6's, which are shown beside them).  Records left unplaced are not
published: the verdict then meets on the records it publishes only, with
the unplaced count and values beside it, and suggests the smallest beta
(rounded up to 0.001) that places every record, verified.

Not built from counts (issue 15): :data:`ENGINE_NOTE`.  The greedy's
picks depend on which records are still unpicked and on the QI values each
adds to its group, so its result is one decision per record (a group per
record, or a group per (QI..., SA) combination and rank: as many entries
as records), not a function of a compact summary that a plan could carry
to the partitions; both mechanisms keep their row-based ``sanitize`` and
run on the local engine.

References
----------
seed 004 (Hui Wang, JCST 2010), sections 3-8; MECHANISMS.md section 5.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import numpy as np

import math

from . import ambiguity_algorithm as amb
from .. import guarantee as G
from ..engine import memo as _memo
from ..counting import QueryBatch, select
from ..errors import NotEligible, clip
from ..params import Param
from ..release import CodedTable, Published, Release
from ..table import Dataset
from .base import Mechanism, grid_counts, grid_of_rows, grid_select

ALPHA = Param("alpha", "α", "Presence bound: an adversary who knows a person's QI values believes the person is in "
              "the data with probability at most α.", 0.1, low=0.001, high=1, closed="right", step=0.005,
              safer="lower", paper="seed 004 §4 (Definition 4.1); the issue's setting (α, β) = (0.1, 0.1)",
              presets=(0.05, 0.1, 0.2, 0.5))
BETA = Param("beta", "β", "Association bound: given the person is in the data, an adversary links them to any one "
             "sensitive value with probability at most β. Groups hold ⌈1/β⌉ different values.", 0.1,
             low=0.01, high=0.5, step=0.005, safer="lower", paper="seed 004 §9.3 (Fig. 14): β ∈ {0.025, 0.05, 0.1}",
             presets=(0.025, 0.05, 0.1, 1 / 7, 0.2))
CANDIDATES = Param("candidates", "K", "pick() scores this many unpicked records of the current sensitive bucket and "
                   "keeps the one adding most new QI values (the paper scans all records: quadratic). PriView's exact "
                   "construction scores every record and does not use it.", 32,
                   kind="int", low=1, high=1024, step=1, paper="our choice; the paper's pick() (Fig. 7) scans all")


#: the largest table on which the nearest-setting search tries PriView's exact construction (on census:1M it
#: took about 430 s; on a 5M-row table the search behind a slider move kept a core busy for minutes)
EXACT_NEAREST_ROWS = 100_000
#: presence and association are ratios of float sums: a figure within this of its limit is the limit (the
#: exact construction reaches β exactly, and floating point may land a few 1e-13 above it)
TOLERANCE = 1e-12


def as_compared(figure: float, limit: float) -> float:
    """The figure the comparison with ``limit`` used: the limit itself when within :data:`TOLERANCE` of it.

    So a manifest never prints 0.5000000000000004 beside "meets" for β = 1/2
    (issue 25): what is printed is what was compared, and the tolerance is
    printed beside it (``comparison_tolerance``).

    >>> as_compared(0.5000000000000004, 0.5), as_compared(0.10000000000067666, 0.1), as_compared(0.11, 0.1)
    (0.5, 0.1, 0.11)
    """
    return float(limit) if abs(figure - float(limit)) <= TOLERANCE else figure


def slug(name: str) -> str:
    """A column name made safe for a table (file) name: ``at_<slug>.csv``."""
    s = re.sub(r"[^0-9A-Za-z_-]+", "_", str(name)).strip("_")
    return s or "attr"


def at_table_names(qi: tuple[str, ...]) -> list[str]:
    """``at_<attribute>`` per QI, made unique when two names slug alike."""
    names, used = [], set()
    for c in qi:
        base = f"at_{slug(c)}"
        name, i = base, 2
        while name in used:
            name, i = f"{base}_{i}", i + 1
        used.add(name)
        names.append(name)
    return names


def unplaced_note(data: Dataset, group: np.ndarray, beta: float, min_size: int = 0) -> tuple[str, dict]:
    """Why some records fit nowhere, with the numbers (issue 5: the page explains)."""
    out = np.flatnonzero(group < 0)
    feas = amb.placeable(data.sa_counts, beta, min_size)
    by_value = np.bincount(data.sa_codes[out], minlength=data.m)
    top = np.argsort(-by_value, kind="stable")
    blocking = {str(data.sa_labels[v]): int(by_value[v]) for v in top if by_value[v] > 0}
    info = {"unplaced": int(len(out)), "placed": int(data.n - len(out)),
            "max_placeable": feas["max_placeable"], "unplaced_by_value": blocking,
            "beta_to_place_all": feas["beta_to_place_all"]}
    if not len(out):
        return "", info
    big = int(np.argmax(data.sa_counts))
    share = data.sa_counts[big] / data.n
    text = (f"{len(out):,} of {data.n:,} records fit in no group and are not published "
            f"({', '.join(f'{k}: {v:,}' for k, v in list(blocking.items())[:4])}"
            f"{', …' if len(blocking) > 4 else ''}). ")
    l = feas["diversity"]
    why = f"⌈1/β⌉ = {l}" if l == amb.diversity(beta) else f"{l} (PriView's presence 1/|G| ≤ α)"
    g = feas["max_groups"]
    blocked = [str(data.sa_labels[v]) for v in np.argsort(-data.sa_counts, kind="stable") if data.sa_counts[v] > g]
    named = (f"'{blocked[0]}'" if len(blocked) == 1 else
             f"{len(blocked)} values ({', '.join(repr(b) for b in blocked)})") if blocked else f"'{data.sa_labels[big]}'"
    text += (f"{named} {'has' if len(blocked) == 1 else 'have'} more records than the {g:,} groups that can be "
             f"formed can take (the most frequent, '{data.sa_labels[big]}', is {share:.1%} of the table): a group "
             f"holds each value at most once among at least {why} different values, so at most "
             f"{feas['max_placeable']:,} records can be placed"
             + (f" (and no partition whose groups keep every value's share ≤ β = {beta:g} holds more than "
                f"{feas['any_partition_bound']:,})" if share > beta else "") + ". ")
    if feas["beta_to_place_all"] is not None and l == amb.diversity(beta):
        text += f"β ≥ {feas['beta_to_place_all']:.4g} would place every record."
    elif feas["beta_to_place_all"] is None and share > 0:
        text += f"No β places every record with groups of {l}; a larger α allows smaller groups."
    return text, info


def exact_bound(data: Dataset, values: Mapping[str, Any]) -> dict | None:
    """:func:`core.mechanisms.ambiguity_algorithm.exact_placeable` for the given split, or the best split the exact construction can use.

    None when no split can be used (``check`` says why).  Adds ``split``: the
    split the bound is for.
    """
    if values.get("split") in data.qi:
        splits = [data.qi.index(values["split"])]
    else:
        splits = amb.exact_split_candidates(data.domains, data.qi_codes, values["alpha"])
    best = None
    for j in splits:
        b = amb.exact_placeable(data.qi_codes, data.domains, data.sa_codes, data.m, j, values["alpha"], values["beta"])
        if best is None or b["max_placeable"] > best["max_placeable"]:
            best = {**b, "split": data.qi[j]}
    return best


#: why Ambiguity and PriView run on the local engine only (the Dask engine shows it)
ENGINE_NOTE = ("Ambiguity and PriView build their groups greedily, picking records one at a time by the QI values "
               "each adds to a group (seed 004 §7, and PriView's exact construction likewise), so every record's "
               "group is a decision of its own that no compact count summary can carry to the partitions; run "
               "them with --engine local.")


class _Grouped(Mechanism):
    paper = "seed 004 (Hui Wang, JCST 2010)"
    engine_note = ENGINE_NOTE
    params = (ALPHA, BETA, CANDIDATES)
    main_param = "beta"
    sweep = (0.025, 0.05, 0.1, 1 / 7, 0.2)
    publishes = "tables"
    kind = "ambiguity"

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        """ℓ = ⌈1/β⌉ and the most records the construction can place (PriView's exact one: its own bound)."""
        if self.kind == "priview" and values.get("construction") == "exact":
            best = exact_bound(data, values)
            if best is not None:
                return {"diversity": amb.diversity(values["beta"]), "max_placeable": best["max_placeable"]}
        min_size = amb.presence_size(values["alpha"]) if self.kind == "priview" else 0
        feas = amb.placeable(data.sa_counts, values["beta"], min_size)
        return {"diversity": feas["diversity"], "max_placeable": feas["max_placeable"]}

    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        l = amb.diversity(values["beta"])
        present = int(np.count_nonzero(data.sa_counts))
        if present < l:
            suggestion = {"beta": 1 / present} if present >= 2 else None
            raise NotEligible(
                f"β = {values['beta']:g} needs groups of ⌈1/β⌉ = {l} different values of '{data.sa}', "
                f"but the table has only {present}; β ≥ 1/{present} works.", suggestion=suggestion)
        if self.kind == "priview":
            need = amb.presence_size(values["alpha"])
            if present < need:
                raise NotEligible(
                    f"PriView's presence is 1/|G| with groups of different '{data.sa}' values, so α = "
                    f"{values['alpha']:g} needs {need} of them; the table has {present}.",
                    suggestion={"alpha": 1 / present} if present >= 1 else None)

    def _groups(self, data: Dataset, values, rng) -> amb.Grouping:
        if self.kind == "priview":  # the same groups for every alpha of one group size: kept between slider moves
            return amb.priview_groups(data.qi_codes, data.domains, data.sa_codes, data.m, values["beta"],
                                      values["alpha"], candidates=values["candidates"], rng=rng,
                                      memo=_memo.for_data(data))
        # Ambiguity: step 2 kept between slider moves of alpha while every group passes at the new alpha
        return amb.ambiguity_groups(data.qi_codes, data.domains, data.sa_codes, data.m, values["beta"],
                                    values["alpha"], candidates=values["candidates"], rng=rng,
                                    memo=_memo.for_data(data))

    def _common(self, data, values, grouping, stats, extra_privacy) -> tuple[dict, dict, tuple]:
        min_size = amb.presence_size(values["alpha"]) if self.kind == "priview" else 0
        note, info = unplaced_note(data, grouping.group, values["beta"], min_size)
        bound = exact_bound(data, values) if values.get("construction") == "exact" else None
        if bound is not None and info["unplaced"]:
            k, l = amb.presence_size(values["alpha"]), amb.diversity(values["beta"])
            note = (f"{info['unplaced']:,} of {data.n:,} records fit in no group of the exact construction and are "
                    f"not published ({', '.join(f'{a}: {b:,}' for a, b in list(info['unplaced_by_value'].items())[:4])}"
                    f"). Each group holds at least {k} values of '{values['split']}', each with {l} records of "
                    f"different '{data.sa}' values whose other QI values occur once in the group, so that the exact "
                    f"presence and association stay within α and β; records of values that run short of different "
                    f"'{data.sa}' values, or of QI combinations repeated more often than there are groups, are left "
                    f"out: at most {bound['max_placeable']:,} records fit in the {bound['groups']:,} groups such "
                    f"blocks allow. Larger α or β place more.")
        sizes = stats["size"]
        top_presence = float(stats["presence"].max(initial=0.0))
        top_association = float(stats["association"].max(initial=0.0))
        privacy = {
            "max_presence": as_compared(top_presence, values["alpha"]),
            "max_association": as_compared(top_association, values["beta"]),
            **extra_privacy,
            "groups": int(grouping.n_groups),
            "unplaced": info["unplaced"],
            "min_diversity": int(stats["distinct_sa"].min()) if len(stats["distinct_sa"]) else 0,
            "alpha_met": bool(top_presence <= values["alpha"] + TOLERANCE),
            "beta_met": bool(top_association <= values["beta"] + TOLERANCE),
            "comparison_tolerance": TOLERANCE,
        }
        published = {"alpha": values["alpha"], "beta": values["beta"], "groups": int(grouping.n_groups),
                      "group_sizes": {str(int(s)): int(c) for s, c in zip(*np.unique(sizes, return_counts=True))}}
        notes = []
        if note:
            notes.append(note)
            published["unplaced_by_value"] = info["unplaced_by_value"]
        published["placed"] = info["placed"]
        published["max_placeable"] = info["max_placeable"]
        if values.get("construction") == "exact":  # values["split"] is the split the groups were built on
            published["max_placeable"] = bound["max_placeable"] if bound else 0
        return published, privacy, tuple(notes)

    # ------------------------------------------------------------ guarantee
    def promise(self, values: Mapping[str, Any]) -> str:
        exact = (" (exact figures from the published tables, not Theorem 6's)" if self.kind == "priview" else "")
        return (f"(α, β)-privacy with α = {values['alpha']:g}, β = {values['beta']:g}: for every published group, "
                f"an adversary who knows a person's QI values believes the person is in the data with probability "
                f"at most α and links them to any one sensitive value with probability at most β{exact} "
                f"(seed 004 Definition 4.1).")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """Presence and association of every published group; unplaced records beside them."""
        stats = group_stats(release)
        pres, assoc = np.asarray(stats["presence"], float), np.asarray(stats["association"], float)
        size = np.asarray(stats["size"], float)
        n_g = len(pres)
        alpha, beta = float(values["alpha"]), float(values["beta"])
        figures = {"groups": n_g, "max_presence": as_compared(float(pres.max(initial=0.0)), alpha),
                   "max_association": as_compared(float(assoc.max(initial=0.0)), beta),
                   "records_published": int(release.rows_out), "comparison_tolerance": TOLERANCE}
        if self.kind == "priview":
            figures["max_presence_theorem6"] = float(release.privacy.get("max_presence_paper", 0.0))
            figures["max_association_theorem6"] = float(release.privacy.get("max_association_paper", 0.0))
        fails = []
        for name, arr, bound in (("presence", pres, alpha), ("association", assoc, beta)):
            bad = arr > bound + TOLERANCE
            if bad.any():
                sym = "α" if name == "presence" else "β"
                fails.append(G.failure(f"{name} ≤ {sym} = {bound:g}" + (" (exact)" if self.kind == "priview" else ""),
                                       float(arr.max()), bound, int(bad.sum()), n_g,
                                       f"groups ({int(size[bad].sum()):,} records)"))
        unplaced = int(release.privacy.get("unplaced", 0))
        unpublished = None
        if unplaced:
            unpublished = {"records": unplaced, "of": data.n,
                           "by_value": dict(release.published.get("unplaced_by_value", {}))}
        return G.judge(self.name, self.promise(values), figures, fails, unpublished=unpublished,
                       explains=G.restating(release.notes, "fit in no group", "Theorem 6 would report"))

    def nearest(self, data: Dataset, values: Mapping[str, Any], verdict: G.Verdict):
        """The smallest β (rounded up to 0.001) that places every record, when records are left out."""
        if not verdict.unpublished:
            return
        min_size = amb.presence_size(values["alpha"]) if self.kind == "priview" else 0
        need = amb.placeable(data.sa_counts, values["beta"], min_size)["beta_to_place_all"]
        if need is None:
            return
        b = math.ceil(need * 1000 - 1e-9) / 1000
        for extra in (0.0, 0.001, 0.005):
            if b + extra <= BETA.high:
                yield {"beta": round(b + extra, 6)}

    def _relabel(self, grouping: amb.Grouping, rng) -> np.ndarray:
        """Group ids in random order, so a GID reveals nothing about the construction order."""
        relabel = rng.permutation(grouping.n_groups)
        g = grouping.group.copy()
        g[g >= 0] = relabel[g[g >= 0]]
        return g


class Ambiguity(_Grouped):
    name = "ambiguity"
    title = "Ambiguity (α-presence, β-association)"
    summary = ("Records are grouped; each QI attribute is published in its own table listing the group's distinct "
               "values, and each group's sensitive values with counts. Joining the tables gives many false "
               "combinations, so nobody can tell whether a person is in the data (α) or which value is theirs (β).")
    order = 70
    kind = "ambiguity"
    record_table = None  # one table of distinct values per QI and group: no row per person

    def sanitize(self, data: Dataset, values: Mapping[str, Any], rng: np.random.Generator) -> Published:
        """Greedy groups (section 7), then AT_i(A_i, GID) per QI (distinct values) and ST(GID, SA, Count)."""
        grouping = self._groups(data, values, rng)
        return self.publish(data, values, grouping, self._relabel(grouping, rng))

    def publish(self, data: Dataset, values: Mapping[str, Any], grouping: amb.Grouping, gid: np.ndarray) -> Published:
        """The tables of a given grouping (``gid`` per record, -1 = unplaced)."""
        inside = np.flatnonzero(gid >= 0)
        g = gid[inside]
        G = grouping.n_groups
        tables: dict[str, CodedTable] = {}
        at_gids = []
        for name, col, codes, labels, dom in zip(at_table_names(data.qi), data.qi, data.qi_codes,
                                                 data.qi_labels, data.domains):
            key = np.unique(g * dom + codes[inside])
            tables[name] = CodedTable(columns={col: key % dom, "gid": key // dom}, labels={col: labels, "gid": None})
            at_gids.append(key // dom)
        key, cnt = np.unique(g * data.m + data.sa_codes[inside], return_counts=True)
        st = CodedTable(columns={"gid": key // data.m, data.sa: key % data.m, "count": cnt},
                        labels={"gid": None, data.sa: data.sa_labels, "count": None})
        tables["st"] = st
        stats = amb.ambiguity_stats(at_gids, key // data.m, key % data.m, cnt, G)
        published, privacy, notes = self._common(data, values, grouping, stats, {})
        published["tables"] = list(tables)
        return Published(tables=tables, published=published, privacy=privacy, notes=notes, rows_out=len(inside))

    def index(self, release: Release) -> amb.AmbiguityIndex:
        cache = release.state.setdefault("_records", {})
        if "ambiguity" not in cache:
            qi, sa = release.source["qi"], release.source["sensitive"]
            names = at_table_names(tuple(qi))
            ats = [release.tables[n] for n in names]
            st = release.tables["st"]
            G = int(release.published.get("groups", int(st.columns["gid"].max(initial=-1)) + 1))
            cache["ambiguity"] = amb.AmbiguityIndex.from_tables(
                [t.columns[c] for t, c in zip(ats, qi)], [t.columns["gid"] for t in ats],
                [len(t.labels[c]) for t, c in zip(ats, qi)], st.columns["gid"], st.columns[sa],
                st.columns["count"], len(st.labels[sa]), G)
        return cache["ambiguity"]

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        return self.index(release).estimate(batch)

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """:meth:`estimate` of the grid from each distinct condition's row of estimates (its shared pass)."""
        conditions = np.asarray(conditions, dtype=np.int64)
        if m < 2 or not conditions.shape[1]:  # not the shared pass's case
            return super().estimate_grid(release, conditions, m, rng)
        index, attrs = self.index(release), tuple(range(conditions.shape[1]))
        return grid_of_rows(lambda rows: index.per_value_rows(attrs, rows), conditions)


class PriView(_Grouped):
    name = "priview"
    title = "PriView (two views)"
    summary = ("Like Ambiguity, but only two tables per group: all QI attributes but one (one row per person) and "
               "the remaining attribute with the sensitive values and counts. One lossy join instead of many keeps "
               "counts more accurate; the attribute kept beside the sensitive value is chosen to lose least.")
    order = 71
    kind = "priview"
    record_table = "at"  # AT(QIs but A_j, GID): one row per person
    params = (ALPHA, BETA, CANDIDATES,
              Param("split", "A_j", "The QI attribute published with the sensitive values (empty: the one with the "
                    "lowest expected loss).", None, kind="text", optional=True,
                    paper="seed 004 §8.3: try each A_j, keep the lowest loss"),
              Param("construction", "construction", "How groups are built: 'paper' (seed 004 §7-8, Theorem 6's measures; "
                    "the exact ones can exceed α and β) or 'exact' (groups built so that the exact presence and "
                    "association read from the published tables stay within α and β; larger groups, fewer records "
                    "placed).", "paper", kind="choice", choices=("paper", "exact"),
                    paper="seed 004 §7-8 ('paper'); 'exact' is ours (core.mechanisms.ambiguity_algorithm.build_exact_groups)"))

    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        if values.get("construction") == "exact":
            k = amb.presence_size(values["alpha"])
            ok = amb.exact_split_candidates(data.domains, data.qi_codes, values["alpha"])
            if values.get("split") in data.qi and data.qi.index(values["split"]) not in ok:
                raise NotEligible(f"The exact construction puts ⌈1/α⌉ = {k} values of the split attribute in every "
                                  f"group; '{values['split']}' has fewer. Choose one of: "
                                  f"{', '.join(data.qi[i] for i in ok) or 'none'}, or a larger α.")
            if not ok:
                raise NotEligible(f"The exact construction puts ⌈1/α⌉ = {k} values of the split attribute in every "
                                  f"group, and no QI column has {k} values; choose a larger α.",
                                  suggestion={"construction": "paper"})
        if values.get("split") is not None and values["split"] not in data.qi:
            raise NotEligible(f"The split attribute '{clip(values['split'])}' is not one of the QI columns "
                              f"({', '.join(data.qi)}).")
        if len(data.qi) < 2:
            raise NotEligible("PriView splits the QI attributes into two tables; choose at least two QI columns.")
        super().check(data, values)

    def nearest(self, data: Dataset, values: Mapping[str, Any], verdict: G.Verdict):
        """The repaired construction first (same α and β), then the paper construction's β that places all.

        With the paper's construction the exact presence and association
        can exceed α and β (Theorem 6 understates them), and no β of its range
        repairs that on Adult; ``construction = exact`` keeps α and β and
        meets them by the exact figures, usually on fewer records (the others
        are left unpublished), so the driver offers it as a fix that meets on
        the records it publishes when nothing meets on every record
        (:func:`core.mechanisms.nearest`).  A chosen split the exact
        construction cannot use is not changed: that candidate is then not
        eligible and is skipped.  With the exact construction already chosen nothing is
        proposed: the β that places every record is computed for the paper's
        groups, and the exact groups leave records out for other reasons
        (values short of different sensitive values, repeated QI combinations).
        On a table of more than :data:`EXACT_NEAREST_ROWS` records the exact
        construction is not tried (it can still be chosen): it took about
        430 s on census:1M, and the search runs behind every slider move.
        """
        if values.get("construction", "paper") == "exact":
            return
        if verdict.failures and data.n <= EXACT_NEAREST_ROWS:
            yield {"construction": "exact"}
        yield from super().nearest(data, values, verdict)

    def sanitize(self, data: Dataset, values: Mapping[str, Any], rng: np.random.Generator) -> Published:
        """Greedy groups, split A_j by lowest loss, then AT(QI minus A_j, GID) and ST(GID, A_j, SA, Count).

        With ``construction = "exact"`` the groups come from
        :func:`core.mechanisms.ambiguity_algorithm.build_exact_groups` (bucketized on (A_j, SA),
        proof of the bound in its docstring); without a given split, every
        QI with at least ⌈1/α⌉ values is tried and the one that places most
        records is kept (ties: the first in QI order).
        """
        if values.get("construction", "paper") != "exact":
            grouping = self._groups(data, values, rng)
            return self.publish(data, values, grouping, self._relabel(grouping, rng))
        splits = ([data.qi.index(values["split"])] if values.get("split")
                  else amb.exact_split_candidates(data.domains, data.qi_codes, values["alpha"]))
        best = None
        for j in splits:
            # every record of a sub-bucket is scored (a window of K placed 16,230 Adult records, the whole 20,260)
            g = amb.build_exact_groups(data.qi_codes, data.domains, data.sa_codes, data.m, j, values["alpha"],
                                       values["beta"], max(data.n, 1), np.random.default_rng(rng.integers(2**63)),
                                       memo=_memo.for_data(data))
            placed = int((g.group >= 0).sum())
            if best is None or placed > best[0]:
                best = (placed, j, g)
        placed, j, grouping = best
        if placed == 0:  # e.g. Adult on (age, sex): sex, the only other QI, repeats in every group
            raise NotEligible(f"The exact construction places no record of this table at α = {values['alpha']:g}, "
                              f"β = {values['beta']:g}: no group can keep every sensitive value among records whose "
                              "other QI values occur once in it; add QI columns, or raise α or β.",
                              suggestion={"construction": "paper"})
        return self.publish(data, {**values, "split": data.qi[j]}, grouping, self._relabel(grouping, rng))

    def publish(self, data: Dataset, values: Mapping[str, Any], grouping: amb.Grouping, gid: np.ndarray) -> Published:
        """The tables of a given grouping (``gid`` per record, -1 = unplaced), split chosen by loss."""
        G = grouping.n_groups
        losses = grouping.derived.get("split_losses")
        if losses is None:  # a function of the table and the groups: kept with a grouping that is kept
            losses = grouping.derived["split_losses"] = amb.split_losses(data.qi_codes, data.domains, data.sa_codes,
                                                                         data.m, grouping.group, G)
        j = data.qi.index(values["split"]) if values.get("split") else int(np.argmin(losses))
        inside = np.flatnonzero(gid >= 0)
        g = gid[inside]
        other = [i for i in range(len(data.qi)) if i != j]
        # AT: one row per record (Fig. 9a), sorted by group then values, so row order reveals nothing
        order = np.lexsort(tuple(data.qi_codes[i][inside] for i in reversed(other)) + (g,))
        rows = inside[order]
        at = CodedTable(columns={**{data.qi[i]: data.qi_codes[i][rows] for i in other}, "gid": g[order]},
                        labels={**{data.qi[i]: data.qi_labels[i] for i in other}, "gid": None})
        n_a = data.domains[j]
        key, cnt = np.unique((g * n_a + data.qi_codes[j][inside]) * data.m + data.sa_codes[inside],
                             return_counts=True)
        st_gid, st_a, st_sa = key // (n_a * data.m), (key // data.m) % n_a, key % data.m
        st = CodedTable(columns={"gid": st_gid, data.qi[j]: st_a, data.sa: st_sa, "count": cnt},
                        labels={"gid": None, data.qi[j]: data.qi_labels[j], data.sa: data.sa_labels, "count": None})
        stats = amb.priview_stats(g[order], [data.qi_codes[i][rows] for i in other], [data.domains[i] for i in other],
                                  st_gid, st_a, st_sa, cnt, n_a, data.m, G)
        extra = {"max_presence_paper": float(stats["presence_paper"].max(initial=0.0)),
                 "max_association_paper": float(stats["association_paper"].max(initial=0.0))}
        published, privacy, notes = self._common(data, values, grouping, stats, extra)
        if values.get("construction") == "exact" and values["candidates"] != CANDIDATES.default:
            notes = notes + (f"K = {values['candidates']} is not used: it sets the paper construction's pick(); the "
                             "exact construction scores every record of a bucket.",)
        published["split"] = data.qi[j]
        published["split_losses"] = {data.qi[i]: float(v) for i, v in enumerate(losses)}
        published["tables"] = ["at", "st"]
        if not privacy["beta_met"] or not privacy["alpha_met"]:
            notes = notes + (
                f"Exact presence {privacy['max_presence']:.3g} and association {privacy['max_association']:.3g} "
                f"(from the published tables) against α = {values['alpha']:g}, β = {values['beta']:g}; seed 004 "
                f"Theorem 6 would report {extra['max_presence_paper']:.3g} and {extra['max_association_paper']:.3g}. "
                f"The ST pairs '{data.qi[j]}' with the sensitive value, so a value of '{data.qi[j]}' that few "
                "records of a group share gives their sensitive values away.",)
        return Published(tables={"at": at, "st": st}, published=published, privacy=privacy, notes=notes,
                         rows_out=len(inside))

    def records(self, release: Release):
        cache = release.state.setdefault("_records", {})
        if "priview" not in cache:
            qi, sa = list(release.source["qi"]), release.source["sensitive"]
            at, st = release.tables["at"], release.tables["st"]
            split = qi.index(release.published["split"])
            domains = [len(at.labels[c]) if c in at.columns else len(st.labels[c]) for c in qi]
            cache["priview"] = amb.priview_records(
                [at.columns[c] for c in qi if c != qi[split]], at.columns["gid"], st.columns["gid"],
                st.columns[qi[split]], st.columns[sa], st.columns["count"], domains, split, len(st.labels[sa]))
        return cache["priview"]

    def estimate_many(self, release: Release, batches, rng: np.random.Generator) -> list[np.ndarray]:
        """Fig. 5 for a whole workload: every attribute subset's index first, larger subsets first."""
        self.records(release).prepare(batches)
        return [self.estimate(release, b, rng) for b in batches]

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        return select(self.records(release).counts(batch), batch.sa)

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        return grid_select(grid_counts(self.records(release), conditions))  # each condition counted once


def release_from_groups(data: Dataset, mechanism: str, group, params: Mapping[str, Any] | None = None) -> Release:
    """A release of ``data`` with the given QI-groups (e.g. the paper's Fig. 2 groups) instead of the greedy's.

    Used by tests, the guided examples and the attack view to reproduce the
    paper's worked numbers through the public estimator.
    """
    from . import get

    mech = get(mechanism)
    values = mech.resolve(params)
    group = np.asarray(group, dtype=np.int64)
    G = int(group.max(initial=-1)) + 1
    grouping = amb.Grouping(group=group, n_groups=G, residue=0, residue_placed=0, dissolved=0)
    out = mech.publish(data, values, grouping, group)
    return Release(mechanism=mech.name, title=mech.title, params=values, seed=0,
                   source={"name": data.name, "content_hash": data.content_hash, "sensitive": data.sa,
                           "qi": list(data.qi), "rows": data.n, "rows_dropped": data.rows_dropped,
                           "raw_params": {k: v for k, v in values.items() if v is not None}},
                   tables=dict(out.tables), published=dict(out.published), privacy=dict(out.privacy),
                   notes=tuple(out.notes), state=dict(out.state), rows_out=out.rows_out)


MECHANISMS = [Ambiguity(), PriView()]


# ------------------------------------------------------------------ views and attack (from the published tables only)
def group_stats(release: Release) -> dict[str, np.ndarray]:
    """Per group presence and association (PriView: exact and Theorem 6), recomputed from the tables (cached)."""
    cache = release.state.setdefault("_view", {}) if isinstance(release.state, dict) else {}
    if "stats" in cache:
        return cache["stats"]
    qi, sa = list(release.source["qi"]), release.source["sensitive"]
    st = release.tables["st"]
    G = int(release.published.get("groups", 0))
    if release.mechanism == "ambiguity":
        ats = [release.tables[n] for n in at_table_names(tuple(qi))]
        stats = amb.ambiguity_stats([t.columns["gid"] for t in ats], st.columns["gid"], st.columns[sa],
                                    st.columns["count"], G)
    else:
        at = release.tables["at"]
        j = release.published["split"]
        other = [c for c in qi if c != j]
        stats = amb.priview_stats(at.columns["gid"], [at.columns[c] for c in other],
                                  [len(at.labels[c]) for c in other], st.columns["gid"], st.columns[j],
                                  st.columns[sa], st.columns["count"], len(st.labels[j]), len(st.labels[sa]), G)
    cache["stats"] = stats
    return stats


def group_tables(release: Release, gid: int) -> dict[str, "object"]:
    """One group's rows of every published table, decoded (pandas frames)."""
    out = {}
    for name, table in release.tables.items():
        rows = np.flatnonzero(np.asarray(table.columns["gid"]) == gid)
        frame = CodedTable(columns={c: np.asarray(v)[rows] for c, v in table.columns.items() if c != "gid"},
                           labels={c: table.labels.get(c) for c in table.columns if c != "gid"}).to_frame()
        out[name] = frame
    return out


def _log10_comb(n: float, k: float) -> float:
    from scipy.special import gammaln

    if k < 0 or k > n:
        return float("-inf")
    return float((gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)) / np.log(10))


def possible_worlds(release: Release, codes: Mapping[str, int]) -> list[dict[str, Any]]:
    """Seed 004 §5 for one person with QI codes ``codes``: every group covering them (Lemma 1).

    Per covering group: |G|, the join size J of its tables, log10 of the
    number of possible worlds C(J, |G|) and of interesting worlds
    C(J - 1, |G| - 1) (Theorem 1's proof), presence |IW|/|PW| = |G|/J, and
    the association of each SA value; for PriView also the exact values
    computed from the tables (module docstring of :mod:`core.mechanisms.ambiguity_algorithm`).
    """
    qi, sa = list(release.source["qi"]), release.source["sensitive"]
    st = release.tables["st"]
    st_gid, st_sa, st_cnt = (np.asarray(st.columns[c]) for c in ("gid", sa, "count"))
    sa_labels = st.labels[sa]
    out = []
    if release.mechanism == "ambiguity":
        idx = release.state.setdefault("_records", {}) if isinstance(release.state, dict) else {}
        index = idx.get("ambiguity") or MECHANISMS[0].index(release)
        cover = np.ones(index.st.shape[0], dtype=bool)
        for a, c in enumerate(qi):
            cover &= index.member[a][:, codes[c]] > 0
        for g in np.flatnonzero(cover):
            k = np.rint(1 / index.inv_k[g]).astype(int)
            size = int(index.st[g].sum())
            J = int(np.prod(k))
            assoc = {str(sa_labels[s]): float(index.st[g, s] / size) for s in np.flatnonzero(index.st[g])}
            out.append({"gid": int(g), "size": size, "k": dict(zip(qi, k.tolist())), "join": J,
                        "log10_worlds": _log10_comb(J, size), "log10_interesting": _log10_comb(J - 1, size - 1),
                        "presence": size / J, "association": assoc})
        return out
    at = release.tables["at"]
    j = release.published["split"]
    other = [c for c in qi if c != j]
    at_gid = np.asarray(at.columns["gid"])
    same = np.ones(len(at_gid), dtype=bool)
    for c in other:
        same &= np.asarray(at.columns[c]) == codes[c]
    st_a = np.asarray(st.columns[j])
    n_at = np.bincount(at_gid, minlength=int(release.published.get("groups", 0)))
    for g in np.unique(at_gid[same]):
        in_st = st_gid == g
        mine = in_st & (st_a == codes[j])
        if not mine.any():
            continue
        size = int(st_cnt[in_st].sum())
        n_st = int(in_st.sum())
        J = int(n_at[g]) * n_st
        n_q = int(np.sum(same & (at_gid == g)))
        c_a = int(st_cnt[mine].sum())
        exact = {str(sa_labels[s]): amb.exact_association(size, c_a, int(st_cnt[mine & (st_sa == s)].sum()), n_q)
                 for s in np.unique(st_sa[mine])}
        paper = {str(sa_labels[s]): float(st_cnt[in_st & (st_sa == s)].sum() / size) for s in np.unique(st_sa[in_st])}
        out.append({"gid": int(g), "size": size, "join": J, "log10_worlds": _log10_comb(J, size),
                    "log10_interesting": _log10_comb(J - 1, size - 1), "presence": size / J,
                    "presence_exact": amb.exact_presence(size, c_a, n_q), "n_q": n_q, "c_a": c_a,
                    "association": paper, "association_exact": exact})
    return out
