"""Loading and validating tables; the encoded :class:`Dataset` every mechanism works on.

A :class:`Table` is what was loaded (a DataFrame, its name and a content
hash).  A :class:`Dataset` binds a table to a choice of sensitive attribute
(SA) and quasi-identifiers (QI, the papers' NSA) and encodes each chosen
column once into integer codes, keeping the labels for display and export.

Every problem a user can cause raises :class:`core.errors.DataError` with a
single sentence saying what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .data import read as _read
from .data.read import ReadOptions, ReadResult
from .errors import DataError, clip

#: a fixed row limit (WORKBENCH_MAX_ROWS); None: the limit is the memory estimate
#: (:func:`core.data.load.check_memory`: bytes a row x rows against the memory free)
MAX_ROWS = _read.MAX_ROWS
#: files on disk of this many rows or more (Parquet / Arrow: from their metadata; CSV: estimated from
#: the size) are read column by column (:mod:`core.data.load`); override with WORKBENCH_COLUMNAR_ROWS
COLUMNAR_ROWS = int(os.environ.get("WORKBENCH_COLUMNAR_ROWS", "1000000"))
#: rows of the seeded sample a column-by-column table proposes its columns from
PREVIEW_ROWS = 100_000
#: refuse files larger than this (bytes); override with WORKBENCH_MAX_BYTES
MAX_BYTES = _read.MAX_BYTES


@dataclass(frozen=True, eq=False)
class Table:
    """A loaded table: the frame (original labels), a display name and a content hash.

    The content hash (issue 24 §5: one hash whichever reader read it) is
    that of the input the steward holds:

    * a table read from a file (or an upload's bytes): the first 16 hex digits
      of the SHA-256 of the file's bytes, the same whether the file was read
      whole into a frame or column by column (``sha256sum FILE`` shows it);
      a folder of parts: each part's name relative to the folder and bytes;
    * a table with no file (a generated sample, a frame in memory): the hash
      of its column names and cell values (:func:`values_hash`).

    The file's bytes do not say how they were read: :attr:`key`, which the
    caches use, adds the read options, so the same bytes read two ways are two
    tables. A table also answers to the hashes older versions gave it
    (:meth:`known_as`), so a session saved before still opens.

    A large file on disk is not loaded into a frame: ``frame`` is None and
    ``source`` (a :class:`core.data.load.Source`) reads the chosen columns
    when the table is bound.
    """

    frame: pd.DataFrame | None
    name: str
    content_hash: str
    #: how the file was read (format and every read option used); None for a bundled sample or a frame
    read: dict | None = None
    #: the columnar source of a table without a frame (:mod:`core.data.load`)
    source: Any = field(default=None, repr=False)
    #: what the reader said about how it read the file (a bytes column decoded as text ...): every release of the
    #: table carries these in its notes, so the manifest and the CLI say them too
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The cache identity: the content hash, and how the file was read (:func:`table_key`)."""
        return table_key(self.content_hash, self.read)

    def known_as(self, content_hash: str) -> bool:
        """Whether ``content_hash`` names this table: its hash, or one an older version gave it.

        Before issue 24 a table read whole was named by its values
        (:func:`values_hash`) and one read column by column by its file's name
        and bytes; a session saved then holds one of those.
        """
        if content_hash == self.content_hash:
            return True
        if self.frame is not None and content_hash == values_hash(self.frame):
            return True
        return self.source is not None and content_hash == self.source.legacy_hash()

    @property
    def columns(self) -> list[str]:
        if self.frame is None:
            return list(self.source.columns)
        return [str(c) for c in self.frame.columns]

    def __len__(self) -> int:
        return self.source.count_rows() if self.frame is None else len(self.frame)

    def preview(self) -> pd.DataFrame:
        """The frame, or for a columnar table a seeded sample of :data:`PREVIEW_ROWS` rows (seed 0)."""
        if self.frame is not None:
            return self.frame
        cached = self.__dict__.get("_preview")
        if cached is None:
            cached = self.source.sample(PREVIEW_ROWS, 0)[0]
            object.__setattr__(self, "_preview", cached)
        return cached


def values_hash(frame: pd.DataFrame) -> str:
    """SHA-256 of the column names and values (first 16 hex digits): the hash of a table with no file."""
    h = hashlib.sha256()
    h.update("\x1f".join(map(str, frame.columns)).encode("utf-8"))
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


content_hash = values_hash  # the name callers used before file hashes (issue 24 §5)


def file_hash(data: bytes | memoryview) -> str:
    """SHA-256 of a file's bytes, first 16 hex digits: the content hash of a table read from that file."""
    return hashlib.sha256(data).hexdigest()[:16]


def table_key(content_hash: str, read: dict | None) -> str:
    """A cache key: ``content_hash``, plus a digest of the read options when a file was read.

    The content hash of a file is its bytes'; the same bytes read with
    another delimiter, header or missing-value markers are another table.
    """
    if not read:
        return content_hash
    text = json.dumps(read, sort_keys=True, default=str, ensure_ascii=False)
    return f"{content_hash}+{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"


def make_table(frame: pd.DataFrame, name: str, read: dict | None = None, content_hash: str | None = None) -> Table:
    """Validate a frame's shape and wrap it as a :class:`Table` (``read``: how it was read, for the manifest).

    ``content_hash``: the file's (:func:`file_hash`) when the frame was read
    from one; None names the table by its values (:func:`values_hash`).
    """
    frame = _check_frame(frame, name)
    return Table(frame=frame, name=name, content_hash=content_hash or values_hash(frame), read=read)


def load_table(source: str | os.PathLike | bytes, filename: str | None = None,
               options: ReadOptions | None = None) -> Table:
    """Load a bundled sample by name, a file path, or uploaded bytes.

    Parameters
    ----------
    source : str, path or bytes
        ``"adult"``, ``"census:300000"`` ... (see :mod:`core.samples`), a
        path to a file of any supported format (:mod:`core.data.read`;
        the content decides, not the extension), or the raw bytes of one.
    filename : str, optional
        Name of uploaded bytes (used in messages and the manifest).
    options : ReadOptions, optional
        How to read the file (delimiter, header, names, encoding, sheet,
        missing-value markers, decimal mark); unset options are detected.
        Ignored for a bundled sample.
    """
    return load(source, filename, options)[0]


def load(source: str | os.PathLike | bytes, filename: str | None = None,
         options: ReadOptions | None = None, columnar: bool | None = None) -> tuple[Table, ReadResult | None]:
    """:func:`load_table` and the :class:`ReadResult` saying how the file was read (None for a sample).

    ``columnar``: read a file on disk column by column (:mod:`core.data.load`,
    no frame; the ReadResult is then None); None (the default) does so for a
    Parquet dataset folder or glob, and for a Parquet, Arrow or CSV file of
    :data:`COLUMNAR_ROWS` rows or more; False never does.
    """
    from . import samples
    from .data import load as _load

    if isinstance(source, str) and samples.is_sample(source):
        frame, sample = samples.load_sample(source)
        return make_table(frame, source), None
    if not isinstance(source, (bytes, bytearray, memoryview)) and columnar is not False \
            and _load.is_source(source):
        table = _columnar_table(source, options, columnar)
        if table is not None:
            return table, None
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        name = filename or "upload"
    else:
        path = Path(source)
        name = path.name
        if not path.exists():
            hint = ""
            if isinstance(source, str) and ":" in source or str(source) in {"census", "hospital"}:
                hint = " or a sample name"
            raise DataError(
                f"There is no file at '{source}'; give a data file (CSV or other delimited text, Excel, "
                f"Parquet, Feather, SPSS, Stata or SAS){hint} "
                f"(samples: {', '.join(s.name for s in samples.list_samples())})."
            )
        data = _read.read_file(path, name, MAX_BYTES)  # a regular file only (not /dev/zero), within the limit
    result = _read.read(data, name, options, max_rows=MAX_ROWS, max_bytes=MAX_BYTES)
    table = make_table(result.frame, name, result.record(), content_hash=file_hash(data))
    return (replace(table, notes=tuple(result.notes)) if result.notes else table), result


def _columnar_table(source, options: ReadOptions | None, force: bool | None) -> Table | None:
    """A frame-less :class:`Table` over ``source``, or None when the frame path should read it."""
    from .data import load as _load

    path = Path(source)
    try:
        src = _load.open_source(source, options)
    except _load.Unsupported:
        if path.is_file():
            return None
        raise DataError(f"'{clip(str(source))}' holds files this workbench reads only one at a time (not Parquet, "
                        "Arrow or comma/semicolon/tab/pipe-delimited text); give one file.") from None
    if force is None and path.is_file():
        rows = src.rows
        if rows is None:  # CSV: estimate the rows from the size and the first 64 KB
            with open(path, "rb") as fh:
                head = fh.read(1 << 16)
            rows = src.bytes * max(1, head.count(b"\n")) // max(1, len(head))
        if rows < COLUMNAR_ROWS:
            return None
    if src.rows is not None:
        _check_rows(src.name, src.rows)
    return Table(frame=None, name=src.name, content_hash=src.content_hash(), read=src.record(), source=src)


def _check_rows(name: str, rows: int) -> None:
    if MAX_ROWS is not None and rows > MAX_ROWS:
        raise DataError(f"'{clip(name)}' has {rows:,} rows, above the limit of {MAX_ROWS:,}; sample it down first "
                        "(or raise WORKBENCH_MAX_ROWS for the command line).")


def read_bytes(data: bytes, name: str = "upload", options: ReadOptions | None = None) -> pd.DataFrame:
    """Parse the bytes of a file of any supported format into a DataFrame (strings or numbers).

    See :func:`core.data.read.read`; kept for callers that want the frame only.
    """
    return _read.read(data, name, options, max_rows=MAX_ROWS, max_bytes=MAX_BYTES).frame


def _check_frame(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    if frame.shape[1] == 0:
        raise DataError(f"'{name}' has no columns; choose a file with a header row and data rows.")
    if len(frame) == 0:
        raise DataError(f"'{name}' has a header but no data rows; add rows or choose another file.")
    if frame.shape[1] == 1:
        raise DataError(
            f"'{name}' has only one column ('{frame.columns[0]}'); a table needs a sensitive column "
            "and at least one other (check the delimiter: comma, semicolon, tab, pipe or spaces)."
        )
    if MAX_ROWS is not None and len(frame) > MAX_ROWS:
        raise DataError(
            f"'{name}' has {len(frame):,} rows, above the limit of {MAX_ROWS:,}; sample it down first."
        )
    names = [str(c) for c in frame.columns]
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise DataError(f"'{name}' has two columns named '{dupes[0]}'; give every column its own name.")
    if any(not c or c.startswith("Unnamed:") for c in names):
        raise DataError(f"'{name}' has a column without a name; give every column a header.")
    return frame


# ---------------------------------------------------------------- encoding
def code_dtype(size: int) -> np.dtype:
    """The integer type of a Dataset's codes for ``size`` labels: the smallest unsigned type holding ``0 .. size``.

    uint8 up to 255 labels, uint16 up to 65,535, then uint32: census's
    eight columns take 8 bytes a record instead of int32's 32.  Unsigned
    rather than signed: one byte holds 255 labels instead of 127, and no
    code is negative (a missing cell is ``size``, one past the last label,
    never -1; :mod:`core.data.load`), the same rule as the columnar reader,
    so its codes are kept without a copy.  One value is left spare above
    the last code (``size`` fits) for a sentinel.  Arithmetic on codes that
    can leave the type's range (``code * radix + code``, ``code - 1``) casts
    the operands it needs, a chunk at a time, to int64 at the use.
    """
    from .data.load import code_dtype as _smallest

    return _smallest(int(size))


def narrow(codes: np.ndarray, size: int) -> np.ndarray:
    """``codes`` (``0 .. size - 1``) as :func:`code_dtype` ``(size)`` (no copy when already that type)."""
    return np.asarray(codes).astype(code_dtype(size), copy=False)


@dataclass(frozen=True, eq=False)
class Column:
    """One encoded column: integer codes and the labels they index."""

    name: str
    codes: np.ndarray  # one per row, of type :func:`code_dtype` (uint8 up to 255 labels)
    labels: np.ndarray  # distinct values, sorted (numerically when numeric)
    numeric: bool

    @property
    def size(self) -> int:
        return len(self.labels)


def encode(series: pd.Series, name: str | None = None) -> Column:
    """Encode a column without missing values into sorted integer codes."""
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if numeric:
        codes, labels = pd.factorize(series.to_numpy(dtype=float), sort=True)
        labels = np.asarray(labels, dtype=float)
        if np.all(labels == np.round(labels)):
            labels = labels.astype(np.int64)
    else:
        # factorizing the Series keeps pandas' fast string path (about 7x faster than object arrays)
        codes, labels = pd.factorize(series.astype("string") if series.dtype == object else series, sort=True)
        labels = np.asarray([str(v) for v in labels], dtype=object)
    return Column(name=name or str(series.name), codes=narrow(codes, len(labels)), labels=labels, numeric=numeric)


@dataclass(frozen=True, eq=False)
class Dataset:
    """A table bound to one sensitive attribute and its QI columns, encoded.

    ``sa_codes`` index ``sa_labels``; ``qi_codes[j]`` index ``qi_labels[j]``.
    Rows with a missing value in a chosen column are left out and counted in
    ``rows_dropped``.
    """

    name: str
    content_hash: str
    sa: str
    qi: tuple[str, ...]
    sa_codes: np.ndarray
    sa_labels: np.ndarray
    qi_codes: tuple[np.ndarray, ...]
    qi_labels: tuple[np.ndarray, ...]
    qi_numeric: tuple[bool, ...]
    rows_dropped: int = 0
    table: Table | None = field(default=None, repr=False)
    row_index: np.ndarray | None = field(default=None, repr=False)
    #: the :class:`core.data.banding.Banding` applied to QI columns, in QI order
    bands: tuple = ()

    @property
    def n(self) -> int:
        return len(self.sa_codes)

    @property
    def m(self) -> int:
        return len(self.sa_labels)

    @property
    def domains(self) -> tuple[int, ...]:
        return tuple(len(lab) for lab in self.qi_labels)

    @property
    def key(self) -> str:
        """Identifies (content and how it was read, SA, QIs, bands) for caching."""
        content = self.table.key if self.table is not None else self.content_hash
        key = f"{content}|{self.sa}|{','.join(self.qi)}"
        return key + ("|" + ";".join(b.text() for b in self.bands) if self.bands else "")

    def band_specs(self) -> dict[str, dict[str, Any]]:
        """``{column: spec}`` of the banded QIs (JSON-able; the manifest's ``input.bands``)."""
        return {b.column: b.spec() for b in self.bands}

    @cached_property
    def sa_counts(self) -> np.ndarray:
        return np.bincount(self.sa_codes, minlength=self.m)

    def qi_index(self, column: str) -> int:
        return self.qi.index(column)

    def column(self, name: str) -> Column:
        """Encode another column of the same rows (e.g. a second SA).

        A columnar table (no frame) reads that column again from its source.
        """
        if self.table is not None and self.table.frame is None:
            if name not in self.table.source.columns:
                raise DataError(f"There is no column '{clip(name)}' in {clip(self.name)}.")
            enc = self.table.source.encode([name])[name]
            codes = enc.codes if self.row_index is None else enc.codes[self.row_index]
            if (codes == enc.missing_code).any():
                raise DataError(f"Column '{clip(name)}' has missing values in the chosen rows; choose another column.")
            codes, labels = _compact(codes, enc.labels, enc.numeric)
            return Column(name=name, codes=narrow(codes, len(labels)), labels=labels, numeric=enc.numeric)
        if self.table is None or name not in self.table.frame.columns:
            raise DataError(f"There is no column '{clip(name)}' in {clip(self.name)}.")
        series = self.table.frame[name]
        if self.row_index is not None:
            series = series.iloc[self.row_index]
        if series.isna().any():
            raise DataError(f"Column '{clip(name)}' has missing values in the chosen rows; choose another column.")
        return encode(series, name)

    def frame(self) -> pd.DataFrame:
        """The chosen columns with their original labels (QIs first, SA last)."""
        data = {c: self.qi_labels[j][self.qi_codes[j]] for j, c in enumerate(self.qi)}
        data[self.sa] = self.sa_labels[self.sa_codes]
        return pd.DataFrame(data)


def subset(data: Dataset, rows: np.ndarray, tag: str) -> Dataset:
    """The records ``rows`` of ``data`` with the same codes and labels (so one workload's queries apply).

    The content hash gets ``tag`` appended, so caches never confuse the
    subset with the whole table.  (Here rather than with the experiments
    that use it most: the risk measurement's training part is one, and the
    command line should not import plotly to cut it.)
    """
    rows = np.asarray(rows)
    return replace(
        data,
        name=f"{data.name} [{tag}]",
        content_hash=f"{data.content_hash}:{tag}",
        sa_codes=data.sa_codes[rows],
        qi_codes=tuple(c[rows] for c in data.qi_codes),
        rows_dropped=0,
        table=None,
        row_index=None,
    )


def default_columns(table: Table, sa: str | None = None) -> tuple[str, tuple[str, ...]]:
    """A sensible (SA, QIs) choice: :func:`proposal`'s SA and QIs."""
    p = proposal(table, sa)
    return p.sa, p.qi


def proposal(table: Table, sa: str | None = None):
    """The proposed SA, QIs and identifiers of ``table``, each with a reason (:mod:`core.data.columns`).

    A bundled sample has its papers' choice; any other table gets
    :func:`core.data.columns.propose` (``sa`` fixes the sensitive attribute).
    """
    from . import samples
    from .data import columns as _columns

    if samples.is_sample(table.name) and table.frame is not None:
        base = table.name.split(":", 1)[0].strip().lower()
        sample = next((s for s in samples.list_samples() if s.name == base), None)
        if sample is not None and sample.sa in table.frame.columns and sa in (None, sample.sa):
            return _columns.proposal_for_sample(
                table.frame, sample.sa, tuple(c for c in sample.qi if c in table.frame.columns),
                f"the papers' choice for the {sample.name} sample")
    return _columns.propose(table.preview(), sa)


def bind(table: Table, sa: str | None = None, qi: Sequence[str] | None = None,
         bands: Mapping[str, Any] | Sequence[Any] | None = None) -> Dataset:
    """Choose the SA and QI columns of ``table``, band numeric QIs, and encode them.

    Parameters
    ----------
    table : Table
    sa : str, optional
        Sensitive attribute (default: the proposal's).
    qi : sequence of str, optional
        QI columns (default: the proposal's).
    bands : mapping or sequence, optional
        ``{column: Banding or spec dict}`` or a sequence of
        :class:`core.data.banding.Banding`: numeric QI columns to replace by
        their bands (applied to the rows kept after dropping missing values).

    Raises DataError for an unknown column, an SA with a single value or with
    a different value in every row (an identifier), a band on a column that
    is not a numeric QI, or nothing left after dropping rows with missing
    values.
    """
    from .data import banding as _banding

    if table.frame is None:
        return _bind_columnar(table, sa, qi, bands)
    frame = table.frame
    columns = [str(c) for c in frame.columns]
    sa, qi = _choose(table, columns, sa, qi)
    bands = _banding.normalise(bands)
    for col, band in bands.items():
        if col not in columns:
            shown = ", ".join(columns[:12]) + (" ..." if len(columns) > 12 else "")
            raise DataError(f"There is no column '{col}' to band in {table.name}; the columns are: {shown}.")
        if col == sa:
            raise DataError(f"'{col}' is the sensitive attribute; only QI columns can be banded.")
        if col not in qi:
            raise DataError(f"'{col}' is banded but is not a QI column; add it to the QIs or drop its band.")
        if not _banding.is_numeric(frame[col]):
            sample = next((str(v) for v in frame[col].dropna().head(1)), "")
            raise DataError(f"'{col}' is not numeric (values like '{sample}'), so it cannot be banded; "
                            "band only numeric QI columns.")
    chosen = frame[[*qi, sa]]
    keep = chosen.notna().all(axis=1).to_numpy()
    dropped = int((~keep).sum())
    if dropped == len(frame):
        raise DataError(
            f"Every row has a missing value in the chosen columns ({clip(', '.join([*qi, sa]), 200)}); "
            "choose other columns."
        )
    row_index = np.flatnonzero(keep) if dropped else None
    if dropped:
        chosen = chosen.loc[keep]
    sa_col = encode(chosen[sa], sa)
    _check_sa(sa, sa_col)
    qis = [encode(bands[c].apply(chosen[c]) if c in bands else chosen[c], c) for c in qi]
    return _dataset(table, sa, qi, sa_col, qis, dropped, row_index, bands)


def _check_sa(sa: str, sa_col: Column) -> None:
    """The SA must have two values or more, and not one per row (an identifier): both binders' check."""
    if sa_col.size < 2:
        raise DataError(
            f"The sensitive attribute '{clip(sa)}' has a single value ('{clip(sa_col.labels[0])}'); "
            "there is nothing to protect; choose another column."
        )
    n = len(sa_col.codes)
    if n >= 20 and sa_col.size == n:
        raise DataError(
            f"'{clip(sa)}' has a different value in every row, so it looks like an identifier, "
            "not a sensitive attribute; choose another column."
        )


def _dataset(table: Table, sa: str, qi: Sequence[str], sa_col: Column, qis: Sequence[Column], dropped: int,
             row_index: np.ndarray | None, bands: Mapping[str, Any]) -> Dataset:
    return Dataset(
        name=table.name,
        content_hash=table.content_hash,
        sa=sa,
        qi=tuple(qi),
        sa_codes=sa_col.codes,
        sa_labels=sa_col.labels,
        qi_codes=tuple(c.codes for c in qis),
        qi_labels=tuple(c.labels for c in qis),
        qi_numeric=tuple(c.numeric for c in qis),
        rows_dropped=dropped,
        table=table,
        row_index=row_index,
        bands=tuple(bands[c] for c in qi if c in bands),
    )


def _compact(codes: np.ndarray, labels: np.ndarray, numeric: bool, used: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Drop labels no kept row uses (as :func:`encode` sees only kept rows); whole numeric labels as int64.

    ``used=False``: every label is known to be used (no row was dropped), skip the count.  The codes
    come back as :func:`code_dtype` of the labels kept.
    """
    used = np.bincount(codes, minlength=len(labels))[:len(labels)] > 0 if used else np.ones(len(labels), bool)
    if not used.all():
        new = (np.cumsum(used) - 1).astype(code_dtype(int(used.sum())))
        codes, labels = new[codes], labels[used]
    codes = narrow(codes, len(labels))
    if numeric:
        labels = np.asarray(labels, dtype=float)
        if np.all(labels == np.round(labels)):
            labels = labels.astype(np.int64)
    return codes, labels


def _bind_columnar(table: Table, sa: str | None, qi: Sequence[str] | None,
                   bands: Mapping[str, Any] | Sequence[Any] | None) -> Dataset:
    """:func:`bind` for a table without a frame: read and encode only the chosen columns from its source.

    Same checks, same codes and labels as the frame path for the same
    table; the memory estimate (:func:`core.data.load.check_memory`) is
    checked before anything is read.
    """
    from .data import banding as _banding
    from .data import load as _load

    source = table.source
    columns = list(source.columns)
    sa, qi = _choose(table, columns, sa, qi)
    bands = _banding.normalise(bands)
    for col in bands:
        if col not in columns:
            shown = ", ".join(columns[:12]) + (" ..." if len(columns) > 12 else "")
            raise DataError(f"There is no column '{col}' to band in {table.name}; the columns are: {shown}.")
        if col == sa:
            raise DataError(f"'{col}' is the sensitive attribute; only QI columns can be banded.")
        if col not in qi:
            raise DataError(f"'{col}' is banded but is not a QI column; add it to the QIs or drop its band.")
    chosen = [*qi, sa]
    if source.rows is not None:
        _load.check_memory(table.name, source.rows, _load.columnar_bytes_per_row(len(chosen)),
                           "read column by column,")
    # one pass over the source; each column's codes are kept as read, in the smallest unsigned type
    # (code_dtype: what the Dataset holds, so no second copy)
    full: dict[str, tuple[np.ndarray, np.ndarray, bool]] = {}
    keep = None
    for c, e in source.encode_iter(chosen):
        if c in bands and not e.numeric:
            sample = next((str(v) for v in e.labels[:1]), "")
            raise DataError(f"'{c}' is not numeric (values like '{sample}'), so it cannot be banded; "
                            "band only numeric QI columns.")
        miss = e.codes == e.missing_code
        if miss.any():
            keep = ~miss if keep is None else keep & ~miss
        full[c] = (e.codes, e.labels, e.numeric)
        del e, miss
    n_all = len(full[sa][0])
    dropped = 0 if keep is None else int((~keep).sum())
    if dropped == n_all:
        raise DataError(
            f"Every row has a missing value in the chosen columns ({clip(', '.join(chosen), 200)}); "
            "choose other columns."
        )
    row_index = np.flatnonzero(keep) if dropped else None
    out: dict[str, Column] = {}
    for c in chosen:
        codes, labels, numeric = full.pop(c)
        if dropped:
            codes = codes[keep]
            codes, labels = _compact(codes, labels, numeric)
        elif numeric:  # every label is a value of some row: only the integer labels to make
            codes, labels = _compact(codes, labels, numeric, used=False)
        if c in bands:
            out[c] = encode(bands[c].apply(pd.Series(labels[codes], name=c)), c)
        else:
            out[c] = Column(name=c, codes=narrow(codes, len(labels)), labels=labels, numeric=numeric)
        del codes
    sa_col = out[sa]
    _check_sa(sa, sa_col)
    return _dataset(table, sa, qi, sa_col, [out[c] for c in qi], dropped, row_index, bands)


def check_choice(sa: str, qi: Sequence[str]) -> tuple[str, ...]:
    """The QIs without repeats; DataError when the SA is among them or there is none (every engine's check)."""
    qi = tuple(dict.fromkeys(qi))
    if sa in qi:
        raise DataError(f"'{clip(sa)}' is the sensitive attribute; it cannot also be a QI column.")
    if not qi:
        raise DataError("Choose at least one QI (non-sensitive) column besides the sensitive attribute.")
    return qi


def _choose(table: Table, columns: Sequence[str], sa: str | None, qi: Sequence[str] | None
            ) -> tuple[str, tuple[str, ...]]:
    """The SA and QIs (the proposal's where not given), each a column of ``table``, checked by :func:`check_choice`."""
    if sa is None or qi is None:
        d_sa, d_qi = default_columns(table, sa)
        sa = d_sa if sa is None else sa
        qi = d_qi if qi is None else qi
    _known(sa, list(columns), table.name)
    for c in qi:
        _known(c, list(columns), table.name)
    return sa, check_choice(sa, qi)


def _known(column: str, columns: list[str], name: str) -> None:
    if column not in columns:
        shown = clip(", ".join(clip(c, 40) for c in columns[:12]) + (" ..." if len(columns) > 12 else ""), 400)
        raise DataError(f"There is no column '{clip(column)}' in {clip(name)}; the columns are: {shown}.")


def load_dataset(source: str | os.PathLike | bytes, sa: str | None = None,
                 qi: Sequence[str] | None = None, filename: str | None = None,
                 bands: Mapping[str, Any] | Sequence[Any] | None = None,
                 options: ReadOptions | None = None) -> Dataset:
    """Load and bind in one step (CLI and tests); ``options`` say how to read a file."""
    return bind(load_table(source, filename, options), sa, qi, bands)
