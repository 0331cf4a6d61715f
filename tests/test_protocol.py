"""core.engine: Combos, ranks, the published order, and planned mechanisms' releases across batch sizes."""

import hashlib
import json

import numpy as np
import pytest

from core import mechanisms, release as rel, rng, table
from core.engine import local
from core.engine.combos import Combos
from core.engine.protocol import Chunk, Plan, ranks


def _dataset(n=3000, seed=0, dtype=np.int32, m=9, qi=("a", "b", "c")):
    g = np.random.default_rng(seed)
    frame = {"a": g.integers(0, 5, n), "b": g.integers(0, 40, n), "c": g.choice(["x", "y", "z"], n),
             "s": g.choice([f"v{i}" for i in range(m)], n, p=np.linspace(1, 2, m) / np.linspace(1, 2, m).sum())}
    import pandas as pd

    data = table.bind(table.make_table(pd.DataFrame(frame), "toy"), "s", list(qi))
    if dtype != np.int32:
        import dataclasses

        data = dataclasses.replace(data, sa_codes=data.sa_codes.astype(dtype),
                                   qi_codes=tuple(c.astype(dtype) for c in data.qi_codes))
    return data


def _bytes(release):
    """Every table (codes, labels) and the manifest, as bytes."""
    h = hashlib.sha256()
    for name, t in release.tables.items():
        h.update(name.encode())
        for col, values in t.columns.items():
            h.update(col.encode() + str(values.dtype).encode() + np.ascontiguousarray(values).tobytes())
        h.update(rel.csv_bytes(t.to_frame()))
    h.update(rel.manifest_bytes(release))
    return h.hexdigest()


@pytest.fixture(scope="module")
def adult():
    return table.load_dataset("adult")


# ---------------------------------------------------------------- Combos
@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint16])
def test_combos_count_every_combination_and_merge_partitions(dtype):
    data = _dataset(dtype=dtype)
    c = Combos.of(data)
    assert c.n == data.n and c.count.min() > 0
    rows = np.stack([*data.qi_codes, data.sa_codes], axis=1).astype(np.int64)
    uniq, counts = np.unique(rows, axis=0, return_counts=True)  # lexicographic, as Combos
    assert np.array_equal(np.stack([*c.qi, c.sa], axis=1), uniq) and np.array_equal(c.count, counts)
    assert np.array_equal(c.sa_counts, np.bincount(data.sa_codes, minlength=data.m))
    cuts = [0, 1, 700, 701, 2500, data.n]
    parts = [Combos.from_codes([q[a:b] for q in data.qi_codes], data.sa_codes[a:b], data.domains, data.m)
             for a, b in zip(cuts, cuts[1:])]
    merged = Combos.merge(parts[::-1])
    assert np.array_equal(merged.count, c.count) and all(np.array_equal(x, y) for x, y in zip(merged.qi, c.qi))
    # lookups: every record finds its combination and its QI group
    row = c.row_of(data.qi_codes, data.sa_codes)
    assert np.array_equal(c.sa[row], data.sa_codes) and np.array_equal(c.qi[1][row], data.qi_codes[1])
    group, k = c.qi_groups()
    assert np.array_equal(c.group_of(data.qi_codes), group[row])
    assert np.array_equal(c.qi_sizes(), np.bincount(group[row], minlength=k))


def test_combos_keys_do_not_overflow_with_huge_domains():
    # domains whose product is far beyond 2**63: folded key, same answers
    n = 500
    g = np.random.default_rng(1)
    qi = [g.integers(0, 3, n) * 1_000_000 for _ in range(4)]
    sa = g.integers(0, 3, n)
    c = Combos.from_codes(qi, sa, [3_000_001] * 4, 3)
    uniq, counts = np.unique(np.stack([*qi, sa], axis=1), axis=0, return_counts=True)
    assert np.array_equal(np.stack([*c.qi, c.sa], axis=1), uniq) and np.array_equal(c.count, counts)
    row = c.row_of(qi, sa)
    assert np.array_equal(c.sa[row], sa) and np.array_equal(c.qi[3][row], qi[3])


def test_weighted_records_answer_the_workload_as_the_table():
    from core.workload import data_records, seed000, true_answers

    data = _dataset()
    wl = seed000(data, queries=300, seed=2)
    assert np.allclose(true_answers(Combos.of(data).records(), wl.batches),
                       true_answers(data_records(data), wl.batches))


# ---------------------------------------------------------------- ranks and order
def test_ranks_over_the_whole_table_whatever_the_chunks():
    key = np.random.default_rng(3).integers(0, 6, 1000)
    whole, _ = ranks(key, 6)
    for k in range(6):  # rank = how many earlier records share the key
        assert np.array_equal(whole[key == k], np.arange((key == k).sum()))
    before = np.zeros(6, dtype=np.int64)
    parts = []
    for a in range(0, 1000, 7):
        r, c = ranks(key[a:a + 7], 6, before)
        before += c
        parts.append(r)
    assert np.array_equal(np.concatenate(parts), whole)


def test_parts_bits_depends_on_n_only_and_bounds_part_size():
    assert local.parts_bits(0) == local.parts_bits(1) == local.parts_bits(2**21) == 0
    assert local.parts_bits(2**21 + 1) == 1
    for n in (5_000_000, 10**7, 10**8, 10**9):
        b = local.parts_bits(n)
        assert n / 2**b <= 2**21 < n / 2**(b - 1)


@pytest.mark.slow
def test_published_order_is_by_key_then_position():
    keys = rng.order_keys(5, 0, 50_000)
    keys[10:20] = keys[3]  # ties: by position
    o = local.published_order(keys)
    assert np.array_equal(o, np.lexsort((np.arange(len(keys)), keys)))
    # the part-by-part sort (n above one part) gives the same order
    big = rng.order_keys(6, 0, 2**21 + 5000)
    o = local.published_order(big)
    assert np.array_equal(o, np.argsort(big, kind="stable"))
    b = local.parts_bits(len(big))
    bounds = local.part_bounds(big[o], b)
    assert bounds[0] == 0 and bounds[-1] == len(big) and len(bounds) == 2**b + 1
    assert np.all(big[o][bounds[1]:] >> np.uint64(63) == 1) and np.all(big[o][:bounds[1]] >> np.uint64(63) == 0)


class _EchoPlan(Plan):
    """A plan returning each record's position, key and rank: what the engine gave it."""

    def apply(self, chunk: Chunk):
        n = len(chunk)
        return {"pos": np.arange(chunk.start, chunk.start + n), "key": chunk.key, "rank": chunk.rank,
                "_keep": (np.arange(chunk.start, chunk.start + n) % 3) != 0}

    def tally(self, chunk, out):
        return {"kept": int(out["_keep"].sum())}

    def finish(self, totals):
        return {"kept": totals["kept"]}


@pytest.mark.parametrize("rank_by", ["sa", "qi", "qi_sa"])
def test_the_engine_gives_whole_table_ranks_and_keeps_published_order(rank_by):
    data = _dataset(800)
    plan = _EchoPlan(seed=3, rank_by=rank_by, labels={"pos": None, "key": None, "rank": None})
    a = local.run(data, plan, batch_rows=7)
    b = local.run(data, plan, batch_rows=None)
    t = a.tables["release"]
    assert all(np.array_equal(t.columns[c], b.tables["release"].columns[c]) for c in t.columns)
    pos = t.columns["pos"]
    assert a.privacy["kept"] == len(pos) == np.count_nonzero(np.arange(data.n) % 3)
    keys = rng.order_keys(3, 0, data.n)[pos]
    assert np.all(keys[1:] >= keys[:-1])  # published order: by order key
    key = np.empty(data.n, dtype=np.int64)
    key[pos] = t.columns["key"]
    rank = np.empty(data.n, dtype=np.int64)
    rank[pos] = t.columns["rank"]
    whole_key, _ = Combos.of(data).key_of(rank_by, data.qi_codes, data.sa_codes)
    whole_rank, _ = ranks(whole_key, int(whole_key.max()) + 1)
    assert np.array_equal(key[pos], whole_key[pos]) and np.array_equal(rank[pos], whole_rank[pos])
    assert np.array_equal(t.columns["a"], data.qi_codes[0][pos])  # QI columns unchanged, same rows


# ---------------------------------------------------------------- planned mechanisms
PLANNED = [("uniform", {}), ("uniform", {"p": 0.3}), ("dbr", {}), ("laplace", {"epsilon": 0.5}),
           pytest.param("splu", {"gamma": 4}, marks=pytest.mark.slow),
           ("splu", {"gamma": 5, "partition": "sorted", "p": 0.4}),
           pytest.param("splu", {"gamma": 2, "sa2": "c"}, marks=pytest.mark.slow), ("reconstruction", {"p": 0.46, "lambda": 0.5, "delta": 0.5}),
           ("reconstruction", {"p": 0.3})]


@pytest.mark.parametrize("name,raw", PLANNED)
def test_same_release_byte_for_byte_whatever_the_batch_size(name, raw):
    data = _dataset(3000, m=12, qi=("a", "b") if raw.get("sa2") else ("a", "b", "c"))
    assert mechanisms.get(name).planned
    got = {b: _bytes(mechanisms.sanitize(data, name, raw, seed=11, batch_rows=b)) for b in (None, 7, 1000)}
    assert len(set(got.values())) == 1, got
    assert got[None] != _bytes(mechanisms.sanitize(data, name, raw, seed=12))


@pytest.mark.slow
def test_rp_resamples_and_each_resampled_group_repeats_its_sample(adult):
    raw = {"p": 0.46, "lambda": 0.7, "delta": 0.5}
    r7 = mechanisms.sanitize(adult, "reconstruction", raw, seed=4, batch_rows=4099)
    r = mechanisms.sanitize(adult, "reconstruction", raw, seed=4)
    assert _bytes(r7) == _bytes(r)
    assert r.privacy["resampled_groups"] > 100 and r.privacy["violating_groups_after"] == 0
    t = r.tables["release"]
    c = Combos.of(adult)
    from core.mechanisms.reconstruction import analyse, micro_groups_of

    an = analyse(micro_groups_of(c), 0.46, adult.m, 0.7, 0.5)
    grp = c.group_of([t.columns[q] for q in adult.qi])
    assert np.array_equal(np.bincount(grp, minlength=an.groups.n_groups), an.groups.size)  # sizes kept
    for gid in np.flatnonzero(an.resample)[:300]:
        assert len(np.unique(t.columns[adult.sa][grp == gid])) <= an.n_sample[gid]


def test_manifest_records_randomness_and_the_command_carries_it(adult):
    r = mechanisms.sanitize(adult, "uniform", {}, seed=2)
    man = json.loads(rel.manifest_bytes(r))
    assert man["randomness"] == rng.VERSION
    assert f"--randomness {rng.VERSION}" in man["reproduce"]


def test_randomness_mismatch_is_one_sentence():
    assert rng.mismatch(rng.VERSION, "x") is None
    text = rng.mismatch(None, "The session 'a.json'", "give --randomness 1", verb="was saved with")
    assert text.startswith("The session 'a.json' was saved with randomness version 0") and text.endswith(".") and ". " not in text


def test_dbr_draws_from_the_table_distribution(adult):
    from scipy import stats

    r = mechanisms.sanitize(adult, "dbr", {}, seed=8)
    out = np.bincount(r.tables["release"].columns[adult.sa], minlength=adult.m)
    expected = adult.sa_counts / adult.n * adult.n
    assert stats.chisquare(out, expected).pvalue > 0.001
    # independent of the record: unchanged at the rate sum f_x^2 (4 standard errors)
    share = r.privacy["share_unchanged"]
    f2 = float(np.sum((adult.sa_counts / adult.n) ** 2))
    assert abs(share - f2) < 4 * np.sqrt(f2 * (1 - f2) / adult.n)


def test_laplace_histogram_noise_is_laplace_of_scale_one_over_epsilon():
    from scipy import stats

    from core.mechanisms.laplace import laplace_noise

    noise = laplace_noise(3, "laplace", 0, 100_000, 2.0)
    assert stats.kstest(noise, stats.laplace(scale=2.0).cdf).pvalue > 0.001
    assert np.all(np.isfinite(noise))
    data = _dataset(500)
    r = mechanisms.sanitize(data, "laplace", {"epsilon": 0.5}, seed=3)
    hist = r.tables["histogram"].columns["noisy_count"]
    assert np.allclose(hist, data.sa_counts + laplace_noise(3, "laplace", 0, data.m, 2.0))
    assert len(r.tables) == 1 and r.rows_out == data.m


# ---------------------------------------------------------------- SPLU-Gen's decoy layout
@pytest.mark.parametrize("mixed", [True, False])
@pytest.mark.parametrize("n,gamma,seed", [(3000, 4, 0), (2999, 5, 1), (47, 3, 2), (7, 4, 3), (1001, 7, 4)])
def test_decoy_groups_hold_distinct_values_and_members_read_back(n, gamma, seed, mixed):
    from core.mechanisms.splu import DecoyLayout
    from core.partition import largest_feasible

    g = np.random.default_rng(seed)
    counts = np.bincount(g.integers(0, 9, n), minlength=9)
    if largest_feasible(counts) < gamma:
        counts = np.full(9, n // 9) + (np.arange(9) < n % 9)
    lay = DecoyLayout(counts, gamma, seed, mixed)
    pos = np.arange(lay.n)
    group, slot = lay.group_and_slot(pos)
    value = lay.value_at(pos)
    assert len(np.unique(group * 100 + value)) == lay.n  # no value twice in a group
    sizes = np.bincount(group, minlength=lay.r)
    assert np.array_equal(sizes, lay.sizes(np.arange(lay.r))) and sizes.min() >= gamma
    assert np.array_equal(lay.member_values(group, slot), value)
    assert len(np.unique(group * 100 + slot)) == lay.n  # one member per slot
    assert sum(lay.size_counts().values()) == lay.r
    # ranks map onto positions one to one
    sa = np.repeat(np.arange(9), counts)
    rank = np.concatenate([np.arange(c) for c in counts])
    assert np.array_equal(np.sort(lay.position(sa, rank)), pos)


def test_random_decoy_layout_pairs_values_across_columns(adult):
    """The plan's random layout, like core.partition's, lets values with no column in common meet."""
    from core.mechanisms.splu import DecoyLayout

    m, gamma = adult.m, 4
    counts = adult.sa_counts
    never = {}
    for mixed in (False, True):
        lay = DecoyLayout(counts, gamma, 5, mixed)
        r = lay.r
        columns = [set(range(lay.start[v] // r, (lay.start[v] + counts[v] - 1) // r + 1)) for v in range(m)]
        big = [v for v in range(m) if counts[v] >= 1000]
        apart = [(a, b) for a in big for b in big if a < b and not columns[a] & columns[b]]
        group, _ = lay.group_and_slot(np.arange(lay.n))
        has = np.zeros((r, m), dtype=bool)
        has[group, lay.value_at(np.arange(lay.n))] = True
        never[mixed] = sum(1 for a, b in apart if not (has[:, a] & has[:, b]).any())
    assert never[True] == 0 and never[False] >= 5, never


def test_splu_draw_keeps_own_value_with_p_and_spreads_the_rest_over_the_group(adult):
    """Published value = own with probability p, else another group member uniformly (seed 000 Step 3)."""
    from scipy import stats

    r = mechanisms.sanitize(adult, "splu", {"gamma": 5, "p": 0.4}, seed=21)
    out = r.tables["release"].columns[adult.sa]
    order = local.record_order(21, adult.n)
    same = float(np.mean(out == adult.sa_codes[order]))
    assert abs(same - 0.4) < 4 * np.sqrt(0.24 / adult.n)
    # the published counts of each value: expected f_v p + (1 - p) * (records of other values whose group has v) / 4
    assert stats.chisquare(np.bincount(out, minlength=adult.m) + 1,
                           adult.sa_counts + 1).pvalue > 1e-6  # SPLU keeps value totals close (Theorem 2)


# ---------------------------------------------------------------- randomness versions on the way back in
def test_a_command_of_another_randomness_version_is_refused_in_one_sentence(tmp_path, capsys):
    from core import cli

    csv = tmp_path / "t.csv"
    _dataset(60).frame().to_csv(csv, index=False)
    base = ["sanitize", str(csv), "--sensitive", "s", "--qi", "a", "b", "--mechanism", "uniform", "--seed", "3"]
    code = cli.main(base + ["--randomness", "0", "--out", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "randomness version 0" in err and err.count("\n") == 1
    assert not (tmp_path / "r.csv").exists()
    # the manifest's own command (with this version's number) runs and writes the same release
    assert cli.main(base + ["--out", str(tmp_path / "a.csv")]) == 0
    man = json.loads((tmp_path / "a.manifest.json").read_text())
    assert f"--randomness {rng.VERSION}" in man["reproduce"]
    assert cli.main(base + ["--randomness", str(rng.VERSION), "--out", str(tmp_path / "b.csv")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_a_session_of_another_randomness_version_says_so(tmp_path, capsys):
    from core import cli, session as S

    t = table.load_table("adult")
    s = S.Session(S.TableRef("sample", "adult", t.content_hash, len(t)), "occupation", ("age", "sex"),
                  S.Setting("uniform", {"p": 0.5}, 3))
    text = S.dumps(s)
    assert json.loads(text)["randomness"] == rng.VERSION and S.read(text.encode(), "s.json")[0] == s
    doc = json.loads(text)
    del doc["randomness"]  # a file saved before the version was recorded
    old = tmp_path / "old.workbench.json"
    old.write_text(json.dumps(doc), encoding="utf-8")
    assert S.read(old.read_bytes(), old.name)[0].randomness == 0
    code = cli.main(["sanitize", "--session", str(old), "--out", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "randomness version 0" in err
    assert f"--randomness {rng.VERSION}" in err and not (tmp_path / "r.csv").exists()
    code = cli.main(["sanitize", "--session", str(old), "--randomness", str(rng.VERSION),
                     "--out", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 0 and "writes this version's release of a session saved with randomness version 0" in err
    bad = dict(doc, randomness="one")
    with pytest.raises(S.SessionError):
        S.read(json.dumps(bad).encode(), "bad.json")


@pytest.mark.slow
def test_home_opens_an_older_session_with_one_warning_that_it_draws_differently():
    from conftest import app, no_exception, plain
    from core import session as S

    adult = table.load_table("adult")
    s = S.Session(S.TableRef("sample", "adult", adult.content_hash, len(adult)), "occupation", ("age", "sex"),
                  S.Setting("uniform", {"p": 0.5}, 3), pins=(S.Pin("half", S.Setting("uniform", {"p": 0.5}, 3)),))
    doc = s.to_json()
    doc["randomness"] = 0
    at = app()
    at.file_uploader(key="w_session_file").set_value(("old.workbench.json", json.dumps(doc).encode(),
                                                      "application/json")).run()
    no_exception(at)
    assert not at.error and not at.success and len(at.warning) >= 1
    text = [plain(w.value) for w in at.warning if "Opened 'old.workbench.json'" in plain(w.value)]
    assert len(text) == 1 and "randomness version 0" in text[0] and "draws differently" in text[0]
    assert [p.name for p in at.session_state["wb_pins"]] == ["half"]  # still opened


@pytest.mark.slow  # over 1 s of CPU (the conftest check)
def test_order_grouped_in_small_groups_is_the_stable_argsort(monkeypatch):
    """The part-by-part order, grouped a few records at a time, is the stable argsort; bounds from counts."""
    monkeypatch.setattr(local, "GROUP_ROWS", 1000)
    for n in (300, 2**21 + 5000, 3 * 2**21 + 17):
        keys = rng.order_keys(7, 0, n)
        keys[100:200] = keys[50]  # ties: by position
        order, bounds = local.ordered_parts(keys)
        assert order.dtype == np.int32
        assert np.array_equal(order, np.argsort(keys, kind="stable"))
        assert np.array_equal(bounds, local.part_bounds(keys[order], local.parts_bits(n)))
        # the records kept of a larger table are cut into that table's parts (more bits than their own count's)
        order, bounds = local.ordered_parts(keys, 3)
        assert np.array_equal(order, np.argsort(keys, kind="stable"))
        assert np.array_equal(bounds, local.part_bounds(keys[order], 3))


def test_words_read_in_batches_are_one_read(monkeypatch):
    """Reading the stream a batch at a time gives the words of one read, for every k and start."""
    monkeypatch.setattr(rng, "WORDS_BATCH", 7)
    for k in (1, 2, 4):
        for n, start in ((5, 0), (50, 17), (1, 9)):
            raw = np.random.Philox(key=rng.key(3, "x"), counter=start).random_raw(4 * n).reshape(n, 4)
            assert np.array_equal(rng.words(3, "x", start, n, k), raw[:, 0] if k == 1 else raw[:, :k])


def test_gather_keeps_values_in_the_narrowest_type(monkeypatch):
    monkeypatch.setattr(local, "GATHER_ROWS", 3)
    codes = np.array([0, 255, 3, 7, 255], dtype=np.int32)
    order = np.array([4, 2, 0, 1, 3], dtype=np.int32)
    out = local.gather(codes, order, 256)
    assert out.dtype == np.uint16 and out.tolist() == [255, 3, 0, 255, 7]  # 256 labels: a code 256 would not fit uint8
    assert local.gather(codes, order, 255).dtype == np.uint8
    assert local.gather(codes, order).dtype == np.int32  # plain values keep their type
    assert local.code_dtype(np.int64, 70_000) == np.uint32 and local.code_dtype(np.uint8, 1000) == np.uint8
    assert local.code_dtype(np.float64, 3) == np.float64 and local.code_dtype(np.int16, None) == np.int16


def test_rp_test_on_the_summary_is_the_test_on_the_records(adult):
    """RP's check reads the micro groups from the combinations: the same analysis as from every record."""
    from core.mechanisms.reconstruction import analyse, micro_groups, summary_groups
    from core.table import load_dataset

    for data in (adult, load_dataset("census:20000")):
        a, b = micro_groups(data), summary_groups(data)
        for field in ("size", "pair_group", "pair_value", "pair_count", "top_count", "top_value"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), field
        for p in (0.2, 0.46, 0.9):
            x, y = analyse(a, p, data.m, 0.3, 0.3), analyse(b, p, data.m, 0.3, 0.3)
            assert np.array_equal(x.resample, y.resample) and np.array_equal(x.n_sample, y.n_sample)
            assert np.array_equal(x.stuck, y.stuck)


def test_rp_group_labels_from_the_summary_are_those_of_the_records(adult):
    """The RP view names its resampled groups from the combinations (no per-record arrays): the same text."""
    from core.mechanisms.reconstruction import group_labels, micro_groups, summary_groups
    from core.table import load_dataset

    for data in (adult, load_dataset("census:20000")):
        a, b = micro_groups(data), summary_groups(data)
        assert len(b.first_row) == 0 < len(a.first_row)
        ids = np.r_[0, np.random.default_rng(5).choice(a.n_groups, 300, replace=False), a.n_groups - 1]
        got = group_labels(data, b, ids)
        assert got == group_labels(data, a, ids)
        # and the text is the group's: its first record's QI values
        r = int(a.first_row[ids[1]])
        assert got[1] == ", ".join(f"{c} = {data.qi_labels[j][data.qi_codes[j][r]]}" for j, c in enumerate(data.qi))
