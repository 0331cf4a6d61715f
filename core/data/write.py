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
  (:func:`core.release.neutralise`, applied once to the labels, which is
  the same as applying it to every cell), and the bytes are those of
  ``pandas.DataFrame.to_csv`` on the whole table.

Every writer writes into a temporary name beside the target (``.NAME.tmp-*``)
and renames it into place at the end (:func:`atomic_path`), so an error,
a full disk or an interrupted run leaves no partial release behind.
Choices where the issue is silent: a folder that exists is replaced only
when it holds nothing but what these writers write (part files, CSV tables,
_manifest.json, _run.json); otherwise the write is refused rather than
deleting someone's folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, clip

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
#: names a replaceable output folder may hold
_OURS = ("part-", MANIFEST_NAME, RUN_NAME)


def _replaceable(folder: Path) -> bool:
    return all(p.is_file() and (p.name.startswith(_OURS) or p.suffix in (".csv", ".parquet"))
               for p in folder.iterdir())


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, folder: bool = False) -> Iterator[Path]:
    """A temporary path beside ``target``; renamed to ``target`` when the block ends without an error.

    ``folder``: the temporary path is a new directory.  On an error the
    temporary path is removed and ``target`` is left as it was.
    """
    target = Path(target)
    if not target.parent.is_dir():
        raise DataError(f"The folder '{clip(str(target.parent))}' does not exist; create it or choose another --out.")
    if folder and target.is_file():
        raise DataError(f"'{clip(str(target))}' is a file; give --out a folder name (no extension).")
    if not folder and target.is_dir():
        raise DataError(f"'{clip(str(target))}' is a folder; give a file name ending in .csv or .parquet.")
    if folder and target.is_dir() and any(target.iterdir()) and not _replaceable(target):
        raise DataError(f"The folder '{clip(str(target))}' exists and holds other files; choose a new folder "
                        "for the release, or empty it first.")
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    if folder:
        tmp.mkdir()
    try:
        yield tmp
        if folder and target.is_dir():
            old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()
        raise


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


def write_parquet(path: str | os.PathLike, columns: Mapping[str, np.ndarray],
                  labels: Mapping[str, np.ndarray | None] | None = None, batch_rows: int | None = None) -> Path:
    """Write one Parquet file of dictionary-encoded columns (``labels[c]`` None: plain values), atomically."""
    labels = dict(labels or {})
    n = len(next(iter(columns.values()))) if columns else 0
    with atomic_path(path) as tmp:
        _write_parquet_file(tmp, columns, labels, 0, n, batch_rows or BATCH_ROWS)
    return Path(path)


def part_name(i: int) -> str:
    return f"part-{i:05d}.parquet"


def write_dataset(folder: str | os.PathLike, columns: Mapping[str, np.ndarray],
                  labels: Mapping[str, np.ndarray | None] | None = None, bounds: Sequence[int] | None = None,
                  extra: Mapping[str, bytes] | None = None, batch_rows: int | None = None) -> list[Path]:
    """Write a Parquet dataset folder (parts of at most :data:`PART_ROWS` rows, or split at ``bounds``).

    ``bounds``: the first row of each part after the first (ascending);
    ``extra``: other files to write in the folder (``{MANIFEST_NAME: bytes}``).
    Returns the files' final paths.
    """
    labels = dict(labels or {})
    n = len(next(iter(columns.values()))) if columns else 0
    if bounds is None:
        bounds = list(range(PART_ROWS, n, PART_ROWS))
    edges = [0, *[int(b) for b in bounds], n]
    folder = Path(folder)
    names = []
    with atomic_path(folder, folder=True) as tmp:
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
    from ..release import neutralise

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

    from ..release import neutralise

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
              labels: Mapping[str, np.ndarray | None] | None = None, batch_rows: int | None = None) -> Path:
    """Write a coded table as CSV in batches (see :func:`csv_chunks`), atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            for chunk in csv_chunks(columns, dict(labels or {}), batch_rows):
                fh.write(chunk)
    return Path(path)
