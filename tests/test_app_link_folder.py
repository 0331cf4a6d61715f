"""Issue 24, item 5: a link naming a data-folder table that is not one warns and keeps the current table."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import app, no_exception


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    base = tmp_path / "data"
    base.mkdir()
    pd.DataFrame({"age": [30, 41, 52] * 20, "sex": ["F", "M", "F"] * 20,
                  "disease": ["flu", "cold", "hiv"] * 20}).to_csv(base / "small.csv", index=False)
    (tmp_path / "secret.csv").write_text("a,b\n1,2\n")
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(base))
    return base


@pytest.mark.slow  # three page runs of Home on Adult (over 1 s of CPU)
@pytest.mark.parametrize("name", ["nosuch", "../secret.csv", "/etc", "/etc/passwd"])
def test_a_link_to_a_data_folder_table_that_is_not_one_warns_and_keeps_the_table(data_dir, name):
    at = app(query={"data": f"folder:{name}"})
    no_exception(at)
    warnings = " ".join(w.value for w in at.warning)
    assert f"The link names the data-folder table '{name}'" in warnings, warnings
    assert "is not a table of the data folder" in warnings and "The current table is kept." in warnings
    assert at.query_params["data"] != f"folder:{name}" and not at.query_params["data"].startswith("folder:")
    assert at.radio(key="w_source").value == "sample"


@pytest.mark.slow
def test_a_link_to_a_data_folder_table_still_opens_it(data_dir):
    at = app(query={"data": "folder:small.csv"})
    no_exception(at)
    assert at.query_params["data"] == "folder:small.csv"
    assert not [w.value for w in at.warning if "data-folder table" in w.value]
