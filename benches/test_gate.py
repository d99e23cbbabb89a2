"""The release gate's comparison with a baseline (``gate.py``), on made-up runs.

The timing itself is the benches' own (``rounds.py``); what is tested here is
what makes the gate pass or fail: a ratio below its margin, a peak memory
that grew, a group or ratio gone missing, streamwire's wrong output, the
LiteLLM groups without their venv, the margins a baseline takes from the
spread of its runs, and the untimed step a group may take before each run.
"""

from __future__ import annotations

import copy
import time
from functools import partial
from typing import Any

import gate
import rounds


def _run(ratio: float = 10.0, memory: float = 2.0, lower: float = 2.5) -> dict[str, Any]:
    return {
        "mode": "full",
        "litellm": True,
        "groups": [
            {
                "suite": "pipeline",
                "name": "openai-chat",
                "ratios": {"vs naive": ratio, "pipeline / framing": lower},
                "targets": {"pipeline / framing": {"target": 3.0, "lower_is_better": True}},
                "memory": {"ratio": memory},
                "correct": {"streamwire": True, "naive": True},
            },
            {
                "suite": "translate",
                "name": "anthropic->openai-chat",
                "ratios": {"vs litellm": 20.0},
                "targets": {},
                "correct": {"streamwire": True, "litellm": True},
            },
        ],
    }


def _baseline(*runs: dict[str, Any]) -> dict[str, Any]:
    return {runs[0]["mode"]: gate.make_baseline(list(runs))}


def test_the_same_run_passes_and_margins_come_from_the_spread() -> None:
    runs = [_run(10.0), _run(9.0), _run(11.0)]
    baseline = _baseline(*runs)
    group = baseline["full"]["groups"]["pipeline/openai-chat"]
    assert group["ratios"]["vs naive"] == 10.0
    # The largest drop below the median is 10%: twice that is the margin.
    assert group["margins"]["vs naive"] == 0.2
    assert group["margins"]["pipeline / framing"] == gate.MIN_MARGIN
    assert group["lower_is_better"] == ["pipeline / framing"]
    for run in runs:
        assert gate.check(run, baseline) == []


def test_a_ratio_below_its_margin_fails_and_one_within_passes() -> None:
    baseline = _baseline(_run(10.0), _run(9.0), _run(11.0))
    assert gate.check(_run(8.1), baseline) == []
    (problem,) = gate.check(_run(7.9), baseline)
    assert "vs naive fell to 7.90x" in problem


def test_a_lower_is_better_ratio_fails_when_it_rises() -> None:
    baseline = _baseline(_run())
    assert gate.check(_run(lower=2.8), baseline) == []
    (problem,) = gate.check(_run(lower=2.9), baseline)
    assert "pipeline / framing rose" in problem


def test_a_peak_memory_that_grew_fails() -> None:
    baseline = _baseline(_run(memory=2.0))
    assert gate.check(_run(memory=2.2), baseline) == []
    (problem,) = gate.check(_run(memory=2.3), baseline)
    assert "peak memory grew" in problem


def test_missing_groups_ratios_and_wrong_output_fail() -> None:
    baseline = _baseline(_run())
    run = _run()
    del run["groups"][0]["ratios"]["vs naive"]
    assert any("missing" in p for p in gate.check(run, baseline))
    run = _run()
    run["groups"] = run["groups"][1:]
    assert any("missing from this run" in p for p in gate.check(run, baseline))
    run = _run()
    run["groups"][0]["failed"] = "streamwire's output is wrong"
    assert any("wrong" in p for p in gate.check(run, baseline))
    assert gate.check({**_run(), "mode": "quick"}, baseline) == [
        "the baseline has no 'quick' section"
    ]


def test_the_litellm_groups_are_only_checked_with_their_venv() -> None:
    baseline = _baseline(_run())
    run = copy.deepcopy(_run())
    run["groups"] = run["groups"][:1]
    run["litellm"] = False
    assert gate.check(run, baseline) == []
    run["litellm"] = True
    assert gate.check(run, baseline) != []


def test_streamwire_variants_are_not_checked_and_falls_are_measured_again() -> None:
    run = _run()
    run["groups"][0]["ratios"]["vs streamwire-stdlib-json"] = 1.0
    baseline = _baseline(run)
    slower = copy.deepcopy(run)
    slower["groups"][0]["ratios"]["vs streamwire-stdlib-json"] = 0.5
    assert gate.check(slower, baseline) == []
    problems = gate.check(_run(7.0), baseline)
    assert gate.failing_groups(problems) == ["pipeline/openai-chat"]
    assert gate.failing_groups(["pipeline/x: peak memory grew to 3x"]) == []


def test_the_floor_and_variant_ratios_are_reported_not_gated() -> None:
    def with_extra(floor: float, variant: float) -> dict[str, Any]:
        run = _run()
        run["groups"][0]["ratios"].update(
            {"str floor vs httpx-sse": floor, "vs streamwire+data": variant}
        )
        return run

    baseline = _baseline(with_extra(6.0, 2.5))
    assert gate.check(with_extra(1.0, 0.5), baseline) == []
    gated = with_extra(1.0, 0.5)
    gated["groups"][0]["ratios"]["vs naive"] = 1.0
    (problem,) = gate.check(gated, baseline)
    assert "vs naive fell" in problem


def _quick(ratio: float = 10.0, lower: float = 2.5) -> dict[str, Any]:
    return {**_run(ratio, lower=lower), "mode": "quick"}


def test_the_quick_mode_fails_only_below_the_ci_floor() -> None:
    baseline = _baseline(_quick(10.0), _quick(9.0), _quick(11.0))
    # The spread's margin (20%) is the full mode's; CI ignores it for the floor.
    assert baseline["quick"]["groups"]["pipeline/openai-chat"]["margins"]["vs naive"] == 0.2
    assert gate.CI_FLOOR == 0.6
    # A third below the baseline, as unchanged code measured after the builds: passes.
    assert gate.check(_quick(6.1), baseline) == []
    # Twice as slow against the peer: fails.
    (problem,) = gate.check(_quick(5.0), baseline)
    assert "vs naive fell to 5.00x (baseline 10.00x, CI floor 60% of it)" in problem
    # The same fall passes nowhere in the full mode.
    full = _baseline(_run(10.0), _run(9.0), _run(11.0))
    assert gate.check(_run(6.1), full) != []


def test_the_ci_floor_holds_a_lower_is_better_ratio_either_way_round() -> None:
    baseline = _baseline(_quick(lower=2.5))
    # 2.5 / 0.6 = 4.17: the pipeline 1.6x slower against framing passes, 2x fails.
    assert gate.check(_quick(lower=4.0), baseline) == []
    (problem,) = gate.check(_quick(lower=5.0), baseline)
    assert "pipeline / framing rose to 5.00x" in problem


def test_health_is_one_when_unchanged_and_a_half_when_twice_as_slow() -> None:
    assert gate.health(10.0, 10.0) == 1.0
    assert gate.health(5.0, 10.0) == 0.5
    assert gate.health(5.0, 2.5, lower_is_better=True) == 0.5
    assert gate.health(0.0, 2.0) == 0.0


def test_a_fall_is_judged_by_the_median_of_its_measurements() -> None:
    baseline = _baseline(_quick(10.0))
    first, fresh, again = _quick(5.0), _quick(9.5), _quick(5.5)
    # One fall and two fresh processes: the median of 5.0, 9.5 and 5.5 is 5.5.
    judged = gate.median_run([first, fresh, again])
    group = judged["groups"][0]
    assert group["ratios"]["vs naive"] == 5.5
    assert group["measured"]["vs naive"] == [5.0, 9.5, 5.5]
    assert gate.check(judged, baseline) != []
    # A burst in the first run only: the median passes.
    assert gate.check(gate.median_run([first, _quick(9.5), _quick(10.2)]), baseline) == []


def test_the_median_run_keeps_a_wrong_output_and_the_largest_memory() -> None:
    wrong, fine = _quick(), _quick()
    wrong["groups"][0]["failed"] = "streamwire's output is wrong"
    fine["groups"][0]["memory"] = {"ratio": 3.0}
    judged = gate.median_run([fine, wrong, _quick()])
    assert judged["groups"][0]["failed"] == "streamwire's output is wrong"
    assert judged["groups"][0]["memory"] == {"ratio": 3.0}


def test_the_settle_step_runs_before_every_timed_run_and_is_not_timed() -> None:
    calls: list[str] = []

    def burn() -> None:  # 50 ms of CPU, which must not count
        calls.append("settle")
        end = time.process_time() + 0.05
        while time.process_time() < end:
            pass

    runs = {name: partial(calls.append, name) for name in ("a", "b")}
    best = rounds.best_times(runs, 2, burn)
    assert calls == ["settle", "a", "settle", "b"] * 2
    assert max(best.values()) < 0.025
    rounds.release_free_memory()  # callable wherever the gate runs (a no-op off glibc)
