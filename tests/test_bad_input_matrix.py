"""Issue 12's bad-input matrix: one table of cases, run through the CLI and through every page.

Each case is bad (or odd) input.  Through the CLI (in process, as
``python -m core`` runs it) it must exit 2 with exactly one line on stderr,
no traceback and nothing written; through the app (AppTest) it must show
one error element on the page where it is given, no exception on any page;
and in both, a good input given next in the same session must work.

The contract is asserted, not the wording: the file reader is being
rewritten (issue 14), and files it will read instead of refusing (UTF-16,
Latin-1, an Excel file, odd delimiters) are ``either`` cases: they load, or
they are refused with one clear sentence.  Cases that are odd but valid
(formula and link text, option-like column names) are ``works`` cases: they
must load, and what they carry is shown as text.
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from conftest import app, no_exception, upload
from test_cli import run_inprocess

HUGE = "x" * 100_000  # a 100 KB value: messages echo at most 80 characters of it


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


_rng = np.random.default_rng(12)
N = 120


def _table(**extra) -> pd.DataFrame:
    base = {"age": _rng.integers(20, 70, N), "sex": _rng.choice(["F", "M"], N),
            "s": _rng.choice(["flu", "cold", "gout", "asthma"], N)}
    base.update(extra)
    return pd.DataFrame(base)


GOOD = _csv(_table())


def _parquet_binary() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"age": pa.array(list(range(20, 20 + N))),
                      "blob": pa.array([bytes([0xff, 0xfe, i % 7]) for i in range(N)], type=pa.binary()),
                      "s": pa.array(list(_rng.choice(["flu", "cold", "gout"], N)))})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _xlsx() -> bytes:
    buf = io.BytesIO()
    _table().to_excel(buf, index=False)
    return buf.getvalue()


@dataclass(frozen=True)
class Case:
    """One row of the matrix.

    ``content`` is a file (CLI: DATA; pages: uploaded on Home) or None for
    a sample.  ``argv`` replaces the CLI's default tail (``--sensitive s
    --mechanism uniform``); ``{file}`` stands for the file's path.
    ``outcome``: ``refused`` (exit 2, one error), ``either`` (loads, or one
    clear sentence) or ``works``.  ``page``: how the pages get it
    (``upload``, ``link`` with ``query``, ``text`` with ``text``), or None
    when the case is about the command line only.
    """

    id: str
    content: bytes | None = None
    filename: str = "in.csv"
    argv: tuple = ()
    sa: str = "s"
    outcome: str = "refused"
    page: str | None = "upload"
    query: dict = field(default_factory=dict)
    text: tuple = ()  # (mechanism, parameter, value) typed into a text parameter on Sanitize
    mentions: str = ""  # a fragment the CLI message must carry (only where this helper owns the wording)


S = ("--sensitive", "s")
SAN = ("sanitize", "{file}", *S, "--mechanism", "uniform", "--seed", "1", "--out", "o.csv")
ADULT = ("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "uniform", "--out", "o.csv")
EVAL = ("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "uniform")
TRADE = ("tradeoff", "toy-sdr", "--sensitive", "sa", "--mechanisms", "laplace", "--queries", "40")
RECOMMEND = ("recommend", "toy-sdr", "--sensitive", "sa", "--mechanisms", "laplace", "--queries", "40",
             "--records", "40")
REPORT = ("report", "toy-splu", "--sensitive", "disease", "--mechanism", "uniform", "--mechanisms", "laplace",
          "--queries", "40", "--records", "20", "--out", "r.html")

CASES = [
    # ------------------------------------------------------------ files
    Case("empty file", b""),
    Case("header only", b"age,sex,s\n"),
    Case("one column", b"s\nflu\ncold\n"),
    Case("binary junk", b"\x00\xff\xfe junk \x00" * 50),
    Case("ragged rows", b"age,sex,s\n30,F,flu\n31,M,cold,extra,more\n32,F,gout\n"),
    Case("duplicate names", b"age,age,s\n30,31,flu\n32,33,cold\n34,35,gout\n"),
    Case("column without a name", b"age,,s\n30,1,flu\n32,2,cold\n34,3,gout\n"),
    Case("every row missing a value", b"age,sex,s\n30,,flu\n,F,\n31,M,\n"),
    Case("utf-16", _table().to_csv(index=False).encode("utf-16"), outcome="either"),
    Case("latin-1", _csv(_table(s=_rng.choice(["café", "señal", "nod"], N))).decode().encode("latin-1"),
         outcome="either"),
    Case("semicolons", _table().to_csv(index=False, sep=";").encode(), outcome="either"),
    Case("excel", _xlsx(), filename="in.xlsx", outcome="either"),
    Case("parquet with a binary column", _parquet_binary(), filename="in.parquet", outcome="either"),
    Case("not parquet", b"PAR1 this is not parquet" * 10, filename="in.parquet"),
    # ------------------------------------------------------------ columns
    Case("one-valued SA", _csv(_table(s=["x"] * N))),
    Case("identifier SA", _csv(_table(s=[f"id{i}" for i in range(N)]))),
    Case("unknown SA", GOOD, argv=("--sensitive", "nope", "--mechanism", "uniform", "--out", "o.csv"), page=None),
    Case("100 KB SA name", GOOD, argv=("--sensitive", HUGE, "--mechanism", "uniform", "--out", "o.csv"), page=None),
    Case("unknown QI", GOOD, argv=(*S, "--qi", "age", "--qi", "nope", "--mechanism", "uniform", "--out", "o.csv"),
         page=None),
    Case("SA also a QI", GOOD, argv=(*S, "--qi", "age,s", "--mechanism", "uniform", "--out", "o.csv"), page=None),
    Case("option-like QI without =", _csv(_table(**{"-dx": _rng.choice(["a", "b"], N)})),
         argv=(*S, "--qi", "-dx", "--mechanism", "uniform", "--out", "o.csv"), page=None),
    # odd but valid: named on the command line as README says, shown as text on the pages
    Case("option-like and comma names", _csv(_table(**{"-dx": _rng.choice(["a", "b"], N),
                                                          "--manifest=m.json": _rng.choice(["a", "b"], N),
                                                          "a,b": _rng.choice(["a", "b"], N)})),
         argv=(*S, "--qi=-dx", "--qi=--manifest=m.json", "--qi", "a\\,b", "--mechanism", "uniform", "--seed", "1",
               "--out", "o.csv"), outcome="works"),
    Case("formula and link text", _csv(_table(**{
        "https://evil.example/col": _rng.choice(["=HYPERLINK(\"https://evil.example\")", "+1", "@SUM(A1)",
                                                  "[click](https://evil.example)", "<a href='https://e.x'>a</a>",
                                                  "www.evil.example", "bob@evil.example"], N)})),
         argv=(*S, "--qi", "age,https://evil.example/col", "--mechanism", "uniform", "--seed", "1", "--out", "o.csv"),
         outcome="works"),
    # ------------------------------------------------------------ limits
    Case("over the row limit", "limit", page="upload"),
    Case("no such file", None, argv=("sanitize", "missing.csv", *S, "--mechanism", "uniform", "--out", "o.csv"),
         page=None),
    Case("a folder as DATA", None, argv=("sanitize", ".", *S, "--mechanism", "uniform", "--out", "o.csv"), page=None),
    Case("unknown sample", None, argv=("sanitize", "adulty", *S, "--mechanism", "uniform", "--out", "o.csv"),
         page="link", query={"data": "adulty"}),
    Case("census:0", None, argv=("sanitize", "census:0", "--sensitive", "occupation", "--mechanism", "uniform",
                                 "--out", "o.csv"), page=None),  # a link's census:0 falls back to 500,000 rows
    Case("census:1e12", None, argv=("sanitize", "census:999999999999", "--sensitive", "occupation", "--mechanism",
                                    "uniform", "--out", "o.csv"), page=None),
    # ------------------------------------------------------------ parameters
    # the pages read a link's values in one place (pages.ui.state): two variants there, all of them on the CLI
    *[Case(f"p={v[:10]}", None, argv=(*ADULT, "--param", f"p={v}"), page="link" if v in ("nan", HUGE) else None,
           query={"mech": "uniform", "p": v}) for v in ("nan", "inf", "-inf", "1e999", "2", "abc", HUGE)],
    *[Case(f"gamma={v}", None, argv=(*ADULT[:-4], "--mechanism", "splu", "--param", f"gamma={v}", "--out", "o.csv"),
           page="link" if v == "1e308" else None, query={"mech": "splu", "gamma": v})
      for v in ("1e308", "99999999999999999999", "2.5", "nan")],
    Case("parameter without =", None, argv=(*ADULT, "--param", "p"), page=None),
    Case("parameter without a key", None, argv=(*ADULT, "--param", "=3"), page=None),
    Case("unknown parameter", None, argv=(*ADULT, "--param", "gama=3"), page=None),
    Case("parameter given twice", None, argv=(*ADULT, "--param", "p=0.5", "--param", "p=0.6"), page=None),
    Case("100 KB parameter name", None, argv=(*ADULT, "--param", HUGE + "=1"), page=None),
    Case("unknown mechanism", None, argv=("sanitize", "adult", "--sensitive", "occupation", "--mechanism", HUGE,
                                          "--out", "o.csv"), page="link", query={"mech": HUGE}),
    Case("ineligible setting", None, argv=(*ADULT[:-4], "--mechanism", "anatomy", "--param", "l=12", "--out", "o"),
         page="link", query={"mech": "anatomy", "l": "12"}),
    # a text parameter: a number where a column name goes (the '0.0' crash), a 100 KB value, a link
    *[Case(f"splu sa2={label}", None,
           argv=(*ADULT[:-4], "--mechanism", "splu", "--param", f"sa2={v}", "--out", "o.csv"), page="text",
           text=("splu", "sa2", v), query={"data": "toy-splu", "sa": "disease", "mech": "splu", "gamma": "2"})
      for label, v in (("0.0", "0.0"), ("100 KB", HUGE),
                                                     ("a link", "https://evil.example/x"))],
    Case("bucketization overrides=junk", None,
         argv=(*ADULT[:-4], "--mechanism", "bucketization", "--param", "overrides=" + HUGE, "--out", "o"),
         page="text", text=("bucketization", "overrides", HUGE),
         query={"data": "toy-bucket", "sa": "disease", "mech": "bucketization"}),
    # ------------------------------------------------------------ flags
    *[Case(f"{args[0]} --seed {v}", None, argv=(*args, "--seed", v),
           page="link" if args is ADULT and v in ("-1", "abc") else None,
           query={"seed": v}, mentions="seed must be a whole number")
      for v in ("-1", "2147483648", "1.5", "abc") for args in (ADULT, TRADE, REPORT)],
    *[Case(f"{flag} twice", None, argv=(*args, flag, a, flag, b), page=None, mentions="given twice")
      for flag, a, b, args in (("--out", "a.csv", "b.csv", ADULT), ("--seed", "1", "2", ADULT),
                               ("--mechanism", "uniform", "dbr", ADULT), ("--sensitive", "occupation", "sex", ADULT),
                               ("--sa", "occupation", "occupation", ADULT), ("--queries", "100", "200", EVAL),
                               ("--workload", "seed000", "seed002", EVAL), ("--records", "10", "20", TRADE),
                               ("--manifest", "a.json", "b.json", ADULT))],
    Case("--queries 0", None, argv=(*EVAL, "--queries", "0"), page="link", query={"wl.queries": "0"}),
    Case("tradeoff --queries 0", None, argv=(*TRADE[:-2], "--queries", "0"), page="link", query={"to.queries": "0"}),
    Case("--queries huge", None, argv=("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "uniform",
                                       "--queries", "10000000000"), page="link", query={"wl.queries": "10000000000"}),
    Case("--queries abc", None, argv=("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "uniform",
                                      "--queries", "abc"), page=None),
    Case("unknown workload", None, argv=(*EVAL, "--queries", "200", "--workload", HUGE), page="link", query={"wl": HUGE}),
    Case("bad workload setting", None, argv=(*EVAL, "--queries", "200", "--workload-param", "max_attrs=nan"), page="link",
         query={"wl.max_attrs": "nan"}),
    Case("--max-attrs 0", None, argv=(*EVAL, "--queries", "200", "--max-attrs", "0"), page=None),
    Case("--records 0", None, argv=(*TRADE, "--records", "0"), page="link", query={"to.records": "0"}),
    Case("--mechanisms unknown", None, argv=(*TRADE, "--mechanisms", "nope"), page="link", query={"cmp": "nope"}),
    *[Case(f"recommend {flag} {v}", None, argv=(*RECOMMEND, flag, v), page=None)
      for flag, v in (("--small-privacy", "nan"), ("--small-privacy", "2"), ("--large-error", "inf"),
                      ("--max-lift", "nan"), ("--selectivity", "5"), ("--selectivity", "nan"))],
    Case("report into a missing folder", None, argv=(*REPORT[:-1], "no/such/dir/r.html"), page=None),
    Case("--out with a wrong extension", None,
         argv=("sanitize", "toy-splu", "--sensitive", "disease", "--mechanism", "splu", "--param", "gamma=2",
               "--out", "x.txt"), page=None),
    Case("--out a file for several tables", None,
         argv=("sanitize", "toy-bucket", "--sensitive", "disease", "--mechanism", "bucketization", "--out", "x.csv"),
         page=None),
    Case("bound unknown", None, argv=("bound", HUGE), page="link", query={"bound": HUGE}),
    Case("bound bad parameter", None, argv=("bound", "retention", "--param", "rho1=0.5", "--param", "rho2=0.1"),
         page="link", query={"bound": "retention", "bound.rho1": "0.5", "bound.rho2": "0.1"}),
    Case("bound nan", None, argv=("bound", "splu-utility", "--param", "gamma=nan"), page="link",
         query={"bound": "splu-utility", "bound.gamma": "nan"}),
    Case("unknown command", None, argv=("frobnicate",), page=None),
    Case("missing --sensitive", None, argv=("sanitize", "adult", "--mechanism", "uniform", "--out", "o.csv"),
         page=None),
    Case("unknown option", None, argv=(*ADULT, "--frobnicate"), page=None),
]

IDS = [c.id[:40] for c in CASES]
assert len(set(IDS)) == len(IDS), "case ids must be unique"


# ================================================================== the command line
def _limit_rows(monkeypatch, rows: int) -> None:
    """Lower the row limit in every loaded module that keeps one (the reader may live in core.table or core.data)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("core") and hasattr(module, "MAX_ROWS"):
            monkeypatch.setattr(module, "MAX_ROWS", rows)


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[:2000]
    assert "Traceback" not in err and "internal error" not in err, err[:2000]
    assert len(lines[0]) < 1200, f"{len(lines[0])} characters: {lines[0][:300]}"
    return lines[0]


@pytest.mark.slow  # about 13 s over its cases (Adult loaded once, one good command after each)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cli(case, tmp_path, monkeypatch):
    content = case.content
    if content == "limit":
        _limit_rows(monkeypatch, 50)
        content = GOOD
    path = None
    if content is not None:
        path = tmp_path / case.filename
        path.write_bytes(content)
    before = set(tmp_path.iterdir())
    if content is not None:  # argv is what follows DATA (default: --sensitive s --mechanism uniform ...)
        argv = ["sanitize", str(path), *(case.argv or SAN[2:])]
    else:
        argv = list(case.argv)
    proc = run_inprocess(*argv, cwd=tmp_path)
    if case.outcome == "works" or (case.outcome == "either" and proc.returncode == 0):
        assert proc.returncode == 0, proc.stderr
        assert not proc.stderr.strip() or "Traceback" not in proc.stderr
    else:
        assert proc.returncode == 2, (proc.returncode, proc.stderr[:2000])
        line = _one_line(proc.stderr)
        assert HUGE[:200] not in line  # echoed input is cut
        assert case.mentions in line
        assert set(tmp_path.iterdir()) == before, "a refused command wrote a file"
    # the same process takes a good command next
    good = run_inprocess("sanitize", "toy-splu", "--sensitive", "disease", "--mechanism", "uniform", "--seed", "1",
                         "--out", "good.csv", cwd=tmp_path)
    assert good.returncode == 0, good.stderr
    assert (tmp_path / "good.csv").exists()


def test_works_cases_write_text_not_formulas(tmp_path):
    """Formula text is neutralised in the exported CSV; link text stays plain text."""
    case = next(c for c in CASES if c.id == "formula and link text")
    (tmp_path / "in.csv").write_bytes(case.content)
    proc = run_inprocess("sanitize", tmp_path / "in.csv", *case.argv, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "o.csv").read_text()
    assert not re.search(r"(^|,)[=+@]", text, re.M), text[:500]


# ================================================================== the pages
PAGES = ["pages/0_Home.py", "pages/1_Sanitize.py", "pages/2_Bounds.py", "pages/3_Query_error.py",
         "pages/4_Attacks.py", "pages/5_Trade-offs.py", "pages/6_Guided_tour.py", "pages/7_Compare.py"]
PAGE_CASES = [c for c in CASES if c.page]
PAGE_IDS = [c.id[:40] for c in PAGE_CASES]


def _session():
    """A fresh session opened on a small bundled table (Home on Adult computes every mechanism's verdict: 10 s)."""
    return app(query={"data": "toy-sdr", "sa": "sa"})


def _upload(at, name: str, content: bytes):
    """Upload on Home and press "Use this table" when the preview offers it (conftest.upload)."""
    at.switch_page("pages/0_Home.py").run()
    return upload(at, name, content)


def _messages(at) -> list[str]:
    return [e.value for e in at.error]


def _shown_text(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success"):
        parts += [str(getattr(e, "value", "")) for e in at.get(kind)]
    return "\n".join(parts)


def _no_live_links(at) -> None:
    """Markdown on the page carries no link the user's data made: no [..](..), no bare URL GFM would link."""
    text = _shown_text(at)
    assert not re.search(r"(?<!\\)\]\(", text), text[:500]
    for m in re.finditer(r"(?i)(https?://|www\.|\w@\w)", text):
        raise AssertionError(f"an autolink in the page's Markdown: {text[max(0, m.start() - 60):m.end() + 60]!r}")


def _visit_every_page(at, allow_errors: int = 1) -> list[str]:
    """Run every page: no exception, at most one error each, no 100 KB echo; return the errors and warnings seen."""
    seen = []
    for page in PAGES:
        at.switch_page(page).run()
        no_exception(at)
        assert len(at.error) <= allow_errors, (page, _messages(at))
        shown = _messages(at) + [w.value for w in at.warning]
        assert all(HUGE[:200] not in msg for msg in shown), page
        seen += shown
    return seen


def _recover(at) -> None:
    """A good table next, in the same session: Home has no error and Sanitize shows a release."""
    _upload(at, "good.csv", GOOD)
    no_exception(at)
    at.selectbox(key="w_sa").set_value("s").run()
    assert not at.error, _messages(at)
    at.switch_page("pages/1_Sanitize.py").run()
    at.selectbox(key="w_mech").set_value("uniform").run()
    no_exception(at)
    assert not at.error, _messages(at)
    assert at.get("plotly_chart"), "no release chart after a good upload"


@pytest.mark.slow
@pytest.mark.parametrize("case", PAGE_CASES, ids=PAGE_IDS)
def test_pages(case, monkeypatch):
    content = case.content
    if content == "limit":
        _limit_rows(monkeypatch, 50)
        content = GOOD
    if case.page == "upload":
        at = _upload(_session(), case.filename, content)
        no_exception(at)
        if case.outcome == "works":
            assert not at.error, _messages(at)
        elif case.outcome == "either":
            assert len(at.error) <= 1, _messages(at)
        else:
            if not at.error and "w_sa" in [getattr(w, "key", None) for w in at.selectbox]:
                at.selectbox(key="w_sa").set_value(case.sa).run()  # a column problem shows once the SA is chosen
            assert len(at.error) == 1, _messages(at)
        _no_live_links(at)
        _visit_every_page(at)
    elif case.page == "link":
        # on a small bundled table unless the case is about the table: every page runs fast on it
        query = case.query if "data" in case.query else {"data": "toy-sdr", "sa": "sa", **case.query}
        at = app("pages/1_Sanitize.py", query=query)
        no_exception(at)
        shown = _messages(at) + [w.value for w in at.warning]
        assert all(HUGE[:200] not in s for s in shown)
        # said on the page that opens the link, or on the page that uses the value (a curve's rho1 > rho2: Bounds)
        shown += _visit_every_page(at)
        assert shown, "the link's bad value was used or dropped without a word"
    else:  # a text parameter typed on Sanitize
        mech, name, value = case.text
        at = app("pages/1_Sanitize.py", query=case.query)
        at.checkbox(key=f"w_m_{mech}_{name}__auto").uncheck().run()
        no_exception(at)
        assert at.text_input(key=f"w_m_{mech}_{name}").value == "", "a text parameter must start empty"
        assert not at.error
        at.text_input(key=f"w_m_{mech}_{name}").input(value).run()
        no_exception(at)
        shown = _messages(at) + [w.value for w in at.warning]
        assert len(shown) == 1, shown
        assert HUGE[:200] not in shown[0]
        _no_live_links(at)
        at.checkbox(key=f"w_m_{mech}_{name}__auto").check().run()
        no_exception(at)
        assert not at.error
    monkeypatch.undo()  # the good input next is within the limits
    _recover(at)


@pytest.fixture(autouse=True)
def _fresh_caches(request):
    """The row-limit case starts from empty Streamlit caches (a cached upload of the same bytes skips the check).

    The other cases share the caches on purpose: the good table's results
    are computed once for the whole matrix, which keeps it fast.
    """
    if "row limit" not in request.node.name:
        yield
        return
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()
