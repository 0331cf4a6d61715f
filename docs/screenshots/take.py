"""Take the README's screenshots: ``streamlit run app.py`` driven by Debian's chromium.

Usage::

    .venv/bin/python docs/screenshots/take.py               # every page, into docs/screenshots/
    .venv/bin/python docs/screenshots/take.py tradeoffs     # only some

Each shot is ``name: (path?query, button to click first or None, height)``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

SHOTS = {
    "home": ("", None, 1500),
    "sanitize": ("Sanitize?data=adult&sa=occupation&mech=splu&gamma=5&seed=1", None, 2200),
    "bounds": ("Bounds?data=adult&sa=occupation&mech=splu&gamma=5&bound=splu-utility&bound.eps=0.1", None, 1500),
    "query_error": ("Query_error?data=adult&sa=occupation&mech=splu&gamma=5&seed=1", None, 2400),
    "attacks": ("Attacks?data=adult&sa=occupation", None, 1800),
    "tradeoffs": ("Trade-offs?data=adult&sa=occupation", "Measure every setting", 2400),
    "tour": ("Guided_tour?step=sdr", None, 1300),
}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _shrink(path: Path) -> None:
    """128-colour palette PNG: a third of the size, no visible loss on these flat pages."""
    from PIL import Image

    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def main(names: list[str]) -> None:
    from playwright.sync_api import sync_playwright

    port = _port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.3)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for name in names or list(SHOTS):
                path, button, height = SHOTS[name]
                page = browser.new_page(viewport={"width": 1400, "height": height})
                page.goto(f"http://127.0.0.1:{port}/{path}", timeout=120_000)
                page.wait_for_selector('[data-testid="stApp"]', timeout=120_000)
                if button:
                    page.get_by_role("button", name=button).click(timeout=120_000)
                time.sleep(2)
                # wait until streamlit has stopped running the script
                for _ in range(600):
                    if page.locator('[data-testid="stStatusWidget"]').count() == 0:
                        break
                    time.sleep(0.5)
                time.sleep(2)
                page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
                _shrink(OUT / f"{name}.png")
                print(f"{name}.png")
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=15)


if __name__ == "__main__":
    main(sys.argv[1:])
