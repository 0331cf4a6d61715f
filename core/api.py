"""The front door: a request in; the release with its verdict, risk and manifest out.

Every way into the workbench asks the core through this module: the
command line (:mod:`core.cli` only parses flags into a :class:`Request`
and prints what comes back), the pages (``pages/ui/cached.py`` builds and
judges releases here), sessions (:func:`session_request` turns a session
file and the flags beside it into the same request) and reports
(:func:`report`).  A :class:`Request` names one table (a file or bundled
sample and how to read it, or a table already in memory), its columns and
bands, and one :class:`core.session.Setting` (mechanism, raw parameters,
seed): the value behind every widget, pin and decision.  :func:`sanitize`
returns an :class:`Outcome`: the bound data, the release, its verdict
(the mechanism's own guarantee, with the nearest setting that meets it),
the decision record it carries and the manifest, written by
:func:`write` release and manifest together.

Choices where the papers and the issues are silent:

* A request is checked whole (mechanism, parameters, bands) before the
  table is loaded, so a typing error costs no load.
* ``require_guarantee`` refuses anything but a plain meet (every record,
  every value, not vacuous) before anything is written.
* A session's decision record goes into the manifest only when the
  setting written is the chosen pin's (the same release key); a flag that
  overrides the session says so in the outcome's notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from .errors import DataError, ParameterError, clip
from .params import format_value

if TYPE_CHECKING:  # pragma: no cover - types only (importing them costs the CLI's start-up)
    from .data.read import ReadOptions
    from .guarantee import Verdict
    from .release import Release
    from .session import Session, Setting
    from .table import Dataset, Table


class GuaranteeNotMet(Exception):
    """``require_guarantee``: the release does not meet its guarantee plainly; the message is the verdict's line."""


class RiskTooHigh(GuaranteeNotMet):
    """``max_risk``: the measured risk's interval reaches above the limit, or the risk could not be measured."""



# ------------------------------------------------------------------ the request
@dataclass(frozen=True)
class Request:
    """One release asked for: which table, which columns and bands, which setting, on which engine.

    ``data`` is a file path or a bundled sample's name read with
    ``options``; ``table`` is a table already in memory (a page's upload, a
    session's embedded table), used instead of reading ``data``.
    ``sensitive`` and ``qi`` left None take the table's proposal.
    ``bands`` maps a QI column to its banding (parsed
    :class:`core.data.banding.Banding` or a spec dict).
    """

    setting: "Setting"
    data: str | None = None
    options: "ReadOptions | None" = None
    table: "Table | None" = None
    sensitive: str | None = None
    qi: tuple[str, ...] | None = None
    bands: Mapping[str, Any] = field(default_factory=dict)
    engine: str = "local"
    scheduler: str | None = None
    partition_rows: int | None = None
    require_guarantee: bool = False
    #: the decision record (``Decision.to_json(pins)``) the manifest carries; see :func:`session_request`
    decision: Mapping[str, Any] | None = None
    #: measure the release's risk (:func:`measure_risk`) into the outcome and the manifest
    risk: bool = True
    #: refuse (:class:`RiskTooHigh`) a release whose measured risk's interval reaches above this
    max_risk: float | None = None

    def check(self) -> None:
        """Parameter and mechanism errors, before the (slower) load."""
        from . import mechanisms

        mechanisms.get(self.setting.mechanism).resolve(dict(self.setting.params))


@dataclass
class Outcome:
    """What :func:`sanitize` returns: the release with its verdict, decision and manifest."""

    request: Request
    release: "Release"
    verdict: "Verdict | None"
    data: "Dataset | None" = None
    #: where the release and manifest were written (empty until :func:`write`; the Dask engine writes itself)
    written: list[Path] = field(default_factory=list)
    #: the Dask engine's run (engine, partitions, workers, seconds); None on the local engine
    run: Mapping[str, Any] | None = None
    #: the manifest's risk block (:func:`measure_risk`, or :data:`core.risk.NOT_ASKED`)
    risk: Mapping[str, Any] | None = None

    @property
    def decision(self) -> Mapping[str, Any] | None:
        return self.request.decision

    def manifest(self) -> dict[str, Any]:
        return self.release.manifest(decision=self.decision, risk=self.risk)


def with_seed(request: Request) -> Request:
    """The request with its seed drawn afresh when none was given (and so recorded in the manifest)."""
    from . import mechanisms

    if request.setting.seed is not None:
        return request
    return replace(request, setting=replace(request.setting, seed=mechanisms.fresh_seed()))


# ------------------------------------------------------------------ tables and data
def load(request: Request) -> "Table":
    """The request's table: the one in memory, or ``data`` read with ``options``."""
    from .table import load_table

    if request.table is not None:
        return request.table
    if request.data is None:
        raise ParameterError("Name a table: a data file or a bundled sample.")
    return load_table(request.data, None, request.options)


def dataset(request: Request) -> "Dataset":
    """The request's table bound to its SA, QIs and bands (:func:`core.table.bind`)."""
    from .table import bind, load_dataset

    if request.table is not None:
        return bind(request.table, request.sensitive, request.qi, request.bands)
    return load_dataset(request.data, request.sensitive, request.qi, bands=request.bands, options=request.options)


def identifier_warnings(data: "Dataset") -> list[str]:
    """A warning per chosen QI that looks like an identifier (unique per row)."""
    from .data.columns import identifiers

    if data.table is None:
        return []
    if data.table.frame is None:  # a table read column by column: judge on the first rows, decoded from codes
        import pandas as pd

        k = min(data.n, 100_000)
        frame = pd.DataFrame({c: data.qi_labels[j][data.qi_codes[j][:k]] for j, c in enumerate(data.qi)})
    else:
        frame = data.table.frame[list(data.qi)]
    found = identifiers(frame)
    return [f"warning: QI '{c}' looks like an identifier ({why}); it must not be published: drop it from --qi"
            for c, why in found.items()]


# ------------------------------------------------------------------ releases and verdicts
def build(data: "Dataset", setting: "Setting") -> "Release":
    """The release of ``setting`` on ``data`` (:func:`core.mechanisms.sanitize`)."""
    from . import mechanisms

    return mechanisms.sanitize(data, setting.mechanism, dict(setting.params), setting.seed)


def judge(data: "Dataset", release: "Release", suggest: bool = True) -> "Verdict":
    """The release's verdict on its own guarantee, with the nearest setting that meets it unless ``suggest`` is off."""
    from . import mechanisms

    return mechanisms.judge(data, release, suggest=suggest)


def verdict(data: "Dataset", setting: "Setting", release: "Release | None" = None, suggest: bool = True) -> "Verdict":
    """Whether ``setting`` can run on ``data`` and whether its release meets its guarantee (``cannot run`` included).

    ``release`` is the setting's release when the caller has it (the pages
    keep it cached); see :func:`core.mechanisms.verdict`.
    """
    from . import mechanisms

    return mechanisms.verdict(data, setting.mechanism, dict(setting.params), int(setting.seed), suggest=suggest,
                              release=release)


def _require(request: Request, verdict: "Verdict | None") -> None:
    if request.require_guarantee and verdict is not None and not verdict.plain:
        raise GuaranteeNotMet(" ".join(verdict.line().split()))


def measure_risk(data: "Dataset", setting: "Setting", verdict: "Verdict | None" = None) -> dict[str, Any]:
    """The manifest's risk block (:func:`core.risk.risk_block`): the measured risk in plain words, beside the verdict."""
    from .risk import risk_block

    return risk_block(data, setting, verdict)


def assess_risk(data: "Dataset", setting: "Setting") -> dict[str, Any]:
    """The risk block without the sentence beside the verdict (:func:`core.risk.assessed_block`; the pages cache it)."""
    from .risk import assessed_block

    return assessed_block(data, setting)


def beside_verdict(block: Mapping[str, Any], verdict: "Verdict | None") -> dict[str, Any]:
    """``block`` with the verdict and the measured risk reconciled in one sentence (:func:`core.risk.beside_verdict`)."""
    from .risk import beside_verdict as beside

    return beside(block, verdict)


def _check_risk(request: Request, block: Mapping[str, Any] | None) -> None:
    """``max_risk``: refuse a release whose interval's upper end exceeds the limit, or whose risk is unmeasured."""
    if request.max_risk is None:
        return
    if not block or not block.get("measured"):
        why = (block or {}).get("why", "the risk was not measured")
        raise RiskTooHigh(f"--max-risk {format_value(request.max_risk)}: the release's risk could not be measured "
                          f"({why.rstrip('.')}); nothing was written.")
    high = block["interval"][1]
    if high > request.max_risk:
        raise RiskTooHigh(f"--max-risk {format_value(request.max_risk)}: the release adds {block['risk']:.3f} of the "
                          f"possible risk (95% interval {block['interval'][0]:.3f}-{high:.3f}), whose upper end is "
                          "above the limit; nothing was written. Choose a safer setting or a higher limit.")


def sanitize(request: Request, out: str | Path | None = None, manifest: str | Path | None = None, *,
             overwrite: bool = False, inputs: Sequence[str | Path] = ()) -> Outcome:
    """The release of ``request``, judged; written (release and manifest) when ``out`` is given.

    On the Dask engine the cluster writes the release folder itself, so
    ``out`` is required there.  ``require_guarantee`` refuses before
    anything is written (:class:`GuaranteeNotMet`).  The outputs are
    checked before the table is loaded (:func:`core.release.check_outputs`):
    never the input (``request.data`` and ``inputs``, e.g. a session
    file), never each other, never a folder the workbench did not write
    unless ``overwrite``.
    """
    request.check()
    from .data.banding import parse_many

    inputs = (*inputs, *([request.data] if request.data is not None else []))
    if out is not None:
        from . import release as rel

        rel.check_outputs(out, manifest, inputs=inputs, overwrite=overwrite)
    request = with_seed(request)
    if request.engine == "dask":
        return _sanitize_dask(request, out, manifest, overwrite)
    if request.engine != "local":
        raise ParameterError(f"The engine is local or dask, not '{clip(request.engine)}'.")
    if not isinstance(request.bands, Mapping):
        request = replace(request, bands=parse_many(request.bands))
    data = dataset(request)
    release = build(data, request.setting)
    verdict = judge(data, release)
    _require(request, verdict)
    from .risk import NOT_ASKED

    risk = measure_risk(data, request.setting, verdict) if request.risk else NOT_ASKED
    _check_risk(request, risk)
    outcome = Outcome(request, release, verdict, data, risk=risk)
    if out is not None:
        write(outcome, out, manifest, overwrite=overwrite, inputs=inputs)
    return outcome


def write(outcome: Outcome, out: str | Path, manifest: str | Path | None = None, *, overwrite: bool = False,
          inputs: Sequence[str | Path] = ()) -> list[Path]:
    """Write the outcome's release and manifest together (:func:`core.release.write`); returns the paths written."""
    from . import release as rel

    outcome.written = rel.write(outcome.release, out, manifest, decision=outcome.decision, risk=outcome.risk,
                                inputs=tuple(inputs), overwrite=overwrite)
    return outcome.written


def dask_options(request: Request) -> dict[str, Any]:
    from .engine import dask as dk

    rows = request.partition_rows if request.partition_rows is not None else dk.PARTITION_ROWS
    if rows < 1:
        raise DataError(f"--partition-rows must be a positive number of rows. Got {rows}.")
    return {"scheduler": request.scheduler, "partition_rows": rows, "options": request.options,
            "bands": request.bands}


def proposed_qi(request: Request) -> tuple[str, ...]:
    """The QIs proposed for ``request``'s table (:func:`core.table.proposal`), as the local engine would take them.

    For a Parquet dataset (what the Dask engine reads) the table is opened
    column by column, so the proposal reads its metadata and a preview of
    its first rows, not the whole table; it is the proposal the local
    engine makes for the same input.
    """
    from .table import proposal

    return tuple(proposal(load(request), request.sensitive).qi)


def _sanitize_dask(request: Request, out, manifest, overwrite: bool = False) -> Outcome:
    """The release folder written on a Dask cluster (:mod:`core.engine.dask`)."""
    import os

    from .data.load import is_source
    from .engine import dask as dk

    if out is None:
        raise ParameterError("The Dask engine writes the release itself: give where to write it.")
    if not is_source(request.data) and not os.path.exists(request.data):
        raise DataError(f"There is no file or folder at '{clip(request.data)}'; --engine dask reads a Parquet dataset "
                        "(a folder of .parquet files, a glob or one file).")
    if not request.qi:
        request = replace(request, qi=proposed_qi(request))
    setting = request.setting
    from . import risk as _risk

    measured: dict[str, Any] = {"risk": _risk.NOT_ASKED}

    def require(release):
        _require(request, release.verdict)
        if request.risk:
            # measured on the table itself, loaded here when it is small enough (RISK_ROWS), so the manifest is
            # the local engine's byte for byte; a larger table's block says so on both engines alike
            rows = int(release.source["rows"])
            measured["risk"] = (measure_risk(dataset(request), setting, release.verdict)
                                if rows <= _risk.RISK_ROWS else _risk.unmeasured(rows))
            _check_risk(request, measured["risk"])

    done = dk.sanitize(request.data, request.sensitive, list(request.qi), setting.mechanism, dict(setting.params),
                       setting.seed, out, manifest=manifest, require=require, risk=lambda _: measured.get("risk"),
                       overwrite=overwrite, **dask_options(request))
    return Outcome(request, done.release, done.release.verdict, None, list(done.written), done.run,
                   risk=measured.get("risk"))


# ------------------------------------------------------------------ sessions
@dataclass(frozen=True)
class Overrides:
    """Values given beside a session (CLI flags), each replacing the session's and said in a note."""

    data: str | None = None
    options: "ReadOptions | None" = None
    mechanism: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    sensitive: str | None = None
    qi: Sequence[str] | None = None
    bands: Mapping[str, Any] = field(default_factory=dict)
    randomness: int | None = None


@dataclass(frozen=True)
class SessionRequest:
    """A session file turned into a request: the request, the session, its file and the overrides said."""

    request: Request
    session: "Session"
    path: Path
    notes: tuple[str, ...] = ()


def read_session(file: str | Path) -> tuple["Session", Any, Path]:
    """The session file, read and checked whole (:func:`core.session.read`), its embedded frame and its path."""
    from . import session as sess

    from .data.read import MAX_BYTES, read_file

    path = Path(file)
    if not path.exists():
        raise DataError(f"There is no session file at '{clip(file)}'; give the file saved from the Home page.")
    # a regular file only, of at most a session's JSON and an embedded table (not /dev/zero)
    session, frame = sess.read(read_file(path, path.name, sess.MAX_JSON_BYTES + MAX_BYTES), path.name)
    return session, frame, path


def session_table(session: "Session", frame, data: str | None = None, options: "ReadOptions | None" = None) -> "Table":
    """The session's table: the file given as ``data``, the one embedded in a zip, or the bundled sample it names.

    Whichever it is must have the session's content hash and columns
    (:func:`core.session.check_table`): another table is refused, never
    swapped in.
    """
    from . import session as sess
    from .table import load, load_table

    if data is not None:
        table = load(data, options=options)[0]  # either reader: both name a file by its bytes' hash
        sess.check_table(session, table, f"'{data}'")
    elif frame is not None:
        table = sess.embedded_table(session, frame)
    elif session.table.kind == "sample":
        table = load_table(session.table.name)
        sess.check_table(session, table, f"the sample '{session.table.name}' here")
    else:
        raise DataError(f"The session's table is {session.table.describe()}, which is not inside the session file; "
                        "give that file's path as DATA.")
    return table


def session_request(file: str | Path, given: Overrides = Overrides(), require_guarantee: bool = False
                    ) -> SessionRequest:
    """The request of a session file's current setting, with the values given beside it overriding and said.

    The session is read and checked whole before anything is loaded.  Its
    table is the embedded one (a zip), the bundled sample it names, or the
    file given as ``data``, which must have the session's content hash.
    ``params`` replaces those parameters only.  The manifest carries the
    session's decision record when the setting written is the chosen pin's.
    """
    from . import mechanisms, rng
    from . import session as sess

    session, frame, path = read_session(file)
    notes: list[str] = []
    if given.randomness is not None and given.randomness != rng.VERSION:
        raise DataError(rng.mismatch(given.randomness, "The release asked for with --randomness",
                                     "run it with the workbench version that wrote it"))
    problem = rng.mismatch(session.randomness, f"The session '{path.name}'",
                           f"give --randomness {rng.VERSION} to write this version's release of its setting anyway",
                           verb="was saved with")
    if problem and given.randomness is None:
        raise DataError(problem)
    if problem:
        notes.append(f"--randomness {rng.VERSION} writes this version's release of a session saved with randomness "
                     f"version {session.randomness}: not the release seen when the session was saved")
    current = session.current
    name = current.mechanism
    if given.mechanism is not None and given.mechanism != name:
        mechanisms.get(given.mechanism)
        notes.append(f"--mechanism {given.mechanism} overrides the session's mechanism {name}")
        name = given.mechanism
        raw: dict[str, Any] = dict(session.params.get(name, {}))
    else:
        raw = dict(current.params)
    mech = mechanisms.get(name)
    for key, value in given.params.items():
        if key in raw and raw[key] is not None:
            notes.append(f"--param {key}={value} overrides the session's {key}={format_value(raw[key])}")
        raw[key] = value
    mech.resolve(raw)  # parameter errors before the (slower) load
    seed = current.seed
    if given.seed is not None and given.seed != seed:
        notes.append(f"--seed {given.seed} overrides the session's seed {seed}")
        seed = given.seed
    table = session_table(session, frame, given.data, given.options)
    sa = session.sensitive
    if given.sensitive is not None and given.sensitive != sa:
        notes.append(f"--sensitive {given.sensitive} overrides the session's sensitive attribute {sa}")
        sa = given.sensitive
    qi = list(session.qi)
    if given.qi is not None and list(given.qi) != qi:
        notes.append(f"--qi {' '.join(given.qi)} overrides the session's QI columns {' '.join(qi)}")
        qi = list(given.qi)
    bands = {col: spec for col, spec in (getattr(session, "bands", None) or {}).items() if col in qi}
    for col, band in given.bands.items():
        if col in bands:
            notes.append(f"--band {band.text()} overrides the session's banding of {col}")
    setting = sess.Setting(mech.name, raw, seed)
    decision = None
    chosen = session.pin(session.decision.chosen) if session.decision is not None else None
    if chosen is not None and chosen.setting.key() == setting.key():
        decision = session.decision.to_json(session.pins)
    request = Request(setting, data=given.data, options=given.options, table=table, sensitive=sa, qi=tuple(qi),
                      bands={**bands, **given.bands}, require_guarantee=require_guarantee, decision=decision)
    return SessionRequest(request, session, path, tuple(notes))


# ------------------------------------------------------------------ evaluation
def evaluate(request: Request, kind, settings: dict[str, Any]) -> tuple[dict[str, Any], "Dataset | Any", list[str], int]:
    """The workload's mean relative error by band for ``request``'s release: ``(result JSON, data, notes, seed)``.

    ``kind`` is a :class:`core.workloads.Kind` and ``settings`` its
    settings (size, max_attrs, seed, ...), checked by the kind before the
    load.  SPLU-Gen's second sensitive attribute and the joint workload's
    name the same column: one given fills the other, and with another
    workload the joint queries on both attributes are evaluated too, from
    the same release (said in the notes).
    """
    from . import mechanisms
    from .evaluate import evaluate as run

    request = with_seed(request)
    setting = request.setting
    mech = mechanisms.get(setting.mechanism)
    raw = dict(setting.params)
    mech.resolve(raw)
    seed = setting.seed
    if any(p.name == "seed" for p in kind.params):
        settings.setdefault("seed", seed)
    said: list[str] = []
    if kind.name == "joint" and mech.name == "splu":
        if raw.get("sa2") and settings.get("sa2") and raw["sa2"] != settings["sa2"]:
            raise ParameterError(f"--param sa2={clip(raw['sa2'])} and --workload-param sa2={clip(settings['sa2'])} "
                                 "name different second sensitive attributes; give one.")
        if raw.get("sa2") and not settings.get("sa2"):
            settings["sa2"] = raw["sa2"]
        elif settings.get("sa2") and not raw.get("sa2"):
            raw["sa2"] = settings["sa2"]
            said.append(f"SPLU-Gen sanitized with sa2 = {clip(settings['sa2'])}, the joint workload's second "
                        "sensitive attribute")
    joint_too = mech.name == "splu" and bool(raw.get("sa2")) and kind.name != "joint"
    kind.resolve(settings)  # setting errors before the (slower) load
    if request.engine == "dask":
        from .engine import dask as dk

        if kind.name == "joint" or raw.get("sa2"):
            raise ParameterError("The Dask engine evaluates queries on one sensitive attribute; joint queries on a "
                                 "second one (sa2) run with --engine local.")
        if not request.qi:
            request = replace(request, qi=proposed_qi(request))
        evaluation, data, info = dk.evaluate(request.data, request.sensitive, list(request.qi), mech.name, raw, kind,
                                             settings, seed, **dask_options(request))
        result = evaluation.to_json()
        result["run"] = info
    else:
        data = dataset(request)
        workload = kind.make(data, settings)
        result = run(data, mech.name, raw, workload, seed).to_json()
    result["count_intervals"] = people_intervals(request, data, mech.name, raw, seed)
    if joint_too:
        from .workloads import make_workload

        joint = make_workload(data, "joint", sa2=raw["sa2"], seed=seed)
        result["joint"] = run(data, mech.name, raw, joint, seed).to_json()
        said.append(f"joint queries on {data.sa} AND {clip(raw['sa2'])}: workload joint at its defaults "
                    f"({len(joint):,} queries, same seed); --workload joint sets them")
    if said:
        result["notes"] = said
    return result, data, said, seed


def people_intervals(request: Request, data, mechanism: str, raw: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The 95% interval of a count's estimate in people (:func:`core.intervals.count_intervals`), or why not.

    At counts 10 and 1,000 and per band of a seed 000 pool of 2,000 queries
    drawn with the release's seed (whatever workload the evaluation used: the
    same pool on every engine and every page), on tables of at most
    :data:`core.intervals.MAX_ROWS` records (:func:`core.intervals.block`, the
    pages' and the report's rule too); the Dask engine loads such a table here
    so both engines print the same figures.
    """
    from .intervals import MAX_ROWS, block
    from .table import Dataset

    if int(data.n) > MAX_ROWS:
        return block(data, mechanism, raw, seed)  # said, without reading the table (the Dask engine's summary)
    if not isinstance(data, Dataset):  # the Dask engine's summary: the table itself, read here
        data = dataset(request)
    return block(data, mechanism, raw, seed)


# ------------------------------------------------------------------ the explorer and the report
@dataclass(frozen=True)
class Explore:
    """What the trade-off map, the recommender and the report measure: mechanisms, queries, attacked records."""

    mechanisms: tuple[str, ...] | None = None
    queries: int = 2000
    records: int = 2000
    seed: int = 1


def explorer(request: Request, explore: Explore):
    """``(data, mechanism names, seed 000 workload, attack targets)`` for the map, recommender and report."""
    from . import mechanisms
    from .risk import targets
    from .workload import seed000

    names = list(dict.fromkeys(explore.mechanisms)) if explore.mechanisms else list(mechanisms.MECHANISMS)
    for n in names:
        mechanisms.get(n)
    for flag in ("queries", "records"):
        if getattr(explore, flag) < 1:
            raise ParameterError(f"--{flag} must be a positive number. Got {getattr(explore, flag)}.")
    data = dataset(request)
    t = targets(data, explore.records, explore.seed)
    return data, names, seed000(data, queries=explore.queries, seed=explore.seed), t


def tradeoff(request: Request, explore: Explore, progress: Callable[[float, str], None] | None = None):
    """Every mechanism's risk and utility along its main parameter: ``(data, points, not eligible, pareto front)``."""
    from .risk import pareto, sweep_points

    data, names, workload, t = explorer(request, explore)
    points, skipped = sweep_points(data, names, workload, t, explore.seed, progress=progress)
    return data, t, points, skipped, pareto(points, risk="added_risk")


def recommend(request: Request, explore: Explore, goals, progress: Callable[[float, str], None] | None = None):
    """The settings per mechanism that meet ``goals`` (:class:`core.recommend.Goals`) with the best utility.

    Returns ``(recommendations, data, attack targets)``.
    """
    from .recommend import recommend as run

    data, names, workload, t = explorer(request, explore)
    return run(data, names, goals, workload, t, explore.seed, progress=progress), data, t


def report(request: Request, explore: Explore, progress: Callable[[float, str], None] | None = None):
    """The review meeting's HTML report about ``request``'s setting with every other mechanism beside it.

    Returns ``(html, data, attack targets)``.
    """
    from .report import build as build_report

    setting = request.setting
    data, names, _, t = explorer(request, explore)
    html_text = build_report(data, setting.mechanism, dict(setting.params), int(setting.seed),
                             [n for n in names if n != setting.mechanism], queries=explore.queries,
                             records=explore.records, progress=progress, decision=request.decision)
    return html_text, data, t


def session_report(file: str | Path, explore: Explore, data: str | None = None, options: "ReadOptions | None" = None,
                   progress: Callable[[float, str], None] | None = None) -> tuple[str, SessionRequest, str]:
    """The report of a session file's decision (its chosen pin) or, without one, its current setting.

    Returns ``(html, session request, what the report is about)``; the
    session request's notes say when the session was saved with another
    randomness version.  The mechanisms compared default to the pins'
    mechanisms (the alternatives considered); every pin stands side by side.
    """
    from . import mechanisms, rng
    from .report import build as build_report

    for flag in ("queries", "records"):
        if getattr(explore, flag) < 1:
            raise ParameterError(f"--{flag} must be a positive number. Got {getattr(explore, flag)}.")
    for n in explore.mechanisms or ():
        mechanisms.get(n)
    session, frame, path = read_session(file)
    notes = []
    differs = rng.mismatch(session.randomness, f"The session '{path.name}'",
                           "the report shows this version's releases of its settings", verb="was saved with")
    if differs:
        notes.append(differs)
    if session.decision is not None:
        chosen = session.pin(session.decision.chosen).setting
        decision = session.decision.to_json(session.pins)
        about = f"the decision's chosen pin '{session.decision.chosen}'"
    else:
        chosen, decision = session.current, None
        about = "the session's current setting (the session records no decision)"
    table = session_table(session, frame, data, options)
    bands = {col: spec for col, spec in (session.bands or {}).items() if col in session.qi}
    request = Request(chosen, data=data, options=options, table=table, sensitive=session.sensitive,
                      qi=tuple(session.qi), bands=bands, decision=decision)
    bound = dataset(request)
    names = list(dict.fromkeys(explore.mechanisms)) if explore.mechanisms else None
    if names is None:
        names = list(dict.fromkeys([chosen.mechanism, *(p.setting.mechanism for p in session.pins)]))
    html_text = build_report(bound, chosen.mechanism, dict(chosen.params), int(chosen.seed),
                             [n for n in names if n != chosen.mechanism], queries=explore.queries,
                             records=explore.records, progress=progress, decision=decision,
                             pins=[p.to_json() for p in session.pins])
    return html_text, SessionRequest(request, session, path, tuple(notes)), about
