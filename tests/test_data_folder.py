"""The server's data folder (core.data.folder, Home and Sanitize): only its files are readable, a table opens on a
seeded sample whose size the pages state, and the Sanitize page shows the command that releases the whole table."""

from __future__ import annotations

import os
import shlex

import numpy as np
import pandas as pd
import pytest

from core.data import folder as F
from core.errors import DataError


def _table(n=5000, seed=2):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(20, 70, n), "sex": rng.choice(["F", "M"], n),
                         "zip": rng.choice(["10001", "10002", "10003"], n),
                         "disease": rng.choice(["flu", "cold", "ulcer", "asthma"], n), "rid": np.arange(n)})


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    base = tmp_path / "data"
    base.mkdir()
    _table().to_parquet(base / "people.parquet")
    _table(300, 3).to_csv(base / "small.csv", index=False)
    ds = base / "visits"
    ds.mkdir()
    _table(1000, 4).to_parquet(ds / "part-0.parquet")
    _table(1000, 5).to_parquet(ds / "part-1.parquet")
    (base / "notes.txt").write_bytes(b"\x00\x01 binary")  # not a table: not listed
    outside = tmp_path / "secret"
    outside.mkdir()
    _table(100, 6).to_parquet(outside / "secret.parquet")
    os.symlink(outside / "secret.parquet", base / "link-out.parquet")  # a link leaving the folder
    os.symlink(outside, base / "dir-out")
    evil = base / "mixed"
    evil.mkdir()
    _table(50, 7).to_parquet(evil / "a.parquet")
    os.symlink(outside / "secret.parquet", evil / "b.parquet")
    monkeypatch.setenv(F.ENV, str(base))
    return base


def test_lists_only_the_folders_own_tables(data_dir):
    listed = {e.name: e for e in F.entries(F.root())}
    assert sorted(listed) == ["people.parquet", "small.csv", "visits"]
    assert listed["visits"].kind == "dataset" and listed["visits"].rows == 2000
    assert listed["people.parquet"].rows == 5000 and "5,000 rows" in listed["people.parquet"].describe()


@pytest.mark.parametrize("name", ["../secret/secret.parquet", "/etc/passwd", "link-out.parquet", "dir-out",
                                  "dir-out/secret.parquet", "mixed", "visits/../../secret/secret.parquet", "",
                                  "nope.parquet", "a\x00b"])
def test_nothing_outside_the_folder_is_readable(data_dir, name):
    with pytest.raises(DataError) as err:
        F.open_sample(F.root(), name, 10)
    assert "\n" not in str(err.value)


def test_a_seeded_sample_of_the_stated_size(data_dir):
    table, total = F.open_sample(F.root(), "people.parquet", 700, seed=4)
    again, _ = F.open_sample(F.root(), "people.parquet", 700, seed=4)
    other, _ = F.open_sample(F.root(), "people.parquet", 700, seed=5)
    assert total == 5000 and len(table) == 700 and table.read["sample"] == {"rows": 700, "of": 5000, "seed": 4}
    assert table.content_hash == again.content_hash != other.content_hash
    full = pd.read_parquet(data_dir / "people.parquet")
    # the sample is rows of the table, in file order, spread over the whole file
    rid = table.frame["rid"].to_numpy()
    assert len(set(rid)) == 700 and (np.diff(rid) > 0).all() and rid.min() < 500 and rid.max() > 4500
    rows = full.set_index("rid").loc[rid].reset_index()[list(full.columns)]
    assert rows.astype(str).equals(table.frame[list(full.columns)].astype(str))
    # each value's share in the sample is near its share in the table (seeded, so this is fixed)
    for col in ("sex", "disease"):
        diff = (table.frame[col].value_counts(normalize=True) - full[col].value_counts(normalize=True)).abs()
        assert diff.max() < 0.06
    smaller, _ = F.open_sample(F.root(), "people.parquet", 300, seed=4)  # a smaller sample is inside a larger one
    assert set(smaller.frame["rid"]) < set(rid)
    small, total = F.open_sample(F.root(), "visits", 10**6)
    assert total == len(small) == 2000


def test_full_command_names_the_path_and_a_dataset_output(data_dir):
    cmd = ("python -m core sanitize people.parquet --sensitive disease --qi age --qi sex --mechanism uniform "
           "--param p=0.5 --seed 7 --out release.csv")
    full = shlex.split(F.full_command(F.root(), "people.parquet", cmd))
    assert full[4] == str(data_dir.resolve() / "people.parquet")
    assert full[full.index("--out") + 1] == "release" and full[-2:] == ["--engine", "dask"]
    assert "--seed" in full and "people.parquet" not in full[5:]
    assert "--engine" not in F.full_command(F.root(), "people.parquet", cmd, engines=False)


@pytest.mark.slow  # about 10 s (two AppTest runs with a release)
def test_home_opens_a_folder_table_on_a_sample_and_sanitize_shows_the_full_command(data_dir):
    from conftest import app, no_exception

    at = app()
    no_exception(at)
    at.radio(key="w_source").set_value("folder").run()
    no_exception(at)
    at.selectbox(key="w_folder_name").set_value("people.parquet").run()
    at.number_input(key="w_folder_rows").set_value(1200).run()
    no_exception(at)
    side = " ".join(c.value for c in at.sidebar.caption)
    assert "a seeded sample of 1,200 of its 5,000 rows, sample seed 0" in side
    assert any("seeded sample of 1,200 of the 5,000 rows" in c.value for c in at.caption)
    at.switch_page("pages/1_Sanitize.py").run()
    no_exception(at)
    codes = [c.value for c in at.code]
    full = [c for c in codes if str(data_dir.resolve() / "people.parquet") in c]
    assert full and "--out release" in full[0] and len(codes) == 1  # no reproduce command naming the sample
    assert any("seeded sample of 1,200 of the 5,000 rows of 'people.parquet'" in m.value for m in at.markdown)
    assert "a seeded sample of 1,200" in " ".join(c.value for c in at.sidebar.caption)


@pytest.mark.slow  # three AppTest runs
def test_a_link_or_reload_reopens_the_folder_table_and_says_when_it_cannot(data_dir, monkeypatch):
    """The address names the data-folder table and its sample, so a reload opens the same sample, never Adult."""
    from conftest import app, no_exception

    at = app()
    at.radio(key="w_source").set_value("folder").run()
    at.selectbox(key="w_folder_name").set_value("people.parquet").run()
    at.number_input(key="w_folder_rows").set_value(1200).run()
    no_exception(at)
    link = {k: at.query_params[k] for k in ("data", "folder.rows", "folder.seed", "sa", "qi")}
    assert link["data"] == "folder:people.parquet" and link["folder.rows"] == "1200" and link["folder.seed"] == "0"
    again = app("pages/1_Sanitize.py", query=link)  # a reload: a new session from the address
    no_exception(again)
    assert "a seeded sample of 1,200 of its 5,000 rows, sample seed 0" in " ".join(
        c.value for c in again.sidebar.caption)
    assert not [w.value for w in again.warning if "link" in w.value.lower()]  # every key of the link used
    # a bad sample size is named and replaced; a server without the folder says so instead of swapping tables
    bad = app("pages/1_Sanitize.py", query={**link, "folder.rows": "lots"})
    assert any("sample size 'lots'" in w.value for w in bad.warning)
    monkeypatch.delenv(F.ENV)
    gone = app("pages/1_Sanitize.py", query=link)
    no_exception(gone)
    assert "without a data folder" in " ".join(w.value for w in gone.warning) and not gone.error
    home = app(query=link)  # Home says it the same way: a warning, never an error box
    no_exception(home)
    assert "without a data folder" in " ".join(w.value for w in home.warning) and not home.error
    assert "adult" not in " ".join(c.value for c in gone.sidebar.caption).lower()
