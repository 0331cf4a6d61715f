"""An R ``write.csv`` export is read as it is (issue 23 §3): the unnamed first column is ``row``, an identifier."""

from __future__ import annotations

import pytest

from core.data import columns, read
from core.errors import DataError

R_EXPORT = ('"","age","sex","occupation"\n'
            + "".join(f'"{i}",{20 + i % 50},"{"MF"[i % 2]}","job {i % 7}"\n' for i in range(1, 61))).encode()


def test_an_r_write_csv_export_reads_with_its_row_names_as_an_identifier():
    got = read.read(R_EXPORT, "survey.csv")
    assert list(got.frame.columns) == ["row", "age", "sex", "occupation"]
    assert len(got.frame) == 60 and got.frame["row"].tolist()[:3] == [1, 2, 3]
    assert any("R write.csv" in n and "'row'" in n for n in got.notes)
    proposal = columns.propose(got.frame)
    assert "row" in proposal.identifiers and "row" not in proposal.qi and proposal.sa != "row"
    assert proposal.sa == "occupation"


def test_a_taken_name_gives_another_and_other_unnamed_columns_are_still_refused():
    got = read.read(b'"","row","b"\n"1",5,"x"\n"2",6,"y"\n', "t.csv")
    assert list(got.frame.columns) == ["row_2", "row", "b"]
    with pytest.raises(DataError, match="column without a name"):
        read.read(b'"a","","b"\n1,2,3\n4,5,6\n', "t.csv")


def test_a_header_in_single_quotes_is_read_without_them_and_so_are_columns_quoted_alike():
    """The ANES 1996 file statsmodels ships starts ``'popul'<tab>'TVnews'...``: a steward asks for ``PID``."""
    text = "'age'\t'PID'\t'party'\t'note'\n" + "".join(
        f"{30 + i % 40}\t{i % 7}\t'{'DR'[i % 2]}'\t{'O' if i % 3 else ''}'Brien\n" for i in range(60))
    got = read.read(text.encode(), "anes.csv")
    assert list(got.frame.columns) == ["age", "PID", "party", "note"]
    assert got.frame["age"].tolist()[:2] == [30, 31] and got.frame["party"].tolist()[:2] == ["D", "R"]
    assert got.frame["note"].tolist()[:2] == ["'Brien", "O'Brien"]  # apostrophes inside text stay
    assert any("single quotes" in n and "party" in n and "note" not in n.split("values of")[-1] for n in got.notes)
    plain = read.read(b"age,note\n30,'x'\n31,'y'\n", "t.csv")  # a header without them: nothing is unquoted
    assert plain.frame["note"].tolist() == ["'x'", "'y'"] and not plain.notes
