"""Seeds, runtimes, reference observations, intervals, and change records."""

from __future__ import annotations

import math
import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

from ...intervals import Interval, acceptance_interval
from ..context import Context, Finding, Pointer, strings
from . import check
from ._numbers import INT_LIMIT, as_int, as_number

__all__ = ["claim_interval", "observation_values"]

def observation_values(claim: Mapping[str, Any]) -> list[tuple[int, float, int | None]]:
    """(index, value, seed) of each observation with a numeric value (seed None for an
    observation identified by repeat)."""
    reference = claim.get("reference")
    if not isinstance(reference, Mapping) or not isinstance(reference.get("observations"), list):
        return []
    out = []
    for index, obs in enumerate(reference["observations"]):
        if isinstance(obs, Mapping):
            value = obs.get("value")
            # Exact types first: this runs for every observation of every claim, several times.
            if type(value) is not float:
                value = as_number(value)
                if value is None:
                    continue
            seed = obs.get("seed")
            out.append((index, value, seed if type(seed) is int else as_int(seed)))
    return out


def claim_interval(claim: Mapping[str, Any]) -> Interval | None:
    """The claim's acceptance interval, when it has ≥ 2 finite observations and a precision."""
    return _interval(claim, observation_values(claim))


def _interval(claim: Mapping[str, Any], observed: list[tuple[int, float, int | None]]) -> Interval | None:
    """:func:`claim_interval` from the claim's :func:`observation_values`, already read."""
    reported = claim.get("reported")
    precision = as_int(reported.get("precision")) if isinstance(reported, Mapping) else None
    values = [v for _, v, _ in observed]
    if precision is None or precision < 0 or len(values) < 2 or not all(math.isfinite(v) for v in values):
        return None
    return acceptance_interval(values, min(precision, 15))


@check("RRA501", "RRA510", "RRA511", "RRA513")
def launcher_sanity(ctx: Context) -> Iterator[Finding]:
    """Stochastic launchers declare seeds, without repeats; the timeout covers the expected runtime."""
    for i, launcher in ctx.items("launchers"):
        seeds = launcher.get("seeds")
        stochastic = launcher.get("stochastic", True)
        if stochastic is True and (seeds is None or seeds == []):
            yield Finding("RRA501", f"launcher {launcher.get('id')!r} is stochastic but declares no seeds",
                          ("launchers", i), "list the seeds a reproduction runs (seeds: [0, 1, 2, 3, 4]), "
                          "or set stochastic: false")
        if stochastic is True and "repeats" in launcher:
            # Runs repeats times was probably meant, and it runs once per seed instead.
            yield Finding("RRA513", f"launcher {launcher.get('id')!r} is stochastic, so repeats "
                          f"{launcher['repeats']!r} is ignored: its runs are its seeds",
                          ("launchers", i, "repeats"), "remove repeats and list one seed per run, or set "
                          "stochastic: false if the program reads no seed")
        if isinstance(seeds, list) and not _distinct(seeds):
            seen: set[int] = set()
            for j, raw_seed in enumerate(seeds):
                seed = as_int(raw_seed)
                if seed is not None:
                    if seed in seen:
                        yield Finding("RRA511", f"seed {seed} is listed twice", ("launchers", i, "seeds", j))
                    seen.add(seed)
        resources = launcher.get("resources")
        if isinstance(resources, Mapping):
            timeout, expected = as_number(resources.get("timeout_s")), as_number(resources.get("expected_runtime_s"))
            if timeout is not None and expected is not None and expected > timeout:
                yield Finding("RRA510", f"timeout_s {timeout:g} is shorter than expected_runtime_s {expected:g}",
                              ("launchers", i, "resources", "timeout_s"),
                              "allow headroom: a timeout of about twice the expected runtime")


def _distinct(seeds: list[Any]) -> bool:
    """True when no two seeds are equal, so none is listed twice (as_int keeps a number's value)."""
    try:
        return len(set(seeds)) == len(seeds)
    except TypeError:
        return False  # an unhashable item: the list is read seed by seed


@check("RRA502", "RRA503", "RRA504", "RRA505", "RRA506", "RRA507", "RRA509", "RRA512")
def observations(ctx: Context) -> Iterator[Finding]:
    """Reference observations are enough, finite, independent, and consistent with the claim."""
    seeds_of: dict[str, set[int]] = {}
    repeats_of: dict[str, int] = {}
    for _, launcher in ctx.items("launchers"):
        if not isinstance(launcher.get("id"), str):
            continue
        seeds = launcher.get("seeds")
        if isinstance(seeds, list):
            seeds_of[launcher["id"]] = _seed_set(seeds)
        if launcher.get("stochastic") is False:
            repeats_of[launcher["id"]] = as_int(launcher.get("repeats", 1)) or 1
    explained = {ref for _, d in ctx.items("discrepancies") for _, ref in strings(d.get("claims"))}
    isfinite = math.isfinite
    for i, claim in ctx.items("claims"):
        reference: Any = claim.get("reference")
        raw = reference.get("observations") if type(reference) is dict or isinstance(reference, Mapping) else None
        if not isinstance(raw, list):
            continue
        n = len(raw)
        if n < 5:
            if n < 3:
                yield Finding("RRA502", f"claim {claim.get('id')!r} has {n} reference observation(s); at least 3 "
                              "are required", ("claims", i, "reference", "observations"),
                              "run the launcher with more seeds and record each value")
            else:
                yield Finding("RRA503", f"claim {claim.get('id')!r} has {n} reference observations; 5 are "
                              "recommended", ("claims", i, "reference", "observations"))
        reported = claim.get("reported")
        reported_value = None
        if type(reported) is dict or isinstance(reported, Mapping):
            reported_value = reported.get("value")
            if type(reported_value) is not float:
                reported_value = as_number(reported_value)
        if reported_value is not None and not isfinite(reported_value):
            yield Finding("RRA504", f"reported value {reported_value!r} is not finite", ("claims", i, "reported", "value"))
        launcher_id = claim.get("launcher")
        launcher_seeds = seeds_of.get(launcher_id) if isinstance(launcher_id, str) else None
        # One pass reads each value and seed (as observation_values does) and checks them; what it
        # finds waits in ``found`` (rarely anything) behind the findings about repeats and run
        # records, the rarer checks, which run only when an observation names one.
        found: list[Finding] = []
        floats: list[float] = []
        rare, finite = False, True
        seen: dict[int, int] = {}
        for j, obs in enumerate(raw):
            if type(obs) is not dict and not isinstance(obs, Mapping):
                continue
            if "repeat" in obs or "run_record" in obs:
                rare = True
            value = obs.get("value")
            if type(value) is not float:
                value = as_number(value)
                if value is None:
                    continue
            floats.append(value)
            if not isfinite(value):
                finite = False
                found.append(Finding("RRA504", f"observed value {value!r} is not finite",
                                     ("claims", i, "reference", "observations", j, "value")))
            seed = obs.get("seed")
            if type(seed) is not int:
                seed = as_int(seed)
                if seed is None:
                    continue
            if seed in seen:
                found.append(Finding("RRA505", f"observations {seen[seed]} and {j} share seed {seed}; they are "
                                     "not independent", ("claims", i, "reference", "observations", j, "seed"),
                                     "record observations from distinct seeds"))
            else:
                seen[seed] = j
            if launcher_seeds and seed not in launcher_seeds:
                found.append(Finding("RRA509", f"observation seed {seed} is not among the launcher's seeds "
                                     f"{sorted(launcher_seeds)}",
                                     ("claims", i, "reference", "observations", j, "seed")))
        if rare:
            repeats = repeats_of.get(launcher_id) if isinstance(launcher_id, str) else None
            yield from _repeats(raw, ("claims", i), repeats)
            yield from _independence(raw, ("claims", i))
        if found:
            yield from found
        if not finite or len(floats) < 2:
            continue  # no interval (as _interval says), so nothing to compare with it
        claim_id = claim.get("id")
        declared = reference.get("stability")
        compare = reported_value is not None and isfinite(reported_value) and \
            not (isinstance(claim_id, str) and claim_id in explained)
        if not compare and declared not in ("stable", "variable"):
            continue  # neither finding could be reported: the interval is not computed
        precision = as_int(reported.get("precision")) if type(reported) is dict or isinstance(reported, Mapping) \
            else None
        if precision is None or precision < 0:
            continue
        interval = acceptance_interval(floats, min(precision, 15))
        if compare and reported_value is not None and not interval.contains(reported_value):
            yield Finding("RRA506", f"reported value {reported_value:g} lies outside the reference interval "
                          f"[{interval.low:.6g}, {interval.high:.6g}]", ("claims", i, "reported", "value"),
                          "record a discrepancy that lists this claim, or check the observations")
        computed = "stable" if interval.stable else "variable"
        if isinstance(declared, str) and declared in ("stable", "variable") and declared != computed:
            yield Finding("RRA507", f"claim {claim.get('id')!r} is declared {declared!r} but its observations make "
                          f"it {computed!r} (spread {interval.spread:.3g}, precision floor {interval.floor:g})",
                          ("claims", i, "reference", "stability"), f"write stability: {computed}, or omit it")


def _seed_set(seeds: list[Any]) -> set[int]:
    """The distinct seeds of a launcher's list, read as :func:`as_int` reads them."""
    try:
        out = set(seeds)
    except TypeError:
        out = None  # an unhashable item
    # A set of integers within range is already what as_int makes of it (the test in C, not per item).
    if out is not None and set(map(type, out)) <= {int} and (not out or min(out) >= -INT_LIMIT
                                                             and max(out) < INT_LIMIT):
        return out
    return {s for s in map(as_int, seeds) if s is not None}


def _repeats(raw: list[Any], base: Pointer, repeats: int | None) -> Iterator[Finding]:
    """Observations of a launcher that is not stochastic name distinct repeats among its runs."""
    seen: dict[int, int] = {}
    for j, obs in enumerate(raw):
        repeat = obs.get("repeat") if type(obs) is dict or isinstance(obs, Mapping) else None
        if repeat is None:
            continue  # most observations (seeded ones) have no repeat
        repeat = as_int(repeat)
        if repeat is None:
            continue
        pointer = (*base, "reference", "observations", j, "repeat")
        if repeat in seen:
            yield Finding("RRA505", f"observations {seen[repeat]} and {j} share repeat {repeat}; they are not "
                          "independent", pointer, "record observations from distinct runs")
        else:
            seen[repeat] = j
        if repeats is None:
            yield Finding("RRA509", f"observation repeat {repeat} belongs to a stochastic launcher, whose runs "
                          "are told apart by seed", pointer, "give the seed of the run instead")
        elif repeat >= repeats:
            yield Finding("RRA509", f"observation repeat {repeat} is not among the launcher's runs "
                          f"0 to {repeats - 1} (repeats: {repeats})", pointer,
                          f"raise the launcher's repeats to at least {repeat + 1}")


def _run_of(path: str) -> str:
    # rra run writes one directory per run, holding record.json and the run's logs: two records
    # named record.json in one directory are one run. Records named otherwise are one run each.
    normal = posixpath.normpath(path.replace("\\", "/"))
    head, tail = posixpath.split(normal)
    return head if tail == "record.json" else normal


def _independence(raw: list[Any], base: Pointer) -> Iterator[Finding]:
    """Observations that point at the same run's record cannot be independent."""
    first: dict[str, int] = {}
    for j, obs in enumerate(raw):
        record = obs.get("run_record") if type(obs) is dict or isinstance(obs, Mapping) else None
        if not isinstance(record, str):
            continue
        run = _run_of(record)
        if run in first:
            yield Finding("RRA512", f"observations {first[run]} and {j} come from the same run ({run!r}); "
                          "independent observations come from separate runs",
                          (*base, "reference", "observations", j, "run_record"),
                          "record one observation per run, from runs on separate machines where possible")
        else:
            first[run] = j


@check("RRA508")
def method_changes(ctx: Context) -> Iterator[Finding]:
    """A change that may alter the method says which claims it affects."""
    for i, change in ctx.items("changes"):
        alters = change.get("alters_method")
        if alters not in ("yes", "unknown"):
            continue
        affects = change.get("affects")
        claims = affects.get("claims") if isinstance(affects, Mapping) else None
        if not claims:
            yield Finding("RRA508", f"change {change.get('id')!r} has alters_method: {alters} but names no "
                          "affected claims", ("changes", i, "alters_method"),
                          "list the claims it may move under affects.claims")
