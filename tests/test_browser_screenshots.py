"""Every page has a current screenshot: ``docs/screenshots/take.py`` covers every page file, each page has its
PNG at 1,400 px, and the README shows each one.

Cheap on purpose (no browser is started): the pictures are retaken with
``.venv/bin/python docs/screenshots/take.py``; this fails when a page is added without one.
"""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOTS_DIR = ROOT / "docs" / "screenshots"


def _take():
    spec = importlib.util.spec_from_file_location("take", SHOTS_DIR / "take.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_every_page_has_a_screenshot_and_take_covers_it():
    take = _take()
    pages = sorted((ROOT / "pages").glob("[0-9]_*.py"))
    names = [take.page_shot_name(p) for p in pages]
    assert len(names) == 9, names
    assert set(take.SHOTS) == set(names), "take.py's SHOTS must name exactly the page files"
    for name in names:
        png = SHOTS_DIR / f"{name}.png"
        assert png.exists(), f"no screenshot of {name}: .venv/bin/python docs/screenshots/take.py {name}"
        width, height = _png_size(png)
        assert width == take.WIDTH == 1400 and height == take.SHOTS[name][2], (name, width, height)
    # no picture of a page that no longer exists
    assert {p.stem for p in SHOTS_DIR.glob("*.png")} == set(names)


def test_the_readme_shows_every_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for png in SHOTS_DIR.glob("*.png"):
        assert f"](docs/screenshots/{png.name})" in text, f"README.md does not show {png.name}"


def test_page_shot_names_follow_the_page_files():
    take = _take()
    assert take.page_shot_name("pages/5_Trade-offs.py") == "trade-offs"
    assert take.page_shot_name("pages/6_Guided_tour.py") == "guided_tour"
    assert take.page_shot_name(Path("pages/0_Home.py")) == "home"
