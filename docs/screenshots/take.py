"""Take the screenshots of the nine pages: ``streamlit run app.py`` driven by Debian's chromium.

Usage (from the checkout; playwright comes with requirements-dev.txt, the
browser is Debian's ``chromium`` package, nothing is downloaded; the sidebar's
icons need an emoji font, Debian's ``fonts-noto-color-emoji``)::

    .venv/bin/python docs/screenshots/take.py               # every page, into docs/screenshots/
    .venv/bin/python docs/screenshots/take.py trade-offs    # only some

One shot per page file in ``pages/``, named after it without its number
(``pages/5_Trade-offs.py`` -> ``trade-offs.png``), 1,400 px wide.  Each shot is
``name: (path?query, button to click first or None, height)``.  The server
is started on a free loopback port and stopped by its PID.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WIDTH = 1400

_SPLU = "data=adult&sa=occupation&mech=splu&gamma=5&seed=1"
_PINS = urllib.parse.quote(json.dumps([
    {"name": "SPLU γ=5", "mechanism": "splu", "params": {"gamma": "5"}, "seed": 1},
    {"name": "SPLU γ=7", "mechanism": "splu", "params": {"gamma": "7"}, "seed": 1},
], ensure_ascii=False))

SHOTS = {
    "home": ("", None, 1500),
    "sanitize": (f"Sanitize?{_SPLU}", None, 2000),
    "bounds": ("Bounds?data=adult&sa=occupation&bound=splu-utility&bound.gamma=10&bound.eps=0.1", None, 1500),
    "query_error": (f"Query_error?{_SPLU}", None, 2200),
    "attacks": ("Attacks?data=adult&sa=occupation", None, 1800),
    "trade-offs": ("Trade-offs?data=adult&sa=occupation", "Measure every setting", 2200),
    "guided_tour": ("Guided_tour?step=sdr", None, 1400),
    "compare": (f"Compare?data=adult&sa=occupation&mech=splu&gamma=7&seed=1&pins={_PINS}", None, 1800),
    "papers": ("Papers", "Run", 1800),
}


def page_shot_name(page_file: str | Path) -> str:
    """``pages/5_Trade-offs.py`` -> ``trade-offs``: the screenshot a page file is shown by."""
    return Path(page_file).stem.split("_", 1)[1].lower()


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise TimeoutError(f"{what} within {timeout:.0f} s")


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def _idle(page) -> bool:
    """Streamlit has finished its run and drawn it: no status widget, the app root not ``running``, no
    skeleton left (an element whose code the browser is still loading) and every chart drawn."""
    return page.evaluate("""() => {
        const app = document.querySelector('[data-testid="stApp"]');
        const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]');
        const drawn = document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg');
        return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
            && !document.querySelector('[data-testid="stStatusWidget"]')
            && !document.querySelector('[data-testid="stSkeleton"]')
            && drawn.length >= charts.length;
    }""")


def _settled(page, timeout: float = 300) -> None:
    """Idle for two seconds on end (a run may start right after another one ends: the pages-folder switch,
    a fragment bringing the nearest setting)."""
    def steady() -> bool:
        for _ in range(4):
            if not _idle(page):
                return False
            page.wait_for_timeout(500)
        return True
    _wait(steady, timeout, "the page did not finish running")


def _shrink(path: Path) -> None:
    """128-colour palette PNG: a third of the size, no visible loss on these flat pages."""
    from PIL import Image

    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in SHOTS]
    if unknown:
        print(f"no such shot: {', '.join(unknown)} (one of {', '.join(SHOTS)})", file=sys.stderr)
        return 2
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    port = _port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(lambda: proc.poll() is not None or _healthy(port), 120, "streamlit did not answer")
        if proc.poll() is not None:
            print(f"streamlit exited with status {proc.returncode}", file=sys.stderr)
            return 1
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for name in names or list(SHOTS):
                path, button, height = SHOTS[name]
                page = browser.new_page(viewport={"width": WIDTH, "height": height})
                page.set_default_timeout(300_000)
                page.goto(f"http://127.0.0.1:{port}/{path}")
                page.wait_for_selector('[data-testid="stApp"]')
                _settled(page)
                if button:
                    page.get_by_role("button", name=button).click()
                    _settled(page)
                page.mouse.move(0, height - 1)  # no hover tooltip in the picture
                page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
                _shrink(OUT / f"{name}.png")
                print(f"{name}.png")
                page.close()
            browser.close()
    finally:
        proc.terminate()  # this PID only
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
