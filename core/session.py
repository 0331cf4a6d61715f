"""A workbench session as one file: the table, the columns, the choices, pins, history and the decision.

A steward who tried settings, pinned a few and wrote down why one was
chosen saves all of it as one file, reopens it on the Home page later (or
on another machine), and hands it to the command line
(``python -m core sanitize --session F``).  This module is the format and
its checks; it has no Streamlit import.

The file is JSON (``*.workbench.json``)::

    {"format": "privacy-utility workbench session", "version": 1, "randomness": 1,
     "table": {"kind": "sample" | "upload", "name": "adult", "content_hash": "…", "rows": 45222,
               "read": {"format": "csv", "header": false, "names": ["a", "b"], …}},
     "columns": {"sensitive": "occupation", "qi": ["age", "sex"]},
     "bands": {"age": {"method": "width", "width": 10}},
     "current": {"mechanism": "splu", "params": {"gamma": "5"}, "seed": 1},
     "params": {"splu": {"gamma": "5"}, …},
     "pins": [{"name": "…", "mechanism": …, "params": …, "seed": …}],
     "history": [{"mechanism": …, "params": …, "seed": …}],
     "decision": null | {"chosen": "pin name", "rationale": "…", "reviewers": ["…"],
                         "date": "2026-11-24", "verdicts": {"pin name": "…"},
                         "table": "<content hash>|<SA>|<QIs>|<bands>"}}

or a zip (``*.workbench.zip``) holding that JSON as ``session.json`` and
the uploaded table as ``table.parquet``.  Parameter values are written as
text the CLI and :meth:`core.params.Param.parse` read back exactly
(``1/13``, ``ln(3)``); ``null`` means "derive automatically".

Choices made here where the issue is silent:

* Opening validates the whole file first (format, version, every
  mechanism and parameter, seeds, pin names, the decision) and only then
  returns a :class:`Session`; a bad file raises :class:`SessionError` with
  one sentence and nothing is applied.
* A session made from a bundled sample refers to it by spec
  (``census:500000``) and its content hash; an upload by its file name
  and content hash.  Opening checks the hash against the table actually
  loaded (:func:`check_table`): a different table is refused, never
  swapped in silently.
* ``randomness`` is the :data:`core.rng.VERSION` the session's releases
  were drawn with (absent in files saved before it was recorded: 0).  A
  session of another version still opens (its settings and decision are
  valid), with one sentence saying the same seeds draw differently here;
  ``sanitize --session`` refuses to write its release unless asked with
  ``--randomness`` (this version's number).
* The history keeps the last :data:`HISTORY` settings; pins are at most
  :data:`MAX_PINS`, named uniquely (1 to :data:`NAME_CHARS` characters).
* The alternatives of the decision are the pins other than the chosen
  one, derived when the record is written (:meth:`Decision.to_json`
  with the session's pins), so they cannot disagree with the pins.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from . import rng as _rng
from .data import read as _read
from .errors import DataError
from .params import format_value

FORMAT = "privacy-utility workbench session"
VERSION = 1
#: settings kept in the history (oldest dropped first)
HISTORY = 50
#: pins compared side by side at most
MAX_PINS = 6
#: longest pin name
NAME_CHARS = 60
#: longest rationale (characters)
RATIONALE_CHARS = 20_000
#: largest session JSON read (bytes); a session is a few kB, a zip carries its table beside it
MAX_JSON_BYTES = 5 * 2**20
#: seeds a setting may carry (``core.mechanisms.fresh_seed`` draws 31 bits)
MAX_SEED = 2**31 - 1
JSON_NAME = "session.json"
TABLE_NAME = "table.parquet"


class SessionError(DataError):
    """A session file that cannot be opened as it is: the message says why and what to do."""


# ------------------------------------------------------------------ parts
@dataclass(frozen=True)
class Setting:
    """One release setting: mechanism, its raw parameters (None = derived) and the seed."""

    mechanism: str
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 1

    def key(self) -> tuple:
        """Hashable identity: the resolved parameters (a default given or left out is the same) and the seed.

        Two settings with the same key give the same release on the same table.
        """
        from .errors import WorkbenchError
        from .mechanisms import MECHANISMS

        values = dict(self.params)
        mech = MECHANISMS.get(self.mechanism)
        if mech is not None:
            try:
                values = mech.resolve(values)
            except WorkbenchError:
                pass
        return (self.mechanism, tuple(sorted((k, format_value(v)) for k, v in values.items() if v is not None)),
                int(self.seed))

    def to_json(self) -> dict[str, Any]:
        return {"mechanism": self.mechanism,
                "params": {k: (None if v is None else format_value(v)) for k, v in self.params.items()},
                "seed": int(self.seed)}

    def describe(self) -> str:
        """``splu: gamma=5, seed 1``: one line for lists and messages."""
        from .mechanisms import MECHANISMS

        mech = MECHANISMS.get(self.mechanism)
        title = mech.title if mech is not None else self.mechanism
        values = ", ".join(f"{k}={format_value(v)}" for k, v in self.params.items() if v is not None)
        return f"{title}" + (f" ({values})" if values else "") + f", seed {int(self.seed)}"


@dataclass(frozen=True)
class Pin:
    """A named setting the steward keeps to compare and, perhaps, choose."""

    name: str
    setting: Setting

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.setting.to_json()}


@dataclass(frozen=True)
class Decision:
    """The decision record: which pin was chosen, why, by whom and when, with the verdicts.

    ``verdicts`` maps pin names to the verdict text shown when the record
    was written (the chosen pin's and the alternatives').  ``author`` is the
    name of the signed-in person who recorded it, when the app requires
    sign-in (``[auth]`` in its secrets); empty otherwise, and then left out
    of the JSON, so a session file written without sign-in reads as before.
    """

    chosen: str
    rationale: str = ""
    reviewers: tuple[str, ...] = ()
    date: str = ""
    verdicts: Mapping[str, str] = field(default_factory=dict)
    #: the table the record was made on (:attr:`core.table.Dataset.key`: content hash, SA, QIs, bands; "" in a
    #: file saved before it was recorded): a record is never shown or reported as another table's
    table: str = ""
    author: str = ""

    def alternatives(self, pins: Sequence[Pin]) -> list[str]:
        return [p.name for p in pins if p.name != self.chosen]

    def to_json(self, pins: Sequence[Pin] = ()) -> dict[str, Any]:
        out: dict[str, Any] = {"chosen": self.chosen}
        chosen = next((p for p in pins if p.name == self.chosen), None)
        if chosen is not None:
            out["setting"] = chosen.setting.to_json()
        out["alternatives"] = self.alternatives(pins)
        out.update({"rationale": self.rationale, "reviewers": list(self.reviewers), "date": self.date,
                    "verdicts": dict(self.verdicts)})
        if self.table:
            out["table"] = self.table
        if self.author:
            out["author"] = self.author
        return out

    def made_on(self, table_key: str) -> bool:
        """Whether the record belongs to the table ``table_key`` (a record saved without its table: assumed yes)."""
        return not self.table or self.table == table_key


@dataclass(frozen=True)
class TableRef:
    """Which table a session was made on: a bundled sample's spec or an upload's file name, and its hash."""

    kind: str  # "sample" or "upload"
    name: str
    content_hash: str
    rows: int | None = None
    #: how an upload was read (:meth:`core.data.read.ReadResult.record`: the format and the options given: names
    #: typed, header choice, delimiter, markers ...), so reopening reads the same file the same way (issue 23 §3)
    read: Mapping[str, Any] | None = None
    #: a zip's embedded table: the hash of its values (:func:`core.table.values_hash`), which the Parquet copy
    #: inside the zip is checked against; ``content_hash`` stays the hash of the file it was read from
    values_hash: str | None = None
    #: what the reader said about how it read the upload (:attr:`core.table.Table.notes`): a zip's embedded copy
    #: is not read again, so its releases carry these notes as the file's do
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "content_hash": self.content_hash}
        if self.values_hash is not None:
            out["values_hash"] = self.values_hash
        if self.notes:
            out["notes"] = list(self.notes)
        if self.rows is not None:
            out["rows"] = int(self.rows)
        if self.read:
            out["read"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.read.items()}
        return out

    def read_options(self):
        """The :class:`core.data.read.ReadOptions` the upload was read with (None: none recorded)."""
        if not self.read:
            return None
        from .data.read import ReadOptions

        return ReadOptions.from_json(self.read)

    def names(self, table) -> bool:
        """Whether ``table`` (a :class:`core.table.Table`) is this one: its hash, read the same way.

        The content hash of a file is its bytes'; the same bytes read with
        other options (header, delimiter, markers) are another table.
        """
        if not table.known_as(self.content_hash):
            return False
        return not self.read or json.dumps(dict(self.read), sort_keys=True, default=str) == \
            json.dumps(dict(table.read or {}), sort_keys=True, default=str)

    def describe(self) -> str:
        what = f"the sample '{self.name}'" if self.kind == "sample" else f"the uploaded file '{self.name}'"
        return f"{what} (content hash {self.content_hash})"


@dataclass(frozen=True)
class Session:
    """Everything a steward chose in one workbench session."""

    table: TableRef
    sensitive: str
    qi: tuple[str, ...]
    current: Setting
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    pins: tuple[Pin, ...] = ()
    history: tuple[Setting, ...] = ()
    decision: Decision | None = None
    #: ``{column: banding spec}`` (:meth:`core.data.banding.Banding.spec`); applied to the columns that are QIs
    bands: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: the randomness version (:data:`core.rng.VERSION`) the session's releases were drawn with; 0 for a file
    #: saved before it was recorded.  Opening one of another version says the same seeds draw differently here.
    randomness: int = _rng.VERSION

    def pin(self, name: str) -> Pin | None:
        return next((p for p in self.pins if p.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "randomness": int(self.randomness),
            "table": self.table.to_json(),
            "columns": {"sensitive": self.sensitive, "qi": list(self.qi)},
            "bands": {c: dict(spec) for c, spec in self.bands.items()},
            "current": self.current.to_json(),
            "params": {m: {k: (None if v is None else format_value(v)) for k, v in values.items()}
                       for m, values in self.params.items()},
            "pins": [p.to_json() for p in self.pins],
            "history": [s.to_json() for s in self.history],
            "decision": None if self.decision is None else self.decision.to_json(self.pins),
        }


# ------------------------------------------------------------------ pins and history (pure helpers)
def check_pin_name(name: Any, pins: Sequence[Pin] = (), replacing: str | None = None) -> str:
    """The pin name stripped, or :class:`SessionError` (empty, too long, taken, control characters)."""
    if not isinstance(name, str) or not name.strip():
        raise SessionError("Give the pin a name (1 to 60 characters), e.g. 'SPLU gamma 5'.")
    text = name.strip()
    if len(text) > NAME_CHARS:
        raise SessionError(f"A pin name has at most {NAME_CHARS} characters; this one has {len(text)}.")
    if any(ord(c) < 32 for c in text):
        raise SessionError("A pin name cannot hold line breaks or control characters.")
    if any(p.name == text and p.name != replacing for p in pins):
        raise SessionError(f"A pin named '{text}' exists already; choose another name or unpin it first.")
    return text


def add_pin(pins: Sequence[Pin], name: str, setting: Setting) -> tuple[Pin, ...]:
    """``pins`` with a new pin (at most :data:`MAX_PINS`; names unique)."""
    text = check_pin_name(name, pins)
    if len(pins) >= MAX_PINS:
        raise SessionError(f"At most {MAX_PINS} pins are compared side by side; unpin one first.")
    return (*pins, Pin(text, setting))


def record(history: Sequence[Setting], setting: Setting, replace_last: bool = False) -> tuple[Setting, ...]:
    """``history`` with ``setting`` appended unless it is already the latest; the last :data:`HISTORY` kept.

    ``replace_last``: ``setting`` continues the action of the newest entry
    (one more move of the same parameter) and takes its place, so the
    history holds one entry per action, not per slider increment.
    """
    if history and history[-1].key() == setting.key():
        return tuple(history)
    if replace_last and history:
        return (*history[:-1], setting)[-HISTORY:]
    return (*history, setting)[-HISTORY:]


def moved(before: Setting, after: Setting) -> str | None:
    """The one parameter ``after`` changed from ``before`` (same mechanism and seed), else None.

    Used to fold a run of moves of one slider into one history entry.
    """
    if before.mechanism != after.mechanism or int(before.seed) != int(after.seed):
        return None
    a, b = dict(before.params), dict(after.params)
    changed = [k for k in sorted(set(a) | set(b)) if format_value(a.get(k)) != format_value(b.get(k))
               or (a.get(k) is None) != (b.get(k) is None)]
    return changed[0] if len(changed) == 1 else None


def undo(history: Sequence[Setting]) -> tuple[tuple[Setting, ...], Setting | None]:
    """One step back: the history without its latest setting, and the setting to apply (None: nothing to undo)."""
    if len(history) < 2:
        return tuple(history), None
    return tuple(history[:-1]), history[-2]


# ------------------------------------------------------------------ pins in a link
def pins_text(pins: Sequence[Pin]) -> str:
    """The pins as compact JSON for a link's ``pins=`` (names, mechanisms, parameters as text, seeds)."""
    return json.dumps([p.to_json() for p in pins], ensure_ascii=False, separators=(",", ":"))


def pins_from_text(text: str) -> tuple[Pin, ...]:
    """Pins read back from :func:`pins_text`, checked as a session file's pins are, or one :class:`SessionError`.

    Used for the link's ``pins=`` so a browser reload keeps the pins (the
    decision record and the history are not in the link: their rationale
    can be long; the saved session keeps them).
    """
    where = "the link's pins"
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise SessionError(f"Ignored from the link: {where} are not the JSON list the workbench writes.") from None
    try:
        raw = _expect(doc, list, "the pins entry", "link")
        if len(raw) > MAX_PINS:
            raise _fail("link", f"it holds {len(raw)} pins; at most {MAX_PINS} are allowed")
        pins: list[Pin] = []
        for i, p in enumerate(raw, 1):
            p = _expect(p, dict, f"pin {i}", "link")
            setting = _setting(p, f"pin {i}", "link", extra=["name"])
            if "name" not in p:
                raise _fail("link", f"pin {i} lacks 'name'")
            try:
                pins.append(Pin(check_pin_name(p["name"], pins), setting))
            except SessionError as exc:
                raise _fail("link", f"pin {i}: {str(exc).rstrip('.')}") from None
    except SessionError as exc:
        why = str(exc).removeprefix("'link' cannot be opened: ").split(". Nothing was changed")[0]
        raise SessionError(f"Ignored from the link: {where} ({why}); pin the settings again.") from None
    return tuple(pins)


# ------------------------------------------------------------------ writing
def dumps(session: Session) -> str:
    """The session as JSON text (keys in a fixed order, UTF-8, ends with a newline)."""
    return json.dumps(session.to_json(), indent=2, ensure_ascii=False) + "\n"


def to_bytes(session: Session, frame: pd.DataFrame | None = None) -> bytes:
    """The session file: JSON, or a zip with the JSON and ``frame`` as Parquet when a frame is given.

    The zip's JSON names the frame's values hash beside the table's content
    hash (the file's), so reopening checks the copy and keeps the file's hash.
    """
    if frame is None:
        return dumps(session).encode("utf-8")
    from .table import values_hash

    session = replace(session, table=replace(session.table, values_hash=values_hash(frame)))
    text = dumps(session).encode("utf-8")
    buf = io.BytesIO()
    table = io.BytesIO()
    frame.to_parquet(table, index=False)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(JSON_NAME, text)
        zf.writestr(TABLE_NAME, table.getvalue())
    return buf.getvalue()


def file_name(session: Session, embedded: bool = False) -> str:
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in session.table.name.replace(":", "_"))[:40]
    return f"{stem or 'table'}-session.workbench.{'zip' if embedded else 'json'}"


# ------------------------------------------------------------------ reading
def read(data: bytes, filename: str = "session") -> tuple[Session, pd.DataFrame | None]:
    """Parse a session file (JSON or zip); returns the session and the embedded table's frame, if any.

    Everything is checked before anything is returned; a problem raises
    :class:`SessionError` with one sentence naming the file.
    """
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                names = set(zf.namelist())
                if JSON_NAME not in names:
                    raise SessionError(f"'{filename}' is a zip without a {JSON_NAME}: it is not a workbench "
                                       "session file; save the session again from the Home page.")
                info = zf.getinfo(JSON_NAME)
                if info.file_size > MAX_JSON_BYTES:
                    raise SessionError(f"'{filename}' holds a {JSON_NAME} larger than "
                                       f"{MAX_JSON_BYTES // 2**20} MB: it is not a workbench session file.")
                try:  # the directory's sizes bound what is inflated (a zip bomb is refused before)
                    _read.check_zip(zf, filename, MAX_JSON_BYTES + _read.MAX_BYTES)
                except DataError as exc:
                    raise SessionError(str(exc)) from None
                text = zf.read(JSON_NAME)
                table_bytes = zf.read(TABLE_NAME) if TABLE_NAME in names else None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, zlib.error) as exc:
            # zlib.error: a member's deflated bytes damaged ("invalid distance too far back", found by bench/fuzz.py)
            raise SessionError(f"'{filename}' is a damaged zip ({exc}); save the session again.") from None
        session = loads(text, filename)
        frame = None
        if table_bytes is not None:
            frame = _embedded_frame(table_bytes, filename)
        return session, frame
    if len(data) > MAX_JSON_BYTES:
        raise SessionError(f"'{filename}' is larger than {MAX_JSON_BYTES // 2**20} MB: it is not a workbench "
                           "session file (those are JSON of a few kB, or a zip).")
    return loads(data, filename), None


def _embedded_frame(data: bytes, filename: str) -> pd.DataFrame:
    """The embedded table, its footer's rows and unpacked size checked first (:func:`core.data.read.check_parquet`)."""
    import pyarrow.parquet as pq

    from .data.memory import frame_row_limit

    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        _read.check_parquet(handle.metadata, filename, frame_row_limit())
        return pd.read_parquet(io.BytesIO(data))
    except DataError as exc:
        raise SessionError(str(exc)) from None
    except Exception as exc:  # pyarrow raises many types for a damaged file
        raise SessionError(f"The table inside '{filename}' cannot be read as Parquet ({type(exc).__name__}); "
                           "save the session again.") from None


def loads(text: str | bytes, filename: str = "session") -> Session:
    """Parse and validate session JSON; :class:`SessionError` on the first problem (nothing half-read)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise SessionError(f"'{filename}' is not UTF-8 text: it is not a workbench session file "
                               "(save one from the Home page).") from None
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise SessionError(f"'{filename}' is not valid JSON{where}: it is damaged or not a workbench session "
                           "file; save the session again.") from None
    return _parse(doc, filename)


def _fail(filename: str, what: str) -> SessionError:
    return SessionError(f"'{filename}' cannot be opened: {what}. Nothing was changed; save the session again "
                        "or fix that entry.")


def _expect(doc: Any, kind: type, where: str, filename: str) -> Any:
    names = {dict: "an object", list: "a list", str: "text", int: "a whole number"}
    if kind is int:
        ok = isinstance(doc, int) and not isinstance(doc, bool)
    else:
        ok = isinstance(doc, kind)
    if not ok:
        raise _fail(filename, f"{where} must be {names.get(kind, kind.__name__)}, not {_json_type(doc)}")
    return doc


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    return {dict: "an object", list: "a list", str: "text", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__)


def _keys(doc: dict, allowed: Iterable[str], required: Iterable[str], where: str, filename: str) -> None:
    unknown = [k for k in doc if k not in set(allowed)]
    if unknown:
        raise _fail(filename, f"{where} has the unknown entr{'ies' if len(unknown) > 1 else 'y'} "
                              f"{', '.join(repr(k) for k in unknown)}")
    missing = [k for k in required if k not in doc]
    if missing:
        raise _fail(filename, f"{where} lacks {', '.join(repr(k) for k in missing)}")


def _params(mechanism: str, values: Any, where: str, filename: str) -> dict[str, Any]:
    from .errors import WorkbenchError
    from .mechanisms import MECHANISMS

    values = _expect(values, dict, f"{where}'s params", filename)
    mech = MECHANISMS[mechanism]
    declared = {p.name: p for p in mech.params}
    out: dict[str, Any] = {}
    for key, text in values.items():
        p = declared.get(key)
        if p is None:
            raise _fail(filename, f"{where} gives '{key}', which is not a parameter of {mech.title} "
                                  f"({', '.join(declared) or 'it has none'})")
        if text is None:
            out[key] = None
            continue
        if isinstance(text, bool) or not isinstance(text, (str, int, float)):
            raise _fail(filename, f"{where}'s parameter '{key}' must be text such as \"5\" or \"1/13\", "
                                  f"not {_json_type(text)}")
        try:
            out[key] = p.parse(str(text), mech.title)
        except WorkbenchError as exc:
            raise _fail(filename, f"{where}: {str(exc).rstrip('.')}") from None
    try:
        mech.resolve(out)
    except WorkbenchError as exc:
        raise _fail(filename, f"{where}: {str(exc).rstrip('.')}") from None
    return out


def _setting(doc: Any, where: str, filename: str, extra: Iterable[str] = ()) -> Setting:
    from .mechanisms import MECHANISMS

    doc = _expect(doc, dict, where, filename)
    _keys(doc, ["mechanism", "params", "seed", *extra], ["mechanism", "seed"], where, filename)
    name = _expect(doc["mechanism"], str, f"{where}'s mechanism", filename)
    if name not in MECHANISMS:
        raise _fail(filename, f"{where} names the mechanism '{name}', which this workbench does not have "
                              f"(it has {', '.join(MECHANISMS)})")
    seed = _expect(doc["seed"], int, f"{where}'s seed", filename)
    if not 0 <= seed <= MAX_SEED:
        raise _fail(filename, f"{where}'s seed must be from 0 to {MAX_SEED:,}, not {seed}")
    return Setting(name, _params(name, doc.get("params", {}), where, filename), seed)


def _parse(doc: Any, filename: str) -> Session:
    from .mechanisms import MECHANISMS

    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SessionError(f"'{filename}' is not a workbench session file (it lacks \"format\": \"{FORMAT}\"); "
                           "open a file saved from the Home page.")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(filename, "its version must be a whole number from 1")
    if version > VERSION:
        raise SessionError(f"'{filename}' was saved by a newer workbench (session version {version}; this one "
                           f"reads up to {VERSION}); update the workbench to open it.")
    randomness = doc.get("randomness", 0)
    if not isinstance(randomness, int) or isinstance(randomness, bool) or randomness < 0:
        raise _fail(filename, "its randomness version must be a whole number from 0")
    _keys(doc, ["format", "version", "randomness", "table", "columns", "bands", "current", "params", "pins",
                "history", "decision"],
          ["table", "columns", "current"], "the file", filename)
    t = _expect(doc["table"], dict, "the table entry", filename)
    _keys(t, ["kind", "name", "content_hash", "values_hash", "rows", "read", "notes"], ["kind", "name", "content_hash"],
          "the table entry", filename)
    kind = _expect(t["kind"], str, "the table's kind", filename)
    if kind not in {"sample", "upload"}:
        raise _fail(filename, f"the table's kind must be 'sample' or 'upload', not '{kind}'")
    name = _expect(t["name"], str, "the table's name", filename)
    chash = _expect(t["content_hash"], str, "the table's content hash", filename)
    if not name.strip():
        raise _fail(filename, "the table's name is empty")
    vhash = t.get("values_hash")
    for what, h in (("content hash", chash), ("values hash", vhash)):
        if h is None and what == "values hash":
            continue
        h = _expect(h, str, f"the table's {what}", filename)
        if len(h) != 16 or any(c not in "0123456789abcdef" for c in h):
            raise _fail(filename, f"the table's {what} must be 16 hexadecimal digits, not '{h[:40]}'")
    if kind == "sample":
        from .samples import is_sample

        if not is_sample(name):
            raise _fail(filename, f"the table '{name}' is not a bundled sample of this workbench")
    rows = t.get("rows")
    if rows is not None:
        rows = _expect(rows, int, "the table's rows", filename)
    read = t.get("read")
    if read is not None:
        read = _expect(read, dict, "the table's read options", filename)
        if not isinstance(read.get("header", False), bool) and read.get("header") is not None:
            raise _fail(filename, "the table's read option 'header' must be true or false")
        try:
            TableRef(kind, name, chash, rows, read).read_options()
        except (TypeError, ValueError, DataError) as exc:
            raise _fail(filename, f"the table's read options cannot be used ({str(exc).rstrip('.')})") from None
    notes = _expect(t.get("notes", []), list, "the table's notes", filename)
    if not all(isinstance(n, str) for n in notes):
        raise _fail(filename, "the table's notes must be sentences (text)")
    table = TableRef(kind, name, chash, rows, read, vhash, tuple(notes))

    cols = _expect(doc["columns"], dict, "the columns entry", filename)
    _keys(cols, ["sensitive", "qi"], ["sensitive", "qi"], "the columns entry", filename)
    sa = _expect(cols["sensitive"], str, "the sensitive column", filename)
    qi = _expect(cols["qi"], list, "the QI columns", filename)
    for c in qi:
        _expect(c, str, "each QI column", filename)
    if not qi:
        raise _fail(filename, "it names no QI column")
    if sa in qi:
        raise _fail(filename, f"the sensitive column '{sa}' is also a QI column")
    if len(set(qi)) != len(qi):
        raise _fail(filename, "a QI column is named twice")

    bands = _bands(doc.get("bands", {}), filename)
    current = _setting(doc["current"], "the current setting", filename)
    params: dict[str, dict[str, Any]] = {}
    for mech, values in _expect(doc.get("params", {}), dict, "the params entry", filename).items():
        if mech not in MECHANISMS:
            raise _fail(filename, f"the params entry names the mechanism '{mech}', which this workbench does not "
                                  "have")
        params[mech] = _params(mech, values, f"the stored parameters of {mech}", filename)

    pins: list[Pin] = []
    raw_pins = _expect(doc.get("pins", []), list, "the pins entry", filename)
    if len(raw_pins) > MAX_PINS:
        raise _fail(filename, f"it holds {len(raw_pins)} pins; at most {MAX_PINS} are allowed")
    for i, p in enumerate(raw_pins, 1):
        where = f"pin {i}"
        p = _expect(p, dict, where, filename)
        setting = _setting(p, where, filename, extra=["name"])
        if "name" not in p:
            raise _fail(filename, f"{where} lacks 'name'")
        try:
            pname = check_pin_name(p["name"], pins)
        except SessionError as exc:
            raise _fail(filename, f"{where}: {str(exc).rstrip('.')}") from None
        pins.append(Pin(pname, setting))

    raw_history = _expect(doc.get("history", []), list, "the history entry", filename)
    if len(raw_history) > HISTORY:
        raise _fail(filename, f"its history holds {len(raw_history)} settings; at most {HISTORY} are kept")
    history = tuple(_setting(h, f"history entry {i}", filename) for i, h in enumerate(raw_history, 1))

    decision = None
    if doc.get("decision") is not None:
        decision = _decision(doc["decision"], pins, filename)
    return Session(table, sa, tuple(qi), current, params, tuple(pins), history, decision, bands, randomness)


def _bands(doc: Any, filename: str) -> dict[str, dict[str, Any]]:
    from .data.banding import Banding
    from .errors import WorkbenchError

    doc = _expect(doc, dict, "the bands entry", filename)
    out = {}
    for column, spec in doc.items():
        try:
            out[column] = Banding.from_spec(column, spec).spec()
        except WorkbenchError as exc:
            raise _fail(filename, str(exc).rstrip(".")) from None
    return out


def _decision(doc: Any, pins: Sequence[Pin], filename: str) -> Decision:
    doc = _expect(doc, dict, "the decision", filename)
    _keys(doc, ["chosen", "setting", "alternatives", "rationale", "reviewers", "date", "verdicts", "table", "author"],
          ["chosen"], "the decision", filename)
    chosen = _expect(doc["chosen"], str, "the decision's chosen pin", filename)
    pin = next((p for p in pins if p.name == chosen), None)
    if pin is None:
        raise _fail(filename, f"the decision chooses the pin '{chosen[:60]}', which is not among its pins")
    if "setting" in doc and _setting(doc["setting"], "the decision's setting", filename).key() != pin.setting.key():
        raise _fail(filename, f"the decision's setting differs from the pin '{chosen}' it names (hand-edited?)")
    if "alternatives" in doc:
        alts = _expect(doc["alternatives"], list, "the decision's alternatives", filename)
        if alts != [p.name for p in pins if p.name != chosen]:
            raise _fail(filename, "the decision's alternatives are not the other pins (hand-edited?)")
    rationale = _expect(doc.get("rationale", ""), str, "the rationale", filename)
    if len(rationale) > RATIONALE_CHARS:
        raise _fail(filename, f"the rationale is longer than {RATIONALE_CHARS:,} characters")
    reviewers = _expect(doc.get("reviewers", []), list, "the reviewers", filename)
    for r in reviewers:
        _expect(r, str, "each reviewer", filename)
    date = _expect(doc.get("date", ""), str, "the decision's date", filename)
    if date:
        check_date(date, filename)
    verdicts = _expect(doc.get("verdicts", {}), dict, "the verdicts", filename)
    for k, v in verdicts.items():
        _expect(v, str, f"the verdict of '{k}'", filename)
    table = _expect(doc.get("table", ""), str, "the decision's table", filename)
    author = _expect(doc.get("author", ""), str, "the decision's author", filename)
    return Decision(chosen, rationale, tuple(reviewers), date, dict(verdicts), table, author)


def check_date(text: str, filename: str | None = None) -> str:
    """``YYYY-MM-DD`` or :class:`SessionError`."""
    try:
        _dt.date.fromisoformat(text.strip())
    except ValueError:
        msg = f"the date must be written YYYY-MM-DD (e.g. 2026-11-24), not '{text[:30]}'"
        raise (_fail(filename, msg) if filename else SessionError(msg[0].upper() + msg[1:] + ".")) from None
    return text.strip()


def make_decision(chosen: str, pins: Sequence[Pin], rationale: str = "", reviewers: Iterable[str] = (),
                  date: str = "", verdicts: Mapping[str, str] | None = None, table: str = "",
                  author: str = "") -> Decision:
    """A checked :class:`Decision` (the chosen pin exists, the date reads, the rationale fits)."""
    if not any(p.name == chosen for p in pins):
        raise SessionError("Choose one of the pins as the decision (pin a setting on the Sanitize page first).")
    if len(rationale) > RATIONALE_CHARS:
        raise SessionError(f"The rationale has at most {RATIONALE_CHARS:,} characters; it has {len(rationale):,}.")
    names = tuple(r.strip() for r in reviewers if r.strip())
    day = check_date(date) if date.strip() else ""
    return Decision(chosen, rationale.strip(), names, day, dict(verdicts or {}), table, author.strip())


# ------------------------------------------------------------------ the table
def check_table(session: Session, table, label: str = "the table") -> None:
    """Refuse a table that is not the session's: another content hash, or the session's columns missing.

    ``table`` is a :class:`core.table.Table`; it matches by its content hash
    or by a hash an older version gave it (:meth:`core.table.Table.known_as`).
    """
    if not table.known_as(session.table.content_hash):
        raise SessionError(f"This session was saved on {session.table.describe()}, but {label} has content hash "
                           f"{table.content_hash}; load that table (or open the session with its table embedded).")
    missing = [c for c in (session.sensitive, *session.qi) if c not in table.columns]
    if missing:
        raise SessionError(f"The session's column{'s' if len(missing) > 1 else ''} "
                           f"{', '.join(repr(c) for c in missing)} are not in {label}.")


def embedded_table(session: Session, frame: pd.DataFrame):
    """The zip's embedded table as a :class:`core.table.Table`, checked against the session.

    The copy's values must have the hash the zip names (``values_hash``; a
    zip saved before it existed named the values by ``content_hash``). The
    table keeps the session's content hash (the hash of the file it was read
    from) and read options, so its releases' manifests are those the file
    gives.
    """
    from .table import make_table, values_hash

    ref = session.table
    table = make_table(frame, ref.name, dict(ref.read) if ref.read else None, content_hash=ref.content_hash)
    table = replace(table, notes=tuple(ref.notes))
    if values_hash(table.frame) != (ref.values_hash or ref.content_hash):
        raise SessionError(f"The table inside the file is not the one this session was saved on "
                           f"({ref.describe()}); save the session again.")
    check_table(session, table, "the table inside the file")
    return table


def with_decision(session: Session, decision: Decision | None) -> Session:
    return replace(session, decision=decision)
