"""The command line, end to end, in a subprocess as a user would run it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "core", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    return proc


def run_inprocess(*args, cwd=ROOT):
    """Same as :func:`run` but in this process (fast); used for the bad-input matrix."""
    import contextlib
    import io

    from core.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
    finally:
        os.chdir(old)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def ok(*args, inprocess=True):
    proc = (run_inprocess if inprocess else run)(*args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_help_documents_every_mechanism_and_parameter():
    from core.mechanisms import MECHANISMS

    text = ok("--help", inprocess=False)
    for mech in MECHANISMS.values():
        assert mech.name in text
        for p in mech.params:
            assert p.name in text
    assert "sanitize" in text and "evaluate" in text and "bound" in text


@pytest.mark.slow
def test_sanitize_writes_release_and_manifest_that_reproduces(tmp_path):
    out = tmp_path / "r.csv"
    info = json.loads(ok("sanitize", "toy-splu", "--sensitive", "disease", "--mechanism", "uniform",
                         "--param", "p=0.5", "--seed", "3", "--out", out, "--json"))
    man = info["manifest"]
    assert man["seed"] == 3 and man["params"]["p"] == 0.5
    first = pd.read_csv(out)
    # the manifest's command reproduces the same release
    cmd = man["reproduce"].split()
    assert cmd[:4] == ["python", "-m", "core", "sanitize"]
    out2 = tmp_path / "again.csv"
    args = cmd[3:]
    args[args.index("--out") + 1] = str(out2)
    ok(*args, inprocess=False)
    pd.testing.assert_frame_equal(first, pd.read_csv(out2))


def test_evaluate_json_bands_contract():
    res = json.loads(ok("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "uniform",
                        "--param", "p=0.5", "--queries", "400", "--seed", "1", "--json"))
    bands = res["bands"]
    assert bands[0]["unit"] == "count" and bands[0]["lo"] == 1 and bands[0]["hi"] == 10
    assert all(b["unit"] == "selectivity" for b in bands[1:])
    for b in bands:
        assert set(b) >= {"name", "unit", "lo", "hi", "queries", "mean_relative_error"}
    assert bands[0]["queries"] == 200
    assert bands[0]["mean_relative_error"] > bands[1]["mean_relative_error"]


@pytest.mark.slow
def test_one_bad_input_in_a_real_process(tmp_path):
    proc = run("sanitize", "adult", "--sensitive", "nope", "--mechanism", "uniform", "--out", "o.csv", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_json_into_a_closed_pipe_is_quiet():
    """`python -m core ... --json | head -1`: no BrokenPipeError traceback."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = f"{sys.executable} -m core bound splu-utility --json | head -1"
    proc = subprocess.run(cmd, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "{"
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_bound_json_has_x_and_series():
    res = json.loads(ok("bound", "splu-privacy", "--param", "gamma=10", "--param", "eps=0.3", "--json"))
    assert len(res["x"]) == len(res["series"]["privacy"]) > 0


def test_list():
    res = json.loads(ok("list", "--json"))
    assert "adult" in res["samples"] and "uniform" in res["mechanisms"] and "retention" in res["bounds"]


# The bad-input cases (files, columns, parameters, flags) are one table in test_bad_input_matrix.py.


@pytest.mark.slow
def test_tradeoff_recommend_and_report(tmp_path):
    # a 400-row table: large counts (11 and more) exist, so every point has a large-count error
    rng = np.random.default_rng(3)
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": rng.choice(list("xyz"), 400), "b": rng.choice(["u", "v"], 400),
                  "sa": rng.choice(list("pqrs"), 400)}).to_csv(path, index=False)
    res = json.loads(ok("tradeoff", path, "--sensitive", "sa", "--mechanisms", "uniform,laplace",
                        "--queries", "60", "--records", "42", "--json"))
    assert {p["mechanism"] for p in res["points"]} == {"uniform", "laplace"}
    for p in res["points"]:
        assert {"mechanism", "params", "risk", "utility", "inference_accuracy", "small_sum_disclosure",
                "presence", "large_error"} <= set(p)
    assert any(p["pareto"] for p in res["points"])
    # toy-sdr (42 rows) has no count above 10: no large-count error, so no point is on the front (no overlap
    # with the small counts fills that band any more)
    res = json.loads(ok("tradeoff", "toy-sdr", "--sensitive", "sa", "--mechanisms", "laplace",
                        "--queries", "60", "--records", "42", "--json"))
    assert all(p["large_error"] is None and not p["pareto"] for p in res["points"])
    rec = json.loads(ok("recommend", "toy-sdr", "--sensitive", "sa", "--mechanisms", "laplace",
                        "--queries", "60", "--large-error", "-1", "--max-lift", "-1", "--json"))
    best = rec["recommendations"][0]
    assert best["mechanism"] == "laplace" and best["meets_targets"]
    # exact: min over f = 1..10 of exp(-0.3 f eps) >= 0.6 needs eps <= ln(1/0.6)/3 = 0.17: only 0.01 and 0.1 qualify
    assert best["params"]["epsilon"] in (0.01, 0.1)
    out = tmp_path / "r.html"
    ok("report", "toy-splu", "--sensitive", "disease", "--mechanism", "uniform", "--param", "p=0.5",
       "--mechanisms", "laplace", "--queries", "40", "--out", out)
    text = out.read_text()
    assert "<script src" not in text and "manifest" in text.lower() and text.count('class="plot"') >= 4


# ------------------------------------------------------------------ flags: repeated, once, odd names (issue 12 items 1, 3, 4, 9)
def _parse(*argv):
    from core.cli import build_parser

    return build_parser().parse_args([str(a) for a in argv])


BASE = ["sanitize", "adult", "--sensitive", "occupation", "--mechanism", "uniform", "--out", "o.csv"]


@pytest.mark.parametrize("given", [
    ["--qi", "age", "--qi", "sex"], ["--qi", "age,sex"], ["--qi", "age", "sex"], ["--qi", "age, sex"],
    ["--qi=age", "--qi", "sex"], ["--qi", "age", "--qi", "sex", "--qi", "age"],
])
def test_every_form_of_qi_accumulates(given):
    assert list(dict.fromkeys(_parse(*BASE, *given).qi)) == ["age", "sex"]


@pytest.mark.parametrize("given", [
    ["--mechanisms", "uniform", "--mechanisms", "laplace"], ["--mechanisms", "uniform,laplace"],
    ["--mechanisms", "uniform", "laplace"],
])
def test_every_form_of_mechanisms_accumulates(given):
    assert _parse("tradeoff", "adult", "--sa", "occupation", *given).mechanisms == ["uniform", "laplace"]


def test_repeated_qi_reaches_the_release(tmp_path):
    """`--qi age --qi sex --qi race` kept only race (argparse nargs='+' without extend)."""
    info = json.loads(ok(*BASE[:-1], tmp_path / "o.csv", "--qi", "age", "--qi", "sex", "--qi", "race",
                         "--seed", "1", "--json"))
    assert info["manifest"]["input"]["qi"] == ["age", "sex", "race"]


@pytest.mark.parametrize("text, names", [
    ("a,b", ["a", "b"]), (r"a\,b", ["a,b"]), (r"a\\,b", ["a\\", "b"]), (r"a\b", [r"a\b"]), (" a , ,b ", ["a", "b"]),
    ("", []),
])
def test_split_names_reads_escaped_commas(text, names):
    from core.cli import join_name, split_names

    assert split_names(text) == names
    for name in names:
        assert split_names(join_name(name)) == [name]


def _once_options():
    """(command, option) for every option of every command that takes one value."""
    from core.cli import _Once, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    for command, p in sub.choices.items():
        for action in p._actions:
            if isinstance(action, _Once):
                yield command, action.option_strings[0]


ONCE = sorted(set(_once_options()))


def test_the_single_value_options_are_the_expected_ones():
    opts = {o for _, o in ONCE}
    assert {"--sensitive", "--mechanism", "--seed", "--out", "--manifest", "--queries", "--workload"} <= opts
    assert not {"--qi", "--mechanisms", "--param", "--workload-param"} & opts


@pytest.mark.parametrize("command, option", ONCE, ids=[f"{c} {o}" for c, o in ONCE])
def test_an_option_given_twice_is_refused(command, option, tmp_path):
    argv = [command, "adult", option, "1", option, "2"]
    if command == "bound":
        argv = [command, "retention", option, "1", option, "2"]
    proc = run_inprocess(*argv, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and f"{option} is given twice" in err and "give it once" in err
    assert list(tmp_path.iterdir()) == []


def test_sa_and_sensitive_are_the_same_option():
    proc = run_inprocess(*BASE, "--sa", "sex")
    assert proc.returncode == 2 and "given twice" in proc.stderr


@pytest.mark.parametrize("command", ["sanitize", "tradeoff", "report", "evaluate"])
@pytest.mark.parametrize("seed", ["-1", "2147483648", "1.5", "abc", "99999999999999999999"])
def test_a_seed_out_of_range_is_bad_input_not_an_internal_error(command, seed, tmp_path):
    argv = {"sanitize": BASE, "evaluate": ["evaluate", "adult", "--sa", "occupation", "--mechanism", "uniform"],
            "tradeoff": ["tradeoff", "adult", "--sa", "occupation"],
            "report": ["report", "adult", "--sa", "occupation", "--mechanism", "uniform", "--out", "r.html"]}[command]
    proc = run_inprocess(*argv, "--seed", seed, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "seed must be a whole number from 0 to 2,147,483,647" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_core_refuses_a_negative_seed_with_a_sentence():
    from core.errors import ParameterError
    from core.mechanisms import sanitize
    from core.table import load_dataset

    with pytest.raises(ParameterError, match="seed must be a whole number"):
        sanitize(load_dataset("toy-splu", "disease"), "uniform", None, -1)


def _workloads():
    from core.workloads import WORKLOADS

    return list(WORKLOADS)


@pytest.mark.slow
@pytest.mark.parametrize("workload", _workloads())
def test_every_workload_runs_with_its_defaults_on_adult(workload):
    """`evaluate --workload seed004` failed on `groupbys ... Got 5000`, a value the user never set."""
    if workload == "joint":  # needs a second sensitive attribute (tests/test_joint.py): one sentence without it
        proc = run_inprocess("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "uniform",
                             "--workload", workload, "--seed", "1")
        assert proc.returncode == 2 and "Joint queries need a second sensitive attribute" in proc.stderr
        return
    res = json.loads(ok("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "uniform",
                        "--workload", workload, "--seed", "1", "--json"))
    assert res["bands"] and sum(b["queries"] for b in res["bands"]) > 0


@pytest.mark.parametrize("extra, fragment", [
    (["--workload", "seed004", "--queries", "5000"], "--queries sets the 'groupbys' setting of workload seed004"),
    (["--queries", "400", "--workload-param", "queries=500"], "both set the size of workload seed000"),
])
def test_queries_is_the_workloads_size_setting(extra, fragment):
    proc = run_inprocess("evaluate", "adult", "--sa", "occupation", "--mechanism", "uniform", *extra)
    assert proc.returncode == 2 and fragment in proc.stderr, proc.stderr


# ------------------------------------------------------------------ the reproduce command with hostile column names
ODD_NAMES = ["--manifest={evil}", "-dx", "a,b", "città 東京", "with space", "quo\"te's", "back\\slash,", "$(touch {evil2})",
             "--", "-"]


def _shell_python(tmp_path):
    """A folder with `python` pointing at this interpreter (the reproduce command says `python`)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bindir / "python").chmod(0o755)
    return {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.slow
@pytest.mark.parametrize("sa_index", [1, 5])
def test_reproduce_command_survives_any_column_name(tmp_path, sa_index):
    """Item 4: a QI named `--manifest=/tmp/x.json` made the reproduce command write that file."""
    import numpy as np

    evil, evil2 = tmp_path / "evil.json", tmp_path / "evil2"
    names = [n.format(evil=evil, evil2=evil2) for n in ODD_NAMES]
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({n: rng.choice([f"v{i}" for i in range(3 + j % 4)], 60) for j, n in enumerate(names)})
    first, again = tmp_path / "first", tmp_path / "again"
    first.mkdir()
    again.mkdir()
    for d in (first, again):
        frame.to_csv(d / "-odd name.csv", index=False)
    sa = names[sa_index]
    qi = [n for n in names if n != sa]
    qi_args = [f"--qi={n.replace(chr(92), chr(92) * 2).replace(',', chr(92) + ',')}" for n in qi]
    proc = run_inprocess("sanitize", "--sensitive=" + sa, *qi_args, "--mechanism", "uniform", "--seed", "4",
                         "--out", "release.csv", "--", "-odd name.csv", cwd=first)
    assert proc.returncode == 0, proc.stderr
    man = json.loads((first / "release.manifest.json").read_text())
    assert man["input"]["qi"] == qi and man["input"]["sensitive"] == sa
    shell = subprocess.run(["bash", "-c", man["reproduce"]], cwd=again, env=_shell_python(tmp_path),
                           capture_output=True, text=True, timeout=120)
    assert shell.returncode == 0, shell.stderr
    assert sorted(p.name for p in again.iterdir()) == ["-odd name.csv", "release.csv", "release.manifest.json"]
    for name in ("release.csv", "release.manifest.json"):
        assert (again / name).read_bytes() == (first / name).read_bytes()
    assert not evil.exists() and not evil2.exists()


# ------------------------------------------------------------------ --require-guarantee (issue 13 §1)
@pytest.mark.slow
def test_require_guarantee_exits_3_with_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "rel"
    proc = run("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "mondrian", "--seed", "1",
               "--out", out, "--require-guarantee")
    assert proc.returncode == 3
    assert proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert "association ≤ β = 0.1 fails on 462 of 462 groups" in proc.stderr
    # every parameter searched, ranked by groups (issue 23 §2): β raised at k = 10 keeps 1,514 groups; the k that
    # meets at β = 0.135 leaves one group, named as publishing little
    assert "Nearest setting that meets it: β = 0.945 (1,514 groups)." in proc.stderr
    assert "Also meets: β = 0.135, k = 21799 (1 group, publishes little)" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()


@pytest.mark.slow
def test_require_guarantee_refuses_a_qualified_meets(tmp_path):
    # Ambiguity leaves 16,942 records unpublished: never a plain meets
    proc = run_inprocess("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "ambiguity", "--seed", "1",
                         "--out", tmp_path / "amb", "--require-guarantee")
    assert proc.returncode == 3 and proc.stderr.count("\n") == 1
    assert "16,942 of 45,222 records are not published" in proc.stderr and "β = 0.143" in proc.stderr


@pytest.mark.slow
def test_the_verdict_line_without_the_flag_and_a_release_that_meets(tmp_path):
    text = ok("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "splu", "--seed", "1",
              "--out", tmp_path / "a.csv")
    line = next(ln for ln in text.splitlines() if ln.startswith("verdict: "))
    assert "splu: does not meet its guarantee" in line and "Nearest setting that meets it: γ = 7" in line
    assert (tmp_path / "a.csv").exists()  # without the flag the release is written
    text = ok("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "splu", "--param", "gamma=7",
              "--seed", "1", "--out", tmp_path / "b.csv", "--require-guarantee")
    assert "verdict: splu: meets its guarantee: T_p 0.6034" in text
    man = json.loads((tmp_path / "b.manifest.json").read_text())
    assert man["verdict"]["outcome"] == "meets" and man["verdict"]["plain"] is True
    js = json.loads(ok("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "splu", "--seed", "1",
                       "--out", tmp_path / "c.csv", "--json"))
    assert js["verdict"]["suggestion"]["params"] == {"gamma": 7} and js["verdict"]["suggestion"]["verified"]


def test_records_beyond_the_table_are_reported_not_dropped_silently():
    base = ["tradeoff", "toy-sdr", "--sensitive", "sa", "--mechanisms", "laplace", "--queries", "40", "--json"]
    typed = run_inprocess(*base, "--records", "100000")
    assert typed.returncode == 0 and "note: --records 100,000 is more than the table's 42 records" in typed.stderr
    assert json.loads(typed.stdout)["records_sampled"] == 42
    default = run_inprocess(*base)
    assert default.returncode == 0 and "--records" not in default.stderr
