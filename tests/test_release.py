"""Release manifest and exports."""

import io
import json
import zipfile

import pandas as pd
import pytest

from core import mechanisms
from core.errors import DataError
from core.release import csv_bytes, neutralise, write, zip_bytes
from core.table import bind, make_table


@pytest.fixture
def data():
    frame = pd.DataFrame({
        "name": ["=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "plain", "\tx"] * 20,
        "n": [-1, 2, -3, 4, 5, 6] * 20,
        "s": list("abcdef") * 20,
    })
    return bind(make_table(frame, "t"), "s", ["name", "n"])


def test_csv_export_neutralises_formulas_but_not_numbers(data):
    frame = data.frame()
    text = csv_bytes(frame).decode()
    back = pd.read_csv(io.StringIO(text))
    assert not back["name"].astype(str).str.match(r"^[=+\-@\t]").any()
    assert set(back["name"]) >= {"'=HYPERLINK(\"x\")", "'+1", "'-2", "'@SUM(A1)", "plain"}
    assert back["n"].min() == -3  # numbers stay numbers
    assert neutralise(frame).shape == frame.shape


def test_manifest_is_json_and_reproduces(data, tmp_path):
    rel = mechanisms.sanitize(data, "uniform", {"p": 0.5}, seed=11)
    man = rel.manifest()
    json.dumps(man)
    assert man["mechanism"] == "uniform" and man["seed"] == 11
    assert man["params"]["p"] == 0.5 and "gamma" in man["params"]
    assert man["input"]["content_hash"] == data.content_hash and man["input"]["rows"] == 120
    assert man["output"]["rows"] == 120
    assert "--seed 11" in man["reproduce"] and "--param p=0.5" in man["reproduce"]


def test_write_single_and_multi_table(data, tmp_path):
    rel = mechanisms.sanitize(data, "uniform", {"p": 0.5}, seed=1)
    paths = write(rel, tmp_path / "r.csv")
    assert [p.name for p in paths] == ["r.csv", "r.manifest.json"]
    assert len(pd.read_csv(paths[0])) == 120
    paths = write(rel, tmp_path / "r.parquet", tmp_path / "m.json")
    assert len(pd.read_parquet(paths[0])) == 120 and paths[1].name == "m.json"
    ana = mechanisms.sanitize(data, "anatomy", {"l": 3}, seed=1)
    with pytest.raises(DataError, match="several tables"):
        write(ana, tmp_path / "a.csv")
    paths = write(ana, tmp_path / "ana")
    assert sorted(p.name for p in paths) == ["_manifest.json", "qit.csv", "st.csv"]
    with pytest.raises(DataError, match="does not exist"):
        write(rel, tmp_path / "no" / "such" / "r.csv")


def test_zip_holds_every_table_and_the_manifest(data):
    ana = mechanisms.sanitize(data, "anatomy", {"l": 3}, seed=1)
    with zipfile.ZipFile(io.BytesIO(zip_bytes(ana))) as zf:
        assert sorted(zf.namelist()) == ["manifest.json", "qit.csv", "st.csv"]
        assert json.loads(zf.read("manifest.json"))["mechanism"] == "anatomy"


@pytest.mark.slow
def test_same_seed_gives_a_byte_identical_manifest_for_every_mechanism():
    """Issue 12 item 8: bucketization's manifest recorded the search's wall-clock seconds."""
    from core.release import manifest_bytes
    from core.table import load_dataset

    adult = load_dataset("adult", "occupation")
    assert len(mechanisms.MECHANISMS) == 11
    for name in mechanisms.MECHANISMS:
        one, two = (mechanisms.sanitize(adult, name, None, seed=5) for _ in range(2))
        assert manifest_bytes(one) == manifest_bytes(two), name
        assert b"seconds" not in manifest_bytes(one), name
        other = mechanisms.sanitize(adult, name, None, seed=6)
        assert json.loads(manifest_bytes(other))["seed"] == 6
