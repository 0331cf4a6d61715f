"""The lean columnar read: Parquet, Arrow IPC / Feather and CSV on disk, straight into codes.

This is the first step of the data path (load -> encode -> mechanism ->
release -> queries) for tables too large for a pandas frame.  A
:class:`Source` is a file, a Parquet dataset directory or a glob of files;
:meth:`Source.encode` reads only the asked columns, in row batches, and
turns each into an :class:`Encoded` column: integer codes of the smallest
type that holds them plus a sorted label array.  No pandas frame of the
table (nor a column of Python strings) is ever built: every batch is
dictionary-encoded by Arrow (Parquet string columns come out of their
dictionary pages already encoded; CSV columns are read as dictionaries by
pyarrow's streaming reader), the batch's dictionary is mapped to the
column's codes seen so far, and only the codes are kept.

The labels are exactly those of the frame path (:mod:`core.data.read`
then :func:`core.table.encode`): the same normalising function
(:func:`core.data.read.normalise`: strip, missing-value markers, numbers
from text, whole numbers as integers) runs on the column's *distinct
values* instead of on every cell, which gives the same result because
each of its rules is per value except "a column is numeric when every
value is a number", and a column's values are all numbers exactly when its
distinct values are.  The type is decided on the distinct values (a first
screen of 1,000 of them, as the frame path screens a column's first 1,000
cells), never on every cell: the frame path spent 61% of its load time in
``pd.to_numeric`` over every text cell.  Labels then sort as
:func:`core.table.encode` sorts them (numerically for numbers, by code
point for text), so a release is the same whichever path read the table.

Choices where the issue is silent:

* A missing cell gets the code ``len(labels)`` (one past the last label);
  :func:`core.table.bind` drops those rows as it does on the frame path.
* CSV: the encoding, delimiter, header and decimal mark are detected on the
  first 64 KB as :mod:`core.data.read` does (the encoding on the first MB,
  not the whole file); runs of blanks as a delimiter are not supported here
  (pyarrow splits on one character), and such a file is read by the frame
  path when it is small enough.
* Types this path does not read (binary columns, nested types) send the
  table to the frame path (:class:`Unsupported`), which decodes them.
* The content hash of a source is SHA-256 over its files' names and bytes
  (read in 8 MB blocks), not over the decoded values as for a frame: the
  same table as CSV and as Parquet therefore hashes differently here.
"""

from __future__ import annotations

import codecs
import glob as _glob
import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, clip
from . import read as _read
from .read import DEFAULT_NA, ReadOptions

#: rows per batch read from Parquet and Arrow sources
BATCH_ROWS = 1 << 18
#: bytes per block read from a CSV source (a batch is one block)
CSV_BLOCK_BYTES = 8 << 20
#: formats this path reads
FORMATS = ("parquet", "arrow", "text")
_GLOB_CHARS = set("*?[")
#: suffixes of files a dataset folder may hold beside its data
_NOT_DATA = {".json", ".crc", ".md", ".log"}


class Unsupported(DataError):
    """The source holds something this path does not read; the frame path (core.data.read) may."""


@dataclass(frozen=True, eq=False)
class Encoded:
    """One column read from a source: codes, sorted labels, and the code of a missing cell.

    ``codes`` is of the smallest unsigned type holding ``len(labels)``
    (which is the code of a missing cell, :attr:`missing_code`).
    ``labels`` are floats for a numeric column (made integers by
    :func:`core.table.bind` when every kept value is whole) and ``str``
    objects for text.
    """

    name: str
    codes: np.ndarray
    labels: np.ndarray
    numeric: bool

    @property
    def missing_code(self) -> int:
        return len(self.labels)

    def missing(self) -> np.ndarray:
        return self.codes == self.missing_code


def code_dtype(size: int) -> np.dtype:
    """The smallest unsigned integer type holding codes ``0 .. size`` (``size`` = the missing code)."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if size <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


# ---------------------------------------------------------------- opening
def is_source(spec: str | os.PathLike) -> bool:
    """Whether ``spec`` names a directory, a glob, or a Parquet / Arrow / text file this path reads."""
    text = str(spec)
    if _GLOB_CHARS & set(Path(text).name) and not Path(text).exists():
        return True
    path = Path(text)
    if path.is_dir():
        return True
    if not path.is_file():
        return False
    return _file_format(path) in FORMATS


def _file_format(path: Path) -> str:
    with open(path, "rb") as fh:
        head = fh.read(64)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith((b"ARROW1", b"FEA1")) or head.startswith(b"\xff\xff\xff\xff"):
        return "arrow"
    try:
        fmt = _read.detect_format(head, path.name)
    except DataError:
        return "other"
    return fmt if fmt == "text" else "other"


def files_of(spec: str | os.PathLike) -> list[Path]:
    """The files a spec names: itself, a directory's data files (recursively, sorted), or a glob's matches.

    A directory's hidden files, ``_``-prefixed metadata files
    (``_SUCCESS``, ``_metadata``) and files that describe rather than hold
    data (``.json`` such as a release's manifest.json, ``.crc``, ``.md``)
    are skipped.
    """
    text = str(spec)
    path = Path(text)
    if path.is_file():
        return [path]
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() not in _NOT_DATA
                       and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts))
        if not found:
            raise DataError(f"'{clip(text)}' is a folder without data files; give a Parquet dataset folder, "
                            "a file, or a glob such as 'data/*.parquet'.")
        return found
    if _GLOB_CHARS & set(text):
        found = sorted(Path(p) for p in _glob.glob(text, recursive=True) if Path(p).is_file())
        if not found:
            raise DataError(f"The pattern '{clip(text)}' matches no file; check the folder and the pattern "
                            "(e.g. 'data/part-*.parquet').")
        return found
    raise DataError(f"There is no file at '{clip(text)}'; give a data file, a Parquet dataset folder or a glob.")


@dataclass(eq=False)
class Source:
    """A table on disk read column by column: one file, a dataset directory or a glob.

    Open one with :func:`open_source`.  ``rows`` is known from the
    metadata for Parquet and Arrow; for CSV it is counted on the first
    full read (``None`` until then).
    """

    name: str
    paths: tuple[Path, ...]
    format: str
    columns: tuple[str, ...]
    options: ReadOptions = field(default_factory=ReadOptions)
    rows: int | None = None
    bytes: int = 0
    #: CSV only: the raw column names in the file (before names= / stripping), by output name
    _raw: dict = field(default_factory=dict, repr=False)
    _hash: str | None = field(default=None, repr=False)

    # ---- reading
    def batches(self, columns: Sequence[str], batch_rows: int | None = None) -> Iterator[dict]:
        """``{column: pyarrow array}`` per batch of rows, in file order, for the asked columns only."""
        batch_rows = batch_rows or BATCH_ROWS
        if self.format == "parquet":
            yield from self._parquet_batches(columns, batch_rows)
        elif self.format == "arrow":
            yield from self._arrow_batches(columns, batch_rows)
        else:
            yield from self._csv_batches(columns, batch_rows)

    def _parquet_batches(self, columns, batch_rows):
        import pyarrow as pa
        import pyarrow.parquet as pq

        for path in self.paths:
            try:
                handle = pq.ParquetFile(path)
                schema = handle.schema_arrow
                missing = [c for c in columns if c not in schema.names]
                if missing:
                    raise DataError(f"Column '{clip(missing[0])}' is missing in '{clip(path.name)}', a part of "
                                    f"{clip(self.name)}; every part of a dataset needs the same columns.")
                strings = [c for c in columns if _is_text(schema.field(c).type)]
                handle = pq.ParquetFile(path, read_dictionary=strings)
                for batch in handle.iter_batches(batch_size=batch_rows, columns=list(columns)):
                    yield {c: batch.column(c) for c in columns}
            except DataError:
                raise
            except (pa.ArrowException, OSError) as exc:
                raise DataError(f"'{clip(path.name)}' is not a readable Parquet file ({clip(str(exc), 120)}); "
                                "export it again.") from None

    def _arrow_batches(self, columns, batch_rows):
        import pyarrow as pa

        for path in self.paths:
            try:
                for batch in _ipc_batches(path):
                    missing = [c for c in columns if c not in batch.schema.names]
                    if missing:
                        raise DataError(f"Column '{clip(missing[0])}' is missing in '{clip(path.name)}', a part "
                                        f"of {clip(self.name)}; every part needs the same columns.")
                    for start in range(0, batch.num_rows, batch_rows):
                        part = batch.slice(start, batch_rows)
                        yield {c: part.column(c) for c in columns}
            except DataError:
                raise
            except (pa.ArrowException, OSError) as exc:
                raise DataError(f"'{clip(path.name)}' is not a readable Feather / Arrow file "
                                f"({clip(str(exc), 120)}); export it again.") from None

    def _csv_batches(self, columns, batch_rows):
        import pyarrow as pa
        import pyarrow.csv as pc

        o = self.options
        raw = [self._raw[c] for c in columns]
        for path in self.paths:
            try:
                reader = _open_csv(path, o, self._raw_names, include=raw,
                                   types={r: pa.dictionary(pa.int32(), pa.string()) for r in raw})
                for batch in reader:
                    yield {c: batch.column(r) for c, r in zip(columns, raw)}
            except DataError:
                raise
            except (pa.ArrowException, OSError) as exc:
                raise DataError(_read._ragged_message(path.name, str(exc), o.encoding or "utf-8")) from None

    @property
    def _raw_names(self) -> list[str]:
        return list(self._raw.values())

    def encode(self, columns: Sequence[str], batch_rows: int | None = None) -> dict[str, Encoded]:
        """Read ``columns`` in batches and encode each (see the module docstring)."""
        return dict(self.encode_iter(columns, batch_rows))

    def encode_iter(self, columns: Sequence[str], batch_rows: int | None = None,
                    dtype=None) -> Iterator[tuple[str, Encoded]]:
        """:meth:`encode`, yielding the columns one at a time after the one pass over the source.

        Each column's batch codes are freed once its :class:`Encoded` is
        built, so a caller that converts and drops each column as it comes
        holds at most one column twice.  ``dtype``: the codes' type instead of
        the smallest (:func:`core.table.bind` keeps the smallest, which mechanisms compute with).
        """
        self.encode_check(columns)
        builders = {c: _Builder(c) for c in columns}
        rows = 0
        for batch in self.batches(columns, batch_rows):
            for c in columns:
                builders[c].add(batch[c])
            rows += len(batch[columns[0]]) if columns else 0
            del batch
        if self.rows is None:
            self.rows = rows
        decimal = self.options.decimal or "."
        for c in columns:
            yield c, builders.pop(c).finish(self.options.na, decimal, dtype)

    def encode_check(self, columns: Sequence[str]) -> None:
        unknown = [c for c in columns if c not in self.columns]
        if unknown:
            shown = clip(", ".join(clip(c, 40) for c in self.columns[:12]) + (" ..." if len(self.columns) > 12
                                                                               else ""), 400)
            raise DataError(f"There is no column '{clip(unknown[0])}' in {clip(self.name)}; the columns are: {shown}.")

    def count_rows(self) -> int:
        """Rows of the source (a full pass over a CSV file's first column, once)."""
        if self.rows is None:
            self.encode([self.columns[0]])
        return int(self.rows)

    def sample(self, n: int, seed: int = 0) -> tuple[pd.DataFrame, int]:
        """A seeded sample of ``n`` rows (all columns, in file order) as the frame path reads them, and the total.

        Rows are chosen by :func:`core.rng.order_keys`: the ``n`` rows with
        the smallest keys under ``seed``, so the sample of a table does not
        depend on the batch size and a larger ``n`` contains a smaller one.
        The frame is normalised by :func:`core.data.read.normalise` (the same
        types and missing values as an upload of the same rows).
        """
        from .. import rng

        import pyarrow as pa

        total = self.count_rows()
        n = int(min(n, total))
        chosen = np.sort(_smallest_keys(seed, total, n))
        pieces, start = [], 0
        for batch in self.batches(list(self.columns)):
            length = len(next(iter(batch.values())))
            lo, hi = np.searchsorted(chosen, [start, start + length])
            if hi > lo:
                idx = pa.array(chosen[lo:hi] - start)
                pieces.append(pd.DataFrame({c: _to_pandas(a.take(idx)) for c, a in batch.items()}))
            start += length
        frame = pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame(columns=list(self.columns))
        frame, _ = _read.normalise(frame, self.options.na, self.options.decimal or ".")
        return frame, total

    # ---- identity
    def content_hash(self) -> str:
        """SHA-256 of the input, first 16 hex digits (see :class:`core.table.Table`).

        One file: its bytes only, as the frame path hashes the same file
        (``sha256sum FILE`` shows it). Several parts (a dataset folder or a
        glob): each part's name relative to their common folder, then its
        bytes, so a renamed or reordered part changes the hash.
        """
        if self._hash is None:
            self._hash = self._digest(named=len(self.paths) > 1)
        return self._hash

    def legacy_hash(self) -> str:
        """The hash before issue 24 (a single file's name before its bytes), for sessions saved then."""
        return self._digest(named=True) if len(self.paths) == 1 else self.content_hash()

    def _digest(self, named: bool) -> str:
        h = hashlib.sha256()
        base = _common_root(self.paths)
        for path in self.paths:
            if named:
                h.update(str(path.relative_to(base) if base else path.name).encode("utf-8") + b"\x1f")
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(8 << 20), b""):
                    h.update(block)
        return h.hexdigest()[:16]

    def record(self) -> dict:
        """How the source was read, for the manifest (``input.read``)."""
        fmt = "text" if self.format == "text" else self.format
        return {"format": fmt, **self.options.given()}


def _common_root(paths: Sequence[Path]) -> Path | None:
    if len(paths) == 1:
        return None
    return Path(os.path.commonpath([str(p) for p in paths]))


def _is_text(arrow_type) -> bool:
    import pyarrow as pa

    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _smallest_keys(seed: int, total: int, n: int, room: float = 6.0) -> np.ndarray:
    """Positions of the ``n`` records of ``0 .. total - 1`` with the smallest :func:`core.rng.order_keys`.

    The keys are uniform on 64 bits, so the ``n`` smallest lie below about
    ``n / total`` of the range: each batch keeps only its keys under a
    limit with six standard deviations of room (one comparison a record),
    and the ``n`` smallest are picked among those.  If fewer than ``n`` fall
    under it (never seen; possible in principle) every key is ranked in
    batches, keeping the ``n`` best so far.  Memory stays O(n).
    """
    from .. import rng

    if n <= 0:
        return np.empty(0, dtype=np.int64)
    if n < total:
        frac = max(0.0, (n + room * np.sqrt(n) + 64) / total)
        if frac < 1:
            limit = np.uint64(int(frac * 2.0**64))
            keys, pos = [], []
            for start in range(0, total, BATCH_ROWS * 4):
                count = min(BATCH_ROWS * 4, total - start)
                k = rng.order_keys(seed, start, count)
                sel = np.flatnonzero(k < limit)
                keys.append(k[sel])
                pos.append(sel + start)
            keys, pos = np.concatenate(keys), np.concatenate(pos)
            if len(keys) >= n:
                return pos[np.argpartition(keys, n - 1)[:n]]
    best = np.empty(0, dtype=np.uint64)
    best_pos = np.empty(0, dtype=np.int64)
    for start in range(0, total, BATCH_ROWS):
        count = min(BATCH_ROWS, total - start)
        keys = np.concatenate((best, rng.order_keys(seed, start, count)))
        pos = np.concatenate((best_pos, np.arange(start, start + count, dtype=np.int64)))
        if len(keys) > n:
            part = np.argpartition(keys, n - 1)[:n]
            keys, pos = keys[part], pos[part]
        best, best_pos = keys, pos
    return best_pos


def _to_pandas(array) -> pd.Series:
    import pyarrow as pa

    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode() if hasattr(array, "dictionary_decode") else array.cast(array.type.value_type)
    return array.to_pandas()


def _ipc_batches(path: Path):
    import pyarrow as pa
    import pyarrow.ipc as ipc

    source = pa.memory_map(str(path), "r")
    head = source.read(8)
    source.seek(0)
    if head.startswith(b"\xff\xff\xff\xff"):
        yield from ipc.open_stream(source)
        return
    reader = ipc.open_file(source)
    for i in range(reader.num_record_batches):
        yield reader.get_batch(i)


def open_source(spec: str | os.PathLike, options: ReadOptions | None = None) -> Source:
    """Open a file, Parquet dataset directory or glob for the columnar path.

    Checks that every part has the same format and the same columns (names
    and types) as the first, and refuses read options that do not apply to
    the format.  Raises :class:`Unsupported` for a file this path does not
    read (the frame path may), :class:`core.errors.DataError` otherwise.
    """
    import pyarrow as pa

    options = options or ReadOptions()
    paths = files_of(spec)
    name = Path(str(spec)).name or str(spec)
    formats = {p: _file_format(p) for p in paths}
    first = formats[paths[0]]
    if first not in FORMATS:
        raise Unsupported(f"'{clip(paths[0].name)}' is not Parquet, Arrow or delimited text.")
    odd = next((p for p in paths if formats[p] != first), None)
    if odd is not None:
        raise DataError(f"'{clip(odd.name)}' is {_read.FORMAT_TITLES.get(formats[odd], 'another format')} but "
                        f"'{clip(paths[0].name)}' is {_read.FORMAT_TITLES[first]}; give files of one format.")
    unused = [k for k in options.given() if k not in _read.APPLIES[first]]
    if unused:
        title = _read.FORMAT_TITLES[first]
        article = "an" if title[0].lower() in "aeiou" else "a"
        raise DataError(f"'{clip(name)}' is {article} {title} file, so the read option"
                        f"{'s' if len(unused) > 1 else ''} {', '.join(unused)} "
                        f"{'do' if len(unused) > 1 else 'does'} not apply; leave {'them' if len(unused) > 1 else 'it'} out.")
    size = sum(p.stat().st_size for p in paths)
    if first == "text":
        return _open_text(name, paths, options, size)
    schemas, rows = [], 0
    try:
        for p in paths:
            if first == "parquet":
                import pyarrow.parquet as pq

                meta = pq.ParquetFile(p).metadata
                schemas.append(meta.schema.to_arrow_schema())
                rows += meta.num_rows
            else:
                schema, count = _ipc_meta(p)
                schemas.append(schema)
                rows += count
    except (pa.ArrowException, OSError) as exc:
        bad = paths[len(schemas)]
        raise DataError(f"'{clip(bad.name)}' is not a readable {_read.FORMAT_TITLES[first]} file "
                        f"({clip(str(exc), 120)}); export it again.") from None
    base = schemas[0]
    for p, s in zip(paths, schemas):
        if s.names != base.names:
            extra = [c for c in s.names if c not in base.names] or [c for c in base.names if c not in s.names]
            if extra:
                raise DataError(f"Column '{clip(extra[0])}' is in some parts of {clip(name)} and not in others "
                                f"('{clip(p.name)}' differs from '{clip(paths[0].name)}'); give parts with the "
                                "same columns.")
            raise DataError(f"'{clip(p.name)}' has its columns in another order than '{clip(paths[0].name)}'; "
                            "give parts with the same schema.")
        for fld in s:
            want = base.field(fld.name).type
            if _family(fld.type) != _family(want):
                raise DataError(f"Column '{clip(fld.name)}' is {fld.type} in '{clip(p.name)}' but {want} in "
                                f"'{clip(paths[0].name)}'; give parts with the same schema.")
    for fld in base:
        if _family(fld.type) == "other":
            raise Unsupported(f"Column '{fld.name}' of '{name}' has type {fld.type}.")
    names = list(base.names)
    if options.names is not None:
        if len(options.names) != len(names):
            raise DataError(f"{len(options.names)} column names were given but '{clip(name)}' has {len(names)} "
                            f"columns; give {len(names)} names.")
        raise Unsupported("names= on a Parquet or Arrow source")
    stripped = [str(c).strip() for c in names]
    dupes = [c for j, c in enumerate(stripped) if c in stripped[:j]]
    if dupes:
        raise DataError(f"'{clip(name)}' has two columns named '{clip(dupes[0])}'; give every column its own name.")
    if stripped != names:
        raise Unsupported("column names with blanks around them")
    used = replace(options, header=None, delimiter=None, encoding=None, decimal=None)
    return Source(name=name, paths=tuple(paths), format=first, columns=tuple(names), options=used, rows=rows,
                  bytes=size)


def _family(arrow_type) -> str:
    import pyarrow as pa

    t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "number"
    if pa.types.is_temporal(t):
        return "time"
    return "other"


def _ipc_meta(path: Path):
    import pyarrow as pa
    import pyarrow.ipc as ipc

    source = pa.memory_map(str(path), "r")
    head = source.read(8)
    source.seek(0)
    if head.startswith(b"\xff\xff\xff\xff"):
        reader = ipc.open_stream(source)
        return reader.schema, sum(b.num_rows for b in reader)
    reader = ipc.open_file(source)
    return reader.schema, sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))


def _open_text(name: str, paths: list[Path], options: ReadOptions, size: int) -> Source:
    """Detect how the first CSV file is read (as :mod:`core.data.read` does) and check the others' headers."""
    with open(paths[0], "rb") as fh:
        head = fh.read(1 << 20)
    encoding = options.encoding
    detected = []
    try:
        if encoding is None:
            encoding = _read.detect_encoding(head)
            detected.append("encoding")
        sample, cut = _read._decode_sample(head, encoding, name)
    except _read._BinaryError:
        raise Unsupported("binary") from None
    if _read._looks_binary(sample) or not sample.strip():
        raise Unsupported("not a text table")
    if encoding.startswith("utf-16"):
        raise Unsupported("utf-16 text")
    delimiter = options.delimiter or _read.sniff_delimiter(sample, cut)
    if delimiter == "whitespace":
        raise Unsupported("whitespace-delimited text")
    rows = _read._split_records(sample, delimiter, cut)
    header = options.header
    if header is None:
        header = options.names is None and _read.detect_header(rows)
    width = len(rows[0]) if rows else 1
    raw_names = [f"f{j}" for j in range(width)]
    if header:
        found = [str(v).strip() for v in rows[0]]
    else:
        found = [f"col{j + 1}" for j in range(width)]
    if options.names is not None:
        if len(options.names) != width:
            raise DataError(f"{len(options.names)} column names were given but '{clip(name)}' has {width} "
                            f"columns; give {width} names.")
        found = list(options.names)
    if any(not n for n in found):
        raise Unsupported("a column without a name")
    dupes = [n for j, n in enumerate(found) if n in found[:j]]
    if dupes:
        raise DataError(f"'{clip(name)}' has two columns named '{clip(dupes[0])}'; give every column its own name.")
    decimal = options.decimal
    if decimal is None:
        decimal = "."
        if delimiter != ",":
            probe = pd.DataFrame(rows[1 if header else 0:], dtype="string") if len(rows) > 1 else pd.DataFrame()
            if len(probe) and _read._has_comma_numbers(probe, options.na):
                decimal = ","
    used = replace(options, delimiter=delimiter, header=header, encoding=encoding, decimal=decimal)
    source = Source(name=name, paths=tuple(paths), format="text", columns=tuple(found), options=used, bytes=size,
                    _raw=dict(zip(found, raw_names)))
    if len(paths) > 1:
        for p in paths[1:]:
            with open(p, "rb") as fh:
                other = _read._split_records(_read._decode_sample(fh.read(1 << 16), encoding, p.name)[0], delimiter, True)
            if not other or len(other[0]) != width or (header and [v.strip() for v in other[0]] != found):
                raise DataError(f"'{clip(p.name)}' has other columns than '{clip(paths[0].name)}'; give files "
                                "with the same header.")
    return source


def _open_csv(path: Path, o: ReadOptions, raw_names: list[str], include=None, types=None):
    import pyarrow as pa
    import pyarrow.csv as pc

    encoding = o.encoding or "utf-8"
    stream = pa.OSFile(str(path), "rb")
    skip = 0
    if encoding in ("utf-8", "utf-8-sig"):
        if stream.read(3) != codecs.BOM_UTF8:
            stream.seek(0)
        encoding = "utf8"
    return pc.open_csv(
        stream,
        read_options=pc.ReadOptions(column_names=raw_names, block_size=CSV_BLOCK_BYTES, skip_rows=skip + int(bool(o.header)),
                                    encoding=encoding),
        parse_options=pc.ParseOptions(delimiter=o.delimiter, quote_char='"', newlines_in_values=True,
                                      ignore_empty_lines=True),
        convert_options=pc.ConvertOptions(column_types=types or {}, include_columns=include, null_values=[],
                                          strings_can_be_null=False, quoted_strings_can_be_null=False),
    )


# ---------------------------------------------------------------- encoding
class _Builder:
    """Codes of one column, batch by batch: each batch's dictionary mapped to the codes seen so far.

    "Provisional" codes number the distinct raw values in order of first
    appearance; :meth:`finish` normalises the distinct values, sorts them and
    maps provisional codes to final ones.  The stored codes use the
    smallest unsigned type for the values seen so far (the largest value
    of the type is reserved for a missing cell until :meth:`finish`).
    """

    def __init__(self, name: str):
        self.name = name
        self.values: list = []          # distinct raw values, by provisional code
        self.index: dict = {}           # raw value -> provisional code (small dictionaries)
        self.pieces: list[np.ndarray] = []
        self.kind: str | None = None

    def add(self, array) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(array, pa.ChunkedArray):
            for chunk in array.chunks:
                self.add(chunk)
            return
        if not pa.types.is_dictionary(array.type):
            array = pc.dictionary_encode(array)
        dictionary = array.dictionary
        if self.kind is None:
            self.kind = _family(dictionary.type)
        values = dictionary.to_pylist()
        get = self.index.get
        remap = np.empty(len(values) + 1, dtype=np.int64)
        for j, v in enumerate(values):
            code = get(v)
            if code is None:
                code = len(self.values)
                self.index[v] = code
                self.values.append(v)
            remap[j] = code
        dtype = code_dtype(len(self.values))
        remap[-1] = np.iinfo(dtype).max  # a missing cell
        indices = array.indices
        if indices.null_count:
            indices = pc.fill_null(indices, len(values))
        idx = indices.to_numpy(zero_copy_only=False)
        self.pieces.append(remap.astype(dtype)[idx])

    def finish(self, na, decimal: str, dtype=None) -> Encoded:
        provisional = len(self.values)
        raw = pd.Series(self.values, dtype=_series_dtype(self.kind, self.values))
        norm, _ = _read.normalise(pd.DataFrame({"v": raw}), na, decimal)
        s = norm["v"]
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        present = s.notna().to_numpy()
        if numeric:
            final, labels = pd.factorize(s.to_numpy(dtype=float, na_value=np.nan), sort=True)
            labels = np.asarray(labels, dtype=float)
        else:
            target = s.astype("string") if s.dtype == object else s
            final, labels = pd.factorize(target, sort=True)
            labels = np.asarray([str(v) for v in labels], dtype=object)
        size = len(labels)
        dtype = code_dtype(size) if dtype is None else np.dtype(dtype)
        p2f = np.where(present & (final >= 0), final, size).astype(np.int64)
        codes = np.empty(sum(len(p) for p in self.pieces), dtype=dtype)
        at = 0
        for piece in self.pieces:
            reserved = int(np.iinfo(piece.dtype).max)
            if piece.dtype.itemsize <= 2:
                table = np.full(reserved + 1, size, dtype=dtype)
                k = min(provisional, reserved)
                table[:k] = p2f[:k]
                np.take(table, piece, out=codes[at:at + len(piece)])
            else:
                table = np.append(p2f, size).astype(dtype)
                codes[at:at + len(piece)] = table[np.minimum(piece, provisional)]
            at += len(piece)
        self.pieces = []
        return Encoded(name=self.name, codes=codes, labels=labels, numeric=bool(numeric))


def _series_dtype(kind: str | None, values: list):
    if kind == "text":
        return object
    if kind == "bool":
        return "boolean" if any(v is None for v in values) else bool
    if kind == "time":
        return None
    return None


# ---------------------------------------------------------------- memory estimate
# the estimates live in core.data.memory (read.py needs them too; no load <-> read import cycle)
from .memory import (  # noqa: E402,F401  (re-exported)
    COLUMNAR_OVERHEAD_PER_ROW, FRAME_BYTES_PER_ROW, available_memory, frame_row_limit, size_text)


def columnar_bytes_per_row(columns: int) -> int:
    """Estimated peak bytes a row of the columnar path for ``columns`` chosen columns.

    Per column: the codes while reading (at most 4 bytes) and the final
    codes, which the Dataset keeps (at most 4; 1 for a column of up to 255
    labels, :func:`core.table.code_dtype`); plus
    :data:`COLUMNAR_OVERHEAD_PER_ROW`.
    """
    return 8 * max(1, columns) + COLUMNAR_OVERHEAD_PER_ROW


_gb = size_text


def check_memory(name: str, rows: int, per_row: int, how: str, forward: str = "") -> None:
    """Refuse (one sentence with the figures and the way forward) a table that would not fit in memory.

    ``how`` says which path reads it (e.g. ``"read column by column,"``);
    ``forward`` is another way forward put before ``--engine dask``.
    """
    need = int(rows) * int(per_row)
    room = available_memory()
    if need > room:
        raise DataError(
            f"'{clip(name)}' has {int(rows):,} rows; {how} it needs about {_gb(need)} (about {per_row} bytes a row), "
            f"more than the {_gb(room)} of memory free here; {forward}run it with --engine dask (a cluster's "
            "memory), or sample it down first.")
