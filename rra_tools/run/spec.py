"""The parts of a manifest that running needs, as plain immutable tuples.

``rra run`` starts a process for every launcher; importing pydantic and building the manifest
models would cost it about 0.2 s each time. (NamedTuples rather than dataclasses: 18 dataclasses
take 12 ms to create at import, the tuples 1 ms. Their list and dict defaults are shared, and
never mutated: :func:`read_manifest` always passes fresh values.) The run path therefore checks the manifest against
the published JSON Schema with the compiled validator (a few milliseconds) and reads it into
these classes. Their attribute names and defaults are those of :mod:`rra_tools.model` (the
models stay the single source of truth for the schema); ``tests/unit/test_run_spec.py`` checks
that both read every example and every valid conformance case alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "ClaimSpec",
    "CsvSpec",
    "EnvironmentSpec",
    "EvidenceSpec",
    "ExtractSpec",
    "LauncherSpec",
    "LockSpec",
    "ManifestSpec",
    "MetricSpec",
    "ObservationSpec",
    "OutputSpec",
    "ParameterSpec",
    "ReferenceSpec",
    "RegexSpec",
    "ReportedSpec",
    "ResourcesSpec",
    "read_manifest",
]

ParamValue = int | float | str | bool


class ParameterSpec(NamedTuple):
    type: str
    default: ParamValue
    choices: list[ParamValue] | None = None


class ResourcesSpec(NamedTuple):
    timeout_s: float
    expected_runtime_s: float
    gpus: int = 0


class OutputSpec(NamedTuple):
    id: str
    path: str
    format: str


class LauncherSpec(NamedTuple):
    id: str
    argv: list[str]
    resources: ResourcesSpec
    cwd: str = "."
    env: dict[str, str] = {}
    parameters: dict[str, ParameterSpec] = {}
    stochastic: bool = True
    seeds: list[int] = []
    depends_on: list[str] = []
    outputs: list[OutputSpec] = []


class CsvSpec(NamedTuple):
    column: str
    row_index: int | None = None
    where: dict[str, str] | None = None


class RegexSpec(NamedTuple):
    pattern: str
    group: int = 1
    occurrence: str = "last"


class ExtractSpec(NamedTuple):
    output: str
    json_pointer: str | None = None
    csv: CsvSpec | None = None
    regex: RegexSpec | None = None
    scale: float = 1.0


class MetricSpec(NamedTuple):
    name: str
    unit: str
    direction: str


class ReportedSpec(NamedTuple):
    value: float
    precision: int


class ObservationSpec(NamedTuple):
    value: float
    seed: int


class ReferenceSpec(NamedTuple):
    observations: list[ObservationSpec]


class ClaimSpec(NamedTuple):
    id: str
    launcher: str
    metric: MetricSpec
    extract: ExtractSpec
    reported: ReportedSpec
    reference: ReferenceSpec
    aggregate: str = "mean"


class LockSpec(NamedTuple):
    path: str
    format: str
    sha256: str


class EnvironmentSpec(NamedTuple):
    lock: LockSpec | None = None
    image: str | None = None


class EvidenceSpec(NamedTuple):
    run_records: str = "runs"


class ManifestSpec(NamedTuple):
    id: str
    launchers: list[LauncherSpec]
    claims: list[ClaimSpec]
    environment: EnvironmentSpec
    evidence: EvidenceSpec
    levels: list[str]


def _float(value: Any) -> float:
    # The models declare these fields float: an integer in the document reads as a float.
    return float(value)


def _launcher(d: Mapping[str, Any]) -> LauncherSpec:
    res = d["resources"]
    return LauncherSpec(
        id=d["id"],
        argv=list(d["argv"]),
        resources=ResourcesSpec(_float(res["timeout_s"]), _float(res["expected_runtime_s"]), res.get("gpus", 0)),
        cwd=d.get("cwd", "."),
        env=dict(d.get("env", {})),
        parameters={name: ParameterSpec(p["type"], p["default"], list(p["choices"]) if "choices" in p else None)
                    for name, p in d.get("parameters", {}).items()},
        stochastic=d.get("stochastic", True),
        seeds=list(d.get("seeds", [])),
        depends_on=list(d.get("depends_on", [])),
        outputs=[OutputSpec(o["id"], o["path"], o["format"]) for o in d.get("outputs", [])],
    )


def _claim(d: Mapping[str, Any]) -> ClaimSpec:
    ex = d["extract"]
    csv, regex = ex.get("csv"), ex.get("regex")
    return ClaimSpec(
        id=d["id"],
        launcher=d["launcher"],
        metric=MetricSpec(d["metric"]["name"], d["metric"]["unit"], d["metric"]["direction"]),
        extract=ExtractSpec(
            output=ex["output"],
            json_pointer=ex.get("json_pointer"),
            csv=None if csv is None else CsvSpec(csv["column"], csv.get("row_index"),
                                                 dict(csv["where"]) if "where" in csv else None),
            regex=None if regex is None else RegexSpec(regex["pattern"], regex.get("group", 1),
                                                       regex.get("occurrence", "last")),
            scale=_float(ex.get("scale", 1.0)),
        ),
        reported=ReportedSpec(_float(d["reported"]["value"]), d["reported"]["precision"]),
        reference=ReferenceSpec([ObservationSpec(_float(o["value"]), o["seed"])
                                 for o in d["reference"]["observations"]]),
        aggregate=d.get("aggregate", "mean"),
    )


def read_manifest(data: Mapping[str, Any]) -> ManifestSpec:
    """The run-relevant parts of ``data``, a manifest that conforms to the published schema."""
    env = data["environment"]
    lock = env.get("lock")
    return ManifestSpec(
        id=data["id"],
        launchers=[_launcher(x) for x in data.get("launchers", [])],
        claims=[_claim(x) for x in data.get("claims", [])],
        environment=EnvironmentSpec(
            lock=None if lock is None else LockSpec(lock["path"], lock["format"], lock["sha256"]),
            image=env.get("image"),
        ),
        evidence=EvidenceSpec(data.get("evidence", {}).get("run_records", "runs")),
        levels=list(data.get("levels", [])),
    )
