"""Attack: corruption plus negative association against F′-privacy's fake values, and seed 003 §6.2's defence."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core import mechanisms, negassoc
from core.errors import WorkbenchError
from core.table import Dataset
from pages.ui import cached
from pages.ui.fmt import md

TITLE = "Negative association against fake values (seed 003 §6.2)"
ORDER = 25
NS = "atk_neg"


@cached.memo("negative-association attack")
def _run(_data: Dataset, data_key: str, sigma: int, seed: int) -> dict:
    out = {}
    for fakes in ("random", "negassoc"):
        rel = mechanisms.sanitize(_data, "bucketization", {"sigma": sigma, "fakes": fakes}, seed)
        qit, st_ = rel.tables["qit"], rel.tables["st"]
        s = rel.state
        out[fakes] = negassoc.attack([qit.columns[c] for c in _data.qi], _data.domains, qit.columns["bid"],
                                     np.asarray(st_.columns["bid"]),
                                     np.asarray(st_.columns[_data.sa]), np.asarray(st_.columns["count"]),
                                     s["fake_bucket"], s["fake_value"], _data.m, sigma)
    return out


def render(data: Dataset) -> None:
    st.markdown(
        "F′-privacy bucketization can add σ fake sensitive values to each bucket against the corruption attack "
        "(an adversary who learns the values of all but one member is then only 1/(1 + σ) sure of the last). "
        "An adversary who also learns from the release which QI values are *negatively associated* with which "
        "sensitive values (far rarer together than independence gives) strikes the fakes a target cannot have, "
        "and is surer. Seed 003 §6.2's defence draws the fakes only from values no record of the bucket can "
        f"exclude. Learning rule (ours; the paper gives none): a pair is negative when the release implies fewer "
        f"than {negassoc.TAU:g} × the independent count, with at least {negassoc.MIN_EXPECTED:g} expected.")
    c1, c2 = st.columns(2)
    sigma = c1.number_input("σ (fake values per bucket)", 1, 10, 2, key=f"{NS}_sigma")
    seed = c2.number_input("seed", 0, 2**31 - 1, 1, key=f"{NS}_seed")
    if not st.button("Run the attack", key=f"{NS}_run", type="primary"):
        st.caption("Press the button: two bucketizations of the loaded table (θ = 8), fakes drawn at random and "
                   "with the defence.")
        return
    try:
        with st.spinner("Bucketizing twice and attacking…"):
            res = _run(data, data.key, int(sigma), int(seed))
    except WorkbenchError as exc:
        st.warning(md(exc))
        return
    rows = [{"fakes": {"random": "random (seed 003 §6)", "negassoc": "defence (seed 003 §6.2)"}[k],
             "records with a fake struck": v["records_with_a_fake_struck"], "share": v["share_struck"],
             "adversary's mean certainty after corruption": v["mean_certainty"],
             "certainty without the strike": v["certainty_without_strike"], "negative pairs learnt": v["pairs_learnt"]}
            for k, v in res.items()]
    st.table(pd.DataFrame(rows).set_index("fakes"))
    st.caption("Certainty: the adversary's probability that the one value left after the corruption attack and "
               "the strike is the target's real value, averaged over every record.")
