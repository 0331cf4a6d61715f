"""Banding numeric QIs (core.data.banding): syntax, labels, bind, manifest, CLI, micro groups."""

import json

import numpy as np
import pandas as pd
import pytest

from core.data.banding import Banding, micro_groups, parse, parse_many, suggest
from core.errors import DataError, ParameterError
from core.table import bind, load_table, make_table


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return make_table(pd.DataFrame({"age": rng.integers(17, 91, n), "sex": rng.choice(["F", "M"], n),
                                    "income": rng.normal(40_000, 9_000, n).round(2),
                                    "job": rng.choice(list("abcdef"), n)}), "people.csv")


@pytest.mark.parametrize("text, spec", [
    ("age=10", {"method": "width", "width": 10}),
    ("age=width:2.5", {"method": "width", "width": 2.5}),
    ("age=q5", {"method": "quantiles", "count": 5}),
    ("age=quantiles:4", {"method": "quantiles", "count": 4}),
    ("age=18,25,35,50,65", {"method": "cuts", "cuts": [18, 25, 35, 50, 65]}),
    ("age=cuts:40", {"method": "cuts", "cuts": [40]}),
    (" age = 40, ", {"method": "cuts", "cuts": [40]}),
])
def test_parse_and_text_round_trip(text, spec):
    band = parse(text)
    assert band.column == "age" and band.spec() == spec
    assert parse(band.text()).spec() == spec
    assert Banding.from_spec("age", json.loads(json.dumps(spec))) == band


@pytest.mark.parametrize("text, fragment", [
    ("age", "COLUMN=SPEC"), ("age=", "COLUMN=SPEC"), ("age=abc", "is not a width"), ("age=0", "above 0"),
    ("age=-5", "above 0"), ("age=q1", "2 to 100"), ("age=q2.5", "is not a width"), ("age=30,20", "must increase"),
    ("age=nan", "above 0"), ("age=inf", "above 0"), ("age=foo:3", "width, quantiles or cuts"),
])
def test_bad_band_text_is_one_sentence(text, fragment):
    with pytest.raises(ParameterError, match=None) as exc:
        parse(text)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


def test_same_column_twice_is_refused_not_dropped():
    assert list(parse_many(["age=10", "income=q4"])) == ["age", "income"]
    with pytest.raises(ParameterError, match="'age' twice"):
        parse_many(["age=10", "age=q4"])


def test_labels_half_open_and_ordered():
    table = _table()
    data = bind(table, "job", ("age", "sex"), {"age": parse("age=10")})
    labels = list(data.qi_labels[0])
    assert labels[0] == "[10, 20)" and labels[-1] == "[90, 100)"
    assert labels == sorted(labels, key=lambda s: int(s[1:].split(",")[0]))  # codes follow the numbers
    ages = table.frame["age"].to_numpy()
    decoded = data.qi_labels[0][data.qi_codes[0]]
    lo = np.array([int(s[1:].split(",")[0]) for s in decoded])
    assert np.all((ages >= lo) & (ages < lo + 10))
    cuts = bind(table, "job", ("age",), {"age": parse("age=18,25,35,50,65")})
    assert list(cuts.qi_labels[0]) == ["< 18", "[18, 25)", "[25, 35)", "[35, 50)", "[50, 65)", ">= 65"]
    assert not cuts.qi_numeric[0]


def test_quantile_bands_hold_about_equal_records_and_use_real_values():
    table = _table(n=1000)
    data = bind(table, "job", ("income",), {"income": parse("income=q4")})
    sizes = np.bincount(data.qi_codes[0])
    assert len(sizes) == 4 and sizes.min() >= 240 and sizes.max() <= 260
    assert data.qi_labels[0][-1].endswith("]")  # the last band is closed at the largest value
    values = set(table.frame["income"].astype(float))
    edges = [float(s[1:].split(",")[0]) for s in data.qi_labels[0]]
    assert all(e in values for e in edges)


def test_bind_refuses_bands_on_unknown_non_numeric_sa_or_non_qi_columns():
    table = _table()
    for bands, fragment in [({"agex": "x"}, None), ({"sex": parse("sex=10")}, "not numeric"),
                            ({"income": parse("income=10")}, "not a QI"), ({"job": parse("job=q3")}, None)]:
        if fragment is None:
            continue
        with pytest.raises(DataError, match=fragment):
            bind(table, "job", ("age", "sex"), bands)
    with pytest.raises(DataError, match="no column 'agex' to band"):
        bind(table, "job", ("age",), {"agex": parse("agex=10")})
    with pytest.raises(DataError, match="sensitive attribute"):
        bind(table, "age", ("sex",), {"age": parse("age=10")})
    with pytest.raises(ParameterError, match="more than 1,000"):
        bind(table, "job", ("income",), {"income": parse("income=0.01")})


def test_dataset_key_and_specs_include_the_bands():
    table = _table()
    plain = bind(table, "job", ("age", "sex"))
    banded = bind(table, "job", ("age", "sex"), {"age": {"method": "width", "width": 10}})
    assert plain.key != banded.key and banded.key.endswith("|age=10")
    assert plain.band_specs() == {} and banded.band_specs() == {"age": {"method": "width", "width": 10}}
    assert bind(table, "job", ("age", "sex"), {"age": parse("age=q5")}).key != banded.key


def test_micro_groups_before_and_after_banding():
    table = _table(n=300)
    before = bind(table, "job", ("age", "sex"))
    after = bind(table, "job", ("age", "sex"), {"age": parse("age=10")})
    b = micro_groups(before.qi_codes, before.domains)
    a = micro_groups(after.qi_codes, after.domains)
    # brute force with pandas
    sizes = table.frame.groupby(["age", "sex"]).size()
    assert b.groups == len(sizes) and b.median_size == float(np.median(sizes))
    assert b.singleton_share == pytest.approx((sizes == 1).sum() / 300)
    assert a.groups <= 18 and a.median_size > 5 * b.median_size and a.singleton_share < b.singleton_share / 10


def test_suggest_a_round_width_for_many_values_only():
    table = _table()
    assert suggest(table.frame["age"]).spec() == {"method": "width", "width": 10}
    assert suggest(table.frame["sex"]) is None
    assert suggest(pd.Series(np.arange(10), name="x")) is None


@pytest.mark.slow
def test_adult_banded_release_manifest_and_reproduce_command():
    from core import mechanisms

    data = bind(load_table("adult"), "occupation", ("age", "sex"), {"age": parse("age=18,25,35,50,65")})
    rel = mechanisms.sanitize(data, "uniform", {"p": 0.5}, 1)
    man = rel.manifest()
    assert man["input"]["bands"] == {"age": {"method": "cuts", "cuts": [18, 25, 35, 50, 65]}}
    assert "--band age=18,25,35,50,65" in man["reproduce"]
    assert set(rel.main_table.to_frame()["age"]) <= {"< 18", "[18, 25)", "[25, 35)", "[35, 50)", "[50, 65)", ">= 65"}
    plain = mechanisms.sanitize(bind(load_table("adult"), "occupation", ("age", "sex")), "uniform", {"p": 0.5}, 1)
    assert plain.manifest()["input"]["bands"] == {} and "--band" not in plain.manifest()["reproduce"]


@pytest.mark.slow
def test_cli_band_reproduces_byte_for_byte(tmp_path):
    from tests.test_cli import ok

    src = tmp_path / "people.csv"
    _table().frame.to_csv(src, index=False)
    out = tmp_path / "r.csv"
    info = json.loads(ok("sanitize", src, "--sensitive", "job", "--qi", "age", "sex", "income", "--band", "age=10",
                         "--band", "income=q4", "--mechanism", "uniform", "--seed", "5", "--out", out, "--json"))
    man = info["manifest"]
    assert man["input"]["bands"] == {"age": {"method": "width", "width": 10},
                                     "income": {"method": "quantiles", "count": 4}}
    cmd = man["reproduce"].split()
    args = cmd[3:]
    args[args.index(src.name)] = str(src)
    args[args.index("--out") + 1] = str(tmp_path / "again.csv")
    ok(*args)
    assert out.read_bytes() == (tmp_path / "again.csv").read_bytes()
    assert (tmp_path / "r.manifest.json").read_bytes() == (tmp_path / "again.manifest.json").read_bytes()


@pytest.mark.parametrize("band, fragment", [
    ("sex=10", "'sex' is not numeric"), ("agex=10", "no column 'agex' to band"), ("age=10x", "is not a width"),
    ("income=10", "not a QI"),
])
def test_cli_band_errors_are_one_line_exit_2(band, fragment, tmp_path):
    from tests.test_cli import run_inprocess

    src = tmp_path / "people.csv"
    _table().frame.to_csv(src, index=False)
    proc = run_inprocess("sanitize", src, "--sensitive", "job", "--qi", "age", "sex", "--band", band,
                         "--mechanism", "uniform", "--out", tmp_path / "o.csv", cwd=tmp_path)
    assert proc.returncode == 2 and fragment in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


def test_cli_warns_when_a_qi_is_an_identifier(tmp_path):
    from tests.test_cli import ok

    frame = _table().frame.assign(pid=lambda f: [f"p{i}" for i in range(len(f))])
    src = tmp_path / "people.csv"
    frame.to_csv(src, index=False)
    text = ok("sanitize", src, "--sensitive", "job", "--qi", "sex", "pid", "--mechanism", "uniform",
              "--seed", "1", "--out", tmp_path / "o.csv")
    assert "warning: QI 'pid' looks like an identifier" in text


def test_decimal_widths_put_a_value_on_an_edge_in_the_band_it_starts():
    frame = pd.DataFrame({"y": [0.1, 0.2, 0.3, 0.7, 0.9, 1.0], "s": list("abcabc")})
    data = bind(make_table(frame, "t.csv"), "s", ("y",), {"y": parse("y=0.1")})
    decoded = list(data.qi_labels[0][data.qi_codes[0]])
    assert decoded == ["[0.1, 0.2)", "[0.2, 0.3)", "[0.3, 0.4)", "[0.7, 0.8)", "[0.9, 1)", "[1, 1.1)"]


def test_quantiles_with_heavy_ties_still_cut_where_the_records_are():
    frame = pd.DataFrame({"x": [1, 1, 1, 1, 2, 3, 4, 5], "s": list("abcdabcd")})
    data = bind(make_table(frame, "t.csv"), "s", ("x",), {"x": parse("x=q4")})
    assert list(data.qi_labels[0]) == ["[1, 2)", "[2, 4)", "[4, 5]"]
    assert np.bincount(data.qi_codes[0]).tolist() == [4, 2, 2]
