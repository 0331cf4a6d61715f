"""The server's data folder: tables too large to upload, opened in the app on a seeded sample.

The app's server may be started with a data folder
(``WORKBENCH_DATA_DIR=/srv/tables streamlit run app.py``).  The Home page
then lists the folder's tables (:func:`entries`: Parquet, Arrow / Feather
and CSV files, and Parquet dataset sub-folders), opens one on a seeded
sample of its rows (:func:`open_sample`) that every page names with its
size, and the Sanitize page shows the command that releases the whole
table (:func:`full_command`).

Nothing outside the folder is readable: a name is resolved with
:func:`resolve`, which refuses absolute paths, ``..`` and any path whose
real location (symbolic links followed) is not inside the folder's real
location; a dataset sub-folder is refused when any file in it lies
outside.  Listing skips what :func:`resolve` would refuse, so a symbolic
link pointing out of the folder is neither listed nor opened.

Choices where the issue is silent: only the environment variable is read
(Streamlit's ``config.toml`` has no place for an application's own
settings); the sample is :meth:`core.data.load.Source.sample` (the rows
with the smallest :func:`core.rng.order_keys` under the sample seed, in
file order), :data:`DEFAULT_SAMPLE_ROWS` rows unless the page asks for
another size.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, clip

#: the environment variable naming the data folder
ENV = "WORKBENCH_DATA_DIR"
#: rows of the sample a table opens on by default
DEFAULT_SAMPLE_ROWS = 200_000
#: the largest sample the pages offer
MAX_SAMPLE_ROWS = 5_000_000


def root() -> Path | None:
    """The data folder (its real path), or None when the server was started without one (or it is missing)."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    path = Path(value).expanduser()
    return path.resolve() if path.is_dir() else None


def _inside(path: Path, base: Path) -> bool:
    try:
        path.resolve().relative_to(base)
        return True
    except (ValueError, OSError, RuntimeError):
        return False


def resolve(base: Path, name: str) -> Path:
    """The path of ``name`` inside the data folder ``base``; DataError for anything that would leave it."""
    text = str(name)
    parts = Path(text).parts
    if not text.strip() or Path(text).is_absolute() or ".." in parts or "\x00" in text:
        raise DataError(f"'{clip(text)}' is not a table of the data folder; choose one from its list.")
    path = base / text
    if not _inside(path, base) or not path.exists():
        raise DataError(f"'{clip(text)}' is not a table of the data folder; choose one from its list.")
    if path.is_dir() and any(not _inside(p, base) for p in path.rglob("*")):
        raise DataError(f"'{clip(text)}' holds links to files outside the data folder, so it is not opened.")
    return path


@dataclass(frozen=True)
class Entry:
    """One table of the data folder: its name (relative path), kind, size on disk and rows (None if unknown)."""

    name: str
    kind: str  # "file" or "dataset"
    format: str
    bytes: int
    rows: int | None

    def describe(self) -> str:
        from .memory import size_text

        rows = f"{self.rows:,} rows" if self.rows is not None else "rows counted when opened"
        kind = "Parquet dataset folder" if self.kind == "dataset" else {
            "parquet": "Parquet", "arrow": "Arrow / Feather", "text": "delimited text"}.get(self.format, self.format)
        return f"{self.name} ({kind}, {rows}, {size_text(self.bytes)})"


def entries(base: Path) -> list[Entry]:
    """The tables of the data folder, sorted by name: readable files, and sub-folders read as one dataset."""
    from . import load as _load

    out: list[Entry] = []
    for path in sorted(base.iterdir()):
        if path.name.startswith((".", "_")) or not _inside(path, base):
            continue
        try:
            if path.is_dir():
                resolve(base, path.name)
            elif not (path.is_file() and _load.is_source(path)):
                continue
            src = _load.open_source(path)
        except DataError:
            continue
        out.append(Entry(name=path.name, kind="dataset" if path.is_dir() else "file", format=src.format,
                         bytes=src.bytes, rows=src.rows))
    return out


def open_sample(base: Path, name: str, rows: int = DEFAULT_SAMPLE_ROWS, seed: int = 0):
    """A :class:`core.table.Table` of a seeded sample of ``rows`` rows of the data folder's table ``name``.

    Returns ``(table, total_rows)``.  The table's name is the entry's name;
    its ``read`` record says it is a sample (``sample: {rows, of, seed}``).
    """
    from ..table import make_table
    from . import load as _load

    path = resolve(base, name)
    src = _load.open_source(path)
    frame, total = src.sample(int(rows), int(seed))
    table = make_table(frame, name, {**src.record(), "sample": {"rows": len(frame), "of": total, "seed": int(seed)}})
    return table, total


def full_command(base: Path, name: str, release_command: str, engines: bool = True) -> str:
    """The command that releases the whole table ``name`` as ``release_command`` released its sample.

    The input becomes the table's path in the data folder, the output a
    Parquet dataset folder (``--out release``), and, when the command line
    has engines (``engines``), ``--engine dask`` is added.
    """
    args = shlex.split(release_command)
    path = str(resolve(base, name))
    if "sanitize" in args:
        at = args.index("sanitize") + 1
        if args[-2:-1] == ["--"]:
            args = args[:-2]
        else:
            args.pop(at)
        args.insert(at, path)
    if "--out" in args:
        args[args.index("--out") + 1] = "release"
    if engines:
        args += ["--engine", "dask"]
    return " ".join(shlex.quote(a) for a in args)
