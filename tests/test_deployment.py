"""docs/deployment.md as run: its nginx block and its ``streamlit run`` line, on loopback ports of the test's own.

The guide's commands are read from the Markdown (the ``nginx`` fenced block
and the line starting ``streamlit run``), with only the two port numbers
swapped for free ones; nginx (Debian's, ``/usr/sbin/nginx``) runs in the
foreground as one process with its files in a temporary folder.  Both are
stopped by their PID.  The app is opened through the proxy under its path
in chromium (the page's WebSocket goes through nginx), a release is built,
and the app's ``HOME``, ``TMPDIR`` and the checkout are checked unchanged.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from test_browser import _free_port, _wait_healthy, browser, stop  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "deployment.md"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def _block(lang: str) -> str:
    found = re.findall(r"```" + lang + r"\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    assert len(found) >= 1, f"docs/deployment.md has no {lang} block"
    return found[0]


def guide_command() -> list[str]:
    """The guide's ``.venv/bin/python -m streamlit run app.py --server.baseUrlPath ...`` line, from ``streamlit`` on."""
    line = next(l for l in GUIDE.read_text(encoding="utf-8").splitlines()
                if l.startswith(".venv/bin/python -m streamlit run app.py --server.baseUrlPath"))
    return shlex.split(line)[2:]


def test_the_guide_and_the_config_agree_on_path_and_upload_limit():
    args = guide_command()
    base = args[args.index("--server.baseUrlPath") + 1]
    site = _block("nginx")
    assert f"location /{base}/" in site and f"/{base}/;" in site
    port = args[args.index("--server.port") + 1]
    assert f"proxy_pass http://127.0.0.1:{port}/{base}/;" in site
    assert args[args.index("--server.address") + 1] == "127.0.0.1"  # the app itself answers on loopback only
    upload_mb = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["server"]["maxUploadSize"]
    assert f"client_max_body_size {upload_mb}m;" in site
    assert f"maxUploadSize = {upload_mb}" in GUIDE.read_text(encoding="utf-8")
    assert "proxy_set_header Upgrade $http_upgrade;" in site  # without it the page never connects


@contextlib.contextmanager
def _process(args, log: Path, **kwargs):
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, **kwargs)
        try:
            yield proc
        finally:
            stop(proc)  # this PID only


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.browser
@pytest.mark.slow
def test_the_guide_runs_behind_nginx_under_its_path(browser, tmp_path):  # noqa: F811
    if not Path(NGINX).exists():
        pytest.skip("nginx is not installed (apt-get install -y nginx-light)")
    args = guide_command()
    base = args[args.index("--server.baseUrlPath") + 1]
    app_port, proxy_port = _free_port(), _free_port()
    args[args.index("--server.port") + 1] = str(app_port)
    site = _block("nginx").replace("listen 8080;", f"listen 127.0.0.1:{proxy_port};")
    site = site.replace("http://127.0.0.1:8501/", f"http://127.0.0.1:{app_port}/")
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    (prefix / "nginx.conf").write_text(
        f"error_log {prefix}/error.log;\npid {prefix}/nginx.pid;\nevents {{}}\n"
        f"http {{\naccess_log {prefix}/access.log;\n"
        + "".join(f"{k}_temp_path {prefix}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        + site + "}\n", encoding="utf-8")
    home, tmpdir = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmpdir.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmpdir)}
    checkout = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    app_cmd = [sys.executable, "-m", "streamlit", *args[1:], "--browser.gatherUsageStats", "false"]
    with _process(app_cmd, tmp_path / "streamlit.log", cwd=ROOT, env=env) as app, \
            _process([NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off; master_process off;"],
                     tmp_path / "nginx.out"):
        _wait_healthy_at = f"http://127.0.0.1:{proxy_port}/{base}/_stcore/health"
        deadline = time.time() + 90
        while True:  # the health check through the proxy: both are up and the path is right
            try:
                with urllib.request.urlopen(_wait_healthy_at, timeout=2) as r:
                    assert r.read() == b"ok"
                    break
            except OSError:
                assert app.poll() is None, (tmp_path / "streamlit.log").read_text()
                assert time.time() < deadline, (prefix / "error.log").read_text() if (prefix / "error.log").exists() else ""
                time.sleep(0.3)
        with pytest.raises(urllib.error.HTTPError):  # nothing is served outside the path
            urllib.request.urlopen(f"http://127.0.0.1:{proxy_port}/_stcore/health", timeout=5)

        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"http://127.0.0.1:{proxy_port}/{base}/Sanitize?data=adult&mech=splu&gamma=5", timeout=120_000)
            page.get_by_role("button", name="Table as CSV").wait_for(timeout=180_000)  # a release, over the WebSocket
            page.get_by_role("link", name="Home").first.click()
            page.get_by_text("Start here: choose a table").wait_for(timeout=120_000)
            assert page.url.startswith(f"http://127.0.0.1:{proxy_port}/{base}/")
        finally:
            page.close()
    assert _files(tmpdir) == [], "the app wrote temporary files"
    assert _files(home) == [], "the app wrote into its HOME"
    after = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    assert after == checkout, "the app changed files in its checkout"
