"""The read options are in the session file and used on reopen (issue 23 §3)."""

from __future__ import annotations

import pytest

from conftest import app, no_exception, upload

HOME = "pages/0_Home.py"
ROWS = "".join(f"{20 + i % 40},{'MF'[i % 2]},{['flu', 'cold', 'gout', 'asthma'][i % 4]}\n" for i in range(40))
DATA = ("age,sex,disease\n" + ROWS).encode()  # read as it is, the first line is the header


def _session(options):
    from core import session as S
    from core.data.read import ReadOptions
    from core.table import load

    table, result = load(DATA, filename="clinic.csv", options=ReadOptions(**options))
    ref = S.TableRef("upload", "clinic.csv", table.content_hash, len(table), result.record())
    sess = S.Session(ref, "illness", ("years", "gender"), S.Setting("splu", {}, 1))
    return S.to_bytes(sess), table


def test_read_options_round_trip_through_the_session_file():
    from core import session as S

    data, table = _session({"header": True, "names": ("years", "gender", "illness")})
    back = S.read(data)[0]
    assert back.table.read["names"] == ["years", "gender", "illness"]
    assert back.table.read_options().names == ("years", "gender", "illness")
    import json

    for key, value, says in (("header", "sometimes", "true or false"), ("decimal", ";", "decimal mark")):
        doc = json.loads(data)
        doc["table"]["read"][key] = value
        with pytest.raises(S.SessionError, match=says):
            S.read(json.dumps(doc).encode())


@pytest.mark.slow
def test_reopening_reads_the_uploaded_file_with_the_sessions_options():
    """Names typed for the columns were lost: the steward repeated the fixes after every reload."""
    data, table = _session({"header": True, "names": ("years", "gender", "illness")})
    at = app(HOME)
    upload(at, "clinic.csv", DATA)  # read as it is: columns age, sex, disease (the same bytes read another way)
    no_exception(at)
    assert at.session_state["wb_upload"]["table"].content_hash == table.content_hash  # the file's bytes
    assert at.session_state["wb_upload"]["table"].key != table.key  # another table
    at.file_uploader(key="w_session_file").set_value(("clinic-session.workbench.json", data, "application/json"))
    at.run()
    no_exception(at)
    assert any("Opened" in s.value for s in at.success), [e.value for e in (*at.error, *at.warning)]
    assert at.session_state["wb_upload"]["table"].key == table.key
    assert at.session_state["wb_sa"] == "illness"
    assert list(at.session_state["wb_upload"]["table"].columns) == ["years", "gender", "illness"]


@pytest.mark.slow
def test_reading_the_file_again_after_reopening_starts_from_the_sessions_options():
    """The preview's controls were at "detect" and empty after a reopen: the typed names, header choice, delimiter
    and markers had to be given again, and "Use this table" brought back the table the session was not made on."""
    options = {"header": True, "names": ("years", "gender", "illness"), "delimiter": ",", "na": ("?", "unknown")}
    data, table = _session(options)
    at = app(HOME)
    upload(at, "clinic.csv", DATA)
    at.file_uploader(key="w_session_file").set_value(("clinic-session.workbench.json", data, "application/json"))
    at.run()
    no_exception(at)
    assert at.session_state["wb_upload"]["table"].content_hash == table.content_hash
    at.button(key="w_reread_upload").click().run()
    no_exception(at)
    assert at.selectbox(key="w_read_header").value == "header"
    assert at.selectbox(key="w_read_delimiter").value == ","
    assert at.text_input(key="w_read_names").value == "years, gender, illness"
    assert at.text_input(key="w_read_na").value == "?, unknown"
    # the preview is the session's table, and using it keeps that table (same content hash)
    at.button(key="w_use_upload").click().run()
    no_exception(at)
    assert at.session_state["wb_upload"]["table"].content_hash == table.content_hash
    assert at.session_state["wb_sa"] == "illness"
