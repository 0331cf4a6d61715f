"""One palette for pages, figures and the report: a colour, its name and a marker shape per mechanism.

A caption that names a colour ("blue: plain UP") takes the word from
:func:`colour_name`, so the words and the drawn colours cannot drift apart
(issue 23 section 4 found "orange: RP" under an RP drawn sky blue).

Colour is never the only cue (WCAG 2.2, 1.4.1 "Use of Color"):

* every mechanism also has its own marker shape (:data:`SYMBOLS`), and a
  point whose release does not meet its mechanism's guarantee is drawn
  hollow *and* crossed (:data:`FAILS_SYMBOL` over the mechanism's shape),
  with its own legend entry;
* bars of different series in one chart differ by fill pattern
  (:func:`pattern`), bars above a bound carry :data:`BREAKS_PATTERN`.

Colours: six of Okabe and Ito (2008, "Color Universal Design"), safe for
protanopia, deuteranopia and tritanopia, and for the five mechanisms beyond
them Paul Tol's colour-blind-safe indigo, sand, wine and olive and a brown
from ColorBrewer's BrBG.  The five were chosen (from Tol's muted and bright
sets, black, greys and that brown) to keep the smallest difference between
any two of the eleven colours largest under simulated protanopia,
deuteranopia and tritanopia (Machado et al. 2009, full severity): CIE76
ΔE 13.5, where the earlier dark yellow of PriView and grey of DBR left
SPLU's orange and PriView 2.4 apart under protanopia.  Eleven colours cannot
all stay far apart, which is why each mechanism has a shape too; the pairs
drawn with colour alone (UP and RP in the Attacks histogram, meets and
breaks in the bound histograms, the original against a release) are
checked to stay at least 20 apart (tests/test_palette.py).

No streamlit and no plotly here: plain strings, importable by the CLI.
"""

from __future__ import annotations

#: colour -> the plain word a caption uses for it
COLOUR_NAMES = {
    "#0072B2": "blue",
    "#56B4E9": "sky blue",
    "#D55E00": "vermilion (red-orange)",
    "#E69F00": "orange",
    "#CC79A7": "pink",
    "#009E73": "green",
    "#882255": "wine red",
    "#C4A000": "dark yellow",
    "#DDCC77": "sand",
    "#999933": "olive",
    "#999999": "grey",
    "#332288": "indigo",
    "#8C510A": "brown",
    "#000000": "black",
    "#333333": "dark grey",
}

#: qualitative palette for series that are not mechanisms (bands, curves), in assignment order
PALETTE = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#000000",
    "#999999", "#C4A000",
)
#: colour of the truth (the original table, the exact value, the Pareto front)
TRUTH = "#333333"
#: bars that meet a bound and bars that break it (the latter also hatched: :data:`BREAKS_PATTERN`)
MEETS, BREAKS = "#0072B2", "#D55E00"
BREAKS_PATTERN = "/"

#: one fixed colour per mechanism (registry name), in every figure, experiment and the report.
#: Related mechanisms get related hues only where they are told apart by name and shape anyway (UP blue, RP sky blue).
COLOURS = {
    "uniform": "#0072B2",
    "reconstruction": "#56B4E9",
    "sdr": "#D55E00",
    "splu": "#E69F00",
    "bucketization": "#CC79A7",
    "anatomy": "#009E73",
    "ambiguity": "#882255",
    "priview": "#DDCC77",
    "dbr": "#999933",
    "laplace": "#332288",
    "mondrian": "#8C510A",
}
#: one plotly marker shape per mechanism, so colour is not the only cue (the star marks a chosen setting)
SYMBOLS = {
    "uniform": "circle", "reconstruction": "bowtie", "sdr": "square", "splu": "diamond",
    "bucketization": "triangle-up", "anatomy": "triangle-down", "ambiguity": "pentagon", "priview": "hexagon",
    "dbr": "cross", "laplace": "x", "mondrian": "hourglass",
}
#: drawn over a point whose release does not meet its own guarantee (its mechanism's shape is also hollow)
FAILS_SYMBOL = "x-thin-open"
#: bar fill patterns (plotly ``marker.pattern.shape``) for the series of one bar chart, in order
PATTERNS = ("", "/", ".", "x", "\\", "-", "|", "+")


def colour(key: str) -> str | None:
    """The fixed colour of a mechanism given its registry name or its title (None if neither)."""
    name = _name(key)
    return COLOURS.get(name) if name else None


def symbol(key: str) -> str:
    """The marker shape of a mechanism given its registry name or title (a circle for anything else)."""
    return SYMBOLS.get(_name(key) or "", "circle")


def colour_name(key: str) -> str:
    """The caption word for a mechanism (name or title) or a colour (``"#56B4E9"``): ``"sky blue"``.

    >>> colour_name("reconstruction"), colour_name("#D55E00")
    ('sky blue', 'vermilion (red-orange)')
    """
    hex_ = colour(key) or key
    try:
        return COLOUR_NAMES[hex_.upper() if hex_.startswith("#") else hex_]
    except KeyError:
        raise KeyError(f"{key!r} is neither a mechanism nor a colour of the palette") from None


def pattern(i: int) -> str:
    """The fill pattern of the ``i``-th bar series of a chart (the first is plain)."""
    return PATTERNS[i % len(PATTERNS)]


def _name(key: str) -> str | None:
    if key in COLOURS:
        return key
    from .mechanisms import MECHANISMS

    for name, mech in MECHANISMS.items():
        if mech.title == key:
            return name
    return None


__all__ = ["COLOUR_NAMES", "PALETTE", "TRUTH", "MEETS", "BREAKS", "BREAKS_PATTERN", "COLOURS", "SYMBOLS",
           "FAILS_SYMBOL", "PATTERNS", "colour", "symbol", "colour_name", "pattern"]
