"""Attack: the possible worlds of one person in an Ambiguity or PriView release (seed 004 section 5).

The adversary knows a person's QI values (from a voter list, say) and the
published AT and ST tables.  Every group whose tables hold all those values
covers the person (Lemma 1).  Joining a group's tables gives J candidate
rows; the worlds are the ways to choose |G| of them (possible worlds), and
those containing the person are the interesting worlds: presence is their
ratio (Theorem 1), association the share of the sensitive value in the
group (Theorem 2).  For PriView the exact values computed from the tables
are shown beside Theorem 6's.

Choice (documented): the release is built from the loaded table with the
parameters set on the Sanitize page (cached, so Adult takes a fraction of a
second and census:500000 a few seconds once).  On the ``toy-ambiguity``
sample the paper's own groups (Fig. 2 and Fig. 9, split Zipcode) are used
by default, so the paper's numbers (Alan 1/3, Alice 4/9 and 1/2) appear.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import WorkbenchError
from core.mechanisms import get
from core.mechanisms.ambiguity import possible_worlds, release_from_groups
from core.table import Dataset
from pages.ui import cached, state
from pages.ui.fmt import md

TITLE = "Possible worlds of one person (seed 004)"
ORDER = 40
NS = "atk_worlds"
PAPER_GROUPS = [0, 0, 0, 0, 1, 1, 1, 1]


@cached.memo("releases")
def _paper_release(_data: Dataset, data_key: str, mechanism: str):
    params = {"beta": 0.25, "alpha": 0.25, **({"split": "zipcode"} if mechanism == "priview" else {})}
    return release_from_groups(_data, mechanism, PAPER_GROUPS, params)


def _worlds_text(log10: float) -> str:
    if log10 == float("-inf"):
        return "0"
    if log10 < 15:
        return f"{round(10 ** log10):,}"
    return f"≈ 10^{log10:.1f}"


def render(data: Dataset) -> None:
    mech_name = st.radio("Release", ["ambiguity", "priview"], horizontal=True, key=f"{NS}_mech",
                         format_func=lambda n: get(n).title)
    toy = data.name == "toy-ambiguity" and data.qi == ("age", "gender", "zipcode")
    use_paper = toy and st.toggle("Use the paper's groups (Fig. 2 / Fig. 9)", value=True, key=f"{NS}_paper")
    try:
        if use_paper:
            release = _paper_release(data, data.key, mech_name)
        else:
            mech = get(mech_name)
            values = mech.resolve(state.mech_params(mech_name))
            mech.check(data, values)
            with st.spinner("Building the release…"):
                release = cached.release(data, data.key, mech_name, cached.items(values), 1)
    except WorkbenchError as exc:
        st.warning(f"No {mech_name} release of this table with the parameters set on the Sanitize page: {md(exc)}")
        return
    st.caption(f"{'The paper’s groups' if use_paper else 'Greedy release (seed 1)'}: "
               f"{release.privacy['groups']:,} groups, α = {release.params['alpha']:g}, "
               f"β = {release.params['beta']:g}.")

    row = st.number_input("Person (record number in the loaded table)", min_value=1, max_value=data.n, value=1,
                          step=1, key=f"{NS}_row") - 1
    codes = {c: int(data.qi_codes[i][row]) for i, c in enumerate(data.qi)}
    person = {c: data.qi_labels[i][codes[c]] for i, c in enumerate(data.qi)}
    st.markdown("The adversary knows: " + ", ".join(f"{md(c)} = **{md(v)}**" for c, v in person.items())
                + f" (true {md(data.sa)}: {md(data.sa_labels[data.sa_codes[row]])}).")
    groups = possible_worlds(release, codes)
    if not groups:
        st.info("No group covers these QI values: the person's combination cannot be formed from the published "
                "tables, so the adversary concludes the person is not in the data (or was not published).")
        return
    rows = []
    for g in groups:
        r = {"group": g["gid"], "|G|": g["size"], "join size J": g["join"],
             "possible worlds C(J, |G|)": _worlds_text(g["log10_worlds"]),
             "interesting worlds C(J−1, |G|−1)": _worlds_text(g["log10_interesting"]),
             "presence |G|/J": g["presence"]}
        if mech_name == "priview":
            r["presence (exact)"] = g["presence_exact"]
            r["max association (Thm 6)"] = max(g["association"].values())
            r["max association (exact)"] = max(g["association_exact"].values())
        else:
            r["max association c/|G|"] = max(g["association"].values())
        rows.append(r)
    st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"{NS}_groups")
    st.caption("One row per group that covers the person (Lemma 1). Presence = interesting worlds / possible "
               "worlds = |G|/J (Theorem 1; Theorem 6 for PriView, J = |G_AT| × |G_ST|). A person covered by "
               "several groups could be in any of them.")
    first = groups[0]
    key = "association_exact" if mech_name == "priview" else "association"
    assoc = pd.DataFrame({"sensitive value": list(first[key]), "Pr((t, s) ∈ T | t ∈ T)": list(first[key].values())})
    if mech_name == "priview":
        assoc["Theorem 6 c/|G|"] = [first["association"].get(v, 0.0) for v in assoc["sensitive value"]]
    st.markdown(f"**Association in group {first['gid']}**")
    st.dataframe(assoc, hide_index=True, key=f"{NS}_assoc")
    if mech_name == "priview":
        st.caption(f"Exact: among the {first['c_a']} ST record(s) of group {first['gid']} carrying the person's "
                   f"'{md(release.published['split'])}' value; Theorem 6 divides by all |G| = {first['size']}.")
