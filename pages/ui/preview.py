"""The upload preview on Home: how a file was read, controls to change each choice, and "Use this table".

The reading itself is :func:`core.table.load` (:mod:`core.data.read`);
this module only draws it.  Every control starts at "detect" (the label
says what detection found) and any choice made replaces the detection for
that option only; the file is read again from the uploader's bytes, in
memory.  The last read is kept in the session (``wb_preview``) so that a
rerun that changes nothing does not parse the file again.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core.data.read import DEFAULT_NA, DELIMITER_NAMES, ENCODINGS, FORMAT_TITLES, ReadOptions, ReadResult
from core.errors import WorkbenchError
from core.table import MAX_BYTES, Table, load

from .fmt import md

PREVIEW = "wb_preview"
AUTO = "detect"
#: widget keys of the read controls (cleared when another file is uploaded)
KEYS = ("w_read_delimiter", "w_read_header", "w_read_names", "w_read_encoding", "w_read_sheet", "w_read_na",
        "w_read_decimal")
ACCEPTED = ("delimited text with any extension (.csv, .tsv, .txt, .data ...; comma, semicolon, tab, pipe or "
            "spaces; UTF-8, UTF-16, Latin-1 or cp1252), Excel .xlsx, Parquet, Feather/Arrow, SPSS .sav, "
            "Stata .dta, SAS .xpt or .sas7bdat")


def upload_limit_mb() -> int:
    """The largest upload in MB: the server's ``maxUploadSize`` or core's byte limit, whichever is lower."""
    try:
        server = int(st.get_option("server.maxUploadSize"))
    except Exception:  # noqa: BLE001 - outside a server the option may be missing
        server = MAX_BYTES // 2**20
    return min(server, MAX_BYTES // 2**20)


def accepted_text() -> str:
    limit = upload_limit_mb()
    return (f"Accepted: {ACCEPTED}; the content decides, not the name. Up to {limit:,} MB here; for a larger "
            f"file use the command line, which reads the same formats: `python -m core inspect FILE`, then "
            f"`python -m core sanitize FILE --sensitive COLUMN ...`.")


def read_upload(name: str, data: bytes, options: ReadOptions | None) -> tuple[Table | None, ReadResult | None,
                                                                                  str | None]:
    """``(table, result, None)`` or ``(None, None, one-sentence message)``; never raises."""
    try:
        table, result = load(bytes(data), filename=name, options=options)
        return table, result, None
    except WorkbenchError as exc:
        return None, None, str(exc)
    except Exception as exc:  # noqa: BLE001 - a reader bug on hostile input: still one sentence
        return None, None, (f"'{name}' could not be read as a table ({type(exc).__name__}); choose one of: "
                            f"{ACCEPTED}.")


def seed_controls(read: dict | None) -> None:
    """Set the read controls to the options of ``read`` (:meth:`core.data.read.ReadResult.record`: the options
    given, the rest detected), so the preview of a file read again starts where its table in use was read.

    An option a control cannot show (a delimiter or encoding outside its
    list, a name holding a comma) leaves that control at "detect": the
    preview then says what detection found.
    """
    if not read:
        return
    ss = st.session_state
    options = ReadOptions.from_json(read)
    if options.delimiter in (",", ";", "\t", "|", "whitespace"):
        ss["w_read_delimiter"] = options.delimiter
    if options.header is not None:
        ss["w_read_header"] = "header" if options.header else "data"
    if options.names is not None and not any("," in n for n in options.names):
        ss["w_read_names"] = ", ".join(options.names)
    if options.encoding in ENCODINGS:
        ss["w_read_encoding"] = options.encoding
    if options.sheet is not None:
        ss["w_read_sheet"] = str(options.sheet)
    if options.na is not None:
        ss["w_read_na"] = ", ".join(options.na)
    if options.decimal in (".", ","):
        ss["w_read_decimal"] = options.decimal


def _options_from_widgets(fmt: str) -> tuple[ReadOptions | None, str | None]:
    """The options the controls set (``detect`` = unset); or a message for a value that is not valid."""
    ss = st.session_state
    values: dict[str, Any] = {}
    delim = ss.get("w_read_delimiter", AUTO)
    if fmt == "text" and delim != AUTO:
        values["delimiter"] = delim
    header = ss.get("w_read_header", AUTO)
    if fmt in ("text", "xlsx") and header != AUTO:
        values["header"] = header == "header"
    names = (ss.get("w_read_names") or "").strip()
    if names:
        values["names"] = tuple(n.strip() for n in names.split(","))
    enc = ss.get("w_read_encoding", AUTO)
    if fmt == "text" and enc != AUTO:
        values["encoding"] = enc
    sheet = ss.get("w_read_sheet", AUTO)
    if fmt == "xlsx" and sheet != AUTO:
        values["sheet"] = sheet
    na = ss.get("w_read_na")
    if na is not None and na.strip() != ", ".join(DEFAULT_NA):
        values["na"] = tuple(m.strip() for m in na.split(",") if m.strip())
    dec = ss.get("w_read_decimal", AUTO)
    if fmt in ("text", "xlsx") and dec != AUTO:
        values["decimal"] = dec
    try:
        return (ReadOptions(**values) if values else None), None
    except WorkbenchError as exc:
        return None, str(exc)


def _format_of(data: bytes, name: str) -> str | None:
    from core.data.read import detect_format

    try:
        return detect_format(data, name)
    except WorkbenchError:
        return None


def show(uploaded) -> tuple[Table, ReadResult] | None:
    """Draw the preview of ``uploaded`` (a Streamlit UploadedFile); the table once "Use this table" is pressed."""
    ss = st.session_state
    in_use = ss.get("wb_upload")  # pages.ui.state.UPLOAD: the table in use, when it is this file read some way
    in_use = in_use if in_use and in_use.get("file_id") == uploaded.file_id else None
    read_for = (uploaded.file_id, in_use["table"].content_hash if in_use else None)
    if ss.get("_w_read_for") != read_for:
        for key in KEYS:
            ss.pop(key, None)
        ss["_w_read_for"] = read_for
        ss[PREVIEW] = None
        if in_use:  # read again: the controls start from how the table in use was read (a reopened session's)
            seed_controls(getattr(in_use["table"], "read", None))
    data = uploaded.getvalue()
    fmt = _format_of(data, uploaded.name)
    options, problem = _options_from_widgets(fmt or "")
    cache_key = (uploaded.file_id, repr(options))
    kept = ss.get(PREVIEW)
    if problem is not None:
        table, result, message = None, None, problem
    elif kept and kept.get("key") == cache_key:
        table, result, message = kept["table"], kept["result"], kept["message"]
    else:
        table, result, message = read_upload(uploaded.name, data, options)
        ss[PREVIEW] = {"key": cache_key, "table": table, "result": result, "message": message}

    st.subheader("How the file was read")
    if message:
        st.error(md(message))
    if fmt is not None:
        _controls(fmt, result, data)
    if result is None or table is None:
        return None
    _summary(table, result)
    if st.button("Use this table", key="w_use_upload", type="primary",
                 help="Load the table as previewed; you can come back and read the file differently."):
        return table, result
    st.caption("Check the preview, change what was detected wrongly, then press **Use this table**.")
    return None


def _controls(fmt: str, result: ReadResult | None, data: bytes) -> None:
    """The read controls for ``fmt``; each label says what detection found (from ``result``, when read)."""
    used = result.options if result is not None else None

    def found(value: Any, names: dict | None = None) -> str:
        if used is None or value is None:
            return AUTO
        return f"{AUTO} (found: {(names or {}).get(value, value)})"

    cols = st.columns(4)
    if fmt == "text":
        with cols[0]:
            choices = [AUTO, ",", ";", "\t", "|", "whitespace"]
            st.selectbox("Delimiter", choices, key="w_read_delimiter",
                         format_func=lambda v: found(used and used.delimiter, DELIMITER_NAMES) if v == AUTO
                         else DELIMITER_NAMES[v],
                         help="What separates the fields; whitespace means runs of spaces or tabs.")
        with cols[2]:
            st.selectbox("Encoding", [AUTO, *ENCODINGS], key="w_read_encoding",
                         format_func=lambda v: found(used and used.encoding) if v == AUTO else v,
                         help="How the text is stored: UTF-8 (with or without BOM), UTF-16, Latin-1, cp1252.")
        with cols[3]:
            st.selectbox("Decimal mark", [AUTO, ".", ","], key="w_read_decimal",
                         format_func=lambda v: found(used and used.decimal) if v == AUTO else f"'{v}'",
                         help="A decimal comma (3,5) is detected when the delimiter is not a comma.")
    if fmt == "xlsx":
        with cols[0]:
            if result is not None:
                sheets = list(result.sheets)
            else:  # a failed read (an empty sheet chosen) keeps the picker, so the choice can be undone
                from core.data.read import sheet_names

                sheets = sheet_names(data)
            if st.session_state.get("w_read_sheet", AUTO) not in (AUTO, *sheets):
                st.session_state["w_read_sheet"] = AUTO  # a position restored from a session: detection names it
            st.selectbox("Sheet", [AUTO, *sheets], key="w_read_sheet",
                         format_func=lambda v: (found(used and used.sheet) if v == AUTO else v),
                         help="By default the first sheet with data.")
    if fmt in ("text", "xlsx"):
        with cols[1]:
            st.selectbox("First row", [AUTO, "header", "data"], key="w_read_header",
                         format_func=lambda v: (found(None if used is None else ("header" if used.header else "data"))
                                                if v == AUTO else
                                                {"header": "column names", "data": "data (no header)"}[v]),
                         help="Whether the first row holds the column names. Without one the columns are "
                              "named col1, col2, ... unless you type names below.")
    c1, c2 = st.columns(2)
    with c1:
        st.text_input("Column names (optional, comma separated)", key="w_read_names",
                      placeholder="age, workclass, education, ...",
                      help="Names for every column, in order: they replace the header row, or name the columns "
                           "of a file without one.")
    with c2:
        if "w_read_na" not in st.session_state:
            st.session_state["w_read_na"] = ", ".join(DEFAULT_NA)
        st.text_input("Missing-value markers (comma separated)", key="w_read_na",
                      help="Cell texts read as missing; an empty cell is always missing.")


def _summary(table: Table, result: ReadResult) -> None:
    frame = table.frame
    o = result.options
    parts = [f"{len(frame):,} rows, {frame.shape[1]} columns", f"format: {FORMAT_TITLES.get(result.format)}"]
    detected = set(result.detected)

    def tag(key: str) -> str:
        return " (detected)" if key in detected else " (chosen)"

    if o.delimiter is not None:
        parts.append(f"delimiter: {DELIMITER_NAMES.get(o.delimiter, repr(o.delimiter))}{tag('delimiter')}")
    if o.header is not None:
        parts.append(("first row: column names" if o.header else "first row: data") + tag("header"))
    if o.encoding is not None:
        parts.append(f"encoding: {o.encoding}{tag('encoding')}")
    if o.decimal == ",":
        parts.append(f"decimal comma{tag('decimal')}")
    if o.sheet is not None:
        parts.append(f"sheet: {md(o.sheet)}{tag('sheet')}")
    st.markdown("**Read as** " + "; ".join(parts) + ".")
    found = ", ".join(f"{'empty cells' if k == '' else ('stored as missing' if k == '(missing)' else repr(k))}: "
                      f"{v:,}" for k, v in result.missing.items())
    st.caption("Missing values found: " + (md(found) if found else "none") + ". Markers looked for: empty, "
               + md(", ".join(o.na if o.na is not None else DEFAULT_NA)) + ".")
    for note in result.notes:
        st.caption(md(note))
    types = result.types()
    left, right = st.columns([1, 2])
    with left:
        st.dataframe(pd.DataFrame({"column": list(types), "type": list(types.values()),
                                   "missing": [int(frame[c].isna().sum()) for c in frame.columns]}),
                     hide_index=True, key="preview_types", height=min(420, 38 + 35 * len(types)))
    with right:
        st.dataframe(frame.head(10), hide_index=True, key="preview_rows", placeholder="")
        st.caption("The first 10 rows as they will be used (missing values shown empty).")
