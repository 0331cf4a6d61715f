"""core.baselines: every declared baseline names a registered mechanism and yields valid parameters."""

from __future__ import annotations

import pytest

from core import mechanisms
from core.baselines import BASELINES, baselines
from core.table import load_dataset


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


@pytest.mark.parametrize("chosen", sorted(BASELINES))
def test_matched_parameters_resolve_and_sanitize(chosen, adult):
    """At the chosen mechanism's defaults on Adult, each baseline's matched setting is valid and eligible."""
    values = mechanisms.get(chosen).resolve({})
    assert baselines(chosen), chosen
    for b in baselines(chosen):
        raw = b.match(values, adult)
        mech = mechanisms.get(b.name)
        resolved = mech.resolve(raw)  # raises on a bad value
        assert mech.eligibility(adult, resolved).ok, (chosen, b.name, raw)
        assert b.rule


def test_papers_pairings():
    adult = None
    assert baselines("splu")[0].match({"gamma": 6}, adult) == {"l": 6}
    assert dict(baselines("sdr")[1].match({"rho1": 1 / 13, "rho2": 1 / 6}, adult)) == {"l": 6}
    assert [b.name for b in baselines("ambiguity")] == ["priview", "mondrian"]
