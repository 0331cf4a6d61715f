"""Command line: ``python -m core inspect | sanitize | evaluate | bound | tradeoff | recommend | report | list``.

The same core as the pages, for scripts, batch jobs and reproducing a
release from its manifest.  Bad input exits with status 2 and one line on
stderr; nothing else is printed and no traceback is shown.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any, Sequence

from . import __version__
from .errors import clip
from .guarantee import EXIT_NOT_MET
from .params import format_value


class _UsageError(Exception):
    pass


class _Once(argparse.Action):
    """Store an option's value, refusing the option when it is given a second time.

    argparse keeps the last of ``--seed 1 --seed 2`` without a word; a value
    the user typed must be used or reported, so a second ``--seed`` (or
    ``--sa`` after ``--sensitive``: same destination) is refused with one
    sentence.  Every option added with the default ``store`` action gets
    this one (see :meth:`_Parser.add_argument`).
    """

    def __call__(self, parser, namespace, values, option_string=None):
        values = _dashdash(self, values)
        given = namespace.__dict__.setdefault("_given", {})
        if self.dest in given:
            first, flag = given[self.dest]
            repeatable = [a.option_strings[0] for a in parser._actions
                          if isinstance(a, (_Names, argparse._AppendAction, argparse._ExtendAction))]
            raise _UsageError(
                f"{parser.prog}: {flag} is given twice ({flag} {clip(first)} and {option_string} {clip(values)}); "
                "give it once (" + (f"only {', '.join(repeatable[:-1])} and {repeatable[-1]}" if len(repeatable) > 1
                                    else f"only {repeatable[0]}" if repeatable else "no option") + " can be repeated)."
            )
        given[self.dest] = (values, option_string)
        setattr(namespace, self.dest, values)


class _Names(argparse.Action):
    r"""A repeatable list of names: ``--qi a --qi b``, ``--qi a,b`` and ``--qi a b`` all give ``[a, b]``.

    Each value is split on commas; ``\,`` is a comma inside a name and
    ``\\`` a backslash (see :func:`split_names`), so any column name can be
    given.  Values accumulate over repeated flags (argparse's plain
    ``nargs="+"`` kept only the last ``--qi``).
    """

    def __call__(self, parser, namespace, values, option_string=None):
        names = list(getattr(namespace, self.dest, None) or [])
        for value in _dashdash(self, values):
            names += split_names(value)
        setattr(namespace, self.dest, names)


def _dashdash(action: argparse.Action, values):
    """Undo argparse's removal of ``--`` from ``--opt=--`` (Python 3.11 strips it, leaving no value).

    An option that takes one value (or one or more) can only arrive empty
    that way, so the value was the text ``--`` (a column may be named so).
    """
    if isinstance(values, list) and not values and action.nargs in (None, "+"):
        return "--" if action.nargs is None else ["--"]
    return values


def split_names(text: str) -> list[str]:
    r"""Split one ``--qi`` value into names: commas separate, ``\,`` is a comma, ``\\`` a backslash.

    Blanks around names are dropped (``"age, sex"``), as are empty names.

    >>> split_names("age,sex"), split_names(r"a\,b,c"), split_names(r"x\\,y")
    (['age', 'sex'], ['a,b', 'c'], ['x\\', 'y'])
    """
    names, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in ",\\":
            cur.append(text[i + 1])
            i += 2
            continue
        if ch == ",":
            names.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    names.append("".join(cur))
    return [n.strip() for n in names if n.strip()]


def join_name(name: str) -> str:
    """The ``--qi`` value that :func:`split_names` reads back as exactly ``name`` (one name)."""
    return name.replace("\\", "\\\\").replace(",", "\\,")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump), exit status 2, and no silent repeats.

    An option added with the default ``store`` action is stored once
    (:class:`_Once`): given twice, it is refused rather than the last value
    winning silently.
    """

    def add_argument(self, *args, **kwargs):
        if args and args[0].startswith("-") and kwargs.get("action") in (None, "store"):
            kwargs["action"] = _Once
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> None:  # noqa: D401 - argparse API
        raise _UsageError(f"{self.prog}: {clip(message, 300)} (see --help)")


def _cached(name: str):
    """The help text ``name`` from :mod:`core._helptext` (no mechanism imported), else built (see core.registry)."""
    import functools

    def wrap(build):
        @functools.wraps(build)
        def text() -> str:
            from .registry import help_text

            return help_text(name, build)
        return text
    return wrap


@_cached("mechanisms")
def _mechanism_help() -> str:
    from .mechanisms import MECHANISMS

    lines = ["mechanisms and their parameters (--param key=value; fractions like 1/13 and ln(3) are accepted):"]
    for mech in MECHANISMS.values():
        lines.append(f"  {mech.name:<15}{mech.title}  [{mech.paper}]")
        if not mech.params:
            lines.append("      (no parameters)")
        for p in mech.params:
            default = ("derived" if p.kind in {"int", "float"} else "unset") if p.default is None else _fmt(p.default)
            lines.append(f"      {p.name:<12}{p.describe()}, default {default}: {p.help}")
    return "\n".join(lines)


@_cached("bounds")
def _bound_help() -> str:
    from .bounds import BOUNDS

    lines = ["analytical curves (bound NAME --param key=value):"]
    for b in BOUNDS.values():
        lines.append(f"  {b.name:<26}{b.title}  [{b.paper}]")
        for p in b.params:
            lines.append(f"      {p.name:<12}{p.describe()}, default {_fmt(p.default)}: {p.help}")
    return "\n".join(lines)


@_cached("workloads")
def _workload_help() -> str:
    from .workloads import WORKLOADS

    lines = ["workloads (--workload KIND; --queries sets the size, --workload-param key=value the rest):"]
    for w in WORKLOADS.values():
        lines.append(f"  {w.name:<15}{w.title}  [{w.paper}]")
        for p in w.params:
            lines.append(f"      {p.name:<12}{p.describe()}, default {_fmt(p.default)}: {p.help}")
    return "\n".join(lines)


@_cached("samples")
def _sample_help() -> str:
    from . import samples

    lines = ["DATA is a data file (delimited text with any delimiter, Excel .xlsx, Parquet, Feather/Arrow, SPSS .sav, "
             "Stata .dta, SAS .sas7bdat/.xpt: the content decides, see `inspect`), or a bundled sample:"]
    for s in samples.list_samples():
        name = s.name + (f"[:N] (default N = {s.default_size:,})" if s.sized else "")
        lines.append(f"  {name:<36}{s.title}")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    return format_value(value)


QI_HELP = ("QI / non-sensitive columns, repeatable: --qi age --qi sex, --qi age,sex and --qi age sex all name "
           "both (default: the sample's choice or every other suitable column). A comma inside a name is written "
           "\\, and a backslash \\\\ (--qi 'a\\,b' names the column a,b); a name starting with '-' is given "
           "as --qi=-name")


def _rows(text: str) -> int:
    """argparse type of ``generate --rows``: a whole number, ``_`` or ``,`` allowed as thousands separators."""
    from .params import parse_whole

    value = parse_whole(text.strip().replace("_", "").replace(",", ""))
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"--rows must be a whole number of rows, at least 1. Got '{clip(text)}'.")
    return value


def cmd_generate(args) -> dict[str, Any]:
    from .data.generate import generate

    out = generate(args.generator, args.rows, args.out, args.seed)
    out["_text"] = (f"wrote {out['rows']:,} rows to {args.out} ({len(out['files'])} parts) in "
                    f"{out['seconds']:.1f} s ({out['rows_per_second']:,.0f} rows/s)")
    return out


def _randomness(text: str) -> int:
    """argparse type of ``--randomness``: a whole number (a version of core.rng)."""
    from .params import parse_whole

    value = parse_whole(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"--randomness takes a whole number (a randomness version), not "
                                         f"'{clip(text)}'")
    return value


def _risk_limit(text: str) -> str:
    """argparse type of ``--max-risk``: kept as typed; read and range-checked by :func:`_risk_options`.

    Checked there, not here, so that a repeated ``--max-risk`` is refused
    as given twice before either value is judged.
    """
    return text


def _seed(text: str) -> int:
    """argparse type of ``--seed``: a whole number the release's generator accepts (see core.mechanisms.check_seed)."""
    from .mechanisms import check_seed
    from .params import parse_whole

    value = parse_whole(text)  # ASCII digits only: not 1_000, not another script's digits
    try:
        return check_seed(value if value is not None else text)  # check_seed refuses anything but an int
    except Exception as exc:
        raise argparse.ArgumentTypeError(f"{str(exc).rstrip('.')} (in the digits 0-9).") from None


def build_parser() -> argparse.ArgumentParser:
    from .registry import MAX_SEED

    from .errors import STATUS_HELP

    epilog = "\n\n".join([_sample_help(), _mechanism_help(), _workload_help(), _bound_help(), STATUS_HELP])
    parser = _Parser(
        prog="python -m core",
        description="Privacy-utility workbench: sanitize a table, measure count-query error, "
                    "and compute the papers' analytical bounds.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def data_args(p: argparse.ArgumentParser, session: bool = False) -> None:
        # with --session (sanitize) DATA, --sensitive and --mechanism may come from the session file
        p.add_argument("data", metavar="DATA", nargs="?" if session else None,
                       help="file path or sample name (adult, census:N, hospital:N, toy-...)"
                            + ("; with --session: the session's table unless given" if session else ""))
        read_args(p)
        p.add_argument("--sensitive", "--sa", required=not session, metavar="COL", help="sensitive attribute column")
        p.add_argument("--qi", nargs="+", action=_Names, metavar="COL", help=QI_HELP)
        p.add_argument("--band", action="append", default=[], metavar="COL=SPEC",
                       help="band a numeric QI column (repeat for several): COL=W equal width W (age=10), COL=qK K quantile "
                            "bands (age=q5), COL=A,B,C cut points (age=18,25,35,50,65; one cut: age=cuts:40)")
        p.add_argument("--mechanism", required=not session, metavar="NAME", help="see the list below")
        p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="a mechanism parameter")
        p.add_argument("--seed", type=_seed, metavar="N",
                       help=f"random seed, a whole number from 0 to {MAX_SEED:,} (default: fresh, and printed: "
                            "recorded in the manifest by sanitize, in the output by evaluate)")
        p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("sanitize", help="sanitize a table and write the release and its manifest",
                       epilog=_mechanism_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    data_args(p, session=True)
    engine_args(p)
    p.add_argument("--session", metavar="FILE",
                   help="a session file saved on the Home page (.workbench.json or .zip): its table, columns, "
                        "mechanism, parameters and seed; flags given beside it override and say so")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="output .csv or .parquet (a folder for mechanisms that publish several tables)")
    p.add_argument("--manifest", metavar="FILE", help="manifest path (default: beside the output)")
    p.add_argument("--overwrite", action="store_true",
                   help="let --out replace a folder the workbench did not write (a folder of yours is otherwise "
                        "refused unless it is empty); the input and the manifest are never overwritten")
    p.add_argument("--randomness", type=_randomness, metavar="N",
                   help="the randomness version the release was drawn with (a manifest's reproduce command gives "
                        "it): refused when this workbench draws differently, instead of writing a different "
                        "release; with --session, this version's number writes its release of an older session")
    p.add_argument("--max-risk", type=_risk_limit, metavar="R",
                   help="write nothing and exit with status 3 (one line on stderr) unless the release's measured "
                        "risk (the added risk of core.risk: attribute inference against a held-out control set) has "
                        "a 95%% interval whose upper end is at most R, in [0, 1]; refused too when the risk cannot "
                        "be measured")
    p.add_argument("--no-risk", action="store_true",
                   help="do not measure the release's risk (the manifest then says it was turned off); the risk is "
                        "measured by default on tables of at most 1,000,000 records, in about a second on Adult")
    p.add_argument("--require-guarantee", action="store_true",
                   help="write nothing and exit with status 3 (one line on stderr: what fails and the nearest "
                        "setting that meets it) unless the release meets its mechanism's own guarantee plainly: on "
                        "every record, for every value (none outside its scope), non-vacuously")

    p = sub.add_parser("evaluate", help="mean relative error of a count-query workload, by band",
                       epilog=_workload_help() + "\n\n" + _mechanism_help(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    data_args(p)
    engine_args(p)
    p.add_argument("--queries", type=int, metavar="N",
                   help="the workload's size setting: queries (seed000, seed003), conditions (seed002), GROUP BYs "
                        "per setting (seed004, seed004-attrs); default: the workload's own (see below)")
    p.add_argument("--workload", default="seed000", metavar="KIND", help="query generator (see below); default seed000")
    p.add_argument("--max-attrs", type=int, metavar="D", help="largest number of QI attributes per query (default 3)")
    p.add_argument("--workload-param", action="append", default=[], metavar="KEY=VALUE",
                   help="another setting of the workload generator")

    p = sub.add_parser("bound", help="an analytical curve as x and named series",
                       epilog=_bound_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", metavar="NAME")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--json", action="store_true", help="print JSON")

    def explorer_args(p: argparse.ArgumentParser, session: bool = False) -> None:
        # with --session (report) DATA and --sensitive may come from the session file
        p.add_argument("data", metavar="DATA", nargs="?" if session else None,
                       help="file path or sample name" + ("; with --session: the session's table unless given "
                                                          "(an uploaded table's file, checked by content hash)"
                                                          if session else ""))
        read_args(p)
        p.add_argument("--sensitive", "--sa", required=not session, metavar="COL", help="sensitive attribute column")
        p.add_argument("--qi", nargs="+", action=_Names, metavar="COL", help=QI_HELP)
        p.add_argument("--band", action="append", default=[], metavar="COL=SPEC",
                       help="band a numeric QI column (repeat for several): COL=W equal width W (age=10), COL=qK K quantile "
                            "bands (age=q5), COL=A,B,C cut points (age=18,25,35,50,65; one cut: age=cuts:40)")
        p.add_argument("--mechanisms", nargs="+", action=_Names, metavar="NAME",
                       help="mechanisms to compare, space or comma separated, repeatable (default: every "
                            "registered one)")
        p.add_argument("--queries", type=int, default=2000, metavar="N",
                       help="size of the seed 000 workload used for utility and small-sum disclosure (default 2000)")
        p.add_argument("--records", type=int, default=2000, metavar="N",
                       help="records sampled for the inference attack (default 2000)")
        p.add_argument("--seed", type=_seed, default=1, metavar="N",
                       help=f"seed of queries, sample and releases, 0 to {MAX_SEED:,} (default 1)")
        p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("tradeoff", help="risk and utility of every mechanism along its main parameter")
    explorer_args(p)

    p = sub.add_parser("recommend", help="the settings per mechanism that meet stated targets with the best utility")
    explorer_args(p)
    p.add_argument("--small-privacy", type=float, default=0.6, metavar="P",
                   help="small counts (1-10): at least this chance of a 30%% error, in [0, 1] (default 0.6; negative = "
                        "no target)")
    p.add_argument("--large-error", type=float, default=0.10, metavar="E",
                   help="large counts: mean relative error at most this, in (0, 10] (default 0.10; negative = no target)")
    p.add_argument("--selectivity", type=float, default=0.01, metavar="S",
                   help="... for queries of at least this selectivity, in [0.005, 0.05] (default 0.01)")
    p.add_argument("--max-risk", type=float, default=-1, metavar="R",
                   help="added risk (core.risk: attribute inference against a held-out control set) at most this at "
                        "the upper end of its 95%% interval, in [0, 1] (default: no target)")
    p.add_argument("--max-lift", type=float, default=1.5, metavar="L",
                   help="inference lift over the global mode at most this, in [0.5, 10] (default 1.5; negative = no target)")

    p = sub.add_parser("report", help="a self-contained HTML report for a review meeting")
    explorer_args(p, session=True)
    p.add_argument("--mechanism", metavar="NAME", help="the chosen mechanism (required without --session)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="its parameters")
    p.add_argument("--session", metavar="FILE",
                   help="a session file saved on the Home page (.workbench.json or .zip): the report is about its "
                        "decision's chosen pin (else its current setting) and sets every pin side by side; the "
                        "table, columns, setting and seed come from the file")
    p.add_argument("--out", required=True, metavar="FILE.html", help="where to write the report")

    p = sub.add_parser("inspect", help="how a data file is read: format, delimiter, header, encoding, types, "
                                       "missing-value markers")
    p.add_argument("data", metavar="FILE", help="a data file of any supported format")
    read_args(p)
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("experiment", help="a figure or table of the papers' evaluations, with the paper's "
                       "statements beside ours and a verdict")
    p.add_argument("name", nargs="?", metavar="NAME", help="a figure or table, e.g. 000-fig8 (see --list)")
    p.add_argument("--list", action="store_true", help="list every figure and table of the five evaluation sections")
    p.add_argument("--all", action="store_true", help="run every figure and table on its stand-in (minutes) and "
                   "print each verdict with its statements and their tolerances")
    p.add_argument("--data", metavar="DATA", help="run on this table instead of the paper's data stand-in")
    p.add_argument("--sensitive", "--sa", metavar="COL", help="sensitive attribute of --data")
    p.add_argument("--qi", nargs="+", action=_Names, metavar="COL", help="QI columns of --data; " + QI_HELP)
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="an experiment setting (default: the paper's)")
    p.add_argument("--out", metavar="FILE.html", help="also write the figures, tables and verdict as HTML")
    p.add_argument("--json", action="store_true", help="print JSON")
    read_args(p)

    p = sub.add_parser("generate", help="stream a generated table of any size to a Parquet dataset folder")
    p.add_argument("generator", metavar="KIND", help="census (the census:N sample, streamed in batches)")
    p.add_argument("--rows", required=True, type=_rows, metavar="N", help="rows to generate (e.g. 100000000)")
    p.add_argument("--seed", type=_seed, metavar="S",
                   help="generator seed (default: the census:N sample's own, so the rows are census:N's)")
    p.add_argument("--out", required=True, metavar="DIR", help="the dataset folder to write (no extension)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("list", help="list samples, mechanisms and bounds")
    p.add_argument("--json", action="store_true", help="print JSON")
    return parser


def engine_args(p: argparse.ArgumentParser) -> None:
    """``--engine``, ``--scheduler`` and ``--partition-rows`` (sanitize and evaluate)."""
    g = p.add_argument_group("engine (the same release on either)")
    g.add_argument("--engine", default="local", metavar="{local,dask}", action=_Once,
                   help="local: this process (default); dask: a dask.distributed cluster, for a Parquet dataset "
                        "(a folder of .parquet files, a glob or one file) too large for one process")
    g.add_argument("--scheduler", metavar="ADDRESS", action=_Once,
                   help="with --engine dask: an existing Dask scheduler (e.g. tcp://SCHEDULER:8786, see "
                        "docs/scale-cluster.md), whose workers get the workbench's code from the command and "
                        "read the input and write the part files themselves, so the input and the --out folder "
                        "must be at the same paths on every worker (a shared file system); default: a local "
                        "cluster started and stopped by the command (one worker of two threads in this process; "
                        "WORKBENCH_DASK_PROCESSES=1: two worker processes on 127.0.0.1)")
    g.add_argument("--partition-rows", type=int, metavar="N", action=_Once,
                   help="with --engine dask: rows per partition (whole Parquet row groups; default 2,000,000); "
                        "the release does not depend on it")


def _engine(args) -> str:
    """The engine asked for; dask-only flags given with the local engine are refused (a value typed is used)."""
    engine = getattr(args, "engine", "local") or "local"
    if engine not in ("local", "dask"):  # checked here, not by argparse's choices, so a repeat is refused first
        raise _UsageError(f"python -m core {args.command}: --engine takes local or dask, not '{clip(engine)}'.")
    if engine != "dask":
        for flag in ("scheduler", "partition_rows"):
            if getattr(args, flag, None) is not None:
                raise _UsageError(f"python -m core {args.command}: --{flag.replace('_', '-')} is for --engine dask; "
                                  "add --engine dask or leave it out.")
    return engine


def _bands(args):
    from .data.banding import parse_many

    return parse_many(getattr(args, "band", None) or [])


def read_args(p: argparse.ArgumentParser) -> None:
    """The flags that say how to read DATA (each detected when not given; see core.data.read)."""
    g = p.add_argument_group("reading a data file (each is detected from the content when not given)")
    g.add_argument("--delimiter", metavar="D", action=_Once,
                   help="comma, semicolon, tab, pipe, whitespace (runs of spaces or tabs) or any one character")
    head = g.add_mutually_exclusive_group()
    head.add_argument("--header", dest="header", action="store_const", const=True, default=None,
                      help="the first row holds the column names")
    head.add_argument("--no-header", dest="header", action="store_const", const=False,
                      help="the first row is data: columns are named col1..colN, or by --names")
    g.add_argument("--names", nargs="+", action=_Names, metavar="NAME",
                   help="column names, comma or space separated, repeatable (a comma inside a name is written \\,)")
    g.add_argument("--encoding", metavar="CODEC", action=_Once,
                   help="text encoding: utf-8, utf-16, latin-1, cp1252, ...")
    g.add_argument("--sheet", metavar="NAME", action=_Once, help="Excel sheet: its name or its position from 1")
    g.add_argument("--na", nargs="+", action=_Names, metavar="MARKER",
                   help="cell text meaning missing, repeatable (replaces the default ?, NA, N/A, NaN, null; "
                        "empty cells are always missing)")
    g.add_argument("--decimal", action=_Once, metavar="MARK", help="decimal mark of numbers in text files: . or ,")


def _read_options(args):
    """The ReadOptions of the flags given (None when none was given)."""
    from .data.read import ReadOptions

    names = getattr(args, "names", None)
    names = None if names is None else tuple(names)
    na = getattr(args, "na", None)
    values = {"delimiter": getattr(args, "delimiter", None), "header": getattr(args, "header", None),
              "names": names, "encoding": getattr(args, "encoding", None), "sheet": getattr(args, "sheet", None),
              "na": None if na is None else tuple(na),
              "decimal": getattr(args, "decimal", None)}
    given = {k: v for k, v in values.items() if v is not None}
    if not given:
        return None
    from . import samples

    if args.data is None:
        from .errors import ParameterError

        raise ParameterError("The read options (--delimiter, --header, ...) say how to read --data; give --data too.")
    if samples.is_sample(args.data):
        from .errors import ParameterError

        flags = ", ".join("--" + ("no-header" if k == "header" and v is False else k) for k, v in given.items())
        one = len(given) == 1
        raise ParameterError(f"{flags} {'is' if one else 'are'} for reading a data file; '{args.data}' is a "
                             f"bundled sample: leave {'it' if one else 'them'} out.")
    return ReadOptions(**given)


def cmd_inspect(args) -> dict[str, Any]:
    from .data.read import describe
    from .table import load

    table, result = load(args.data, options=_read_options(args), columnar=False)
    if result is None:
        from .errors import DataError

        raise DataError(f"'{args.data}' is a bundled sample, not a file; inspect reads data files.")
    out = result.summary(table.name)
    lines = [f"{table.name}: {out['rows']:,} rows, {len(out['columns'])} columns; " + "; ".join(describe(result))]
    if result.sheets:
        lines.append("sheets: " + ", ".join(result.sheets))
    missing = ", ".join(f"{'(empty)' if k == '' else k} {v:,}" for k, v in out["missing"].items())
    lines.append("missing values: " + (missing or "none"))
    width = max(len(c) for c in out["columns"])
    lines += [f"  {c:<{width}}  {t}" for c, t in out["types"].items()]
    lines += [f"note: {n}" for n in out["notes"]]
    flags = result.options.cli_args()
    if flags:
        lines.append("the same reading on other commands: " + " ".join(shlex.quote(f) for f in flags))
    lines += _proposal_lines(table, out)
    out["_text"] = "\n".join(lines)
    return out


def _proposal_lines(table, out: dict[str, Any]) -> list[str]:
    """The column proposal (:func:`core.table.proposal`) into ``out["proposal"]``, and as text lines."""
    from .errors import WorkbenchError
    from .table import proposal

    try:
        p = proposal(table)
    except WorkbenchError:
        return []
    out["proposal"] = p.to_json()
    lines = [f"proposed: --sensitive {shlex.quote(p.sa)} ({p.sa_reason})",
             f"proposed: --qi {' '.join(shlex.quote(c) for c in p.qi)} ({p.qi_reason})"]
    lines += [f"identifier, must not be published: {c} ({p.reasons[c].removeprefix('left out: ').removesuffix('; it must not be published')})"
              for c in p.identifiers]
    return lines


def _params(args) -> dict[str, str]:
    from .params import parse_assignments

    return parse_assignments(args.param)


def _request(args, **extra):
    """The front door's :class:`core.api.Request` of DATA, the read flags, the columns, bands and one setting."""
    from .api import Request
    from .session import Setting

    mechanism = getattr(args, "mechanism", None) or ""
    setting = Setting(mechanism, _params(args) if mechanism else {}, getattr(args, "seed", None))
    return Request(setting, data=args.data, options=_read_options(args), sensitive=args.sensitive,
                   qi=None if args.qi is None else tuple(args.qi), bands=_bands(args),
                   engine=getattr(args, "engine", None) or "local", scheduler=getattr(args, "scheduler", None),
                   partition_rows=getattr(args, "partition_rows", None), **extra)


def _risk_options(args) -> dict[str, Any]:
    """``sanitize``'s risk flags as the request's ``risk`` and ``max_risk`` (both given: refused, not ignored)."""
    from .params import parse_number

    if args.max_risk is None:
        return {"risk": not args.no_risk, "max_risk": None}
    if args.no_risk:
        raise _UsageError("python -m core sanitize: --max-risk needs the risk measured; leave out --no-risk.")
    value = parse_number(args.max_risk)
    if value is None or not 0 <= value <= 1:
        raise _UsageError(f"python -m core sanitize: --max-risk takes an added risk between 0 and 1 (e.g. 0.05), "
                          f"not '{clip(args.max_risk)}'.")
    return {"risk": True, "max_risk": float(value)}


def cmd_sanitize(args) -> dict[str, Any]:
    from . import api, mechanisms

    engine = _engine(args)
    if args.session:
        if engine == "dask":
            raise _UsageError("python -m core sanitize: --session runs on the local engine; leave out --engine dask, "
                              "or give DATA, --sensitive and --mechanism instead of the session.")
        return _sanitize_session(args)
    if args.randomness is not None:
        from . import rng
        from .errors import DataError

        problem = rng.mismatch(args.randomness, "This command's release",
                               "run it with the workbench version that wrote it")
        if problem:
            raise DataError(problem)
    missing = [flag for flag, value in (("DATA", args.data), ("--sensitive", args.sensitive),
                                        ("--mechanism", args.mechanism)) if value is None]
    if missing:
        raise _UsageError(f"python -m core sanitize: give {', '.join(missing)} (or --session FILE) (see --help)")
    mechanisms.get(args.mechanism).resolve(_params(args))  # parameter errors before --band's and the load
    outcome = api.sanitize(_request(args, require_guarantee=args.require_guarantee, **_risk_options(args)),
                           out=args.out, manifest=args.manifest, overwrite=args.overwrite)
    return _sanitize_output(args, outcome)


def _sanitize_session(args) -> dict[str, Any]:
    """``sanitize --session F``: the session's table, columns and current setting; flags override and say so."""
    from dataclasses import replace

    from . import api

    given = api.Overrides(data=args.data, options=_read_options(args), mechanism=args.mechanism,
                          params=_params(args), seed=args.seed, sensitive=args.sensitive, qi=args.qi,
                          bands=_bands(args), randomness=args.randomness)
    asked = api.session_request(args.session, given, require_guarantee=args.require_guarantee)
    outcome = api.sanitize(replace(asked.request, **_risk_options(args)), out=args.out, manifest=args.manifest,
                           overwrite=args.overwrite, inputs=(asked.path,))
    for note in asked.notes:
        print(f"note: {note}", file=sys.stderr)
    out = _sanitize_output(args, outcome)
    out["session"] = {"file": str(asked.path), "overrides": list(asked.notes)}
    return out


def _sanitize_output(args, outcome) -> dict[str, Any]:
    from .api import identifier_warnings

    release, verdict = outcome.release, outcome.verdict
    out = {"written": [str(p) for p in outcome.written], "manifest": outcome.manifest()}
    if verdict is not None:
        out["verdict"] = verdict.to_dict()
    if outcome.run is not None:
        out["run"] = outcome.run
    if outcome.risk is not None:
        out["risk"] = outcome.risk
    if not args.json:
        lines = [f"{release.title}: {release.source['rows']:,} rows in, {release.rows_out:,} published"]
        from .release import columns_said

        lines += columns_said(release, proposed=not getattr(args, "qi", None))
        if verdict is not None:
            lines.append(f"verdict: {' '.join(verdict.line().split())}")
        risk = outcome.risk
        if risk is not None and risk.get("measured"):
            lines.append(f"risk: {risk['sentence']}")
            if risk.get("beside_verdict"):
                lines.append(f"verdict and risk: {risk['beside_verdict']}")
        elif risk is not None:
            lines.append(f"risk: not measured: {risk['why']}")
        lines += identifier_warnings(outcome.data) if outcome.data is not None else []
        for note in release.notes:
            lines.append(f"note: {note}")
        lines += [f"wrote {p}" for p in outcome.written]
        if outcome.run is not None:
            run = outcome.run
            lines.append(f"engine: dask, {run['partitions']:,} partitions on {run['workers']} workers "
                         f"({run['scheduler']}), {run['seconds']:.1f} s")
        out["_text"] = "\n".join(lines)
    return out


def cmd_evaluate(args) -> dict[str, Any]:
    from . import api, mechanisms
    from .errors import ParameterError
    from .params import parse_assignments
    from .workloads import get as get_workload

    mech = mechanisms.get(args.mechanism)
    mech.resolve(_params(args))
    kind = get_workload(args.workload)
    settings: dict[str, Any] = parse_assignments(args.workload_param)
    if args.queries is not None:
        # --queries names the workload's size setting; the declared range checks it (kind.resolve)
        if kind.size_setting in settings and settings[kind.size_setting] != str(args.queries):
            raise ParameterError(f"--queries {args.queries} and --workload-param {kind.size_setting}="
                                 f"{clip(settings[kind.size_setting])} both set the size of workload {kind.name}; "
                                 "give one.")
        size = next(p for p in kind.params if p.name == kind.size_setting)
        if not size.contains(args.queries):
            raise ParameterError(f"--queries sets the '{size.name}' setting of workload {kind.name}, which must be "
                                 f"{size.describe()}. Got {args.queries}.")
        settings[kind.size_setting] = args.queries
    if args.max_attrs is not None:
        settings["max_attrs"] = args.max_attrs
    _engine(args)  # an unknown engine, or dask-only flags on the local one, refused before the load
    result, data, said, seed = api.evaluate(_request(args), kind, settings)
    if not args.json:
        lines = [f"{mech.title} on {data.name} ({data.n:,} rows), seed {seed}"]

        def block(res):
            for b in res["bands"]:
                err = "n/a" if b["mean_relative_error"] is None else f"{b['mean_relative_error']:.3f}"
                thin = "   (thin: fewer than 30 queries, do not trust)" if b["thin"] else ""
                lines.append(f"  {b['name']:<24} {b['queries']:>6} queries   mean relative error {err}{thin}")

        block(result)
        if "joint" in result:
            lines.append(f"joint queries (... AND {data.sa} = a AND {_params(args)['sa2']} = b), workload joint:")
            block(result["joint"])
        people = result.get("count_intervals") or {}
        lines.append("in people: " + (people["sentence"] if people.get("measured") else
                                      f"not measured: {people.get('why', '')}"))
        lines += [f"note: {n}" for n in said]
        result["_text"] = "\n".join(lines)
    return result

def cmd_bound(args) -> dict[str, Any]:
    from . import bounds
    from .params import parse_assignments

    curve = bounds.compute(args.name, parse_assignments(args.param))
    out = curve.to_json()
    if not args.json:
        lines = [curve.title, f"x: {curve.x_label}"]
        for key, value in out["notes"].items():
            lines.append(f"  {key}: {value}")
        lines.append("(use --json for the full series)")
        out["_text"] = "\n".join(lines)
    return out


def cmd_list(args) -> dict[str, Any]:
    from . import samples
    from .bounds import BOUNDS
    from .mechanisms import MECHANISMS
    from .workloads import WORKLOADS

    out = {
        "samples": [s.name for s in samples.list_samples()],
        "mechanisms": {m.name: [p.name for p in m.params] for m in MECHANISMS.values()},
        "bounds": {b.name: [p.name for p in b.params] for b in BOUNDS.values()},
        "workloads": {w.name: [p.name for p in w.params] for w in WORKLOADS.values()},
    }
    out["_text"] = "\n\n".join([_sample_help(), _mechanism_help(), _workload_help(), _bound_help()])
    return out


def _explore(args):
    from .api import Explore

    return Explore(tuple(args.mechanisms) if args.mechanisms else None, args.queries, args.records, args.seed)


def _records_note(args, t, data) -> None:
    """A value typed is used or reported: the attack samples at most every record of the table."""
    if "records" in getattr(args, "_given", {}) and len(t.truth) < args.records:
        print(f"note: --records {args.records:,} is more than the table's {data.n:,} records; all of them are "
              "attacked", file=sys.stderr)

def _progress(args):
    if getattr(args, "json", False) or not sys.stderr.isatty():
        return None
    return lambda f, text: print(f"\r{f:4.0%} {text[:70]:<70}", end="", file=sys.stderr, flush=True)


def cmd_tradeoff(args) -> dict[str, Any]:
    from . import api

    data, t, points, skipped, front = api.tradeoff(_request(args), _explore(args), progress=_progress(args))
    _records_note(args, t, data)
    out = {"table": data.name, "rows": data.n, "sensitive": data.sa, "qi": list(data.qi), "seed": args.seed,
           "records_sampled": len(t.truth), "mode_share": t.mode_share,
           "points": [p.to_json() | {"pareto": i in front} for i, p in enumerate(points)],
           "not_eligible": skipped}
    lines = [f"{'mechanism':<15}{'parameters':<34}{'added risk [95%]':>22}{'lift':>7}{'small<30%':>11}"
             f"{'presence':>10}{'large err':>11}"]
    for i, p in enumerate(points):
        params = ", ".join(f"{k}={format_value(v)}" for k, v in p.params.items())[:33]
        small = "-" if p.small_sum_disclosure is None else f"{p.small_sum_disclosure:.3f}"
        large = "-" if p.large_error is None else f"{p.large_error:.4f}"
        risk = ("-" if getattr(p, "added_risk", None) is None else
                f"{p.added_risk:.3f} [{p.risk_low:.3f}, {p.risk_high:.3f}]")
        lines.append(f"{p.mechanism:<15}{params:<34}{risk:>22}{p.inference_lift:>7.2f}{small:>11}{p.presence:>10.3g}"
                     f"{large:>11}" + ("  *" if i in front else ""))
    lines.append("* on the Pareto front (no other setting has both lower added risk and lower large-count error); "
                 "added risk: attribute inference on people in the table beyond people held out of it (docs/risk.md)")
    lines += [f"not eligible: {s}" for s in skipped]
    out["_text"] = "\n".join(lines)
    return out


def cmd_recommend(args) -> dict[str, Any]:
    from . import api
    from .recommend import Goals

    goals = Goals(small_privacy=None if args.small_privacy < 0 else args.small_privacy,
                  large_error=None if args.large_error < 0 else args.large_error,
                  large_selectivity=args.selectivity,
                  max_lift=None if args.max_lift < 0 else args.max_lift,
                  max_risk=None if args.max_risk < 0 else args.max_risk)
    recs, data, t = api.recommend(_request(args), _explore(args), goals, progress=_progress(args))
    _records_note(args, t, data)
    out = {"targets": goals.describe(), "recommendations": [r.to_json() for r in recs]}
    lines = ["targets: " + "; ".join(goals.describe())]
    for r in recs:
        if r.point is None:
            lines.append(f"  {r.mechanism:<15}no eligible setting")
            continue
        params = ", ".join(f"{k}={format_value(v)}" for k, v in r.point.params.items())
        verdict = "meets all targets" if r.meets else f"nearest miss; binding: {r.binding}"
        checks = "; ".join(f"{c.target} {('-' if c.value is None else f'{c.value:.3g}')} "
                           f"({'ok' if c.ok else 'fails'}, {c.source})" for c in r.checks)
        lines.append(f"  {r.mechanism:<15}{params}: {verdict}\n      {checks}")
        if r.caveat:
            lines.append(f"      note: {r.caveat}")
    out["_text"] = "\n".join(lines)
    return out

def _out_html(args):
    from pathlib import Path

    from .errors import DataError

    out_path = Path(args.out)
    if not out_path.parent.exists():
        raise DataError(f"The folder '{out_path.parent}' does not exist; create it or choose another --out.")
    if out_path.is_dir():
        raise DataError(f"'{out_path}' is a folder; give a file name ending in .html.")
    return out_path


def cmd_report(args) -> dict[str, Any]:
    from . import api, mechanisms

    if args.session:
        return _report_session(args)
    missing = [flag for flag, value in (("DATA", args.data), ("--sensitive", args.sensitive),
                                        ("--mechanism", args.mechanism)) if value is None]
    if missing:
        raise _UsageError(f"python -m core report: give {', '.join(missing)} (or --session FILE) (see --help)")
    mechanisms.get(args.mechanism)
    request = _request(args)
    request.check()
    out_path = _out_html(args)
    html_text, data, t = api.report(request, _explore(args), progress=_progress(args))
    _records_note(args, t, data)
    out_path.write_text(html_text, encoding="utf-8")
    return {"written": str(out_path), "bytes": len(html_text.encode("utf-8")),
            "_text": f"wrote {out_path} ({len(html_text.encode('utf-8')) / 2**20:.1f} MB, opens offline)"}


def _report_session(args) -> dict[str, Any]:
    """``report --session F``: the decision record's report, from the session file alone (:func:`core.api.session_report`).

    The flags that would change what the decision record speaks of
    (``--mechanism``, ``--param``, ``--seed``, ``--sensitive``, ``--qi``,
    ``--band``) are refused beside ``--session`` rather than overriding it
    (a report signed for a pin must show that pin); ``--queries`` and
    ``--records`` apply as without a session.
    """
    from . import api

    given = getattr(args, "_given", {})
    refused = [flag for flag, on in (("--mechanism", args.mechanism is not None), ("--param", bool(args.param)),
                                     ("--seed", "seed" in given), ("--sensitive", args.sensitive is not None),
                                     ("--qi", args.qi is not None), ("--band", bool(args.band))) if on]
    if refused:
        raise _UsageError(f"python -m core report: {', '.join(refused)} cannot be given with --session: the report "
                          "is about the session's decision (its chosen pin's mechanism, parameters, seed and the "
                          "session's columns); change them on the Compare page and save the session again.")
    out_path = _out_html(args)
    html_text, asked, about = api.session_report(args.session, _explore(args), args.data, _read_options(args),
                                                 progress=_progress(args))
    for note in asked.notes:
        print(f"note: {note}", file=sys.stderr)
    out_path.write_text(html_text, encoding="utf-8")
    size = len(html_text.encode("utf-8"))
    pins = asked.session.pins
    return {"written": str(out_path), "bytes": size, "session": str(asked.path), "about": about,
            "pins": [p.name for p in pins],
            "_text": f"wrote {out_path} ({size / 2**20:.1f} MB, opens offline): the report of {about}, "
                     f"{len(pins)} pin{'s' if len(pins) != 1 else ''} side by side"}

def cmd_experiment(args) -> dict[str, Any]:
    from pathlib import Path

    from . import api, papers
    from .errors import DataError, ParameterError
    from .release import jsonable

    if args.list:
        if args.name:
            raise ParameterError("Give either --list or a NAME, not both.")
        entries = papers.listing()
        text = "\n".join(f"{e['key']:<22} seed {e['seed']} {e['number']}: {e['caption']}" for e in entries)
        return {"items": entries, "_text": text}
    if args.all:
        if args.name or args.data or args.param or args.out:
            raise ParameterError("--all runs every figure and table on its stand-in with the paper's settings; give "
                                 "it no NAME, --data, --param or --out.")
        out = papers.run_all()
        out["_text"] = "\n".join([f"{e['key']:<22} {e['seconds']:7.1f} s  {e['verdict']}" for e in out["entries"]]
                                 + [papers.counts_text(out["counts"])])
        return out
    if not args.name:
        raise ParameterError("Name a figure or table (e.g. 000-fig8), or use --list to see them.")
    item = papers.get(args.name)
    if (args.sensitive or args.qi) and not args.data:
        raise ParameterError("--sensitive and --qi choose the columns of --data; give --data too.")
    raw = _params(args)
    if args.out:
        out_path = Path(args.out)
        if not out_path.parent.exists():
            raise DataError(f"The folder '{out_path.parent}' does not exist; create it or choose another --out.")
    if item.experiment is not None:
        papers.settings(item, raw)  # setting errors before the (slower) load
    elif raw:
        raise ParameterError(f"{item.number} of seed {item.seed} has no experiment to take settings "
                             f"({item.why_no_experiment}).")
    options = _read_options(args)
    data = api.dataset(api.Request(None, data=args.data, options=options, sensitive=args.sensitive,
                                   qi=None if args.qi is None else tuple(args.qi))) if args.data else None
    standin = args.data or (item.standin if item.experiment else "no data (a table of settings)")
    result, verdict, rows = papers.run(item, data, raw)
    out = {"key": item.key, "seed": item.seed, "number": item.number, "caption": item.caption,
           "experiment": item.experiment, "data": standin,
           "settings": papers.settings(item, raw) if item.experiment else None,
           "verdict": verdict, "statements": [r.as_dict() for r in rows],
           "notes": list(result.notes) if result else [],
           "tables": {t: f.to_dict(orient="records") for t, f, _ in result.tables} if result else {}}
    lines = [f"seed {item.seed} {item.number} on {standin}: {verdict}"]
    lines += [f"  [{r.verdict}] {r.statement}: paper {r.paper}; ours {r.ours}" + (f" ({r.why})" if r.why else "")
              for r in rows]
    if args.out:
        Path(args.out).write_text(papers.html_report(item, result, verdict, rows, standin), encoding="utf-8")
        out["written"] = args.out
        lines.append(f"wrote {args.out}")
    out = jsonable(out)
    out["_text"] = "\n".join(lines)
    return out


COMMANDS = {"inspect": cmd_inspect, "experiment": cmd_experiment, "sanitize": cmd_sanitize, "evaluate": cmd_evaluate, "bound": cmd_bound, "list": cmd_list,
            "generate": cmd_generate,
            "tradeoff": cmd_tradeoff, "recommend": cmd_recommend, "report": cmd_report}


def main(argv: Sequence[str] | None = None) -> int:
    from .api import GuaranteeNotMet
    from .errors import WorkbenchError

    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return 0
        result = COMMANDS[args.command](args)
    except _UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except GuaranteeNotMet as exc:  # sanitize --require-guarantee: exit status 3, one line
        print(str(exc), file=sys.stderr)
        return EXIT_NOT_MET
    except WorkbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP under python -m core (core.release)
        from .signals import interrupt_status

        print("interrupted", file=sys.stderr)
        return interrupt_status(exc)
    except OSError as exc:
        print(f"error: {exc.strerror or exc} ({getattr(exc, 'filename', '') or ''})".rstrip(" ()"), file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: still one line, never a traceback, and its own status (not 3's verdict)
        from .errors import EXIT_INTERNAL

        print(f"internal error ({type(exc).__name__}): {clip(exc, 300)}; please report it", file=sys.stderr)
        return EXIT_INTERNAL
    text = result.pop("_text", None)
    try:
        if getattr(args, "json", False) or text is None:
            print(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. `| head`: the reader has what it wanted; no traceback
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
