"""The Dask engine: the local engine's release, computed on a ``dask.distributed`` cluster.

The input is a Parquet dataset (a folder of ``.parquet`` files or a glob);
its files in sorted path order, each split into pieces of whole row groups
of about ``partition_rows`` rows, are the **partitions**.  Record ``i`` is
the ``i``-th row kept (no missing value in a chosen column) in that order,
exactly as the local engine numbers the rows of the same dataset, so every
draw keyed by record (:mod:`core.rng`) is the same on both engines.

The work, each step one task per partition on the workers (the partitions'
codes stay on the workers; the client only sees counts):

1. **distinct values**: each partition's kept rows and the distinct values
   (with their counts) of every chosen column; the client merges them into
   the global labels and a map from each raw value to its code, so every
   partition encodes to the codes the local engine gives the whole table;
2. **encode** every partition with those maps, and count its distinct
   (QI..., SA) combinations; the client merges them into the table's
   :class:`~core.engine.combos.Combos` and asks the mechanism for its plan;
3. **offsets**: the partitions' row counts give each partition's first
   record (exclusive prefix sum); when the plan needs a rank per record
   (:attr:`Plan.rank_by`), each partition's key counts give, by the same
   prefix sum over earlier partitions, where its ranks start;
4. **apply** the plan to each partition, draw each kept record's order key
   (:func:`core.rng.order_keys`) and cut the records into ``2**B`` buckets
   by the key's top ``B`` bits (``B`` from the table's size only);
5. **write**: output part ``b`` gathers bucket ``b`` of every partition in
   partition order, sorts it by key (a stable sort: ties by position) and
   writes it, so part files are byte for byte the local engine's.

Everything is written to a temporary folder beside ``--out`` and renamed at
the end: a run that fails leaves nothing behind.

Choices where the issue is silent:

* Partition size: whole row groups up to :data:`PARTITION_ROWS` rows (a
  file with one huge row group is one partition); ``--partition-rows``
  changes it (the release does not depend on it).
* The embedded cluster (no ``--scheduler``): a LocalCluster started and
  stopped by the command, by default one worker of :data:`WORKERS` threads
  in the command's own process (``processes=False``; see :func:`connect`:
  on one machine that costs no pickling, no copies between processes and
  no second import of the mechanisms, and it is what keeps the engine
  within 1.5x of the local engine's time and memory), or, with
  ``WORKBENCH_DASK_PROCESSES=1`` or a ``WORKBENCH_DASK_MEMORY`` limit,
  :data:`WORKERS` worker processes of one thread each on 127.0.0.1.
* With ``--scheduler``, the workers read the input files and write the
  part files themselves: the input and the ``--out`` folder must be at the
  same paths on every worker (a shared file system), as they are on a
  local cluster.
"""

from __future__ import annotations

import contextlib
import glob as _glob
import json
import logging
import os
import shutil
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping as _MappingABC
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ..errors import DataError, clip
from ..table import check_choice, table_key
from .combos import rank_keys

#: rows per partition (whole row groups) unless --partition-rows says otherwise
PARTITION_ROWS = 2_000_000
#: threads of the embedded LocalCluster's one in-process worker (or its worker processes, one thread each,
#: with WORKBENCH_DASK_PROCESSES=1)
WORKERS = 2
#: rows per row group of an output part file
PART_ROW_GROUP = 1 << 20
#: seconds to wait for a scheduler given with --scheduler
CONNECT_TIMEOUT = 10
#: blocks of this many bytes or more get their own mapping from glibc in the embedded cluster's process
#: (:func:`lean_allocators`)
MMAP_THRESHOLD = 8 << 20



class EngineError(DataError):
    """The cluster failed (unreachable, died, out of memory): one sentence, and nothing was written."""


# ---------------------------------------------------------------- input
@dataclass(frozen=True)
class Piece:
    """One partition: whole row groups of one Parquet file."""

    path: str
    row_groups: tuple[int, ...]
    rows: int


def pieces_of(paths: Sequence[Path | str], partition_rows: int = PARTITION_ROWS) -> list[Piece]:
    """Cut files into partitions of whole row groups, about ``partition_rows`` rows each, in file order."""
    import pyarrow.parquet as pq

    out: list[Piece] = []
    for path in paths:
        md = pq.ParquetFile(path).metadata
        path = os.path.abspath(path)  # the workers of a --scheduler may run in another folder
        groups: list[int] = []
        rows = 0
        for g in range(md.num_row_groups):
            r = md.row_group(g).num_rows
            if groups and rows + r > partition_rows:
                out.append(Piece(str(path), tuple(groups), rows))
                groups, rows = [], 0
            groups.append(g)
            rows += r
        if groups:
            out.append(Piece(str(path), tuple(groups), rows))
    return out


def open_input(spec: str, columns: Sequence[str], options=None):
    """The source (:func:`core.data.load.open_source`) of a Parquet dataset folder, glob or file, checked.

    Every file must hold the chosen columns with one type family; the local
    engine's reader makes the same checks, so both refuse the same inputs
    with the same sentence.
    """
    from ..data import load

    try:
        source = load.open_source(spec, options)
    except load.Unsupported as exc:
        raise DataError(f"The Dask engine reads Parquet datasets; '{clip(spec)}' is not one ({clip(str(exc), 120)}); "
                        "convert it to Parquet or use --engine local.") from None
    if source.format != "parquet":
        raise DataError(f"The Dask engine reads Parquet datasets (a folder of .parquet files, a glob or one file); "
                        f"'{clip(spec)}' is {source.format}: convert it to Parquet or use --engine local.")
    unknown = [c for c in columns if c not in source.columns]
    if unknown:
        shown = clip(", ".join(clip(c, 40) for c in source.columns[:12])
                     + (" ..." if len(source.columns) > 12 else ""), 400)
        raise DataError(f"There is no column '{clip(unknown[0])}' in {clip(source.name)}; the columns are: {shown}.")
    return source


# ---------------------------------------------------------------- worker-side steps
def _canonical(arrow_type):
    """The Arrow type every file's values of one column are cast to before they are compared."""
    import pyarrow as pa

    t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_integer(t):
        return pa.int64()
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return pa.float64()
    return t


@dataclass(eq=False)
class Raw:
    """One partition as read: per column its distinct raw values and each row's index into them (-1: null)."""

    values: list
    index: list[np.ndarray]
    rows: int


def read_task(piece: Piece, columns: Sequence[str], types: Sequence[Any]) -> Raw:
    """Read the chosen columns of one partition, dictionary-encoded (text comes out of Parquet encoded)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(piece.path, read_dictionary=[c for c, t in zip(columns, types)
                                                               if pa.types.is_string(t)])
        table = handle.read_row_groups(list(piece.row_groups), columns=list(columns))
    except FileNotFoundError:
        raise DataError(f"'{clip(Path(piece.path).name)}' disappeared while it was being read; run again on a "
                        "dataset that does not change.") from None
    values, index = [], []
    for c, t in zip(columns, types):
        col = table.column(c)
        if not pa.types.is_dictionary(col.type):
            col = pc.dictionary_encode(col.cast(t) if col.type != t else col)
        chunks = col.unify_dictionaries().chunks if hasattr(col, "unify_dictionaries") else col.chunks
        if not chunks:
            values.append(pa.array([], t))
            index.append(np.zeros(0, dtype=np.int32))
            continue
        if len(chunks) > 1:
            col = pa.chunked_array(chunks).unify_dictionaries()
            chunks = col.chunks
        dictionary = chunks[0].dictionary
        if dictionary.type != t:
            dictionary = dictionary.cast(t)
        small = np.int8 if len(dictionary) < 127 else np.int16 if len(dictionary) < 32767 else np.int32
        idx = np.concatenate([np.asarray(ch.indices.fill_null(-1)).astype(small) for ch in chunks])
        values.append(dictionary)
        index.append(idx)
    return Raw(values, index, table.num_rows)


def raw_values_task(raw: Raw) -> list:
    return raw.values


def map_task(raw: Raw, universe: Sequence[Any], codes_all: Sequence[np.ndarray], sizes: Sequence[int]):
    """Each row's code among every normalised value of its column (``size`` = missing); the kept rows.

    Returns ``(codes per column, keep mask)``, kept on the worker.
    """
    import pyarrow.compute as pc

    from ..data.load import code_dtype

    cols = []
    keep = np.ones(raw.rows, dtype=bool)
    for values, idx, uni, codes, size in zip(raw.values, raw.index, universe, codes_all, sizes):
        pos = np.asarray(pc.index_in(values, value_set=uni).fill_null(-1), dtype=np.int64)
        table = np.append(np.where(pos >= 0, codes[np.maximum(pos, 0)], size), size)  # last: a null cell
        table = table.astype(code_dtype(size))
        code = table[np.where(idx >= 0, idx, len(values))]
        keep &= code != size
        cols.append(code)
    return cols, keep


def present_task(mapped, sizes: Sequence[int]) -> tuple[int, list[np.ndarray]]:
    """Kept rows and, per column, how many kept rows hold each value."""
    cols, keep = mapped
    kept = int(keep.sum())
    if kept == len(keep):  # no missing value in this partition (the usual case): no copy of the kept rows
        return kept, [np.bincount(c, minlength=size) for c, size in zip(cols, sizes)]
    return kept, [np.bincount(c[keep], minlength=size) for c, size in zip(cols, sizes)]


@dataclass(frozen=True, eq=False)
class Encoded:
    """One partition's kept records as codes (QI columns, then the SA)."""

    qi: tuple[np.ndarray, ...]
    sa: np.ndarray

    @property
    def n(self) -> int:
        return len(self.sa)


def encode_task(mapped, remaps: Sequence[np.ndarray]) -> Encoded:
    """The kept rows' final codes (values present in the kept rows only, as :func:`core.table.bind` numbers them)."""
    cols, keep = mapped
    every = bool(keep.all())
    out = [remap[c] if every else remap[c[keep]] for c, remap in zip(cols, remaps)]
    return Encoded(tuple(out[:-1]), out[-1])


def combos_task(enc: Encoded, domains: Sequence[int], m: int):
    from .combos import Combos

    return Combos.from_codes(enc.qi, enc.sa, domains, m)


def merge_task(*parts):
    from .combos import Combos

    return Combos.merge(parts)


#: partitions' combinations merged per task (a tree of merges on the workers; the client gets one)
MERGE_FANIN = 8


def merge_tree(client, parts: list, key: str, task=merge_task, *args):
    """One future of every part merged, :data:`MERGE_FANIN` at a time on the workers (``task(*args, *parts)``).

    ``task`` is :func:`merge_task` (:meth:`Combos.merge`) or
    :func:`merge_rows_task` (distinct published rows).  The partitions'
    counts are never all held at once by the client (at 100M census rows
    they are about 33M rows, 2.3 GB as int64); the merge is the same
    whatever the tree (counts of equal rows added, rows sorted).
    """
    level, depth = list(parts), 0
    while len(level) > 1:
        level = [client.submit(task, *args, *level[i:i + MERGE_FANIN], key=f"{key}-{depth}-{i}")
                 for i in range(0, len(level), MERGE_FANIN)]
        depth += 1
    return level[0]


def key_counts_task(enc: Encoded, summary, rank_by: str) -> np.ndarray:
    """Records of this partition per rank key (dense, one per key of the summary)."""
    key, n_keys = summary.key_of(rank_by, enc.qi, enc.sa)
    return np.bincount(key, minlength=n_keys).astype(np.int64)


def apply_task(enc: Encoded, plan, summary, start: int, before: np.ndarray | None, bits: int | None,
               columns: Sequence[str], qi: Sequence[str]):
    """Apply the plan to one partition; cut its published records into buckets by order key.

    Returns ``(buckets, tally)``: bucket ``b`` holds the records whose
    order key has top bits ``b``, in input order, with their keys under
    ``"_key"``; ``tally`` is :meth:`Plan.tally` of the partition.
    ``bits=None`` (evaluation: no order, no files): ``(distinct published
    rows and their counts, tally)`` instead of buckets.
    """
    from .. import rng
    from .protocol import Chunk, ranks

    key = rank = None
    if plan.rank_by is not None:
        key, n_keys = summary.key_of(plan.rank_by, enc.qi, enc.sa)
        rank, _ = ranks(key, n_keys, before)
    chunk = Chunk(start=start, qi=enc.qi, sa=enc.sa, key=key, rank=rank)
    out = dict(plan.apply(chunk))
    tally = dict(plan.tally(chunk, out))
    if plan.table is None:  # no per-record table (Laplace): the tallies only
        return [], tally
    keep = out.pop("_keep", None)
    table = output_columns(chunk, out, columns, qi, plan.keep_qi)
    if bits is None:
        if keep is not None:
            keep = np.asarray(keep, dtype=bool)
            table = {k: v[keep] for k, v in table.items()}
        return distinct_rows(table, columns), tally
    keys = rng.order_keys(plan.seed, start, enc.n)
    if keep is not None:
        keep = np.asarray(keep, dtype=bool)
        keys = keys[keep]
        table = {k: v[keep] for k, v in table.items()}
    return split_buckets(keys, table, bits), tally


def output_columns(chunk, out: Mapping[str, np.ndarray], columns: Sequence[str], qi: Sequence[str],
                   keep_qi: bool) -> dict[str, np.ndarray]:
    """The per-record table's columns in order (QIs unchanged unless replaced, then the plan's)."""
    table = {}
    for name in columns:
        if name in out:
            table[name] = np.asarray(out[name])
        elif keep_qi and name in qi:
            table[name] = np.asarray(chunk.qi[list(qi).index(name)])
        else:
            raise KeyError(f"the plan did not return column {name!r}")
    return table


def split_buckets(keys: np.ndarray, columns: Mapping[str, np.ndarray], bits: int) -> list[dict[str, np.ndarray]]:
    """Records cut by their key's top ``bits`` bits, each bucket in input order, with its keys under ``_key``."""
    if bits == 0:
        return [{"_key": keys, **columns}]
    bucket = (keys >> np.uint64(64 - bits)).astype(np.uint16 if bits <= 16 else np.uint32)
    order = np.argsort(bucket, kind="stable")  # a radix sort for 16-bit buckets (at most 2**16 parts)
    edges = np.concatenate([[0], np.cumsum(np.bincount(bucket, minlength=1 << bits))])
    columns = {"_key": keys, **{k: np.asarray(v) for k, v in columns.items()}}
    # each bucket gathered into arrays of its own (not views of one gathered array): a bucket's memory goes
    # as soon as its part is written, not when the last part of the release is
    return [{k: v[order[edges[b]:edges[b + 1]]] for k, v in columns.items()} for b in range(1 << bits)]


def bucket_task(result, b: int) -> dict[str, np.ndarray]:
    return result[0][b]


def tally_task(result) -> dict:
    return result[1]


def part_task(pieces: Sequence[dict[str, np.ndarray]], names: Sequence[str], labels: Mapping[str, Any],
              path: str, fmt: str, header: bool):
    """Write output part ``path``: every partition's bucket in partition order, sorted by key (ties by position).

    ``fmt`` "parquet" writes a part file as the local engine's
    :func:`core.data.write.write_dataset` writes that part and returns its
    row count (the release reads the files back if it needs the rows:
    :class:`PartsTable`); "csv" writes the part's CSV text (with the
    header when ``header``) for the client to join in part order and
    returns the part's distinct rows and counts.
    """
    from ..data import write as _write

    keys = np.concatenate([p["_key"] for p in pieces]) if pieces else np.zeros(0, np.uint64)
    order = np.argsort(keys, kind="stable")
    cols = {c: np.concatenate([p[c] for p in pieces])[order] for c in names}
    if fmt == "parquet":
        _write._write_parquet_file(Path(path), cols, dict(labels), 0, len(keys), _write.BATCH_ROWS)
        return len(keys)
    else:
        head = next(_write.csv_chunks({c: cols[c][:0] for c in names}, dict(labels)))
        with open(path, "wb") as fh:
            for i, chunk in enumerate(_write.csv_chunks(cols, dict(labels))):
                if i == 0 and not header:
                    chunk = chunk[len(head):]
                fh.write(chunk)
    return kept_rows(cols, names)


#: rows of a CSV part that decide how the client keeps it (:func:`kept_rows`), and the share of them that must be
#: distinct for its columns to be kept as they are
PROBE_ROWS = 1 << 16
DISTINCT_SHARE = 0.25


def kept_rows(cols: Mapping[str, np.ndarray], names: Sequence[str]):
    """What the client keeps of a part written as CSV: ``(distinct rows, counts)``, or ``(columns, None)``.

    Distinct rows pay when rows repeat (Mondrian's generalised table: many
    records a row); a table of nearly distinct rows (Anatomy's QIT: exact
    QI values and a group id) would cost a sort of every row and more
    bytes than its columns (an 8-byte count beside each row), so a part
    whose first :data:`PROBE_ROWS` rows (in published order, a random
    sample of the part) are more than :data:`DISTINCT_SHARE` distinct
    keeps its columns, in published order, as the local engine does.
    Either form gives every reader the same answers.
    """
    n = len(cols[names[0]]) if len(names) else 0
    if n:
        _, probe = distinct_rows({c: cols[c][:PROBE_ROWS] for c in names}, names)
        if len(probe) <= DISTINCT_SHARE * min(n, PROBE_ROWS):
            return distinct_rows(cols, names)
    return {c: cols[c] for c in names}, None


# ---------------------------------------------------------------- cluster
def embedded_processes() -> bool:
    """Whether the embedded cluster's workers are processes (``WORKBENCH_DASK_PROCESSES`` or a memory limit)."""
    flag = os.environ.get("WORKBENCH_DASK_PROCESSES", "").strip().lower()
    if flag not in ("", "0", "1", "no", "yes", "false", "true"):
        raise DataError(f"WORKBENCH_DASK_PROCESSES takes 1 or 0, not '{clip(flag)}'.")
    return flag in ("1", "yes", "true") or bool(os.environ.get("WORKBENCH_DASK_MEMORY", "").strip())


def lean_allocators() -> None:
    """Keep freed arrays from piling up in a process that runs the embedded cluster's tasks.

    Each partition's arrays (1-8 MB for a million rows) are allocated and
    freed many times over, on several threads; by default glibc serves
    them from up to 8 heap arenas per core once its mmap threshold has
    grown (up to 32 MB), and Arrow from its mimalloc pool, and both keep
    freed pages, so resident memory grows with the partitions seen.  Here
    glibc maps every block of :data:`MMAP_THRESHOLD` or more on its own and
    uses at most two heap arenas (:func:`core.lru.fix_mmap_threshold`), and
    Arrow allocates with the system allocator (so the same rules apply).
    Measured on census 10M (runs alternated): Dask UP sanitize peak
    605-720 -> 530-550 MiB, SPLU evaluate 1.02-1.16 -> 0.90-0.94 GiB, about
    the same CPU time; at 100M, UP's peak is 2.0-2.3 GiB either way (the
    partitions' results, 16 bytes a record, set it there, not the
    allocators).

    Where the issue is silent: 8 MiB, not the app's 128 KiB: with 1 MiB
    the 10M peak was 50 MiB lower but every few-MB temporary became a
    fresh mapping to fault in (system time at 100M 4.4 -> 14.6 s).
    """
    import pyarrow as pa

    from ..lru import fix_mmap_threshold

    fix_mmap_threshold(MMAP_THRESHOLD)
    pa.set_memory_pool(pa.system_memory_pool())


def _import_tasks() -> None:
    import core.engine.protocol  # noqa: F401
    from core.mechanisms import MECHANISMS  # noqa: F401  (the registry imports every mechanism)


async def _warm(lean: bool = False) -> None:
    """Import what the tasks unpickle, on each worker process right after connecting; the client waits for it.

    A coroutine whose imports run on a thread of the worker's default
    executor, so the worker's event loop keeps answering meanwhile.  Waited
    for: distributed refuses ``client.run(plain function, wait=False)``
    ("Combination not supported"), and imports left running while the
    first tasks are unpickled on the event loop import the same modules
    from two threads at once, which can fail (``KeyError: 'core.bounds'``
    was seen).  A module missing on the worker shows here, and
    :func:`connect` says which.  ``lean``: our own worker processes also get
    :func:`lean_allocators`.
    """
    import asyncio

    if lean:
        lean_allocators()
    await asyncio.get_running_loop().run_in_executor(None, _import_tasks)


#: the module shipped beside ``core`` (:func:`package_zip`): imported by distributed right after the upload, it
#: drops the ``core`` modules a worker loaded from another copy of the package, so they are imported afresh
RELOADER = "workbench_reload"
_RELOADER_SOURCE = '''"""Shipped by the privacy-utility workbench with its package ``core`` (core/engine/dask.py).

A worker that ran another version of the workbench keeps that version's
modules; this drops every ``core`` module not loaded from this archive, so
the next task imports them from it.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _name, _module in list(sys.modules.items()):
    if _name == "core" or _name.startswith("core."):
        _file = getattr(_module, "__file__", None) or ""
        if not _file.startswith(_HERE + os.sep):
            del sys.modules[_name]
'''
_PACKAGE: tuple[str, bytes] | None = None


def package_zip() -> tuple[str, bytes]:
    """The workbench's package ``core`` as a zip (its ``.py`` files, fixed timestamps) and the zip's file name.

    The name carries a digest of the content, so a worker is sent each
    version once and a changed checkout is a new upload.  Built once per
    process.
    """
    global _PACKAGE
    if _PACKAGE is None:
        import hashlib
        import io
        import zipfile

        root = Path(__file__).resolve().parents[1]  # core/
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(root.rglob("*.py")):
                if "__pycache__" in path.parts:
                    continue
                info = zipfile.ZipInfo(str(Path("core") / path.relative_to(root)), (1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, path.read_bytes())
            info = zipfile.ZipInfo(f"{RELOADER}.py", (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, _RELOADER_SOURCE)
        data = buf.getvalue()
        _PACKAGE = (f"workbench-core-{hashlib.sha256(data).hexdigest()[:16]}.zip", data)
    return _PACKAGE


def ship(client, scheduler: str) -> None:
    """Send the workbench's own code to the workers of ``scheduler`` (they need only the requirements installed).

    What ``Client.upload_file`` does, with distributed's own plugins
    (:class:`~distributed.diagnostics.plugin.SchedulerUploadFile` and
    :class:`~distributed.diagnostics.plugin.UploadFile`) and the zip of
    :func:`package_zip`: the scheduler (which unpickles the task graph) and
    each worker, and each worker that joins later, write it to their local
    directory, put it first on ``sys.path`` and import it.  The plugins are
    named by the zip's digest and idempotent, so the same code is not sent
    again on the next run (``upload_file`` would register a new pair every
    run).  A scheduler running in this very process is sent nothing: the
    upload would put the zip first on this process's own ``sys.path``.
    """
    import tempfile

    from distributed.diagnostics.plugin import SchedulerUploadFile, UploadFile

    if client.run_on_scheduler(os.getpid) == os.getpid():
        return  # a cluster started in this process (a notebook's, a test's): its workers came from here, with our code
    name, data = package_zip()
    with tempfile.TemporaryDirectory(prefix="workbench-ship-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        plugins = [SchedulerUploadFile(str(path), load=True), UploadFile(str(path), load=True)]
    try:
        for plugin in plugins:
            plugin.idempotent = True
            client.register_plugin(plugin, name=name[:-4])
    except Exception as exc:  # the worker's own error, e.g. a module missing from its environment
        raise EngineError(f"The workers of the Dask scheduler at '{clip(scheduler)}' could not load the workbench's "
                          f"code ({clip(_reason(exc), 120)}); install requirements.txt in the workers' Python "
                          "environment.") from None


@contextlib.contextmanager
def connect(scheduler: str | None = None, workers: int = WORKERS, memory_limit: str | int | None = None,
            processes: bool | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: to ``scheduler``, or to a LocalCluster started and stopped here.

    The embedded LocalCluster is, by default, one worker of ``workers``
    threads inside this process (``processes=False``): the tasks are numpy
    and pyarrow kernels that release the GIL, so the threads use both
    cores, and nothing is pickled or copied between the client and the
    worker, nor imported twice.  ``processes=True`` (or the environment
    variable ``WORKBENCH_DASK_PROCESSES=1``, or a memory limit
    ``WORKBENCH_DASK_MEMORY``, which a nanny can only enforce on a process)
    starts ``workers`` worker processes of one thread each on 127.0.0.1
    instead.  The workers of a ``scheduler`` are sent the workbench's code
    (:func:`ship`); worker processes (embedded or behind ``scheduler``)
    then import the mechanisms (:func:`_warm`) before the first task.

    Raises :class:`EngineError` when the scheduler cannot be reached.
    """
    import dask
    from distributed import Client, LocalCluster

    quiet()
    cluster = None
    client = None
    settings = {"distributed.worker.daemon": False, "distributed.admin.tick.limit": "60s",
                "distributed.scheduler.allowed-failures": 1, "logging.distributed": "critical"}
    if processes is None:
        processes = scheduler is None and embedded_processes()
    if scheduler is None and not processes:  # the tasks will run here (before the worker's threads start)
        lean_allocators()
    if scheduler is not None:  # how long a lost scheduler is waited for before the run fails
        settings["distributed.comm.timeouts.connect"] = f"{CONNECT_TIMEOUT}s"
    else:
        # the embedded cluster serves one command: a worker over its memory is terminated by its nanny and the
        # run fails with one sentence (:func:`failures`); a paused worker would leave the command waiting for good
        settings["distributed.worker.memory.pause"] = False
    with dask.config.set(settings):
        try:
            if scheduler is None:
                with warnings.catch_warnings():  # e.g. "port in use": the cluster picks free ports anyway
                    warnings.simplefilter("ignore")
                    if processes:
                        # a worker process configures distributed's logging when it imports it, before the
                        # nanny's silence applies, and a worker being stopped or restarted (after the nanny
                        # killed it) logs again: the level must come from the environment the process starts in
                        # (one set by the user, e.g. to debug a cluster, is kept)
                        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")
                        limit = (memory_limit if memory_limit is not None
                                 else os.environ.get("WORKBENCH_DASK_MEMORY", "").strip() or "auto")
                        # dashboard_address ":0": a free loopback port (None still tries 8787 for the HTTP routes)
                        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                               host="127.0.0.1", dashboard_address=":0", memory_limit=limit,
                                               silence_logs=logging.CRITICAL)
                    else:
                        # no memory limit: a worker in this process has no nanny to enforce one, and spilling
                        # the data it holds to disk would only slow the run (memory is what the command uses)
                        cluster = LocalCluster(n_workers=1, threads_per_worker=workers, processes=False,
                                               dashboard_address=":0", memory_limit=0,
                                               silence_logs=logging.CRITICAL)
                client = Client(cluster, set_as_default=False)
            else:
                probe_scheduler(scheduler)
                try:
                    client = Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
                except (OSError, TimeoutError, ValueError, MemoryError) as exc:
                    raise EngineError(f"The Dask scheduler at '{clip(scheduler)}' cannot be reached "
                                      f"({clip(_reason(exc), 120)}); start it (`dask scheduler`) or leave out "
                                      "--scheduler to use a local cluster.") from None
            if scheduler is not None:
                ship(client, scheduler)
            if scheduler is not None or processes:
                # lean allocators: our own worker processes only (not the workers of someone's scheduler)
                try:
                    client.run(_warm, lean=scheduler is None)
                except ModuleNotFoundError as exc:
                    where = f"the Dask scheduler at '{clip(scheduler)}'" if scheduler else "the local Dask cluster"
                    raise EngineError(f"The workers of {where} lack the Python module "
                                      f"'{clip(exc.name or str(exc))}'; install requirements.txt in the workers' "
                                      "Python environment.") from None
                except Exception:  # noqa: BLE001 - a warm-up only: any other failure shows in the first task
                    pass
            yield client
        finally:
            with contextlib.suppress(Exception):
                if client is not None:
                    client.close(timeout=5)
            with contextlib.suppress(Exception):
                if cluster is not None:
                    cluster.close(timeout=10)


#: the schemes --scheduler may name (distributed's TCP and TLS comms); none given means tcp
SCHEMES = ("tcp", "tls")
#: seconds a server at --scheduler has to send its first bytes (a Dask scheduler greets at once)
GREETING_TIMEOUT = 5


def probe_scheduler(address: str, timeout: float | None = None) -> None:
    """Refuse, in one sentence and before a ``Client`` exists, an address that is not a Dask scheduler's.

    A malformed address (``http://[::1``) made ``Client`` raise half-built,
    and its ``__del__`` then printed a traceback; a server that answers but
    is not Dask made distributed read its bytes as a frame length
    ("Unable to allocate 3.07 EiB"); a plain HTTP server, which waits for a
    request, left the command waiting.  So the address is parsed first
    (scheme tcp or tls, a host, a port: Dask's 8786 when none is given),
    and for tcp a socket is opened and the server's first bytes read: a
    Dask scheduler writes its handshake as soon as a connection opens, a
    frame count (a small number, 8 bytes little-endian) then each frame's
    length.  Silence for ``timeout`` seconds, or bytes that are not such a
    header, is refused.  (TLS is not probed: its first bytes are the TLS
    handshake, which distributed itself checks.)
    """
    import socket
    import struct

    from distributed.comm.addressing import parse_address, parse_host_port

    timeout = GREETING_TIMEOUT if timeout is None else timeout

    def fail(why: str) -> EngineError:
        return EngineError(f"--scheduler '{clip(address)}' {why}; give a Dask scheduler's address, e.g. "
                           "tcp://10.0.0.5:8786, or leave out --scheduler to use a local cluster.")

    try:
        scheme, rest = parse_address(address.strip())
        host, port = parse_host_port(rest, default_port=8786)
    except (ValueError, TypeError):
        raise fail("is not an address") from None
    if scheme not in SCHEMES:
        raise fail(f"names the scheme {scheme}://, not tcp:// or tls://")
    if not host or not 0 < int(port) < 65536:
        raise fail("has no host or no valid port")
    if scheme != "tcp":
        return
    try:
        with socket.create_connection((host, int(port)), timeout=min(timeout, CONNECT_TIMEOUT)) as sock:
            sock.settimeout(timeout)
            head = b""
            while len(head) < 16:
                chunk = sock.recv(16 - len(head))
                if not chunk:
                    break
                head += chunk
    except socket.timeout:
        raise fail(f"answers but says nothing in {timeout:g} s, where a Dask scheduler greets at once "
                   "(a web server?)") from None
    except OSError as exc:
        raise EngineError(f"The Dask scheduler at '{clip(address)}' cannot be reached "
                          f"({clip(exc.strerror or _reason(exc), 120)}); start it (`dask scheduler`) or leave out "
                          "--scheduler to use a local cluster.") from None
    frames, first = struct.unpack("<QQ", head) if len(head) == 16 else (0, 0)
    if not (1 <= frames <= 64 and first < (64 << 20)):
        raise fail("answers, but not as a Dask scheduler does")


def quiet() -> None:
    """Silence distributed's own logging: a failure is reported once, as one sentence (:func:`failures`)."""
    for name in ["distributed", "tornado", "asyncio", *list(logging.root.manager.loggerDict)]:
        if name.split(".")[0] in ("distributed", "tornado", "asyncio", "bokeh"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def describe_scheduler(client, scheduler: str | None) -> dict[str, Any]:
    info = client.scheduler_info()
    workers = info.get("workers", {})
    if scheduler:
        where = scheduler
    elif str(client.scheduler.address).startswith("inproc://"):
        where = "embedded LocalCluster in this process"
    else:
        where = "embedded LocalCluster on 127.0.0.1"
    return {"scheduler": where, "workers": len(workers),
            "threads": sum(int(w.get("nthreads", 1)) for w in workers.values())}


@contextlib.contextmanager
def failures(scheduler: str | None, partition_rows: int) -> Iterator[None]:
    """Turn a cluster failure into one sentence (:class:`EngineError`)."""
    from distributed.client import FutureCancelledError

    try:
        from distributed.scheduler import KilledWorker
    except ImportError:  # pragma: no cover - older distributed
        from distributed import KilledWorker
    where = f"the Dask scheduler at '{clip(scheduler)}'" if scheduler else "the local Dask cluster"
    try:
        yield
    except (KilledWorker, MemoryError) as exc:
        smaller = max(partition_rows // 4, 1)
        more = ("give the workers more memory (WORKBENCH_DASK_MEMORY, e.g. 4GB, for the local cluster)"
                if scheduler is None else "give the workers more memory")
        what = ("A Dask worker ran out of memory" if isinstance(exc, MemoryError) else
                "A Dask worker died while working on a partition (most often it ran out of memory)")
        raise EngineError(f"{what}; {more} or use smaller partitions, e.g. --partition-rows {smaller:,}. "
                          "Nothing was written.") from None
    except ModuleNotFoundError as exc:
        import importlib.util

        if scheduler is None or not exc.name or importlib.util.find_spec(exc.name) is None:
            raise  # not the workers' lack: this process lacks it too
        raise EngineError(f"The workers of {where} lack the Python module '{clip(exc.name or str(exc))}'; install "
                          "requirements.txt in the workers' Python environment. Nothing was written.") from None
    except (OSError, TimeoutError, FutureCancelledError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise EngineError(f"Lost contact with {where} mid-run ({clip(_reason(exc), 120)}); nothing was written: "
                          "check the scheduler and its workers and run again.") from None


# ---------------------------------------------------------------- output folder
def temporary_folder(out: Path) -> Path:
    """A fresh folder beside ``out`` (same file system, so the final rename is atomic)."""
    tmp = out.with_name(f".{out.name}.tmp-{uuid.uuid4().hex[:12]}")
    tmp.mkdir()
    return tmp


def check_out(out: str | Path) -> Path:
    """``--out DIR`` of a partitioned release: a folder name without extension whose parent exists, not a file."""
    out = Path(out)
    if not out.parent.exists():
        raise DataError(f"The folder '{clip(out.parent)}' does not exist; create it or choose another --out.")
    if out.suffix:
        raise DataError(f"The Dask engine writes a Parquet dataset folder; give --out a folder name without an "
                        f"extension (e.g. '{clip(out.with_suffix(''))}'), not '{clip(out.name)}'.")
    if out.is_file():
        raise DataError(f"'{clip(out)}' is a file; give --out a folder name for the Parquet dataset.")
    if out.is_dir() and any(out.iterdir()):
        raise DataError(f"The folder '{clip(out)}' is not empty; remove it or choose another --out.")
    return out


def finish_folder(tmp: Path, out: Path) -> None:
    """Move the finished temporary folder to ``out`` (replacing an empty folder there)."""
    if out.is_dir():
        out.rmdir()
    os.replace(tmp, out)


def discard(tmp: Path | None) -> None:
    if tmp is not None and tmp.exists():
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- the run (client side)
@dataclass(eq=False)
class Bound:
    """The chosen columns of a Parquet dataset, encoded on the cluster (codes stay on the workers)."""

    source: Any
    sa: str
    qi: tuple[str, ...]
    pieces: tuple[Piece, ...]
    encoded: list          # futures of Encoded, one per partition
    starts: np.ndarray     # first record of each partition
    sizes: np.ndarray      # kept records of each partition
    sa_labels: np.ndarray
    qi_labels: tuple[np.ndarray, ...]
    qi_numeric: tuple[bool, ...]
    rows: int              # rows read
    summary: Any           # Combos of the whole table
    bands: tuple = ()      # the Banding of each banded QI, in QI order

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    @property
    def rows_dropped(self) -> int:
        return self.rows - self.n

    @property
    def m(self) -> int:
        return len(self.sa_labels)

    @property
    def domains(self) -> tuple[int, ...]:
        return tuple(len(lab) for lab in self.qi_labels)


def _types(paths: Sequence[Path | str], columns: Sequence[str]) -> list:
    """One canonical Arrow type per column over every file (float when any file stores floats)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out: list = [None] * len(columns)
    for path in paths:
        schema = pq.read_schema(path)
        for j, c in enumerate(columns):
            t = _canonical(schema.field(c).type)
            if out[j] is None or (out[j] == pa.int64() and t == pa.float64()):
                out[j] = t
    return out


def _labels_of(universe, name: str, options) -> tuple[np.ndarray, np.ndarray, bool]:
    """Normalise a column's distinct raw values as the local reader does: (code of each value, labels, numeric).

    The local columnar reader (:class:`core.data.load._Builder`) is fed the
    distinct values once, so both engines share one normalising rule
    (strip, missing-value markers, numbers from text, sorting); a value
    that is missing gets the code ``len(labels)``.
    """
    import pyarrow as pa

    from ..data import load

    builder = load._Builder(name)
    if len(universe):
        builder.add(pa.DictionaryArray.from_arrays(pa.array(np.arange(len(universe), dtype=np.int32)), universe))
    opts = options or load.ReadOptions()
    enc = builder.finish(opts.na, opts.decimal or ".")
    return enc.codes.astype(np.int64), enc.labels, enc.numeric


def _final_labels(labels: np.ndarray, numeric: bool, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The labels present in the kept rows and the map from every label's code to its final code.

    Numeric labels become integers when every present one is whole, as
    :func:`core.table.encode` makes them.
    """
    from ..data.load import code_dtype

    keep = present > 0
    final = labels[keep]
    if numeric:
        final = np.asarray(final, dtype=float)
        if len(final) and np.all(final == np.round(final)):
            final = final.astype(np.int64)
    remap = np.cumsum(keep) - 1
    return final, remap.astype(code_dtype(len(final)))


def band_codes(band, labels: np.ndarray, numeric: bool, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A banded QI from its distinct values and their counts: (band code of each value, band labels).

    The same bands as :meth:`core.data.banding.Banding.apply` on the kept
    rows: edges from the values (quantile bands from the values' counts),
    each value's band by ``searchsorted``, and only the bands some row falls
    in, in band order (as :func:`core.table.encode` encodes the banded column).
    """
    import pandas as pd

    if not numeric:
        sample = next((str(v) for v in labels[:1]), "")
        raise DataError(f"'{band.column}' is not numeric (values like '{sample}'), so it cannot be banded; "
                        "band only numeric QI columns.")
    values = np.asarray(labels, dtype=float)
    if band.method == "quantiles":  # the edges depend on how many rows hold each value
        edges = band.edges(np.repeat(values, present))
    else:
        edges = band.edges(values)
    names = band.labels(edges)
    idx = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(names) - 1)
    used = np.zeros(len(names), dtype=bool)
    used[idx] = True
    new = np.cumsum(used) - 1
    return new[idx], np.asarray([str(v) for v in np.asarray(names, dtype=object)[used]], dtype=object)


def bind(client, source, sa: str, qi: Sequence[str], options=None,
         partition_rows: int = PARTITION_ROWS, bands: Mapping[str, Any] | None = None) -> Bound:
    """Read, normalise and encode the chosen columns on the cluster; count their combinations.

    ``bands``: ``{column: Banding}`` of numeric QIs, applied as
    :func:`core.table.bind` applies them (:func:`band_codes`).  Raises
    DataError as :func:`core.table.bind` does (nothing left after dropping
    rows with missing values, an SA with one value or one per row).
    """
    from ..data.load import code_dtype

    from .combos import Combos

    qi = tuple(dict.fromkeys(qi))
    columns = [*qi, sa]
    pieces = tuple(pieces_of(source.paths, partition_rows))
    types = _types(source.paths, columns)
    token = uuid.uuid4().hex[:8]
    raws = [client.submit(read_task, p, columns, types, key=f"read-{token}-{i}") for i, p in enumerate(pieces)]
    per_part = client.gather([client.submit(raw_values_task, r, key=f"values-{token}-{i}")
                              for i, r in enumerate(raws)])
    import pyarrow as pa
    import pyarrow.compute as pc

    universe, codes_all, labels_all, numeric = [], [], [], []
    for j, c in enumerate(columns):
        parts = [v[j] for v in per_part if len(v[j])]
        uni = pc.unique(pa.concat_arrays(parts)) if parts else pa.array([], types[j])
        uni = uni.filter(pc.is_valid(uni))
        codes, labels, num = _labels_of(uni, c, options)
        universe.append(uni)
        codes_all.append(codes)
        labels_all.append(labels)
        numeric.append(num)
    sizes_all = [len(lab) for lab in labels_all]
    [uni_f, codes_f] = client.scatter([universe, codes_all], broadcast=True, hash=False)
    mapped = [client.submit(map_task, r, uni_f, codes_f, sizes_all, key=f"map-{token}-{i}")
              for i, r in enumerate(raws)]
    del raws
    counts = client.gather([client.submit(present_task, mp, sizes_all, key=f"present-{token}-{i}")
                            for i, mp in enumerate(mapped)])
    kept = np.array([k for k, _ in counts], dtype=np.int64)
    n = int(kept.sum())
    if n == 0:
        raise DataError(f"Every row has a missing value in the chosen columns ({clip(', '.join(columns), 200)}); "
                        "choose other columns.")
    finals, remaps = [], []
    bands = dict(bands or {})
    for j, c in enumerate(columns):
        present = np.sum([cnt[j] for _, cnt in counts], axis=0)
        final, remap = _final_labels(labels_all[j], numeric[j], present)
        if c in bands:
            to_band, final = band_codes(bands[c], final, numeric[j], present[present > 0])
            at = np.clip(remap.astype(np.int64), 0, len(to_band) - 1)  # labels no kept row holds map anywhere
            remap = to_band[at].astype(code_dtype(len(final)))
            numeric[j] = False
        finals.append(final)
        remaps.append(remap)
    sa_labels = finals[-1]
    if len(sa_labels) < 2:
        raise DataError(f"The sensitive attribute '{clip(sa)}' has a single value ('{clip(sa_labels[0])}'); "
                        "there is nothing to protect; choose another column.")
    if n >= 20 and len(sa_labels) == n:
        raise DataError(f"'{clip(sa)}' has a different value in every row, so it looks like an identifier, "
                        "not a sensitive attribute; choose another column.")
    [remaps_f] = client.scatter([remaps], broadcast=True, hash=False)
    encoded = [client.submit(encode_task, mp, remaps_f, key=f"encode-{token}-{i}") for i, mp in enumerate(mapped)]
    del mapped
    domains = [len(f) for f in finals[:-1]]
    m = len(sa_labels)
    sa_present = np.sum([cnt[-1] for _, cnt in counts], axis=0)
    sa_counts = np.bincount(remaps[-1][sa_present > 0], weights=sa_present[sa_present > 0], minlength=m)
    summary = ClusterCombos(client, encoded, domains, m, n, np.rint(sa_counts).astype(np.int64), f"combos-{token}")
    starts = np.concatenate([[0], np.cumsum(kept)[:-1]]).astype(np.int64)
    return Bound(source=source, sa=sa, qi=qi, pieces=pieces, encoded=encoded, starts=starts, sizes=kept,
                 sa_labels=sa_labels, qi_labels=tuple(finals[:-1]), qi_numeric=tuple(numeric[:-1]),
                 rows=sum(p.rows for p in pieces), summary=summary,
                 bands=tuple(bands[c] for c in qi if c in bands))


class ClusterCombos:
    """The table's :class:`~core.engine.combos.Combos`, counted on the cluster only when something reads them.

    ``n``, ``m``, ``domains``, ``sa_counts``, the names and the labels are
    known from the reading pass; anything else (``qi``, ``sa``, ``count``,
    ``key_of`` ...) counts each partition's combinations on the workers and
    merges them (:func:`merge_tree`) on first use, as the local engine's
    :class:`~core.engine.combos.LazyCombos` does, so UP's plan, check and
    guarantee never pay for the group-by.  The partitions' codes must
    still be on the cluster then: :meth:`release` (after the plan has been
    applied) makes a later first use an error instead of a wrong answer.
    """

    def __init__(self, client, encoded: list, domains: Sequence[int], m: int, n: int, sa_counts: np.ndarray,
                 key: str):
        self._client, self._encoded, self._key = client, encoded, key
        self._combos = None
        self.domains = tuple(int(d) for d in domains)
        self.m, self.n = int(m), int(n)
        self.sa_counts = sa_counts
        self.sa_name, self.qi_names, self.sa_labels, self.qi_labels, self.qi_numeric = None, (), None, (), ()

    def named(self, sa_name: str, qi_names, sa_labels, qi_labels, qi_numeric=()) -> "ClusterCombos":
        self.sa_name, self.qi_names, self.sa_labels = sa_name, tuple(qi_names), sa_labels
        self.qi_labels, self.qi_numeric = tuple(qi_labels), tuple(bool(x) for x in qi_numeric)
        if self._combos is not None:
            self._combos = self._combos.named(sa_name, qi_names, sa_labels, qi_labels, qi_numeric)
        return self

    @property
    def computed(self) -> bool:
        return self._combos is not None

    @property
    def combos(self):
        """The full Combos (counted on the workers once)."""
        if self._combos is None:
            if self._encoded is None:
                raise RuntimeError("the table's combinations were first asked for after its codes were released")
            parts = [self._client.submit(combos_task, e, self.domains, self.m, key=f"{self._key}-{i}")
                     for i, e in enumerate(self._encoded)]
            combos = self._client.gather(merge_tree(self._client, parts, f"{self._key}-merge"))
            self._combos = combos.named(self.sa_name, self.qi_names, self.sa_labels, self.qi_labels,
                                        self.qi_numeric)
        return self._combos

    def release(self) -> None:
        """Forget the partitions' codes (the cluster frees them once nothing else needs them)."""
        self._encoded = None

    def __len__(self) -> int:
        return len(self.combos)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.combos, name)


class SummaryData:
    """What checks, derived values and guarantees read of a bound table, from its counts (no record arrays).

    The Dask engine hands this to ``Mechanism.check``, ``derived`` and
    ``guarantee`` in place of a :class:`core.table.Dataset`: the same names,
    labels, sizes and counts.  ``sa_codes`` and ``qi_codes`` are the
    records expanded from the combinations (grouped by combination, not in
    input order) for the few checks that read them; every figure a check
    or guarantee computes from them (counts, shares, group sizes) is the
    same as on the table in input order.
    """

    def __init__(self, bound: Bound, summary):
        self.name = bound.source.name
        self.content_hash = bound.source.content_hash()
        self.read = bound.source.record()
        self.sa = bound.sa
        self.qi = tuple(bound.qi)
        self.sa_labels = bound.sa_labels
        self.qi_labels = tuple(bound.qi_labels)
        self.qi_numeric = tuple(bound.qi_numeric)
        self.rows_dropped = bound.rows_dropped
        self.bands = tuple(bound.bands)
        self.table = None
        self.row_index = None
        self.combos = summary
        self.n = summary.n
        self.m = len(self.sa_labels)
        self.domains = tuple(len(lab) for lab in self.qi_labels)

    @property
    def key(self) -> str:
        key = f"{table_key(self.content_hash, self.read)}|{self.sa}|{','.join(self.qi)}"
        return key + ("|" + ";".join(b.text() for b in self.bands) if self.bands else "")

    def band_specs(self) -> dict:
        return {b.column: b.spec() for b in self.bands}

    @property
    def sa_counts(self) -> np.ndarray:
        return self.combos.sa_counts

    def qi_index(self, column: str) -> int:
        return self.qi.index(column)

    @property
    def sa_codes(self) -> np.ndarray:
        return self._expanded()[-1]

    @property
    def qi_codes(self) -> tuple[np.ndarray, ...]:
        return tuple(self._expanded()[:-1])

    def _expanded(self) -> list[np.ndarray]:
        cached = self.__dict__.get("_rows")
        if cached is None:
            c = self.combos
            cached = [np.repeat(col, c.count) for col in (*c.qi, c.sa)]
            self.__dict__["_rows"] = cached
        return cached

    def column(self, name: str):
        raise DataError(f"The Dask engine reads only the chosen columns; '{clip(name)}' is not among them.")


def _labelled_frame(table, limit: int | None = None):
    """A table's ``names`` columns (the first ``limit`` rows) as a frame of labels (``to_frame`` of the tables below)."""
    import pandas as pd

    out = {}
    for c in table.names:
        col = table.columns[c] if limit is None else table.columns[c][:limit]
        lab = table.labels.get(c)
        out[c] = col if lab is None else np.asarray(lab)[col]
    return pd.DataFrame(out)


class SummaryTable:
    """A published per-record table known by its distinct rows and counts (written to part files, not held).

    Quacks like :class:`core.release.CodedTable` (``columns``, ``labels``,
    ``len``); ``columns`` expands the rows from their counts on first use
    (grouped by distinct row, not in published order) for a guarantee
    that reads them.  ``distinct`` and ``count`` are the compact form the
    estimators count on (:func:`core.mechanisms.base.published_records`).
    A row may appear more than once in ``distinct`` (a table written as CSV
    keeps each part's distinct rows side by side); every reader weights a
    row by its count, so no answer depends on it.
    """

    def __init__(self, names: Sequence[str], distinct: Mapping[str, np.ndarray], count: np.ndarray,
                 labels: Mapping[str, Any]):
        self.names = list(names)
        self.distinct = dict(distinct)
        self.count = np.asarray(count, dtype=np.int64)
        self.labels = dict(labels)
        # listing the names (a manifest) expands nothing: at 100M near-distinct rows (Anatomy's QIT) expanding
        # every column took 8 bytes a record each
        self.columns = _LazyColumns(self.names, self._expand)

    def _expand(self, name: str) -> np.ndarray:
        """One code per record of column ``name``, from the distinct rows and their counts."""
        return np.repeat(self.distinct[name], self.count)

    def __len__(self) -> int:
        return int(self.count.sum())

    to_frame = _labelled_frame


class PartsTable:
    """A published per-record table written to Parquet part files: read back only if something reads its columns.

    Quacks like :class:`core.release.CodedTable` (``columns``, ``labels``,
    ``len``, ``to_frame``).  ``columns`` is a mapping whose keys are the
    column names; a column's codes (in published order) are read from the
    part files the first time it is asked for, so a release whose
    guarantee and manifest need only the table's size and column names
    (most) costs no second pass.  ``folder`` follows the files when the
    finished release folder is moved into place.
    """

    def __init__(self, names: Sequence[str], labels: Mapping[str, Any], folder: Path, files: Sequence[str],
                 rows: int):
        self.names = list(names)
        self.labels = dict(labels)
        self.folder = Path(folder)
        self.files = list(files)
        self.rows = int(rows)
        self.columns = _LazyColumns(self.names, lambda name: read_part_column(self, name))

    def __len__(self) -> int:
        return self.rows

    to_frame = _labelled_frame


class _LazyColumns(_MappingABC):
    """A table's ``columns``: column name -> codes, made by ``make(name)`` on first use and kept.

    ``PartsTable`` reads a column from its part files, ``SummaryTable``
    expands it from its distinct rows' counts; iterating lists the names only.
    """

    def __init__(self, names: Sequence[str], make):
        self._names = list(names)
        self._make = make
        self._cache: dict[str, np.ndarray] = {}

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._cache:
            self._cache[name] = self._make(name)
        return self._cache[name]


def read_part_column(table: PartsTable, name: str) -> np.ndarray:
    """One column of a :class:`PartsTable` as codes into its labels (or plain values), in published order."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ..data.load import code_dtype

    labels = table.labels.get(name)
    pieces = []
    if labels is not None:
        labels = np.asarray(labels)
        value_set = (pa.array([str(v) for v in labels], type=pa.string()) if labels.dtype == object
                     else pa.array(labels))
        dtype = code_dtype(len(labels))
    for f in table.files:
        col = pq.read_table(table.folder / f, columns=[name],
                            read_dictionary=[name] if labels is not None else None).column(name)
        for chunk in col.chunks:
            if labels is None:
                pieces.append(np.asarray(chunk))
                continue
            if not pa.types.is_dictionary(chunk.type):
                chunk = pc.dictionary_encode(chunk)
            to_code = np.asarray(pc.index_in(chunk.dictionary, value_set=value_set).fill_null(0), dtype=dtype)
            pieces.append(to_code[np.asarray(chunk.indices)])
    if not pieces:
        return np.zeros(0, dtype=dtype if labels is not None else np.int64)
    return np.concatenate(pieces)


def _group(cols: Sequence[np.ndarray], weights: np.ndarray | None = None):
    """Distinct rows of ``cols`` (sorted, in the columns' dtypes) with their (weighted) counts.

    :func:`core.engine.combos._aggregate` (a hash of mixed-radix keys).
    """
    from .combos import _aggregate

    cols = [np.asarray(c) for c in cols]
    n = len(cols[0])
    if n == 0:
        return [c[:0].astype(np.int64) for c in cols], np.zeros(0, np.int64)
    if min(int(c.min()) for c in cols) < 0:  # pragma: no cover - codes are never negative
        raise ValueError("codes must be non-negative")
    sizes = [int(c.max()) + 1 for c in cols]
    distinct, count = _aggregate(cols, sizes, weights)
    # each distinct column in its input's (narrow) dtype: the partial counts held on the workers stay small
    return [np.asarray(d).astype(c.dtype) for d, c in zip(distinct, cols)], np.asarray(count, dtype=np.int64)


def distinct_rows(part: Mapping[str, np.ndarray], names: Sequence[str]):
    """The distinct rows of an output part and their counts (for the release's compact form)."""
    if not len(names):
        return {}, np.zeros(0, np.int64)
    distinct, count = _group([part[c] for c in names])
    return dict(zip(names, distinct)), count


def merge_distinct(parts, names: Sequence[str]):
    """The distinct rows of several parts' distinct rows, counts added (sorted, in the parts' dtypes).

    Each part's rows are sorted, so their mixed-radix keys, concatenated,
    are a few sorted runs: a stable sort (numpy's timsort for int64) merges
    them, and equal keys' counts are added as integers (``np.add.reduceat``).
    Eight parts of 1M random census-like rows (7.9M partial rows): 1.4 s
    instead of 8.6 s hashing the keys with float weights (load 7).  Domains too
    wide for 64-bit keys fall back to :func:`_group`.
    """
    from .combos import _fits, _mixed_key, _unmix

    parts = [p for p in parts if len(p[1])]
    if not parts:
        return {c: np.zeros(0, np.int64) for c in names}, np.zeros(0, np.int64)
    cols = [np.concatenate([p[0][c] for p in parts]) for c in names]
    count = np.concatenate([p[1] for p in parts]).astype(np.int64)
    if not names:  # no columns: one empty row holding every record
        return {}, np.array([count.sum()], dtype=np.int64)
    sizes = [int(c.max()) + 1 for c in cols]
    if min(int(c.min()) for c in cols) < 0 or not _fits(sizes):
        distinct, count = _group(cols, count.astype(np.float64))
        return dict(zip(names, distinct)), count
    key = _mixed_key(cols, sizes)
    order = np.argsort(key, kind="stable")
    key = key[order]
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[1:] != key[:-1]
    first = np.flatnonzero(new)
    total = np.add.reduceat(count[order], first)
    distinct = _unmix(key[first], sizes)
    return {c: d.astype(col.dtype) for c, d, col in zip(names, distinct, cols)}, total.astype(np.int64)


# ---------------------------------------------------------------- sanitize
@dataclass(eq=False)
class Outcome:
    """A Dask release: the :class:`core.release.Release` (tables in compact form) and what was written."""

    release: Any
    data: SummaryData
    written: list[Path]
    run: dict[str, Any]


def check_bands(bands: Mapping[str, Any] | None, sa: str, qi: Sequence[str]) -> dict:
    """``--band`` settings as :func:`core.table.bind` checks them: only QI columns (numeric: checked on reading)."""
    from ..data import banding as _banding

    bands = _banding.normalise(bands)
    for col in bands:
        if col == sa:
            raise DataError(f"'{col}' is the sensitive attribute; only QI columns can be banded.")
        if col not in qi:
            raise DataError(f"'{col}' is banded but is not a QI column; add it to the QIs or drop its band.")
    return bands


def refuse_unplanned(mech) -> None:
    """One sentence when ``mech`` cannot run on the Dask engine (no plan from counts)."""
    if not getattr(mech, "planned", False):
        why = getattr(mech, "engine_note", None) or ("it builds its release from all the records at once, not "
                                                     "from counts and per-record draws")
        raise DataError(f"{mech.title} cannot run on the Dask engine: {why.rstrip('.')}; use --engine local.")


def _futures_per_partition(client, fn, items, *args, key: str):
    return [client.submit(fn, item, *args, key=f"{key}-{i}") for i, item in enumerate(items)]


def run_plan(client, bound: Bound, plan, summary, token: str, rows_only: bool = False):
    """Apply ``plan`` on every partition: futures of ``(buckets, tally)`` and the parts' bit count.

    The bit count is :func:`core.engine.local.parts_bits` of the table's
    size; ``rows_only``: futures of ``(distinct rows, tally)`` (evaluation,
    :func:`apply_task` with ``bits=None``) and ``None``.
    """
    from .local import parts_bits

    bits = None if rows_only else parts_bits(bound.n)
    # the ranks' keys: SA values need no combinations (counting them on the cluster is a pass over every record)
    combos = rank_keys(plan.rank_by, bound.m, lambda: getattr(summary, "combos", summary))
    [plan_f, summary_f] = client.scatter([plan, combos], broadcast=True, hash=False)
    befores: list = [None] * len(bound.encoded)
    if plan.rank_by is not None:
        counts = client.gather(_futures_per_partition(client, key_counts_task, bound.encoded, summary_f,
                                                      plan.rank_by, key=f"keys-{token}"))
        running = np.zeros_like(counts[0]) if counts else np.zeros(0, np.int64)
        for i, c in enumerate(counts):
            befores[i] = running.copy()
            running += c
    columns = table_columns(plan, bound.qi)
    results = [client.submit(apply_task, enc, plan_f, summary_f, int(bound.starts[i]), befores[i], bits, columns,
                             bound.qi, key=f"apply-{token}-{i}")
               for i, enc in enumerate(bound.encoded)]
    return results, bits


def table_columns(plan, qi: Sequence[str]) -> list[str]:
    """The per-record table's column order: QIs (unless the plan drops them), then the plan's other columns."""
    names = list(qi) if plan.keep_qi else []
    return names + [c for c in plan.labels if c not in names]


def table_labels(plan, bound: Bound) -> dict[str, Any]:
    labels = {c: bound.qi_labels[j] for j, c in enumerate(bound.qi)} if plan.keep_qi else {}
    labels.update(plan.labels)
    return labels


def sanitize(spec: str, sa: str, qi: Sequence[str], mechanism: str, raw: Mapping[str, Any] | None, seed: int | None,
             out: str | Path, *, scheduler: str | None = None, partition_rows: int = PARTITION_ROWS, options=None,
             manifest: str | Path | None = None, decision: Mapping[str, Any] | None = None,
             require=None, bands: Mapping[str, Any] | None = None, risk=None, overwrite: bool = False) -> Outcome:
    """Sanitize a Parquet dataset on Dask and write the release folder (parts, _manifest.json, _run.json).

    The release is the local engine's, record by record, and the part
    files and manifest are byte for byte the local engine's
    (:func:`core.release.write` of the same release to a folder).  The
    engine, partitions and scheduler of this run go to ``_run.json``.
    ``require(release)`` may raise to refuse the release before anything
    is moved into place (``--require-guarantee``).  ``risk(release)`` gives
    the manifest's risk block (:func:`core.api.measure_risk`), the same as
    the local engine's.
    """
    import time

    from .. import mechanisms, release as rel
    from ..data import write as _write
    from .protocol import add_tallies

    t0 = time.perf_counter()
    mech = mechanisms.get(mechanism)
    values = mech.resolve(raw)
    refuse_unplanned(mech)
    qi = check_choice(sa, qi)
    out = Path(out)
    if out.suffix:
        raise DataError(f"The Dask engine writes a folder (a Parquet dataset and _manifest.json); give --out a "
                        f"folder name without an extension (e.g. '{clip(out.with_suffix(''))}'), not "
                        f"'{clip(out.name)}'.")
    if partition_rows < 1:
        raise DataError(f"--partition-rows must be a positive number of rows. Got {partition_rows}.")
    seed = mechanisms.fresh_seed() if seed is None else mechanisms.check_seed(seed)
    source = open_input(spec, [*qi, sa], options)
    token = uuid.uuid4().hex[:8]
    # the release folder and a --manifest elsewhere are staged together: both appear or neither
    with _write.Staging(overwrite) as stage, connect(scheduler) as client, failures(scheduler, partition_rows):
        tmp = stage.path(out, folder=True)
        stages = {"cluster": time.perf_counter() - t0}
        bound = bind(client, source, sa, qi, options, partition_rows, check_bands(bands, sa, qi))
        stages["read and encode"] = time.perf_counter() - t0 - sum(stages.values())
        summary = bound.summary.named(sa, qi, bound.sa_labels, bound.qi_labels)
        data = SummaryData(bound, summary)
        mech.check(data, values)
        plan = mech.plan(summary, values, seed)
        stages["plan"] = time.perf_counter() - t0 - sum(stages.values())
        written: list[Path] = []
        tables: dict[str, Any] = {}
        totals: dict[str, int] = {}
        results, bits = run_plan(client, bound, plan, summary, token)
        bound.encoded = []  # each partition's codes are freed once its plan has been applied
        summary.release()
        tallies = [client.submit(tally_task, r, key=f"tally-{token}-{i}") for i, r in enumerate(results)]
        buckets = None
        if plan.table is not None:  # every bucket its own future, so that a result goes once it is cut
            buckets = [[client.submit(bucket_task, r, b, key=f"bucket-{token}-{b}-{i}") for i, r in enumerate(results)]
                       for b in range(1 << bits)]
        del results
        # as core.release.write: one table -> a Parquet dataset; several -> one CSV each
        several = len(plan.tables) + (plan.table is not None) > 1
        bounds = None
        if plan.table is not None:
            names = table_columns(plan, bound.qi)
            labels = table_labels(plan, bound)
            fmt = "csv" if several else "parquet"
            paths = [tmp / (_write.part_name(b) if fmt == "parquet" else f".{plan.table}.{b:05d}.csv")
                     for b in range(1 << bits)]
            parts = [client.submit(part_task, pieces, names, labels, os.path.abspath(path), fmt, b == 0,
                                   key=f"part-{token}-{b}")
                     for b, (path, pieces) in enumerate(zip(paths, buckets))]
            buckets = None  # a part's pieces are held by its task only, and go when it is written
            rows = client.gather(parts)
            del parts
            if fmt == "csv":
                tables[plan.table], bounds = joined_table(rows, names, labels)
                del rows
            else:
                bounds = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
                tables[plan.table] = PartsTable(names, labels, tmp, [p.name for p in paths], int(bounds[-1]))
            if fmt == "csv":
                target = tmp / f"{plan.table}.csv"
                with open(target, "wb") as fh:
                    for path in paths:
                        append_file(path, fh)
                        path.unlink()
                written.append(out / target.name)
            else:
                written += [out / p.name for p in paths]
        for t in client.gather(tallies):
            totals = add_tallies(totals, t)
        del tallies
        stages["apply, shuffle and write"] = time.perf_counter() - t0 - sum(stages.values())
        published = plan.published_result(tables, totals)
        release = build_release(mech, data, values, seed, published, parts=bounds)
        release.source["left_out"] = [c for c in source.columns if c not in (sa, *qi)]  # as the local engine says
        if require is not None:
            require(release)
        for name, table in plan.tables.items():
            if several:
                with open(tmp / f"{name}.csv", "wb") as fh:
                    for chunk in _write.csv_chunks(table.columns, dict(table.labels)):
                        fh.write(chunk)
                written.append(out / f"{name}.csv")
            else:  # the only table, small: parts of PART_ROWS rows as core.data.write.write_dataset cuts them
                n_rows = len(table)
                edges = [0, *range(_write.PART_ROWS, n_rows, _write.PART_ROWS), n_rows]
                for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
                    _write._write_parquet_file(tmp / _write.part_name(i), table.columns, dict(table.labels), lo, hi,
                                               _write.BATCH_ROWS)
                    written.append(out / _write.part_name(i))
        man_bytes = rel.manifest_bytes(release, decision, None if risk is None else risk(release))
        if manifest is None:
            (tmp / _write.MANIFEST_NAME).write_bytes(man_bytes)
            written.append(out / _write.MANIFEST_NAME)
        else:
            stage.put(manifest, man_bytes, flag="--manifest")
        run = {"engine": "dask", **describe_scheduler(client, scheduler), "partitions": len(bound.pieces),
               "partition_rows": partition_rows,
               "parts": sum(1 for p in written if p.name.startswith("part-")), "rows": bound.n,
               "seconds": round(time.perf_counter() - t0, 3),
               "stages": {k: round(v, 3) for k, v in stages.items()}}
        (tmp / _write.RUN_NAME).write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")
        written.append(out / _write.RUN_NAME)
    for table in release.tables.values():  # the part files now live in the finished folder
        if isinstance(table, PartsTable):
            table.folder = out
    if manifest is not None:
        written.append(Path(manifest))
    return Outcome(release=release, data=data, written=written, run=run)


def build_release(mech, data: SummaryData, values: Mapping[str, Any], seed: int, out,
                  parts: Sequence[int] | None = None):
    """The :class:`core.release.Release` of a Dask run, as :func:`core.mechanisms.sanitize` builds it."""
    import dataclasses

    from ..mechanisms.base import Mechanism
    from ..release import Release

    derived = mech.derived(data, values)
    params = {**values, **dict(derived)}
    main = next(iter(out.tables.values()), None)
    rows_out = out.rows_out if out.rows_out is not None else (len(main) if main is not None else 0)
    release = Release(
        mechanism=mech.name, title=mech.title, params=params, seed=seed,
        source={"name": data.name, "content_hash": data.content_hash, "sensitive": data.sa, "qi": list(data.qi),
                "rows": data.n, "rows_dropped": data.rows_dropped, "bands": data.band_specs(),
                "raw_params": {k: v for k, v in values.items() if v is not None},
                **({"read": dict(data.read)} if data.read else {})},
        tables=dict(out.tables), published=dict(out.published), privacy=dict(out.privacy), notes=tuple(out.notes),
        state=dict(out.state), rows_out=rows_out, parts=None if parts is None else tuple(int(p) for p in parts))
    if type(mech).guarantee is Mechanism.guarantee:
        return release
    return dataclasses.replace(release, verdict=mech.guarantee(data, values, release))


def append_file(path: Path, fh) -> None:
    """Append the file at ``path`` to the open file ``fh``: in the kernel where it can (``os.copy_file_range``,
    no copy through Python's buffers), else by ``shutil.copyfileobj``."""
    fh.flush()
    with open(path, "rb") as part:
        size = os.fstat(part.fileno()).st_size
        done = 0
        try:
            while done < size:
                step = os.copy_file_range(part.fileno(), fh.fileno(), size - done)
                if step == 0:
                    break
                done += step
        except (AttributeError, OSError):  # no copy_file_range here (other OS, file system): the portable way
            pass
        if done < size:
            part.seek(done)
            fh.seek(0, os.SEEK_END)
            shutil.copyfileobj(part, fh, 8 << 20)


def joined_table(rows: list, names: Sequence[str], labels: Mapping[str, Any]):
    """The per-record table of a release written as CSV parts, from what :func:`kept_rows` kept of each, and the
    parts' row bounds.

    Parts that all kept their columns make the local engine's
    :class:`~core.release.CodedTable` (published order); otherwise a
    :class:`SummaryTable` of each part's distinct rows side by side (a part
    that kept its columns counts each row once), not merged into the
    table's: the same row may then appear once per part, which changes no
    count (every reader weights a row by its count), and nothing is sorted
    and grouped again on the client.  Each part's copy goes as soon as it
    is joined.
    """
    from ..release import CodedTable

    kept = [len(part[names[0]]) if len(names) else 0 for part, _ in rows]  # rows each part kept
    sizes = [k if counts is None else int(counts.sum()) for k, (_, counts) in zip(kept, rows)]  # records written
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    whole = all(counts is None for _, counts in rows)
    count = None if whole else np.concatenate(
        [np.ones(k, np.int64) if counts is None else counts for k, (_, counts) in zip(kept, rows)]).astype(np.int64)
    joined = {}
    for name in names:
        joined[name] = np.concatenate([part[name] for part, _ in rows]) if rows else np.zeros(0, np.int64)
        for part, _ in rows:
            part[name] = None
    if whole:
        return CodedTable(columns=joined, labels=dict(labels)), bounds
    return SummaryTable(names, joined, count, labels), bounds


def rows_task(result):
    """The distinct published rows of one partition and their counts (evaluation needs no shuffle)."""
    return result[0]


def merge_rows_task(names: Sequence[str], *parts):
    return merge_distinct(parts, names)


def evaluate(spec: str, sa: str, qi: Sequence[str], mechanism: str, raw: Mapping[str, Any] | None, kind, settings,
             seed: int, *, scheduler: str | None = None, partition_rows: int = PARTITION_ROWS, options=None,
             bands: Mapping[str, Any] | None = None):
    """A count workload's true answers and estimates on Dask: ``(Evaluation, SummaryData, run)``.

    Both are group-by aggregations on the cluster: the input's
    :class:`~core.engine.combos.Combos` (true answers, and the workload's
    choice of queries) and the release's distinct rows with their counts
    (estimates), then the local weighted counting
    (:class:`core.counting.Records` with weights), which gives the same
    answers as counting the records one by one.
    """
    import time

    from .. import mechanisms
    from ..evaluate import evaluate_release
    from .protocol import add_tallies

    t0 = time.perf_counter()
    mech = mechanisms.get(mechanism)
    values = mech.resolve(raw)
    refuse_unplanned(mech)
    qi = check_choice(sa, qi)
    if partition_rows < 1:
        raise DataError(f"--partition-rows must be a positive number of rows. Got {partition_rows}.")
    source = open_input(spec, [*qi, sa], options)
    token = uuid.uuid4().hex[:8]
    with connect(scheduler) as client, failures(scheduler, partition_rows):
        bound = bind(client, source, sa, qi, options, partition_rows, check_bands(bands, sa, qi))
        summary = bound.summary.named(sa, qi, bound.sa_labels, bound.qi_labels)
        data = SummaryData(bound, summary)
        summary.combos  # noqa: B018  (the workload's true answers count on them, after the codes are freed)
        mech.check(data, values)
        plan = mech.plan(summary, values, seed)
        results, _ = run_plan(client, bound, plan, summary, token, rows_only=True)
        bound.encoded = []
        summary.release()
        totals: dict[str, int] = {}
        for t in client.gather([client.submit(tally_task, r, key=f"tally-{token}-{i}")
                                for i, r in enumerate(results)]):
            totals = add_tallies(totals, t)
        tables = {}
        if plan.table is not None:
            names = table_columns(plan, bound.qi)
            rows = [client.submit(rows_task, r, key=f"rows-{token}-{i}") for i, r in enumerate(results)]
            distinct, count = client.gather(merge_tree(client, rows, f"rows-merge-{token}", merge_rows_task, names))
            del rows  # the partitions' counts are freed on the workers
            distinct = {c: v.astype(np.int64) for c, v in distinct.items()}
            tables[plan.table] = SummaryTable(names, distinct, count, table_labels(plan, bound))
        del results
        release = build_release(mech, data, values, seed, plan.published_result(tables, totals))
        run = {"engine": "dask", **describe_scheduler(client, scheduler), "partitions": len(bound.pieces),
               "partition_rows": partition_rows, "rows": bound.n}
    workload = kind.make(data, settings)
    evaluation = evaluate_release(release, workload)
    run["seconds"] = round(time.perf_counter() - t0, 3)
    return evaluation, data, run
