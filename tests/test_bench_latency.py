"""bench/latency.py never fails without a figure: a failing section keeps what it measured, and says why."""

from __future__ import annotations

from pathlib import Path

from bench import latency


def test_a_section_that_times_out_keeps_its_figures_and_the_reason():
    results: dict = {}

    def run(out):
        out["uniform"] = 0.5
        raise TimeoutError("no rerun ended")

    latency._section(results, "sanitize", {}, run)
    assert results["sanitize"] == {"uniform": 0.5}
    assert results["errors"]["sanitize"] == "TimeoutError: no rerun ended"
    assert "Sanitize slider, uniform | 0.50" in latency.table(results)


def test_a_section_that_returns_a_new_value_is_kept():
    results: dict = {}
    latency._section(results, "query", [], lambda out: [0.1, 0.3, 0.2])
    assert results["query"] == [0.1, 0.3, 0.2] and "errors" not in results


def test_slider_targets_are_ratios_to_the_floor_of_the_same_run():
    results = {"floor": {"slider": 0.4, "first": {"paint": 1.0}},
               "paint": {"paint": 1.5, "run": 3.0},
               "sanitize": {"uniform": 0.45, "mondrian": 0.9, "dbr": None}}
    text = latency.table(results)
    assert "| Sanitize slider, median over the mechanisms | 0.68 | ≤ 0.5 | no (+0.18 s) | 1.69x |" in text
    assert "| Sanitize slider, slowest (mondrian) | 0.90 | ≤ 0.8 | no (+0.10 s) | 2.25x |" in text
    assert "| First paint of Home (fresh server, from its health check) | 1.50 | ≤ 2 | yes | 1.50x |" in text


def test_the_map_rows_carry_first_points_and_cpu_and_the_large_table_case():
    results = {"floor": {"slider": 0.5},
               "map_report": {"map": 2.5, "map first points": 0.8, "map cpu": 4.0, "map progress shown": True},
               "map_rows": {"data": "census:100000", "map": 12.0, "map first points": 1.5, "map cpu": 20.0,
                            "map progress shown": True}}
    text = latency.table(results)
    assert "| Trade-off map on Adult, measure every setting | 2.50 | ≤ 3 | yes | 5.00x |" in text
    assert "|   Trade-off map on Adult: first points drawn | 0.80 | ≤ 1 | yes | 1.60x |" in text
    assert "| Trade-off map on census:100000, measure every setting | 12.00 | ≤ 10 | no (+2.00 s) | 24.00x |" in text
    assert "|   Trade-off map on census:100000: server CPU seconds in that time (not wall) | 20.00 |  |  |  |" in text


def test_the_fix_shown_and_the_settled_page_are_reported_beside_the_floor_targets():
    results = {"floor": {"slider": 0.4},
               "sanitize": {"uniform": 0.45, "mondrian": 0.9, "_fixed": {"uniform": 0.45, "mondrian": 1.2},
                            "_settled": {"uniform": 1.5, "mondrian": 2.5}}}
    text = latency.table(results)
    assert "| Sanitize slider until the nearest-setting fix is shown, median | 0.82 | ≤ 0.5 | no (+0.32 s) |" in text
    assert "|   fix shown, slowest (mondrian) | 1.20 | ≤ 0.8 | no (+0.40 s) | 3.00x |" in text
    assert "count in people drawn), median | 2.00 | ≤ 0.5 | no (+1.50 s) | 5.00x |" in text
    assert "|   Sanitize slider, _fixed" not in text


def test_the_searching_text_the_bench_waits_on_is_the_page_s():
    from pathlib import Path

    page = (Path(latency.ROOT) / "pages" / "1_Sanitize.py").read_text()
    assert f'pending="{latency.SEARCHING}…"' in page


def test_the_memory_at_rest_waits_as_long_as_the_server_s_pause():
    """The bench reads the census session's memory after the pause that makes the server hand free heap back."""
    from core import lru

    assert latency.IDLE_TRIM_SECONDS == lru.IDLE_TRIM_SECONDS


def test_one_session_is_read_after_the_server_closes_the_bench_s_other_sessions():
    """The census figure of one session waits out how long Streamlit keeps a closed tab's session (the app's
    config leaves Streamlit's default); a shorter wait would count the bench's earlier sessions' releases."""
    import streamlit as st

    assert latency.DISCONNECTED_TTL >= float(st.get_option("server.disconnectedSessionTTL"))
    assert "disconnectedSessionTTL" not in (Path(latency.ROOT) / ".streamlit" / "config.toml").read_text()
