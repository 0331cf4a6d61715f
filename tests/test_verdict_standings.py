"""Verdicts that never flatter (issue 23 §2): distinct standings, fixes that meet, a search over all parameters."""

from __future__ import annotations

import pytest

from core import guarantee as G

OUTSIDE = {"values": ["a"], "records": 7, "of": 10, "why": "for values with a share ≤ ρ₁ only"}


def test_each_standing_is_its_own_and_only_a_plain_meet_is_plain():
    cases = {
        G.PLAIN: G.judge("x", "g", {"groups": 40}),
        G.QUALIFIED: G.judge("x", "g", {}, outside=OUTSIDE),
        G.VACUOUS: G.judge("x", "g", {}, vacuous="no open micro group"),
        G.LITTLE: G.judge("x", "g", {}, unpublished={"records": 8802, "of": 8802, "by_value": {}}),
        G.FAILS: G.judge("x", "g", {}, [G.failure("p ≤ 1", 2.0, 1.0, 3, 5, "groups")]),
        G.CANNOT_RUN: G.cannot_run("x", "g", "too few values"),
    }
    for standing, v in cases.items():
        assert v.standing == standing
        assert v.plain == (standing == G.PLAIN)
        assert v.to_dict()["standing"] == standing
    headings = [v.heading for v in cases.values()]
    assert len(set(headings)) == len(headings)
    leads = {s: v.cells()[G.SHORT[v.outcome]].split(":")[0] for s, v in cases.items() if v.meets}
    assert len(set(leads.values())) == len(leads), leads


def test_meeting_on_the_records_it_publishes_when_it_publishes_none_is_not_a_meet_to_show_green():
    """Ambiguity's fix on one table "meets ... on the 0 records it publishes"."""
    v = G.judge("ambiguity", "g", {}, unpublished={"records": 120, "of": 120, "by_value": {"a": 120}})
    assert v.meets and not v.plain and v.standing == G.LITTLE
    assert "publishes little" in v.line() and "0 of 120" in v.little()
    # under half published: little; more than half: qualified only
    assert G.judge("x", "g", {}, unpublished={"records": 61, "of": 120, "by_value": {}}).standing == G.LITTLE
    assert G.judge("x", "g", {}, unpublished={"records": 59, "of": 120, "by_value": {}}).standing == G.QUALIFIED


def test_one_group_publishes_little_and_a_fix_to_one_group_says_so():
    v = G.judge("mondrian", "g", {"groups": 1, "k_achieved": 45222})
    assert v.standing == G.LITTLE and not v.plain and "1 group" in v.detail()
    failed = G.judge("mondrian", "g", {}, [G.failure("association ≤ β", 0.5, 0.1, 3, 5, "groups")],
                     suggestion={"params": {"k": 45222}, "text": "k = 45222", "verified": True, "plain": False,
                                 "little": "it publishes 1 group: every record in one range"})
    assert "1 group" in failed.fix() and "1 group" in failed.suggestion_meets()


@pytest.mark.slow
def test_mondrian_nearest_searches_beta_and_ranks_by_groups():
    """Mondrian at k = 20 on Adult was always offered a k in the thousands (one or two groups) while raising β met
    at k = 20."""
    from core import mechanisms
    from core.table import default_columns, load_dataset, load_table

    sa, qi = default_columns(load_table("adult"))
    data = load_dataset("adult", sa, qi)
    v = mechanisms.verdict(data, "mondrian", {"k": 20}, 1)
    assert v.outcome == G.FAILS
    s = v.suggestion
    assert s and s["verified"] and s["plain"]
    assert s["params"].get("k", 20) == 20 and s["params"]["beta"] > 0.1
    assert s["figures"]["groups"] > 2
    # checked: the suggested setting's own release meets, plainly
    again = mechanisms.verdict(data, "mondrian", {"k": 20, **s["params"]}, 1)
    assert again.plain
