"""Optional sign-in (issue 28): Streamlit's OpenID Connect support against a local provider on loopback.

The provider is ``oidc-provider-mock`` (a Flask app) served by this test on
127.0.0.1; the app gets an ``[auth]`` section through a secrets file of its
own (``--secrets.files``), never the checkout's ``.streamlit/``.  Nothing
here reaches anything but 127.0.0.1.  Without ``[auth]`` the app runs as
before (the AppTest and the session-file round trip below).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from test_browser import ARGS, CHROMIUM, _free_port, browser, stop, streamlit_server  # noqa: F401  (fixture)

NAME = "Alice Steward"
PINS = ('[{"name":"five","mechanism":"splu","params":{"gamma":"5"},"seed":1},'
        '{"name":"up","mechanism":"uniform","params":{"p":"0.5"},"seed":1}]')


# ------------------------------------------------------------------ no browser
def test_the_decisions_author_round_trips_through_the_session_file():
    from core.session import Pin, Setting, make_decision

    pins = (Pin("five", Setting("splu", {"gamma": 5}, 1)), Pin("up", Setting("uniform", {"p": 0.5}, 1)))
    made = make_decision("five", pins, "small groups", ["Bob"], "2026-11-27", author="  Alice Steward ")
    assert made.author == NAME
    doc = made.to_json(pins)
    assert doc["author"] == NAME
    from core.session import _decision

    assert _decision(doc, pins, "s.json") == made
    plain = make_decision("five", pins)
    assert "author" not in plain.to_json(pins)  # a record made without sign-in is written as before
    assert _decision(plain.to_json(pins), pins, "s.json").author == ""
    from core.session import SessionError

    with pytest.raises(SessionError):
        _decision({**doc, "author": 7}, pins, "s.json")


def test_the_report_names_who_recorded_the_decision():
    from core.report import decision_html

    html = decision_html({"chosen": "five", "author": "<b>Alice</b>", "reviewers": []})
    assert "Recorded by:</b> &lt;b&gt;Alice&lt;/b&gt; (signed in)" in html
    assert "Recorded by" not in decision_html({"chosen": "five", "reviewers": []})


@pytest.mark.slow
def test_without_auth_the_app_runs_as_before():
    from conftest import app, no_exception

    at = app()
    no_exception(at)
    assert not [b for b in at.button if b.label == "Sign in"]
    assert not [b for b in at.button if b.key == "w_sign_out"]
    assert at.title and "Sign in" not in at.title[0].value


# ------------------------------------------------------------------ end to end
@contextlib.contextmanager
def oidc_provider(tmp: Path):
    """``python -m oidc_provider_mock`` on a free 127.0.0.1 port with one predefined user; yields its base URL.

    Its own process (stopped by its PID): in this one, pytest's warnings-as-errors would turn the
    provider's own deprecation warnings into a 500 at its token endpoint.
    """
    import json

    port = _free_port()
    log = open(tmp / "provider.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port),
         "--user-claims", json.dumps({"sub": "alice", "name": NAME, "email": "alice@office.example"})],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 60
        while True:  # until its discovery document answers
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/.well-known/openid-configuration", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("the OpenID provider did not start: " + (tmp / "provider.log").read_text())
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)
        log.close()


@contextlib.contextmanager
def signed_app(tmp: Path, issuer: str):
    """``streamlit run app.py`` with an ``[auth]`` section pointing at ``issuer``; stops this PID only."""
    port = _free_port()
    secrets = tmp / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "a-test-cookie-secret-of-at-least-32-characters"\n'
        'client_id = "workbench"\n'
        'client_secret = "workbench-secret"\n'
        f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n', encoding="utf-8")
    with streamlit_server(args=("--secrets.files", str(secrets)), log=tmp / "streamlit.log", port=port) as url:
        yield url


def _idle(page) -> None:
    page.wait_for_function(
        "() => { const a = document.querySelector('[data-testid=\"stApp\"]'); "
        "return a && a.getAttribute('data-test-script-state') === 'notRunning'; }", timeout=120_000, polling=100)


@pytest.mark.browser
@pytest.mark.slow
def test_sign_in_shows_the_name_signs_the_decision_and_signs_out(browser, tmp_path):  # noqa: F811
    with oidc_provider(tmp_path) as issuer, signed_app(tmp_path, issuer) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        blocked = []  # (what, asked by): everything beyond loopback is refused before it leaves the machine

        def loopback_only(route):
            if route.request.url.startswith("http") and urllib.parse.urlparse(route.request.url).hostname != "127.0.0.1":
                blocked.append((route.request.url, route.request.frame.url))
                return route.abort()
            return route.continue_()

        context.route("**/*", loopback_only)
        page = context.new_page()
        try:
            # signed out: any address shows the sign-in page, no page of the app
            page.goto(f"{url}/Sanitize?data=adult", timeout=120_000)
            sign_in = page.get_by_role("button", name="Sign in")
            sign_in.wait_for(timeout=120_000)
            assert page.locator('[data-testid="stSidebarNav"]').count() == 0
            assert page.get_by_text("Table as CSV").count() == 0

            # sign in at the provider (its form lists the predefined user), back to Home with the name
            sign_in.click()
            page.wait_for_url(re.compile("^" + re.escape(issuer)), timeout=60_000)
            page.get_by_role("button", name="alice").click()
            page.wait_for_url(re.compile("^" + re.escape(url)), timeout=60_000)
            page.get_by_text(f"Signed in as {NAME}").wait_for(timeout=120_000)
            # the name is drawn before the navigation on a loaded machine: wait for it, then count it
            page.locator('[data-testid="stSidebarNav"]').wait_for(timeout=120_000)
            assert page.locator('[data-testid="stSidebarNav"]').count() == 1
            page.get_by_text("Start here: choose a table").wait_for(timeout=120_000)  # Home

            # a decision recorded now carries that name
            page.goto(f"{url}/Compare?data=adult&pins=" + urllib.parse.quote(PINS), timeout=120_000)
            record = page.get_by_role("button", name="Record the decision")
            record.wait_for(timeout=180_000)
            _idle(page)
            record.click()
            page.get_by_text(f"recorded by {NAME} (signed in)").wait_for(timeout=120_000)

            # sign out: the sign-in page again
            page.get_by_role("button", name="Sign out").click()
            page.wait_for_url(re.compile("^" + re.escape(issuer) + "/oauth2/end_session"), timeout=60_000)
            page.get_by_role("button", name="End session").click()  # the provider asks to confirm
            page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
            assert page.get_by_text(f"Signed in as {NAME}").count() == 0
        except Exception:
            page.screenshot(path=str(tmp_path / "failed.png"))
            print("the page says:", page.url, page.inner_text("body")[:1500])
            raise
        finally:
            context.close()
        # the app asks for nothing beyond loopback; the mock provider's pages ask for a CDN stylesheet (refused)
        assert not [u for u, by in blocked if not by.startswith(issuer)], blocked
