"""Writing releases and generated tables from codes, in batches, with nothing partial left behind.

The last step of the data path (load -> encode -> mechanism -> release ->
queries) for tables of any size: a published table is columns of integer
codes plus label arrays (:class:`core.release.CodedTable`), and it is
written without decoding the whole table at once:

* **Parquet** (:func:`write_parquet`): every column with labels becomes a
  dictionary-encoded column (the labels are the dictionary, the codes its
  indices), written in row groups of :data:`BATCH_ROWS` rows, so a file is
  small and a reader gets the codes back without hashing strings.
* **Parquet dataset** (:func:`write_dataset`, ``--out DIR`` without an
  extension): the rows in parts ``part-00000.parquet``, ... of at most
  :data:`PART_ROWS` rows each (or the boundaries the caller gives).
* **CSV** (:func:`write_csv`): decoded :data:`BATCH_ROWS` rows at a time;
  text cells a spreadsheet would run as a formula get a leading quote
  (:func:`neutralise`, applied once to the labels, which is
  the same as applying it to every cell), and the bytes are those of
  ``pandas.DataFrame.to_csv`` on the whole table.

Every writer writes into a short temporary name beside the target
(``.wb-HEX.tmp``) and renames it into place at the end (:class:`Staging`,
:func:`atomic_path`); a release and its manifest are staged together and
appear together or not at all, so an error, a full disk or an interrupted
run leaves no partial release behind.  A folder that exists is replaced
only when it is empty or the workbench wrote it (:func:`made_here`), or
when the user says ``--overwrite``; otherwise the write is refused rather
than deleting someone's folder.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, clip, clip_path

#: rows per batch (a Parquet row group; a block of CSV text)
BATCH_ROWS = 1 << 20
#: rows decoded and formatted at a time when writing CSV (pandas makes a Python string per cell of a batch:
#: about 60 bytes a cell, so a batch of 2**18 rows of 8 columns is about 130 MB, not the 500 MB of 2**20)
CSV_BATCH_ROWS = 1 << 18
#: rows per part file of a Parquet dataset
PART_ROWS = 1 << 22
#: the manifest's and the run's file names inside a release folder: the leading underscore makes pandas,
#: pyarrow and Dask skip them when they read the folder as a Parquet dataset (``pd.read_parquet(DIR)``)
MANIFEST_NAME = "_manifest.json"
RUN_NAME = "_run.json"
#: every temporary (and set-aside) name beside an output starts so: a short fixed name, not the target's, so
#: a temporary beside a target of 255 bytes still fits the file system's limit on a name
TMP_PREFIX = ".wb-"
#: the longest file name most file systems take, in bytes (the directory's own limit when it says)
NAME_MAX = 255
#: spreadsheets run a text cell starting with one of these as a formula (OWASP's CSV injection list)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PART = re.compile(r"part-\d{5}\.parquet")


def neutralise(frame: pd.DataFrame) -> pd.DataFrame:
    """Prefix text cells that a spreadsheet would run as a formula with a quote.

    Cells of text columns starting with ``= + - @``, tab or carriage return
    get a leading ``'`` (OWASP's advice on CSV injection); numeric columns
    are left alone, so negative numbers stay numbers.
    """
    out = frame.copy()
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            continue
        text = s.astype("string")
        risky = text.str.startswith(FORMULA_START, na=False)
        if risky.any():
            out[col] = text.mask(risky, "'" + text)
    out.columns = ["'" + c if str(c).startswith(FORMULA_START) else c for c in out.columns]
    return out


def made_here(folder: Path) -> bool:
    """Whether the folder ``folder`` is empty or was written by these writers, so a new output may replace it.

    Choice where the issue is silent: a folder is the workbench's when it
    holds only files (no sub-folder), and either a ``_manifest.json`` or
    ``_run.json`` that is a workbench manifest or run record (JSON with a
    ``workbench`` or ``engine`` key) beside .csv/.parquet tables, or only
    part files named as :func:`part_name` names them (a generated dataset).
    Anything else (the user's own tables, a sub-folder) is not replaced
    without ``--overwrite``.
    """
    entries = list(folder.iterdir())
    if not entries:
        return True
    if any(p.is_symlink() or not p.is_file() for p in entries):
        return False
    names = {p.name for p in entries}
    if all(_PART.fullmatch(n) for n in names):
        return True
    for marker in (MANIFEST_NAME, RUN_NAME):
        if marker in names:
            try:
                doc = json.loads((folder / marker).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(doc, dict) and ("workbench" in doc or "engine" in doc):
                return all(n in (MANIFEST_NAME, RUN_NAME) or n.endswith((".csv", ".parquet")) for n in names)
    return False


def check_target(target: Path, folder: bool = False, flag: str = "--out", overwrite: bool = False) -> None:
    """Refuse, in one sentence, an output path that cannot or must not be written (before any work is done).

    Its folder must exist; a file target must not be a folder and a folder
    target not a file; a folder target that exists must be empty or the
    workbench's (:func:`made_here`) unless ``overwrite``; the name must fit
    the file system.
    """
    target = Path(target)
    parent = target.parent
    if not parent.is_dir():
        if parent.exists():
            raise DataError(f"'{clip_path((parent))}' is a file, not a folder; give {flag} a path in a folder that exists.")
        raise DataError(f"The folder '{clip_path((parent))}' does not exist; create it or give {flag} another path.")
    try:
        limit = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = NAME_MAX
    if len(os.fsencode(target.name)) > limit:
        raise DataError(f"The name '{clip(target.name)}' is {len(os.fsencode(target.name))} bytes, longer than the "
                        f"{limit} bytes a file name may have here; give {flag} a shorter name.")
    if folder and target.exists() and not target.is_dir():
        raise DataError(f"'{clip_path((target))}' is a file; give {flag} a folder name (no extension).")
    if not folder and target.is_dir():
        what = ("a file name such as 'release.manifest.json'" if flag == "--manifest"
                else "a file name ending in .csv or .parquet")
        raise DataError(f"'{clip_path((target))}' is a folder; give {flag} {what}.")
    if folder and target.is_dir() and not overwrite and not made_here(target):
        raise DataError(f"The folder '{clip_path((target))}' holds files the workbench did not write; give {flag} a new "
                        "or empty folder, or add --overwrite to replace that folder and everything in it.")


def fs_error(exc: OSError, target: Path, flag: str = "--out") -> DataError:
    """A file-system error while writing ``target`` as one sentence naming the user's path and what to do."""
    where = f"'{clip_path((target))}'"
    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        text = f"The disk is full: {where} could not be written; free some space or give {flag} a path on another disk."
    elif code == errno.EFBIG:
        text = (f"{where} could not be written: it grew past the largest file allowed here; give {flag} a path on "
                "another disk, or a folder name (no extension) to write the release in parts.")
    elif code == errno.EROFS:
        text = f"{where} is on a read-only file system; give {flag} a path you can write to."
    elif code in (errno.EACCES, errno.EPERM):
        text = f"Writing {where} is not permitted; give {flag} a path in a folder you can write to."
    elif code == errno.ENOTDIR:
        text = f"A part of the path {where} is a file, not a folder; give {flag} a path whose folders exist."
    elif code == errno.ENAMETOOLONG:
        text = f"The path {where} is too long for the file system; give {flag} a shorter name."
    else:
        plain = str(exc) if exc.errno is None and getattr(exc, "filename", None) is None else ""
        reason = (exc.strerror or plain or type(exc).__name__).rstrip(".")
        text = (f"{where} could not be written ({reason}); check the folder and give {flag} another path if it "
                "happens again.")
    return DataError(text)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class Staging:
    """Outputs written under temporary names and moved into place together, or not at all.

    ``stage.path(target)`` checks ``target`` (:func:`check_target`) and
    returns a new temporary path beside it (a new empty folder with
    ``folder=True``), named :data:`TMP_PREFIX` plus random hex, so its name
    stays short whatever the target's.  Leaving the ``with`` block without
    an error moves every temporary onto its target: a target that exists is
    first set aside and removed only once every output is in place; if a
    move fails, the outputs moved are removed and what was set aside is put
    back.  Any error in the block (a full disk, Ctrl-C, SIGTERM or SIGHUP
    once :func:`core.release.interrupt_on_signals` maps them to Ctrl-C)
    removes every temporary.  An ``OSError`` comes out as a
    :class:`DataError` naming the user's path (:func:`fs_error`), never the
    temporary's.
    """

    def __init__(self, overwrite: bool = False):
        self.overwrite = overwrite
        self._items: list[tuple[Path, Path, str]] = []  # (temporary, target, flag)

    def path(self, target: str | os.PathLike, folder: bool = False, flag: str = "--out") -> Path:
        target = Path(target)
        check_target(target, folder, flag, self.overwrite)
        tmp = target.with_name(f"{TMP_PREFIX}{uuid.uuid4().hex[:12]}.tmp")
        self._items.append((tmp, target, flag))
        if folder:
            try:
                tmp.mkdir()
            except OSError as exc:
                raise fs_error(exc, target, flag) from None
        return tmp

    def put(self, target: str | os.PathLike, data: bytes, flag: str = "--out") -> Path:
        """Stage ``data`` as the whole content of the file ``target``; returns ``target``."""
        tmp = self.path(target, flag=flag)
        with open(tmp, "wb") as fh:
            fh.write(data)
        return Path(target)

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if kind is None:
            try:
                self._commit()
            except BaseException as err:
                said = self._error(err) if isinstance(err, OSError) else None
                self._discard()
                if said is not None:
                    raise said from None
                raise
            return False
        said = self._error(exc) if isinstance(exc, OSError) else None
        self._discard()
        if said is not None:
            raise said from None
        return False

    def _commit(self) -> None:
        moved: list[Path] = []
        aside: list[tuple[Path, Path]] = []
        try:
            for tmp, target, _ in self._items:
                if target.exists() or target.is_symlink():
                    old = target.with_name(f"{TMP_PREFIX}{uuid.uuid4().hex[:12]}.old")
                    os.rename(target, old)
                    aside.append((old, target))
                os.rename(tmp, target)
                moved.append(target)
        except BaseException:
            for target in reversed(moved):
                _remove(target)
            for old, target in reversed(aside):
                os.rename(old, target)
            raise
        for old, _ in aside:
            _remove(old)
        self._items = []

    def _discard(self) -> None:
        for tmp, _, _ in self._items:
            _remove(tmp)
        self._items = []

    def _error(self, exc: OSError) -> DataError:
        named = {str(getattr(exc, "filename", None) or ""), str(getattr(exc, "filename2", None) or "")}
        for tmp, target, flag in self._items:
            if any(n and (n == str(tmp) or n.startswith(str(tmp) + os.sep) or n == str(target)) for n in named):
                return fs_error(exc, target, flag)
        if not self._items:
            return fs_error(exc, Path(next(iter(sorted(named - {""})), "the output")))
        _, target, flag = self._items[-1]
        return fs_error(exc, target, flag)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, folder: bool = False, overwrite: bool = False,
                flag: str = "--out") -> Iterator[Path]:
    """A temporary path beside ``target``; renamed to ``target`` when the block ends without an error.

    ``folder``: the temporary path is a new directory.  On an error the
    temporary path is removed and ``target`` is left as it was (one
    :class:`Staging` of one output).
    """
    with Staging(overwrite) as stage:
        yield stage.path(target, folder, flag)


def _arrow_column(codes: np.ndarray, labels: np.ndarray | None):
    """One column as Arrow: a dictionary array (codes indexing labels), or plain values."""
    import pyarrow as pa

    if labels is None:
        return pa.array(codes)
    labels = np.asarray(labels)
    size = len(labels)
    index = np.int8 if size <= 127 else np.int16 if size <= 32767 else np.int32
    if labels.dtype == object:
        dictionary = pa.array([str(v) for v in labels], type=pa.string())
    else:
        dictionary = pa.array(labels)
    return pa.DictionaryArray.from_arrays(pa.array(np.asarray(codes).astype(index, copy=False)), dictionary)


def _batches(columns: Mapping[str, np.ndarray], start: int, stop: int, batch_rows: int):
    for lo in range(start, stop, batch_rows):
        hi = min(stop, lo + batch_rows)
        yield lo, hi


def _record_batch(columns, labels, lo, hi):
    import pyarrow as pa

    names = list(columns)
    arrays = [_arrow_column(np.asarray(columns[c][lo:hi]), labels.get(c)) for c in names]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _write_parquet_file(path: Path, columns: Mapping[str, np.ndarray], labels: Mapping[str, np.ndarray | None],
                        start: int, stop: int, batch_rows: int) -> None:
    import pyarrow.parquet as pq

    writer = None
    try:
        for lo, hi in _batches(columns, start, stop, batch_rows) if stop > start else [(start, start)]:
            batch = _record_batch(columns, labels, lo, hi)
            if writer is None:
                writer = pq.ParquetWriter(str(path), batch.schema, compression="zstd")
            writer.write_batch(batch, row_group_size=batch_rows)
    finally:
        if writer is not None:
            writer.close()


def _into(stage: Staging | None, target, folder: bool = False):
    """A temporary for ``target``: staged in ``stage`` (moved with its other outputs), or on its own."""
    return contextlib.nullcontext(stage.path(target, folder)) if stage is not None else atomic_path(target, folder)


def write_parquet(path: str | os.PathLike, columns: Mapping[str, np.ndarray],
                  labels: Mapping[str, np.ndarray | None] | None = None, batch_rows: int | None = None,
                  stage: Staging | None = None) -> Path:
    """Write one Parquet file of dictionary-encoded columns (``labels[c]`` None: plain values), atomically.

    ``stage``: a :class:`Staging` the file joins (moved into place with its
    other outputs when it ends) instead of being moved at once.
    """
    labels = dict(labels or {})
    n = len(next(iter(columns.values()))) if columns else 0
    with _into(stage, path) as tmp:
        _write_parquet_file(tmp, columns, labels, 0, n, batch_rows or BATCH_ROWS)
    return Path(path)


def part_name(i: int) -> str:
    return f"part-{i:05d}.parquet"


def write_dataset(folder: str | os.PathLike, columns: Mapping[str, np.ndarray],
                  labels: Mapping[str, np.ndarray | None] | None = None, bounds: Sequence[int] | None = None,
                  extra: Mapping[str, bytes] | None = None, batch_rows: int | None = None,
                  stage: Staging | None = None) -> list[Path]:
    """Write a Parquet dataset folder (parts of at most :data:`PART_ROWS` rows, or split at ``bounds``).

    ``bounds``: the first row of each part after the first (ascending);
    ``extra``: other files to write in the folder (``{MANIFEST_NAME: bytes}``);
    ``stage``: as for :func:`write_parquet`.  Returns the files' final paths.
    """
    labels = dict(labels or {})
    n = len(next(iter(columns.values()))) if columns else 0
    if bounds is None:
        bounds = list(range(PART_ROWS, n, PART_ROWS))
    edges = [0, *[int(b) for b in bounds], n]
    folder = Path(folder)
    names = []
    with _into(stage, folder, folder=True) as tmp:
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
            _write_parquet_file(tmp / part_name(i), columns, labels, lo, hi, batch_rows or BATCH_ROWS)
            names.append(part_name(i))
        for name, data in (extra or {}).items():
            (tmp / name).write_bytes(data)
            names.append(name)
    return [folder / name for name in names]


def stream_dataset(folder: str | os.PathLike, batches, part_rows: int | None = None,
                   extra: Mapping[str, bytes] | None = None) -> tuple[list[Path], int]:
    """Write a Parquet dataset from an iterator of ``(columns, labels)`` batches, never holding the table.

    A new part starts every ``part_rows`` rows (default :data:`PART_ROWS`;
    a batch never spans two parts, so part sizes are multiples of the batch
    size until the last).  Returns the paths and the rows written.
    """
    import pyarrow.parquet as pq

    part_rows = part_rows or PART_ROWS
    folder = Path(folder)
    names, rows, in_part, writer = [], 0, 0, None
    with atomic_path(folder, folder=True) as tmp:
        try:
            for columns, labels in batches:
                n = len(next(iter(columns.values())))
                if writer is None or in_part >= part_rows:
                    if writer is not None:
                        writer.close()
                    names.append(part_name(len(names)))
                    writer, in_part = None, 0
                batch = _record_batch(columns, labels, 0, n)
                if writer is None:
                    writer = pq.ParquetWriter(str(tmp / names[-1]), batch.schema, compression="zstd")
                writer.write_batch(batch, row_group_size=max(n, 1))
                rows += n
                in_part += n
        finally:
            if writer is not None:
                writer.close()
        for name, data in (extra or {}).items():
            (tmp / name).write_bytes(data)
            names.append(name)
    return [folder / name for name in names], rows


def neutral_labels(labels: np.ndarray) -> np.ndarray:
    """Text labels with a leading quote where a spreadsheet would run them as a formula (see neutralise)."""
    return neutralise(pd.DataFrame({"v": pd.Series(labels, dtype=object)}))["v"].to_numpy(dtype=object)


def csv_chunks(columns: Mapping[str, np.ndarray], labels: Mapping[str, np.ndarray | None],
               batch_rows: int | None = None) -> Iterator[bytes]:
    """The CSV text of a coded table, ``batch_rows`` rows at a time, the same bytes as the frame path.

    The frame path is ``neutralise(frame).to_csv(index=False)``; here text
    labels are neutralised once and each distinct label is formatted once
    by pandas (its CSV field exactly as pandas writes it in a column of its
    type: quoting, number format); the rows are then joined from those
    fields by Arrow, which is about ten times faster than formatting every
    cell.  A label whose field spans lines (a quoted line break) makes the
    table fall back to pandas formatting batch by batch: same bytes.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    batch_rows = batch_rows or CSV_BATCH_ROWS
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    safe = {}
    for c in names:
        lab = labels.get(c)
        if lab is not None and not (pd.api.types.is_numeric_dtype(np.asarray(lab).dtype)
                                    or pd.api.types.is_bool_dtype(np.asarray(lab).dtype)):
            lab = neutral_labels(lab)
        safe[c] = lab
    header = list(neutralise(pd.DataFrame(columns=names)).columns)
    fields = {c: _fields(safe[c]) for c in names if safe[c] is not None}
    if not names or any(f is None for f in fields.values()):
        for i, lo in enumerate(range(0, max(n, 1), batch_rows)):
            hi = min(n, lo + batch_rows)
            frame = pd.DataFrame({h: (np.asarray(columns[c][lo:hi]) if safe[c] is None else
                                      np.asarray(safe[c])[np.asarray(columns[c][lo:hi])])
                                  for h, c in zip(header, names)})
            yield frame.to_csv(index=False, header=(i == 0)).encode("utf-8")
        return
    yield pd.DataFrame(columns=header).to_csv(index=False).encode("utf-8")
    for lo in range(0, n, batch_rows):
        hi = min(n, lo + batch_rows)
        texts = []
        for c in names:
            codes = np.asarray(columns[c][lo:hi])
            field = fields.get(c)
            if field is None and codes.dtype.kind in "iu":  # plain integers: decimal digits, as pandas writes them
                texts.append(pa.array(codes).cast(pa.string()))
                continue
            if field is None:  # other plain values: their distinct values formatted once
                values, codes = np.unique(codes, return_inverse=True)
                field = _fields(values)
                if field is None:
                    raise RuntimeError(f"plain column {c} formats across lines")
            texts.append(pc.take(field, pa.array(codes.ravel())))
        lines = pc.binary_join_element_wise(*texts, ",") if len(texts) > 1 else texts[0]
        lines = pc.binary_join_element_wise(lines, "", os.linesep)
        yield _string_bytes(lines)


def _fields(values):
    """Each value's CSV field as pandas writes it in a column of the values' type; None if one spans lines.

    Formatted in a frame with a second column (sliced off), because a
    row of a single empty field is written quoted (``""``) while in a wider
    table it is written empty.
    """
    import pyarrow as pa

    values = np.asarray(values)
    text = pd.DataFrame({"v": values, "w": np.zeros(len(values), dtype=np.int8)}).to_csv(index=False, header=False)
    lines = text.split(os.linesep)[:-1]
    if len(lines) != len(values) or not all(line.endswith(",0") for line in lines):
        return None
    return pa.array([line[:-2] for line in lines], type=pa.string())


def _string_bytes(array) -> bytes:
    """The concatenated UTF-8 bytes of a string array's values (its data buffer between its first and last offset)."""
    import pyarrow as pa

    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32 if array.type == pa.string() else np.int64)
    offsets = offsets[array.offset:array.offset + len(array) + 1]
    return array.buffers()[2].to_pybytes()[int(offsets[0]):int(offsets[-1])]


def write_csv(path: str | os.PathLike, columns: Mapping[str, np.ndarray],
              labels: Mapping[str, np.ndarray | None] | None = None, batch_rows: int | None = None,
              stage: Staging | None = None) -> Path:
    """Write a coded table as CSV in batches (see :func:`csv_chunks`), atomically (``stage``: as for write_parquet)."""
    with _into(stage, path) as tmp:
        with open(tmp, "wb") as fh:
            for chunk in csv_chunks(columns, dict(labels or {}), batch_rows):
                fh.write(chunk)
    return Path(path)
