"""Which mechanisms each mechanism's paper compares it with, and at which parameters.

The Query error page compares the chosen mechanism with these baselines by
default, each at the setting its paper pairs with the chosen one (e.g.
Anatomy at l = ceil(1/rho2) beside SDR, at l = gamma beside SPLU), and
says which rule set each.  ``match(values, data)`` maps the chosen
mechanism's resolved parameters (and the table) to the baseline's raw
parameters.

References
----------
seed 000 §6.2, seed 001 §7, seed 002 §6, seed 003 §7, seed 004 §9.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

from . import mechanisms
from .table import Dataset


class Baseline(NamedTuple):
    """A mechanism the papers compare the chosen one against, and how its parameters follow the chosen one's."""

    name: str
    match: Callable[[dict[str, Any], Dataset], dict[str, Any]]  # chosen's resolved values -> baseline's values
    rule: str  # the rule as the paper states it, for the settings caption ("ℓ = ⌈1/ρ₂⌉, seed 002 §6")


def _same(*keys: str):
    return lambda v, d: {k: v[k] for k in keys}


def _p_of(mech: str):
    """Retention p the chosen UP-family mechanism actually uses (derived from (ρ₁, ρ₂) when unset)."""
    return lambda v, d: {"p": float(mechanisms.get(mech).derived(d, v)["p"])}


def _anatomy_for_bucketization(v: dict, d: Dataset) -> dict:
    derived = mechanisms.get("bucketization").derived(d, v)
    return {"l": int(max(2, min(derived["l_equivalent"], derived["anatomy_max_l"])))}


#: Baselines per chosen mechanism, as the papers evaluate them (seed 000 §6.2: Anatomy at ℓ = γ, DBR, Laplace
#: at ε = ln 3; seed 002 §6: UP at the same (ρ₁, ρ₂), Anatomy at ℓ = L = ⌈1/ρ₂⌉; seed 001 §7: UP at the same p;
#: seed 003 §7: Anatomy at the ℓ of Remark 1; seed 004 §9: Ambiguity, PriView and Mondrian at the same β).
BASELINES: dict[str, tuple[Baseline, ...]] = {
    "splu": (Baseline("anatomy", lambda v, d: {"l": int(v["gamma"])}, "ℓ = γ (seed 000 §6.2.3.2)"),
             Baseline("dbr", lambda v, d: {}, "no parameter (seed 000 §6.2)"),
             Baseline("laplace", lambda v, d: {"epsilon": math.log(3)}, "ε = ln 3 (seed 000 §6.2)")),
    "sdr": (Baseline("uniform", lambda v, d: {"p": None, "rho1": v["rho1"], "rho2": v["rho2"]},
                     "the same (ρ₁, ρ₂) (seed 002 §6)"),
            Baseline("anatomy", lambda v, d: {"l": max(2, math.ceil(1 / v["rho2"] - 1e-9))},
                     "ℓ = ⌈1/ρ₂⌉ (seed 002 §6.3)")),
    "reconstruction": (Baseline("uniform", _p_of("reconstruction"), "the same retention p (seed 001 §7)"),),
    "uniform": (Baseline("sdr", _same("rho1", "rho2"), "the same (ρ₁, ρ₂) (seed 002 §6)"),
                Baseline("reconstruction", _p_of("uniform"), "the same retention p (seed 001 §7)")),
    "bucketization": (Baseline("anatomy", _anatomy_for_bucketization,
                               "ℓ = ⌈1/min f′ᵢ⌉ (seed 003 Remark 1), at most the largest feasible ℓ"),),
    "anatomy": (Baseline("splu", lambda v, d: {"gamma": int(v["l"])}, "γ = ℓ (seed 000 §6.2.3.2)"),
                Baseline("sdr", lambda v, d: {"rho2": 1 / v["l"]}, "ρ₂ = 1/ℓ (seed 002 §6.3)"),
                Baseline("bucketization", lambda v, d: {}, "its own parameters (seed 003 §7)")),
    "ambiguity": (Baseline("priview", _same("alpha", "beta"), "the same (α, β) (seed 004 §9)"),
                  Baseline("mondrian", _same("beta"), "the same β, ℓ = ⌈1/β⌉ (seed 004 §9)")),
    "priview": (Baseline("ambiguity", _same("alpha", "beta"), "the same (α, β) (seed 004 §9)"),
                Baseline("mondrian", _same("beta"), "the same β, ℓ = ⌈1/β⌉ (seed 004 §9)")),
    "mondrian": (Baseline("ambiguity", _same("beta"), "the same β (seed 004 §9)"),
                 Baseline("priview", _same("beta"), "the same β (seed 004 §9)")),
    "dbr": (Baseline("splu", lambda v, d: {}, "its own parameters (seed 000 §6.2)"),
            Baseline("anatomy", lambda v, d: {}, "its own parameters (seed 000 §6.2)"),
            Baseline("laplace", lambda v, d: {}, "its own parameters (seed 000 §6.2)")),
    "laplace": (Baseline("splu", lambda v, d: {}, "its own parameters (seed 000 §6.2)"),
                Baseline("anatomy", lambda v, d: {}, "its own parameters (seed 000 §6.2)"),
                Baseline("dbr", lambda v, d: {}, "no parameter (seed 000 §6.2)")),
}


def baselines(chosen: str) -> tuple[Baseline, ...]:
    """The registered baselines of ``chosen``, in the order its papers list them."""
    return tuple(b for b in BASELINES.get(chosen, ()) if b.name in mechanisms.MECHANISMS and b.name != chosen)


def matched(chosen: str, chosen_values: dict[str, Any], name: str, data: Dataset) -> tuple[dict[str, Any], str] | None:
    """The raw parameters ``name`` runs at beside ``chosen``, and the rule that set them; None if the papers pair none.

    ``chosen_values`` are the chosen mechanism's resolved parameters.  This is
    the one place the Query error page and the report take a baseline's
    setting from, so both compare like with like the same way.
    """
    base = next((b for b in baselines(chosen) if b.name == name), None)
    if base is None:
        return None
    return dict(base.match(chosen_values, data)), base.rule
