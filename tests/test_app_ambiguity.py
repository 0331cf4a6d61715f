"""AppTest of the Ambiguity/PriView Sanitize views and of the possible-worlds attack (seed 004)."""

from __future__ import annotations

import pytest

from conftest import OPEN_VIEW, app, charts, frame_with, metrics, no_exception, plain

SANITIZE = "pages/1_Sanitize.py"
ATTACKS = "pages/4_Attacks.py"


@pytest.mark.slow
def test_ambiguity_view_on_adult_explains_unplaced_records():
    at = app(SANITIZE, opened=OPEN_VIEW,
             query={"data": "adult", "mech": "ambiguity", "alpha": "0.1", "beta": "0.1", "seed": "1"})
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    m = metrics(at)
    assert int(m["QI-groups"].replace(",", "")) > 2000
    assert float(m["max presence"]) <= 0.1 and float(m["max association"]) <= 0.1
    text = " ".join(plain(w.value) for w in at.warning)
    assert "records are not published" in text and "0.1429 would place every record" in text
    unplaced = frame_with(at, "unplaced records")
    assert unplaced["unplaced records"].sum() == 45222 - int(m["records placed"].split(" of ")[0].replace(",", ""))
    assert "ambiguity_view_hist" in charts(at)
    # the group browser: moving to another group changes its tables
    before = frame_with(at, "age").copy()
    at.number_input(key="ambiguity_view_gid").set_value(0).run()
    no_exception(at)
    assert metrics(at)["records |G|"] == "10"
    assert not frame_with(at, "age").equals(before) or at.number_input(key="ambiguity_view_gid").value == 0


@pytest.mark.slow
def test_priview_view_places_all_at_one_seventh_and_shows_theorem6_beside_exact():
    at = app(SANITIZE, opened=OPEN_VIEW,
             query={"data": "adult", "mech": "priview", "alpha": "1/7", "beta": "1/7", "seed": "1"})
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert any("Every record is placed" in plain(s.value) for s in at.success)
    md_text = " ".join(plain(x.value) for x in at.markdown)
    assert "Theorem 6 gives presence" in md_text
    losses = frame_with(at, "expected loss")
    assert len(losses) == 7
    assert "priview_view_hist" in charts(at)


def test_toy_views_render():
    at = app(SANITIZE, opened=OPEN_VIEW,
             query={"data": "toy-ambiguity", "mech": "ambiguity", "alpha": "0.5", "beta": "0.25", "seed": "1"})
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert "ambiguity_view_hist" in charts(at)
    # "Published with the data": alpha is the presence bound (a probability), not SPLU's small count in records
    published = frame_with(at, "item").set_index("item")["value"]
    alpha = [label for label in published.index if label.startswith("α")]
    assert alpha and all("small count" not in label for label in alpha)
    assert published[alpha[0]] == "0.5"


def test_groups_at_beta_are_drawn_as_meeting_it():
    # every group of the toy release at beta = 1/4 holds 4 different values once: association exactly 1/4
    at = app(SANITIZE, opened=OPEN_VIEW,
             query={"data": "toy-ambiguity", "mech": "ambiguity", "alpha": "0.5", "beta": "0.25", "seed": "1"})
    no_exception(at)
    fig = charts(at)["ambiguity_view_hist"]
    bars = [t for t in fig["data"] if t.get("xaxis") == "x2"]
    assert bars and all(t["type"] == "bar" for t in bars)
    for t in bars:
        assert max(x + t["width"] / 2 for x in t["x"]) <= 0.25 + 1e-12


def _worlds_tab(at):
    return frame_with(at, "join size J")


@pytest.mark.slow
def test_possible_worlds_attack_on_the_paper_groups():
    at = app(ATTACKS, query={"data": "toy-ambiguity"})
    no_exception(at)
    table = _worlds_tab(at)
    # Alan (record 1) is covered by G1 only: J = 4 x 1 x 3 = 12, C(12, 4) = 495 worlds, C(11, 3) = 165, 1/3
    assert table["join size J"].tolist() == [12]
    assert table["possible worlds C(J, |G|)"].tolist() == ["495"]
    assert table["interesting worlds C(J−1, |G|−1)"].tolist() == ["165"]
    assert table["presence |G|/J"].tolist() == pytest.approx([1 / 3])
    # Alice (record 5): G2, J = 9, presence 4/9, Pr((Alice, leukemia)) = 1/2
    at.number_input(key="atk_worlds_row").set_value(5).run()
    no_exception(at)
    table = _worlds_tab(at)
    assert table["presence |G|/J"].tolist() == pytest.approx([4 / 9])
    assoc = frame_with(at, "sensitive value").set_index("sensitive value")
    assert assoc.loc["leukemia"].iloc[0] == pytest.approx(0.5)
    # PriView (Fig. 9): Alan's zip 11000 is alone in G1's ST -> exact association 1, Theorem 6 says 1/4
    at.radio(key="atk_worlds_mech").set_value("priview").run()
    at.number_input(key="atk_worlds_row").set_value(1).run()
    no_exception(at)
    table = _worlds_tab(at)
    assert table["max association (exact)"].tolist() == pytest.approx([1.0])
    assert table["presence |G|/J"].tolist() == pytest.approx([1 / 4])


@pytest.mark.slow
def test_possible_worlds_attack_on_a_greedy_release():
    at = app(ATTACKS, query={"data": "adult", "mech": "ambiguity", "beta": "1/7"})
    no_exception(at)
    table = _worlds_tab(at)
    assert len(table) >= 1 and (table["presence |G|/J"] <= 0.1 + 1e-12).all()
