"""The rules of ``rra_tools.validate.rules.experiments`` at their boundaries, with exact messages:
which observations count, when a claim has an interval, seeds and timeouts of launchers, the
number of observations, non-finite values, repeats of seedless launchers, and method changes.

Each case puts a second problem after the one that ends a loop's turn, so that a ``continue``
turned into ``break`` (or a boundary moved by one) changes the findings."""

from __future__ import annotations

import copy
import io
import math
from typing import Any

import pytest
from ruamel.yaml import YAML

from rra_tools.intervals import acceptance_interval
from rra_tools.validate import validate_bytes
from rra_tools.validate.rules.experiments import claim_interval, observation_values
from tests.unit.test_rules import base

FP = {"hardware": "x86_64", "software": "cpython 3.11"}


def _diagnostics(manifest: dict[str, Any], *prefixes: str) -> list[Any]:
    # The manifest travels as YAML, which (unlike JSON) carries .inf and .nan.
    out = io.StringIO()
    YAML().dump(manifest, out)
    result = validate_bytes(out.getvalue().encode(), name="rra.yaml", root=None)
    return [d for d in result.diagnostics if d.code.startswith(prefixes)]


def _findings(manifest: dict[str, Any], *prefixes: str) -> list[tuple[str, str, str]]:
    """(code, pointer, message) of the findings whose code starts with one of ``prefixes``."""
    return [(d.code, d.pointer, d.message) for d in _diagnostics(manifest, *prefixes)]


def _manifest(version: str = "1.1") -> dict[str, Any]:
    m = copy.deepcopy(base())
    m["rra_version"] = version
    return m


def _obs(*values: float, seeds: list[Any] | None = None) -> list[dict[str, Any]]:
    return [{"value": v, "seed": s, "fingerprint": FP}
            for v, s in zip(values, seeds if seeds is not None else range(len(values)))]


# -- observation_values and claim_interval ----------------------------------------------------------


@pytest.mark.parametrize("claim", [{}, {"reference": None}, {"reference": [1]}, {"reference": {}},
                                   {"reference": {"observations": {"value": 1}}}])
def test_a_claim_without_an_observation_list_has_no_values(claim: dict[str, Any]) -> None:
    assert observation_values(claim) == []
    assert claim_interval({**claim, "reported": {"precision": 1}}) is None


def test_observation_values_keep_numbers_and_read_integral_seeds() -> None:
    claim = {"reference": {"observations": [
        {"value": 1.5, "seed": 3}, {"value": "2", "seed": 4}, "not an observation", {"value": None, "seed": 5},
        {"value": True, "seed": 6}, {"value": 2, "seed": 7.0}, {"value": 2.5, "seed": "8"},
        {"value": 3.5, "repeat": 1}, {"value": 10**400, "seed": 9}]}}
    assert observation_values(claim) == [(0, 1.5, 3), (5, 2.0, 7), (6, 2.5, None), (7, 3.5, None)]
    values = observation_values(claim)
    assert [type(v) for _, v, _ in values] == [float] * 4
    assert [type(s) for _, _, s in values] == [int, int, type(None), type(None)]


def test_claim_interval_needs_two_finite_values_and_a_precision() -> None:
    def claim(values: list[float], precision: Any) -> dict[str, Any]:
        return {"reported": {"precision": precision}, "reference": {"observations": _obs(*values)}}

    assert claim_interval(claim([1.0, 1.2], 1)) == acceptance_interval([1.0, 1.2], 1)
    assert claim_interval(claim([1.0, 1.2], 0)) == acceptance_interval([1.0, 1.2], 0)  # precision 0: whole units
    assert claim_interval(claim([1.0, 1.2, 1.1], 2.0)) == acceptance_interval([1.0, 1.2, 1.1], 2)
    assert claim_interval(claim([1.0], 1)) is None
    assert claim_interval(claim([1.0, 1.2], -1)) is None
    assert claim_interval(claim([1.0, 1.2], None)) is None
    assert claim_interval(claim([1.0, 1.2], 1.5)) is None
    assert claim_interval({"reported": 3, "reference": {"observations": _obs(1.0, 1.2)}}) is None
    assert claim_interval(claim([1.0, math.inf], 1)) is None
    assert claim_interval(claim([1.0, math.nan, 1.2], 1)) is None


def test_claim_interval_caps_the_precision_at_15_digits() -> None:
    claim = {"reported": {"precision": 20}, "reference": {"observations": _obs(1.0, 1.0)}}
    got = claim_interval(claim)
    assert got == acceptance_interval([1.0, 1.0], 15) != acceptance_interval([1.0, 1.0], 16)


# -- launchers: seeds, duplicates, timeouts ---------------------------------------------------------


def test_stochastic_launchers_need_seeds() -> None:
    m = _manifest()
    first = m["launchers"][0]
    m["launchers"] = [
        {**first, "id": "none", "seeds": []},
        {**first, "id": "absent"},
        {**first, "id": "declared", "stochastic": False, "seeds": []},
        {**first, "id": "ok"},
    ]
    del m["launchers"][1]["seeds"]
    m["launchers"][2]["argv"] = ["python", "train.py"]
    assert [(c, p, msg) for c, p, msg in _findings(m, "RRA501")] == [
        ("RRA501", "/launchers/0", "launcher 'none' is stochastic but declares no seeds"),
        ("RRA501", "/launchers/1", "launcher 'absent' is stochastic but declares no seeds"),
    ]


def test_a_seed_listed_twice_beside_an_item_that_is_no_seed() -> None:
    # A list or a mapping among the seeds (no seed: the schema layer reports it) does not hide a repeat.
    m = _manifest()
    m["launchers"][0]["seeds"] = [0, [1], 1, {"seed": 0}, 0]
    assert _findings(m, "RRA511") == [("RRA511", "/launchers/0/seeds/4", "seed 0 is listed twice")]


def test_a_seed_listed_twice_is_said_once_per_repetition() -> None:
    m = _manifest()
    m["launchers"][0]["seeds"] = [0, 1, "x", 1, 2.0, 2, 7.5, 0]
    assert _findings(m, "RRA511") == [
        ("RRA511", "/launchers/0/seeds/3", "seed 1 is listed twice"),
        ("RRA511", "/launchers/0/seeds/5", "seed 2 is listed twice"),
        ("RRA511", "/launchers/0/seeds/7", "seed 0 is listed twice"),
    ]


@pytest.mark.parametrize("timeout, expected, found", [
    (60, 5, False), (5, 5, False), (5, 6, True), (5.5, 6, True), (None, 6, False), (5, None, False)])
def test_a_timeout_shorter_than_the_expected_runtime(timeout: Any, expected: Any, found: bool) -> None:
    m = _manifest()
    resources: dict[str, Any] = {}
    if timeout is not None:
        resources["timeout_s"] = timeout
    if expected is not None:
        resources["expected_runtime_s"] = expected
    m["launchers"][0]["resources"] = resources
    want = [("RRA510", "/launchers/0/resources/timeout_s",
             f"timeout_s {timeout:g} is shorter than expected_runtime_s {expected:g}")] if found else []
    assert _findings(m, "RRA510") == want


# -- how many observations, and whether they are finite ---------------------------------------------


@pytest.mark.parametrize("n, code", [(1, "RRA502"), (2, "RRA502"), (3, "RRA503"), (4, "RRA503"), (5, None)])
def test_the_number_of_observations(n: int, code: str | None) -> None:
    m = _manifest()
    m["claims"][0]["reference"]["observations"] = _obs(*[91.0] * n)
    pointer = "/claims/0/reference/observations"
    expected = {
        "RRA502": f"claim 'acc' has {n} reference observation(s); at least 3 are required",
        "RRA503": f"claim 'acc' has {n} reference observations; 5 are recommended",
    }
    assert _findings(m, "RRA502", "RRA503") == ([(code, pointer, expected[code])] if code else [])


def test_non_finite_values_are_said_where_they_are() -> None:
    m = _manifest()
    claim = m["claims"][0]
    claim["reported"]["value"] = math.inf
    claim["reference"]["observations"][1]["value"] = -math.inf
    claim["reference"]["observations"][3]["value"] = math.nan
    second = copy.deepcopy(claim)
    second["id"] = "acc2"
    second["reported"]["value"] = 91.0
    m["claims"].append(second)
    got = _findings(m, "RRA504")
    assert got[:3] == [
        ("RRA504", "/claims/0/reported/value", "reported value inf is not finite"),
        ("RRA504", "/claims/0/reference/observations/1/value", "observed value -inf is not finite"),
        ("RRA504", "/claims/0/reference/observations/3/value", "observed value nan is not finite"),
    ]
    assert [p for _, p, _ in got[3:]] == ["/claims/1/reference/observations/1/value",
                                          "/claims/1/reference/observations/3/value"]


def test_a_finite_reported_value_and_finite_observations_are_not_reported() -> None:
    assert _findings(_manifest(), "RRA504", "RRA505", "RRA506", "RRA507", "RRA509", "RRA512") == []


# -- seeds of observations ------------------------------------------------------------------------------


def test_observation_seeds_are_distinct_and_among_the_launchers() -> None:
    m = _manifest()
    m["claims"][0]["reference"]["observations"] = _obs(91.0, 91.2, 90.9, 91.1, 91.0, 91.05,
                                                       seeds=[0, 7, 1.0, 1, "x", 2])
    assert _findings(m, "RRA505", "RRA509") == [
        ("RRA509", "/claims/0/reference/observations/1/seed",
         "observation seed 7 is not among the launcher's seeds [0, 1, 2, 3, 4]"),
        ("RRA505", "/claims/0/reference/observations/3/seed",
         "observations 2 and 3 share seed 1; they are not independent"),
    ]


def test_an_observation_without_a_number_does_not_end_the_scan() -> None:
    m = _manifest()
    m["claims"][0]["reference"]["observations"] = _obs(91.0, 91.2, 90.9, 91.1, 91.0, seeds=[0, 1, 2, 3, 1])
    m["claims"][0]["reference"]["observations"][2]["value"] = "90.9"
    assert _findings(m, "RRA505") == [("RRA505", "/claims/0/reference/observations/4/seed",
                                       "observations 1 and 4 share seed 1; they are not independent")]


def test_observations_that_all_name_run_records() -> None:
    m = _manifest()
    for j, obs in enumerate(m["claims"][0]["reference"]["observations"]):
        obs["run_record"] = f"runs/{min(j, 3)}/record.json"
    assert [(c, p) for c, p, _ in _findings(m, "RRA512")] == [
        ("RRA512", "/claims/0/reference/observations/4/run_record")]


def test_a_launcher_without_seeds_accepts_any_observation_seed() -> None:
    m = _manifest()
    m["launchers"][0]["seeds"] = []
    m["launchers"][0]["stochastic"] = False
    m["claims"][0]["reference"]["observations"] = _obs(91.0, 91.2, 90.9, seeds=[10, 11, 10])
    assert _findings(m, "RRA505", "RRA509") == [
        ("RRA505", "/claims/0/reference/observations/2/seed",
         "observations 0 and 2 share seed 10; they are not independent")]


@pytest.mark.parametrize("seeds", [[0, 1.0, 2, True, 2**64], [0, [1], 1, {"seed": 3}, 2], [0, 1, 2, 2**64],
                                   [-(2**63) - 1, 0, 1, 2], [0, 1, 2, 2**63]])
def test_launcher_seeds_are_read_as_integers_whatever_their_spelling(seeds: list[Any]) -> None:
    # 1.0 is seed 1; True, an integer beyond 64 bits, a list or a mapping are no seed (the
    # launcher's list is read seed by seed when it holds anything but integers).
    m = _manifest()
    m["launchers"][0]["seeds"] = seeds
    m["claims"][0]["reference"]["observations"] = _obs(91.0, 91.2, 90.9, 91.1, seeds=[0, 1, 2, 3])
    assert _findings(m, "RRA509", "RRA511") == [
        ("RRA509", "/claims/0/reference/observations/3/seed",
         "observation seed 3 is not among the launcher's seeds [0, 1, 2]")]


# -- the interval against the reported value and the declared stability ----------------------------------


def test_the_reported_value_against_the_interval() -> None:
    m = _manifest()
    m["discrepancies"] = [{"id": "d1", "paper_says": "95", "code_does": "91", "follows": "code",
                           "rationale": "r", "impact": "i", "claims": ["acc", 7]}]
    outside = copy.deepcopy(m["claims"][0])
    outside["id"] = "far"
    outside["reported"]["value"] = 95.0
    inside = copy.deepcopy(outside)
    inside["id"] = "near"
    inside["reported"]["value"] = 91.0
    m["claims"][0]["reported"]["value"] = 95.0  # explained by the discrepancy
    m["claims"] += [outside, inside]
    got = _findings(m, "RRA506")
    assert [(c, p) for c, p, _ in got] == [("RRA506", "/claims/1/reported/value")]
    assert got[0][2].startswith("reported value 95 lies outside the reference interval [90.")


@pytest.mark.parametrize("declared, found", [("stable", True), ("variable", False), ("other", False), (3, False)])
def test_declared_stability_against_the_observations(declared: Any, found: bool) -> None:
    m = _manifest()
    m["claims"][0]["reference"]["stability"] = declared
    got = _findings(m, "RRA507")
    assert [(c, p) for c, p, _ in got] == ([("RRA507", "/claims/0/reference/stability")] if found else [])


def test_a_stable_claim_declared_variable() -> None:
    m = _manifest()
    m["claims"][0]["reference"]["observations"] = _obs(*[91.0] * 5)
    m["claims"][0]["reference"]["stability"] = "variable"
    assert _findings(m, "RRA507") == [(
        "RRA507", "/claims/0/reference/stability",
        "claim 'acc' is declared 'variable' but its observations make it 'stable' (spread 0, precision floor 0.05)")]


@pytest.mark.parametrize("value", ["99", True, None])
def test_a_reported_value_that_is_no_number_is_not_compared(value: Any) -> None:
    m = _manifest()
    m["claims"][0]["reported"]["value"] = value
    m["claims"][0]["reference"]["stability"] = "stable"  # still compared with the observations
    assert [c for c, _, _ in _findings(m, "RRA504", "RRA506", "RRA507")] == ["RRA507"]


def test_the_declared_stability_of_a_claim_whose_reported_value_is_not_compared() -> None:
    # Explained by a discrepancy, or without a reported value: RRA506 cannot apply, RRA507 still does.
    m = _manifest()
    m["discrepancies"] = [{"id": "d1", "paper_says": "95", "code_does": "91", "follows": "code",
                           "rationale": "r", "impact": "i", "claims": ["acc"]}]
    claim = m["claims"][0]
    claim["reference"]["observations"] = _obs(*[91.0] * 5)
    claim["reference"]["stability"] = "variable"
    claim["reported"]["value"] = 99.0
    unreported = copy.deepcopy(claim)
    unreported["id"] = "unreported"
    del unreported["reported"]["value"]
    m["claims"].append(unreported)
    assert [(c, p) for c, p, _ in _findings(m, "RRA506", "RRA507")] == [
        ("RRA507", "/claims/0/reference/stability"), ("RRA507", "/claims/1/reference/stability")]


@pytest.mark.parametrize("reported", [None, "absent", 91.0])
def test_a_declared_stability_without_a_reported_precision(reported: Any) -> None:
    m = _manifest()
    claim = m["claims"][0]
    claim["reference"]["stability"] = "stable"
    if reported == "absent":
        del claim["reported"]
    else:
        claim["reported"] = reported
    assert _findings(m, "RRA506", "RRA507") == []


def test_a_precision_beyond_15_digits_is_read_as_15() -> None:
    m = _manifest()
    m["claims"][0]["reported"]["precision"] = 20
    m["claims"][0]["reference"]["observations"] = _obs(*[91.0] * 5)
    m["claims"][0]["reference"]["stability"] = "variable"
    assert [msg for _, _, msg in _findings(m, "RRA507")] == [
        "claim 'acc' is declared 'variable' but its observations make it 'stable' (spread 0, precision floor 5e-16)"]


def test_precision_zero_is_whole_units() -> None:
    m = _manifest()
    m["claims"][0]["reported"]["precision"] = 0
    m["claims"][0]["reference"]["observations"] = _obs(*[91.0] * 5)
    m["claims"][0]["reference"]["stability"] = "variable"
    assert _findings(m, "RRA507") == [(
        "RRA507", "/claims/0/reference/stability",
        "claim 'acc' is declared 'variable' but its observations make it 'stable' (spread 0, precision floor 0.5)")]


@pytest.mark.parametrize("precision", [None, -1, 1.5, "1"])
def test_a_claim_without_a_usable_precision_has_no_interval_to_compare(precision: Any) -> None:
    # Observations far from the reported value and declared 'variable' though they agree: with a
    # precision, RRA506 and RRA507; without one, no interval and neither.
    m = _manifest()
    claim = m["claims"][0]
    claim["reference"]["observations"] = _obs(*[91.0] * 5)
    claim["reference"]["stability"] = "variable"
    claim["reported"]["value"] = 99.0
    assert sorted(c for c, _, _ in _findings(m, "RRA506", "RRA507")) == ["RRA506", "RRA507"]
    usable = copy.deepcopy(claim)
    usable["id"] = "usable"
    m["claims"].append(usable)  # after the claim without an interval: still compared
    if precision is None:
        del claim["reported"]["precision"]
    else:
        claim["reported"]["precision"] = precision
    assert sorted((c, p) for c, p, _ in _findings(m, "RRA506", "RRA507")) == [
        ("RRA506", "/claims/1/reported/value"), ("RRA507", "/claims/1/reference/stability")]


# -- repeats of seedless launchers --------------------------------------------------------------------


def _seedless(repeats: Any, observed: list[Any]) -> dict[str, Any]:
    m = _manifest()
    launcher = m["launchers"][0]
    launcher.update(stochastic=False, argv=["python", "train.py"])
    del launcher["seeds"]
    launcher["outputs"][0]["path"] = "out/m.json"
    if repeats is not None:
        launcher["repeats"] = repeats
    m["claims"][0]["reference"]["observations"] = [
        {"value": 91.0 + i / 10, "repeat": r, "fingerprint": FP} for i, r in enumerate(observed)]
    return m


@pytest.mark.parametrize("repeats, observed, expected", [
    (3, [0, 1, 2], []),
    (3, [0, 1, 3], [(2, 3, 3)]),
    (3, [0, 3, 1, 4], [(1, 3, 3), (3, 4, 3)]),
    (None, [0, 1, 2], [(1, 1, 1), (2, 2, 1)]),  # one run by default
    (0, [0, 1, 2], [(1, 1, 1), (2, 2, 1)]),     # not a count: one run
    (5, [4, 0, 1], []),
])
def test_observed_repeats_are_among_the_launchers_runs(repeats: Any, observed: list[int],
                                                        expected: list[tuple[int, int, int]]) -> None:
    found = _diagnostics(_seedless(repeats, observed), "RRA509")
    assert [(d.pointer, d.message, d.hint) for d in found] == [
        (f"/claims/0/reference/observations/{j}/repeat",
         f"observation repeat {r} is not among the launcher's runs 0 to {n - 1} (repeats: {n})",
         f"raise the launcher's repeats to at least {r + 1}") for j, r, n in expected]


def test_a_repeat_shared_by_two_observations() -> None:
    m = _seedless(3, [0, 1, 1, 2, 0])
    assert _findings(m, "RRA505") == [
        ("RRA505", "/claims/0/reference/observations/2/repeat",
         "observations 1 and 2 share repeat 1; they are not independent"),
        ("RRA505", "/claims/0/reference/observations/4/repeat",
         "observations 0 and 4 share repeat 0; they are not independent"),
    ]


# -- method changes ----------------------------------------------------------------------------------


def test_changes_that_may_alter_the_method_name_their_claims() -> None:
    m = _manifest()
    change = {"id": "c0", "what": "w", "why": "y", "alters_method": "no"}
    m["changes"] = [
        {**change, "id": "c0", "alters_method": "no"},
        {**change, "id": "c1", "alters_method": "yes"},
        {**change, "id": "c2", "alters_method": "unknown", "affects": {"claims": []}},
        {**change, "id": "c3", "alters_method": "yes", "affects": {"claims": ["acc"]}},
        {**change, "id": "c4", "alters_method": "unknown", "affects": {"files": ["x"]}},
    ]
    assert [(c, p, msg) for c, p, msg in _findings(m, "RRA508")] == [
        ("RRA508", "/changes/1/alters_method", "change 'c1' has alters_method: yes but names no affected claims"),
        ("RRA508", "/changes/2/alters_method",
         "change 'c2' has alters_method: unknown but names no affected claims"),
        ("RRA508", "/changes/4/alters_method",
         "change 'c4' has alters_method: unknown but names no affected claims"),
    ]


def test_entries_that_are_not_observations_and_repeats_that_are_not_integers_are_passed_over() -> None:
    # A string in the list is the schema's finding (RRA112), never a crash of the rules; a repeat
    # that is no integer is not judged, and the scan goes on to the next observation.
    m = _seedless(3, ["x", 1.5, 7, 1])
    m["claims"][0]["reference"]["observations"].insert(0, "not an observation")
    m["claims"][0]["reference"]["observations"][2]["run_record"] = "runs/a/record.json"
    m["claims"][0]["reference"]["observations"][4]["run_record"] = "runs/a/record.json"
    got = _diagnostics(m, "RRA")
    assert [(d.code, d.pointer) for d in got if d.code.startswith("RRA5")] == [
        ("RRA509", "/claims/0/reference/observations/3/repeat"),
        ("RRA512", "/claims/0/reference/observations/4/run_record")]
    assert [(d.code, d.pointer) for d in got if d.code.startswith("RRA1")] == [
        ("RRA112", "/claims/0/reference/observations/0"), ("RRA112", "/claims/0/reference/observations/1/repeat"),
        ("RRA112", "/claims/0/reference/observations/2/repeat")]
