"""Sanitize's numeric widgets carry the setting's value as their own default (issue 23, open item 4).

A widget drawn from the session state alone is sent with its *minimum* as its
default (γ = 2, ε = 0.01), the value the browser shows until the state's value
is applied, and again whenever the browser draws the widget without its state:
the steward saw the minimum for a moment on first load.  Drawn with
``value=``, the default the browser gets is the value the release uses.
"""

from __future__ import annotations

import pytest

from conftest import app, no_exception

SANITIZE = "pages/1_Sanitize.py"


def _defaults(at) -> dict[str, object]:
    """Each numeric widget's default as sent to the browser, as the value it stands for."""
    out = {}
    for s in at.slider:
        out[s.key] = s.proto.default[0]
    for s in at.select_slider:
        out[s.key] = float(s.options[int(s.proto.default[0])])
    for s in at.number_input:
        out[s.key] = s.proto.default
    return out


@pytest.mark.slow  # a release of Adult per case
@pytest.mark.parametrize("query, want", [
    ({"mech": "splu", "gamma": "7", "eps": "0.3", "alpha": "4"},
     {"w_m_splu_gamma": 7, "w_m_splu_eps": 0.3, "w_m_splu_alpha": 4}),
    ({"mech": "mondrian", "beta": "0.5", "k": "20"}, {"w_m_mondrian_beta": 0.5, "w_m_mondrian_k": 20}),
])
def test_every_numeric_widget_is_sent_with_the_settings_value_as_its_default(query, want):
    at = app(SANITIZE, {"data": "adult", "sa": "occupation", "seed": "1", **query})
    no_exception(at)
    defaults = _defaults(at)
    for key, value in want.items():
        assert key in defaults, sorted(defaults)
        assert defaults[key] == pytest.approx(value), (key, defaults[key])
    # every parameter widget (pages/ui/params.py), not only those the link set: its default is the value it shows
    for s in (*at.slider, *at.number_input, *at.select_slider):
        if s.key.startswith("w_m_"):
            assert defaults[s.key] == pytest.approx(float(s.value)), s.key
