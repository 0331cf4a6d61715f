"""Fuzz the readers and the command line (issue 24, item 7): hostile arguments and damaged files, checked for
what must always hold.

Usage::

    .venv/bin/python bench/fuzz.py                      # 90 s: CLI cases and reader cases, then a table
    .venv/bin/python bench/fuzz.py --seconds 30 --seed 7 --json fuzz.json

Every case runs in this process (``core.cli.main([...])`` with a fresh working folder, or
``core.data.read.read(bytes)``), and must hold:

* the CLI exits 0 or 2, or 3 with a verdict line (``--require-guarantee``); never 70 (internal error);
* on a non-zero exit, stderr is exactly one line; no stderr anywhere holds a traceback;
* the files the case started with (the input table, a folder of the user's files) are unchanged;
* nothing is left beside the outputs: no temporary (``.wb-*``), and after a refusal no new file at all;
* a reader returns a table or raises :class:`core.errors.DataError`, nothing else;
* the process's peak resident memory stays under ``--peak-mb`` (checked after every case).

The grammar (:func:`cli_case`, :func:`reader_case`) takes a ``pick(options)`` function, so the same cases are
drawn by hypothesis in ``tests/test_fuzz.py`` (a few seconds in CI, shrunk on a failure) and by a seeded
``random.Random`` here (a long run that keeps going after a finding and reports every distinct one).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import resource
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

Pick = Callable[[Sequence], object]

#: hostile values for any option (numbers in other scripts, separators, huge digits, paths, markup ...)
VALUES = ["", " ", "-", "--", "0", "1", "7", "-1", "1_000", "\u0663", "\uff11", "9" * 400, "9" * 400 + "/1",
          "1/0", "1/13", "nan", "inf", "-inf", "ln(3)", "ln(0)", "1e309", "0.5", "2147483648", "a,b", "a\\,b",
          "\x00", "é", "../", "/etc", "/dev/zero", "x" * 300, "=1+1", "<b>x</b>", "\n", "'", '"', "%s", "${HOME}"]
SAMPLES = ["toy-splu", "toy-sdr", "toy-bucket", "toy-ambiguity", "census:200", "census:0", "census:-5",
           "census:1_0", "census:x", "hospital:300", "nosuch", "toy-splu:3"]
FILES = ["in.csv", "cr.csv", "semi.csv", "empty.csv", "bin.dat", "book.xlsx", "mine", "nosuch.csv", "/dev/zero",
         "-", "", "mine/user.csv", "in.csv/x"]
COLUMNS = ["disease", "age", "sex", "zip", "nope", "", "-x", "a,b", "AGE"]
ENCODINGS = ["utf-8", "latin-1", "utf-16", "rot13", "hex", "base64", "zlib", "nope", "", "utf-8-sig", "idna"]
DELIMITERS = ["comma", "semicolon", "tab", "pipe", "whitespace", ",", ";", "", "ab", "\"", "\n", "x"]
OUTS = ["o.csv", "o.parquet", "odir", "", " ", "in.csv", "o.txt", "sub/o.csv", "r" * 244 + ".csv", "r" * 300 + ".csv",
        ".", "mine", "in.csv/o.csv", "o.manifest.json", "-o.csv"]
MANIFESTS = [None, None, None, "m.json", "o.csv", "mine", "in.csv", "", "odir/m.json", "sub/m.json"]
#: the exit statuses the CLI may end with (3 only with a verdict line; 70 is an internal error: a finding)
ALLOWED = {0, 2, 3}


def _mechanisms() -> list[str]:
    from core.mechanisms import MECHANISMS

    return list(MECHANISMS)


def _param_names() -> list[str]:
    from core.mechanisms import MECHANISMS

    return sorted({p.name for m in MECHANISMS.values() for p in m.params}) + ["nope", ""]


def cli_case(pick: Pick) -> list[str]:
    """One command line (argv without ``python -m core``) drawn from the grammar."""
    command = pick(["sanitize"] * 6 + ["inspect"] * 2 + ["evaluate", "bound", "list", "experiment", "generate"])
    argv = [command]
    if command == "list":
        return argv + list(pick([[], ["--json"], ["--bogus"]]))
    if command == "bound":
        from core.bounds import BOUNDS

        argv.append(str(pick(list(BOUNDS) + ["nope", ""])))
        for _ in range(int(pick([0, 1, 2]))):
            argv += ["--param", f"{pick(_param_names())}={pick(VALUES)}"]
        return argv
    if command == "experiment":
        return argv + list(pick([["--list"], ["nope"], ["000-fig8", "--param", f"x={pick(VALUES)}"], []]))
    if command == "generate":
        return argv + [str(pick(["census", "nope"])), "--rows", str(pick(["100", "0", "1_000", "\u0663", "-1", "x"])),
                       "--out", str(pick(["gen", "mine", "", "in.csv", "gen.csv"]))]
    data = str(pick(SAMPLES + FILES))
    if command == "inspect":
        argv.append(data)
    else:
        argv.append(data)
        argv += ["--sensitive", str(pick(COLUMNS))]
        argv += ["--mechanism", str(pick(_mechanisms() + ["nope", ""]))]
        if pick([True, False]):
            argv += ["--qi", str(pick(COLUMNS + ["age,sex", "age sex"]))]
        for _ in range(int(pick([0, 0, 1, 2]))):
            argv += ["--param", f"{pick(_param_names())}={pick(VALUES)}"]
        if pick([True, True, False]):
            argv += ["--seed", str(pick(VALUES + ["1", "42"]))]
    # reading options, any command that reads
    for flag, values in (("--encoding", ENCODINGS), ("--delimiter", DELIMITERS), ("--decimal", [".", ",", "x", ""]),
                         ("--sheet", ["1", "Sheet", "9", ""]), ("--na", VALUES), ("--names", COLUMNS)):
        if pick([False, False, False, True]):
            argv += [flag, str(pick(values))]
    if pick([False, False, True]):
        argv.append(str(pick(["--header", "--no-header"])))
    if command == "sanitize":
        argv += ["--out", str(pick(OUTS))]
        manifest = pick(MANIFESTS)
        if manifest is not None:
            argv += ["--manifest", str(manifest)]
        for flag in ("--require-guarantee", "--json", "--overwrite"):
            if pick([False, False, True]):
                argv.append(flag)
    elif command == "evaluate":
        argv += ["--queries", str(pick(["50", "0", "-1", "1_000", "x"]))]
    elif pick([False, True]):
        argv.append("--json")
    return argv


# ------------------------------------------------------------------ files a case starts with
def _xlsx() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    ws = book.active
    for row in (["age", "sex", "disease"], [30, "F", "flu"], [41, "M", "cold"], [52, "F", "flu"]):
        ws.append(row)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


_BOOK: bytes | None = None
TABLE = "age,sex,disease\n30,F,flu\n41,M,cold\n52,F,flu\n33,M,cold\n61,F,hiv\n"


def fixtures(folder: Path) -> None:
    """The user's files a case starts with: tables in several shapes and a folder of the user's own files."""
    global _BOOK
    if _BOOK is None:
        _BOOK = _xlsx()
    (folder / "in.csv").write_text(TABLE)
    (folder / "cr.csv").write_bytes(TABLE.replace("\n", "\r").encode())
    (folder / "semi.csv").write_text(TABLE.replace(",", ";"))
    (folder / "empty.csv").write_bytes(b"")
    (folder / "bin.dat").write_bytes(bytes(range(256)) * 4)
    (folder / "book.xlsx").write_bytes(_BOOK)
    (folder / "mine").mkdir()
    (folder / "mine" / "user.csv").write_text("keep,me\n1,2\n")


def snapshot(folder: Path) -> dict[str, bytes | None]:
    out = {}
    for path in sorted(folder.rglob("*")):
        out[str(path.relative_to(folder))] = None if path.is_dir() else path.read_bytes()
    return out


# ------------------------------------------------------------------ running and checking
@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(argv: list[str], cwd: Path) -> Result:
    from core.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        os.chdir(old)
    return Result(code, out.getvalue(), err.getvalue())


def _expected_outputs(argv: list[str]) -> set[str]:
    """Names a successful ``sanitize``/``generate`` may add in its working folder (the release, its manifest)."""
    names = set()
    if "--out" in argv:
        out = argv[argv.index("--out") + 1].strip()
        names.add(out)
        names.add(str(Path(out).with_name(Path(out).stem + ".manifest.json")))
    if "--manifest" in argv:
        names.add(argv[argv.index("--manifest") + 1])
    return {os.path.normpath(n) for n in names if n}


def check_cli(argv: list[str], peak_mb: float | None = None) -> list[str]:
    """Run one command line in a fresh folder of fixtures; the rules it broke (empty when it held)."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="wbfuzz-") as tmp:
        folder = Path(tmp)
        fixtures(folder)
        before = snapshot(folder)
        try:
            got = run_cli(argv, folder)
        except SystemExit as exc:  # argparse's --help/--version only
            got = Result(int(exc.code or 0), "", "")
        except BaseException as exc:  # noqa: BLE001 - anything escaping main() is a finding
            return [f"escaped main(): {type(exc).__name__}: {exc}"]
        after = snapshot(folder)
        lines = got.err.splitlines()
        if got.code not in ALLOWED:
            problems.append(f"exit {got.code}: {got.err.strip()[:300]}")
        if got.code == 3 and not (lines and "guarantee" in lines[-1].lower()):
            problems.append(f"exit 3 without a verdict: {got.err.strip()[:300]}")
        if got.code != 0 and len(lines) != 1:
            problems.append(f"exit {got.code} with {len(lines)} lines on stderr: {got.err[:300]!r}")
        if "Traceback" in got.err or "Traceback" in got.out:
            problems.append("a traceback was printed")
        changed = [k for k, v in before.items() if after.get(k, b"<gone>") != v]
        if changed:
            problems.append(f"the user's files changed: {changed}")
        new = sorted(set(after) - set(before))
        temps = [n for n in new if Path(n).name.startswith(".wb-")]
        if temps:
            problems.append(f"temporaries left: {temps}")
        if got.code != 0 and new:
            problems.append(f"exit {got.code} but new files: {new}")
        if got.code == 0 and argv[0] == "sanitize":
            allowed = _expected_outputs(argv)
            stray = [n for n in new if not any(n == a or n.startswith(a + os.sep) for a in allowed)]
            if stray:
                problems.append(f"files beside the outputs: {stray}")
    if peak_mb is not None and peak() > peak_mb:
        problems.append(f"peak memory {peak():.0f} MB over {peak_mb:.0f} MB")
    return problems


def peak() -> float:
    """This process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------ readers
def _seeds() -> dict[str, bytes]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"age": [30, 41, 52], "sex": ["F", "M", "F"], "raw": [b"a", b"\xff", None]}), buf)
    return {"t.csv": TABLE.encode(), "t.tsv": TABLE.replace(",", "\t").encode(),
            "t16.csv": TABLE.encode("utf-16"), "q.csv": b'a,b\n"x\ny",2\n"unterminated,3\n',
            "t.xlsx": _BOOK or _xlsx(), "t.parquet": buf.getvalue(), **_sessions()}


def _sessions() -> dict[str, bytes]:
    """A session file as JSON and as a zip with its table: damaged, they go to core.session.read."""
    import pandas as pd

    from core import session as S

    session = S.Session(S.TableRef("upload", "t.csv", "0123456789abcdef", 5), "disease", ("age", "sex"),
                        S.Setting("uniform", {"p": None, "rho1": 1 / 13}, 3), {}, (), (), None, {})
    text = S.dumps(session)
    return {"session.json": text.encode(), "session.zip": S.to_bytes(session, pd.read_csv(io.StringIO(TABLE)))}


def reader_case(pick: Pick) -> tuple[str, bytes]:
    """A file for the readers: a seed file, damaged by a few edits."""
    seeds = _seeds()
    name = str(pick(sorted(seeds)))
    data = bytearray(seeds[name])
    for _ in range(int(pick([0, 1, 2, 3]))):
        edit = pick(["cut", "flip", "insert", "cr", "dup", "nul"])
        at = int(pick(range(max(1, len(data)))))
        if edit == "cut":
            del data[at:]
        elif edit == "flip" and data:
            data[min(at, len(data) - 1)] ^= int(pick([1, 0x80, 0xFF, 0x20]))
        elif edit == "insert":
            data[at:at] = bytes(pick([b",", b'"', b"\r", b"\x00", b"\xff\xfe", b"PK\x03\x04", b"9" * 400]))
        elif edit == "cr":
            data = bytearray(bytes(data).replace(b"\n", b"\r"))
        elif edit == "dup":
            data += data[at:at + 4096] * int(pick([1, 50]))
        elif edit == "nul":
            data[at:at] = bytes(64)
    return name, bytes(data)


def check_reader(name: str, data: bytes) -> list[str]:
    from core import session
    from core.data.read import read
    from core.errors import DataError

    try:
        if name.startswith("session."):
            session.read(data, name)
        else:
            read(data, name)
    except DataError as exc:
        if "\n" in str(exc):
            return [f"a two-line message: {str(exc)[:200]!r}"]
    except BaseException as exc:  # noqa: BLE001 - anything but DataError is a finding
        return [f"{type(exc).__name__}: {str(exc)[:200]}"]
    return []


# ------------------------------------------------------------------ the long run
@dataclass
class Findings:
    cases: dict[str, int] = field(default_factory=lambda: {"cli": 0, "reader": 0})
    found: dict[str, list] = field(default_factory=dict)  # first line of a problem -> [count, first case]

    def add(self, kind: str, case, problems: list[str]) -> None:
        self.cases[kind] += 1
        for p in problems:
            key = f"{kind}: {p.splitlines()[0][:160]}"
            if key not in self.found:
                self.found[key] = [0, case]
            self.found[key][0] += 1


def long_run(seconds: float, seed: int, peak_mb: float) -> Findings:
    rng = random.Random(seed)
    pick = rng.choice
    result = Findings()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if rng.random() < 0.6:
            argv = cli_case(pick)
            result.add("cli", argv, check_cli(argv, peak_mb))
        else:
            name, data = reader_case(pick)
            result.add("reader", [name, len(data)], check_reader(name, data))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--peak-mb", type=float, default=1500.0)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    import warnings

    warnings.simplefilter("ignore")
    run_cli(["list"], Path.cwd())  # imports before the clock starts
    t0 = time.monotonic()
    result = long_run(args.seconds, args.seed, args.peak_mb)
    took = time.monotonic() - t0
    print(f"fuzz: {sum(result.cases.values()):,} cases in {took:.0f} s (seed {args.seed}): "
          f"{result.cases['cli']:,} command lines, {result.cases['reader']:,} damaged files; peak {peak():.0f} MB")
    print(f"{'finding':<100}{'cases':>7}")
    for key, (count, case) in sorted(result.found.items(), key=lambda kv: -kv[1][0]):
        print(f"{key[:99]:<100}{count:>7}")
        print(f"    first case: {case!r}"[:300])
    if not result.found:
        print("(none)")
    if args.json:
        Path(args.json).write_text(json.dumps({"cases": result.cases, "seconds": took, "peak_mb": peak(),
                                               "found": result.found}, indent=2, default=str))
    return 1 if result.found else 0


if __name__ == "__main__":
    sys.exit(main())
