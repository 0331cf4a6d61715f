"""Generators that stream a table of any size to a Parquet dataset, never holding it.

``python -m core generate census --rows N --seed S --out DIR`` writes the
CENSUS-like table of :mod:`core.samples` (Adult resampled with replacement,
occupation, race and native_country widened to the papers' domain sizes)
as a Parquet dataset folder: parts of :data:`core.data.write.PART_ROWS`
rows, row groups of :data:`BATCH_ROWS` rows, text columns
dictionary-encoded.  Memory stays one batch whatever N.

Choices where the issue is silent:

* The rows **are** ``census:N``'s, not merely from the same distribution:
  row i draws the i-th uniform of each of the census generator's PCG64
  streams, and each batch advances the streams to its first row
  (:meth:`numpy.random.PCG64.advance` is exact and O(log i)), so the draws
  of record i are keyed by i, the first n rows of any N are the same, and
  with the default seed the dataset equals ``census:N`` for every N the
  sample accepts (tested).  We did not move the census generator to
  :mod:`core.rng`'s Philox streams: that would change every published
  census:N table (and the sessions and figures built on them) for no gain
  in distribution.
* ``--seed S`` replaces the generator's fixed seed
  (:data:`core.samples.CENSUS_SEED`, the default), giving another table of
  the same distribution.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from . import write as _write

#: rows generated and written per batch
BATCH_ROWS = 1 << 20
#: generators this module has
GENERATORS = ("census",)
#: largest --rows accepted (the dataset is written in parts, so only disk space limits it)
MAX_ROWS = 10**10


def census_batches(rows: int, seed: int | None = None, batch_rows: int | None = None):
    """``(columns, labels)`` batches of census rows ``0 .. rows - 1`` (see :func:`core.samples.census_codes`)."""
    from ..samples import CENSUS_COLUMNS, census_codes

    batch_rows = batch_rows or BATCH_ROWS
    for start in range(0, int(rows), batch_rows):
        count = min(batch_rows, int(rows) - start)
        data = census_codes(start, count, seed)
        columns = {c: data[c][0] for c in CENSUS_COLUMNS}
        labels = {c: data[c][1] for c in CENSUS_COLUMNS}
        yield columns, labels


def generate(kind: str, rows: int, out: str | os.PathLike, seed: int | None = None,
             batch_rows: int | None = None, part_rows: int | None = None) -> dict:
    """Stream ``rows`` rows of generator ``kind`` to the Parquet dataset folder ``out``.

    Returns ``{"rows", "files", "seconds", "rows_per_second"}``.  The folder
    is written under a temporary name and renamed at the end.
    """
    if kind not in GENERATORS:
        raise ParameterError(f"There is no generator called '{kind}'; choose one of: {', '.join(GENERATORS)}.")
    if not 1 <= int(rows) <= MAX_ROWS:
        raise ParameterError(f"--rows must be a whole number from 1 to {MAX_ROWS:,}. Got {rows}.")
    out = Path(out)
    if out.suffix:
        raise ParameterError(f"--out names a folder for the Parquet dataset; give a name without an extension "
                             f"(e.g. '{out.with_suffix('')}'), not '{out.name}'.")
    t0 = time.perf_counter()
    paths, written = _write.stream_dataset(out, census_batches(rows, seed, batch_rows), part_rows=part_rows)
    seconds = time.perf_counter() - t0
    return {"rows": written, "files": [str(p) for p in paths], "seconds": seconds,
            "rows_per_second": written / seconds if seconds > 0 else None}
