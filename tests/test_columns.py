"""Column proposals on unknown tables (core.data.columns): SA, QIs, identifiers, each with a reason."""

import json

import numpy as np
import pandas as pd
import pytest

from core.data.columns import identifiers, propose, words
from core.table import bind, default_columns, load_table, make_table, proposal


def _people(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "patient_id": [f"P{i:05d}" for i in range(n)],
        "age": rng.integers(18, 90, n),
        "sex": rng.choice(["F", "M"], n),
        "zipCode": rng.choice(["10115", "10117", "10119", "10178"], n),
        "smoker": rng.choice(["yes", "no"], n),
        "visits": rng.integers(0, 6, n),
        "diagnosis": rng.choice(["flu", "asthma", "diabetes", "hiv", "copd"], n),
    })


def test_words_split_snake_camel_and_spaces():
    assert words("zipCode") == ["zip", "code", "zipcode"]
    assert words("native_country") == ["native", "country", "nativecountry"]
    assert words("Patient ID") == ["patient", "id", "patientid"]


def test_proposal_on_an_unknown_table_names_sa_qis_and_identifier_with_reasons():
    p = propose(_people())
    assert p.sa == "diagnosis" and "diagnosis" in p.sa_reason and "5 values" in p.sa_reason
    assert p.qi == ("age", "sex", "zipCode")
    assert p.identifiers == ("patient_id",)
    assert "must not be published" in p.reasons["patient_id"]
    assert p.bandable == ("age",) and "band" in p.reasons["age"]
    assert p.reasons["smoker"].startswith("not a QI")
    assert set(p.reasons) == set(_people().columns)
    assert all(isinstance(r, str) and "\n" not in r for r in p.reasons.values())


def test_a_two_valued_flag_is_not_the_sa_when_a_column_with_several_values_exists():
    frame = _people().drop(columns=["diagnosis"]).assign(outcome=lambda f: np.where(f.age > 50, "a", "b"),
                                                          blood=lambda f: np.resize(["A", "B", "AB", "O"], len(f)))
    p = propose(frame)
    assert p.sa == "blood" and "several values" in p.sa_reason
    # the name hint wins over position, but a 2-valued 'income' loses to a many-valued 'occupation'
    frame = _people().drop(columns=["diagnosis"]).assign(
        occupation=np.resize(["clerk", "nurse", "driver", "cook"], 200), income=np.resize(["<=50K", ">50K"], 200))
    assert propose(frame).sa == "occupation"


def test_adult_as_an_unknown_upload_gets_the_papers_choice_from_names_alone():
    adult = load_table("adult")
    upload = make_table(adult.frame.copy(), "adult.csv")
    sa, qi = default_columns(upload)
    assert (sa, qi) == ("occupation", ("age", "workclass", "education", "marital_status", "race", "sex",
                                       "native_country"))


def test_headerless_table_falls_back_to_shapes():
    frame = _people().drop(columns=["patient_id"])
    frame.columns = [f"col{i + 1}" for i in range(frame.shape[1])]
    p = propose(frame)
    # no name hint: the last text column with several values; every other column with repeated values is a QI
    assert p.sa == "col6" and "no name suggests" in p.sa_reason
    assert set(p.qi) == {"col1", "col2", "col3", "col4", "col5"}
    assert "no column name looks demographic" in p.qi_reason


def test_identifier_by_shape_and_sequential_numbers_but_not_a_fractional_measurement():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"row": np.arange(100), "code": [f"x{i}" for i in range(100)],
                          "income": rng.normal(50_000, 10_000, 100), "sex": rng.choice(["F", "M"], 100),
                          "job": rng.choice(list("abcd"), 100)})
    found = identifiers(frame)
    assert set(found) == {"row", "code"}
    p = propose(frame)
    assert "row" not in p.qi and "code" not in p.qi and p.sa == "job"


def test_samples_keep_their_papers_choice_and_flag_toy_identifiers():
    p = proposal(load_table("toy-splu"))
    assert (p.sa, p.qi) == ("disease", ("age", "zip_code"))
    assert p.identifiers == ("id",) and "papers' choice" in p.sa_reason
    p = proposal(load_table("toy-ambiguity"))
    assert "name" in p.identifiers


def test_bind_without_columns_uses_the_proposal_and_never_an_identifier():
    data = bind(make_table(_people(), "people.csv"))
    assert data.sa == "diagnosis" and "patient_id" not in data.qi


@pytest.mark.parametrize("n", [50, 2])
def test_small_and_two_column_tables_get_a_proposal(n):
    rng = np.random.default_rng(n)
    frame = pd.DataFrame({"age": rng.integers(20, 60, 50), "disease": rng.choice(list("abc"), 50)})
    p = propose(frame)
    assert p.sa == "disease" and p.qi == ("age",)


def test_cli_inspect_gives_the_proposal(tmp_path):
    from tests.test_cli import ok

    path = tmp_path / "people.csv"
    _people().to_csv(path, index=False)
    out = json.loads(ok("inspect", path, "--json"))
    assert out["proposal"]["sa"] == "diagnosis" and out["proposal"]["qi"] == ["age", "sex", "zipCode"]
    assert out["proposal"]["identifiers"] == ["patient_id"] and out["proposal"]["bandable"] == ["age"]
    text = ok("inspect", path)
    assert "proposed: --sensitive diagnosis" in text and "proposed: --qi age sex zipCode" in text
    assert "identifier, must not be published: patient_id" in text
