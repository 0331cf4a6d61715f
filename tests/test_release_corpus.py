"""The release-hash corpus: refactors of the front door must leave every release and manifest byte for byte.

Each case runs the command line in this process (``core.cli.main``) as a
steward would, writes into a temporary folder and hashes every file written
(release tables and manifest) and, for ``evaluate``, the JSON printed.  The
hashes in ``release_corpus.json`` were taken before the front door
(``core/api.py``) replaced the CLI's own orchestration; a change of release
or manifest bytes fails here.  A deliberate change of the manifest (a new
field) regenerates the file with ``python tests/test_release_corpus.py
--write`` in its own commit that says why.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

CORPUS = Path(__file__).with_name("release_corpus.json")

#: (case id, arguments after the command).  Every mechanism at its defaults and at another setting, on two
#: tables, two seeds; folder releases (several tables) and a banded QI too.
SANITIZE = [
    ("uniform-default", ["census:3000", "--sensitive", "occupation", "--mechanism", "uniform", "--seed", "1"]),
    ("uniform-p", ["adult", "--sensitive", "occupation", "--mechanism", "uniform", "--param", "p=0.3", "--seed", "7"]),
    ("reconstruction-default", ["census:3000", "--sensitive", "occupation", "--mechanism", "reconstruction",
                                "--seed", "1"]),
    ("reconstruction-full", ["census:3000", "--sensitive", "occupation", "--mechanism", "reconstruction",
                             "--param", "bound=full", "--param", "lambda=0.2", "--seed", "7"]),
    ("sdr-default", ["hospital:3000", "--sensitive", "diagnosis", "--mechanism", "sdr", "--seed", "1"]),
    ("sdr-rho", ["census:3000", "--sensitive", "occupation", "--mechanism", "sdr", "--param", "rho2=0.3",
                 "--seed", "7"]),
    ("splu-default", ["adult", "--sensitive", "occupation", "--mechanism", "splu", "--seed", "1"]),
    ("splu-gamma", ["census:3000", "--sensitive", "occupation", "--mechanism", "splu", "--param", "gamma=7",
                    "--param", "partition=sorted", "--seed", "7"]),
    ("bucketization-default", ["census:3000", "--sensitive", "occupation", "--mechanism", "bucketization",
                               "--seed", "1", "--out-folder"]),
    ("bucketization-theta", ["census:3000", "--sensitive", "occupation", "--mechanism", "bucketization",
                             "--param", "theta=4", "--seed", "7", "--out-folder"]),
    ("anatomy-default", ["census:3000", "--sensitive", "occupation", "--mechanism", "anatomy", "--seed", "1",
                         "--out-folder"]),
    ("anatomy-l", ["adult", "--sensitive", "occupation", "--mechanism", "anatomy", "--param", "l=5", "--seed", "7",
                   "--out-folder"]),
    ("ambiguity-default", ["census:2000", "--sensitive", "occupation", "--mechanism", "ambiguity", "--seed", "1",
                           "--out-folder"]),
    ("ambiguity-toy", ["toy-ambiguity", "--sensitive", "disease", "--mechanism", "ambiguity", "--param", "beta=1/3", "--seed", "7",
                       "--out-folder"]),
    ("dbr-default", ["census:3000", "--sensitive", "occupation", "--mechanism", "dbr", "--seed", "1"]),
    ("dbr-banded", ["adult", "--sensitive", "occupation", "--band", "age=10", "--mechanism", "dbr", "--seed", "7"]),
    ("priview-default", ["census:2000", "--sensitive", "occupation", "--mechanism", "priview", "--seed", "1",
                         "--out-folder"]),
    ("priview-toy", ["toy-ambiguity", "--sensitive", "disease", "--mechanism", "priview", "--param", "beta=1/3", "--param", "alpha=1/3", "--seed", "7",
                     "--out-folder"]),
    ("laplace-default", ["census:3000", "--sensitive", "occupation", "--mechanism", "laplace", "--seed", "1"]),
    ("laplace-eps", ["adult", "--sensitive", "occupation", "--mechanism", "laplace", "--param", "epsilon=0.1",
                     "--seed", "7"]),
    ("mondrian-default", ["census:3000", "--sensitive", "occupation", "--mechanism", "mondrian", "--seed", "1",
                          "--out-folder"]),
    ("mondrian-kl", ["adult", "--sensitive", "occupation", "--mechanism", "mondrian", "--param", "k=20",
                     "--param", "l=3", "--seed", "7", "--out-folder"]),
    ("splu-parquet", ["toy-splu", "--sensitive", "disease", "--mechanism", "splu", "--param", "gamma=2",
                      "--seed", "3", "--parquet"]),
]

EVALUATE = [
    ("evaluate-uniform", ["census:3000", "--sensitive", "occupation", "--mechanism", "uniform", "--queries", "200",
                          "--seed", "2", "--json"]),
    ("evaluate-splu", ["adult", "--sensitive", "occupation", "--mechanism", "splu", "--queries", "200",
                       "--seed", "2", "--json"]),
]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def _run(argv: list[str]) -> tuple[int, str, str]:
    from core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _session_file(folder: Path) -> Path:
    """A session on the sample census:2000 with two pins and a decision for the first (core.session)."""
    from core import session as S
    from core.table import load_table

    table = load_table("census:2000")
    pins = (S.Pin("SPLU seven", S.Setting("splu", {"gamma": 7}, 4)),
            S.Pin("UP", S.Setting("uniform", {"p": None, "rho2": 0.2}, 4)))
    decision = S.make_decision("SPLU seven", pins, "Small counts hidden.", ["Ann"], "2026-11-27",
                               {"SPLU seven": "meets", "UP": "fails"})
    session = S.Session(S.TableRef("sample", "census:2000", table.content_hash, len(table)), "occupation",
                        ("age", "sex", "education"), S.Setting("splu", {"gamma": 7}, 4), {"splu": {"gamma": 7}},
                        pins, (), decision, {"age": {"method": "width", "width": 10}})
    path = folder / "input.workbench.json"  # an input: not hashed
    path.write_text(S.dumps(session), encoding="utf-8")
    return path


def run_case(kind: str, args: list[str], folder: Path) -> dict[str, str]:
    """The hashes of what one case writes (sanitize, session) or prints (evaluate)."""
    if kind == "session":
        args = ["--session", str(_session_file(folder)), *args]
        kind = "sanitize"
    if kind == "evaluate":
        code, out, err = _run(["evaluate", *args])
        assert code == 0, err
        return {"stdout": _sha(out.encode())}
    args = list(args)
    target = folder / "release.csv"
    if "--out-folder" in args:
        args.remove("--out-folder")
        target = folder / "release"
    if "--parquet" in args:
        args.remove("--parquet")
        target = folder / "release.parquet"
    code, out, err = _run(["sanitize", *args, "--out", str(target)])
    assert code in (0, 3), err
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".workbench.json"))
    assert files, f"nothing written: {err}"
    return {str(p.relative_to(folder)): _sha(p.read_bytes()) for p in files}


SESSION = [
    ("session-decision", []),
    ("session-override", ["--mechanism", "uniform", "--seed", "5"]),
]

CASES = ([("sanitize", cid, a) for cid, a in SANITIZE] + [("evaluate", cid, a) for cid, a in EVALUATE]
         + [("session", cid, a) for cid, a in SESSION])


@pytest.mark.slow
@pytest.mark.parametrize("kind,case,args", CASES, ids=[c[1] for c in CASES])
def test_release_bytes_unchanged(kind, case, args, tmp_path):
    expected = json.loads(CORPUS.read_text())[case]
    assert run_case(kind, args, tmp_path) == expected


if __name__ == "__main__":  # python tests/test_release_corpus.py --write
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    if "--write" not in sys.argv:
        sys.exit("give --write to regenerate tests/release_corpus.json")
    corpus = {}
    for kind, case, args in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            corpus[case] = run_case(kind, args, Path(tmp))
        print(case, corpus[case], file=sys.stderr)
    CORPUS.write_text(json.dumps(corpus, indent=1, sort_keys=True) + "\n")
