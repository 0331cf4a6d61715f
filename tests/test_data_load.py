"""The columnar data path (core.data.load, core.data.write, core.data.generate): same codes as the frame path,
datasets and globs, bad input in one sentence, the memory estimate, batch writers that leave nothing partial."""

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.data import load as L
from core.data import write as W
from core.errors import DataError
from core.table import bind, load

ROOT = Path(__file__).resolve().parent.parent


def _frame(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(17, 90, n),
        "city": rng.choice([" Paris", "Lyon ", "Nice", "?", "NA", "", " lyon", "Zürich", "=cmd"], n),
        "num_text": rng.choice(["1", "2.0", "3", "-0", "4.5", "10"], n),
        "wide": [f"v{i}" for i in rng.integers(0, 2000, n)],
        "score": rng.normal(size=n).round(2),
        "flag": rng.choice([True, False], n),
        "occ": rng.choice(["a", "b", "c", "d"], n),
    })
    df["age"] = df["age"].astype("Int64")
    df.loc[rng.random(n) < 0.05, "age"] = None
    return df


def _write(df, path):
    ext = path.suffix
    if ext == ".parquet":
        df.to_parquet(path, row_group_size=700)
    elif ext == ".feather":
        df.to_feather(path, chunksize=900)
    else:
        df.to_csv(path, index=False)
    return path


def _same(a, b):
    assert a.rows_dropped == b.rows_dropped and a.n == b.n
    assert a.qi_numeric == b.qi_numeric
    for x, y in zip((a.sa_codes, *a.qi_codes), (b.sa_codes, *b.qi_codes)):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    for x, y in zip((a.sa_labels, *a.qi_labels), (b.sa_labels, *b.qi_labels)):
        assert x.dtype == y.dtype and np.array_equal(x, y), (x[:5], y[:5])


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 97 rows / 4 KB so every table spans many batches and dictionaries grow past 255 values."""
    monkeypatch.setattr(L, "BATCH_ROWS", 97)
    monkeypatch.setattr(L, "CSV_BLOCK_BYTES", 4096)


@pytest.mark.slow  # about 1 s over the three formats
@pytest.mark.parametrize("ext", [".parquet", ".feather", ".csv"])
def test_columnar_codes_and_labels_equal_the_frame_path(tmp_path, ext, small_batches):
    path = _write(_frame(), tmp_path / f"t{ext}")
    old, _ = load(path, columnar=False)
    new, _ = load(path, columnar=True)
    assert new.frame is None and old.frame is not None
    assert len(new) == len(old) == 3000
    for sa, qi in [("occ", ["age", "city", "num_text", "wide", "score", "flag"]), ("city", ["age", "occ"])]:
        a, b = bind(old, sa, qi), bind(new, sa, qi)
        _same(a, b)
        c1, c2 = a.column("wide"), b.column("wide")  # a second SA: read again from the source
        assert np.array_equal(c1.codes, c2.codes) and np.array_equal(c1.labels, c2.labels)
    # the missing markers and blanks were dropped exactly as on the frame path
    assert bind(new, "city", ["occ"]).rows_dropped == bind(old, "city", ["occ"]).rows_dropped > 0


def test_banded_qi_equals_the_frame_path(tmp_path):
    path = _write(_frame(), tmp_path / "t.parquet")
    a = bind(load(path, columnar=False)[0], "occ", ["age", "city"], bands={"age": {"method": "quantiles", "count": 4}})
    b = bind(load(path, columnar=True)[0], "occ", ["age", "city"], bands={"age": {"method": "quantiles", "count": 4}})
    _same(a, b)
    with pytest.raises(DataError, match="'city' is not numeric"):
        bind(load(path, columnar=True)[0], "occ", ["age", "city"], bands={"city": {"method": "width", "width": 5}})


def test_encode_gives_the_smallest_code_type(tmp_path):
    path = _write(_frame(), tmp_path / "t.parquet")
    src = L.open_source(path)
    enc = src.encode(["occ", "wide", "age"])
    assert enc["occ"].codes.dtype == np.uint8 and enc["wide"].codes.dtype == np.uint16
    assert enc["age"].numeric and enc["age"].missing().sum() > 0
    assert not enc["occ"].missing().any() and enc["occ"].labels.tolist() == ["a", "b", "c", "d"]


@pytest.mark.slow  # about 0.8 s
def test_dataset_folder_and_glob_read_as_one_table(tmp_path):
    df = _frame(2000)
    folder = tmp_path / "ds"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[part].to_parquet(folder / f"part-{i}.parquet")
    (folder / "_SUCCESS").write_bytes(b"")
    whole = _write(df, tmp_path / "whole.parquet")
    ref = bind(load(whole, columnar=False)[0], "occ", ["age", "city"])
    for spec in (folder, str(folder / "part-*.parquet")):
        table, _ = load(spec)
        assert table.frame is None and len(table) == 2000
        _same(ref, bind(table, "occ", ["age", "city"]))


@pytest.mark.parametrize("case, fragment", [
    ("glob", "matches no file"),
    ("schema", "Column 'score' is large_string in 'b.parquet' but double in 'a.parquet'"),
    ("missing", "is in some parts of"),
    ("empty", "is a folder without data files"),
    ("mixed", "give files of one format"),
])
def test_bad_datasets_give_one_sentence(tmp_path, case, fragment):
    folder = tmp_path / "ds"
    folder.mkdir()
    df = _frame(200)
    spec = folder
    if case == "glob":
        spec = str(tmp_path / "nothing-*.parquet")
    elif case == "schema":
        df.to_parquet(folder / "a.parquet")
        df.assign(score=df["score"].astype(str)).to_parquet(folder / "b.parquet")
    elif case == "missing":
        df.to_parquet(folder / "a.parquet")
        df.drop(columns=["wide"]).to_parquet(folder / "b.parquet")
    elif case == "mixed":
        df.to_parquet(folder / "a.parquet")
        df.to_csv(folder / "b.csv", index=False)
    with pytest.raises(DataError, match=fragment) as err:
        load(spec)
    assert "\n" not in str(err.value)


@pytest.mark.slow  # about 2.5 s (the CLI parser imports the mechanisms)
def test_cli_exit_2_for_a_glob_matching_nothing(tmp_path, capsys):
    from core.cli import main

    code = main(["sanitize", str(tmp_path / "x-*.parquet"), "--sensitive", "a", "--mechanism", "uniform",
                 "--out", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "matches no file" in err and len(err.strip().splitlines()) == 1


def test_memory_estimate_refuses_with_the_figures_and_the_way_forward(tmp_path, monkeypatch):
    path = _write(_frame(), tmp_path / "t.parquet")
    table, _ = load(path, columnar=True)
    monkeypatch.setenv("WORKBENCH_MEMORY_BYTES", "10000")
    with pytest.raises(DataError) as err:
        bind(table, "occ", ["age", "city"])
    text = str(err.value)
    assert "3,000 rows" in text and "bytes a row" in text and "--engine dask" in text and "MB" in text
    # the frame path: the row limit is what the memory holds
    import core.data.read as R
    import core.table as T

    monkeypatch.setattr(T, "MAX_ROWS", None)
    monkeypatch.setattr(R, "MAX_ROWS", None)
    monkeypatch.setenv("WORKBENCH_MEMORY_BYTES", str(1000 * L.FRAME_BYTES_PER_ROW))
    with pytest.raises(DataError, match=r"has 3,000 rows, more than the 0 MB of memory.*--engine dask"):
        load(path, columnar=False)
    monkeypatch.setenv("WORKBENCH_MEMORY_BYTES", str(10**9))
    assert len(load(path, columnar=False)[0]) == 3000


def test_census_size_is_capped_by_memory_not_by_a_fixed_row_count(monkeypatch):
    from core.samples import load_sample

    monkeypatch.setenv("WORKBENCH_MEMORY_BYTES", str(1000 * L.FRAME_BYTES_PER_ROW))
    with pytest.raises(DataError, match=r"'census:6000000' has 6,000,000 rows.*--engine dask"):
        load_sample("census:6000000")


# ---------------------------------------------------------------- writers
def _coded():
    rng = np.random.default_rng(3)
    n = 2500
    labels = {"sa": np.array(["=1+1", "a", "-b", "plain"], dtype=object), "age": np.array([20, 30, 40]),
              "g": None}
    cols = {"age": rng.integers(0, 3, n).astype(np.int32), "sa": rng.integers(0, 4, n).astype(np.int32),
            "g": rng.integers(0, 50, n)}
    return cols, labels


def test_csv_in_batches_is_byte_identical_to_the_frame_path(tmp_path):
    from core.release import CodedTable, csv_bytes

    cols, labels = _coded()
    W.write_csv(tmp_path / "r.csv", cols, labels, batch_rows=333)
    expected = csv_bytes(CodedTable(cols, labels).to_frame())
    assert (tmp_path / "r.csv").read_bytes() == expected
    assert b"'=1+1" in expected and b"'-b" in expected  # formula-like cells neutralised


@pytest.mark.parametrize("kinds", [(0,), (0, 1, 2), (0, 1, 2, 3, 4), (0, 1, 2, 3, 4, 5)])
@pytest.mark.parametrize("n", [0, 1, 7, 2000])
def test_csv_joined_from_formatted_labels_is_pandas_bytes(kinds, n):
    """Each label formatted once, rows joined by Arrow: the bytes of neutralise(frame).to_csv, for awkward labels.

    Quotes, commas, leading/trailing spaces, empty text, formula starts,
    unicode, ints, floats (tiny, huge, -0.0, NaN), booleans, missing text,
    plain int and float columns; a label with a line break (kind 5) takes
    the pandas fallback, with the same bytes.
    """
    from core.release import neutralise

    kinds_labels = [np.array(["a", "b,c", 'q"uote', " lead", "", "=cmd", "-1", "+x", "@y", "\tz", "é ü", "trail "],
                             dtype=object),
                    np.array([1, 2, 30000, -5], dtype=np.int64),
                    np.array([0.1, 1e-5, 1e20, -0.0, 3.0, np.nan, 2.5e-300]),
                    np.array([True, False]),
                    np.array(["x", None, "y"], dtype=object),
                    np.array(["multi\nline", "k"], dtype=object)]
    rng = np.random.default_rng(n + len(kinds))
    cols, labels = {}, {}
    for j in kinds:
        cols[f"c{j}"] = rng.integers(0, len(kinds_labels[j]), n).astype(np.uint8)
        labels[f"c{j}"] = kinds_labels[j]
    cols["gid"], labels["gid"] = rng.integers(-3, 900, n), None
    cols["big"], labels["big"] = rng.integers(0, 2**63 - 1, n, dtype=np.uint64) * np.uint64(2), None
    cols["w"], labels["w"] = rng.random(n) * 1e3, None
    frame = pd.DataFrame({c: (cols[c] if labels[c] is None else labels[c][cols[c]]) for c in cols})
    assert b"".join(W.csv_chunks(cols, labels, batch_rows=333)) == neutralise(frame).to_csv(index=False).encode()


def test_parquet_from_codes_is_dictionary_encoded_and_reads_back(tmp_path):
    cols, labels = _coded()
    W.write_parquet(tmp_path / "r.parquet", cols, labels, batch_rows=1000)
    f = pq.ParquetFile(tmp_path / "r.parquet")
    assert f.metadata.num_row_groups == 3
    t = f.read()
    assert pa.types.is_dictionary(t.schema.field("sa").type) and not pa.types.is_dictionary(t.schema.field("g").type)
    back = t.to_pandas()
    assert back["sa"].astype(str).tolist() == labels["sa"][cols["sa"]].tolist()
    assert back["g"].tolist() == cols["g"].tolist()
    # and the columnar reader gets the same codes back
    enc = L.open_source(tmp_path / "r.parquet").encode(["sa"])["sa"]
    order = np.argsort(labels["sa"].astype(str))
    assert np.array_equal(np.argsort(order)[cols["sa"]], enc.codes)


def test_dataset_parts_and_no_partial_output_on_error(tmp_path, monkeypatch):
    cols, labels = _coded()
    monkeypatch.setattr(W, "PART_ROWS", 1000)
    paths = W.write_dataset(tmp_path / "rel", cols, labels, extra={"_manifest.json": b"{}"})
    assert [p.name for p in paths] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet",
                                       "_manifest.json"]
    assert pq.read_table(tmp_path / "rel" / "part-00002.parquet").num_rows == 500

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(W, "_record_batch", boom)
    with pytest.raises(DataError, match="rel2' could not be written .disk full.; check the folder"):
        W.write_dataset(tmp_path / "rel2", cols, labels)
    with pytest.raises(DataError, match="r.parquet' could not be written"):
        W.write_parquet(tmp_path / "r.parquet", cols, labels)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel"]  # no rel2, no r.parquet, no temporary left
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    monkeypatch.undo()
    with pytest.raises(DataError, match="holds files the workbench did not write"):
        W.write_dataset(tmp_path / "mine", cols, labels)


@pytest.mark.slow  # about 2 s (imports the mechanisms)
def test_release_write_to_a_folder_is_a_parquet_dataset(tmp_path):
    from core import mechanisms, release as rel
    from core.table import load_dataset

    data = load_dataset("toy-sdr")
    release = mechanisms.sanitize(data, "uniform", {"p": 0.5}, seed=3)
    written = rel.write(release, tmp_path / "out")
    names = sorted(p.name for p in written)
    assert names == ["_manifest.json", "part-00000.parquet"]
    table = pq.read_table(tmp_path / "out" / "part-00000.parquet").to_pandas()
    assert bind(load(tmp_path / "out")[0], "sa", ["age_group", "sex"]).n == data.n  # the folder reads back
    assert table.astype(str).values.tolist() == release.main_table.to_frame().astype(str).values.tolist()


# ---------------------------------------------------------------- generator
def test_generate_streams_census_n_itself_in_any_batches(tmp_path):
    from core.data.generate import generate
    from core.samples import load_sample

    out = generate("census", 5000, tmp_path / "c", batch_rows=777, part_rows=2000)
    assert out["rows"] == 5000 and len(out["files"]) == 3
    got = pd.read_parquet(tmp_path / "c")
    ref, _ = load_sample("census:5000")
    assert got.astype(str).equals(ref.astype(str))
    # the first n rows of any N are the same, whatever the batches
    generate("census", 1200, tmp_path / "d", batch_rows=500)
    assert pd.read_parquet(tmp_path / "d").astype(str).equals(ref.head(1200).astype(str))
    other = generate("census", 1200, tmp_path / "e", seed=7)
    assert other["rows"] == 1200 and not pd.read_parquet(tmp_path / "e").equals(pd.read_parquet(tmp_path / "d"))


def test_generate_cli_and_bad_input(tmp_path, capsys):
    from core.cli import main

    assert main(["generate", "census", "--rows", "3,000", "--seed", "1", "--out", str(tmp_path / "g")]) == 0
    assert "wrote 3,000 rows" in capsys.readouterr().out and pq.read_table(tmp_path / "g").num_rows == 3000
    for args, fragment in ((["--rows", "0"], "--rows must be"), (["--rows", "10", "--out", str(tmp_path / "x.csv")],
                                                                   "names a folder"), (["--rows", "5", "--rows", "6"], "given twice")):
        argv = ["generate", "census", *args] + ([] if "--out" in args else ["--out", str(tmp_path / "h")])
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert fragment in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "h").exists()


@pytest.mark.slow  # about 2 s (two sanitize runs through the CLI, in process)
def test_cli_release_of_a_dataset_folder_equals_the_frame_paths(tmp_path, capsys):
    from core.cli import main

    df = _frame(4000).dropna()
    folder = tmp_path / "ds"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(df)), 4)):
        df.iloc[part].to_parquet(folder / f"part-{i}.parquet")
    df.to_csv(tmp_path / "whole.csv", index=False)
    args = ["--sensitive", "occ", "--qi", "age", "--qi", "city", "--mechanism", "uniform", "--seed", "5"]
    assert main(["sanitize", str(folder), *args, "--out", str(tmp_path / "a.csv")]) == 0
    assert main(["sanitize", str(tmp_path / "whole.csv"), *args, "--out", str(tmp_path / "b.csv")]) == 0
    out = capsys.readouterr().out
    assert "identifier" not in out
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert main(["sanitize", str(folder), *args, "--out", str(tmp_path / "c")]) == 0
    assert main(["sanitize", str(tmp_path / "whole.csv"), *args, "--out", str(tmp_path / "d.parquet")]) == 0
    assert (tmp_path / "c" / "part-00000.parquet").read_bytes() == (tmp_path / "d.parquet").read_bytes()
    # a QI unique per row is flagged on a table read column by column too (judged on its first rows)
    ids = df.assign(rid=np.arange(len(df)))
    ids.to_parquet(folder / "part-0.parquet")
    for i in (1, 2, 3):
        (folder / f"part-{i}.parquet").unlink()
    assert main(["sanitize", str(folder), "--sensitive", "occ", "--qi", "rid", "--mechanism", "uniform",
                 "--out", str(tmp_path / "e.csv")]) == 0
    assert "warning: QI 'rid' looks like an identifier" in capsys.readouterr().out


def test_a_release_folder_reads_back_with_pandas(tmp_path):
    """The manifest inside a Parquet dataset folder is skipped by pandas/pyarrow (its name starts with '_')."""
    import subprocess
    import sys

    out = tmp_path / "rel"
    done = subprocess.run([sys.executable, "-m", "core", "sanitize", "census:3000", "--sensitive", "occupation", "--mechanism", "uniform",
                           "--seed", "2", "--out", str(out)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["_manifest.json", "part-00000.parquet"]
    frame = pd.read_parquet(out)
    assert len(frame) == 3000 and "occupation" in frame.columns


@pytest.mark.parametrize("room", [6.0, -100.0])  # -100: too few keys under the limit, every key ranked instead
def test_sample_rows_are_the_smallest_order_keys(room):
    from core import rng

    for total, n in ((10, 3), (1000, 1000), (5000, 1), (300_000, 20_000), (7, 0)):
        got = np.sort(L._smallest_keys(4, total, n, room))
        assert np.array_equal(got, np.sort(np.argsort(rng.order_keys(4, 0, total), kind="stable")[:n]))
