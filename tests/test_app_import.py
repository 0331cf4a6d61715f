"""Issue 14 on the Home page: the upload preview (how the file was read, controls, "Use this table") and bad input."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # each test runs the Home page (AppTest), over 0.4 s

from conftest import app, metrics, no_exception, plain, upload, use_upload
from test_import_formats import BAD, TABLE, text

HEADERLESS = text("whitespace", header=False).encode("latin-1")


def test_uploader_takes_any_file_and_says_what_is_accepted():
    at = app()
    at.radio(key="w_source").set_value("upload").run()
    no_exception(at)
    uploader = at.file_uploader(key="w_upload")
    assert not uploader.proto.type  # no extension filter: a .data file is not refused with a red '!'
    captions = " ".join(plain(c.value) for c in at.caption)
    assert "Accepted: delimited text with any extension" in captions and "SPSS .sav" in captions
    assert "Up to 500 MB here; for a larger file use the command line" in captions


def test_headerless_data_file_is_previewed_then_named_and_used():
    at = upload(app(), "adult.data", HEADERLESS, use=False)
    no_exception(at)
    assert not at.error
    summary = " ".join(plain(m.value) for m in at.markdown)
    assert "6 rows, 4 columns" in summary and "delimiter: whitespace (detected)" in summary
    assert "first row: data (detected)" in summary and "encoding: latin-1 (detected)" in summary
    types = next(d.value for d in at.dataframe if "type" in d.value.columns)
    assert types["column"].tolist() == ["col1", "col2", "col3", "col4"]
    assert types["type"].tolist() == ["integer", "text", "number", "text"]
    assert "Records used" not in metrics(at)  # not used before the button
    # the detection is overridable: force a header, then back, then type names
    at.selectbox(key="w_read_header").set_value("header").run()
    assert "5 rows, 4 columns" in " ".join(plain(m.value) for m in at.markdown)
    at.selectbox(key="w_read_header").set_value("data").run()
    at.text_input(key="w_read_names").set_value("age, city, score, diagnosis").run()
    no_exception(at)
    use_upload(at)
    no_exception(at)
    assert metrics(at)["Records used"] == "6 rows"
    assert at.selectbox(key="w_sa").options == list(TABLE.columns)
    assert any("Using 'adult.data'" in plain(s.value) for s in at.success)


def test_a_wrong_choice_shows_one_sentence_and_can_be_undone():
    at = upload(app(), "t.csv", text(",").encode(), use=False)
    at.text_input(key="w_read_names").set_value("a, b").run()
    no_exception(at)
    assert len(at.error) == 1 and "2 column names were given but 't.csv' has 4 columns" in plain(at.error[0].value)
    assert not [b for b in at.button if b.key == "w_use_upload"]
    at.text_input(key="w_read_names").set_value("").run()
    assert not at.error
    use_upload(at)
    assert metrics(at)["Records used"] == "6 rows"


def test_read_the_file_differently_reopens_the_preview():
    at = upload(app(), "t.csv", text(";").encode())
    assert metrics(at)["Records used"] == "6 rows"
    at.button(key="w_reread_upload").click().run()
    no_exception(at)
    at.selectbox(key="w_read_delimiter").set_value("\t").run()
    assert any("only one column" in plain(e.value) for e in at.error)
    at.selectbox(key="w_read_delimiter").set_value(";").run()
    use_upload(at)
    assert metrics(at)["Records used"] == "6 rows"


@pytest.mark.parametrize("case", [c for c in BAD if c != "too big"])
def test_bad_input_shows_one_sentence_on_the_page(case, tmp_path):
    make, fragment = BAD[case]
    at = upload(app(), "upload.csv", make(tmp_path), use=False)
    no_exception(at)
    assert len(at.error) == 1 and fragment in plain(at.error[0].value), [e.value for e in at.error]
    # a good file afterwards works in the same session
    upload(at, "good.csv", text(",").encode())
    no_exception(at)
    assert not at.error and metrics(at)["Records used"] == "6 rows"


def test_excel_preview_has_a_sheet_picker():
    from test_import_formats import excel

    at = upload(app(), "book.xlsx", excel(), mime="application/octet-stream", use=False)
    no_exception(at)
    assert not at.error
    sheet = at.selectbox(key="w_read_sheet")
    assert sheet.options[1:] == ["Empty", "Patients"]
    assert "sheet: Patients (detected)" in " ".join(plain(m.value) for m in at.markdown)
    sheet.set_value("Empty").run()
    assert len(at.error) == 1 and "Sheet 'Empty' of 'book.xlsx' is empty" in plain(at.error[0].value)
    at.selectbox(key="w_read_sheet").set_value("Patients").run()
    use_upload(at)
    assert metrics(at)["Records used"] == "6 rows"


def test_an_identifier_left_out_of_the_release_is_a_warning_shown_once():
    """Issue 14 asks to *warn* that an identifier must not be published; it was a blue info box."""
    rows = "".join(f"{1000 + i},{20 + i % 50},{'FM'[i % 2]},{['flu', 'cold', 'hiv', 'asthma'][i % 4]}\n"
                   for i in range(120))
    at = upload(app(), "ward.csv", ("patient_id,age,sex,diagnosis\n" + rows).encode(), use=True)
    no_exception(at)
    said = [plain(w.value) for w in at.warning if "Left out of the release" in plain(w.value)]
    assert len(said) == 1 and "'patient_id'" in said[0] and "must not be published" in said[0]
    assert not [i for i in at.info if "Left out of the release" in plain(i.value)]
