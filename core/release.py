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
import os
import shlex
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import __version__
from . import rng as _rng
from .data import write as _write
from .data.write import neutralise  # noqa: F401  (re-exported: the pages and tests import it from here)
from .errors import DataError, clip, clip_path
from .params import format_value
from .signals import Interrupted, interrupt_on_signals, interrupt_status  # noqa: F401  (the CLI's, re-exported)


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

    def manifest(self, decision: Mapping[str, Any] | None = None,
                 risk: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON-ready description that lets anyone reproduce this release.

        ``decision`` is the steward's decision record
        (:meth:`core.session.Decision.to_json`) when this release is the
        chosen setting; the ``decision`` key is absent otherwise, so
        manifests of the same seed stay byte-identical.  ``risk`` is the
        measured risk block (:func:`core.api.measure_risk`: figures,
        interval, split, attacks and measurement seed, or why it was not
        measured), placed after the verdict.
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
                **({"columns_left_out": list(self.source["left_out"])} if "left_out" in self.source else {}),
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
        if risk is not None:
            out["risk"] = jsonable(dict(risk))
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
def csv_bytes(frame: pd.DataFrame) -> bytes:
    return neutralise(frame).to_csv(index=False).encode("utf-8")


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def manifest_bytes(release: Release, decision: Mapping[str, Any] | None = None,
                   risk: Mapping[str, Any] | None = None) -> bytes:
    return (json.dumps(release.manifest(decision, risk), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def zip_bytes(release: Release, fmt: str = "csv", decision: Mapping[str, Any] | None = None,
              risk: Mapping[str, Any] | None = None) -> bytes:
    """All published tables (one file each) and the manifest (the one :func:`manifest_bytes` gives) in one zip.

    Same release, same bytes: every entry carries the same fixed date (zip's
    earliest, 1980-01-01) instead of the clock's, so a download made twice
    is the same file.
    """
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, table in release.tables.items():
            frame = table.to_frame()
            if fmt == "parquet":
                zf.writestr(_zip_entry(f"{name}.parquet"), parquet_bytes(frame))
            else:
                zf.writestr(_zip_entry(f"{name}.csv"), csv_bytes(frame))
        zf.writestr(_zip_entry("manifest.json"), manifest_bytes(release, decision, risk))
    return buf.getvalue()


def _zip_entry(name: str) -> zipfile.ZipInfo:
    """A zip entry named ``name`` dated 1980-01-01, compressed, readable by all (no clock in the file)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def columns_said(release: Release, proposed: bool) -> list[str]:
    """The lines saying which columns the release used and which it left out (the CLI prints them).

    ``proposed``: the QIs were not given (``--qi``) but taken from the
    table's proposal, which the first line says.  The manifest keeps both
    lists (``input.qi``, ``input.columns_left_out``).
    """
    qi = ", ".join(map(str, release.source.get("qi") or ())) or "none"
    lines = [f"QIs used (proposed; --qi chooses others): {qi}" if proposed else f"QIs used: {qi}"]
    left = release.source.get("left_out")
    if left:
        lines.append(f"columns left out of the release: {', '.join(map(str, left))}")
    dropped = int(release.source.get("rows_dropped") or 0)
    if dropped:  # a record not published is counted and said (the manifest's input.rows_dropped_missing)
        total = dropped + int(release.source["rows"])
        lines.append(f"rows left out: {dropped:,} of {total:,} have a missing value in the sensitive or a QI "
                     "column and are not in the release")
    return lines


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name the same file (the same inode when both exist, else the same absolute path)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def check_outputs(out: str | os.PathLike | None, manifest: str | os.PathLike | None = None, *,
                  inputs: tuple = (), overwrite: bool = False) -> tuple[Path, Path | None]:
    """Refuse, in one sentence and before any work, outputs that would destroy what the user has.

    ``out`` is the release (a file with an extension, else a folder),
    ``manifest`` its manifest when given (default: beside a file as
    ``NAME.manifest.json``, inside a folder), ``inputs`` the files read
    (the table, a session file; names that are not files are ignored).
    Refused: an empty name; an output or manifest that is one of the
    inputs; a release folder holding an input; the release and the
    manifest at one path (or the manifest inside the release folder); a
    path of the wrong kind, in a missing folder, or with a name too long
    for the file system; a folder that exists and that the workbench did
    not write unless ``overwrite`` (:func:`core.data.write.check_target`).
    Returns the release's path and the manifest's (None: inside the folder).
    """
    for flag, value in (("--out", out), ("--manifest", manifest)):
        if value is not None and not str(value).strip():
            raise DataError(f"{flag} is empty; give it a file name such as "
                            f"'{'release.csv' if flag == '--out' else 'release.manifest.json'}'"
                            + (" (or a folder name for a Parquet dataset)." if flag == "--out" else "."))
    if out is None:
        raise DataError("Give --out: the file (or folder) to write the release to.")
    out = Path(out)
    folder = not out.suffix
    man = Path(manifest) if manifest is not None else (None if folder else out.with_name(out.stem + ".manifest.json"))
    files = [Path(p) for p in inputs if p is not None and Path(p).is_file()]
    for src in files:
        if _same(out, src):
            raise DataError(f"--out '{clip_path((out))}' is the input '{clip_path((src))}'; give the release another "
                            "name, so the input is kept.")
        if man is not None and _same(man, src):
            flag = "--manifest" if manifest is not None else "The manifest beside the release,"
            raise DataError(f"{flag} '{clip_path((man))}' is the input '{clip_path((src))}'; give "
                            f"{'the manifest' if manifest is not None else 'the release'} another name, so the input "
                            "is kept.")
        if folder and out.is_dir() and _inside(src, out):
            raise DataError(f"--out '{clip_path((out))}' is the folder holding the input '{clip_path((src))}'; give the "
                            "release a new folder, so the input is kept.")
    if man is not None and _same(out, man):
        raise DataError(f"--out and --manifest both name '{clip_path((out))}'; give the manifest another name (by "
                        f"default it goes beside the release as '{clip(out.stem + '.manifest.json')}').")
    if man is not None and folder and _inside(man, out):
        raise DataError(f"--manifest '{clip_path((man))}' is inside the release folder '{clip_path((out))}'; leave "
                        f"--manifest out (the folder gets {_write.MANIFEST_NAME}) or put it beside the folder.")
    _write.check_target(out, folder, "--out", overwrite)
    if man is not None:
        _write.check_target(man, False, "--manifest")
    return out, (Path(manifest) if manifest is not None else None)


def write(release: Release, out: str | Path, manifest: str | Path | None = None,
          decision: Mapping[str, Any] | None = None, *, inputs: tuple = (), overwrite: bool = False,
          risk: Mapping[str, Any] | None = None) -> list[Path]:
    """Write the release to ``out``: CSV or Parquet by extension, a Parquet dataset folder, or a folder of tables.

    ``out`` ending in ``.csv`` / ``.parquet`` is one file; ``out`` without an
    extension is a folder: a Parquet dataset (``part-00000.parquet`` ... and
    ``_manifest.json``) for a mechanism publishing one table, one CSV per
    table (and ``_manifest.json``) for a mechanism publishing several.  The
    tables are written from their codes in batches (:mod:`core.data.write`:
    dictionary-encoded Parquet, CSV with formula-like text cells
    neutralised).  The manifest goes to ``manifest`` or, by default, beside
    a file as ``<name>.manifest.json`` and into a folder as
    ``_manifest.json`` (:data:`core.data.write.MANIFEST_NAME`).  The release
    and its manifest are written to temporaries and moved into place
    together (:class:`core.data.write.Staging`): both appear or neither.
    The outputs are checked first (:func:`check_outputs`: never the input,
    never each other, never a folder the workbench did not write unless
    ``overwrite``).  Returns the paths written.
    """
    out, manifest = check_outputs(out, manifest, inputs=inputs, overwrite=overwrite)
    if len(release.tables) == 1 and out.suffix and out.suffix.lower() not in {".csv", ".parquet", ".pq"}:
        raise DataError(f"'{clip_path((out))}' does not end in .csv or .parquet; name the release file so, e.g. "
                        f"'{clip_path((out.with_suffix('.csv')))}', or give a folder name without an extension for a "
                        "Parquet dataset.")
    if len(release.tables) > 1 and out.suffix:
        names = ", ".join(release.tables)
        raise DataError(f"{release.title} publishes several tables ({names}); give --out a folder name without "
                        f"an extension (e.g. '{clip_path((out.with_suffix('')))}'), not '{clip(out.name)}'.")
    man_bytes = manifest_bytes(release, decision, risk)
    written: list[Path] = []
    with _write.Staging(overwrite) as stage:
        if len(release.tables) == 1 and out.suffix:
            table = release.main_table
            writer = _write.write_csv if out.suffix.lower() == ".csv" else _write.write_parquet
            writer(out, table.columns, table.labels, stage=stage)
            written.append(out)
            manifest = manifest or out.with_name(out.stem + ".manifest.json")
        elif len(release.tables) == 1:
            table = release.main_table
            bounds = None if release.parts is None else list(release.parts[1:-1])
            extra = {_write.MANIFEST_NAME: man_bytes} if manifest is None else {}
            written += _write.write_dataset(out, table.columns, table.labels, bounds=bounds, extra=extra, stage=stage)
        else:
            tmp = stage.path(out, folder=True)
            for name, table in release.tables.items():
                with open(tmp / f"{name}.csv", "wb") as fh:
                    for chunk in _write.csv_chunks(table.columns, dict(table.labels)):
                        fh.write(chunk)
                written.append(out / f"{name}.csv")
            if manifest is None:
                (tmp / _write.MANIFEST_NAME).write_bytes(man_bytes)
                written.append(out / _write.MANIFEST_NAME)
        if manifest is not None:
            written.append(stage.put(manifest, man_bytes, flag="--manifest"))
    return written
