"""One palette (core.palette): distinct colours and shapes, safe under colour-vision deficiencies, named right.

The colour-vision simulation is Machado, Oliveira and Fernandes (2009), "A
physiologically-based model for simulation of color vision deficiency",
IEEE TVCG 15(6), Table 1 at severity 1.0, applied to linear sRGB; colour
differences are CIE76 ΔE in CIELAB (D65).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from core import figures, palette
from core.mechanisms import MECHANISMS

#: Machado et al. (2009), severity 1.0
CVD = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def _linear(hex_: str) -> np.ndarray:
    c = np.array([int(hex_[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(rgb: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ np.clip(rgb, 0, 1)
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str, vision: str) -> float:
    m = CVD[vision]
    return float(np.linalg.norm(_lab(m @ _linear(a)) - _lab(m @ _linear(b))))


def test_the_simulation_tells_a_known_confusion_pair_apart_from_a_safe_one():
    # red and green are the classic deuteranope confusion; blue against orange is Okabe-Ito's safe pair
    assert delta_e("#FF0000", "#00A000", "normal") > 80
    assert delta_e("#FF0000", "#00A000", "deuteranopia") < 0.4 * delta_e("#FF0000", "#00A000", "normal")
    assert delta_e("#0072B2", "#E69F00", "deuteranopia") > 50


def test_every_mechanism_has_its_own_colour_shape_and_name():
    assert set(palette.COLOURS) == set(MECHANISMS) == set(palette.SYMBOLS)
    assert len(set(c.upper() for c in palette.COLOURS.values())) == len(MECHANISMS)
    assert len(set(palette.SYMBOLS.values())) == len(MECHANISMS)
    assert palette.TRUTH not in palette.COLOURS.values()
    names = [palette.colour_name(n) for n in MECHANISMS]
    assert len(set(names)) == len(names), names
    for name, mech in MECHANISMS.items():  # the title finds the same colour as the registry name
        assert palette.colour(mech.title) == palette.colour(name)
    assert figures.MECHANISM_COLOURS is palette.COLOURS  # figures draw from the palette, no copy to drift
    with pytest.raises(KeyError):
        palette.colour_name("#123456")


@pytest.mark.parametrize("vision", list(CVD))
def test_no_two_mechanisms_collapse_under_a_colour_vision_deficiency(vision):
    """The smallest ΔE between two mechanism colours stays >= 10 (PriView and SPLU were 2.4 under protanopia)."""
    worst = min((delta_e(a, b, vision), m, n)
                for (m, a), (n, b) in itertools.combinations(palette.COLOURS.items(), 2))
    assert worst[0] >= 10, worst


@pytest.mark.parametrize("vision", list(CVD))
@pytest.mark.parametrize("pair", [("uniform", "reconstruction"), (palette.MEETS, palette.BREAKS),
                                  (palette.TRUTH, palette.PALETTE[1]), (palette.PALETTE[0], palette.PALETTE[1])])
def test_colours_drawn_side_by_side_stay_apart(pair, vision):
    a, b = (palette.colour(k) or k for k in pair)
    assert delta_e(a, b, vision) >= 20


def test_a_point_that_fails_its_guarantee_differs_in_shape_and_legend():
    from core.risk import Point

    def pt(mech, lift, verdict):
        return Point(mech, {"x": lift}, 1, 0.3, lift, 0.1, 1.0, 0.2, 1.0, verdict=verdict,
                     verdict_plain=verdict == "meets")

    fig = figures.risk_utility_map([pt("sdr", 1.2, "fails"), pt("sdr", 1.5, "meets")])
    crossed = [t for t in fig.data if t.marker.symbol == palette.FAILS_SYMBOL]
    assert len(crossed) == 1 and "does not meet" in crossed[0].name
    assert list(crossed[0].x) == [1.2] and list(crossed[0].customdata) == [0]
    sdr = next(t for t in fig.data if t.name == "sdr")
    assert list(sdr.marker.symbol) == ["square-open", "square"]


def test_bars_differ_by_pattern_not_colour_alone():
    fig = figures.band_errors(["small", "large"], {"uniform": [0.5, 0.1], "splu": [0.4, 0.2]})
    assert [t.marker.pattern.shape for t in fig.data] == ["", "/"]
    hist = figures.bound_histograms(np.array([0.05, 0.2]), np.array([0.1, 0.5]), 0.1, 0.1)
    above = [t for t in hist.data if t.name == "groups above the bound"]
    assert above and all(t.marker.pattern.shape == palette.BREAKS_PATTERN and t.marker.color == palette.BREAKS
                         for t in above)


def test_the_attacks_caption_names_the_colours_it_draws():
    """Issue 23: the caption said "orange: RP" under an RP drawn sky blue."""
    from core.experiments.seed001 import estimate_histogram
    from pages.ui.attacks import reconstruction as view

    rng = np.random.default_rng(1)
    fig = estimate_histogram(rng.normal(0.5, 0.05, 500), rng.normal(0.5, 0.1, 500), 0.5, 0.3, "x",
                             steps=(0.01, 0.02))
    drawn = {t.name: (palette.colour_name(t.marker.color), t.marker.pattern.shape or "plain") for t in fig.data}
    assert drawn == {"plain UP": ("blue", "plain"), "RP (Algorithm 1)": ("sky blue", "/")}
    assert view.UP_BARS.lower() == f"{drawn['plain UP'][0]} plain bars"
    assert view.RP_BARS == f"{drawn['RP (Algorithm 1)'][0]} hatched bars"
    with open(view.__file__, encoding="utf-8") as fh:
        source = fh.read()
    assert "orange" not in source.lower() and "Blue:" not in source


@pytest.mark.slow
def test_the_attacks_page_caption_matches_the_drawn_histogram():
    """End to end (AppTest): open the reconstruction attack on Adult, make a group resampled, read the caption."""
    from conftest import app, charts, no_exception

    at = app("pages/4_Attacks.py", {"data": "adult"})
    no_exception(at)
    demo = [b for b in at.button if b.key == "atk_reconstruction_demo"]
    if demo:
        demo[0].click().run()
        no_exception(at)
    fig = charts(at).get("atk_reconstruction_hist")
    assert fig is not None, "the attacker's histogram is not drawn"
    traces = {t["name"]: t["marker"]["color"] for t in fig["data"]}
    caption = next(c.value for c in at.caption if "plain UP" in c.value and "bars" in c.value)
    assert f"{palette.colour_name(traces['plain UP']).capitalize()} plain bars" in caption
    if "RP (Algorithm 1)" in traces:
        assert f"{palette.colour_name(traces['RP (Algorithm 1)'])} hatched bars: RP" in caption
    assert "orange" not in caption
