"""What a mechanism publishes: tables, metadata, privacy checks and a manifest.

A :class:`Release` is the result of ``sanitize``: the published tables
(kept as integer codes plus labels, decoded only for preview and export),
the metadata published beside them (SPLU's gamma, SDR's sub-tables ...),
the privacy checks, and everything needed to reproduce it.  The manifest
(:meth:`Release.manifest`) is JSON; re-running the command in its
``reproduce`` field gives the same release.
"""

from __future__ import annotations

import io
import json
import shlex
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import __version__
from . import rng as _rng
from .errors import DataError
from .params import format_value

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, eq=False)
class CodedTable:
    """A published table as columns of codes (with labels) or plain values.

    ``labels[col]`` is the label array that ``columns[col]`` indexes, or
    ``None`` when the column holds plain values (group ids, counts).
    """

    columns: Mapping[str, np.ndarray]
    labels: Mapping[str, np.ndarray | None] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def to_frame(self, limit: int | None = None) -> pd.DataFrame:
        out = {}
        for name, col in self.columns.items():
            col = col if limit is None else col[:limit]
            lab = self.labels.get(name)
            out[name] = col if lab is None else lab[col]
        return pd.DataFrame(out)


@dataclass(frozen=True, eq=False)
class Published:
    """What a mechanism's ``sanitize`` returns; the framework adds provenance."""

    tables: Mapping[str, CodedTable]
    published: Mapping[str, Any] = field(default_factory=dict)
    privacy: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    state: Mapping[str, Any] = field(default_factory=dict)
    rows_out: int | None = None
    #: the per-record table's part bounds (a part's first row, ..., the end): records grouped by the top
    #: :func:`core.engine.local.parts_bits` bits of their order key, so every engine cuts the same parts
    parts: tuple[int, ...] | None = None


@dataclass(frozen=True, eq=False)
class Release:
    """A sanitized release with its provenance.

    ``state`` holds what the mechanism's estimator needs, derived from the
    published data only (never from the original table), except for
    interactive mechanisms (Laplace) whose curator answers queries.
    """

    mechanism: str
    title: str
    params: Mapping[str, Any]
    seed: int
    source: Mapping[str, Any]
    tables: Mapping[str, CodedTable]
    published: Mapping[str, Any]
    privacy: Mapping[str, Any]
    notes: tuple[str, ...]
    state: Mapping[str, Any]
    rows_out: int
    #: the mechanism's own guarantee checked on this release (:class:`core.guarantee.Verdict`), set by
    #: :func:`core.mechanisms.sanitize`; None for releases built by hand
    verdict: Any = None
    #: the per-record table's part bounds (:attr:`Published.parts`): ``--out DIR`` writes one part file
    #: each; None (a release not made by an engine) cuts parts of core.data.write.PART_ROWS rows
    parts: tuple[int, ...] | None = None

    @property
    def main_table(self) -> CodedTable | None:
        return next(iter(self.tables.values()), None)

    def reproduce_command(self) -> str:
        """The shell command that writes this release again (``sanitize ... --seed N --out release.csv``).

        Every argument is quoted with :func:`shlex.quote`; a value that
        starts with ``-`` is joined to its flag (``--sensitive=-dx``) and
        the input's name, when it starts with ``-``, goes last after ``--``,
        so no column or file name is read as an option; each QI gets its
        own ``--qi`` with commas and backslashes escaped as the CLI reads
        them (``a\\,b``).  ``--randomness`` records :data:`core.rng.VERSION`,
        so a later workbench that draws differently refuses the command
        instead of writing a different release.  The flags that say how the input file was read
        (:meth:`core.data.read.ReadOptions.cli_args`, from the manifest's
        ``input.read``) follow the input's name.  The command is for a POSIX shell.
        """
        def opt(flag: str, value: Any) -> list[str]:
            value = str(value)
            return [f"{flag}={value}"] if value.startswith("-") else [flag, value]

        name = str(self.source["name"])
        args = ["python", "-m", "core", "sanitize"] + ([] if name.startswith("-") else [name])
        args += read_flags(self.source.get("read"))
        args += opt("--sensitive", self.source["sensitive"])
        for col in self.source.get("qi") or ():
            args += opt("--qi", str(col).replace("\\", "\\\\").replace(",", "\\,"))
        for column, spec in (self.source.get("bands") or {}).items():
            from .data.banding import Banding

            args += opt("--band", Banding.from_spec(column, spec).text())
        args += ["--mechanism", self.mechanism]
        for key, value in self.source.get("raw_params", {}).items():
            if value is not None:
                args += ["--param", f"{key}={format_value(value)}"]
        args += ["--seed", str(self.seed), "--randomness", str(_rng.VERSION),
                 "--out", "release" + (".csv" if len(self.tables) == 1 else "")]
        if name.startswith("-"):
            args += ["--", name]
        return " ".join(shlex.quote(a) for a in args)

    def manifest(self, decision: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON-ready description that lets anyone reproduce this release.

        ``decision`` is the steward's decision record
        (:meth:`core.session.Decision.to_json`) when this release is the
        chosen setting; the ``decision`` key is absent otherwise, so
        manifests of the same seed stay byte-identical.
        """
        out = jsonable({
            "workbench": {"name": "privacy-utility workbench", "version": __version__},
            "mechanism": self.mechanism,
            "mechanism_title": self.title,
            "params": dict(self.params),
            "seed": self.seed,
            "randomness": _rng.VERSION,
            "input": {
                "name": self.source["name"],
                "content_hash": self.source["content_hash"],
                "sensitive": self.source["sensitive"],
                "qi": list(self.source["qi"]),
                "rows": self.source["rows"],
                "rows_dropped_missing": self.source.get("rows_dropped", 0),
                "bands": dict(self.source.get("bands") or {}),
                **({"read": dict(self.source["read"])} if self.source.get("read") else {}),
            },
            "output": {
                "rows": self.rows_out,
                "tables": {name: {"rows": len(t), "columns": list(t.columns)} for name, t in self.tables.items()},
                **({"parts": len(self.parts) - 1} if self.parts is not None else {}),
            },
            "published": dict(self.published),
            "privacy": dict(self.privacy),
            "verdict": self.verdict.to_dict(suggestion=False) if self.verdict is not None else None,
            "notes": list(self.notes),
            "reproduce": self.reproduce_command(),
            "reproduce_where": ("in the workbench folder (the one holding app.py and core/), with requirements.txt "
                                "installed; for an uploaded table, put the file's path in place of its name. "
                                "The input's content_hash tells whether it is the same table."),
        })
        if decision is not None:
            out["decision"] = jsonable(dict(decision))
        return out


def read_flags(read: Mapping[str, Any] | None) -> list[str]:
    """The CLI flags that read a file as recorded in a manifest's ``input.read`` (none for a sample)."""
    if not read:
        return []
    from .data.read import ReadOptions

    return ReadOptions.from_json(read).cli_args()


def jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays and tuples so ``json.dumps`` accepts them."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if np.isfinite(v) else None
    return value


# ------------------------------------------------------------------ export
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
        risky = text.str.startswith(_FORMULA_START, na=False)
        if risky.any():
            out[col] = text.mask(risky, "'" + text)
    safe_names = ["'" + c if str(c).startswith(_FORMULA_START) else c for c in out.columns]
    out.columns = safe_names
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return neutralise(frame).to_csv(index=False).encode("utf-8")


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def manifest_bytes(release: Release, decision: Mapping[str, Any] | None = None) -> bytes:
    return (json.dumps(release.manifest(decision), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def zip_bytes(release: Release, fmt: str = "csv") -> bytes:
    """All published tables (one file each) and the manifest in one zip."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, table in release.tables.items():
            frame = table.to_frame()
            if fmt == "parquet":
                zf.writestr(f"{name}.parquet", parquet_bytes(frame))
            else:
                zf.writestr(f"{name}.csv", csv_bytes(frame))
        zf.writestr("manifest.json", manifest_bytes(release))
    return buf.getvalue()


def write(release: Release, out: str | Path, manifest: str | Path | None = None,
          decision: Mapping[str, Any] | None = None) -> list[Path]:
    """Write the release to ``out``: CSV or Parquet by extension, a Parquet dataset folder, or a folder of tables.

    ``out`` ending in ``.csv`` / ``.parquet`` is one file; ``out`` without an
    extension is a folder: a Parquet dataset (``part-00000.parquet`` ... and
    ``_manifest.json``) for a mechanism publishing one table, one CSV per
    table (and ``_manifest.json``) for a mechanism publishing several.  The
    tables are written from their codes in batches (:mod:`core.data.write`:
    dictionary-encoded Parquet, CSV with formula-like text cells
    neutralised), each into a temporary name renamed at the end, so no
    partial release is left behind.  The manifest goes to ``manifest`` or,
    by default, beside a file as ``<name>.manifest.json`` and into a
    folder as ``_manifest.json`` (:data:`core.data.write.MANIFEST_NAME`).  Returns the paths written.  Refuses to
    write into a path that exists as the wrong kind (a file where a folder
    is needed and vice versa), or into a folder holding other files.
    """
    from .data import write as _write

    out = Path(out)
    written: list[Path] = []
    if not out.parent.exists():
        raise DataError(f"The folder '{out.parent}' does not exist; create it or choose another --out.")
    if len(release.tables) == 1 and out.suffix and out.suffix.lower() not in {".csv", ".parquet", ".pq"}:
        raise DataError(f"'{out}' does not end in .csv or .parquet; name the release file so, e.g. "
                        f"'{out.with_suffix('.csv')}', or give a folder name without an extension for a "
                        "Parquet dataset.")
    if len(release.tables) > 1 and out.suffix:
        names = ", ".join(release.tables)
        raise DataError(f"{release.title} publishes several tables ({names}); give --out a folder name without "
                        f"an extension (e.g. '{out.with_suffix('')}'), not '{out.name}'.")
    man_bytes = manifest_bytes(release, decision)
    inside = manifest is None
    extra = {_write.MANIFEST_NAME: man_bytes} if inside else {}
    if len(release.tables) == 1 and out.suffix:
        if out.is_dir():
            raise DataError(f"'{out}' is a folder; give a file name ending in .csv or .parquet.")
        table = release.main_table
        if out.suffix.lower() == ".csv":
            _write.write_csv(out, table.columns, table.labels)
        else:
            _write.write_parquet(out, table.columns, table.labels)
        written.append(out)
        man = Path(manifest) if manifest else out.with_name(out.stem + ".manifest.json")
        with _write.atomic_path(man) as tmp:
            tmp.write_bytes(man_bytes)
        written.append(man)
        return written
    if out.is_file():
        names = ", ".join(release.tables)
        raise DataError(f"{release.title} publishes {'several tables (' + names + ')' if len(release.tables) > 1 else 'a table'}; "
                        f"'{out}' is a file: give --out a folder name.")
    if len(release.tables) == 1:
        table = release.main_table
        bounds = None if release.parts is None else list(release.parts[1:-1])
        written += [p for p in _write.write_dataset(out, table.columns, table.labels, bounds=bounds, extra=extra)
                    if p.name != _write.MANIFEST_NAME]
    else:
        with _write.atomic_path(out, folder=True) as tmp:
            for name, table in release.tables.items():
                path = tmp / f"{name}.csv"
                with open(path, "wb") as fh:
                    for chunk in _write.csv_chunks(table.columns, dict(table.labels)):
                        fh.write(chunk)
                written.append(out / path.name)
            for name, data in extra.items():
                (tmp / name).write_bytes(data)
    if inside:
        written.append(out / _write.MANIFEST_NAME)
    else:
        man = Path(manifest)
        with _write.atomic_path(man) as tmp:
            tmp.write_bytes(man_bytes)
        written.append(man)
    return written
