"""core.session: session files round-trip, bad files are refused whole, the CLI reads them."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import replace

import pytest

from core import cli
from core import session as S
from core.table import load, load_table, values_hash

TOY = b"age,sex,disease\n30,F,flu\n31,M,cold\n32,F,flu\n33,M,hiv\n34,F,cold\n35,M,flu\n36,F,hiv\n37,M,cold\n"


@pytest.fixture(scope="module")
def toy():
    return load_table(TOY, "toy.csv")


def _session(table, kind="upload", name="toy.csv", decision=True):
    pins = (S.Pin("SPLU five", S.Setting("splu", {"gamma": 2}, 3)),
            S.Pin("UP third", S.Setting("uniform", {"p": None, "rho1": 1 / 13}, 3)))
    history = tuple(S.Setting("splu", {"gamma": g}, 3) for g in (2, 3, 2))
    dec = S.make_decision("SPLU five", pins, "Small counts stay hidden.\nLarge ones useful.", ["Ann", " Bob "],
                          "2026-11-24", {"SPLU five": "meets", "UP third": "runs"}) if decision else None
    return S.Session(S.TableRef(kind, name, table.content_hash, len(table)), "disease", ("age", "sex"),
                     S.Setting("splu", {"gamma": 2}, 3), {"splu": {"gamma": 2}, "uniform": {"rho1": 1 / 13}},
                     pins, history, dec, {"age": {"method": "width", "width": 10}})


def test_json_round_trip_keeps_everything(toy):
    s = _session(toy)
    text = S.dumps(s)
    back, frame = S.read(text.encode(), "s.json")
    assert frame is None
    assert back == s
    assert json.loads(text)["pins"][1]["params"]["rho1"] == "1/13"  # as the paper writes it, not 0.0769...
    assert back.pins[1].setting.params["rho1"] == 1 / 13
    assert json.loads(text)["decision"]["alternatives"] == ["UP third"]
    assert back.decision.reviewers == ("Ann", "Bob")
    assert S.dumps(back) == text  # byte for byte
    assert back.bands == {"age": {"method": "width", "width": 10}}


def test_zip_embeds_the_table_with_the_same_content_hash(toy):
    s = _session(toy)
    data = S.to_bytes(s, toy.frame)
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == [S.JSON_NAME, S.TABLE_NAME]
    back, frame = S.read(data, "s.zip")
    assert back == replace(s, table=replace(s.table, values_hash=values_hash(toy.frame)))
    assert back.table.content_hash == toy.content_hash == hashlib.sha256(TOY).hexdigest()[:16]  # the file's
    table = S.embedded_table(back, frame)
    assert table.content_hash == toy.content_hash
    assert table.frame.equals(toy.frame)
    swapped = toy.frame.assign(disease=toy.frame["disease"].str.upper())
    with pytest.raises(S.SessionError, match="not the one this session was saved on"):
        S.embedded_table(back, swapped)


def test_a_session_saved_before_file_hashes_still_opens(toy, tmp_path):
    """Issue 24 §5: a session names a file's table by its bytes now; one saved before (by the values, or
    for a column-by-column read by the file's name and bytes) still opens with the same file or zip."""
    old = _session(toy)
    old = replace(old, table=replace(old.table, content_hash=values_hash(toy.frame)))
    S.check_table(old, toy)
    back, frame = S.read(S.dumps(old).encode(), "old.json")
    assert S.embedded_table(old, toy.frame).frame.equals(toy.frame)  # an old zip: values named by content_hash
    path = tmp_path / "toy.csv"
    path.write_bytes(TOY)
    columnar = load(path, columnar=True)[0]
    assert columnar.frame is None and columnar.content_hash == toy.content_hash  # one hash, either reader
    legacy = hashlib.sha256(b"toy.csv\x1f" + TOY).hexdigest()[:16]
    S.check_table(replace(old, table=replace(old.table, content_hash=legacy)), columnar)
    with pytest.raises(S.SessionError, match="content hash"):
        S.check_table(replace(old, table=replace(old.table, content_hash="0" * 16)), columnar)


def test_history_keeps_the_last_fifty_and_undo_steps_back():
    h: tuple = ()
    for seed in range(60):
        h = S.record(h, S.Setting("splu", {"gamma": 5}, seed))
        h = S.record(h, S.Setting("splu", {"gamma": 5}, seed))  # the same again is not a new entry
    assert len(h) == S.HISTORY and h[0].seed == 10 and h[-1].seed == 59
    h2, back = S.undo(h)
    assert back.seed == 58 and len(h2) == S.HISTORY - 1
    assert S.undo(h[:1]) == (h[:1], None)


def test_pins_are_named_uniquely_and_at_most_six():
    pins: tuple = ()
    for i in range(S.MAX_PINS):
        pins = S.add_pin(pins, f" pin {i} ", S.Setting("splu", {}, i))
    assert pins[0].name == "pin 0"
    with pytest.raises(S.SessionError, match="At most 6 pins"):
        S.add_pin(pins, "seventh", S.Setting("splu", {}, 9))
    with pytest.raises(S.SessionError, match="exists already"):
        S.add_pin(pins[:2], "pin 1", S.Setting("splu", {}, 9))
    for bad in ("", "   ", "x" * 61, "two\nlines"):
        with pytest.raises(S.SessionError):
            S.check_pin_name(bad)


def _edit(toy, change):
    doc = json.loads(S.dumps(_session(toy)))
    change(doc)
    return json.dumps(doc).encode()


BAD = {
    "not JSON": (lambda d: None, b'{"format": "privacy-utility workbench session", "version": 1,', "not valid JSON"),
    "not a session": (None, b'{"hello": 1}', "not a workbench session file"),
    "binary": (None, b"\xff\xfe\x00garbage", "not UTF-8"),
    "newer": (lambda d: d.update(version=99), None, "newer workbench"),
    "unknown key": (lambda d: d.update(extra=1), None, "unknown entry 'extra'"),
    "mechanism": (lambda d: d["current"].update(mechanism="nope"), None, "mechanism 'nope'"),
    "param range": (lambda d: d["pins"][0]["params"].update(gamma="0"), None, "pin 1"),
    "param name": (lambda d: d["current"]["params"].update(zeta="1"), None, "'zeta', which is not a parameter"),
    "seed": (lambda d: d["history"][1].update(seed=-1), None, "history entry 2's seed"),
    "seed type": (lambda d: d["current"].update(seed="7"), None, "seed must be a whole number"),
    "hash": (lambda d: d["table"].update(content_hash="xyz"), None, "16 hexadecimal digits"),
    "sample": (lambda d: d["table"].update(kind="sample", name="nosuch"), None, "not a bundled sample"),
    "qi": (lambda d: d["columns"].update(qi=["disease"]), None, "also a QI column"),
    "pin twice": (lambda d: d["pins"][1].update(name="SPLU five"), None, "exists already"),
    "decision pin": (lambda d: d["decision"].update(chosen="ghost"), None, "not among its pins"),
    "decision setting": (lambda d: d["decision"]["setting"].update(seed=4), None, "hand-edited"),
    "alternatives": (lambda d: d["decision"].update(alternatives=[]), None, "alternatives are not the other pins"),
    "date": (lambda d: d["decision"].update(date="24/11/2026"), None, "YYYY-MM-DD"),
    "band": (lambda d: d["bands"].update(age={"method": "nope"}), None, "width, quantiles or cuts"),
    "too many pins": (lambda d: d["pins"].extend(dict(d["pins"][0], name=f"p{i}") for i in range(5)), None,
                      "at most 6"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_files_get_one_sentence_and_nothing(toy, case):
    change, raw, words = BAD[case]
    data = raw if raw is not None else _edit(toy, change)
    with pytest.raises(S.SessionError) as err:
        S.read(data, "s.json")
    message = str(err.value)
    assert words in message
    assert "\n" not in message and "Traceback" not in message
    assert "'s.json'" in message or "newer" in message


def test_damaged_zip_and_zip_without_session(toy):
    good = S.to_bytes(_session(toy), toy.frame)
    with pytest.raises(S.SessionError, match="damaged zip"):
        S.read(good[:200], "s.zip")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("table.parquet", b"x")
    with pytest.raises(S.SessionError, match="without a session.json"):
        S.read(buf.getvalue(), "s.zip")


def test_another_table_is_refused(toy):
    s = _session(toy)
    other = load_table(TOY.replace(b"hiv", b"flu"), "toy.csv")
    with pytest.raises(S.SessionError, match="saved on the uploaded file 'toy.csv'"):
        S.check_table(s, other)
    with pytest.raises(S.SessionError, match="content hash"):
        S.embedded_table(s, other.frame)  # a zip whose table was swapped
    S.check_table(s, toy)  # the right one passes


def test_decision_checks():
    pins = (S.Pin("a", S.Setting("splu", {}, 1)),)
    with pytest.raises(S.SessionError, match="Choose one of the pins"):
        S.make_decision("b", pins)
    with pytest.raises(S.SessionError, match="YYYY-MM-DD"):
        S.make_decision("a", pins, date="yesterday")
    assert S.make_decision("a", pins, reviewers=["", " x "]).reviewers == ("x",)


# ------------------------------------------------------------------ CLI
def _run(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_sanitize_from_a_session(tmp_path, capsys, toy):
    csv = tmp_path / "toy.csv"
    csv.write_bytes(TOY)
    s = _session(toy)
    (tmp_path / "s.json").write_text(S.dumps(s), encoding="utf-8")
    # an upload's path is not in the session: DATA is needed
    code, _, err = _run(["sanitize", "--session", str(tmp_path / "s.json"), "--out", str(tmp_path / "r.csv")], capsys)
    assert code == 2 and "give that file's path as DATA" in err and err.count("\n") == 1
    code, out, err = _run(["sanitize", str(csv), "--session", str(tmp_path / "s.json"),
                           "--out", str(tmp_path / "r.csv")], capsys)
    assert code == 0, err
    assert err == ""  # nothing overridden
    man = json.loads((tmp_path / "r.manifest.json").read_text())
    assert man["mechanism"] == "splu" and man["seed"] == 3 and man["params"]["gamma"] == 2
    assert man["input"]["sensitive"] == "disease" and man["input"]["qi"] == ["age", "sex"]
    assert man["input"]["bands"] == {"age": {"method": "width", "width": 10}}  # the session's banding applied
    assert man["decision"]["chosen"] == "SPLU five" and man["decision"]["alternatives"] == ["UP third"]
    # the same release from flags: the manifest without the decision, otherwise identical
    code, _, _ = _run(["sanitize", str(csv), "--sensitive", "disease", "--qi", "age", "sex", "--mechanism", "splu",
                       "--param", "gamma=2", "--seed", "3", "--band", "age=10", "--out", str(tmp_path / "f.csv")], capsys)
    flags = json.loads((tmp_path / "f.manifest.json").read_text())
    assert "decision" not in flags
    assert {k: v for k, v in man.items() if k != "decision"} == flags
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "f.csv").read_bytes()


def test_cli_session_flags_override_and_say_so(tmp_path, capsys, toy):
    s = _session(toy)
    (tmp_path / "s.zip").write_bytes(S.to_bytes(s, toy.frame))  # the table travels inside
    code, _, err = _run(["sanitize", "--session", str(tmp_path / "s.zip"), "--seed", "9", "--mechanism", "uniform",
                         "--param", "rho1=1/10",
                         "--out", str(tmp_path / "r.csv")], capsys)
    assert code == 0, err
    assert "--seed 9 overrides the session's seed 3" in err
    assert "--mechanism uniform overrides the session's mechanism splu" in err
    assert "--param rho1=1/10 overrides the session's rho1=1/13" in err
    man = json.loads((tmp_path / "r.manifest.json").read_text())
    assert man["mechanism"] == "uniform" and man["seed"] == 9 and man["params"]["rho1"] == 0.1
    assert "decision" not in man  # not the chosen pin's setting any more


def test_cli_session_refuses_another_table_and_bad_files(tmp_path, capsys, toy):
    s = _session(toy)
    (tmp_path / "s.json").write_text(S.dumps(s), encoding="utf-8")
    code, _, err = _run(["sanitize", "adult", "--session", str(tmp_path / "s.json"), "--out",
                         str(tmp_path / "r.csv")], capsys)
    assert code == 2 and "saved on the uploaded file 'toy.csv'" in err and err.count("\n") == 1
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    code, _, err = _run(["sanitize", "--session", str(tmp_path / "bad.json"), "--out", str(tmp_path / "r.csv")],
                        capsys)
    assert code == 2 and "not valid JSON" in err
    assert not (tmp_path / "r.csv").exists()
    code, _, err = _run(["sanitize", "--session", str(tmp_path / "nope.json"), "--out", str(tmp_path / "r.csv")],
                        capsys)
    assert code == 2 and "no session file" in err


# ------------------------------------------------------------------ report --session (closing note item 2)
def _report_session(tmp_path, table_name="toy.csv"):
    import numpy as np

    rng = np.random.default_rng(5)
    rows = "".join(f"{20 + int(a)},{'FM'[int(s)]},{['flu', 'cold', 'hiv', 'gout', 'acne'][int(d)]}\n"
                   for a, s, d in zip(rng.integers(0, 50, 400), rng.integers(0, 2, 400), rng.integers(0, 5, 400)))
    data = b"age,sex,disease\n" + rows.encode()
    table = load_table(data, table_name)
    csv = tmp_path / table_name
    csv.write_bytes(data)
    pins = (S.Pin("gamma 3", S.Setting("splu", {"gamma": 3}, 3)),
            S.Pin("<b>UP</b>", S.Setting("uniform", {}, 4)))
    dec = S.make_decision("<b>UP</b>", pins, "Counts of one stay hidden.", ["Ann"], "2026-11-24", {})
    s = S.Session(S.TableRef("upload", table_name, table.content_hash, len(table)), "disease", ("age", "sex"),
                  S.Setting("splu", {"gamma": 3}, 3), {}, pins, (), dec, {})
    return s, table, csv


@pytest.mark.slow
def test_cli_report_from_a_session(tmp_path, capsys):
    s, table, csv = _report_session(tmp_path)
    (tmp_path / "s.zip").write_bytes(S.to_bytes(s, table.frame))
    out = tmp_path / "r.html"
    code, text, err = _run(["report", "--session", str(tmp_path / "s.zip"), "--queries", "200", "--records", "200",
                            "--out", str(out)], capsys)
    assert code == 0, err
    assert "the decision's chosen pin '<b>UP</b>'" in text and "2 pins side by side" in text
    html = out.read_text(encoding="utf-8")
    # about the chosen pin (UP, seed 4), opening with the decision and the pins side by side
    assert "<title>Uniform perturbation (UP) on toy.csv" in html
    heads = __import__("re").findall(r"<h2>([^<]*)</h2>", html)
    assert heads[:3] == ["1. Decision", "2. The pinned settings side by side", "3. The table"]
    assert "&lt;b&gt;UP&lt;/b&gt; (chosen)" in html and "gamma 3 (alternative)" in html
    assert "<b>UP</b>" not in html
    assert "Counts of one stay hidden." in html
    assert f"content hash {table.content_hash}" in html
    assert '&quot;seed&quot;: 4' in html  # the chosen pin's seed in its manifest
    # the same from the JSON with the table as DATA
    (tmp_path / "s.json").write_text(S.dumps(s), encoding="utf-8")
    code, _, err = _run(["report", str(csv), "--session", str(tmp_path / "s.json"), "--queries", "200",
                         "--records", "200", "--out", str(tmp_path / "j.html")], capsys)
    assert code == 0, err


def test_cli_report_session_refuses_bad_files_and_other_tables_writing_nothing(tmp_path, capsys):
    s, table, csv = _report_session(tmp_path)
    out = tmp_path / "r.html"

    def refused(argv, *phrases):
        code, text, err = _run(argv + ["--out", str(out)], capsys)
        assert code == 2 and text == "" and err.count("\n") == 1, (code, err)
        for phrase in phrases:
            assert phrase in err, err
        assert not out.exists()

    # a corrupted file
    good = S.dumps(s)
    (tmp_path / "cut.json").write_text(good[: len(good) // 2], encoding="utf-8")
    refused(["report", "--session", str(tmp_path / "cut.json")], "not valid JSON")
    (tmp_path / "cut.zip").write_bytes(S.to_bytes(s, table.frame)[:300])
    refused(["report", "--session", str(tmp_path / "cut.zip")], "cut.zip")
    # hand-edited: the decision names a pin that is not there
    doc = json.loads(good)
    doc["decision"]["chosen"] = "gone"
    (tmp_path / "edited.json").write_text(json.dumps(doc), encoding="utf-8")
    refused(["report", str(csv), "--session", str(tmp_path / "edited.json")], "not among its pins")
    # a session from another table: the file given has another content hash
    other = tmp_path / "other.csv"
    other.write_bytes(csv.read_bytes().replace(b"flu", b"cold"))
    (tmp_path / "s.json").write_text(good, encoding="utf-8")
    refused(["report", str(other), "--session", str(tmp_path / "s.json")], "saved on the uploaded file 'toy.csv'")
    # a session saved on a sample whose content hash is not this workbench's sample
    doc = json.loads(good)
    doc["table"] = {"kind": "sample", "name": "toy-splu", "content_hash": "0123456789abcdef"}
    (tmp_path / "sample.json").write_text(json.dumps(doc), encoding="utf-8")
    refused(["report", "--session", str(tmp_path / "sample.json")], "content hash")
    # an upload not inside the file, no DATA given
    refused(["report", "--session", str(tmp_path / "s.json")], "give that file's path as DATA")
    # no file, and flags that would change what the decision speaks of
    refused(["report", "--session", str(tmp_path / "nope.json")], "no session file")
    refused(["report", str(csv), "--session", str(tmp_path / "s.json"), "--seed", "9", "--param", "gamma=4"],
            "--param, --seed cannot be given with --session")
    # without a session the old flags are required, one sentence
    refused(["report", str(csv)], "give --sensitive, --mechanism (or --session FILE)")


def test_pins_round_trip_through_link_text_and_bad_text_is_one_sentence():
    pins = (S.Pin("five, ~ ;", S.Setting("splu", {"gamma": 5}, 3)),
            S.Pin("UP", S.Setting("uniform", {"p": None, "rho1": 1 / 13}, 4)))
    text = S.pins_text(pins)
    assert S.pins_from_text(text) == pins and '"rho1":"1/13"' in text
    for bad, why in (("{not json", "not the JSON list"), ('{"a":1}', "must be a list"),
                     ('[{"name":"a","mechanism":"splu","params":{"gamma":"x"},"seed":1}]', "gamma"),
                     ('[{"name":"a","mechanism":"splu","seed":1},{"name":"a","mechanism":"splu","seed":1}]',
                      "exists already"),
                     (json.dumps([{"name": f"p{i}", "mechanism": "splu", "seed": 1} for i in range(7)]), "at most 6")):
        with pytest.raises(S.SessionError) as exc:
            S.pins_from_text(bad)
        msg = str(exc.value)
        assert msg.startswith("Ignored from the link: the link's pins") and why in msg and msg.count(". ") <= 2, msg


def test_a_zips_table_keeps_what_the_reader_said_of_the_file():
    """An R export's unnamed first column is named 'row' with a note in the release's manifest; the zip's embedded
    copy is not read again, so the note travels in the session and the reopened table's releases carry it."""
    export = b'"","age","sex","disease"\n"1",30,"F","flu"\n"2",31,"M","cold"\n"3",32,"F","hiv"\n"4",33,"M","flu"\n'
    table = load_table(export, "ward.csv")
    assert any("'row'" in n for n in table.notes)
    s = _session(table, name="ward.csv")
    s = replace(s, table=replace(s.table, read=table.read, notes=table.notes))
    back, frame = S.read(S.to_bytes(s, table.frame), "ward-session.zip")
    reopened = S.embedded_table(back, frame)
    assert reopened.notes == table.notes and reopened.read == table.read
    assert reopened.content_hash == table.content_hash
    bad = S.dumps(s).replace('"notes": [', '"notes": [1, ')
    with pytest.raises(S.SessionError, match="notes must be sentences"):
        S.loads(bad, "bad.json")
