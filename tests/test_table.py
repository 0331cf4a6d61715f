"""Loading tables: every bad input gets one clear DataError sentence."""

import io

import numpy as np
import pandas as pd
import pytest

from core.errors import DataError
from core.table import bind, content_hash, load_table, make_table, read_bytes

GOOD = b"age,sex,disease\n30,F,flu\n40,M,cold\n50,F,flu\n"


def test_csv_tsv_semicolon_and_parquet_load_the_same_content():
    frames = [
        read_bytes(GOOD, "a.csv"),
        read_bytes(GOOD.replace(b",", b"\t"), "a.tsv"),
        read_bytes(GOOD.replace(b",", b";"), "a.txt"),
    ]
    buf = io.BytesIO()
    frames[0].to_parquet(buf)
    frames.append(read_bytes(buf.getvalue(), "a.parquet"))
    hashes = {content_hash(f) for f in frames}
    assert len(hashes) == 1
    assert frames[0]["age"].tolist() == [30, 40, 50]


@pytest.mark.parametrize("data, fragment", [
    (b"", "is empty"),
    (b"   \n\n", "is empty"),
    (b"age,sex,disease\n", "header but no data rows"),
    (b"age\n1\n2\n", "only one column"),
    (b"\x00\x01\x02\x89PNG\x00junk" * 10, "not a text table"),
    (b"a,b\n1,2,3,4\n", "different numbers of fields (line 2, '1,2,3,4', has 4, the first row 2)"),
    (b"a,b,c\n1,2,3\n4,5\n", "different numbers of fields (line 3, '4,5', has 2, the first row 3)"),
    (b"a,a\n1,2\n", "two columns named 'a'"),
    (b"PAR1garbage", "not a readable Parquet"),
])
def test_bad_bytes_give_one_sentence(data, fragment):
    with pytest.raises(DataError) as exc:
        make_table(read_bytes(data, "upload.csv"), "upload.csv")
    message = str(exc.value)
    assert fragment in message
    assert "\n" not in message and "Traceback" not in message


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DataError, match="There is no file"):
        load_table(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="is a folder"):
        load_table(tmp_path)


def test_unicode_and_html_survive():
    data = "名前,<b>x</b>,病気\nアリス,<script>alert(1)</script>,インフル\nボブ,b,風邪\n".encode()
    t = make_table(read_bytes(data, "u.csv"), "u.csv")
    d = bind(t, "病気", ["名前", "<b>x</b>"])
    assert set(d.sa_labels) == {"インフル", "風邪"}
    assert "<script>alert(1)</script>" in set(d.qi_labels[1])


def test_bind_checks_columns_and_the_sensitive_attribute():
    t = make_table(read_bytes(GOOD), "t")
    with pytest.raises(DataError, match="There is no column 'nope'"):
        bind(t, "nope", ["age"])
    with pytest.raises(DataError, match="cannot also be a QI"):
        bind(t, "disease", ["disease", "age"])
    one = make_table(pd.DataFrame({"a": [1, 2, 3], "s": ["x", "x", "x"]}), "one")
    with pytest.raises(DataError, match="single value"):
        bind(one, "s", ["a"])
    ids = make_table(pd.DataFrame({"a": np.arange(50) % 3, "id": np.arange(50)}), "ids")
    with pytest.raises(DataError, match="looks like an identifier"):
        bind(ids, "id", ["a"])


def test_missing_values_are_left_out_and_counted():
    data = b"age,sex,disease\n30,F,flu\n,M,cold\n50,?,flu\n60,M,\n70,F,cold\n"
    d = bind(make_table(read_bytes(data), "t"), "disease", ["age", "sex"])
    assert d.n == 2 and d.rows_dropped == 3


def test_encoding_is_sorted_and_numeric_columns_sort_numerically():
    frame = pd.DataFrame({"age": [9, 10, 100, 9], "s": ["b", "a", "c", "a"]})
    d = bind(make_table(frame, "t"), "s", ["age"])
    assert d.qi_labels[0].tolist() == [9, 10, 100]
    assert d.sa_labels.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(d.sa_labels[d.sa_codes], frame["s"].to_numpy())
    pd.testing.assert_frame_equal(d.frame()[["age", "s"]].astype(str), frame.astype(str))


def test_row_limit(monkeypatch):
    import core.table as table

    monkeypatch.setattr(table, "MAX_ROWS", 2)
    with pytest.raises(DataError, match="above the limit"):
        make_table(read_bytes(GOOD), "t")
