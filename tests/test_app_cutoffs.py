"""Nothing cut off at 1,400 px (issue 13 §5): text that can be long is never a metric value or a grid cell.

st.metric cuts its value to the column with an ellipsis: the reconstruction
tab showed the group's most frequent occupation as "Prof-specialt…" in a
quarter-width column.  The Sanitize page's read-outs ("T_p(f) per count f"
and its list of values) were cut in half-width grids; they are st.table now,
whose cells wrap.
"""

from __future__ import annotations

import pytest

from conftest import app, no_exception

#: the longest metric value that fits a quarter of the 1,400 px page at st.metric's value size
QUARTER = 14


@pytest.mark.slow
def test_reconstruction_tab_names_the_value_in_a_caption_not_a_metric():
    at = app("pages/4_Attacks.py", query={"data": "adult", "mech": "reconstruction"})
    no_exception(at)
    values = {m.label: m.value for m in at.metric}
    assert "share of its most frequent value" in values
    row = ["records in the group |g|", "share of its most frequent value", "size threshold s_g",
           "randomised under RP"]  # the tab's row of four metrics
    assert all(len(values[k]) <= QUARTER for k in row), values
    assert any(c.value.startswith("the value: ") for c in at.caption)


@pytest.mark.slow
def test_sanitize_read_outs_are_tables_whose_cells_wrap():
    at = app("pages/1_Sanitize.py", query={"data": "adult", "mech": "splu", "seed": "1"})
    no_exception(at)
    items = [str(i) for t in at.table for i in t.value.index]
    assert any("T_p(f)" in i for i in items), items
    assert not [d for d in at.dataframe if "item" in d.value.columns]
