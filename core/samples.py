"""Bundled sample tables: the UCI Adult data, two generators and the papers' toy tables.

A sample is named by a short spec string, as typed on the command line
(``python -m core sanitize census:300000 ...``) or picked in the pages:

- ``adult``: UCI Adult, 45,222 rows without missing values (the stand-in for
  the papers' CENSUS data), shipped in ``sample_data/adult.parquet``;
- ``census[:N]``: CENSUS-like, N Adult rows resampled with replacement and
  domains widened as in seed 003 section 7.3.2 so occupation has 50 values
  (default N = 500,000);
- ``hospital[:N]``: synthetic ICD-9-like diagnoses, 1,200 codes with
  Zipf-like frequencies (default N = 100,000), the large domain of seed 002
  section 1.1;
- ``toy-splu``: seed 000 Fig. 2(a) (9 rows);
- ``toy-sdr``: seed 002 Example 1's table T (42 rows; only the SA counts are
  the paper's);
- ``toy-bucket``: seed 003 Table 1 (the 4 rows printed);
- ``toy-ambiguity``: seed 004 Fig. 1(a) (8 people).

A toy table also carries the parameters its paper uses with it
(:attr:`Sample.suggested`, e.g. seed 002 Example 1's (rho1, rho2) =
(1/3, 2/3)), which the pages apply when the table is chosen.

Everything here is deterministic: a spec always gives the same table.  The
generators draw only uniform doubles from fixed-seed PCG64 streams (which
NumPy keeps stable across versions, unlike its other samplers) and derive
every other distribution from them by inverse transforms.
``census:N`` and ``hospital:N`` are nested like the papers' samples: the
first ``n`` rows of ``census:N`` are ``census:n`` for ``n <= N``.

Results are memoised in-process per (name, size); :func:`load_sample`
returns a fresh copy each time, so the caller may modify it freely.

References
----------
Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository.
https://doi.org/10.24432/C5XW20 (CC BY 4.0).
Seed 003 (Wang et al.), section 7.3.2 (domain scale-up ``v -> g v + r``) and
Table 5; seed 000 section 6.1 and seed 004 Fig. 10 (CENSUS domain sizes);
seed 002 section 1.1 (retention on large domains) and Example 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import DataError, clip

__all__ = ["Sample", "Suggestion", "list_samples", "is_sample", "load_sample", "MAX_SIZE", "ADULT_FILE"]

#: Largest N the pages offer for ``census:N`` and ``hospital:N`` (the app's interactive range).
MAX_SIZE = 5_000_000
#: Largest N a spec accepts; between the two, the memory estimate decides
#: (:func:`core.data.load.check_memory`: a sample is built as a frame, about
#: :data:`core.data.load.FRAME_BYTES_PER_ROW` bytes a row).
SPEC_MAX_SIZE = 10_000_000_000

#: The committed Adult extract (built by ``sample_data/build_adult.py``).
ADULT_FILE = Path(__file__).resolve().parent.parent / "sample_data" / "adult.parquet"

_ADULT_SOURCE = (
    "UCI Machine Learning Repository, 'Adult' (Becker & Kohavi 1996, "
    "doi:10.24432/C5XW20), from the 1994 US Census; CC BY 4.0"
)


@dataclass(frozen=True)
class Suggestion:
    """Parameters a paper uses with one of its toy tables, for one mechanism.

    The pages apply them when the sample is chosen (where the user has not
    set the parameter) and offer them as a one-click setting, so a lesson
    starts from the paper's numbers: seed 002 Example 1 is (rho1, rho2) =
    (1/3, 2/3), not the workbench default (1/13, 1/6).

    Attributes
    ----------
    mechanism : str
        Registry name (``"sdr"``); core.samples does not import the
        registry, the tests check that every suggestion resolves.
    values : tuple of (str, value)
        Parameter name and exact value (fractions as floats: ``1/3``).
    source : str
        Where the paper uses them (``"seed 002 Example 1"``), to be
        followed by the values in a sentence.
    """

    mechanism: str
    values: tuple[tuple[str, Any], ...]
    source: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.values)


@dataclass(frozen=True)
class Sample:
    """A bundled table and its sensible defaults.

    Attributes
    ----------
    name : str
        Spec name (``"adult"``, ``"census"``, ...).
    title : str
        Short human title.
    description : str
        One to three plain sentences: what it is, where from, what it is good for.
    sa : str
        Default sensitive attribute column.
    qi : tuple of str
        Default quasi-identifier (non-sensitive) columns.  Columns outside
        ``qi + (sa,)`` (e.g. a toy table's ``id``) are identifiers or extras.
    sized : bool
        Whether the spec accepts ``":N"`` rows.
    default_size : int or None
        Rows when no size is given (sized samples only).
    source : str
        Provenance and licence.
    suggested : tuple of Suggestion
        The paper's parameters for this table, per mechanism (toy tables
        only; empty for the data sets, whose papers sweep parameters).
    """

    name: str
    title: str
    description: str
    sa: str
    qi: tuple[str, ...]
    sized: bool
    default_size: int | None
    source: str
    suggested: tuple[Suggestion, ...] = ()

    def suggestion(self, mechanism: str) -> Suggestion | None:
        """The paper's parameters of ``mechanism`` for this table, or None."""
        return next((g for g in self.suggested if g.mechanism == mechanism), None)


_SAMPLES: tuple[Sample, ...] = (
    Sample(
        name="adult",
        title="UCI Adult (45,222 people)",
        description=(
            "The UCI Adult census extract (adult.data + adult.test, rows with a missing "
            "value removed), the public stand-in for the papers' CENSUS data with the same "
            "attributes. Occupation (14 values) is the sensitive attribute by default; "
            "relationship, income and hours_per_week are extra columns."
        ),
        sa="occupation",
        qi=("age", "workclass", "education", "marital_status", "race", "sex", "native_country"),
        sized=False,
        default_size=None,
        source=_ADULT_SOURCE,
    ),
    Sample(
        name="census",
        title="CENSUS-like (Adult resampled, 50 occupations)",
        description=(
            "Adult rows resampled with replacement (keeping their joint structure) to any "
            "size, with occupation, race and native_country widened as in seed 003 section "
            "7.3.2 (a value v becomes one of g sub-values 'v/1'..'v/g' at random) to the "
            "papers' CENSUS domain sizes: 50 occupations, 9 races, 83 countries. Use it to "
            "compare with the papers' OCC-N experiments and to test speed on 500K rows."
        ),
        sa="occupation",
        qi=("age", "workclass", "education", "marital_status", "race", "sex", "native_country"),
        sized=True,
        default_size=500_000,
        source="Generated from " + _ADULT_SOURCE,
    ),
    Sample(
        name="occ",
        title="Occ-N-d (CENSUS-like with density d, seed 004 §9.1)",
        description=(
            "Seed 004's Occ-100K-d tables: N rows (default 100,000) drawn with replacement from the first "
            "ceil(N/d) rows of census:N, so only about (100/d)% of the rows are distinct records and each "
            "repeats about d times: the larger d, the denser the table (seed 004 §9.1). Spec occ:N:d, "
            "d from 1 to 100 (default 1, which is census:N itself)."
        ),
        sa="occupation",
        qi=("age", "workclass", "education", "marital_status", "race", "sex", "native_country"),
        sized=True,
        default_size=100_000,
        source="Generated from census:N (itself from " + _ADULT_SOURCE + ")",
    ),
    Sample(
        name="census-2sa",
        title="CENSUS-like with Age in 10 intervals as a 2nd SA (seed 000 §6.4)",
        description=(
            "census:N (default 100,000) with Age generalised into ten intervals of about 10% of the rows each "
            "(column age_interval) and left out of the QIs: seed 000 Fig. 12's setting. Sanitize with SPLU-Gen "
            "and sa2 = age_interval to randomise both sensitive attributes."
        ),
        sa="occupation",
        qi=("workclass", "education", "marital_status", "race", "sex", "native_country"),
        sized=True,
        default_size=100_000,
        source="Generated from census:N (itself from " + _ADULT_SOURCE + ")",
    ),
    Sample(
        name="hospital",
        title="Hospital diagnoses (synthetic, 1,200 ICD-9-like codes)",
        description=(
            "Synthetic hospital stays whose diagnosis is one of 1,200 ICD-9-like codes with "
            "Zipf-like frequencies, mildly tied to age, sex, zip3, admission type and "
            "length of stay; no real patient is behind any row. On such a large domain "
            "uniform perturbation must keep almost no values (seed 002 section 1.1), which "
            "is where small domain randomization shows its point."
        ),
        sa="diagnosis",
        qi=("age", "sex", "zip3", "admission_type", "length_of_stay"),
        sized=True,
        default_size=100_000,
        source=(
            "Synthetic (generated by core/samples.py with a fixed seed); code strings only "
            "imitate the ICD-9-CM format and their frequencies are invented; public domain"
        ),
    ),
    Sample(
        name="toy-splu",
        title="SPLU toy table (seed 000, Fig. 2a)",
        description=(
            "The 9-row dataset D of seed 000 Fig. 2(a), exactly as printed: Age and Zip-Code "
            "are the quasi-identifier, Disease the sensitive attribute (Hiv 2, Flu 3, Fever 3, "
            "H5N1 1). The id column is the paper's tuple id, kept to follow its decoy-group "
            "examples; it is not a QI."
        ),
        sa="disease",
        qi=("age", "zip_code"),
        sized=False,
        default_size=None,
        source="Transcribed from seed 000 (Fu et al., small sum privacy and large sum utility), Fig. 2(a)",
        suggested=(
            # seed 000 section 4: "Let gamma = 3": three decoy groups of three distinct diseases, p = q = 1/3
            Suggestion("splu", (("gamma", 3),), "seed 000 §4, Fig. 3"),
            # seed 000 section 6.2.3.2 compares with Anatomy at l = gamma
            Suggestion("anatomy", (("l", 3),), "seed 000 §6.2.3.2 (ℓ = γ)"),
        ),
    ),
    Sample(
        name="toy-sdr",
        title="Small domain randomization toy (seed 002, Example 1)",
        description=(
            "Seed 002 Example 1's table T: 42 records whose SA values x1..x10 have the counts "
            "12, 8, 6, 5, 4, 3, 1, 1, 1, 1 (the extracted text prints the last four as 0; "
            "the sub-tables T1 and T2 of the example sum to these). Only the SA counts come "
            "from the paper; the age_group and sex columns are made up so queries have "
            "something to select on."
        ),
        sa="sa",
        qi=("age_group", "sex"),
        sized=False,
        default_size=None,
        source="SA counts from seed 002 (Chaytor & Wang), Example 1; QI columns invented",
        suggested=(
            # Example 1: T1 (36 records, gamma 4, diagonal 4/9) and T2 (6 records, gamma 10, diagonal 2/3)
            Suggestion("sdr", (("rho1", float(Fraction(1, 3))), ("rho2", float(Fraction(2, 3)))),
                       "seed 002 Example 1"),
            # the same example unpartitioned: gamma = 4, diagonal 4/13 over m = 10
            Suggestion("uniform", (("p", None), ("rho1", float(Fraction(1, 3))), ("rho2", float(Fraction(2, 3)))),
                       "seed 002 Example 1, unpartitioned"),
        ),
    ),
    Sample(
        name="toy-bucket",
        title="Bucketization toy table (seed 003, Table 1)",
        description=(
            "The four rows of seed 003 Table 1 as printed (the paper elides the rest with "
            "'...'): Gender and Zipcode are the QIs, Disease the SA. Example 2 buckets rows "
            "1-2 and 3-4, so Alice (F, 61434) has HIV with probability 50%."
        ),
        sa="disease",
        qi=("gender", "zipcode"),
        sized=False,
        default_size=None,
        source="Transcribed from seed 003 (Wang et al., inferential vs differential privacy), Table 1",
    ),
    Sample(
        name="toy-ambiguity",
        title="Ambiguity toy table (seed 004, Fig. 1a)",
        description=(
            "The 8 people of seed 004 Fig. 1(a); the paper's QI-groups are rows 1-4 (presence "
            "1/3) and 5-8 (presence 4/9), and query Q2 (Age >= 50, Zipcode = 23000, "
            "diabetes) is estimated as 7/18. The extracted figure lost the Zipcode header and "
            "garbled Henry's row; both were restored from Fig. 2 and Fig. 4(a). The name "
            "column is the explicit identifier, not a QI."
        ),
        sa="disease",
        qi=("age", "gender", "zipcode"),
        sized=False,
        default_size=None,
        source="Transcribed from seed 004 (Hui Wang, Ambiguity and PriView), Fig. 1(a)",
    ),
)

_BY_NAME = {sample.name: sample for sample in _SAMPLES}


def list_samples() -> list[Sample]:
    """All bundled samples, in display order (a new list each call)."""
    return list(_SAMPLES)


def _choices() -> str:
    return ", ".join(s.name + ("[:N]" if s.sized else "") for s in _SAMPLES)


def _split(spec: str) -> tuple[str, str | None]:
    name, sep, size = spec.strip().partition(":")
    return name.strip().lower(), (size.strip() if sep else None)


def is_sample(spec: str) -> bool:
    """Whether ``spec`` names a bundled sample (``"adult"``, ``"census:300000"``...).

    Only the name before ``:`` is checked, so ``"census:abc"`` is a sample
    spec (and :func:`load_sample` then explains what is wrong with the size),
    while ``"data/adult.csv"`` is not.

    Examples
    --------
    >>> is_sample("census:300000"), is_sample("toy-splu"), is_sample("adult.csv")
    (True, True, False)
    """
    if not isinstance(spec, str):
        return False
    return _split(spec)[0] in _BY_NAME


def _parse(spec: str) -> tuple[Sample, int | None]:
    if not isinstance(spec, str):
        raise TypeError(f"A sample spec must be a string like 'census:300000'. Got {type(spec).__name__}.")
    name, size_text = _split(spec)
    sample = _BY_NAME.get(name)
    if sample is None:
        raise DataError(f"There is no bundled sample called {clip(spec.strip())!r}; choose one of {_choices()}.")
    if not sample.sized:
        if size_text is not None:
            raise DataError(
                f"The sample {name!r} has a fixed size and takes no ':N'; "
                "only census[:N], census-2sa[:N], hospital[:N] and occ[:N[:d]] do."
            )
        return sample, None
    if size_text is None:
        return sample, sample.default_size
    if sample.name == "occ":
        size_part, _, density = size_text.partition(":")
        digits = size_part.strip().replace("_", "").replace(",", "") or str(sample.default_size)
        if not re.fullmatch(r"[0-9]+", digits) or not 1 <= int(digits) <= SPEC_MAX_SIZE:
            raise DataError(f"The size in {spec.strip()!r} must be a whole number of rows from 1 to "
                            f"{SPEC_MAX_SIZE:,} (e.g. occ:100000:3).")
        size = int(digits)
        _fits(spec, size)
        text = density.strip() or "1"
        if not re.fullmatch(r"[0-9]+", text) or not 1 <= int(text) <= 100:
            raise DataError(f"The density in {spec.strip()!r} must be a whole number d from 1 to 100 "
                            "(e.g. occ:100000:3).")
        return sample, (size, int(text))
    digits = size_text.replace("_", "").replace(",", "")
    if not re.fullmatch(r"[0-9]+", digits) or not 1 <= int(digits) <= SPEC_MAX_SIZE:
        raise DataError(
            f"The size in {clip(spec.strip())!r} must be a whole number of rows from 1 to {SPEC_MAX_SIZE:,} "
            f"(e.g. {name}:{sample.default_size})."
        )
    _fits(spec, int(digits))
    return sample, int(digits)


def _fits(spec: str, size: int) -> None:
    """Refuse a sample size the memory free cannot hold as a frame (the fixed 5M cap of earlier versions)."""
    from .data.load import FRAME_BYTES_PER_ROW, check_memory

    check_memory(spec.strip(), size, FRAME_BYTES_PER_ROW, "built as a table in memory,",
                 "stream it to a Parquet dataset with python -m core generate census --rows N --out DIR and "
                 "sanitize that folder (read column by column), or ")


def load_sample(spec: str) -> tuple[pd.DataFrame, Sample]:
    """Load a bundled sample by spec.

    Parameters
    ----------
    spec : str
        ``"adult"``, ``"census"``, ``"census:N"``, ``"hospital"``,
        ``"hospital:N"`` or a toy name (see :func:`list_samples`); case and
        surrounding spaces are ignored, ``N`` may use ``_`` or ``,`` as
        thousands separators and must lie in ``1..10,000,000,000`` and fit in
        memory (:func:`_fits`).

    Returns
    -------
    table : pandas.DataFrame
        A fresh copy of the memoised table (the caller may modify it).
        Categorical attributes are string columns of pandas' default string
        dtype (``object`` holding ``str`` in pandas 2), never ``category``,
        so they behave like an uploaded CSV (no ``observed=`` warnings in
        ``groupby``); ages, hours, lengths of stay and the toy zip codes are
        ``int64``.  Index is ``0..len-1``.
    sample : Sample
        Its description and default SA / QI columns.

    Raises
    ------
    DataError
        Unknown name, a size on a fixed-size sample, or a bad size; the
        message names the valid choices.

    Examples
    --------
    >>> table, sample = load_sample("toy-sdr")
    >>> len(table), sample.sa, table[sample.sa].nunique()
    (42, 'sa', 10)
    """
    sample, size = _parse(spec)
    rows = size[0] if isinstance(size, tuple) else size
    if rows is not None and rows >= KEEP_BELOW_ROWS:  # built afresh each time: the caller keeps it, or not
        return _make(sample.name, size), sample
    return _build(sample.name, size).copy(deep=True), sample


#: samples of this many rows or more are not kept by :func:`_build` between loads.  Choice: a whole census 5M
#: frame (72 MB) was held here for the server's life, outside the pages' byte-bounded cache, which keeps the
#: copy the page uses; building it again takes a few seconds, against minutes of use of the one loaded.
KEEP_BELOW_ROWS = 1_000_000


@lru_cache(maxsize=4)
def _build(name: str, size: int | None) -> pd.DataFrame:
    """:func:`_make`, the last four kept (each load gets a copy)."""
    return _make(name, size)


def _make(name: str, size: int | None) -> pd.DataFrame:
    if name == "adult":
        return _adult_frame()
    if name == "census":
        return _census(size)
    if name == "hospital":
        return _hospital(size)
    if name == "occ":
        return _occ(*(size if isinstance(size, tuple) else (size or 100_000, 1)))
    if name == "census-2sa":
        base = _census(size)
        codes, labels = pd.factorize(base["age"], sort=True)
        band, names = intervals(codes, np.asarray(labels), 10)
        return base.assign(age_interval=names[band])
    return _TOYS[name]()


OCC_SEED = 20_100_503


def intervals(codes: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Generalise ordered codes into about ``k`` quantile intervals (seed 000 §6.4's Age in ten intervals).

    Cuts at the k-quantiles of the codes, merged where ties make two equal;
    returns each row's interval and the labels ``"01: lo-hi"`` (the
    zero-padded index first, so the labels sort in interval order).
    """
    codes = np.asarray(codes)
    cuts = np.unique(np.quantile(codes, np.linspace(0, 1, k + 1)[1:-1], method="higher"))
    cuts = cuts[cuts > 0]
    band = np.searchsorted(cuts, codes, side="right")
    lo = np.concatenate(([0], cuts))
    hi = np.concatenate((cuts - 1, [len(labels) - 1]))
    names = np.array([f"{i + 1:02d}: {labels[a]}-{labels[b]}" if a != b else f"{i + 1:02d}: {labels[a]}"
                      for i, (a, b) in enumerate(zip(lo, hi))], dtype=object)
    return band, names


def _occ(size: int, density: int) -> pd.DataFrame:
    """Seed 004's Occ-N-d: N rows drawn with replacement from the first ceil(N/d) rows of census:N.

    Seed 004 §9.1 says only that "the sensitive values are distributed to
    (100/d)% of tuples" and that a larger d is denser.  We read it as: the
    rows are copies of a pool of (100/d)% of the tuples (QI values and
    occupation together, keeping their correlation), so each distinct
    record repeats about d times and a QI-group can cover fewer distinct QI
    values.  d = 1 is census:N unchanged.  The draw uses a fixed seed per
    (N, d), so a spec always gives the same table.
    """
    base = _census(size)
    if density == 1:
        return base
    pool = -(-size // density)
    rng = np.random.default_rng([OCC_SEED, size, density])
    rows = (rng.random(size) * pool).astype(np.int64)
    return base.iloc[rows].reset_index(drop=True)


# ---------------------------------------------------------------------------
# Adult

@lru_cache(maxsize=1)
def _adult_columns() -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Adult as ``{column: (codes, labels)}``; ``labels`` is None for numbers.

    Reading the dictionary-encoded Parquet gives categorical columns; the
    generators work on their integer codes and look labels up only once at
    the end.
    """
    if not ADULT_FILE.is_file():
        raise DataError(
            f"The bundled Adult file {ADULT_FILE} is missing; rebuild it with "
            "'python sample_data/build_adult.py'."
        )
    frame = pd.read_parquet(ADULT_FILE)
    columns = {}
    for column in frame.columns:
        series = frame[column]
        if isinstance(series.dtype, pd.CategoricalDtype):
            labels = np.asarray(series.cat.categories, dtype=object)
            columns[column] = (series.cat.codes.to_numpy(np.int64), labels)
        else:
            columns[column] = (series.to_numpy(np.int64), None)
    return columns


def _adult_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            column: codes if labels is None else labels[codes]
            for column, (codes, labels) in _adult_columns().items()
        }
    )


# ---------------------------------------------------------------------------
# census:N

#: Fixed seed of the census generator (any change alters every census:N).
CENSUS_SEED = 20_130_703
CENSUS_COLUMNS = (
    "age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country",
)
#: Target domain sizes for the widened columns: occupation 50 (seeds 000,
#: 002, 003, 004), race 9 (all four), country 83 (seeds 000 and 004; seed
#: 002 says 70).  Adult has 14, 5 and 41.  Age (74 vs 76-78), education (16
#: vs 14-17), marital status (7 vs 6), work class (7 vs 7-10) and sex are
#: already close and stay as they are.
CENSUS_WIDEN = {"occupation": 50, "race": 9, "native_country": 83}
#: Columns whose sub-values get geometric shares (1/2, 1/4, ...) instead of
#: equal ones.  Seed 003 only says r is random; seed 002 §6.2 reports the
#: balanced OCC data with a largest share of 7%, and equal splits would give
#: 3.4% (so flat that algorithm PP keeps one sub-table).  Geometric shares
#: give occupation a largest share of about 7%, like the papers' data.
CENSUS_SKEWED = {"occupation"}


def _split_factors(counts: np.ndarray, target: int) -> np.ndarray:
    """How many sub-values each value gets so that they total ``target``.

    Seed 003 section 7.3.2 multiplies every value by the same factor g; a
    single g cannot turn 14 occupations into 50, so each value gets
    ``floor(target/m)`` or one more, the larger factor going to the most
    frequent values (ties: label order), which also keeps the widened
    distribution as flat as this rule allows.
    """
    m = len(counts)
    base, extra = divmod(target, m)
    order = np.argsort(-counts, kind="stable")
    factors = np.full(m, base, dtype=np.int64)
    factors[order[:extra]] += 1
    return factors


def _streams(seed: int, count: int) -> list[np.random.Generator]:
    """Independent generators, one per attribute, so row i of every stream
    depends only on rows < i (which makes the samples nested)."""
    children = np.random.SeedSequence(seed).spawn(count)
    return [np.random.Generator(np.random.PCG64(child)) for child in children]


def _census(size: int) -> pd.DataFrame:
    """census:N as a frame: each labelled column a pandas Categorical over its labels (one byte a row).

    The same table as a frame of strings, value for value (the same content
    hash, codes and labels when bound), in a ninth of the memory: at 5M rows
    72 MB instead of 652 MB, which left the app's 1 GB cache no room for a
    slider's kept draws.
    """
    return pd.DataFrame({column: codes if labels is None else pd.Categorical.from_codes(codes, categories=labels)
                         for column, (codes, labels) in census_codes(0, size).items()})


def census_codes(start: int, count: int, seed: int | None = None) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Rows ``start .. start + count - 1`` of census:N (any N above them) as ``{column: (codes, labels)}``.

    ``labels`` is None for a number column (``codes`` are then the values).
    Row i draws the i-th uniform of each of the generator's PCG64 streams
    (one resampling stream, one per widened column); a batch advances each
    stream to its first row (:meth:`numpy.random.PCG64.advance`, exact), so
    any split into batches gives the rows of ``census:N`` itself, byte for
    byte, and a batch costs the same wherever it starts.  This is what
    ``python -m core generate census`` streams.  ``seed`` replaces the
    generator's fixed seed :data:`CENSUS_SEED` (None: census:N itself).
    """
    adult = _adult_columns()
    n_adult = len(adult["age"][0])
    children = np.random.SeedSequence(CENSUS_SEED if seed is None else int(seed)).spawn(1 + len(CENSUS_WIDEN))

    def uniforms(k: int) -> np.ndarray:
        bg = np.random.PCG64(children[k])
        if start:
            bg.advance(int(start))
        return np.random.Generator(bg).random(int(count))

    # Resample rows with replacement; floor(u * n) of a uniform double (not
    # integers()) keeps the stream identical across NumPy versions.
    rows = (uniforms(0) * n_adult).astype(np.int64)
    data: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    widen = 0
    for column in CENSUS_COLUMNS:
        codes, labels = adult[column]
        codes = codes[rows]
        if labels is None or column not in CENSUS_WIDEN:
            data[column] = (codes, labels)
            continue
        # Seed 003 section 7.3.2: v -> g v + r, r uniform in 0..g-1, here with
        # a per-value g; the label of sub-value r is "v/(r+1)".
        factors = _split_factors(np.bincount(adult[column][0], minlength=len(labels)), CENSUS_WIDEN[column])
        offsets = np.concatenate(([0], np.cumsum(factors)[:-1]))
        new_labels = np.array(
            [
                label if g == 1 else f"{label}/{r + 1}"
                for label, g in zip(labels, factors)
                for r in range(g)
            ],
            dtype=object,
        )
        widen += 1
        u = uniforms(widen)
        if column in CENSUS_SKEWED:
            # sub-value r of a value split g ways has share 2^(g-1-r) / (2^g - 1):
            # inverse CDF of that distribution, vectorised
            g = factors[codes].astype(float)
            total = 2.0 ** g - 1.0
            r = g - np.floor(np.log2(total * (1.0 - u) + 1.0)) - 1.0
            r = np.clip(r, 0, g - 1).astype(np.int64)
        else:
            r = (u * factors[codes]).astype(np.int64)
        data[column] = (offsets[codes] + r, new_labels)
    return data


# ---------------------------------------------------------------------------
# hospital:N

#: Fixed seeds of the hospital generator: one for the code catalogue and the
#: per-code profiles (independent of N), one for the rows.
HOSPITAL_SEED = 20_120_827
HOSPITAL_CODES = 1_200
#: Zipf-like frequencies: the code of rank k has weight 1 / (k + 3).
#: Top code about 4.3%, top ten about 23%, rarest about 0.014%.
_ZIPF_OFFSET, _ZIPF_EXPONENT = 3.0, 1.0
ADMISSION_TYPES = np.array(["Emergency", "Urgent", "Elective", "Newborn", "Trauma"], dtype=object)

# ICD-9-CM chapters (first code, last code, name, mean age, age sd).
_CHAPTERS = (
    (1, 139, "infectious", 50, 18),
    (140, 239, "neoplasms", 64, 13),
    (240, 279, "endocrine", 60, 15),
    (280, 289, "blood", 55, 18),
    (290, 319, "mental", 42, 15),
    (320, 389, "nervous", 58, 18),
    (390, 459, "circulatory", 70, 12),
    (460, 519, "respiratory", 62, 18),
    (520, 579, "digestive", 55, 16),
    (580, 629, "genitourinary", 58, 17),
    (630, 679, "pregnancy", 29, 6),
    (680, 709, "skin", 50, 18),
    (710, 739, "musculoskeletal", 60, 14),
    (740, 759, "congenital", 12, 10),
    (760, 779, "perinatal", 0, 0),
    (780, 799, "symptoms", 52, 18),
    (800, 999, "injury", 45, 20),
)


def _catalogue(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """1,200 distinct ICD-9-like code strings and their 3-digit categories.

    Categories are drawn from 001-999; a category has one code ("486"),
    one-decimal sub-codes ("428.0", "428.1"...) or two-decimal ones
    ("250.00", "250.01"...), as ICD-9-CM does.  Ordered by code.
    """
    categories = np.sort(np.argsort(rng.random(999), kind="stable")[:420] + 1)
    codes, parents = [], []
    for category in categories:
        kind, count_u, digits_u = rng.random(3)
        stem = f"{category:03d}"
        if kind < 0.15:
            subs = [stem]
        else:
            count = 1 + int(count_u * 8)  # 1..8 sub-codes
            first = int(digits_u * (10 - count + 1))
            if kind < 0.30:
                tenth = first % 10
                subs = [f"{stem}.{tenth}{d}" for d in range(count)]
            else:
                subs = [f"{stem}.{first + d}" for d in range(count)]
        codes.extend(subs)
        parents.extend([int(category)] * len(subs))
    if len(codes) < HOSPITAL_CODES:  # pragma: no cover - guarded by the tests
        raise RuntimeError("hospital catalogue too small; change HOSPITAL_SEED")
    # Keep a random HOSPITAL_CODES of them (1,736 drawn), in code order,
    # so every chapter 001-999 stays represented.
    keep = np.sort(np.argsort(rng.random(len(codes)), kind="stable")[:HOSPITAL_CODES])
    return np.array(codes, dtype=object)[keep], np.array(parents)[keep]


@lru_cache(maxsize=1)
def _hospital_model() -> dict[str, np.ndarray]:
    """Code catalogue and per-code profiles (fixed; independent of N)."""
    rng = np.random.Generator(np.random.PCG64(HOSPITAL_SEED))
    codes, parents = _catalogue(rng)
    m = len(codes)
    u = rng.random((m, 8))
    starts = np.array([c[0] for c in _CHAPTERS])
    chapter = np.searchsorted(starts, parents, side="right") - 1
    names = np.array([c[2] for c in _CHAPTERS], dtype=object)[chapter]
    # Zipf ranks given to the codes in a random order.
    rank = np.empty(m, dtype=np.int64)
    rank[np.argsort(u[:, 0], kind="stable")] = np.arange(1, m + 1)
    weight = (rank + _ZIPF_OFFSET) ** -_ZIPF_EXPONENT
    # Age: chapter mean plus a per-code shift of up to +-8 years.
    age_mu = np.array([c[3] for c in _CHAPTERS], float)[chapter]
    age_sd = np.array([c[4] for c in _CHAPTERS], float)[chapter]
    shift = (names != "perinatal") & (names != "pregnancy")
    age_mu = age_mu + np.where(shift, (u[:, 1] - 0.5) * 16, 0.0)
    pregnancy = names == "pregnancy"
    age_lo = np.where(pregnancy, 15, 0)
    age_hi = np.where(pregnancy, 49, 99)
    # Share of women: 35-65% per code; pregnancy codes are women only.
    female = np.where(names == "pregnancy", 1.0, 0.35 + 0.30 * u[:, 2])
    # Admission type probabilities (Emergency, Urgent, Elective, Newborn, Trauma).
    elective = 0.05 + 0.50 * u[:, 3]
    elective = np.where(np.isin(names, ["neoplasms", "musculoskeletal"]), 0.3 + elective, elective)
    elective = np.minimum(elective, 0.9)
    probs = np.stack(
        [0.75 * (1 - elective), 0.25 * (1 - elective), elective, np.zeros(m), np.zeros(m)], axis=1
    )
    injury = names == "injury"
    probs[injury] = probs[injury] * 0.7
    probs[injury, 4] = 0.3
    probs[names == "perinatal"] = [0.0, 0.0, 0.0, 1.0, 0.0]
    probs[names == "pregnancy"] = [0.3, 0.5, 0.2, 0.0, 0.0]
    # Mean length of stay (days beyond the first): 1-9 days per code.
    stay = 1.0 + 8.0 * u[:, 4] ** 2
    # Zip3: 300 areas, 30 per first digit, with lognormal-ish populations;
    # each code leans towards one first digit ("region") for 25% of its stays.
    # (d01..d99 within first digit d, so never "000").
    last_two = np.sort(np.argsort(rng.random((10, 99)), axis=1, kind="stable")[:, :30], axis=1) + 1
    zip_numbers = np.arange(10)[:, None] * 100 + last_two
    population = np.exp(2.0 * rng.random((10, 30)))  # ratio up to e^2 ~ 7 between areas
    home_region = (u[:, 5] * 10).astype(np.int64)
    return {
        "codes": codes,
        "cdf": _cdf(weight),
        "age_mu": age_mu,
        "age_sd": age_sd,
        "age_lo": age_lo,
        "age_hi": age_hi,
        "female": female,
        "admission_cdf": _cdf(probs),
        "stay": stay,
        "zip_labels": np.array([f"{z:03d}" for z in zip_numbers.ravel()], dtype=object),
        # Cumulative population, overall and within each region (row of 30).
        "zip_cdf": _cdf(population.ravel()),
        "zip_region_cdf": _cdf(population),
        "home_region": home_region,
    }


def _cdf(weights: np.ndarray) -> np.ndarray:
    """Cumulative distribution along the last axis, ending at exactly 1.0
    (so ``searchsorted(cdf, u, side="right")`` stays in range for u < 1)."""
    cdf = np.cumsum(weights / weights.sum(axis=-1, keepdims=True), axis=-1)
    cdf[..., -1] = 1.0
    return cdf


def _rowwise_inverse_cdf(cdfs: np.ndarray, which: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Category drawn by u for each row from its own distribution ``cdfs[which]``.

    One ``searchsorted`` for all rows: distribution j's cdf is shifted by j,
    so its values lie in (j, j+1] and the key ``j + u`` can only land in it.
    Zero-probability categories repeat the previous value and are skipped.
    Needs no (rows x categories) temporary, so 5M rows stay cheap.
    """
    k = cdfs.shape[1]
    flat = (cdfs + np.arange(len(cdfs))[:, None]).ravel()
    return np.searchsorted(flat, which + u, side="right") - which * k


def _hospital(size: int) -> pd.DataFrame:
    model = _hospital_model()
    s = _streams(HOSPITAL_SEED + 1, 8)
    # Inverse-CDF draws from uniform doubles only (stable across NumPy versions).
    code = np.searchsorted(model["cdf"], s[0].random(size), side="right")
    # Age: normal by Box-Muller, per-code mean and sd, clipped to 0..99
    # (15..49 for pregnancy codes).
    u1, u2 = s[1].random(size), s[7].random(size)
    normal = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
    age = np.rint(model["age_mu"][code] + model["age_sd"][code] * normal)
    age = np.clip(age, model["age_lo"][code], model["age_hi"][code]).astype(np.int64)
    sex = np.where(s[2].random(size) < model["female"][code], "F", "M").astype(object)
    # Admission type: inverse CDF of the row's code.
    admission = _rowwise_inverse_cdf(model["admission_cdf"], code, s[3].random(size))
    # Length of stay: 1 + exponential days, longer with age (x1 at 0, x2 at 100).
    mean = model["stay"][code] * (1.0 + age / 100.0)
    length_of_stay = np.minimum(1 + np.floor(-mean * np.log1p(-s[4].random(size))), 365).astype(np.int64)
    # Zip3: 75% from the overall population, 25% from the code's home region.
    pick_home = s[5].random(size) < 0.25
    u = s[6].random(size)
    overall = np.searchsorted(model["zip_cdf"], u, side="right")
    region = model["home_region"][code]
    local = region * 30 + _rowwise_inverse_cdf(model["zip_region_cdf"], region, u)
    zip_index = np.where(pick_home, local, overall)
    return pd.DataFrame(
        {
            "age": age,
            "sex": sex,
            "zip3": model["zip_labels"][zip_index],
            "admission_type": ADMISSION_TYPES[admission],
            "length_of_stay": length_of_stay,
            "diagnosis": model["codes"][code],
        }
    )


# ---------------------------------------------------------------------------
# Toy tables, exactly as printed in the papers

def _toy_splu() -> pd.DataFrame:
    # Seed 000 Fig. 2(a), "Given dataset D" (left half of the figure).
    rows = [
        (1, 45, "[12k-17k]", "Hiv"),
        (2, 33, "[20k-33k]", "Flu"),
        (3, 24, "[12k-17k]", "Flu"),
        (4, 76, "[20k-33k]", "Fever"),
        (5, 61, "[34k-35k]", "Hiv"),
        (6, 32, "[12k-17k]", "Flu"),
        (7, 55, "[34k-35k]", "Fever"),
        (8, 30, "[20k-33k]", "Fever"),
        (9, 22, "[12k-17k]", "H5N1"),
    ]
    return _frame(rows, ("id", "age", "zip_code", "disease"))


def _toy_sdr() -> pd.DataFrame:
    # Seed 002 Example 1: counts of x1..x10 in T.  The QI columns are made
    # up: a fixed round-robin over four age groups and two sexes.
    counts = (12, 8, 6, 5, 4, 3, 1, 1, 1, 1)
    values = [f"x{i}" for i, c in enumerate(counts, start=1) for _ in range(c)]
    groups = ("20-29", "30-39", "40-49", "50-59")
    rows = [(groups[i % 4], "F" if (i // 4) % 2 == 0 else "M", v) for i, v in enumerate(values)]
    return _frame(rows, ("age_group", "sex", "sa"))


def _toy_bucket() -> pd.DataFrame:
    # Seed 003 Table 1: the four rows printed before the "...".
    rows = [
        ("M", 54321, "Brain Tumor"),
        ("M", 54322, "Indigestion"),
        ("F", 61234, "Cancer"),
        ("F", 61434, "HIV"),
    ]
    return _frame(rows, ("gender", "zipcode", "disease"))


def _toy_ambiguity() -> pd.DataFrame:
    # Seed 004 Fig. 1(a).  The extraction dropped the "Zipcode" header and
    # printed Henry's row as "60 60 M 12000 stroke"; Henry is (60, M, 12000,
    # stroke) in the possible world 1 of Fig. 4(a) (the original data) and
    # in the auxiliary tables of Fig. 2.
    rows = [
        ("Alan", 45, "M", 11000, "diabetes"),
        ("Charles", 20, "M", 12000, "flu"),
        ("George", 50, "M", 23000, "diarrhea"),
        ("Henry", 60, "M", 12000, "stroke"),
        ("Alice", 20, "F", 54000, "leukemia"),
        ("Carol", 50, "F", 23000, "diabetes"),
        ("Grace", 60, "F", 23000, "leukemia"),
        ("Helen", 60, "F", 21000, "dyspepsia"),
    ]
    return _frame(rows, ("name", "age", "gender", "zipcode", "disease"))


def _frame(rows: list[tuple], columns: tuple[str, ...]) -> pd.DataFrame:
    # Strings get pandas' default string dtype (object in pandas 2), as the
    # generated samples and an uploaded CSV do.
    frame = pd.DataFrame(rows, columns=list(columns))
    for column in frame.columns:
        if frame[column].dtype.kind in "iu":
            frame[column] = frame[column].astype(np.int64)
    return frame


_TOYS = {
    "toy-splu": _toy_splu,
    "toy-sdr": _toy_sdr,
    "toy-bucket": _toy_bucket,
    "toy-ambiguity": _toy_ambiguity,
}
