"""The current table and dataset, uploads, and small data helpers for the pages.

:func:`current_table` and :func:`current_dataset` turn the plain state keys
(:mod:`pages.ui.state`) into a :class:`core.table.Table` and a bound
:class:`core.table.Dataset`, through the cached wrappers.  Uploads are
parsed by :func:`handle_upload` (a plain function, testable without a
browser) and kept as a parsed ``Table`` in ``st.session_state`` only; the
bytes are never written to disk.  Results computed from it are cached under
the session's id (:mod:`pages.ui.cached`) and dropped when the session ends
or the upload is replaced or forgotten (:func:`keep_upload`,
:func:`forget_upload`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from core import samples
from core.errors import WorkbenchError, clip
from core.lru import give_back_memory
from core.release import Release
from core.data import folder as _folder
from core.table import Dataset, Table, default_columns, load_table

from . import cached, state


class TableProblem(Exception):
    """No usable table: the message says what to do (shown by the page).

    ``failure``: the table asked for cannot be opened (shown as a warning);
    otherwise there is simply no table chosen yet (an info box).
    """

    def __init__(self, message: str, failure: bool = False):
        super().__init__(message)
        self.failure = failure


def handle_upload(name: str, data: bytes) -> tuple[Table | None, str | None]:
    """Parse uploaded bytes in memory; return ``(table, None)`` or ``(None, message)``.

    The message is the core's one-sentence :class:`WorkbenchError` text; any
    other failure (a library error on malformed input) gets one sentence
    too, never a traceback.  What a refused file's parse allocated is handed
    back to the system at once (:func:`core.lru.give_back_memory`).
    """
    try:
        return load_table(bytes(data), filename=name), None
    except WorkbenchError as exc:
        message = str(exc)
    except Exception as exc:  # a reader bug on hostile input: still one sentence
        message = (f"'{name}' could not be read as a table ({type(exc).__name__}); "
                   "choose delimited text, Excel, Parquet, Feather, SPSS, Stata or SAS.")
    give_back_memory()
    return None, message


def keep_upload(name: str, file_id: str, table: Table) -> None:
    """Make ``table`` this session's upload, dropping what was cached for the one before."""
    ss = st.session_state
    had = ss.get(state.UPLOAD)
    ss[state.UPLOAD] = {"name": name, "file_id": file_id, "table": table}
    if had:
        cached.forget_session_results()


def forget_upload() -> None:
    """Drop this session's upload and everything cached from it, and give the memory back."""
    st.session_state[state.UPLOAD] = None
    cached.forget_session_results()


def want_upload_message() -> str:
    """The one sentence shown when a reload or link names an uploaded table this session does not hold."""
    want = st.session_state.get(state.WANT_UPLOAD) or {}
    return (f"This link or reload refers to an uploaded table (content hash {want.get('hash', '?')}) that this "
            "browser session does not hold (uploads are kept only in the session that loaded them): upload the "
            "same file again on the Home page; only a file with that content hash is accepted.")


def wanted_upload_refusal(table: Table, name: str) -> str | None:
    """Why an upload is refused while a link's upload is awaited (another content hash), or None to accept it."""
    want = st.session_state.get(state.WANT_UPLOAD) or {}
    if want.get("hash") and table.content_hash != want["hash"]:
        return (f"'{name}' has content hash {table.content_hash}, not the {want['hash']} this link names, so it "
                "was not loaded: upload the file the link was made with, or press 'Use another table' to "
                "drop the link's table.")
    return None


def sample_info(name: str):
    return next((s for s in samples.list_samples() if s.name == name), None)


def current_table() -> Table:
    """The table chosen on the Home page; raises :class:`TableProblem` if there is none."""
    ss = st.session_state
    if ss.get(state.SOURCE) == "folder":
        return folder_table()
    if ss.get(state.SOURCE) == "upload":
        up = ss.get(state.UPLOAD)
        if not up and ss.get(state.WANT_UPLOAD):
            raise TableProblem(want_upload_message())
        if not up:
            raise TableProblem("No file is uploaded yet: upload a data file (CSV or other delimited text, Excel, "
                               "Parquet, SPSS, Stata or SAS) on the Home page, "
                               "or choose a bundled sample there.")
        return up["table"]
    spec = state.sample_spec()
    try:
        return cached.sample_table(spec)
    except WorkbenchError as exc:
        raise TableProblem(str(exc)) from None


def columns_for(table: Table) -> tuple[str, tuple[str, ...]]:
    """The stored SA/QIs where they fit ``table``, else its defaults (and store what is used).

    A stored SA that is not a column gives way to the table's default SA;
    stored QIs that are not columns (or are the SA) are dropped, and the
    table's default QIs are used only when none is left.
    """
    ss = st.session_state
    cols = table.columns
    sa, qi = ss.get(state.SA), ss.get(state.QI)
    qi = tuple(qi) if qi else ()
    if sa in cols and qi and all(c in cols for c in qi) and sa not in qi:
        return sa, qi
    d_sa, d_qi = _defaults(table)
    if sa not in cols:
        sa = d_sa
    qi = tuple(dict.fromkeys(c for c in qi if c in cols and c != sa))
    if not qi:
        qi = tuple(c for c in d_qi if c != sa) or tuple(c for c in cols if c != sa)
    ss[state.SA], ss[state.QI] = sa, qi
    return sa, qi


def link_column_notes() -> list[str]:
    """Notes for the SA/QI columns a shared link named that the table does not have (checked once).

    :func:`pages.ui.state.restore` cannot check them: the table is loaded
    only afterwards.  Returns "Ignored from the link: ..." sentences naming
    what is used instead; nothing when the table itself cannot be loaded
    (the page says why).
    """
    ss = st.session_state
    asked = ss.pop(state.LINK_COLUMNS, None)
    if not asked:
        return []
    try:
        table = current_table()
    except TableProblem:
        return []
    cols = table.columns
    sa, qi = columns_for(table)
    label = table_label()
    notes = []
    if "sa" in asked and asked["sa"] != sa:
        notes.append(f"Ignored from the link: the sensitive attribute '{clip(asked['sa'])}' is not a column of "
                     f"{label}; '{sa}' is used.")
    if "qi" in asked:
        dropped = [c for c in asked["qi"] if c not in qi]
        if dropped:
            why = clip(", ".join(f"'{clip(c)}'" + ("" if c in cols else " (no such column)") for c in dropped), 600)
            notes.append(f"Ignored from the link: QI column{'s' if len(dropped) > 1 else ''} {why} of {label}"
                         + (f" ('{sa}' is the sensitive attribute)" if sa in dropped else "")
                         + f"; the QIs used are {', '.join(qi)}.")
    return notes


def proposal(table: Table):
    """:func:`core.table.proposal` of ``table`` (cached per content), or None when it cannot be made."""
    return _proposal(table, f"{table.name}|{table.key}")


@cached.memo("proposals")
def _proposal(_table: Table, table_id: str):
    from core.table import proposal as _core_proposal

    try:
        return _core_proposal(_table)
    except WorkbenchError:
        return None


def _defaults(table: Table) -> tuple[str, tuple[str, ...]]:
    try:
        p = proposal(table)
        if p is not None:
            return p.sa, p.qi
        return default_columns(table)
    except WorkbenchError:
        cols = table.columns
        return cols[-1], tuple(cols[:-1])


def bands_for(table: Table, qi: tuple[str, ...]) -> dict[str, dict]:
    """The stored bands (``wb_bands``) of the chosen QIs that are numeric columns of ``table``.

    A band of a column that is not a chosen QI stays stored (it applies
    again when the column is chosen) but is not applied.
    """
    from core.data.banding import is_numeric

    stored = st.session_state.get(state.BANDS) or {}
    frame = table.frame
    return {c: spec for c, spec in stored.items()
            if c in qi and c in frame.columns and is_numeric(frame[c])}


def current_dataset() -> Dataset:
    """The current table bound to the stored SA/QIs and bands; raises :class:`TableProblem`."""
    table = current_table()
    sa, qi = columns_for(table)
    try:
        data = cached.dataset(table, table.key, sa, tuple(qi), cached.band_items(bands_for(table, qi)))
    except WorkbenchError as exc:
        raise TableProblem(str(exc)) from None
    state.bind_table(data.key)  # each table's pins and decision stay with it (issue 23 §1)
    return data


def table_label(table: Table | None = None) -> str:
    ss = st.session_state
    if ss.get(state.SOURCE) == "folder":
        choice = ss.get(state.FOLDER) or {}
        try:
            total = folder_table().read["sample"]["of"]
        except (TableProblem, KeyError, TypeError):
            return f"data folder '{choice.get('name', '?')}' (not opened)"
        return (f"data folder '{choice.get('name')}' (a seeded sample of {int(choice.get('rows', 0)):,} of its "
                f"{total:,} rows, sample seed {choice.get('seed', 0)})")
    if ss.get(state.SOURCE) == "upload":
        up = ss.get(state.UPLOAD)
        return f"upload '{up['name']}'" if up else "no upload yet"
    spec = state.sample_spec() or ""
    info = sample_info(spec.partition(":")[0])
    if info is None:
        return spec
    if info.sized:
        return f"{info.name} ({int(spec.partition(':')[2]):,} rows)"
    return info.title


# ---------------------------------------------------------------- data folder
def folder_root():
    """The server's data folder (``WORKBENCH_DATA_DIR``), or None (:func:`core.data.folder.root`)."""
    return _folder.root()


def folder_entries() -> list:
    """The data folder's tables (listed again on every run: files may come and go)."""
    base = _folder.root()
    return _folder.entries(base) if base is not None else []


@cached.memo("tables", spinner="Sampling the table of the data folder…", sticky=True)
def _folder_sample(name: str, rows: int, seed: int, stamp: tuple) -> Table:
    base = _folder.root()
    table, _ = _folder.open_sample(base, name, rows, seed)
    cached._SAMPLE_TABLES.add(table)  # the server's files, not a session's upload: shared between sessions
    return table


def no_folder_message() -> str:
    """What a link to a data-folder table meets on a server started without a data folder."""
    return (f"The server was started without a data folder (set {_folder.ENV} to a folder of Parquet, Arrow or "
            "CSV tables and start it again), so choose a bundled sample or upload a file.")


def folder_table() -> Table:
    """The seeded sample of the data-folder table chosen on Home; raises :class:`TableProblem`."""
    choice = st.session_state.get(state.FOLDER) or {}
    base = _folder.root()
    if base is None:
        raise TableProblem(no_folder_message(), failure=True)
    if not choice.get("name"):
        raise TableProblem("Choose a table of the data folder on the Home page.")
    try:
        path = _folder.resolve(base, choice["name"])
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
        return _folder_sample(choice["name"], int(choice.get("rows") or _folder.DEFAULT_SAMPLE_ROWS),
                              int(choice.get("seed") or 0), stamp)
    except WorkbenchError as exc:
        raise TableProblem(str(exc), failure=True) from None


def folder_picker() -> None:
    """Home's data-folder choice: the folder's tables, the sample's size and seed (stored in ``wb_folder``)."""
    ss = st.session_state
    listed = folder_entries()
    if not listed:
        st.info("The data folder holds no Parquet, Arrow or CSV table yet; put files or Parquet dataset folders "
                "in it (python -m core generate census --rows N --out FOLDER/census writes one).")
        return
    names = [e.name for e in listed]
    described = {e.name: e.describe() for e in listed}
    choice = dict(ss.get(state.FOLDER) or {})
    shown = state.seed_widget("w_folder_name", choice.get("name") if choice.get("name") in names else names[0],
                              lambda v: v in names)
    name = st.selectbox("Table of the data folder", names, key="w_folder_name", index=state.index_of(names, shown),
                        format_func=described.get)
    c1, c2 = st.columns(2)
    shown = state.seed_widget("w_folder_rows", int(choice.get("rows") or _folder.DEFAULT_SAMPLE_ROWS),
                              lambda v: isinstance(v, int))
    rows = c1.number_input("Rows of the sample (records)", min_value=1, max_value=_folder.MAX_SAMPLE_ROWS,
                           step=10_000, key="w_folder_rows", value=shown,
                           help="The pages explore a seeded sample of the table; the Sanitize page shows the "
                                "command that releases the whole table.")
    shown = state.seed_widget("w_folder_seed", int(choice.get("seed") or 0), lambda v: isinstance(v, int))
    seed = c2.number_input("Sample seed", min_value=0, max_value=2**31 - 1, step=1, key="w_folder_seed", value=shown,
                           help="The same seed and size always give the same sample.")
    ss[state.FOLDER] = {"name": name, "rows": int(rows), "seed": int(seed)}
    entry = next(e for e in listed if e.name == name)
    total = f"{entry.rows:,}" if entry.rows is not None else "all its"
    st.caption(f"Every page works on a seeded sample of {int(rows):,} of the {total} rows (sample seed "
               f"{int(seed)}); the Sanitize page shows the command that releases the whole table. Only the files "
               "of the server's data folder can be opened here.")


def folder_command(release: Release) -> str | None:
    """The command that releases the whole data-folder table as ``release`` released its sample (or None)."""
    choice = st.session_state.get(state.FOLDER) or {}
    base = _folder.root()
    if st.session_state.get(state.SOURCE) != "folder" or base is None or not choice.get("name"):
        return None
    try:
        return _folder.full_command(base, choice["name"], release.reproduce_command(), engines=_has_engines())
    except WorkbenchError:
        return None


def folder_release_text() -> str:
    """What the Sanitize page says above :func:`folder_command` (plain text: the table's name is user data)."""
    choice = st.session_state.get(state.FOLDER) or {}
    total = folder_table().read["sample"]["of"]
    return (f"This release is of a seeded sample of {int(choice.get('rows', 0)):,} of the {total:,} rows of "
            f"'{choice.get('name')}' (sample seed {int(choice.get('seed') or 0)}); the command line does not draw "
            "that sample. Release the whole table, with the same columns, mechanism, parameters and seed, with:")


def _has_engines() -> bool:
    """Whether this version's command line takes ``--engine`` (issue 15's Dask engine)."""
    from core.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return any("--engine" in a.option_strings for a in sub.choices["sanitize"]._actions)


# ---------------------------------------------------------------- previews
def original_preview(data: Dataset, rows: int = 20) -> pd.DataFrame:
    """First ``rows`` records, SA first then QIs (decoded from codes, cheap on 500K rows)."""
    k = min(rows, data.n)
    out = {data.sa: data.sa_labels[data.sa_codes[:k]]}
    out.update({c: data.qi_labels[j][data.qi_codes[j][:k]] for j, c in enumerate(data.qi)})
    return pd.DataFrame(out)


def sa_first(frame: pd.DataFrame, sa: str) -> pd.DataFrame:
    """The same frame with the SA column first (the column worth comparing in narrow previews)."""
    if sa not in frame.columns:
        return frame
    return frame[[sa, *[c for c in frame.columns if c != sa]]]


#: rows counted at a time by :func:`release_sa_counts`
BLOCK_ROWS = 1 << 20


def release_sa_counts(release: Release, data: Dataset) -> tuple[str, np.ndarray] | None:
    """Records per SA value in the first published table that has the SA column.

    A table with a count column (``count``, ``noisy_count``, ...) is a
    histogram: its counts are summed; otherwise each row is one record.
    Returns ``(table name, counts aligned with data.sa_labels)`` or None
    when no published table carries the SA (e.g. only QI tables).
    """
    for name, table in release.tables.items():
        if data.sa not in table.columns:
            continue
        labels = table.labels.get(data.sa)
        codes = np.asarray(table.columns[data.sa])
        if labels is None or len(labels) != data.m or not np.array_equal(np.asarray(labels), data.sa_labels):
            continue
        weight_col = next((c for c in table.columns if c != data.sa and str(c).lower().endswith("count")
                           and table.labels.get(c) is None), None)
        weights = None if weight_col is None else np.asarray(table.columns[weight_col])
        counts = np.zeros(data.m, dtype=np.int64 if weights is None else float)
        for lo in range(0, len(codes), BLOCK_ROWS):  # block by block: no int64 or float copy of a census column
            w = None if weights is None else weights[lo:lo + BLOCK_ROWS]
            counts += np.bincount(codes[lo:lo + BLOCK_ROWS], weights=w, minlength=data.m)
        return name, counts
    return None


def _compact(value: Any, limit: int = 12) -> str:
    """A value of any shape as one short line of text (numbers formatted, long lists cut)."""
    from .fmt import number

    if isinstance(value, dict):
        items = list(value.items())
        text = ", ".join(f"{k}: {_compact(v, limit)}" for k, v in items[:limit])
        return text + (f", … ({len(items):,} entries)" if len(items) > limit else "")
    if isinstance(value, (list, tuple, np.ndarray)):
        seq = list(value)
        text = ", ".join(_compact(v, limit) for v in seq[:limit])
        return text + (f", … ({len(seq):,} in all)" if len(seq) > limit else "")
    return number(value)


def _named(value: Any) -> bool:
    """A small dict of named read-outs (not a histogram keyed by values or sizes)."""
    return (isinstance(value, dict) and 0 < len(value) <= 8
            and not all(str(k).lstrip("-").replace(".", "").isdigit() for k in value))


def mapping_frame(values: dict[str, Any], scope: str | None = None) -> pd.DataFrame:
    """A ``{key: value}`` mapping as a two-column table of readable text.

    Small dicts of named read-outs become one row each (``small sum privacy ·
    T_p``); histograms and long lists are summarised on one line.  ``scope``
    is the mechanism (or curve) that reports the values: some keys mean
    different things per mechanism (:data:`pages.ui.fmt.SCOPED`).
    """
    from .fmt import readable, with_unit

    rows = []
    for key, value in values.items():
        if _named(value):
            for sub, v in value.items():
                shown = (with_unit(str(sub), v, scope) if not isinstance(v, (dict, list, tuple, np.ndarray))
                         else _compact(v))
                rows.append({"item": f"{readable(key, scope)} · {readable(str(sub), scope)}", "value": shown})
        elif isinstance(value, (dict, list, tuple, np.ndarray)):
            rows.append({"item": readable(key, scope), "value": _compact(value)})
        else:
            rows.append({"item": readable(key, scope), "value": with_unit(key, value, scope)})
    return pd.DataFrame(rows, columns=["item", "value"])


#: a metric label longer than this is cut before its formula (the whole label goes to the help text):
#: st.metric truncates labels and values with an ellipsis ("⌊|T| / …", "0.001165 (0.…")
METRIC_LABEL_CHARS = 32


def percent(value: float) -> str:
    """A probability as one percentage with 4 significant digits: ``23.08%``, ``0.1165%``, ``100%``."""
    from .fmt import number

    pct = float(value) * 100
    return "0%" if pct == 0 else f"{number(pct, 4)}%"


def _unit(key: str, scope: str | None) -> str:
    from . import fmt

    found = getattr(fmt, "SCOPED", {}).get(scope or "", {}).get(key) or fmt.LABELS.get(key)
    return found[1] if found else ""


def metric_parts(key: str, value: Any, scope: str | None = None) -> tuple[str, str, str]:
    """``(label, value, help)`` of a read-out for ``st.metric``, short enough not to be cut off.

    Probabilities and shares are shown as one percentage with 4 significant
    digits (``0.1165%``, where the number and its rounded percent,
    ``0.001165 (0.1%)``, was cut to ``0.001165 (0.…``); a label longer than
    :data:`METRIC_LABEL_CHARS` keeps the words before its formula
    (``largest ℓ Anatomy can deliver``).  The help text carries the full
    label and the exact value.
    """
    from .fmt import is_number, number, readable, with_unit

    label = readable(key, scope)
    full = with_unit(key, value, scope)
    unit = _unit(key, scope)
    text = full
    if is_number(value) and unit in {"probability", "share"} and 0 <= float(value) <= 1:
        text = percent(value)
    elif is_number(value) and float(value) == 1 and unit.endswith("s") and text.endswith(" " + unit):
        text = f"{text[:-len(unit)]}{unit[:-1]}"  # "1 sub-tables" -> "1 sub-table"
    short = label
    if len(label) > METRIC_LABEL_CHARS:
        cuts = [i for i in (label.find(", "), label.find(" ("), label.find(" = ")) if i > 0]
        if cuts:
            short = label[:min(cuts)]
    if text != full and unit in {"probability", "share"}:
        help_text = f"{label}: {number(value, 6)} = {float(value) * 100:.6g}%"
    else:
        exact = number(value, 6) if is_number(value) else full
        help_text = f"{label}: {full}" + (f" (exactly {exact})" if exact not in full else "")
    return short, text, help_text


# ---------------------------------------------------------------- session files
def _reread_for(session, up: dict | None) -> dict | None:
    """The upload in use, or the file in the uploader read again with the session's read options when that gives
    the session's table (names typed, header choice, delimiter, markers are not asked for again)."""
    if up and session.table.names(up["table"]):
        return up
    options = session.table.read_options()
    f = st.session_state.get("w_upload")
    if options is None or f is None:
        return up
    from .preview import read_upload

    table, _, problem = read_upload(f.name, f.getvalue(), options)
    if problem is not None or table is None or not session.table.names(table):
        return up
    return {"name": f.name, "file_id": f.file_id, "table": table}


def open_session(data: bytes, filename: str) -> tuple[str, str]:
    """Check a session file whole, then apply it; return ``(kind, sentence)``: ``"success"``, ``"warning"`` or ``"error"``.

    ``"warning"``: opened, but saved with another randomness version
    (:func:`core.rng.mismatch`): the same seeds give other releases here.

    The table it names must be at hand with the same content hash: the
    table embedded in the file, the bundled sample it names, or the upload
    in use.  Nothing is applied unless every check passed.
    """
    from core import session as sess

    ss = st.session_state
    try:
        session, frame = sess.read(data, filename)
        upload = None
        if frame is not None:
            table = sess.embedded_table(session, frame)
            upload = {"name": session.table.name, "file_id": f"session:{table.content_hash}", "table": table}
        elif session.table.kind == "sample":
            table = cached.sample_table(session.table.name)
            sess.check_table(session, table, f"the sample '{session.table.name}' here")
        else:
            up = ss.get(state.UPLOAD)
            up = _reread_for(session, up)  # the file at hand read with the session's read options (issue 23 §3)
            if not up or not session.table.names(up["table"]):
                raise sess.SessionError(
                    f"'{filename}' was saved on {session.table.describe()}, which is not loaded and not inside "
                    "the file: upload that file on this page first, then open the session again (or save "
                    "sessions with the table embedded).")
            table = up["table"]
            sess.check_table(session, table, f"the upload '{up['name']}'")
            upload = up
        cached.dataset(table, table.key, session.sensitive, tuple(session.qi))  # the columns work here
    except WorkbenchError as exc:
        return "error", str(exc)
    except Exception as exc:  # a reader failure on a hostile file: still one sentence
        return "error", (f"'{filename}' could not be opened as a session file ({type(exc).__name__}); nothing "
                         "was changed.")
    from core import rng

    state.apply_session(session, upload)
    n = len(session.pins)
    opened = (f"Opened '{filename}': {session.table.describe()}, {len(session.history)} settings in the "
              f"history, {n} pin{'s' if n != 1 else ''}" + (", a decision record" if session.decision else "") + ".")
    differs = rng.mismatch(session.randomness, "The session", "its settings, pins and decision are kept and "
                           "the releases shown here are this version's", verb="was saved with")
    return ("warning", f"{opened} {differs}") if differs else ("success", opened)
