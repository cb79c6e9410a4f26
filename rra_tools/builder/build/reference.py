"""Step **reference**: the claims' launchers run again, their runs added as reference observations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..manifest_edit import edit_manifest
from .answers import plain_data
from .context import Build
from .errors import BuildError
from .state import digest

if TYPE_CHECKING:
    from ...run.plan import Artifact as RunArtifact
    from ..reference import AddedObservation

#: Who the build's own reference observations are by.
BUILDER = "rra build"


def inputs(build: Build) -> str:
    """Digest of the step's inputs: the manifest without guide, review and levels."""
    data = build.artifact().data
    return digest({k: v for k, v in data.items() if k not in ("guide", "review", "levels")})


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ...run import plan_runs, run_plans
    from ...run import load_artifact as run_artifact
    from ..reference import add_references

    record = build.steps["reference"]
    artifact = build.artifact()
    claims = [c for c in artifact.data.get("claims") or [] if isinstance(c, Mapping)]
    if not claims:
        record.note = "no claims: nothing to observe"
        return
    if build.options.reference_runs <= 0:
        record.note = "no reference runs asked (--reference-runs 0)"
        return
    _drop_own_observations(build)
    launchers = list(dict.fromkeys(str(c.get("launcher")) for c in claims))
    _number_repeats(build, launchers)
    loaded = run_artifact(build.root)
    data = build.artifact().data
    records: list[Path] = []
    for launcher_id in launchers:
        launcher = next((x for x in loaded.manifest.launchers if x.id == launcher_id), None)
        if launcher is None:  # an answer may name a launcher the manifest does not have
            claim_ids = [str(c.get("id")) for c in claims if str(c.get("launcher")) == launcher_id]
            raise BuildError(f"claim {', '.join(claim_ids)} names launcher {launcher_id!r}, which the manifest "
                             f"does not have (launchers: {', '.join(x.id for x in loaded.manifest.launchers)})",
                             "set the claim's launcher to one of them in the manifest, and run the build again")
        if launcher.stochastic:  # each declared seed no observation of its claims holds yet
            seeds = _taken(data, launcher_id, "seed")
            plans = [p for p in plan_runs(loaded, launcher_id, all_seeds=True) if p.seed not in seeds]
        else:  # the repeat indexes no observation of its claims holds yet
            taken = _taken(data, launcher_id, "repeat")
            plans = [p for p in plan_runs(loaded, launcher_id, all_seeds=True)
                     if p.repeat not in taken][:build.options.reference_runs]
        if not plans:
            continue
        build.progress(f"reference runs of {launcher_id}: {len(plans)}")
        outcome = run_plans(plans, build.run_options())
        failed = [r for r in outcome.results if not r.successful]
        if outcome.interrupted or outcome.refused or failed:
            raise BuildError(f"a reference run of {launcher_id} did not succeed"
                             + (f": {build.rel(failed[0].record_path)}" if failed else ""),
                             "the launcher worked in the execute step; look at the run's logs")
        records.extend(r.record_path for r in outcome.results)
    copies = _untraced_observations(build) or dict(record.outputs.get("reported_set_aside") or {})
    if not records:
        record.note = "every seed already has an observation: no reference run"
        _set_aside_untraced(build, copies)
        _reported_inside(build)
        return
    added = add_references(build.root, records, by=BUILDER, origin="refined")
    record.note = f"{len(added)} observation(s) of {len({a.claim for a in added})} claim(s)"
    _varies(build, loaded, added)
    _set_aside_untraced(build, copies)
    _reported_inside(build)


def _untraced_observations(build: Build) -> dict[str, dict[str, Any]]:
    """Claim id -> the first observation of the number claim that no run record backs
    (:func:`..reference.is_untraced`): the paper's value a draft wrote, or any number an answer gave."""
    from ..reference import is_untraced

    copies: dict[str, dict[str, Any]] = {}
    for claim in build.artifact().data.get("claims") or []:
        if not isinstance(claim, Mapping) or claim.get("kind", "number") != "number":
            continue
        found = [o for o in (claim.get("reference") or {}).get("observations") or [] if is_untraced(o)]
        if found:
            copies[str(claim.get("id"))] = plain_data(found[0])
    return copies


def _set_aside_untraced(build: Build, copies: Mapping[str, dict[str, Any]]) -> None:
    """Take out of each number claim's observations those no run record backs (``copies``, read
    before the reference runs were added).

    An observation is a run's value, and in a build the only evidence of a run is its record.
    One with none is the paper's reported value a draft wrote (the schema asks for one
    observation before any run), or a number an answer gave: the agent's word. Left among the
    build's runs it widens their interval until it holds the reported value, whatever the runs
    give (one copied value against three equal runs gives a half-width of about 1.8 times their
    distance from it; a value near the reported one does the same), so every claim would be
    "reproduced". Taken out once the claim has two other observations (the reference runs'), so
    that it keeps an interval and the manifest stays valid (``add_references`` already takes out
    the draft's own); the first one set aside is kept in the state file, to stand in again when
    a later build drops its runs, and each is said."""
    from ..reference import is_untraced

    if not copies:
        return

    def mutate(document: Any) -> None:
        for claim in document.get("claims") or []:
            if str(claim.get("id")) not in copies or not claim.get("reference"):
                continue
            kept = [o for o in claim["reference"].get("observations") or [] if not is_untraced(o)]
            if len(kept) >= 2:
                claim["reference"]["observations"] = kept

    edit_manifest(build.artifact().manifest_path, mutate)
    left = _untraced_observations(build)
    aside = {claim: observation for claim, observation in copies.items() if claim not in left}
    build.steps["reference"].outputs["reported_set_aside"] = aside
    for claim_id, observation in aside.items():
        build.progress(f"claim {claim_id}: the observation {observation.get('value')} has no run record (the "
                       "paper's value, or a number no run of this build gave): set aside; its interval is its runs'")


def _reported_inside(build: Build) -> None:
    """Stop when a number claim's reported value lies outside the interval of its observations
    (now runs only), unless a discrepancy lists the claim: the build's runs do not give the
    paper's number, and the *reproduced* level (spec 1.2, part 4, item 4) would not be met."""
    from ...validate.rules.experiments import claim_interval, observation_values

    data = build.artifact().data
    explained = {str(c) for item in data.get("discrepancies") or [] if isinstance(item, Mapping)
                 for c in item.get("claims") or []}
    outside: list[str] = []
    for claim in data.get("claims") or []:
        if not isinstance(claim, Mapping) or claim.get("kind", "number") != "number" or \
                str(claim.get("id")) in explained:
            continue
        value = (claim.get("reported") or {}).get("value")
        interval = claim_interval(claim)
        if interval is None or not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        if not interval.contains(float(value)):
            values = [v for _, v, _ in observation_values(claim)]
            outside.append(f"claim {claim.get('id')!r}: reported {value}, the runs give "
                           f"{', '.join(f'{v:g}' for v in values)} (interval [{interval.low:.6g}, "
                           f"{interval.high:.6g}])")
    build.steps["reference"].outputs["reported_outside"] = outside
    if outside:
        raise BuildError("the reference runs do not give the paper's number: " + "; ".join(outside),
                         "find the cause (another version of the code or data, a setting the paper names); record "
                         "it as a discrepancy listing the claim ('rra discrepancy add --claim ID'), or correct "
                         "the claim; then run the build again")


def _varies(build: Build, loaded: RunArtifact, added: Sequence[AddedObservation]) -> None:
    """Record, for a launcher declared not stochastic, the claims whose repeated reference runs
    gave different values: no seed controls it, yet it is not deterministic (unseeded randomness,
    thread scheduling, the clock). That is said, with the values, in the state file and the
    note; the observations keep the spread, so the claim's interval covers it."""
    deterministic = {x.id for x in loaded.manifest.launchers if not x.stochastic}
    launcher_of = {c.id: c.launcher for c in loaded.manifest.claims}
    values: dict[str, list[float]] = {}
    for observation in added:
        if launcher_of.get(observation.claim) in deterministic:
            values.setdefault(observation.claim, []).append(observation.value)
    varies = {claim: found for claim, found in values.items() if len(found) > 1 and min(found) != max(found)}
    record = build.steps["reference"]
    record.outputs["varies"] = {claim: {"launcher": launcher_of[claim], "values": found}
                                for claim, found in varies.items()}
    for claim, found in varies.items():
        message = (f"launcher {launcher_of[claim]!r} is not stochastic in the manifest (no seed), but its "
                   f"{len(found)} reference runs gave claim {claim!r} different values ({min(found)} to "
                   f"{max(found)}): something it does is random; its interval covers that spread")
        build.progress(message)
        record.note += f"; {claim} varies across repeats ({min(found)} to {max(found)})"


def _taken(data: Mapping[str, Any], launcher_id: str, key: str) -> set[int]:
    """The seeds (or repeat indexes) the observations of ``launcher_id``'s claims hold."""
    return {o[key] for c in data.get("claims") or [] if c.get("launcher") == launcher_id
            for o in (c.get("reference") or {}).get("observations") or []
            if isinstance(o, Mapping) and isinstance(o.get(key), int)}


def _number_repeats(build: Build, launchers: Sequence[str]) -> None:
    """Give each deterministic claim launcher enough ``repeats`` for the observations it has and
    the reference runs to come, so that every observation's repeat index is one of its runs."""
    data = build.artifact().data
    wanted: dict[str, int] = {}
    for launcher in data.get("launchers") or []:
        ident = launcher.get("id")
        if ident not in launchers or launcher.get("stochastic", True) is not False:
            continue
        taken = _taken(data, ident, "repeat")
        need, free = max(taken, default=-1) + 1, 0
        free = need - len(taken)
        while free < build.options.reference_runs:  # the fewest runs with enough free indexes
            need, free = need + 1, free + 1
        if int(launcher.get("repeats", 1)) < need:
            wanted[ident] = need
    if not wanted:
        return

    def mutate(document: Any) -> None:
        for launcher in document["launchers"]:
            if launcher.get("id") in wanted:
                launcher["repeats"] = wanted[launcher["id"]]

    edit_manifest(build.artifact().manifest_path, mutate)


def _drop_own_observations(build: Build) -> None:
    """Observations an earlier run of this step added are of code or a manifest that changed."""
    data = build.artifact().data
    if not any(_by_builder(o) for c in data.get("claims") or [] for o in (c.get("reference") or {}).get(
            "observations") or []):
        return

    aside: Mapping[str, Any] = build.steps["reference"].outputs.get("reported_set_aside") or {}

    def mutate(document: Any) -> None:
        for claim in document.get("claims") or []:
            reference = claim.get("reference")
            if reference and reference.get("observations"):
                kept = [o for o in reference["observations"] if not _by_builder(o)]
                if not kept and isinstance(aside.get(str(claim.get("id"))), Mapping):
                    # The reported value set aside stands in again until the new runs are added
                    # (a claim needs an observation), and is set aside again after them.
                    kept = [dict(aside[str(claim.get("id"))])]
                if kept:
                    reference["observations"] = kept
                else:
                    del claim["reference"]

    edit_manifest(build.artifact().manifest_path, mutate)


def _by_builder(observation: Any) -> bool:
    """Whether a reference observation is one the build itself added."""
    if not isinstance(observation, Mapping):
        return False
    provenance = observation.get("provenance") or observation.get("x-provenance") or {}
    return isinstance(provenance, Mapping) and provenance.get("by") == BUILDER
