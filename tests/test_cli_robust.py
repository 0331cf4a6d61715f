"""Issue 24, items 1, 4 and 5 on the command line: a sentence where a traceback was, said where it was silent."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TABLE = "age,sex,zip,disease\n30,F,1001,flu\n41,M,1002,cold\n52,F,1001,flu\n33,M,1003,hiv\n61,F,1002,cold\n"
BASE = ["--sensitive", "disease", "--mechanism", "uniform", "--seed", "3"]


def cli(*args, cwd: Path):
    from core.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def refused(*args, cwd: Path, said: str) -> str:
    code, out, err = cli(*args, cwd=cwd)
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and said in err, err
    return err


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "in.csv").write_text(TABLE)
    return tmp_path


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ------------------------------------------------------------------ item 1: nothing the user had is destroyed
def test_the_input_is_never_the_output(folder):
    refused("sanitize", "in.csv", *BASE, "--out", "in.csv", cwd=folder, said="is the input")
    refused("sanitize", "in.csv", *BASE, "--out", "o.csv", "--manifest", "in.csv", cwd=folder, said="is the input")
    refused("sanitize", "in.csv", *BASE, "--out", "o.csv", "--manifest", "o.csv", cwd=folder,
            said="--out and --manifest both name")
    assert listing(folder) == ["in.csv"] and (folder / "in.csv").read_text() == TABLE


def test_a_folder_of_the_users_files_is_kept_unless_overwrite(folder):
    (folder / "data").mkdir()
    (folder / "data" / "mine.csv").write_text("keep\n1\n")
    (folder / "in.csv").rename(folder / "data" / "in.csv")
    refused("sanitize", "data/in.csv", *BASE, "--out", "data", cwd=folder, said="is the folder holding the input")
    (folder / "other").mkdir()
    (folder / "other" / "mine.parquet").write_bytes(b"mine")
    refused("sanitize", "data/in.csv", *BASE, "--out", "other", cwd=folder,
            said="holds files the workbench did not write; give --out a new or empty folder, or add --overwrite")
    assert listing(folder / "other") == ["mine.parquet"] and listing(folder / "data") == ["in.csv", "mine.csv"]
    code, out, err = cli("sanitize", "data/in.csv", *BASE, "--out", "other", "--overwrite", cwd=folder)
    assert code == 0, err
    assert "mine.parquet" not in listing(folder / "other") and "_manifest.json" in listing(folder / "other")


def test_a_manifest_path_that_is_a_folder_gets_the_right_sentence(folder):
    (folder / "m").mkdir()
    refused("sanitize", "in.csv", *BASE, "--out", "o.csv", "--manifest", "m", cwd=folder,
            said="'m' is a folder; give --manifest a file name such as 'release.manifest.json'.")
    assert listing(folder) == ["in.csv", "m"]


def test_an_empty_out_is_a_sentence(folder):
    refused("sanitize", "in.csv", *BASE, "--out", "", cwd=folder, said="--out is empty; give it a file name")


# ------------------------------------------------------------------ item 4: a sentence, not an internal error
def test_a_csv_whose_lines_end_in_cr_only_reads_as_its_lf_twin(folder):
    (folder / "cr.csv").write_bytes(TABLE.replace("\n", "\r").encode())
    code, _, err = cli("sanitize", "cr.csv", *BASE, "--out", "cr_out.csv", cwd=folder)
    assert code == 0, err
    code, _, err = cli("sanitize", "in.csv", *BASE, "--out", "lf_out.csv", cwd=folder)
    assert code == 0, err
    assert (folder / "cr_out.csv").read_bytes() == (folder / "lf_out.csv").read_bytes()
    cr = json.loads((folder / "cr_out.manifest.json").read_text())
    lf = json.loads((folder / "lf_out.manifest.json").read_text())
    for manifest, name in ((cr, "cr.csv"), (lf, "in.csv")):  # each names its own file (issue 24 §5)
        assert manifest["input"]["content_hash"] == hashlib.sha256((folder / name).read_bytes()).hexdigest()[:16]
    assert {k: v for k, v in cr.items() if k not in ("input", "reproduce")} == \
        {k: v for k, v in lf.items() if k not in ("input", "reproduce")}


@pytest.mark.parametrize("encoding", ["rot13", "hex", "base64", "zlib", "idna"])
def test_a_codec_that_is_not_a_text_encoding_is_refused(folder, encoding):
    refused("sanitize", "in.csv", *BASE, "--out", "o.csv", "--encoding", encoding, cwd=folder,
            said=f"'{encoding}' is not an encoding a file of text can be read with; use utf-8")
    assert listing(folder) == ["in.csv"]


def test_a_parameter_too_large_for_a_float_is_refused(folder):
    refused("sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--param",
            "p=" + "9" * 400 + "/1", "--out", "o.csv", cwd=folder, said="The 'p' parameter of")


@pytest.mark.parametrize("seed", ["1_000", "\u0663", "\uff11", "1e3", "0x10", "-1", "2147483648"])
def test_a_seed_is_ascii_digits_only(folder, seed):
    refused("sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--seed", seed,
            "--out", "o.csv", cwd=folder, said="--seed")
    assert listing(folder) == ["in.csv"]


def test_a_seed_in_digits_is_taken(folder):
    code, out, err = cli("sanitize", "in.csv", "--sensitive", "disease", "--mechanism", "uniform", "--seed", " 1000 ",
                         "--out", "o.csv", "--json", cwd=folder)
    assert code == 0, err and json.loads(out)["manifest"]["seed"] == 1000


def test_an_internal_error_exits_70_in_one_line_and_help_lists_every_status(folder, monkeypatch):
    import core.cli as C

    def bug(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(C.COMMANDS, "list", bug)
    code, out, err = cli("list", cwd=folder)
    assert code == 70 and out == ""
    assert err == "internal error (ZeroDivisionError): division by zero; please report it\n"
    code, out, err = cli("--help", cwd=folder) if False else (None, C.build_parser().format_help(), "")
    for status in ("0 ", "2 ", "3 ", "70 ", "130 ", "143 "):
        assert f"\n  {status}" in out, status


# ------------------------------------------------------------------ --scheduler
def _silent_http_server():
    srv = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def _junk_server():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()

    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:  # closed: the test is over
                return
            with conn, contextlib.suppress(OSError):
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" + b"\xff" * 64)

    threading.Thread(target=serve, daemon=True).start()
    return sock


def test_a_scheduler_address_that_is_not_a_dask_scheduler_is_one_sentence(folder, monkeypatch):
    from core.engine import dask as dk

    monkeypatch.setattr(dk, "GREETING_TIMEOUT", 1)
    srv, junk = _silent_http_server(), _junk_server()
    pq_dir = folder / "ds"
    pq_dir.mkdir()
    import pandas as pd

    pd.read_csv(folder / "in.csv").to_parquet(pq_dir / "part-0.parquet")
    cases = [
        (f"tcp://127.0.0.1:{srv.server_port}", "answers but says nothing in 1 s, where a Dask scheduler greets at once"),
        (f"http://127.0.0.1:{srv.server_port}", "names the scheme http://, not tcp:// or tls://"),
        (f"tcp://127.0.0.1:{junk.getsockname()[1]}", "answers, but not as a Dask scheduler does"),
        ("http://[::1", "is not an address"),
    ]
    for address, said in cases:
        refused("sanitize", "ds", "--sensitive", "disease", "--qi", "age,sex", "--mechanism", "uniform",
                "--out", "rel", "--engine", "dask", "--scheduler", address, cwd=folder, said=said)
        assert listing(folder) == ["ds", "in.csv"]
    srv.shutdown()
    srv.server_close()
    junk.close()


def test_a_malformed_scheduler_prints_its_sentence_and_nothing_else(folder):
    """The process's whole stderr (a Client.__del__ traceback came after the sentence, at exit)."""
    import pandas as pd

    pd.read_csv(folder / "in.csv").to_parquet(folder / "t.parquet")
    proc = subprocess.run([sys.executable, "-m", "core", "sanitize", "t.parquet", "--sensitive", "disease",
                           "--mechanism", "uniform", "--out", "rel", "--engine", "dask", "--qi", "age",
                           "--scheduler", "http://[::1"], cwd=folder, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--scheduler 'http://[::1' is not an address" in proc.stderr, proc.stderr


# ------------------------------------------------------------------ item 5: said, not silent
def test_the_qis_used_and_the_columns_left_out_are_printed_and_kept(folder):
    """Without --qi the proposal's QIs are used: said, and the columns it leaves out named (and kept)."""
    (folder / "t.csv").write_text("id,age,sex,zip,disease,note\n1,30,F,1001,flu,a\n2,41,M,1002,cold,b\n"
                                  "3,52,F,1001,flu,c\n4,33,M,1003,hiv,d\n5,61,F,1002,cold,e\n")
    code, out, err = cli("sanitize", "t.csv", *BASE, "--out", "o.csv", cwd=folder)
    assert code == 0, err
    manifest = json.loads((folder / "o.manifest.json").read_text())
    assert manifest["input"]["qi"] == ["age", "sex", "zip"] and manifest["input"]["columns_left_out"] == ["id", "note"]
    assert "QIs used (proposed; --qi chooses others): age, sex, zip" in out
    assert "columns left out of the release: id, note" in out
    code, out, err = cli("sanitize", "t.csv", *BASE, "--qi", "age", "--out", "o2.csv", cwd=folder)
    assert "QIs used: age\n" in out and "columns left out of the release: id, sex, zip, note" in out
    assert json.loads((folder / "o2.manifest.json").read_text())["input"]["columns_left_out"] == ["id", "sex", "zip",
                                                                                                 "note"]


def test_a_binary_parquet_column_is_decoded_with_a_note(folder):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"age": [30, 41, 52, 33] * 3, "sex": ["F", "M", "F", "M"] * 3,
                             "disease": [b"flu", b"cold", b"flu", b"hiv"] * 3}), folder / "bin.parquet")
    code, out, err = cli("sanitize", "bin.parquet", *BASE, "--out", "o.csv", cwd=folder)
    assert code == 0, err
    note = "Column 'disease' is stored as bytes; it was decoded as utf-8 text."
    assert f"note: {note}" in out
    assert note in json.loads((folder / "o.manifest.json").read_text())["notes"]


@pytest.mark.slow  # starts an embedded Dask cluster
def test_the_dask_engine_without_qi_takes_the_local_engines_proposal(folder):
    import pandas as pd

    (folder / "ds").mkdir()
    frame = pd.DataFrame({"id": range(60), "age": [30, 41, 52] * 20, "sex": ["F", "M"] * 30,
                          "disease": ["flu", "cold", "hiv", "flu"] * 15})
    frame.to_parquet(folder / "ds" / "part-0.parquet")
    code, out, err = cli("sanitize", "ds", *BASE, "--out", "local", cwd=folder)
    assert code == 0, err
    code, out, err = cli("sanitize", "ds", *BASE, "--out", "dask", "--engine", "dask", cwd=folder)
    assert code == 0, err
    local = json.loads((folder / "local" / "_manifest.json").read_text())["input"]
    dask = json.loads((folder / "dask" / "_manifest.json").read_text())["input"]
    assert dask["qi"] == local["qi"] == ["age", "sex"]
    assert dask["columns_left_out"] == local["columns_left_out"] == ["id"]
    assert "QIs used (proposed; --qi chooses others): age, sex" in out


def test_rows_left_out_for_missing_values_are_counted_and_said(tmp_path):
    """A record not published is counted and said: rows with a missing SA or QI value (the manifest keeps the
    count as input.rows_dropped_missing)."""
    import io
    import json
    from contextlib import redirect_stderr, redirect_stdout

    from core.cli import main

    data = tmp_path / "t.csv"
    data.write_text("age,sex,d\n" + "".join(f"{20 + i % 30},{'fm'[i % 2]},{'ab'[i % 3 == 0] if i % 4 else ''}\n"
                                             for i in range(200)), encoding="utf-8")
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        code = main(["sanitize", str(data), "--sa", "d", "--qi", "age,sex", "--mechanism", "uniform", "--seed", "1",
                     "--no-risk", "--out", str(tmp_path / "r.csv")])
    assert code == 0
    manifest = json.loads((tmp_path / "r.manifest.json").read_text())
    dropped = manifest["input"]["rows_dropped_missing"]
    assert dropped == 50
    assert f"rows left out: {dropped:,} of 200 have a missing value" in out.getvalue()
