"""Issue 24, item 3: every reader is bounded by what it can cost before it costs it; each hostile file is small.

Each reader runs in a child process whose peak resident memory is read
with ``resource.getrusage(RUSAGE_CHILDREN)`` by a wrapper process that has
that one child (so no other test's child is counted); the child's address
space is capped at 2 GB so a reader that is not bounded fails here instead
of taking the machine.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from core.data import read as R
from core.errors import DataError

ROOT = Path(__file__).resolve().parent.parent
#: peak resident memory a refused hostile file may cost (Python with pandas, pyarrow and openpyxl is ~120 MB)
PEAK_MB = 400

_WRAPPER = r"""
import json, resource, subprocess, sys
proc = subprocess.run([sys.executable, "-c", sys.argv[1], *sys.argv[2:]], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"code": proc.returncode, "out": proc.stdout, "err": proc.stderr, "peak_mb": peak}))
"""

_READER = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from core.errors import DataError
try:
{body}
except DataError as exc:
    print("refused:", exc)
"""


def in_child(body: str, *args, env: dict | None = None) -> dict:
    """Run ``body`` (indented code; ``sys.argv[1:]`` are ``args``) in a child; its output and peak memory (MB)."""
    code = _READER.format(body="\n".join("    " + line for line in body.strip().splitlines()))
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, code, *map(str, args)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


READ_FILE = """
from core.data.read import read
result = read(open(sys.argv[1], "rb").read(), sys.argv[2])
print("read:", result.frame.shape)
"""


def workbook(cells: dict[str, object]) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    ws = book.active
    for ref, value in cells.items():
        ws[ref] = value
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def rezip(data: bytes, change) -> bytes:
    """The zip ``data`` with each member's bytes passed through ``change(name, bytes)`` (None: as it was)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            new = change(info.filename, body)
            dst.writestr(info.filename, body if new is None else new)
    return out.getvalue()


TABLE = {"A1": "age", "B1": "sex", "A2": 30, "B2": "F", "A3": 41, "B3": "M"}


def test_a_far_cell_is_refused_after_one_row_not_after_17_billion_cells(tmp_path):
    data = workbook({**TABLE, "XFD1048576": 1})
    assert len(data) < 10_000
    (tmp_path / "far.xlsx").write_bytes(data)
    got = in_child(READ_FILE, tmp_path / "far.xlsx", "far.xlsx")
    assert got["out"].startswith("refused: Sheet 'Sheet' of 'far.xlsx' reaches cell XFD1048576: 1,048,576 rows by "
                                 "16,384 columns, more cells than the "), got
    assert got["out"].rstrip().endswith("delete the stray cells far from the table (Ctrl+End in Excel goes to the "
                                        "last one), or save the sheet as CSV.")
    assert got["out"].count("\n") == 1 and got["peak_mb"] < PEAK_MB, got


def test_a_declared_dimension_is_not_trusted_the_cells_are(tmp_path):
    """4,000 rows of two cells declaring A1:XFD4001 read as their 8,000 cells, not 65 million padded ones."""
    import re

    import openpyxl

    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["age", "sex"])
    for i in range(4000):
        ws.append([20 + i % 60, "FM"[i % 2]])
    buf = io.BytesIO()
    book.save(buf)
    data = rezip(buf.getvalue(), lambda name, body: re.sub(rb'<dimension ref="A1:B4001"', b'<dimension ref="A1:XFD4001"',
                                                            body) if name.startswith("xl/worksheets/") else None)
    assert b"XFD4001" in zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml") and len(data) < 100_000
    (tmp_path / "declared.xlsx").write_bytes(data)
    got = in_child(READ_FILE, tmp_path / "declared.xlsx", "declared.xlsx")
    assert got["out"] == "read: (4000, 2)\n" and got["peak_mb"] < PEAK_MB, got


def bomb_xlsx(megabytes: int) -> bytes:
    """A workbook whose sheet XML carries ``megabytes`` MB of an XML comment: a few hundred kB on disk."""
    good = workbook(TABLE)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename != "xl/worksheets/sheet1.xml":
                dst.writestr(info.filename, body)
                continue
            head, _, tail = body.partition(b"<sheetData>")
            with dst.open(info.filename, "w") as fh:
                fh.write(head + b"<!--")
                chunk = b"x" * (1 << 20)
                for _ in range(megabytes):
                    fh.write(chunk)
                fh.write(b"--><sheetData>" + tail)
    return out.getvalue()


@pytest.mark.slow  # 64 MB deflated to build the bomb (about 0.5 s)
def test_a_zip_bombed_workbook_is_refused_from_its_directory(tmp_path):
    data = bomb_xlsx(64)
    assert len(data) < 1_000_000
    (tmp_path / "bomb.xlsx").write_bytes(data)
    got = in_child(READ_FILE, tmp_path / "bomb.xlsx", "bomb.xlsx")
    assert got["out"].startswith("refused: 'bomb.xlsx' holds 'xl/worksheets/sheet1.xml', which would inflate from "), got
    assert "(more than 100 times: a zip bomb); it was not unpacked." in got["out"]
    assert got["out"].count("\n") == 1 and got["peak_mb"] < PEAK_MB, got
    assert R.sheet_names(data) == []  # the sheet picker does not unpack it either


def test_a_workbook_over_the_unpacked_limit_is_refused(monkeypatch):
    monkeypatch.setattr(R, "MAX_BYTES", 1000)  # 4 kB of unpacked parts allowed
    with pytest.raises(DataError, match=r"^'w.xlsx' would unpack to .* MB, more than the 0 MB this workbench unpacks; "
                                        r"save it as CSV \(or Parquet\) and load that.$"):
        R.read(workbook(TABLE), "w.xlsx", max_bytes=10**9)


@pytest.mark.parametrize("what", ["device", "fifo"])
def test_only_a_regular_file_is_read(tmp_path, what):
    """/dev/zero (no end) and a named pipe (blocks) are refused before a byte is read."""
    from core.table import load_table

    path = Path("/dev/zero") if what == "device" else tmp_path / "pipe"
    if what == "fifo":
        os.mkfifo(path)
    with pytest.raises(DataError, match=r"is not a regular file \(a device, pipe or socket has no end to read to\); "
                                        "give a data file.$"):
        load_table(str(path))


def test_dev_zero_on_the_command_line_is_one_sentence_in_little_memory():
    got = in_child("""
from core.cli import main
sys.exit(main(["inspect", "/dev/zero"]))
""")
    assert got["code"] == 2 and got["out"] == "", got
    assert got["err"] == ("error: '/dev/zero' is not a regular file (a device, pipe or socket has no end to read to); "
                          "give a data file.\n")
    assert got["peak_mb"] < PEAK_MB, got


def wide_zeros_parquet(rows: int, columns: int) -> bytes:
    """A Parquet file of ``rows`` by ``columns`` zeros: a few hundred kB that decode to rows*columns*8 bytes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    zeros = pa.array(np.zeros(rows, dtype=np.int64))
    buf = io.BytesIO()
    pq.write_table(pa.table({f"c{i}": zeros for i in range(columns)}), buf)
    return buf.getvalue()


def test_a_parquet_footer_declaring_more_than_memory_is_refused_before_decoding(monkeypatch):
    data = wide_zeros_parquet(20_000, 50)  # 16 MB decoded (twice: Arrow and pandas)
    monkeypatch.setenv("WORKBENCH_MEMORY_BYTES", str(12 * 2**20))
    with pytest.raises(DataError, match=r"^'z.parquet' holds 20,000 rows of 50 columns, about 16 MB once unpacked, "
                                        r"more than the 13 MB of memory free here; give it to the command line"):
        R.read(data, "z.parquet")
    monkeypatch.setenv("WORKBENCH_MEMORY_BYTES", str(40 * 2**20))
    assert R.read(data, "z.parquet").frame.shape == (20_000, 50)


@pytest.mark.slow  # builds a 1M x 50 Parquet of zeros (about 1 s)
def test_a_session_zip_bomb_is_refused_in_little_memory(tmp_path):
    """A valid session whose embedded table is a small Parquet of 400 MB of zeros: refused from its footer."""
    from core import session as sess

    text = json.loads(_session_json())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(sess.JSON_NAME, json.dumps(text))
        zf.writestr(sess.TABLE_NAME, wide_zeros_parquet(1_000_000, 50))
    assert len(buf.getvalue()) < 2_000_000
    (tmp_path / "s.zip").write_bytes(buf.getvalue())
    got = in_child("""
from core import session
session.read(open(sys.argv[1], "rb").read(), "s.zip")
print("read")
""", tmp_path / "s.zip", env={"WORKBENCH_MEMORY_BYTES": str(512 << 20)})
    assert got["out"].startswith("refused: 's.zip' holds 1,000,000 rows of 50 columns, about 800 MB once unpacked"), got
    assert got["peak_mb"] < PEAK_MB, got


def test_a_session_zip_whose_table_member_is_a_bomb_is_refused_from_its_directory():
    from core import session as sess

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(sess.JSON_NAME, _session_json())
        with zf.open(sess.TABLE_NAME, "w") as fh:
            for _ in range(12):
                fh.write(bytes(1 << 20))
    with pytest.raises(sess.SessionError, match=r"^'s.zip' holds 'table.parquet', which would inflate from .* to 13 MB "
                                                r"\(more than 100 times: a zip bomb\); it was not unpacked."):
        sess.read(buf.getvalue(), "s.zip")


def _session_json() -> str:
    """A valid session of an upload (its table embedded in the zip)."""
    from core import session as S

    return S.dumps(S.Session(S.TableRef("upload", "t.csv", "0" * 16, 1_000_000), "c0", ("c1",),
                             S.Setting("uniform", {"p": None, "rho1": 1 / 13}, 3), {}, (), (), None, {}))
