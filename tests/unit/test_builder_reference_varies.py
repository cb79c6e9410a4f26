"""rra build's reference step says when a launcher declared not stochastic gives different values
on its repeated runs: it is not deterministic, and the state file records why."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from rra_tools.builder.build.reference import _varies
from rra_tools.builder.build.state import StepRecord
from rra_tools.builder.reference import AddedObservation


def test_repeats_that_differ_are_recorded_with_their_values() -> None:
    said: list[str] = []
    build = SimpleNamespace(steps={"reference": StepRecord("reference", note="6 observation(s) of 2 claim(s)")},
                            progress=said.append)
    loaded = SimpleNamespace(manifest=SimpleNamespace(
        launchers=[SimpleNamespace(id="clock", stochastic=False), SimpleNamespace(id="seeded", stochastic=True),
                   SimpleNamespace(id="exact", stochastic=False)],
        claims=[SimpleNamespace(id="speedup", launcher="clock"), SimpleNamespace(id="acc", launcher="seeded"),
                SimpleNamespace(id="rmse", launcher="exact")]))
    added = [AddedObservation("speedup", v, 0, f"runs/clock/{i}/record.json") for i, v in enumerate([1.5, 1.25, 1.5])]
    added += [AddedObservation("acc", v, i, f"runs/seeded/{i}/record.json") for i, v in enumerate([0.9, 0.8])]
    added += [AddedObservation("rmse", 0.115, i, f"runs/exact/{i}/record.json") for i in range(3)]
    _varies(cast(Any, build), cast(Any, loaded), added)
    record = build.steps["reference"]
    # A seeded launcher is expected to vary; an exact one did not: only 'clock' is reported.
    assert record.outputs["varies"] == {"speedup": {"launcher": "clock", "values": [1.5, 1.25, 1.5]}}
    assert said == ["launcher 'clock' is not stochastic in the manifest (no seed), but its 3 reference runs gave "
                    "claim 'speedup' different values (1.25 to 1.5): something it does is random; its interval "
                    "covers that spread"]
    assert record.note == "6 observation(s) of 2 claim(s); speedup varies across repeats (1.25 to 1.5)"
