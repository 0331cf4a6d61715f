"""Attack: micro-group reconstruction from epsilon-DP Laplace answers (seed 001 §6.3, Tables 4-5)."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from core.errors import WorkbenchError
from core.experiments.seed001 import (
    TABLE45_EPSILONS, TABLE45_LAMBDAS, output_perturbation, output_perturbation_figure)
from core.table import Dataset
from pages.ui import cached, state
from pages.ui.fmt import md
from pages.ui.charts import chart

TITLE = "Reconstruction from Laplace answers (seed 001 §6.3)"
ORDER = 12
NS = "atk_outpert"

EPSILONS = (0.01, 0.05, 0.1, math.log(2), math.log(3), 1.0)
LAMBDAS = (0.1, 0.2, 0.3, 0.5, 0.7)


@cached.memo("attacks")
def _run(_data: Dataset, data_key: str, epsilons: tuple, lambdas: tuple, groups: int, trials: int, min_size: int,
         seed: int):
    return output_perturbation(_data, epsilons, lambdas, groups, trials, min_size, seed)


def _eps_label(e: float) -> str:
    for k in (2, 3):
        if math.isclose(e, math.log(k)):
            return f"ln {k} ≈ {e:.3f}"
    return f"{e:g}"


def render(data: Dataset) -> None:
    st.markdown(
        "Differential privacy does not stop this attack either. The curator answers two count queries with "
        "Laplace noise of scale 1/ε: X ≈ the number of records in the target's micro group, Y ≈ those among "
        "them with the group's most frequent sensitive value. The ratio Y/X estimates the value's share, and "
        "the noise does not grow with the group, so in a large group the estimate is close. Seed 001 §6.3 "
        "takes the 7 groups where one value dominates most and counts, over 100 noisy answer pairs, how often "
        "the estimate errs by more than λ either way.")
    c1, c2, c3 = st.columns(3)
    with c1:
        shown = state.seed_widget(f"{NS}_eps", list(TABLE45_EPSILONS), lambda v: isinstance(v, list))
        epsilons = st.multiselect("ε (privacy budget per answer)", EPSILONS, key=f"{NS}_eps", default=shown,
                                  format_func=_eps_label,
                                  help="Smaller ε, more noise. The paper's table uses two budgets; our reading of "
                                       "the lost values is 0.1 and 0.05.")
        shown = state.seed_widget(f"{NS}_lam", list(TABLE45_LAMBDAS), lambda v: isinstance(v, list))
        lambdas = st.multiselect("λ (relative error)", LAMBDAS, key=f"{NS}_lam", default=shown,
                                 help="Errors beyond +λ and below −λ are counted; the paper's table uses 0.2 and 0.3.")
    with c2:
        delta = st.slider("δ (smallest acceptable chance of an error beyond λ)", 0.05, 0.95, 0.3, 0.05,
                          key=f"{NS}_delta", help="Higher is safer. Seed 001 Table 3 default: 0.3.")
        min_size = st.number_input("Smallest micro group considered (records)", 1, 100_000, 100, 10,
                                   key=f"{NS}_min",
                                   help="The paper picks its groups among those of at least a given size "
                                        "(the value was lost; the groups shown have 74 to 237 records).")
    with c3:
        groups = st.slider("Micro groups", 1, 20, 7, key=f"{NS}_groups", help="Seed 001 Tables 4-5: 7.")
        trials = st.select_slider("Noisy answer pairs per ε", [100, 1000, 10000], value=100, key=f"{NS}_trials",
                                  help="The paper draws 100; more pairs give the chances more precisely.")
    if not epsilons or not lambdas:
        st.info("Choose at least one ε and one λ.")
        return
    epsilons, lambdas = tuple(sorted(epsilons, reverse=True)), tuple(sorted(lambdas))
    try:
        res = _run(data, data.key, epsilons, lambdas, int(groups), int(trials), int(min_size),
                   int(st.session_state[state.SEED]))
    except WorkbenchError as exc:
        st.warning(md(exc))
        return
    table = res.table
    st.dataframe(table, hide_index=True, key=f"{NS}_table",
                 column_config={"f in g": st.column_config.NumberColumn(format="percent"),
                                "f in T": st.column_config.NumberColumn(format="percent")})
    st.caption(
        f"As in seed 001 Tables 4-5: the {len(table)} micro groups (of the {res.eligible:,} with at least "
        f"{int(min_size):,} records) whose most frequent value has the largest share 'f in g', beside that "
        f"value's share in the whole table 'f in T'. Each count says in how many of {int(trials):,} noisy answer "
        f"pairs the estimate Y/X erred by more than +λ or less than −λ. Counts below δ × {int(trials):,} "
        f"mean the (λ, δ) requirement fails: the estimate is reliably close to a share far above the table's.")
    lam = st.radio("λ shown in the chart", lambdas, key=f"{NS}_chart_lam", horizontal=True, format_func=str)
    chart(output_perturbation_figure(res.long, lam, delta), key=f"{NS}_chart")
    part = res.long[np.isclose(res.long["lambda"], lam)]
    bad = part[(part.share_above < delta) | (part.share_below < delta)]
    by_eps = bad.groupby("epsilon").group.nunique()
    verdict = "; ".join(f"ε = {_eps_label(e)}: {int(by_eps.get(e, 0))} of {len(table)} groups violate"
                        for e in epsilons)
    st.caption(
        f"Bars below the δ line mean an error of more than λ = {lam:g} in that direction is rarer than δ = "
        f"{delta:g}: the group is open to reconstruction from ε-differentially private answers. {verdict}. "
        f"A smaller ε helps, but only by adding noise to every answer, large counts included.")
