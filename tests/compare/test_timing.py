"""Repeated timings and the tie rule, on synthetic timings (no clock is
read here: the machine is shared, and a test of measured times would pass
or fail with its load), and the Findings built on them."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from eomcompare.compare.findings import findings
from eomcompare.compare.timing import (
    MIN_SAMPLES,
    beyond_noise,
    calibrate_clocks,
    repeat_within,
    settled,
    spread,
    tied_with_best,
)


def test_spread_is_median_and_interquartile_range():
    # Five values 1..5: median 3; linear quartiles at positions 1 and 3 of
    # 0..4, i.e. 2 and 4, so the range is 2 whatever order they come in.
    s = spread([5.0, 1.0, 4.0, 2.0, 3.0])
    assert (s.median, s.iqr, s.k) == (3.0, 2.0, 5)
    # Four values 0, 1, 2, 10: quartile positions 0.75 and 2.25 give
    # 0.75 and 2 + 0.25 * 8 = 4, so 3.25; the median is 1.5.
    s = spread([0.0, 1.0, 2.0, 10.0])
    assert s.median == pytest.approx(1.5) and s.iqr == pytest.approx(3.25)
    # Non-finite measurements are not measurements.
    assert spread([1.0, float("nan"), 3.0, 2.0]).k == 3


def test_spread_of_too_few_measurements_is_unknown():
    assert MIN_SAMPLES == 3
    one = spread([0.7])
    assert one.median == 0.7 and math.isnan(one.iqr) and one.k == 1
    assert math.isnan(spread([1.0, 2.0]).iqr)
    none = spread([])
    assert math.isnan(none.median) and none.k == 0


def test_a_clear_winner_is_beyond_the_noise():
    fast = spread([1.00, 1.02, 0.98, 1.01, 0.99])  # IQR 0.02
    slow = spread([1.50, 1.55, 1.45, 1.52, 1.48])  # IQR 0.04
    assert beyond_noise(fast, slow)
    assert not beyond_noise(slow, fast)
    assert tied_with_best({"b": slow, "a": fast}) == ["a"]


def test_a_difference_within_the_larger_spread_is_a_tie():
    # Medians 1.0 and 1.2 apart by 0.2; the second's IQR is 0.3.
    fast = spread([0.95, 1.0, 1.0, 1.0, 1.05])
    wide = spread([1.0, 1.05, 1.2, 1.35, 1.4])
    assert wide.iqr == pytest.approx(0.3)
    assert not beyond_noise(fast, wide)
    assert tied_with_best({"wide": wide, "fast": fast}) == ["fast", "wide"]
    # The same medians with narrow spreads are not a tie.
    narrow = spread([1.19, 1.2, 1.2, 1.2, 1.21])
    assert tied_with_best({"narrow": narrow, "fast": fast}) == ["fast"]


def test_single_measurements_are_never_ranked():
    # Twice as fast, measured once each: no spread tells the noise.
    a, b = spread([1.0]), spread([2.0])
    assert not beyond_noise(a, b)
    assert tied_with_best({"a": a, "b": b}) == ["a", "b"]
    # One side measured repeatedly: its spread is the noise.
    assert beyond_noise(spread([1.0, 1.1, 0.9, 1.0, 1.0]), b)
    # Quartiles 0.6 and 1.8: an IQR of 1.2 exceeds the lead of 1.0.
    assert not beyond_noise(spread([0.5, 0.6, 1.0, 1.8, 2.5]), b)


def test_tie_keeps_only_those_within_the_noise_of_the_fastest():
    times = {
        "a": spread([1.0, 1.0, 1.1, 1.1, 1.05]),
        "b": spread([1.05, 1.1, 1.1, 1.2, 1.15]),
        "c": spread([3.0, 3.1, 2.9, 3.0, 3.0]),
    }
    assert tied_with_best(times) == ["a", "b"]
    assert tied_with_best({}) == []


def test_repeats_stop_at_the_count_or_the_budget():
    calls = []

    def measure(value, cost):
        def f():
            calls.append(value)
            return value, cost

        return f

    # Cheap: k measurements in all, the first one given.
    assert repeat_within(measure(0.01, 0.01), [(0.01, 0.01)], 5, 0.15) == [0.01] * 5
    assert len(calls) == 4
    # 0.04 s each: 0.04 + 0.04 <= 0.15, 0.08 + 0.04 <= 0.15, 0.12 + 0.04 not.
    calls.clear()
    assert repeat_within(measure(0.04, 0.04), [(0.04, 0.04)], 5, 0.15) == [0.04] * 3
    # Longer than the budget: measured once.
    calls.clear()
    assert repeat_within(measure(2.0, 2.0), [(2.0, 2.0)], 5, 0.15) == [2.0]
    assert not calls
    # The budget counts the costs, not the values: a value of 1 s (a wall
    # time on a busy machine) that cost 0.01 s of processor time repeats.
    assert len(repeat_within(measure(1.0, 0.01), [(1.0, 0.01)], 5, 0.15)) == 5
    # Forced measurements beyond the budget are kept, none added.
    forced = [(1.0, 1.0)] * 3
    assert repeat_within(measure(1.0, 1.0), forced, 5, 0.15) == [1.0] * 3
    # A failed measurement is not repeated.
    failed = [(float("nan"), 0.0)]
    assert len(repeat_within(measure(0.01, 0.01), failed, 5, 10.0)) == 1


def test_repeats_stop_once_the_spread_has_settled():
    # Synthetic timings: each call of measure() returns the next value at
    # a cost of 0.001 s, far within the budget, so only k and the spread
    # stop the repeats.
    def measure(values):
        it = iter(values)
        return lambda: (next(it), 0.001)

    # Steady times settle at MIN_SAMPLES (IQR 0 <= 2 % of the median).
    steady = measure([1.0, 1.0, 1.0, 1.0])
    assert repeat_within(steady, [(1.0, 0.001)], 5, 0.15, 0.02) == [1.0] * 3
    # Scattered ones do not: repeated up to k, as without the rule.
    noisy = [1.3, 0.9, 1.4, 1.0]
    got = repeat_within(measure(noisy), [(1.0, 0.001)], 5, 0.15, 0.02)
    assert got == [1.0, *noisy]
    # Settling after a wild first value: 1.0, 2.0, 1.0, 1.0, 1.0 has an
    # IQR of 1.0 at four values, 0 at five.
    wild = [2.0, 1.0, 1.0, 1.0]
    assert repeat_within(measure(wild), [(1.0, 0.001)], 9, 0.15, 0.02) == [
        1.0,
        2.0,
        1.0,
        1.0,
        1.0,
    ]
    # The budget still stops first.
    assert len(repeat_within(lambda: (1.3, 0.1), [(1.0, 0.1)], 5, 0.15, 0.02)) == 1
    # The rule: at least MIN_SAMPLES values, IQR within the fraction.
    assert not settled([1.0, 1.0], 0.02)
    assert settled([1.0, 1.01, 1.02], 0.02) and not settled([1.0, 1.1, 1.2], 0.02)


def _memo_misses() -> int:
    from sympy.core.cache import CACHE

    return sum(f.cache_info().misses for f in CACHE)


def test_the_calibration_computes_its_workload_whatever_the_memo_holds():
    # Counted, not timed: a calibration that sympy's memo could answer
    # measured 0.03 s after an earlier calibration and 0.3 s after a
    # derivation had evicted it.  Each run must compute its workload
    # afresh: as many memo misses the second and third time as the
    # computation has (the first also fills the memo with constants).
    import sympy as sm

    sm.core.cache.clear_cache()
    misses = []
    for _ in range(3):
        before = _memo_misses()
        calibrate_clocks(1)
        misses.append(_memo_misses() - before)
    assert misses[1] == misses[2]
    assert misses[1] > misses[0] / 2 > 100


def test_the_calibration_reads_every_clock_around_the_same_runs():
    ticks = {"a": 0.0, "b": 0.0}

    def clock(name, step):
        def read():
            ticks[name] += step
            return ticks[name]

        return read

    # Each clock is read once before and once after each run: the fastest
    # of two runs is one step of that clock.
    got = calibrate_clocks(2, (clock("a", 1.0), clock("b", 0.5)))
    assert got == (1.0, 0.5)
    assert ticks == {"a": 4.0, "b": 2.0}


# ----------------------------------------------------------------------
# Findings on synthetic timings
# ----------------------------------------------------------------------
def _frame(**columns):
    n = len(columns["formulation"])
    base = {
        "label": ["p"] * n,
        "system": ["p"] * n,
        "variant": [""] * n,
        "status": ["ok"] * n,
        "ops_cse": [10 + i for i in range(n)],
        "qdd_max_rel_dev": [0.0] * n,
        "system_class": ["open chain"] * n,
    }
    return pd.DataFrame({**base, **columns})


def _timed(col, samples):
    """The row columns of ``col`` the runner writes from ``samples``."""
    out = {col: [], f"{col}_median": [], f"{col}_spread": [], f"{col}_k": []}
    for xs in samples:
        s = spread(xs)
        out[col].append(min(xs))
        out[f"{col}_median"].append(s.median)
        out[f"{col}_spread"].append(s.iqr)
        out[f"{col}_k"].append(s.k)
    return out


def test_findings_name_a_fastest_only_beyond_the_noise():
    frame = _frame(
        formulation=["a", "b", "c"],
        **_timed(
            "derive_s",
            [[0.10, 0.11, 0.10, 0.12, 0.10], [0.30] * 5, [0.31, 0.29, 0.3, 0.3, 0.3]],
        ),
        **_timed(
            "rhs_us",
            # Medians 1.0, 1.1 and 1.2: b within its own IQR of 0.4 of a;
            # c, with a and itself both exact, is not.
            [[1.0] * 5, [0.8, 0.9, 1.1, 1.3, 1.4], [1.2] * 5],
        ),
        **_timed("integrate_s", [[0.05] * 5, [0.05] * 5, [0.06] * 5]),
        nfev=[1000, 1000, 1000],
    )
    entry = findings(frame).per_system[0]
    # a: median 0.10 s, 3.0x ahead of b (0.30) and c (0.30); 3 digits.
    assert entry["fastest_derivation"].startswith("a (median 0.1 s, IQR 0.01 s, k=5")
    assert entry["fastest_derivation"].endswith(", 3×)")
    assert entry["fastest_rhs"] == (
        "tie between a, b (medians 1 µs, 1.1 µs, within the larger interquartile range)"
    )
    assert "fastest" not in entry["fastest_rhs"]
    # Equal evaluation counts: the solve is the rhs cost times them.
    assert entry["fastest_solve"].startswith("not ranked: the same 1,000 ")
    assert "×" not in entry["fastest_solve"]


def test_findings_print_ratios_to_three_significant_digits():
    frame = _frame(
        formulation=["a", "b"],
        **_timed("derive_s", [[1.0] * 5, [1.23456] * 5]),
        nfev=[10, 12],
        **_timed("integrate_s", [[1.0] * 5, [1.0] * 5]),
    )
    entry = findings(frame).per_system[0]
    assert entry["fastest_derivation"].endswith("next b 1.23 s, 1.23×)")
    # Different evaluation counts and equal times: a tie, not a ranking.
    assert entry["fastest_solve"].startswith("tie between a, b")


def test_findings_of_single_measurements_name_no_fastest():
    frame = _frame(
        formulation=["a", "b"],
        derive_s=[0.1, 0.5],
        integrate_s=[1.0, 3.0],
        nfev=[10, 30],
    )
    f = findings(frame)
    entry = f.per_system[0]
    assert entry["fastest_derivation"] == (
        "not ranked: one measurement each of a, b, no spread to judge a difference by"
    )
    assert entry["fastest_solve"].startswith("not ranked: one measurement each")
    assert "single measurements" in f.timing
    text = " ".join(f.sentences())
    assert "fastest derivation: not ranked" in text
    assert "fastest derivation: a" not in text


def test_class_sentences_name_no_fastest_where_every_system_ties():
    tie = [[1.0, 1.1, 1.2, 1.3, 1.4], [1.1, 1.2, 1.3, 1.4, 1.5]]
    frames = [
        _frame(formulation=["a", "b"], **_timed("derive_s", tie)).assign(label=lab)
        for lab in ("p", "q")
    ]
    f = findings(pd.concat(frames, ignore_index=True))
    [sentence] = f.by_class
    assert "fastest derivation: no formulation ahead beyond the noise" in sentence
    # Operation counts are exact, ranked as before (a: 10, b: 11).
    assert "fewest operations after cse: a (best on 2 of 2, mean ratio 1;" in (sentence)
    # With a clear lead on one system of the two, the winner is named so.
    clear = _frame(
        formulation=["a", "b"], **_timed("derive_s", [[1.0] * 5, [2.0] * 5])
    ).assign(label="q")
    f = findings(pd.concat([frames[0], clear], ignore_index=True))
    assert "fastest derivation: a (ahead beyond the noise on 1 of 2," in (f.by_class[0])


def test_the_timing_note_says_how_many_measurements_were_taken():
    frame = _frame(
        formulation=["a", "b"],
        **_timed("derive_s", [[0.1] * 5, [2.0]]),
        **_timed("rhs_us", [[1.0] * 11, [1.0] * 11]),
        rhs_backend=["c", "c"],
    )
    note = findings(frame, {"options": {"time_budget": 0.15}}).timing
    assert "derivation 1–5, right-hand side 11" in note
    assert "within 0.15 s of processor time each per case" in note
    assert "compiled (rhs_us; through lambdify in rhs_lambdify_us)" in note


def test_the_printed_table_gives_medians_and_says_how_many_measurements():
    from eomcompare.compare.summary import repetitions_line, summary_table

    frame = _frame(
        formulation=["kane", "lagrange"],
        **_timed("derive_s", [[0.1, 0.3, 0.2], [0.5]]),
        **_timed("rhs_us", [[1.0] * 11, [2.0, 2.2, 2.1, 2.0, 2.4, 2.0] + [2.0] * 5]),
    )
    table = summary_table(frame)
    # Medians by hand: 0.2 of (0.1, 0.3, 0.2), 0.5 of one measurement.
    assert list(table["derive s (median)"]) == [0.2, 0.5]
    assert list(table["rhs µs (median)"]) == [1.0, 2.0]
    assert "derive s" not in table.columns
    assert repetitions_line(frame) == (
        "Times are medians; measurements per case: derive s 1-3, rhs µs 11 "
        "(interquartile ranges in results.csv and the report)."
    )
    # A run saved before medians were recorded prints its times as they are.
    old = frame.drop(columns=[c for c in frame.columns if c.endswith("_median")])
    assert list(summary_table(old)["derive s"]) == [0.1, 0.5]


def test_a_compared_time_is_shown_with_its_spread_and_count():
    from eomcompare.compare.tables import timed_cell

    row = {"rhs_us": 1.1, "rhs_us_median": 1.2, "rhs_us_spread": 0.05, "rhs_us_k": 11}
    assert timed_cell(row, "rhs_us") == "1.2 (IQR 0.05, k=11)"
    # Below three measurements the spread is unknown and not printed.
    few = {"derive_s": 2.0, "derive_s_median": 2.5, "derive_s_k": 2}
    assert timed_cell({**few, "derive_s_spread": float("nan")}, "derive_s") == (
        "2.5 (k=2)"
    )
    # A row saved before medians were recorded: its one time, said so.
    assert timed_cell({"integrate_s": 0.25}, "integrate_s") == "0.25 (k unknown)"
    assert timed_cell({}, "integrate_s") == "—"


def test_a_case_reuses_the_runs_calibration_while_it_is_recent(monkeypatch):
    import time

    from eomcompare.compare import case_run
    from eomcompare.compare.cases import RunOptions

    measured = []

    def fake(repeats, clocks):
        measured.append(repeats)
        return 0.5, 0.4

    monkeypatch.setattr(case_run, "calibrate_clocks", fake)
    monkeypatch.setattr(case_run, "LATEST_CALIBRATION", None)
    monkeypatch.setattr(case_run, "MEASURED_CALIBRATION", None)
    opts = RunOptions()
    # None held: the case measures, and says when.
    assert case_run._calibration(opts) == (0.5, 0.4, 0.0)
    assert measured == [1] and case_run.MEASURED_CALIBRATION[:2] == (0.5, 0.4)
    # One measured 3 s ago stands, with its age.
    case_run.note_calibration(0.3, 0.2, time.monotonic() - 3.0)
    wall, cpu, age = case_run._calibration(opts)
    assert (wall, cpu) == (0.3, 0.2) and 3.0 <= age < case_run.CALIBRATION_MAX_AGE
    assert measured == [1]
    # An older one is not recorded over a newer one.
    case_run.note_calibration(0.9, 0.9, time.monotonic() - 5.0)
    assert case_run.LATEST_CALIBRATION[:2] == (0.3, 0.2)
    # Past CALIBRATION_MAX_AGE the case measures again.
    old = time.monotonic() - case_run.CALIBRATION_MAX_AGE - 1.0
    monkeypatch.setattr(case_run, "LATEST_CALIBRATION", (0.3, 0.2, old))
    assert case_run._calibration(opts) == (0.5, 0.4, 0.0)
    # Repeated derivations (the baseline's runs) measure every case.
    case_run.note_calibration(0.3, 0.2, time.monotonic())
    assert case_run._calibration(RunOptions(time_repeats=3))[2] == 0.0
    assert measured == [1, 1, 3]
