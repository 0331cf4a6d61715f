"""Sanitize-page view of an F′-privacy bucketization release: bucket setting, sizes, f′ᵢ against the shares reached."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.experiments.seed003 import bucket_size_figure, fprime_figure, l_theta_figure
from core.release import Release
from core.table import Dataset

from ..fmt import md

THETAS = (2, 4, 8, 16, 32)


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
    sizes = np.bincount(release.tables["qit"].columns["bid"])
    l_eq = int(pub["l_equivalent"])
    top_value = int(np.argmax(data.sa_counts))
    l_max = int(data.n // data.sa_counts[top_value])

    st.subheader(f"{pub['buckets']:,} buckets in {len(pub['bucket_setting'])} sizes")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("loss Σ(|g|−1)²", f"{pub['loss']:,}", help="Seed 003 eq. 2: bigger buckets blur the link between QI "
              "values and sensitive values more; lower is more useful.")
    c2.metric("MSE", f"{pub['mse']:.4g}", help="Definition 3: loss / (|T| − 1); 0 = raw data, |T| − 1 = one bucket.")
    c3.metric("ℓ-diversity equivalent", f"ℓ = {l_eq}", help="Remark 1: ℓ = ⌈1/min f′ᵢ⌉ gives every value the "
              "protection F′-privacy gives the most protected one.")
    c4.metric("largest ℓ Anatomy can deliver", f"ℓ = {l_max}",
              help=f"ℓ-diversity needs every value's share at most 1/ℓ; '{data.sa_labels[top_value]}' has "
                   f"{data.sa_counts[top_value] / data.n:.2%}.")
    if l_eq > l_max:
        st.info(md(
            f"ℓ-diversity cannot give this protection on this table: it would need ℓ = {l_eq}, but no ℓ above "
            f"{l_max} is feasible because '{data.sa_labels[top_value]}' holds "
            f"{data.sa_counts[top_value] / data.n:.2%} of the records (1/ℓ must stay at or above every share). "
            f"F′-privacy needs only f′ᵢ ≥ fᵢ for every value (seed 003 Lemma 1), and this release meets every "
            f"threshold with buckets of {pub['bucket_setting'][0][0]} to {pub['bucket_setting'][-1][0]} records."))
    elif not priv["every_bucket_meets_fprime"]:  # cannot happen; say so if it does
        st.error("A bucket exceeds a value's threshold; please report this release.")

    st.dataframe(setting_frame(release), hide_index=True, key="bk_setting",
                 column_config={"share of the loss": st.column_config.NumberColumn(format="percent")})
    st.caption(f"The bucket setting ⟨(S, b)⟩ published in the manifest, found by the '{pub['sizes']}' search "
               f"(two = Algorithm 1, multi = Algorithm 2, optimal = integer program) with buckets of at most "
               f"M′ = {pub['max_bucket']} records in {pub['seconds']:.2f} s. Rare values need large buckets; "
               "frequent ones can sit in small buckets that lose little.")

    st.plotly_chart(bucket_size_figure(sizes), key="bk_sizes")
    st.caption("How many records sit in buckets of each size (hover for the number of buckets). Every record of a "
               "bucket is equally likely to carry each of the bucket's sensitive values.")

    st.plotly_chart(fprime_figure(pub["fprime"]), key="bk_fprime")
    st.caption("For each sensitive value: its threshold f′ᵢ (bar), its share of the table fᵢ (dotted) and the largest "
               "share it reaches in any published bucket (diamond), recomputed from the QIT and ST. F′-privacy holds "
               "when every diamond is at or under its bar.")
    with st.expander("Thresholds per value"):
        st.dataframe(values_frame(release), hide_index=True, key="bk_values",
                     column_config={c: st.column_config.NumberColumn(format="percent")
                                    for c in ("share f", "threshold f′", "worst share in a bucket")})

    theta = float(params.get("theta", 8))
    thetas = sorted(set(THETAS) | {theta})
    st.plotly_chart(l_theta_figure(data.sa_counts, thetas, float(params.get("b", 0.02)), data.name, theta),
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
