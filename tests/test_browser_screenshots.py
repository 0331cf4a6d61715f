"""The README's pictures and walk stay true.

Every page has a current screenshot: ``docs/screenshots/take.py`` covers every page file, each page has
its PNG at 1,400 px, and the README shows each one (cheap on purpose, no browser: the pictures are retaken
with ``.venv/bin/python docs/screenshots/take.py``; this fails when a page is added without one).  And the
README's "Your first ten minutes", followed step by step in chromium, ends with a downloaded report and a
saved session (the server is started on a loopback port and stopped by its PID).
"""

from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path

import pytest

from tests.test_browser import _wait_for, browser, server  # noqa: F401 (fixtures)

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


# -- the README's "Your first ten minutes", step by step, in chromium -------------------------------------

#: the labels the README's walk names, in its order: each must be in the README and on the page
WALK = ("Use this table", "Band numeric QIs", "Pin name", "📌 Pin this setting", "Use γ = 7 (meets its guarantee)",
        "Decision record", "Chosen pin", "Record the decision", "Build the report for the chosen pin",
        "Download the report (HTML)", "5. Save this session", "Open a saved session")


def _settled(page, timeout: float = 180) -> None:
    """Streamlit has finished its run (no status widget, the app root not running)."""
    idle = ("() => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
            "document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') === 'notRunning'")
    assert _wait_for(lambda: page.evaluate(idle) and (page.wait_for_timeout(400) or page.evaluate(idle)), timeout)


def _sidebar(page, name: str) -> None:
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=name).click()
    _settled(page)


def _text(page, text: str, timeout: float = 120) -> bool:
    return bool(_wait_for(lambda: page.get_by_text(text).count() > 0, timeout))


def test_the_readme_walk_labels_are_in_the_readme():
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Your first ten minutes")[1].split("\n## ")[0]
    section = " ".join(section.split())  # a label may be wrapped across lines
    for label in WALK:
        assert label in section, f"the README's walk no longer names '{label}'"


@pytest.mark.browser
@pytest.mark.slow
def test_the_readme_walk_from_home_to_a_downloaded_report(server, browser, tmp_path):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page.set_default_timeout(120_000)
    try:
        page.goto(server)
        page.wait_for_selector('[data-testid="stApp"]')
        _settled(page)
        # 1-3: Home: Adult, its columns, the verdicts
        assert _text(page, "UCI Adult (45,222 people)") and _text(page, "Band numeric QIs")
        assert _text(page, "Which mechanisms can sanitize it")
        assert _text(page, "fails on 1 of 3 small counts")  # SPLU-Gen at γ = 5 runs but fails
        # 4-5: Sanitize, SPLU-Gen, two pins
        _sidebar(page, "Sanitize")
        page.locator('[data-testid="stSelectbox"]').filter(has_text="Mechanism").first.click()
        page.get_by_role("option", name="SPLU-Gen (small-sum privacy, large-sum utility)").click()
        _settled(page)
        assert _text(page, "Its guarantee")
        for name, then in (("SPLU γ=5", "Use γ = 7 (meets its guarantee)"), ("SPLU γ=7", None)):
            page.get_by_role("textbox", name="Pin name").fill(name)
            page.get_by_role("textbox", name="Pin name").press("Enter")
            _settled(page)
            page.get_by_role("button", name="📌 Pin this setting").click()
            _settled(page)
            if then:
                page.get_by_role("button", name=then).click()
                _settled(page)
                assert _text(page, "Meets its guarantee")
        # 6-7: Compare, decide, the report
        _sidebar(page, "Compare")
        assert _text(page, "Side by side") and _text(page, "Decision record")
        page.locator('[data-testid="stSelectbox"]').filter(has_text="Chosen pin").first.click()
        page.keyboard.type("SPLU γ=7")
        page.keyboard.press("Enter")
        _settled(page)
        page.get_by_role("textbox", name="Reviewers (comma separated)").fill("Ann, Bo")
        page.get_by_role("textbox", name="Rationale (why this setting, why not the others)").fill("γ = 7 meets it")
        page.get_by_role("button", name="Record the decision").click()
        assert _text(page, "Decision recorded: 'SPLU γ=7'.")
        page.get_by_role("button", name="Build the report for the chosen pin").click()
        _settled(page)
        with page.expect_download() as info:
            page.get_by_role("button", name="Download the report (HTML)").click()
        report = Path(info.value.path()).read_text(encoding="utf-8")
        assert "SPLU γ=7" in report and "SPLU γ=5" in report and "Ann" in report
        # 8: keep it
        _sidebar(page, "Home")
        assert _text(page, "5. Save this session") and _text(page, "Open a saved session")
        with page.expect_download() as info:
            page.get_by_role("button", name="Save the session (JSON)").click()
        saved = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
        assert [p["name"] for p in saved["pins"]] == ["SPLU γ=5", "SPLU γ=7"]
        assert saved["decision"]["chosen"] == "SPLU γ=7"
    finally:
        page.close()
