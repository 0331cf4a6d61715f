"""Issue 24, item 7: the fuzz target in CI, a few seconds of hostile command lines and damaged files.

The grammar and the checks are bench/fuzz.py's (the long run: ``.venv/bin/python bench/fuzz.py``); here
hypothesis draws the cases (derandomized, so CI sees the same ones each run) and shrinks a failure.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import fuzz  # noqa: E402

FUZZ = settings(deadline=None, database=None, derandomize=True, print_blob=False,
                suppress_health_check=list(HealthCheck))
#: what the CI cases may add to this process's peak resident memory
GROWTH_MB = 500


def _picker(data):
    return lambda options: data.draw(st.sampled_from(list(options)))


@pytest.fixture(scope="module")
def start_peak():
    fuzz.run_cli(["list"], Path.cwd())  # imports first
    return fuzz.peak()


@pytest.mark.slow  # about 40 command lines in process (a few seconds)
@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_command_lines_hold_their_rules(data, start_peak):
    argv = fuzz.cli_case(_picker(data))
    assert fuzz.check_cli(argv) == [], argv
    assert fuzz.peak() - start_peak < GROWTH_MB


KNOWN = [
    ["sanitize", "cr.csv", "--sensitive", "disease", "--mechanism", "uniform", "--out", "o.csv"],
    ["sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--out", "o.csv", "--encoding", "rot13"],
    ["sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--out", "o.csv",
     "--param", "p=" + "9" * 400 + "/1"],
    ["sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--out", ""],
    ["sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--out", "in.csv"],
    ["sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--out", "o.csv", "--manifest", "o.csv"],
    ["sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--out", "mine"],
    ["sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--out", "o.csv", "--manifest", "mine"],
    ["inspect", "/dev/zero"],
    ["inspect", "in.csv", "--delimiter", "\n"],
    ["inspect", "in.csv", "--encoding", "idna"],
    # found by the long run of stop 31 (seed 31): utf-16 without a byte-order mark, refused whole by the codec
    ["sanitize", "bin.dat", "--sensitive", "disease", "--mechanism", "bucketization", "--seed", "7", "--encoding",
     "utf-16", "--header", "--out", "o.txt", "--manifest", "o.csv", "--require-guarantee", "--json"],
]


@pytest.mark.parametrize("argv", KNOWN, ids=lambda a: " ".join(a)[-60:])
def test_the_cases_found_by_hand_hold_the_same_rules(argv):
    assert fuzz.check_cli(argv) == [], argv


@pytest.mark.slow  # about 150 damaged files (a few seconds)
@settings(FUZZ, max_examples=150)
@given(data=st.data())
def test_damaged_files_are_read_or_refused_in_one_sentence(data, start_peak):
    name, content = fuzz.reader_case(_picker(data))
    assert fuzz.check_reader(name, content) == [], (name, content[:200])
    assert fuzz.peak() - start_peak < GROWTH_MB


@pytest.mark.parametrize("name, content", [
    ("t16.csv", "age,sex\n30,F\n".encode("utf-16")[:-1]),  # a truncated UTF-16 file
    ("x.csv", b"age\x89sex\t"),  # a header and no rows, in a string column
])
def test_what_the_first_long_run_found_is_refused_in_one_sentence(name, content):
    assert fuzz.check_reader(name, content) == []


def _inflate_error_zip() -> bytes:
    """The fuzz's session zip with a byte of a deflated member flipped where zlib (not zipfile) refuses it."""
    import io
    import zipfile
    import zlib

    good = fuzz._sessions()["session.zip"]
    for at in range(40, len(good)):
        data = bytearray(good)
        data[at] ^= 0xFF
        try:
            with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
                for name in zf.namelist():
                    zf.read(name)
        except zlib.error:
            return bytes(data)
        except Exception:  # noqa: BLE001 - another damage than the one this test needs
            continue
    raise AssertionError("no flipped byte gives a zlib error")


def test_a_session_zip_whose_deflated_bytes_are_damaged_is_refused_in_one_sentence():
    """Found by the long run of stop 31 (seed 31): zlib's own error ("invalid distance too far back") escaped."""
    assert fuzz.check_reader("session.zip", _inflate_error_zip()) == []


def test_the_checks_catch_what_they_look_for(tmp_path, monkeypatch):
    """A contrary case per rule: the checks are not vacuous."""
    import core.cli as cli

    def boom(args):
        raise ZeroDivisionError("x")

    monkeypatch.setitem(cli.COMMANDS, "list", boom)
    assert any(p.startswith("exit 70") or p.startswith("exit 3") for p in fuzz.check_cli(["list"]))

    def two_lines(args):
        print("a\nb", file=sys.stderr)
        raise cli._UsageError("x")

    monkeypatch.setitem(cli.COMMANDS, "list", two_lines)
    assert any("2 lines on stderr" in p or "3 lines on stderr" in p for p in fuzz.check_cli(["list"]))

    def destroys(args):
        Path("in.csv").write_text("gone")
        Path(".wb-0123.tmp").write_text("left")
        return {"_text": "ok"}

    monkeypatch.setitem(cli.COMMANDS, "list", destroys)
    found = fuzz.check_cli(["list"])
    assert any("the user's files changed: ['in.csv']" in p for p in found)
    assert any("temporaries left" in p for p in found)
    import core.data.read as R

    monkeypatch.setattr(R, "read", lambda data, name: (_ for _ in ()).throw(IndexError("x")))
    assert fuzz.check_reader("a.csv", b"a") == ["IndexError: x"]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0
