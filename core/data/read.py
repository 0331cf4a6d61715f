"""Read a table from bytes: any extension, the content decides.

:func:`read` takes the raw bytes of a file and a :class:`ReadOptions`
(everything the user said: delimiter, header, names, encoding, sheet,
missing-value markers, decimal mark) and fills the unset options by
detection.  The :class:`ReadResult` holds the frame and every decision, so a
page can show how the file was read and the manifest can record it;
:func:`inspect` is the JSON summary of the same result.

Formats, recognised by their first bytes (never by the file name):

============  =====================================  ======================
format        recognised by                           read with
============  =====================================  ======================
text          anything else that decodes as text     pandas ``read_csv`` (C)
xlsx          zip holding ``xl/workbook.xml``         openpyxl
parquet       ``PAR1``                                pyarrow
arrow         ``ARROW1`` / ``FEA1`` / IPC stream      pyarrow (Feather, IPC)
sav           ``$FL2`` / ``$FL3``                     pyreadstat
dta           ``<stata_dta>`` or the old 4-byte tag   pyreadstat
xpt           ``HEADER RECORD*******LIB``             pyreadstat
sas7bdat      the SAS 32-byte magic number            pyreadstat
============  =====================================  ======================

Choices where the issue is silent (each can be overridden by an option):

* Encoding: a byte-order mark decides (UTF-8, UTF-16 LE/BE); else UTF-16
  without a mark is recognised by its zero bytes at every other position;
  else UTF-8 if the whole file is valid UTF-8; else cp1252 when a byte
  0x80-0x9F occurs that cp1252 defines (curly quotes, the euro sign), else
  Latin-1.  These rules decide the listed encodings exactly; a statistical
  detector (charset-normalizer) was not used because on short files it names
  other single-byte code pages for plain Latin-1 text.
* Delimiter: each candidate (``,`` ``;`` tab ``|`` and runs of spaces or
  tabs) splits the first 200 records of the file with :mod:`csv` (quotes
  respected); the winner splits every record into the same number of
  fields (more than one), then has the most cells that look like a
  number or a plain word (so ``1,5;2,5`` splits on ``;``), then comes first
  in the order tab, comma, semicolon, pipe, whitespace.  ``csv.Sniffer``
  was tried and not used: it guesses a single character, so it cannot
  say "runs of spaces", and it picks letters or quotes on small files.
* Header: the first row is a header unless one of its cells is a number
  over a column of numbers, or (in an all-text table) half or more of its
  cells occur again in their column below.
* Decimal comma: used when the delimiter is not a comma and a column's
  values are all numbers written with a comma (``3,5``).
* Missing values: empty cells always, and by default the markers of
  :data:`DEFAULT_NA`; ``na`` replaces that list.  Markers are matched after
  stripping blanks.
* Numbers: a column whose every value is a number becomes ``Int64`` when
  all are whole (and within +-2**53), ``Float64`` otherwise, whatever the
  format stored (SPSS stores every number as a double).
* SPSS/Stata value labels replace the codes (the column becomes text).
* A binary (bytes) column of a Parquet/Arrow file is decoded with the same
  encoding rules as a text file, and a note says which encoding was used.
* Nothing is written to disk: every reader gets an in-memory buffer
  (pyreadstat accepts file-like objects since 1.2.8).
"""

from __future__ import annotations

import codecs
import contextvars
import csv
import io
import os
import re
import unicodedata
import warnings
import zipfile
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, clip

#: a fixed row limit (WORKBENCH_MAX_ROWS); None (the default): the limit is what the free memory holds
#: at :data:`core.data.load.FRAME_BYTES_PER_ROW` bytes a row (the fixed 5M-row cap of earlier versions)
MAX_ROWS = int(os.environ["WORKBENCH_MAX_ROWS"]) if os.environ.get("WORKBENCH_MAX_ROWS") else None
#: whether the limit of the read in progress comes from the memory estimate (for its message)
_BY_MEMORY = contextvars.ContextVar("by_memory", default=False)
#: refuse files larger than this (bytes); override with WORKBENCH_MAX_BYTES
MAX_BYTES = int(os.environ.get("WORKBENCH_MAX_BYTES", str(500 * 2**20)))

#: a zip member (an .xlsx's XML, a session's table) larger than ZIP_RATIO_FLOOR bytes and compressed more
#: than ZIP_MAX_RATIO times is refused from the zip's directory, before it is inflated (a zip bomb; real
#: workbooks' sheets compress 5 to 30 times)
ZIP_MAX_RATIO = 100
ZIP_RATIO_FLOOR = 10 * 2**20
#: bytes a sheet cell costs when a workbook is read whole (a list slot and its value, the frame's copy):
#: a sheet's cells (its rows by its columns, blanks between included) may use the free memory at this rate
XLSX_CELL_BYTES = 200
#: bytes a text cell costs in a frame (a Python string object and its slot)
TEXT_CELL_BYTES = 64

#: cell texts read as missing by default (besides an empty cell)
DEFAULT_NA = ("?", "NA", "N/A", "NaN", "nan", "null", "NULL")

#: delimiters the detection tries, in order of preference on a tie
DELIMITERS = ("\t", ",", ";", "|", "whitespace")
#: readable names of delimiters (CLI values and page labels)
DELIMITER_NAMES = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "pipe", "whitespace": "whitespace"}
#: encodings the page offers (any Python codec name is accepted by the CLI)
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "cp1252", "latin-1")

FORMAT_TITLES = {
    "text": "delimited text", "xlsx": "Excel workbook", "parquet": "Parquet", "arrow": "Feather / Arrow IPC",
    "sav": "SPSS .sav", "dta": "Stata .dta", "xpt": "SAS transport (.xpt)", "sas7bdat": "SAS .sas7bdat",
}

#: the read options each format uses (any other given option is refused, never ignored silently)
APPLIES = {
    "text": {"delimiter", "header", "names", "encoding", "na", "decimal"},
    "xlsx": {"header", "names", "sheet", "na", "decimal"},
    "parquet": {"names", "na"}, "arrow": {"names", "na"},
    "sav": {"names", "na", "encoding"}, "dta": {"names", "na", "encoding"}, "xpt": {"names", "na", "encoding"},
    "sas7bdat": {"names", "na", "encoding"},
}

#: Python's codec names shown as users know them
_CODEC_NAMES = {"iso8859-1": "latin-1"}
_SAMPLE_BYTES = 1 << 16
_SAMPLE_RECORDS = 200
_SAS7BDAT_MAGIC = (b"\x00" * 12 + b"\xc2\xea\x81\x60\xb3\x14\x11\xcf\xbd\x92\x08\x00\x09\xc7\x31\x8c\x18\x1f\x10\x11")
_CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_COMMA_NUMBER = re.compile(r"^[+-]?\d*,\d+$")
_WORD = re.compile(r"^[\w .'/()&:+%@#-]*$")


# ---------------------------------------------------------------- options
@dataclass(frozen=True)
class ReadOptions:
    """How to read a file; ``None`` means "detect it".

    Attributes
    ----------
    delimiter : str, optional
        ``","``, ``";"``, ``"\\t"``, ``"|"``, ``"whitespace"`` (runs of
        spaces or tabs) or another single character.  Text files only.
    header : bool, optional
        Whether the first row holds the column names (text and Excel).
    names : tuple of str, optional
        Column names to use; with ``header=False`` the first row is data,
        with a header they replace it.  Without a header and without
        names the columns are ``col1 .. colN``.
    encoding : str, optional
        A Python codec name (``utf-8``, ``utf-16``, ``latin-1``, ``cp1252``).
    sheet : str, optional
        An Excel sheet: its name, or its position from 1.
    na : tuple of str, optional
        The cell texts that mean "missing" (an empty cell always does);
        replaces :data:`DEFAULT_NA`.
    decimal : str, optional
        ``"."`` or ``","``.
    """

    delimiter: str | None = None
    header: bool | None = None
    names: tuple[str, ...] | None = None
    encoding: str | None = None
    sheet: str | None = None
    na: tuple[str, ...] | None = None
    decimal: str | None = None

    def __post_init__(self) -> None:
        if self.names is not None:
            object.__setattr__(self, "names", tuple(str(n).strip() for n in self.names))
        if self.na is not None:
            object.__setattr__(self, "na", tuple(str(n).strip() for n in self.na))
        if self.delimiter is not None:
            object.__setattr__(self, "delimiter", normalise_delimiter(self.delimiter))
        if self.decimal not in (None, ".", ","):
            raise DataError(f"The decimal mark must be '.' or ','. Got '{clip(self.decimal, 20)}'.")
        if self.encoding is not None:
            try:
                info = codecs.lookup(self.encoding.strip())
            except LookupError:
                raise DataError(f"There is no text encoding called '{clip(self.encoding, 40)}'; use utf-8, utf-16, "
                                "latin-1 or cp1252.") from None
            try:
                # a codec that turns bytes into text, with the 'replace' handler the readers use: not rot13,
                # hex, base64 or zlib (bytes to bytes, or text to text), nor idna (no 'replace')
                if not getattr(info, "_is_text_encoding", True):
                    raise LookupError
                b"a,b\n".decode(info.name, errors="replace")
                codecs.getincrementaldecoder(info.name)(errors="replace").decode(b"a", final=True)
            except (LookupError, UnicodeError, TypeError, ValueError):
                raise DataError(f"'{clip(self.encoding, 40)}' is not an encoding a file of text can be read with; "
                                "use utf-8, utf-16, latin-1 or cp1252.") from None
            object.__setattr__(self, "encoding", _CODEC_NAMES.get(info.name, info.name))
        if self.sheet is not None:
            object.__setattr__(self, "sheet", str(self.sheet))

    def given(self) -> dict[str, Any]:
        """The options that are set, as JSON-ready values."""
        out = {}
        for key in ("delimiter", "header", "names", "encoding", "sheet", "na", "decimal"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, values: Mapping[str, Any] | None) -> "ReadOptions":
        values = dict(values or {})
        for key in ("names", "na"):
            if values.get(key) is not None:
                values[key] = tuple(values[key])
        known = {k: v for k, v in values.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def cli_args(self) -> list[str]:
        """The command-line flags that give these options (for the reproduce command)."""
        args: list[str] = []
        if self.delimiter is not None:
            args += ["--delimiter", DELIMITER_NAMES.get(self.delimiter, self.delimiter)]
        if self.header is False:
            args.append("--no-header")
        elif self.header is True:
            args.append("--header")
        if self.names is not None:
            args.append("--names=" + ",".join(_escape_name(n) for n in self.names))
        if self.encoding is not None:
            args += ["--encoding", self.encoding]
        if self.sheet is not None:
            args.append(f"--sheet={self.sheet}")
        if self.na is not None:
            args.append("--na=" + ",".join(_escape_name(m) for m in self.na))
        if self.decimal is not None:
            args += ["--decimal", self.decimal]
        return args


def _escape_name(name: str) -> str:
    return name.replace("\\", "\\\\").replace(",", "\\,")


def normalise_delimiter(value: str) -> str:
    """``tab`` / ``\\t`` -> tab, ``space`` / ``whitespace`` / ``" "`` -> ``"whitespace"``, names -> characters."""
    text = str(value)
    lowered = text.strip().lower()
    words = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": "whitespace",
             "spaces": "whitespace", "whitespace": "whitespace"}
    if lowered in words:
        return words[lowered]
    if text in ("\t", " "):
        return "\t" if text == "\t" else "whitespace"
    if len(text) != 1 or text in "\r\n\"":
        raise DataError(f"The delimiter must be one character (or tab, whitespace). Got '{clip(text, 20)}'.")
    return text


# ---------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class ReadResult:
    """A frame and how it was read.

    ``options`` are the options used (given or detected; those that do not
    apply to the format stay ``None``), ``detected`` names the ones that
    were detected, ``missing`` counts the missing-value markers found
    (``""`` for empty cells; ``"(missing)"`` for cells a binary format
    stores as missing), ``sheets`` lists an Excel workbook's sheets.
    """

    frame: pd.DataFrame
    format: str
    options: ReadOptions
    detected: tuple[str, ...] = ()
    missing: Mapping[str, int] = field(default_factory=dict)
    sheets: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def format_title(self) -> str:
        return FORMAT_TITLES.get(self.format, self.format)

    def types(self) -> dict[str, str]:
        return {str(c): column_type(self.frame[c]) for c in self.frame.columns}

    def record(self) -> dict[str, Any]:
        """What the manifest keeps: the format and every option used."""
        return {"format": self.format, **self.options.given()}

    def summary(self, name: str | None = None) -> dict[str, Any]:
        """The JSON of ``python -m core inspect``."""
        o = self.options
        out: dict[str, Any] = {}
        if name is not None:
            out["name"] = name
        out.update({
            "format": self.format,
            "rows": int(len(self.frame)),
            "columns": [str(c) for c in self.frame.columns],
            "delimiter": DELIMITER_NAMES.get(o.delimiter, o.delimiter) if o.delimiter is not None else None,
            "header": o.header,
            "encoding": o.encoding,
            "decimal": o.decimal,
            "sheet": o.sheet,
            "sheets": list(self.sheets),
            "types": self.types(),
            "missing": {k: int(v) for k, v in self.missing.items()},
            "na_markers": list(o.na if o.na is not None else DEFAULT_NA),
            "detected": list(self.detected),
            "notes": list(self.notes),
        })
        return out


def column_type(series: pd.Series) -> str:
    """A short readable type: integer, number, text, boolean, date/time."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "number"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "date/time"
    return "text"


# ---------------------------------------------------------------- entry points
def read(data: bytes, name: str = "upload", options: ReadOptions | None = None, *,
         max_rows: int | None = None, max_bytes: int | None = None) -> ReadResult:
    """Read ``data`` (the bytes of a file called ``name``) into a :class:`ReadResult`.

    Raises :class:`core.errors.DataError` with one sentence for every
    input a user can get wrong.  The row limit (``max_rows``, default
    :data:`MAX_ROWS`) is checked while reading: a file with more rows is
    refused before it is parsed in full.
    """
    options = options or ReadOptions()
    by_memory = max_rows is None and MAX_ROWS is None
    if max_rows is None:
        from .memory import frame_row_limit

        max_rows = MAX_ROWS if MAX_ROWS is not None else frame_row_limit()
    token = _BY_MEMORY.set(by_memory)
    try:
        return _read(data, name, options, max_rows, max_bytes)
    finally:
        _BY_MEMORY.reset(token)


def _read(data: bytes, name: str, options: ReadOptions, max_rows: int, max_bytes: int | None) -> ReadResult:
    max_bytes = MAX_BYTES if max_bytes is None else int(max_bytes)
    data = bytes(data)
    if len(data) > max_bytes:
        raise DataError(
            f"'{name}' is {len(data) / 2**20:,.0f} MB, above the upload limit of {max_bytes / 2**20:,.0f} MB; "
            "use the command line instead (python -m core sanitize FILE ..., with WORKBENCH_MAX_BYTES raised "
            "above the file's size) or sample it down first."
        )
    if not data.strip(b" \t\r\n\x00\x0b\x0c") or data in (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        what = "empty" if not data else "empty (only blanks)"
        raise DataError(f"'{name}' is {what}; choose a file with a header row and data rows.")
    fmt = detect_format(data, name)
    unused = [k for k in options.given() if k not in APPLIES[fmt]]
    if unused:
        title = FORMAT_TITLES[fmt]
        article = "an" if title[0].lower() in "aeiou" else "a"
        raise DataError(f"'{name}' is {article} {title} file, so the read option{'s' if len(unused) > 1 else ''} "
                        f"{', '.join(unused)} {'do' if len(unused) > 1 else 'does'} not apply; leave "
                        f"{'them' if len(unused) > 1 else 'it'} out.")
    reader = _READERS[fmt]
    return reader(data, name, options, max_rows)


def read_file(path, name: str | None = None, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, refused in one sentence when it is not one or is over ``limit`` bytes.

    A device (``/dev/zero``), a pipe or a socket has no size to check and
    may never end (or block), so only a regular file is read; ``limit``
    defaults to :data:`MAX_BYTES`.
    """
    import stat
    from pathlib import Path

    path = Path(path)
    name = name or path.name
    limit = MAX_BYTES if limit is None else int(limit)
    try:
        mode = path.stat().st_mode
    except OSError:
        raise DataError(f"There is no file at '{clip(str(path))}'; give a data file.") from None
    if stat.S_ISDIR(mode):
        raise DataError(f"'{clip(str(path))}' is a folder; give a data file (CSV, Excel, Parquet, SPSS, Stata, SAS ...).")
    if not stat.S_ISREG(mode):
        raise DataError(f"'{clip(str(path))}' is not a regular file (a device, pipe or socket has no end to read "
                        "to); give a data file.")
    size = path.stat().st_size
    if size > limit:
        raise DataError(f"'{clip(name)}' is {size / 2**20:,.0f} MB, above the limit of {limit / 2**20:,.0f} MB; "
                        "sample it down first, or raise the limit with WORKBENCH_MAX_BYTES.")
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise DataError(f"'{clip(name)}' is above the limit of {limit / 2**20:,.0f} MB; sample it down first, or "
                        "raise the limit with WORKBENCH_MAX_BYTES.")
    return data


def check_zip(zf: zipfile.ZipFile, name: str, limit: int) -> None:
    """Refuse, from a zip's directory alone (nothing inflated yet), a zip that would cost more than it may.

    The directory's uncompressed sizes bound what Python's zipfile inflates
    (it stops at a member's declared size and then checks its CRC, so a
    size that lies is a damaged file, not a bigger one): their total must
    be at most ``limit`` bytes, and no member over :data:`ZIP_RATIO_FLOOR`
    bytes may be compressed more than :data:`ZIP_MAX_RATIO` times.
    """
    from .memory import size_text

    total = 0
    for info in zf.infolist():
        total += info.file_size
        if info.file_size > ZIP_RATIO_FLOOR and info.file_size > ZIP_MAX_RATIO * max(1, info.compress_size):
            raise DataError(f"'{clip(name)}' holds '{clip(info.filename)}', which would inflate from "
                            f"{size_text(info.compress_size)} to {size_text(info.file_size)} (more than "
                            f"{ZIP_MAX_RATIO} times: a zip bomb); it was not unpacked. Save the file again from the "
                            "program that made it, or as CSV.")
    if total > limit:
        raise DataError(f"'{clip(name)}' would unpack to {size_text(total)}, more than the {size_text(limit)} this "
                        "workbench unpacks; save it as CSV (or Parquet) and load that.")


def inspect(data: bytes, name: str = "upload", options: ReadOptions | None = None, **limits) -> dict[str, Any]:
    """:func:`read`, summarised as JSON (rows, columns, delimiter, header, encoding, types, missing markers)."""
    return read(data, name, options, **limits).summary(name)


def detect_format(data: bytes, name: str = "upload") -> str:
    """The format of ``data`` from its first bytes; raises DataError for files no reader takes."""
    head = data[:64]
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith((b"ARROW1", b"FEA1")) or head.startswith(b"\xff\xff\xff\xff"):
        return "arrow"
    if head.startswith((b"$FL2", b"$FL3")):
        return "sav"
    if head.startswith(b"<stata_dta>") or (len(head) >= 4 and head[0] in (0x66, 0x6E, 0x6F, 0x71, 0x72, 0x73)
                                           and head[1] in (1, 2) and head[2] == 1 and head[3] == 0):
        return "dta"
    if head.startswith(b"HEADER RECORD*******LIB"):
        return "xpt"
    if head.startswith(_SAS7BDAT_MAGIC):
        return "sas7bdat"
    if head.startswith(b"PK\x03\x04"):
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except zipfile.BadZipFile:
            raise DataError(f"'{name}' is a damaged zip or Excel file; export it again.") from None
        if "xl/workbook.xml" in names:
            return "xlsx"
        if "content.xml" in names and "mimetype" in names:
            raise DataError(f"'{name}' is an OpenDocument spreadsheet; save it as .xlsx or CSV and load that.")
        raise DataError(f"'{name}' is a zip archive; unzip it and load the table inside.")
    if head.startswith(_CFB_MAGIC):
        if "EncryptedPackage".encode("utf-16-le") in data[:1 << 20] or b"EncryptedPackage" in data[:1 << 20]:
            raise DataError(f"'{name}' is a password-protected workbook; open it in Excel, remove the password "
                            "(File > Info > Protect Workbook > Encrypt with Password) and save it again, or save "
                            "it as CSV.")
        raise DataError(f"'{name}' is an old-style Excel (.xls) or other Office file; save it as .xlsx or CSV.")
    if head.startswith(b"\x1f\x8b"):
        raise DataError(f"'{name}' is compressed (gzip); decompress it and load the file inside.")
    return "text"


# ---------------------------------------------------------------- text
def detect_encoding(data: bytes) -> str:
    """The codec of text ``data`` (see the module docstring); raises DataError for binary data."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    sample = data[:_SAMPLE_BYTES]
    if b"\x00" in sample:
        half = max(1, len(sample) // 2)
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        if odd > 0.3 * half and even < 0.02 * half:
            return "utf-16-le"
        if even > 0.3 * half and odd < 0.02 * half:
            return "utf-16-be"
        raise _binary()
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(data), 1 << 20):
            decoder.decode(data[start:start + (1 << 20)])
        decoder.decode(b"", final=True)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    high = set(data) & set(range(0x80, 0xA0))
    if high and not high & {0x81, 0x8D, 0x8F, 0x90, 0x9D}:
        return "cp1252"
    return "latin-1"


class _BinaryError(DataError):
    pass


def _binary() -> _BinaryError:
    return _BinaryError("binary")


def _decode_sample(data: bytes, encoding: str, name: str = "the file") -> tuple[str, bool]:
    """The start of the file as text and whether it was cut (the last record may be partial).

    Undecodable bytes are replaced; a codec that refuses the whole stream
    (utf-16 without its byte-order mark, found by bench/fuzz.py) is one
    sentence naming ``name``.
    """
    chunk = data[:_SAMPLE_BYTES]
    cut = len(data) > len(chunk)
    try:
        text = codecs.getincrementaldecoder(encoding)(errors="replace").decode(chunk, final=not cut)
    except UnicodeError:
        raise DataError(f"'{clip(name)}' is not valid {encoding} text; choose its encoding (utf-8, utf-16, latin-1, "
                        "cp1252).") from None
    return text.lstrip("\ufeff"), cut


def _looks_binary(text: str) -> bool:
    if not text:
        return False
    controls = sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\x0c")
    return controls > max(2, len(text) // 100)


def _split_records(text: str, delimiter: str, cut: bool) -> list[list[str]]:
    """The first records of ``text`` split on ``delimiter`` (quotes respected; blank lines skipped)."""
    if delimiter == "whitespace":
        lines = [ln.replace("\t", " ").strip() for ln in text.splitlines()]
        source = io.StringIO("\n".join(ln for ln in lines if ln))
        reader = csv.reader(source, delimiter=" ", skipinitialspace=True)
    else:
        # newline="": a record may end in \n, \r\n or a lone \r (old Mac files), as pyarrow reads them
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True)
    rows = []
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            rows.append(row)
            if len(rows) > _SAMPLE_RECORDS:
                break
    except csv.Error:
        pass
    if cut and len(rows) > 1 and len(rows) <= _SAMPLE_RECORDS:
        rows = rows[:-1]  # the sample may end inside the last record
    return rows[:_SAMPLE_RECORDS]


def _is_number(text: str, comma: bool = True) -> bool:
    t = text.strip()
    return bool(_NUMBER.match(t) or (comma and _COMMA_NUMBER.match(t)))


def sniff_delimiter(text: str, cut: bool = False) -> str:
    """The delimiter that splits the sample most consistently (see the module docstring)."""
    best: tuple | None = None
    for rank, delim in enumerate(DELIMITERS):
        rows = _split_records(text, delim, cut)
        if not rows:
            continue
        counts = [len(r) for r in rows]
        mode = max(set(counts), key=lambda c: (counts.count(c), c))
        if mode < 2:
            continue
        consistency = counts.count(mode) / len(counts)
        cells = [c.strip() for r in rows for c in r if c.strip()]
        clean = sum(1 for c in cells if _is_number(c) or _WORD.match(c)) / max(1, len(cells))
        key = (round(consistency, 2), round(clean, 2), -rank)
        if best is None or key > best[0]:
            best = (key, delim)
    if best is None:
        return ","
    return best[1]


def detect_header(rows: Sequence[Sequence[str]]) -> bool:
    """Whether the first of ``rows`` is a header (see the module docstring)."""
    if len(rows) < 2:
        return True
    first, rest = rows[0], rows[1:]
    width = len(first)
    numeric_below = []
    for j in range(width):
        below = [r[j].strip() for r in rest if j < len(r) and r[j].strip()]
        numeric_below.append(bool(below) and all(_is_number(v) for v in below))
    for j, cell in enumerate(first):
        if cell.strip() and _is_number(cell) and (j >= width or numeric_below[j]):
            return False
    if any(numeric_below):
        return True
    repeated = 0
    for j, cell in enumerate(first):
        below = {r[j].strip() for r in rest if j < len(r)}
        if cell.strip() and cell.strip() in below:
            repeated += 1
    return repeated * 2 < max(1, width)


def _read_text(data: bytes, name: str, options: ReadOptions, max_rows: int) -> ReadResult:
    detected = []
    encoding = options.encoding
    try:
        if encoding is None:
            encoding = detect_encoding(data)
            detected.append("encoding")
        sample, cut = _decode_sample(data, encoding, name)
    except _BinaryError:
        sample, cut = "", False
        encoding = None
    if encoding is None or _looks_binary(sample):
        raise DataError(f"'{name}' is not a text table (it holds binary data) nor a format this workbench reads; "
                        "choose delimited text (CSV, TSV ...), Excel, Parquet, Feather, SPSS, Stata or SAS.")
    if not sample.strip():
        raise DataError(f"'{name}' is empty (only blanks); choose a file with a header row and data rows.")
    delimiter = options.delimiter
    if delimiter is None:
        delimiter = sniff_delimiter(sample, cut)
        detected.append("delimiter")
    rows = _split_records(sample, delimiter, cut)
    header = options.header
    if header is None:
        header = options.names is None and detect_header(rows)
        detected.append("header")
    width = len(rows[0]) if rows else 1
    if delimiter == "whitespace":
        raw = _read_whitespace(data, name, encoding, header, max_rows)
    else:
        raw = _read_delimited(data, name, encoding, delimiter, width, header, max_rows)
    if len(raw) > max_rows + int(header):
        raise _over_rows(name, max_rows)
    notes: list[str] = []
    frame = _apply_header(raw, name, header, options.names, notes)
    decimal = options.decimal
    if decimal is None:
        decimal = "," if delimiter != "," and _has_comma_numbers(frame, options.na) else "."
        detected.append("decimal")
    frame, missing = normalise(frame, options.na, decimal)
    used = replace(options, delimiter=delimiter, header=header, encoding=encoding, decimal=decimal)
    return ReadResult(frame=frame, format="text", options=used, detected=tuple(detected), missing=missing,
                      notes=tuple(notes))


def _arrow_copy(view: memoryview):
    """``view`` copied into memory Arrow owns.

    The CSV reader reads ahead on Arrow's I/O threads. Over a Python buffer
    (``pa.py_buffer``), the thread that drops the last reference must take
    the GIL; when that happened while the interpreter was exiting (a command
    that had just printed a bad-file message), the thread was torn down
    inside C++ and the process aborted ('terminate called without an active
    exception', exit -6) instead of exiting 2. An Arrow-owned copy is freed
    without the GIL; it costs one memcpy of the file (milliseconds per
    hundred MB).
    """
    import numpy as np
    import pyarrow as pa

    buf = pa.allocate_buffer(len(view))
    np.frombuffer(buf, dtype=np.uint8)[:] = np.frombuffer(view, dtype=np.uint8)
    return buf


def _read_delimited(data: bytes, name: str, encoding: str, delimiter: str, width: int, header: bool,
                    max_rows: int) -> pd.DataFrame:
    """Every field as text, with pyarrow's streaming CSV reader (quotes, newlines in quotes).

    pyarrow rather than pandas: it refuses a row with fewer fields than the
    first (pandas pads it silently) and it reads in blocks, so the row
    limit is checked while reading and a file over it is refused before it
    is parsed in full, in bounded memory.
    """
    import pyarrow as pa
    import pyarrow.csv as pc

    view = memoryview(data)
    if encoding == "utf-8-sig" and data.startswith(codecs.BOM_UTF8):
        view, encoding = view[3:], "utf-8"
    names = [f"f{j}" for j in range(width)]
    try:
        reader = pc.open_csv(
            pa.BufferReader(_arrow_copy(view)),
            read_options=pc.ReadOptions(column_names=names, block_size=1 << 20,
                                        encoding="utf8" if encoding == "utf-8" else encoding),
            parse_options=pc.ParseOptions(delimiter=delimiter, quote_char='"', newlines_in_values=True,
                                          ignore_empty_lines=True),
            convert_options=pc.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=[],
                                              strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
        batches, rows = [], 0
        for batch in reader:
            rows += batch.num_rows
            if rows > max_rows + int(header):
                raise _over_rows(name, max_rows)
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=reader.schema)
    except DataError:
        raise
    except pa.ArrowInvalid as exc:
        raise DataError(_ragged_message(name, str(exc), encoding, data)) from None
    except UnicodeError:  # pyarrow's transcoder raises Python's error (a truncated UTF-16 file)
        raise DataError(f"'{name}' is not valid {encoding} text; choose its encoding (utf-8, utf-16, latin-1, "
                        "cp1252).") from None
    if table.num_rows == 0:
        raise DataError(f"'{name}' is empty (only blanks); choose a file with a header row and data rows.")
    frame = table.to_pandas(types_mapper={pa.string(): pd.StringDtype()}.get)
    frame.columns = range(width)
    return frame


def _read_whitespace(data: bytes, name: str, encoding: str, header: bool, max_rows: int) -> pd.DataFrame:
    """Fields separated by runs of blanks (pandas' C reader; pyarrow splits on one character only)."""
    if _count_lines(data, encoding) > max_rows + 1:
        _refuse_over_limit(data, name, encoding, header, max_rows)
    try:
        raw = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, dtype=str, keep_default_na=False,
                          na_filter=False, encoding=encoding, skip_blank_lines=True, nrows=max_rows + 2,
                          engine="c", quotechar='"')
    except pd.errors.EmptyDataError:
        raise DataError(f"'{name}' is empty (only blanks); choose a file with a header row and data rows.") from None
    except pd.errors.ParserError as exc:
        raise DataError(_ragged_message(name, str(exc), encoding)) from None
    except UnicodeError:  # UnicodeDecodeError, or the utf-16 codec's "stream does not start with BOM"
        raise DataError(f"'{name}' is not valid {encoding} text; choose its encoding (utf-8, utf-16, latin-1, "
                        "cp1252).") from None
    # runs of blanks never make an empty field: an empty cell is a row pandas padded (too few fields)
    short = (raw == "").any(axis=1).to_numpy()
    if short.any():
        i = int(np.flatnonzero(short)[0])
        fields = int((raw.iloc[i] != "").sum())
        raise DataError(f"'{name}' has rows with different numbers of fields (row {i + 1} has {fields}, the first "
                        f"row {raw.shape[1]}); check the delimiter and the quoting.")
    if len(raw) > max_rows + int(header):
        raise _over_rows(name, max_rows)
    return raw


def _count_lines(data: bytes, encoding: str) -> int:
    if encoding.startswith("utf-16"):
        big = encoding == "utf-16-be" or (encoding == "utf-16" and data.startswith(codecs.BOM_UTF16_BE))
        return data.count(b"\x00\n" if big else b"\n\x00")
    return data.count(b"\n")


def _refuse_over_limit(data: bytes, name: str, encoding: str, header: bool, max_rows: int) -> None:
    """Count records (one column, in chunks, bounded memory) and refuse as soon as there are too many."""
    seen = 0
    try:
        chunks = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, usecols=[0], dtype=str, na_filter=False,
                             encoding=encoding, skip_blank_lines=True, chunksize=500_000, engine="c", quotechar='"')
        for chunk in chunks:
            seen += len(chunk)
            if seen > max_rows + int(header):
                raise _over_rows(name, max_rows)
    except DataError:
        raise
    except Exception:
        return  # a parse problem: the full read reports it


def _over_rows(name: str, max_rows: int) -> DataError:
    if _BY_MEMORY.get():
        return _over_memory(name, f"more than {max_rows:,}", max_rows)
    return DataError(f"'{name}' has more than {max_rows:,} rows, above the limit; sample it down first "
                     "(or raise WORKBENCH_MAX_ROWS for the command line).")


def _over_memory(name: str, rows: str, max_rows: int) -> DataError:
    from .memory import FRAME_BYTES_PER_ROW, size_text

    room = max_rows * FRAME_BYTES_PER_ROW
    return DataError(f"'{name}' has {rows} rows, more than the {size_text(room)} of memory free here holds "
                     f"when a file is read whole (about {FRAME_BYTES_PER_ROW} bytes a row); give it to the command "
                     "line as Parquet, Arrow or CSV (read column by column), run it with --engine dask, or "
                     "sample it down first.")


def _line_of(data: bytes, row: str, encoding: str) -> int | None:
    """The line number of the first line of ``data`` that is exactly ``row`` (None when not found)."""
    try:
        codec = encoding.replace("-sig", "")
        newline, target = "\n".encode(codec), row.encode(codec)
    except (LookupError, UnicodeError):
        return None
    if codec.startswith("utf-16") or not target:
        return None  # the BOM and 2-byte units make a byte search unreliable; the row text is quoted instead
    start = 0
    while True:
        at = data.find(target, start)
        if at < 0:
            return None
        end = at + len(target)
        if (at == 0 or data[at - 1:at] == newline) and data[end:end + 1] in (b"\r", b"\n", b""):
            return data.count(newline, 0, at) + 1
        start = at + 1


def _ragged_message(name: str, message: str, encoding: str = "utf-8", data: bytes | None = None) -> str:
    match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    if match:
        want, line, saw = match.groups()
        return (f"'{name}' has rows with different numbers of fields (line {line} has {saw}, the first row "
                f"{want}); check the delimiter and the quoting.")
    match = re.search(r"Expected (\d+) columns, got (\d+): (.*)", message, re.S)
    if match:
        want, saw, row = match.groups()
        row = row.strip("\r\n").splitlines()[0] if row.strip() else ""
        line = _line_of(data, row, encoding) if data is not None else None
        shown = row[:40] + ("…" if len(row) > 40 else "")
        where = f"line {line}, '{shown}'," if line else f"the row '{shown}'"
        return (f"'{name}' has rows with different numbers of fields ({where} has {saw}, the first row "
                f"{want}); check the delimiter and the quoting.")
    if "UTF8" in message or "decode" in message.lower():
        return f"'{name}' is not valid {encoding} text; choose its encoding (utf-8, utf-16, latin-1, cp1252)."
    return f"'{name}' could not be split into rows and fields; check the delimiter and the quoting."


def _apply_header(raw: pd.DataFrame, name: str, header: bool, names: Sequence[str] | None,
                  notes: list[str]) -> pd.DataFrame:
    """Name the columns of a header-less grid ``raw`` (strings or cell values)."""
    width = raw.shape[1]
    if header:
        found = ["" if _blank(v) else str(v).strip() for v in raw.iloc[0]] if len(raw) else [""] * width
        frame = raw.iloc[1:].reset_index(drop=True)
        # a trailing delimiter on every line makes an unnamed, empty last column: nothing is lost dropping it
        while width > 1 and not found[-1] and all(_blank(v) for v in frame.iloc[:, -1]) and names is None:
            notes.append("An empty, unnamed last column (a delimiter at the end of every line) was left out.")
            frame = frame.iloc[:, :-1]
            found = found[:-1]
            width -= 1
        if names is None and all(len(n) >= 2 and n[0] == n[-1] == "'" for n in found):
            frame = _unquote_single(frame, found, notes)
            found = [n[1:-1].strip() for n in found]
        if names is None and width > 1 and not found[0] and all(found[1:]):
            # R's write.csv: the row names in a first column whose header cell is empty (issue 23 §3)
            found[0] = next(c for c in ("row", *(f"row_{i}" for i in range(2, width + 2))) if c not in found)
            notes.append(f"The first column had no name (as in an R write.csv export, whose first column holds the "
                         f"row names): it is named '{found[0]}'.")
    else:
        found = [f"col{j + 1}" for j in range(width)]
        frame = raw.reset_index(drop=True)
    if names is not None:
        if len(names) != width:
            raise DataError(f"{len(names)} column names were given but '{name}' has {width} columns; "
                            f"give {width} names.")
        found = list(names)
    empty = [j + 1 for j, n in enumerate(found) if not n]
    if empty:
        raise DataError(f"'{name}' has a column without a name (column {empty[0]}); give every column a name in "
                        "the header, or read the first row as data.")
    dupes = [n for j, n in enumerate(found) if n in found[:j]]
    if dupes:
        raise DataError(f"'{name}' has two columns named '{dupes[0]}'; give every column its own name.")
    frame.columns = found
    return frame


def _unquote_single(frame: pd.DataFrame, found: list[str], notes: list[str]) -> pd.DataFrame:
    """A header whose every name is in single quotes (``'age'``, as some statistics packages write): the names,
    and each column whose every value is quoted the same way, are read without the quotes, and a note says so.

    Choice: single quotes are taken as quoting only when the whole header
    uses them; elsewhere an apostrophe is part of the text (``O'Brien``).
    """
    unquoted = []
    for j in range(frame.shape[1]):
        col = frame.iloc[:, j]
        if not len(col) or not (col.dtype == object or pd.api.types.is_string_dtype(col)):
            continue
        text = col.astype(str).str.strip()
        filled = ~col.map(_blank)
        if filled.any() and (text[filled].str.len().ge(2) & text[filled].str.startswith("'")
                             & text[filled].str.endswith("'")).all():
            frame.iloc[:, j] = col.where(~filled, text.str[1:-1])
            unquoted.append(found[j][1:-1].strip())
    notes.append("The column names were written in single quotes ('name'); they are read without them"
                 + (f", and so are the values of {', '.join(clip(u, 40) for u in unquoted[:5])}"
                    + (" ..." if len(unquoted) > 5 else "") if unquoted else "") + ".")
    return frame


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or (isinstance(value, str)
                                                                              and not value.strip())


def _has_comma_numbers(frame: pd.DataFrame, na: Sequence[str] | None) -> bool:
    markers = set(DEFAULT_NA if na is None else na) | {""}
    for col in frame.columns:
        s = frame[col]
        if not (s.dtype == object or pd.api.types.is_string_dtype(s)):
            continue
        values = s.dropna().astype(str).str.strip()
        values = values[~values.isin(markers)]
        if len(values) and values.str.match(r"^[+-]?\d+(,\d+)?$").all() and values.str.contains(",").any():
            return True
    return False


# ---------------------------------------------------------------- normalising
def normalise(frame: pd.DataFrame, na: Sequence[str] | None = None, decimal: str = ".",
              base_missing: Mapping[str, int] | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Strip names and cells, turn missing-value markers into missing, numbers into numbers.

    Returns the frame and the count of each marker found (``""`` for empty
    cells).  See the module docstring for the rules.
    """
    markers = ("",) + tuple(m for m in (DEFAULT_NA if na is None else na) if m != "")
    missing: dict[str, int] = dict(base_missing or {})
    frame = frame.copy()
    frame.columns = [str(c).strip() for c in frame.columns]
    for col in frame.columns:
        s = frame[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            s = s.astype(object).where(s.notna(), None)
            s = s.map(lambda v: v if v is None or isinstance(v, str) else _plain_number(v))
        if s.dtype == object or pd.api.types.is_string_dtype(s):
            native_missing = int(s.isna().sum())
            if native_missing:
                missing["(missing)"] = missing.get("(missing)", 0) + native_missing
            s = s.astype("string").str.strip()
            found = s.isin(markers)
            if found.any():
                for marker, count in s[found].value_counts().items():
                    missing[str(marker)] = missing.get(str(marker), 0) + int(count)
                s = s.mask(found)
            frame[col] = _numbers(s, decimal)
        elif pd.api.types.is_bool_dtype(s):
            continue
        elif pd.api.types.is_numeric_dtype(s):
            native_missing = int(s.isna().sum())
            if native_missing:
                missing["(missing)"] = missing.get("(missing)", 0) + native_missing
            frame[col] = _whole(pd.to_numeric(s).astype("Float64"))
    return frame, {k: v for k, v in missing.items() if v}


def _plain_number(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _numbers(s: pd.Series, decimal: str) -> pd.Series:
    """``s`` as Int64/Float64 when every value is a number, else unchanged.

    A vectorised pattern check screens the column first (pd.to_numeric on a
    text column of 500,000 rows took over a second; the check and the cast
    take a few hundredths).
    """
    present = s.dropna()
    if not len(present):
        return s
    text = s
    pattern = r"[+-]?(\d+(,\d*)?|,\d+)([eE][+-]?\d+)?" if decimal == "," else _NUMBER.pattern.strip("^$")
    if not (present.head(1000).str.fullmatch(pattern).all() and present.str.fullmatch(pattern).all()):
        return s
    if decimal == ",":
        text = s.str.replace(",", ".", regex=False)
    try:
        numeric = text.astype("Float64")
    except (TypeError, ValueError):
        numeric = pd.to_numeric(text, errors="coerce").astype("Float64")
        if numeric.notna().sum() != len(present):
            return s
    return _whole(numeric)


def _whole(values: pd.Series) -> pd.Series:
    present = values.dropna()
    finite = np.isfinite(present.to_numpy(dtype=float))
    if finite.all() and (present % 1 == 0).all() and (present.abs() <= 2**53).all():
        return values.astype("Int64")
    return values


# ---------------------------------------------------------------- other formats
def _limit_rows(name: str, rows: int | None, max_rows: int) -> None:
    if rows is not None and rows > max_rows:
        if _BY_MEMORY.get():
            raise _over_memory(name, f"{rows:,}", max_rows)
        raise DataError(f"'{name}' has {rows:,} rows, above the limit of {max_rows:,}; sample it down first "
                        "(or raise WORKBENCH_MAX_ROWS for the command line).")


def _finish(frame: pd.DataFrame, name: str, fmt: str, options: ReadOptions, notes: list[str] | None = None,
            **extra) -> ReadResult:
    if options.names is not None:
        if len(options.names) != frame.shape[1]:
            raise DataError(f"{len(options.names)} column names were given but '{name}' has {frame.shape[1]} "
                            f"columns; give {frame.shape[1]} names.")
        frame = frame.set_axis(list(options.names), axis=1)
    names = [str(c).strip() for c in frame.columns]
    dupes = [n for j, n in enumerate(names) if n in names[:j]]
    if dupes:
        raise DataError(f"'{name}' has two columns named '{dupes[0]}'; give every column its own name.")
    frame, missing = normalise(frame, options.na, options.decimal or ".")
    used = replace(options, header=None, delimiter=None, encoding=None, decimal=None)
    return ReadResult(frame=frame, format=fmt, options=used, missing=missing, notes=tuple(notes or ()), **extra)


def check_parquet(metadata, name: str, max_rows: int) -> None:
    """Refuse, from a Parquet file's footer alone, a file whose rows or unpacked size pass what may be read whole.

    A file of a few kB can declare millions of run-length-encoded rows, so
    the footer's figures are checked before any page is decoded: the rows
    against ``max_rows``, and the decoded size against the free memory:
    rows by columns at 8 bytes a number and :data:`TEXT_CELL_BYTES` a text
    cell (a Python string), twice (Arrow's columns, then the frame's).  The
    row groups' own "uncompressed" sizes are not used: they are the encoded
    sizes, as small as the file for a run-length-encoded column.
    """
    from .memory import available_memory, size_text

    _limit_rows(name, metadata.num_rows, max_rows)
    fixed = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE"}
    per_row = sum(8 if metadata.schema.column(i).physical_type in fixed else TEXT_CELL_BYTES
                  for i in range(metadata.num_columns))
    need = 2 * metadata.num_rows * per_row
    room = available_memory()
    if need > room:
        raise DataError(f"'{clip(name)}' holds {metadata.num_rows:,} rows of {metadata.num_columns:,} columns, "
                        f"about {size_text(need)} once unpacked, more than the {size_text(room)} of memory free here; "
                        "give it to the command line with --engine dask, or sample it down first.")


def _read_parquet(data: bytes, name: str, options: ReadOptions, max_rows: int) -> ReadResult:
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        check_parquet(handle.metadata, name, max_rows)
        table = handle.read()
    except DataError:
        raise
    except Exception:
        raise DataError(f"'{name}' is not a readable Parquet file; export it again or use CSV.") from None
    return _from_arrow(table, name, "parquet", options)


def _read_arrow(data: bytes, name: str, options: ReadOptions, max_rows: int) -> ReadResult:
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.ipc as ipc

    try:
        if data.startswith(b"\xff\xff\xff\xff"):
            reader = ipc.open_stream(io.BytesIO(data))
            batches, rows = [], 0
            for batch in reader:
                rows += batch.num_rows
                _limit_rows(name, rows, max_rows)
                batches.append(batch)
            table = pa.Table.from_batches(batches, schema=reader.schema)
        elif data.startswith(b"ARROW1"):
            reader = ipc.open_file(io.BytesIO(data))
            _limit_rows(name, sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches)),
                        max_rows)
            table = reader.read_all()
        else:
            table = feather.read_table(io.BytesIO(data))
            _limit_rows(name, table.num_rows, max_rows)
    except DataError:
        raise
    except Exception:
        raise DataError(f"'{name}' is not a readable Feather / Arrow file; export it again or use CSV.") from None
    return _from_arrow(table, name, "arrow", options)


def _from_arrow(table, name: str, fmt: str, options: ReadOptions) -> ReadResult:
    import pyarrow as pa

    notes = []
    columns = {}
    for fld, col in zip(table.schema, table.columns):
        if pa.types.is_binary(fld.type) or pa.types.is_large_binary(fld.type) or \
                pa.types.is_fixed_size_binary(fld.type):
            values = col.to_pylist()
            joined = b"\n".join(v for v in values if v is not None)
            try:
                encoding = detect_encoding(joined) if joined else "utf-8"
            except _BinaryError:
                encoding = None
            if encoding is None or b"\x00" in joined:
                raise DataError(f"Column '{fld.name}' of '{name}' holds binary data, not text; drop that column "
                                "or store it as text, then load the file again.")
            columns[fld.name] = pd.Series([None if v is None else v.decode(encoding, errors="replace")
                                           for v in values], dtype=object)
            notes.append(f"Column '{fld.name}' is stored as bytes; it was decoded as {encoding} text.")
        else:
            try:
                columns[fld.name] = col.to_pandas()
            except Exception:
                raise DataError(f"Column '{fld.name}' of '{name}' has a type this workbench cannot read "
                                f"({fld.type}); convert it to text or numbers.") from None
    frame = pd.DataFrame(columns) if columns else pd.DataFrame(index=range(table.num_rows))
    return _finish(frame, name, fmt, options, notes)


def _read_readstat(kind: str):
    def reader(data: bytes, name: str, options: ReadOptions, max_rows: int) -> ReadResult:
        import pyreadstat

        func = {"sav": pyreadstat.read_sav, "dta": pyreadstat.read_dta, "xpt": pyreadstat.read_xport,
                "sas7bdat": pyreadstat.read_sas7bdat}[kind]
        labelled = kind in ("sav", "dta")
        kwargs: dict[str, Any] = {"apply_value_formats": True, "formats_as_category": True} if labelled else {}
        if options.encoding is not None:
            kwargs["encoding"] = options.encoding
        title = FORMAT_TITLES[kind]
        try:
            _, meta = func(io.BytesIO(data), metadataonly=True, **({"encoding": options.encoding}
                                                                     if options.encoding else {}))
            rows = meta.number_rows if meta.number_rows is not None and meta.number_rows >= 0 else None
            _limit_rows(name, rows, max_rows)
            frame, meta = func(io.BytesIO(data), row_limit=max_rows + 1, **kwargs)
        except DataError:
            raise
        except Exception:
            raise DataError(f"'{name}' is not a readable {title} file; export it again or save it as CSV.") from None
        _limit_rows(name, len(frame), max_rows)
        if len(frame) == 0:
            raise DataError(f"'{name}' has no cases (its {frame.shape[1]} variables have no rows); choose a "
                            "file with data.")
        notes = []
        if labelled and getattr(meta, "variable_value_labels", None):
            used = [c for c in meta.variable_value_labels if c in frame.columns]
            if used:
                notes.append("Value labels are used as the values of " + ", ".join(f"'{c}'" for c in used) + ".")
        result = _finish(frame, name, kind, replace(options, encoding=None), notes)
        return replace(result, options=replace(result.options, encoding=options.encoding))
    return reader


def _xlsx_limit() -> int:
    """The most bytes a workbook's parts may unpack to (XML is parsed as a stream, but every byte costs time)."""
    return 4 * MAX_BYTES


def _open_book(data: bytes, name: str, **kwargs):
    """An openpyxl workbook (read-only), its zip first checked from its directory (:func:`check_zip`)."""
    import openpyxl

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            check_zip(zf, name, _xlsx_limit())
    except zipfile.BadZipFile:
        raise DataError(f"'{name}' is a damaged zip or Excel file; export it again.") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl warns about unknown extensions / styles
        return openpyxl.load_workbook(io.BytesIO(data), read_only=True, **kwargs)


def _sheet_rows(ws, name: str, sheet: str, max_rows: int) -> list[list[Any]]:
    """A sheet's rows, each cut after its last non-blank cell, refused once its extent passes the cell budget.

    The sheet's declared dimension (``<dimension ref="A1:XFD1048576"/>``)
    is not trusted: openpyxl would pad every row to it, so it is reset and
    each row comes as wide as its own last cell.  The real extent (rows so
    far by the widest row) is checked row by row against the free memory
    at :data:`XLSX_CELL_BYTES` a cell, so a stray cell at XFD1048576 is
    refused after one row of 16,384 values, not after 17 billion.
    """
    from openpyxl.utils import get_column_letter

    from .memory import available_memory, size_text

    budget = max(1, available_memory() // XLSX_CELL_BYTES)
    ws.reset_dimensions()
    rows: list[list[Any]] = []
    width = 0
    for row in ws.iter_rows(values_only=True):
        row = list(row)
        while row and _blank(row[-1]):
            row.pop()
        rows.append(row)
        width = max(width, len(row))
        if len(rows) > max_rows + 1:
            raise _over_rows(f"{name}' (sheet '{sheet}", max_rows)
        if len(rows) * width > budget:
            raise DataError(f"Sheet '{sheet}' of '{name}' reaches cell {get_column_letter(width)}{len(rows)}: "
                            f"{len(rows):,} rows by {width:,} columns, more cells than the "
                            f"{size_text(budget * XLSX_CELL_BYTES)} of memory free here holds; delete the stray "
                            "cells far from the table (Ctrl+End in Excel goes to the last one), or save the sheet "
                            "as CSV.")
    return rows


def _read_xlsx(data: bytes, name: str, options: ReadOptions, max_rows: int) -> ReadResult:
    try:
        book = _open_book(data, name, data_only=True)
    except DataError:
        raise
    except Exception:
        raise DataError(f"'{name}' is not a readable Excel workbook; open it in Excel and save it again, "
                        "or save it as CSV.") from None
    try:
        sheets = tuple(book.sheetnames)
        grids = {}

        def grid(sheet: str) -> list[list[Any]]:
            if sheet not in grids:
                grids[sheet] = _trim(_sheet_rows(book[sheet], name, sheet, max_rows))
            return grids[sheet]

        detected = []
        if options.sheet is not None:
            sheet = _pick_sheet(options.sheet, sheets, name)
            if not grid(sheet):
                others = [s for s in sheets if s != sheet and grid(s)]
                hint = (f"choose another sheet ({', '.join(others)})" if others else
                        "every sheet of the workbook is empty; choose another file")
                raise DataError(f"Sheet '{sheet}' of '{name}' is empty; {hint}.")
        else:
            full = [s for s in sheets if grid(s)]
            if not full:
                what = f"only sheet '{sheets[0]}' is" if len(sheets) == 1 else f"{len(sheets)} sheets are all"
                raise DataError(f"'{name}' is an Excel workbook whose {what} empty; choose a workbook with data.")
            sheet = full[0]
            detected.append("sheet")
        rows = grid(sheet)
    finally:
        book.close()
    width = max(len(r) for r in rows)
    rows = [r + [None] * (width - len(r)) for r in rows]
    header = options.header
    if header is None:
        header = options.names is None and detect_header(
            [["" if _blank(v) else str(v) for v in r] for r in rows[:_SAMPLE_RECORDS]])
        detected.append("header")
    raw = pd.DataFrame(rows, dtype=object)
    notes: list[str] = []
    frame = _apply_header(raw, name, header, options.names, notes)
    if len(frame) == 0:
        raise DataError(f"Sheet '{sheet}' of '{name}' has a header but no data rows; add rows or choose "
                        "another sheet.")
    _limit_rows(name, len(frame), max_rows)
    frame = frame.map(lambda v: None if _blank(v) else v)
    for col in frame.columns:
        values = frame[col].dropna()
        if len(values) and not values.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).all():
            frame[col] = frame[col].map(lambda v: v if v is None else
                                        (_plain_number(v) if isinstance(v, float) else str(v)))
    frame, missing = normalise(frame, options.na, options.decimal or ".")
    used = replace(options, sheet=sheet, header=header, delimiter=None, encoding=None, decimal=None)
    return ReadResult(frame=frame, format="xlsx", options=used, detected=tuple(detected), missing=missing,
                      sheets=sheets, notes=tuple(notes))


def sheet_names(data: bytes) -> list[str]:
    """The sheets of an Excel workbook (for a sheet picker); empty when the bytes are not a readable workbook."""
    try:
        book = _open_book(data, "upload")
        try:
            return list(book.sheetnames)
        finally:
            book.close()
    except Exception:  # noqa: BLE001 - the read itself reports what is wrong
        return []


def _trim(rows: list[list[Any]]) -> list[list[Any]]:
    """Drop empty rows at the end and empty columns at the right of a sheet's cells."""
    while rows and all(_blank(v) for v in rows[-1]):
        rows.pop()
    if not rows:
        return []
    width = max((max((j + 1 for j, v in enumerate(r) if not _blank(v)), default=0) for r in rows), default=0)
    return [list(r[:width]) for r in rows if True] if width else []


def _pick_sheet(wanted: str, sheets: Sequence[str], name: str) -> str:
    if wanted in sheets:
        return wanted
    if wanted.strip().isdigit() and 1 <= int(wanted) <= len(sheets):
        return sheets[int(wanted) - 1]
    raise DataError(f"'{name}' has no sheet '{wanted}'; its sheets are: {', '.join(sheets)}.")


_READERS = {
    "text": _read_text, "xlsx": _read_xlsx, "parquet": _read_parquet, "arrow": _read_arrow,
    "sav": _read_readstat("sav"), "dta": _read_readstat("dta"), "xpt": _read_readstat("xpt"),
    "sas7bdat": _read_readstat("sas7bdat"),
}


def describe(result: ReadResult) -> list[str]:
    """Sentences saying how a file was read (for pages and the CLI's text output)."""
    o = result.options
    parts = [f"format: {result.format_title}"]
    if o.delimiter is not None:
        parts.append(f"delimiter: {DELIMITER_NAMES.get(o.delimiter, repr(o.delimiter))}")
    if o.encoding is not None:
        parts.append(f"encoding: {o.encoding}")
    if o.header is not None:
        parts.append("first row: " + ("header" if o.header else "data"))
    if o.decimal == ",":
        parts.append("decimal comma")
    if o.sheet is not None:
        parts.append(f"sheet: {o.sheet}")
    return parts


def options_from(values: Iterable[tuple[str, Any]]) -> ReadOptions:
    """:class:`ReadOptions` from ``(key, value)`` pairs, skipping ``None`` values."""
    return ReadOptions(**{k: v for k, v in values if v is not None})
