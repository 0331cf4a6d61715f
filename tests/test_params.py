"""Declared parameters: one message form, parsing as the papers write numbers."""

import math
import re

import pytest
from hypothesis import given, strategies as st

from core import mechanisms
from core.errors import ParameterError
from core.params import Param, parse_assignments, parse_number, resolve

GAMMA = Param("gamma", "γ", "decoy group size", 5, kind="int", low=2, high=50)


def test_message_has_one_form():
    with pytest.raises(ParameterError) as exc:
        GAMMA.validate(1, "splu")
    assert str(exc.value) == "The 'gamma' parameter of splu must be an integer in [2, 50]. Got 1."


@pytest.mark.parametrize("text, value", [("0.5", 0.5), ("1/13", 1 / 13), ("ln(3)", math.log(3)), ("ln2", math.log(2))])
def test_numbers_as_papers_write_them(text, value):
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["abc", "1/0", "ln(-1)", "inf", "nan", ""])
def test_not_numbers(text):
    assert parse_number(text) is None


def test_integer_parameter_refuses_fractions_and_accepts_integral_floats():
    assert GAMMA.validate(7.0) == 7
    with pytest.raises(ParameterError):
        GAMMA.validate(7.5)
    with pytest.raises(ParameterError):
        GAMMA.validate(True)


def test_open_interval():
    p = Param("p", "p", "retention", 0.5, low=0, high=1, closed="right")
    assert p.validate(1) == 1.0
    with pytest.raises(ParameterError, match=r"in \(0, 1\]"):
        p.validate(0)


def test_resolve_fills_defaults_and_refuses_unknown_keys():
    assert resolve((GAMMA,), {}, "splu") == {"gamma": 5}
    assert resolve((GAMMA,), {"gamma": "9"}, "splu") == {"gamma": 9}
    with pytest.raises(ParameterError, match="has no parameter 'gama'"):
        resolve((GAMMA,), {"gama": 3}, "splu")


def test_assignments():
    assert parse_assignments(["gamma=5", " p = 1/5 "]) == {"gamma": "5", "p": "1/5"}
    with pytest.raises(ParameterError):
        parse_assignments(["gamma"])


ALL_PARAMS = [(m.name, p) for m in mechanisms.MECHANISMS.values() for p in m.params]


@pytest.mark.parametrize("owner, param", ALL_PARAMS, ids=[f"{o}-{p.name}" for o, p in ALL_PARAMS])
def test_every_declared_parameter_refuses_its_invalid_examples(owner, param):
    """Generated from the declarations: every mechanism parameter rejects bad values in one form."""
    assert param.help and param.symbol
    if param.default is not None:
        assert param.validate(param.default, owner) == param.default
    for bad in param.invalid_examples():
        with pytest.raises(ParameterError, match=rf"^The '{param.name}' parameter of {owner} must be"):
            param.validate(bad, owner)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_validate_agrees_with_contains(x):
    p = Param("x", "x", "a number", 0.5, low=0, high=1, closed="left")
    if 0 <= x < 1:
        assert p.validate(x) == x
    else:
        with pytest.raises(ParameterError):
            p.validate(x)


def test_a_typed_value_out_of_range_is_reported_as_typed():
    """A sweep or --param value the user typed is named as typed ("Got 7", not the parsed "Got 7.0")."""
    from core.errors import ParameterError
    from core.mechanisms import MECHANISMS

    p = MECHANISMS["uniform"].param("p")
    for typed in ("7", "1/0.1", "ln(9)"):
        with pytest.raises(ParameterError, match=rf"Got {re.escape(typed)}\.$"):
            p.parse(typed, "uniform")
