"""F'-privacy multi-size bucketization (seed 003), published Anatomy-style as QIT and ST.

Every sensitive value x_i has its own tolerance f'_i: in every bucket its
share must stay at most f'_i (Definition 2).  By default
``f'_i = min(1, theta f_i + b)`` (seed 003 §7.1); a steward can override
f'_i for a few highly sensitive values (``overrides``, e.g.
``"Exec-managerial=0.05;Sales=0.1"``).  Buckets of several sizes are formed
(:mod:`core.mechanisms.bucketization_algorithm`): ``sizes=two`` the optimal two-size setting
(Algorithm 1), ``multi`` the heuristic of Algorithm 2 (default),
``optimal`` the integer program (small problems only).  Records are dealt
to size classes (record partition, §4.3) and to buckets by round-robin
assignment (Lemma 2).

Published: ``QIT(QI..., bid)`` (exact QI values, rows shuffled) and
``ST(bid, SA, count)``; with ``sigma > 0`` each bucket's ST also lists
``sigma`` fake values (distinct, absent from the bucket, count 1) against
the corruption attack (§6): after corrupting all but one member the
adversary is only ``1/(1 + sigma)`` sure the remaining value is real.  The
fakes are distortion: the estimator cannot tell them apart either.

Manifest ``published``: the bucket setting ``[(S_j, b_j)]``, ``loss = sum
(|g| - 1)^2`` (eq. 2), ``mse = loss / (|T| - 1)`` (Definition 3) and
``l_equivalent = ceil(1 / min f'_i)`` (Remark 1).  ``privacy``: the worst
in-bucket share of each value against its f'_i, recomputed from the
published tables, the largest posterior, the values whose f'_i is 1
(``unprotected_values``: a limit of 1 protects nothing) and the records
published in buckets whose ST lists only their own value
(``records_revealed``: their sensitive value is exact).

Estimation: Anatomy's ``sum_g c(g, C) c(g, x) / |g|`` (seed 003 §7.2.2
after [22]) with ``|g|`` the bucket's ST total (so fakes take their share);
the same numbers as :func:`core.mechanisms.base.bucket_records` (a test
checks it), counted from one QIT index times the ST instead of expanding
every record by its bucket's ST (:meth:`core.counting.Records.from_groups`).

Choices where the paper is silent: see :mod:`core.mechanisms.bucketization_algorithm`; besides,
``sigma`` larger than the number of values absent from some bucket is
refused (fakes must be distinct and absent), and the fakes of a bucket are
drawn uniformly among its absent values.

Guarantee (:meth:`Bucketization.guarantee`): F'-privacy (Definition 2):
in every bucket each value's share stays at most its f'_i, checked on the
published QIT (bucket sizes) and ST (counts).  The fake values of
``sigma > 0`` cannot be told from real ones in the release: their entries
(count 1, value absent from the bucket) are then left to the sanitizer's own
check on the true counts (``privacy.every_bucket_meets_fprime``).  A value
with f'_i = 1 is not protected by a limit of 1: the guarantee is vacuous for
it, and the verdict says so with the records published in buckets whose ST
lists only their own value; the nearest setting that is not vacuous is the
largest theta (in the slider's steps of 0.5) that keeps every f'_i below 1.

References
----------
seed 003 §3-7, Algorithms 1-2, Lemma 1, Remark 1, §6 (corruption attack);
MECHANISMS.md sections 4 and 6.
"""

from __future__ import annotations

import math
import threading
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from . import bucketization_algorithm as bk
from .. import guarantee as G
from ..counting import QueryBatch, Records, select
from ..errors import NotEligible
from ..params import Param
from .. import rng as _rng
from .. import shuffle
from ..engine import memo as _memo
from ..engine.combos import Combos
from ..engine.protocol import Chunk, Plan, ranks
from ..release import CodedTable, Release
from ..table import Dataset
from .base import SHARED_GROUPS, Mechanism, grid_counts, grid_select, rows_of

THETA = Param("theta", "θ", "Privacy coefficient: a value of share f may reach θ·f + b inside a bucket "
              "(f′ = min(1, θf + b)); lower is safer.", 8.0, low=0.5, high=64, step=0.5, safer="lower",
              presets=(2.0, 4.0, 8.0, 16.0, 32.0), paper="seed 003 Table 4: 2, 4, 8, 16, 32 (default 8)")
OFFSET = Param("b", "b", "Offset of the threshold f′ = min(1, θf + b): the share even the rarest value may "
               "reach in a bucket.", 0.02, low=0, high=1, step=0.005, safer="lower",
               paper="seed 003 Table 4: 0.02")
OVERRIDES = Param("overrides", "f′ᵢ", "Thresholds set by hand for highly sensitive values, as value=f′ pairs "
                  "separated by ';' (e.g. Exec-managerial=0.05;Sales=0.1); empty for none.", None, kind="text", optional=True,
                  paper="seed 003 §3.2: 'set f′ᵢ manually to a small value for a few highly sensitive values'")
MAX_BUCKET = Param("max_bucket", "M′", "Largest bucket size allowed (records); larger buckets lose more "
                   "information.", 50, kind="int", low=2, high=500, step=1, paper="seed 003 Table 4: M′ = 50")
SIZES = Param("sizes", "sizes", "How bucket sizes are chosen: 'two' = optimal two sizes (Algorithm 1), 'multi' = "
              "recursive two-size splits (Algorithm 2), 'optimal' = integer program (small problems only).",
              "multi", kind="choice", choices=("two", "multi", "optimal"), paper="seed 003 §5, §7.2")
SIGMA = Param("sigma", "σ", "Fake sensitive values added to each bucket against the corruption attack; an "
              "adversary who corrupts all but one member is then only 1/(1+σ) sure.", 0, kind="int", low=0,
              high=20, step=1, safer="higher", paper="seed 003 §6 (default 0: no fakes)")

FAKES = Param("fakes", "fakes", "How the σ fake values are chosen: 'random' (any value absent from the bucket) or "
              "'negassoc' (seed 003 §6.2: only values the negative association learnt from the release cannot "
              "strike out for any record of the bucket).", "random", kind="choice", choices=("random", "negassoc"),
              paper="seed 003 §6 ('random'), §6.2 ('negassoc')")


@lru_cache(maxsize=64)
def _plan(counts: tuple, fp: tuple, max_size: int, method: str) -> bk.Bucketing:
    return bk.bucketize(np.array(counts, dtype=np.int64), np.array(fp), max_size, method)


class BucketPlan(Plan):
    """Bucketization's plan: the bucket setting and class counts; each record's bucket from (SA, rank).

    ``rank_by="sa"``: the rank is the record's among its value's records.
    With negative-association fakes the plan needs the QI values of each
    bucket's records, so records are ranked per (QI..., SA) combination
    (``rank_by="qi_sa"``) and a record's rank among its value's records is
    ``offset[combination] + rank`` (the value's combinations in their
    order, then input order): a different but equally uniform dealing.

    ``slots`` (the local engine in the app only, :mod:`core.engine.memo`):
    every record's :func:`core.mechanisms.bucketization_algorithm.deal_slots`, kept between moves
    of theta since they depend on the seed and the SA values only; the
    plan then needs no rank (``rank_by=None``), and a record's bucket is
    its slot's (:func:`core.mechanisms.bucketization_algorithm.slot_buckets`, computed once for the
    whole table when the first batch is applied).  With the memo the plan
    also gives its column in published order at once (:meth:`in_order`).
    Slots and memo are dropped when the plan is pickled (the Dask engine
    ranks the records itself).
    """

    def __init__(self, seed: int, setting: bk.Bucketing, bid: np.ndarray, offset: np.ndarray | None = None,
                 slots: np.ndarray | None = None, memo=None, **fields):
        rank_by = "qi_sa" if offset is not None else None if slots is not None else "sa"
        super().__init__(seed=seed, rank_by=rank_by, table="qit", labels={"bid": None}, **fields)
        self.setting, self.bid, self.offset, self.slots, self.memo = setting, bid, offset, slots, memo
        self._by_slot = None
        self._lock = threading.Lock()

    def __getstate__(self):
        state = _memo.drop_memo(self.__dict__)
        state["_by_slot"], state["_lock"] = None, None
        if state.get("slots") is not None:
            state["slots"], state["rank_by"] = None, "sa"
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _slot_bids(self) -> np.ndarray:
        """Every slot's published bucket id, in the narrowest unsigned type (made once, by the first batch's thread)."""
        with self._lock:
            if self._by_slot is None:
                self._by_slot = bk.slot_buckets(self.setting, _memo.narrow(self.bid, len(self.bid)))
        return self._by_slot

    def in_order(self, order: np.ndarray) -> dict[str, np.ndarray] | None:
        """With the app's slots: every record's bucket in published order, from its slot in that order.

        The slots in published order (``slots[order]``) depend on the seed
        and the table only, so the memo keeps them too; a move of theta then
        reads each record's bucket id once (census 5M: one gather instead of
        one per batch and another to put the column in order).
        """
        if self.slots is None or self.memo is None:
            return None
        slots = self.memo(("bucket/slot/published", int(self.seed)),
                          lambda: _memo.narrow(self.slots[order], max(1, len(self.slots))))
        by_slot = self._slot_bids()
        out = np.empty(len(slots), dtype=np.int64)
        for lo in range(0, len(slots), CELL_BLOCK):
            out[lo:lo + CELL_BLOCK] = by_slot[slots[lo:lo + CELL_BLOCK]]
        return {"bid": out}

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        if self.slots is not None:
            return {"bid": self._slot_bids()[self.slots[chunk.start:chunk.stop]].astype(np.int64)}
        rank = chunk.rank if self.offset is None else self.offset[chunk.key] + chunk.rank
        return {"bid": self.bid[bk.assign_ranked(self.setting, self.seed, chunk.sa, rank)]}


def _dealing_slots(summary, seed: int, total: np.ndarray) -> np.ndarray | None:
    """Every record's :func:`core.mechanisms.bucketization_algorithm.deal_slots`, from the app's memo (None without one).

    Computed once per table and seed for the whole table (ranks by SA in
    input order, as the engine counts them), in the narrowest unsigned type.
    """
    memo = _memo.bind(summary)
    data = _memo.local_data(summary)
    if memo is None or data is None:
        return None

    def compute():
        sa = np.asarray(data.sa_codes)
        rank, _ = ranks(np.asarray(sa, dtype=np.int64), int(data.m))
        return _memo.narrow(bk.deal_slots(seed, sa, rank, total), max(1, int(data.n)))

    return memo(("bucket/slot", int(seed)), compute)


#: ST cells examined at a time by the guarantee (:meth:`Bucketization.guarantee`) and the page's exposure count
CELL_BLOCK = 1 << 20


def bucket_sizes(release: Release) -> np.ndarray:
    """Each bucket's number of records, counted from the published QIT's ``bid`` column (kept in the release's state).

    The guarantee and the Sanitize page's view both need it; counting it
    once saves a pass over the QIT (census 5M: 5M records) per use.
    """
    cache = release.state.setdefault("_records", {})
    if "bucket_sizes" not in cache:
        rows, count = rows_of(release.tables["qit"])  # a Dask QIT: its distinct rows, weighted by their counts
        bid = np.asarray(rows["bid"])
        cache["bucket_sizes"] = (np.bincount(bid) if count is None else
                                 np.bincount(bid, weights=count).astype(np.int64))
    return cache["bucket_sizes"]


def _worst_shares(pl: bk.Bucketing, m: int) -> np.ndarray:
    """Each value's largest share of a bucket, from the class counts (no per-cell shares).

    RRA gives value x ``floor`` or ``ceil(c / b)`` records in each of the b
    buckets of size S of a class where it has c records
    (:func:`core.mechanisms.bucketization_algorithm.bucket_entries`), so its worst share there is
    ``ceil(c / b) / S``: the same numbers as the cells' ``count / size``.
    """
    per, nb, size = bk.classes_by_size(pl)
    worst = np.zeros(m)
    for c, b, s in zip(per, nb.tolist(), size.tolist()):
        most = -(-c // b)  # ceil(c / b): the most records of each value in one bucket of the class
        share = np.where(c > 0, most / s, 0.0)
        np.maximum(worst, share[:m], out=worst)
    return worst


def _value_offsets(summary: Combos) -> np.ndarray:
    """Records of the same SA value in the earlier combinations of the summary (row order), per combination."""
    order = np.argsort(summary.sa, kind="stable")
    cum = np.cumsum(summary.count[order]) - summary.count[order]
    first = np.searchsorted(summary.sa[order], np.arange(summary.m))  # each value's first row in ``order``
    out = np.empty(len(summary), dtype=np.int64)
    out[order] = cum - cum[np.minimum(first, len(cum) - 1)][summary.sa[order]]
    return out


class Bucketization(Mechanism):
    name = "bucketization"
    title = "F′-privacy bucketization (multi-size)"
    paper = "seed 003 (Wang, Wang, Fu & Wong, inferential vs differential privacy)"
    summary = ("Records are grouped into buckets of different sizes; the QI values are published exactly with a "
               "bucket number and each bucket's sensitive values separately (as Anatomy does). Each sensitive "
               "value has its own ceiling f′ on its share inside any bucket, so rare or very sensitive values "
               "are hidden in large buckets while common ones sit in small buckets that lose little.")
    order = 55
    params = (THETA, OFFSET, OVERRIDES, MAX_BUCKET, SIZES, SIGMA, FAKES)
    main_param = "theta"
    sweep = (2, 4, 8, 16, 32)
    publishes = "tables"
    record_table = "qit"  # QIT(QIs, BID): every person's QIs as they are
    bounds = ("differential-inference",)

    # ------------------------------------------------------------ specification
    def overrides(self, data: Dataset, values: Mapping[str, Any]) -> dict[int, float]:
        return bk.parse_overrides(values.get("overrides") or "", data.sa_labels, self.name)

    def thresholds(self, data: Dataset, values: Mapping[str, Any]) -> np.ndarray:
        """f'_i of every value (default specification, then overrides)."""
        return bk.fprime(data.sa_counts, values["theta"], values["b"], self.overrides(data, values))

    def setting(self, data: Dataset, values: Mapping[str, Any]) -> bk.Bucketing:
        """The bucket setting and class counts (cached on the SA counts and thresholds)."""
        fp = self.thresholds(data, values)
        bk.check_spec(data.sa_counts, fp, data.sa_labels, values["theta"], values["b"],
                      tuple(self.overrides(data, values)))
        return _plan(tuple(int(c) for c in data.sa_counts), tuple(float(f) for f in fp),
                     int(values["max_bucket"]), values["sizes"])

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        try:
            fp = self.thresholds(data, values)
        except Exception:  # a bad override is reported by check()
            return {}
        top = int(data.sa_counts.max())
        return {
            "l_equivalent": int(math.ceil(1.0 / fp.min() - bk.EPS)),
            "smallest_bucket": bk.min_size(data.sa_counts, fp),
            "fprime_min": float(fp.min()),
            "anatomy_max_l": int(data.n // top),
        }

    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        pl = self.setting(data, values)
        sigma = int(values["sigma"])
        if sigma:
            most = bk.max_distinct(pl)
            if data.m - most < sigma:
                raise NotEligible(
                    f"σ = {sigma} fake values per bucket must be distinct and absent from the bucket, but the fullest "
                    f"bucket already holds {most} of the {data.m} values; the largest σ possible is "
                    f"{max(0, data.m - most)}.", suggestion={"sigma": max(0, data.m - most)})

    # ------------------------------------------------------------ plan
    planned = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int) -> BucketPlan:
        """Setting and class counts from the SA counts; records dealt by rank (:func:`core.mechanisms.bucketization_algorithm.assign_ranked`).

        Every bucket's counts per value follow from the class counts (RRA),
        so the ST is built here, already sorted by (bucket id, value)
        (:func:`core.mechanisms.bucketization_algorithm.published_cells`); the
        bucket ids are a random permutation drawn at group level
        (:func:`core.shuffle.relabel`, purpose ``"bucket/bid"``) and the fakes
        of ``sigma > 0`` are drawn per (bucket, value) (purpose
        ``"bucket/fake"``, counter ``bid * m + value``).  Negative-association
        fakes need the QI values of each bucket's records: the plan then
        deals the table's (QI..., SA) combinations record by record from
        the counts (:class:`BucketPlan`).
        """
        pl = self.setting(summary, values)
        fp = self.thresholds(summary, values)
        n, m = summary.n, summary.m
        sa_name, sa_labels = summary.sa_name, summary.sa_labels
        per, nb, size = bk.classes_by_size(pl)
        n_buckets = int(nb.sum())
        # bucket ids in random order, so an id reveals nothing about size class or value order
        relabel = shuffle.relabel(seed, "bucket/bid", n_buckets)
        sizes = np.empty(n_buckets, dtype=np.int64)
        sizes[relabel] = np.repeat(size, nb)
        bid_col, x_col, c_col = bk.published_cells(pl, relabel)  # the ST's cells by (bucket, value)
        sigma = int(values["sigma"])
        negassoc_fakes = bool(sigma) and values.get("fakes", "random") == "negassoc"
        fake_g = fake_x = np.zeros(0, dtype=np.int64)
        short = 0
        offset = None
        if sigma:
            present = np.zeros((n_buckets, m), dtype=bool)
            present[bid_col, x_col] = True
            # sigma distinct absent values per bucket, uniformly: random keys, absent values first
            keys = _rng.uniforms(seed, "bucket/fake", 0, n_buckets * m).reshape(n_buckets, m) + present * 2.0
            if negassoc_fakes:
                # seed 003 §6.2: values some record of the bucket excludes come after the safe ones
                from .. import negassoc

                offset = _value_offsets(summary)
                combo = np.repeat(np.arange(len(summary)), summary.count)  # every record, as its combination
                rank = np.arange(n) - np.repeat(np.cumsum(summary.count) - summary.count, summary.count)
                bid = relabel[bk.assign_ranked(pl, seed, summary.sa[combo], offset[combo] + rank)]
                qi = [c[combo] for c in summary.qi]
                neg = negassoc.learn(qi, summary.domains, bid, bid_col, x_col, c_col, m)
                struck = negassoc.excluded(qi, bid, neg, n_buckets, m, every=False)
                del combo, rank, bid, qi
                keys = keys + struck * 1.0
                safe = (~present & ~struck).sum(axis=1)
                short = int(np.maximum(sigma - safe, 0).sum())
            pick = np.argsort(keys, axis=1, kind="stable")[:, :sigma]
            fake_g = np.repeat(np.arange(n_buckets), sigma)
            fake_x = pick.ravel()
            # each bucket's fakes among its values (no census-sized copy without fakes)
            bid_col, x_col, c_col = bk.sort_cells(
                np.concatenate([bid_col, fake_g]), np.concatenate([x_col, fake_x]),
                np.concatenate([c_col, np.ones(len(fake_g), dtype=np.int64)]), n_buckets, m)
        st = CodedTable(
            columns={"bid": bid_col, sa_name: x_col, "count": c_col},
            labels={"bid": None, sa_name: sa_labels, "count": None},
        )
        worst = _worst_shares(pl, m)  # worst in-bucket share of each value
        setting = pl.setting
        loss = bk.loss_of(setting)
        l_eq = int(math.ceil(1.0 / fp.min() - bk.EPS))
        sa_counts = summary.sa_counts
        per_value = [{"value": str(sa_labels[i]), "records": int(sa_counts[i]),
                      "f": float(sa_counts[i] / n), "fprime": float(fp[i]), "worst_share": float(worst[i])}
                     for i in range(m)]
        ok = bool(np.all(worst <= fp + bk.EPS))
        published = {
            "bucket_setting": [[int(s), int(b)] for s, b in setting],
            "buckets": n_buckets,
            "loss": loss,
            "mse": loss / (n - 1) if n > 1 else 0.0,
            "l_equivalent": l_eq,
            "sizes": values["sizes"],
            "max_bucket": int(values["max_bucket"]),
            "fake_values": int(len(fake_g)),
            "fake_share": float(len(fake_g) / (n + len(fake_g))),
            "fprime": per_value,
        }
        # a bucket whose ST lists one value (fakes included) publishes its records' value exactly
        revealed = int(sizes[(np.bincount(bid_col, minlength=n_buckets)) == 1].sum())
        unprotected = [str(sa_labels[i]) for i in range(m) if sa_counts[i] and fp[i] >= 1 - bk.EPS]
        privacy = {
            "unprotected_values": unprotected,
            "records_revealed": revealed,
            "every_bucket_meets_fprime": ok,
            "max_posterior": float(worst.max(initial=0.0)),
            "worst_share_over_fprime": float((worst / fp).max()),
            "l_equivalent": l_eq,
            "corruption_certainty": 1.0 / (1 + sigma),
        }
        notes = [f"{n_buckets:,} buckets in {len(setting)} size{'s' if len(setting) != 1 else ''} "
                 f"({', '.join(f'{b:,} × {s}' for s, b in setting)}); loss Σ(|g|−1)² = {loss:,}. "
                 f"ℓ-diversity would need ℓ = {l_eq} to give every value this protection; "
                 f"Anatomy can deliver at most ℓ = {n // int(sa_counts.max())} on this table."]
        if unprotected or revealed:
            shown = ", ".join(f"'{v}'" for v in unprotected[:6]) + (" …" if len(unprotected) > 6 else "")
            notes.append((f"f′ = 1 for {shown}: a limit of 1 protects nothing. " if unprotected else "")
                         + (f"{revealed:,} records ({revealed / n:.1%}) are published in buckets whose ST lists "
                            "only their own value, so their sensitive value is exact. " if revealed else "")
                         + "Lower θ or b, or override f′ for these values.")
        if sigma:
            notes.append(f"Each bucket's ST lists σ = {sigma} fake value{'s' if sigma > 1 else ''}: "
                         f"{len(fake_g):,} fake entries, {published['fake_share']:.1%} of the ST's mass, which "
                         f"estimates count as if real (distortion).")
            if negassoc_fakes:
                notes.append("Fakes are drawn only from values the negative association learnt from the release "
                             "cannot strike out for any record of the bucket (seed 003 §6.2)"
                             + (f"; {short:,} fake entries had to use other absent values, too few safe ones "
                                "being left in their buckets." if short else "."))
            published["fakes"] = values.get("fakes", "random")
        # the search's wall-clock time is shown on the page but kept out of the manifest: same seed, same bytes
        slots = None
        if offset is None:
            total = bk.classes_by_size(pl)[0].sum(axis=0)  # every record of a value is dealt: its count
            if np.array_equal(total, sa_counts):
                slots = _dealing_slots(summary, seed, total)
        memo = _memo.bind(summary) if slots is not None else None
        return BucketPlan(seed, pl, relabel, offset, slots, memo, tables={"st": st}, published=published, privacy=privacy,
                          notes=tuple(notes), rows_out=n,
                          state={"search_seconds": pl.seconds, "fake_bucket": fake_g, "fake_value": fake_x})

    # ------------------------------------------------------------ guarantee
    def promise(self, values: Mapping[str, Any]) -> str:
        extra = f", overrides {values['overrides']}" if values.get("overrides") else ""
        return (f"F′-privacy with f′ = min(1, θf + b), θ = {values['theta']:g}, b = {values['b']:g}{extra}: in every "
                f"bucket each sensitive value makes up at most its own f′ of the bucket's records (seed 003 "
                f"Definition 2).")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """Each value's share of each bucket against its f′, from the published QIT and ST."""
        fp = self.thresholds(data, values)
        st = release.tables["st"]
        bid = np.asarray(st.columns["bid"], dtype=np.int64)
        x = np.asarray(st.columns[data.sa])
        cnt = np.asarray(st.columns["count"])
        size = bucket_sizes(release)
        n_b = max(len(size), int(bid.max(initial=-1)) + 1)
        denom = np.maximum(np.pad(size, (0, n_b - len(size))), 1).astype(float)
        lim = fp + bk.EPS
        sigma = int(values["sigma"])
        ratio = largest = 0.0
        bad = [np.zeros(0, dtype=np.int64)]
        # block by block: the temporaries stay a few MB (census 5M: 4.7M cells), reused instead of mapped anew
        for lo in range(0, len(bid), CELL_BLOCK):
            hi = min(len(bid), lo + CELL_BLOCK)
            b, xb = bid[lo:hi], x[lo:hi]
            share = np.divide(cnt[lo:hi], denom[b])
            over = share > lim[xb]
            part = share / fp[xb]
            if sigma:  # fakes (count 1) are left to the sanitizer's own check
                checked = cnt[lo:hi] > 1
                over &= checked
                part = part[checked]
            ratio = max(ratio, float(part.max(initial=0.0)))
            largest = max(largest, float(share.max(initial=0.0)))
            bad.append(b[over])
        bad_b = np.unique(np.concatenate(bad))
        if not release.privacy.get("every_bucket_meets_fprime", True) and not len(bad_b):
            bad_b = np.array([-1])  # the sanitizer's check on true counts failed where the ST cannot show it
        figures = {"buckets": n_b, "worst_share_over_fprime": ratio, "largest_posterior": largest,
                   "records_revealed": int(release.privacy.get("records_revealed", 0)),
                   "l_equivalent": int(release.privacy.get("l_equivalent", 0))}
        fail = None
        if len(bad_b):
            fail = G.failure("each value's share ≤ its f′", ratio, 1.0, len(bad_b), n_b,
                             "buckets (share ÷ f′ shown)")
        vacuous = None
        unprotected = [str(v) for v in release.privacy.get("unprotected_values", [])]
        if unprotected:
            revealed = figures["records_revealed"]
            shown = ", ".join(f"'{v}'" for v in unprotected[:4]) + (" …" if len(unprotected) > 4 else "")
            vacuous = (f"f′ = 1 for {len(unprotected)} value(s) ({shown}): a limit of 1 protects nothing, so the "
                       f"guarantee is vacuous for them"
                       + (f"; {revealed:,} of {data.n:,} records ({revealed / data.n:.1%}) are published in buckets "
                          f"whose ST lists only their own value" if revealed else ""))
        return G.judge(self.name, self.promise(values), figures, [fail], vacuous=vacuous,
                       explains=G.restating(release.notes, "a limit of 1 protects nothing", "lists only their own"))

    def nearest(self, data: Dataset, values: Mapping[str, Any], verdict: G.Verdict):
        """The largest θ (steps of 0.5) keeping every f′ below 1, then smaller ones."""
        present = data.sa_counts > 0
        top = float((data.sa_counts[present] / data.n).max())
        b = float(values["b"])
        if b >= 1 or top <= 0:
            return
        theta = math.floor(((1 - b) / top) / 0.5) * 0.5
        while theta * top + b >= 1 - bk.EPS:
            theta -= 0.5
        start = min(theta, float(values["theta"]) - 0.5) if not verdict.vacuous else theta
        t = start
        while t >= THETA.low:
            yield {"theta": t}
            t -= 0.5

    # ------------------------------------------------------------ estimate
    def estimate_many(self, release: Release, batches, rng: np.random.Generator) -> list[np.ndarray]:
        self._counter(release).prepare(batches)
        return [self.estimate(release, b, rng) for b in batches]

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        """Anatomy's estimator ``sum_g c(g, C) c(g, x) / |g|`` from the published QIT and ST."""
        return select(self._counter(release).counts(batch), batch.sa)

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        return grid_select(grid_counts(self._counter(release), conditions))  # each condition counted once

    def _counter(self, release: Release) -> Records:
        cache = release.state.setdefault("_records", {})
        if "bucketization" not in cache:
            qit, st = release.tables["qit"], release.tables["st"]
            qi = release.source["qi"]
            sa = release.source["sensitive"]
            rows, count = rows_of(qit)  # a Dask QIT: its distinct rows, weighted by their counts
            cache["bucketization"] = Records.from_groups(
                [rows[c] for c in qi], [len(qit.labels[c]) for c in qi], rows["bid"],
                st.columns["bid"], st.columns[sa], st.columns["count"], len(st.labels[sa]), record_weights=count,
                groups=cache.get(SHARED_GROUPS))
        return cache["bucketization"]


MECHANISMS = [Bucketization()]
