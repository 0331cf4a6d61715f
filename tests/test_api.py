"""The front door (core.api): one request in, the release with its verdict, risk and manifest out.

The CLI, the pages and sessions all ask through it; these tests drive it
directly and through ``python -m core sanitize`` (in this process) and
check that the manifest carries the measured risk with its interval, that
``--max-risk`` refuses with exit status 3 and writes nothing, and that what
cannot be measured is said, never silently left out.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from core import api
from core.session import Setting


def _cli(*argv):
    from core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_a_request_gives_release_verdict_risk_and_manifest():
    outcome = api.sanitize(api.Request(Setting("uniform", {"p": 0.5}, 3), data="census:3000", sensitive="occupation"))
    assert outcome.release.rows_out == 3000 and outcome.verdict is not None
    risk = outcome.risk
    assert risk["measured"] is True
    low, high = risk["interval"]
    assert 0 <= low <= risk["risk"] <= high <= 1
    assert risk["split"]["train"] + risk["split"]["control"] == 3000 and risk["attacks"] >= 10
    assert risk["sentence"].startswith("An attacker who knows a person's") and "occupation" in risk["sentence"]
    assert "beside_verdict" in risk
    manifest = outcome.manifest()
    assert manifest["risk"] == json.loads(json.dumps(risk))
    # the same request, the same figures (no timing in the block)
    again = api.sanitize(api.Request(Setting("uniform", {"p": 0.5}, 3), data="census:3000", sensitive="occupation"))
    assert again.manifest() == manifest


@pytest.mark.slow
def test_the_raw_table_is_riskier_than_heavy_noise():
    """The scale orders releases: UP keeping 95% of values adds more risk than UP keeping 5%."""
    kept = api.sanitize(api.Request(Setting("uniform", {"p": 0.95}, 1), data="adult", sensitive="occupation")).risk
    noisy = api.sanitize(api.Request(Setting("uniform", {"p": 0.05}, 1), data="adult", sensitive="occupation")).risk
    assert kept["interval"][0] > noisy["interval"][1]


@pytest.mark.slow
def test_max_risk_refuses_with_status_3_and_writes_nothing(tmp_path):
    code, out, err = _cli("sanitize", "adult", "--sa", "occupation", "--mechanism", "uniform", "--param", "p=0.95",
                          "--seed", "1", "--max-risk", "0.05", "--out", str(tmp_path / "r.csv"))
    assert code == 3 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--max-risk 0.05" in err and "nothing was written" in err
    assert list(tmp_path.iterdir()) == []
    code, out, err = _cli("sanitize", "adult", "--sa", "occupation", "--mechanism", "uniform", "--param", "p=0.95",
                          "--seed", "1", "--max-risk", "1", "--out", str(tmp_path / "r.csv"))
    assert code == 0, err
    manifest = json.loads((tmp_path / "r.manifest.json").read_text())
    assert manifest["risk"]["measured"] and manifest["risk"]["interval"][1] <= 1
    assert "risk: An attacker who knows" in out


def test_risk_flags_are_checked(tmp_path):
    code, _, err = _cli("sanitize", "adult", "--sa", "occupation", "--mechanism", "uniform", "--no-risk",
                        "--max-risk", "0.1", "--out", str(tmp_path / "r.csv"))
    assert code == 2 and "leave out --no-risk" in err
    code, _, err = _cli("sanitize", "adult", "--sa", "occupation", "--mechanism", "uniform", "--max-risk", "abc",
                        "--out", str(tmp_path / "r.csv"))
    assert code == 2 and "between 0 and 1" in err
    assert list(tmp_path.iterdir()) == []
    code, out, err = _cli("sanitize", "census:2000", "--sa", "occupation", "--mechanism", "uniform", "--no-risk",
                          "--out", str(tmp_path / "r.csv"))
    assert code == 0, err
    manifest = json.loads((tmp_path / "r.manifest.json").read_text())
    assert manifest["risk"] == {"measured": False, "why": "The risk measurement was turned off for this release."}
    assert "risk: not measured: The risk measurement was turned off" in out


def test_a_table_too_large_to_measure_says_so_and_max_risk_refuses(monkeypatch, tmp_path):
    from core import risk

    monkeypatch.setattr(risk, "RISK_ROWS", 1000)
    code, out, err = _cli("sanitize", "census:2000", "--sa", "occupation", "--mechanism", "uniform",
                          "--out", str(tmp_path / "r.csv"))
    assert code == 0, err
    manifest = json.loads((tmp_path / "r.manifest.json").read_text())
    assert manifest["risk"]["measured"] is False and "2,000 records" in manifest["risk"]["why"]
    code, _, err = _cli("sanitize", "census:2000", "--sa", "occupation", "--mechanism", "uniform", "--max-risk", "0.5",
                        "--out", str(tmp_path / "s.csv"))
    assert code == 3 and "could not be measured" in err and not (tmp_path / "s.csv").exists()


def test_a_table_too_small_for_a_control_set_says_why():
    outcome = api.sanitize(api.Request(Setting("splu", {"gamma": 2}, 1), data="toy-splu", sensitive="disease"))
    assert outcome.risk["measured"] is False and outcome.risk["why"].endswith(".")
    assert "control" in outcome.risk["why"] or "80%" in outcome.risk["why"]


def test_a_session_and_its_flags_give_the_same_request_and_manifest(tmp_path):
    from core import session as S
    from core.table import load_table

    table = load_table("census:2000")
    pins = (S.Pin("seven", S.Setting("splu", {"gamma": 7}, 4)),)
    session = S.Session(S.TableRef("sample", "census:2000", table.content_hash, len(table)), "occupation",
                        ("age", "sex"), S.Setting("splu", {"gamma": 7}, 4), {}, pins)
    path = tmp_path / "s.workbench.json"
    path.write_text(S.dumps(session), encoding="utf-8")
    asked = api.session_request(path)
    assert asked.request.setting.key() == S.Setting("splu", {"gamma": 7}, 4).key() and asked.notes == ()
    from_session = api.sanitize(asked.request).manifest()
    from_flags = api.sanitize(api.Request(S.Setting("splu", {"gamma": 7}, 4), data="census:2000",
                                          sensitive="occupation", qi=("age", "sex"))).manifest()
    assert from_session == from_flags
    asked = api.session_request(path, api.Overrides(seed=9))
    assert asked.request.setting.seed == 9 and asked.notes == ("--seed 9 overrides the session's seed 4",)


def test_bad_requests_are_one_sentence_before_any_load():
    from core.errors import ParameterError

    with pytest.raises(ParameterError):
        api.sanitize(api.Request(Setting("uniform", {"p": 7}, 1), data="no-such-file.csv", sensitive="x"))
    with pytest.raises(ParameterError, match="local or dask"):
        api.sanitize(api.Request(Setting("uniform", {}, 1), data="adult", sensitive="occupation", engine="spark"))


def test_evaluate_gives_count_intervals_in_people():
    """Laplace's interval is exact: 95% of estimates within b ln 20 people, b = 1/epsilon (sensitivity 1)."""
    import math

    code, out, err = _cli("evaluate", "census:2000", "--sa", "occupation", "--mechanism", "laplace",
                          "--param", "epsilon=0.5", "--queries", "300", "--seed", "4", "--json")
    assert code == 0, err
    people = json.loads(out)["count_intervals"]
    assert people["measured"] and people["method"].startswith("exact")
    widths = [c["half_width"] for c in people["at"] + people["bands"] if c["half_width"] is not None]
    assert widths and all(w == pytest.approx(math.log(20) / 0.5) for w in widths)
    assert people["sentence"].startswith("a true count of 10 is published as 10 +/- 6;")
    code, out, err = _cli("evaluate", "census:2000", "--sa", "occupation", "--mechanism", "laplace",
                          "--param", "epsilon=0.5", "--queries", "300", "--seed", "4")
    assert "in people: a true count of 10 is published as 10 +/- 6;" in out
