"""The parts of a manifest that running needs, as plain frozen dataclasses.

``rra run`` starts a process for every launcher; importing pydantic and building the manifest
models would cost it about 0.2 s each time. The run path therefore checks the manifest against
the published JSON Schema with the compiled validator (a few milliseconds) and reads it into
these classes. Their attribute names and defaults are those of :mod:`rra_tools.model` (the
models stay the single source of truth for the schema); ``tests/unit/test_run_spec.py`` checks
that both read every example and every valid conformance case alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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


@dataclass(frozen=True)
class ParameterSpec:
    type: str
    default: ParamValue
    choices: list[ParamValue] | None = None


@dataclass(frozen=True)
class ResourcesSpec:
    timeout_s: float
    expected_runtime_s: float
    gpus: int = 0


@dataclass(frozen=True)
class OutputSpec:
    id: str
    path: str
    format: str


@dataclass(frozen=True)
class LauncherSpec:
    id: str
    argv: list[str]
    resources: ResourcesSpec
    cwd: str = "."
    env: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, ParameterSpec] = field(default_factory=dict)
    stochastic: bool = True
    seeds: list[int] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)
    outputs: list[OutputSpec] = field(default_factory=list)


@dataclass(frozen=True)
class CsvSpec:
    column: str
    row_index: int | None = None
    where: dict[str, str] | None = None


@dataclass(frozen=True)
class RegexSpec:
    pattern: str
    group: int = 1
    occurrence: str = "last"


@dataclass(frozen=True)
class ExtractSpec:
    output: str
    json_pointer: str | None = None
    csv: CsvSpec | None = None
    regex: RegexSpec | None = None
    scale: float = 1.0


@dataclass(frozen=True)
class MetricSpec:
    name: str
    unit: str
    direction: str


@dataclass(frozen=True)
class ReportedSpec:
    value: float
    precision: int


@dataclass(frozen=True)
class ObservationSpec:
    value: float
    seed: int


@dataclass(frozen=True)
class ReferenceSpec:
    observations: list[ObservationSpec]


@dataclass(frozen=True)
class ClaimSpec:
    id: str
    launcher: str
    metric: MetricSpec
    extract: ExtractSpec
    reported: ReportedSpec
    reference: ReferenceSpec
    aggregate: str = "mean"


@dataclass(frozen=True)
class LockSpec:
    path: str
    format: str
    sha256: str


@dataclass(frozen=True)
class EnvironmentSpec:
    lock: LockSpec | None = None
    image: str | None = None


@dataclass(frozen=True)
class EvidenceSpec:
    run_records: str = "runs"


@dataclass(frozen=True)
class ManifestSpec:
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
