"""Sanitize-page view of an F′-privacy bucketization release: bucket setting, sizes, f′ᵢ against the shares reached.

A threshold f′ᵢ = min(1, θfᵢ + b) of 1 is met by any bucket, so F′-privacy
"holds" while the value is not protected at all: the multi-size search then
puts its records in buckets whose ST lists only that value (size-1 buckets
on Adult at θ = 8: 22,922 records), which publish the value exactly.  The
view names those values, counts the records of every bucket whose posterior
is 1 (recomputed from the published ST) and says what to change, above
everything that would otherwise read as "meets every threshold".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core.experiments.seed003 import bucket_size_figure, fprime_figure, l_theta_figure
from core.mechanisms.bucketization import CELL_BLOCK, bucket_sizes
from core.release import Release
from core.table import Dataset

from ..fmt import md
from pages.ui.charts import chart

#: what the view shows, in the label of the Sanitize page's expander that holds it
TOPIC = "its bucket sizes, and each value's threshold against the share reached"

THETAS = (2, 4, 8, 16, 32)
#: f′ at or above this is a threshold of 1 (the mechanism's own tolerance, core.mechanisms.bucketization_algorithm.EPS)
ONE = 1 - 1e-9


@dataclass(frozen=True)
class Exposure:
    """Values whose threshold f′ is 1 and records published in buckets that reveal their value."""

    unprotected: np.ndarray  # codes of values with f′ = 1 (and at least one record)
    revealed: np.ndarray  # per value: records in buckets whose ST lists only that value (posterior 1)
    revealed_size1: np.ndarray  # per value: of those, records in buckets of one record
    n: int

    @property
    def total(self) -> int:
        return int(self.revealed.sum())

    @property
    def size1(self) -> int:
        return int(self.revealed_size1.sum())


def exposure(release: Release, data: Dataset) -> Exposure:
    """Recompute from the published QIT and ST which records a bucket reveals (its ST lists one value)."""
    st_t = release.tables["st"]
    g = np.asarray(st_t.columns["bid"], dtype=np.int64)
    x = np.asarray(st_t.columns[data.sa])
    c = np.asarray(st_t.columns["count"])
    sizes = bucket_sizes(release)
    n_b = max(len(sizes), int(g.max(initial=-1)) + 1)
    sizes = np.pad(sizes, (0, n_b - len(sizes)))
    single_b = np.bincount(g, minlength=n_b) == 1  # buckets whose ST lists one value (fakes included): posterior 1
    one_b = single_b & (sizes == 1)
    revealed = np.zeros(data.m, dtype=np.int64)
    revealed_size1 = np.zeros(data.m, dtype=np.int64)
    for lo in range(0, len(g), CELL_BLOCK):  # block by block: no census-sized temporaries
        gb, xb, cb = g[lo:lo + CELL_BLOCK], x[lo:lo + CELL_BLOCK], c[lo:lo + CELL_BLOCK]
        single, one = single_b[gb], one_b[gb]
        revealed += np.bincount(xb[single], weights=cb[single], minlength=data.m).astype(np.int64)
        revealed_size1 += np.bincount(xb[one], weights=cb[one], minlength=data.m).astype(np.int64)
    fp = np.array([r["fprime"] for r in release.published["fprime"]], dtype=float)
    unprotected = np.flatnonzero((fp >= ONE) & (data.sa_counts > 0))
    return Exposure(unprotected, revealed, revealed_size1, int(data.n))


def largest_safe_theta(f_max: float, b: float, step: float = 0.5, low: float = 0.5) -> float | None:
    """Largest θ on the slider's grid with θ·f_max + b < 1 (no threshold at 1), or None if even ``low`` fails."""
    if f_max <= 0 or b >= 1:
        return None
    theta = math.floor(((1 - b) / f_max - 1e-9) / step) * step
    return theta if theta >= low else None


def _exposure_warning(exp: Exposure, release: Release, data: Dataset) -> None:
    """The warning above the view: which values have f′ = 1, how many records are revealed, what to change."""
    params = release.params
    theta, b = float(params.get("theta", 8)), float(params.get("b", 0.02))
    labels = data.sa_labels
    k = len(exp.unprotected)
    f_top = float(data.sa_counts.max() / data.n)
    parts = []
    if k:
        names = ", ".join(f"'{md(labels[i])}'" for i in exp.unprotected)
        parts.append(
            f"**{k} value{'s have' if k > 1 else ' has'} f′ = 1, which protects nothing:** {names} "
            f"(θ·f + b = {theta:g}·f + {b:g} reaches 1 at {'their shares' if k > 1 else 'its share'} f). "
            "Every bucket meets a threshold of 1.")
    if exp.total:
        where = ("all in buckets of one record" if exp.size1 == exp.total else
                 f"{exp.size1:,} in buckets of one record, {exp.total - exp.size1:,} in larger buckets holding "
                 "one value only")
        parts.append(
            f"**{exp.total:,} records ({exp.total / exp.n:.1%}) are published in buckets that reveal their "
            f"value** ({where}): such a bucket's ST lists a single value, so anyone who finds a person's QI values "
            "in the QIT knows their sensitive value (posterior 1).")
    elif k and int(params.get("sigma", 0)):
        parts.append("No bucket reveals a value here only because each ST lists σ fake values; without them, "
                     "these values' records could sit alone in their buckets.")
    fixes = []
    safe = largest_safe_theta(f_top, b)
    if safe is not None and safe < theta:
        fixes.append(f"lower θ to {safe:g} or less (no threshold reaches 1 while θ < (1 − b)/max f = "
                     f"{(1 - b) / f_top:.3g})")
    if 1 - theta * f_top > 0:
        fixes.append(f"lower b below {1 - theta * f_top:.3g}")
    else:
        fixes.append(f"lowering b alone cannot fix it at θ = {theta:g} (θ·max f = {theta * f_top:.3g} ≥ 1)")
    example = ";".join(f"{md(labels[i])}={min(0.5, max(0.05, 2 * data.sa_counts[i] / data.n)):.2g}"
                       for i in exp.unprotected[:2])
    if k:
        fixes.append(f"or set f′ by hand for these values, below 1 and at least their share f (parameter f′ᵢ, "
                     f"e.g. {example})")
    # the verdict above says it in one line, with the one-click fix; here the detail, not a second warning box
    st.markdown(" ".join(parts) + "  \n**What to do:** " + "; ".join(fixes) + ".")
    idx = np.flatnonzero((exp.revealed > 0) | np.isin(np.arange(data.m), exp.unprotected))
    fp = np.array([r["fprime"] for r in release.published["fprime"]], dtype=float)
    frame = pd.DataFrame({
        "value": [str(labels[i]) for i in idx],
        "records": data.sa_counts[idx],
        "share f": data.sa_counts[idx] / data.n,
        "threshold f′": fp[idx],
        "records revealed": exp.revealed[idx],
        "in buckets of one record": exp.revealed_size1[idx],
        "share of the value revealed": exp.revealed[idx] / np.maximum(data.sa_counts[idx], 1),
    }).sort_values("records revealed", ascending=False, kind="stable")
    st.dataframe(frame, hide_index=True, key="bk_exposed",
                 column_config={c: st.column_config.NumberColumn(format="percent")
                                for c in ("share f", "threshold f′", "share of the value revealed")})


def setting_frame(release: Release) -> pd.DataFrame:
    """One row per bucket size: buckets, records, loss and its share."""
    rows = []
    total = release.published["loss"] or 1
    for size, buckets in release.published["bucket_setting"]:
        loss = buckets * (size - 1) ** 2
        rows.append({"bucket size S": size, "buckets b": buckets, "records S·b": size * buckets,
                     "loss b(S−1)²": loss, "share of the loss": loss / total})
    return pd.DataFrame(rows)


def values_frame(release: Release) -> pd.DataFrame:
    rows = []
    for r in sorted(release.published["fprime"], key=lambda r: r["f"]):
        rows.append({"value": r["value"], "records": r["records"], "share f": r["f"], "threshold f′": r["fprime"],
                     "worst share in a bucket": r["worst_share"],
                     "smallest bucket ⌈1/f′⌉": int(np.ceil(1 / r["fprime"] - 1e-9))})
    return pd.DataFrame(rows)


def render(release: Release, data: Dataset) -> None:
    pub, priv, params = release.published, release.privacy, release.params
    sizes = bucket_sizes(release)
    l_eq = int(pub["l_equivalent"])
    top_value = int(np.argmax(data.sa_counts))
    l_max = int(data.n // data.sa_counts[top_value])

    st.subheader(f"{pub['buckets']:,} buckets in {len(pub['bucket_setting'])} sizes")
    exp = exposure(release, data)
    if len(exp.unprotected) or exp.total:
        _exposure_warning(exp, release, data)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("loss Σ(|g|−1)²", f"{pub['loss']:,}", help="Seed 003 eq. 2: bigger buckets blur the link between QI "
              "values and sensitive values more; lower is more useful.")
    c2.metric("MSE", f"{pub['mse']:.4g}", help="Definition 3: loss / (|T| − 1); 0 = raw data, |T| − 1 = one bucket.")
    c3.metric("ℓ-diversity equivalent", f"ℓ = {l_eq}", help="Remark 1: ℓ = ⌈1/min f′ᵢ⌉ gives every value the "
              "protection F′-privacy gives the most protected one."
              + (" Values with f′ = 1 get no protection from F′-privacy at all." if len(exp.unprotected) else ""))
    c4.metric("largest ℓ Anatomy can deliver", f"ℓ = {l_max}",
              help=f"ℓ-diversity needs every value's share at most 1/ℓ; '{data.sa_labels[top_value]}' has "
                   f"{data.sa_counts[top_value] / data.n:.2%}.")
    if l_eq > l_max:
        met = (f"this release meets every threshold with buckets of {pub['bucket_setting'][0][0]} to "
               f"{pub['bucket_setting'][-1][0]} records")
        if len(exp.unprotected):
            met += (f", but a threshold of 1 is no limit: the {len(exp.unprotected)} value"
                    f"{'s' if len(exp.unprotected) > 1 else ''} with f′ = 1 (above) are not protected")
        st.info(md(
            f"ℓ-diversity cannot give this protection on this table: it would need ℓ = {l_eq}, but no ℓ above "
            f"{l_max} is feasible because '{data.sa_labels[top_value]}' holds "
            f"{data.sa_counts[top_value] / data.n:.2%} of the records (1/ℓ must stay at or above every share). "
            f"F′-privacy needs only f′ᵢ ≥ fᵢ for every value (seed 003 Lemma 1), and {met}."))
    elif not priv["every_bucket_meets_fprime"]:  # cannot happen; say so if it does
        st.error("A bucket exceeds a value's threshold; please report this release.")

    st.dataframe(setting_frame(release), hide_index=True, key="bk_setting",
                 column_config={"share of the loss": st.column_config.NumberColumn(format="percent")})
    st.caption(f"The bucket setting ⟨(S, b)⟩ published in the manifest, found by the '{pub['sizes']}' search "
               f"(two = Algorithm 1, multi = Algorithm 2, optimal = integer program) with buckets of at most "
               f"M′ = {pub['max_bucket']} records in {release.state.get('search_seconds', 0.0):.2f} s. "
               "Rare values need large buckets; "
               "frequent ones can sit in small buckets that lose little.")

    chart(bucket_size_figure(sizes), key="bk_sizes")
    st.caption("How many records sit in buckets of each size (hover for the number of buckets). Every record of a "
               "bucket is equally likely to carry each of the bucket's sensitive values.")

    chart(fprime_figure(pub["fprime"]), key="bk_fprime")
    st.caption("For each sensitive value: its threshold f′ᵢ (bar), its share of the table fᵢ (dotted) and the largest "
               "share it reaches in any published bucket (diamond), recomputed from the QIT and ST. F′-privacy holds "
               "when every diamond is at or under its bar.")
    with st.expander("Thresholds per value"):
        st.dataframe(values_frame(release), hide_index=True, key="bk_values",
                     column_config={c: st.column_config.NumberColumn(format="percent")
                                    for c in ("share f", "threshold f′", "worst share in a bucket")})

    theta = float(params.get("theta", 8))
    thetas = sorted(set(THETAS) | {theta})
    chart(l_theta_figure(data.sa_counts, thetas, float(params.get("b", 0.02)), data.name, theta),
                    key="bk_l_theta")
    st.caption("Seed 003 Figure 3 for this table: the ℓ an ℓ-diversity model needs at each θ (dotted line: the "
               "current θ), against the dashed ceiling that Anatomy cannot pass here. Overrides of f′ᵢ are not "
               "included in this curve.")

    sigma = int(params.get("sigma", 0))
    if sigma:
        st.markdown(
            f"**Corruption attack defence (σ = {sigma})**: each bucket's ST lists {sigma} fake value"
            f"{'s' if sigma > 1 else ''} ({pub['fake_values']:,} in all, {pub['fake_share']:.1%} of the ST's mass). "
            f"An adversary who learns the values of all but one member of a bucket is still only "
            f"{priv['corruption_certainty']:.0%} sure that a remaining value is real (1/(1 + σ), seed 003 §6). "
            "Estimates count the fakes as real: that is the distortion paid.")
