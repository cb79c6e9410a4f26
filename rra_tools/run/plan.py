"""Planning runs: load the artifact, resolve seeds and typed parameters, order launchers.

A plan is pure data: it says what will run (argv with placeholders resolved, working
directory, environment, outputs) without running anything.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ..io.errors import LoadError
from ..io.paths import lexical_issue
from .errors import ArtifactError, PlanError
from .spec import LauncherSpec as Launcher
from .spec import ManifestSpec as Manifest
from .spec import ParameterSpec as Parameter
from .spec import read_manifest

__all__ = [
    "Artifact",
    "ParamValue",
    "RunPlan",
    "checked_manifest",
    "format_value",
    "launcher_order",
    "load_artifact",
    "parse_overrides",
    "plan_runs",
    "substitute",
]

ParamValue = int | float | str | bool
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Artifact:
    """A loaded artifact: its root directory, validated manifest and digest."""

    root: Path
    manifest: Manifest
    #: SHA-256 of the manifest's canonical JSON (sorted keys, compact separators, UTF-8).
    digest: str
    data: Mapping[str, Any]

    def launcher(self, ident: str) -> Launcher:
        """The launcher with id ``ident``; PlanError naming the known ones otherwise."""
        for launcher in self.manifest.launchers:
            if launcher.id == ident:
                return launcher
        known = ", ".join(repr(x.id) for x in self.manifest.launchers)
        raise PlanError(f"unknown launcher {ident!r}; the manifest declares {known}")

    @property
    def runs_dir(self) -> Path:
        """The run-record directory (evidence.run_records), inside the root."""
        rel = self.manifest.evidence.run_records
        path = self.root / rel
        real = os.path.realpath(path)
        if lexical_issue(rel) is not None or not (real == str(self.root) or real.startswith(f"{self.root}{os.sep}")):
            raise ArtifactError(f"evidence.run_records {rel!r} leaves the artifact root")
        return path


@dataclass(frozen=True)
class RunPlan:
    """One launcher execution, fully resolved."""

    artifact: Artifact
    launcher: Launcher
    seed: int | None
    parameters: dict[str, ParamValue]
    argv: list[str]
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    #: Declared outputs: (id, path relative to the root with placeholders resolved, format).
    outputs: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def timeout_s(self) -> float:
        """Wall-clock limit of the run."""
        return self.launcher.resources.timeout_s

    @property
    def expected_s(self) -> float:
        """Typical wall-clock time of the run."""
        return self.launcher.resources.expected_runtime_s


def load_artifact(path: str | Path) -> Artifact:
    """Load the artifact at ``path`` (a directory or its manifest file); ArtifactError if unusable.

    The manifest must conform to the published schema (checked by the compiled validator; on a
    failure jsonschema names the first problem). Semantic rules are ``rra validate``'s business.
    """
    from ..io.errors import InputError
    from ..io.manifest import locate_manifest, read_manifest_bytes

    try:
        manifest_path = locate_manifest(path)
        raw = read_manifest_bytes(manifest_path)
    except InputError as exc:
        raise ArtifactError(exc.message) from None
    except LoadError as exc:
        raise ArtifactError(f"{path}: {exc.problem.message}") from None
    data, digest = checked_manifest(manifest_path, raw)
    return Artifact(manifest_path.parent.resolve(), read_manifest(data), digest, data)


def checked_manifest(manifest_path: Path, raw: bytes) -> tuple[dict[str, Any], str]:
    """The manifest ``raw`` (read from ``manifest_path``) as JSON data that conforms to the
    published schema, and its canonical digest; ArtifactError if it is unreadable or does not
    conform.

    Parsing (ruamel for YAML) and the compiled validator cost about 30 ms of imports on every
    ``rra run``, so the outcome is cached under the cache directory, keyed by the manifest's
    bytes, the schema's bytes and this package's version: an entry is a pure function of its
    key, and a manifest that fails is never cached.
    """
    from .. import __version__
    from ..io.cache import read_json_entry, write_json_entry
    from ..io.schemas import schema_bytes

    key = hashlib.sha256(b"\0".join((__version__.encode(), schema_bytes(), raw))).hexdigest()
    cached = read_json_entry("manifests", key)
    if isinstance(cached, dict) and isinstance(cached.get("data"), dict) and isinstance(cached.get("digest"), str):
        return cached["data"], cached["digest"]
    from ..io.manifest import load_manifest_bytes
    from ..io.schemas import compiled_is_valid

    try:
        loaded = load_manifest_bytes(raw, path=manifest_path)
    except LoadError as exc:
        p = exc.problem
        where = f"{manifest_path}:{p.line}:{p.column}" if p.line is not None else f"{manifest_path}"
        raise ArtifactError(f"{where}: {p.message}") from None
    data = loaded.data
    if compiled_is_valid(data) is not True:
        from ..validate.schema_layer import check_schema

        problems = list(check_schema(data))
        if problems:
            first = problems[0]
            where = "/".join(str(x) for x in first.pointer)
            raise ArtifactError(f"{manifest_path}: not a valid manifest: {first.message} at {where!r} "
                                f"({len(problems)} problem(s); 'rra validate' lists them)")
    if not isinstance(data, dict):  # the schema requires an object; this tells mypy
        raise ArtifactError(f"{manifest_path}: not a valid manifest: not a mapping")
    try:
        digest = loaded.digest
    except ValueError as exc:
        raise ArtifactError(f"{manifest_path}: {exc}") from None
    write_json_entry("manifests", key, {"digest": digest, "data": data})
    return data, digest


def format_value(value: ParamValue) -> str:
    """How a parameter value is written into argv.

    >>> [format_value(v) for v in (3, 0.1, 1e-05, True, "x")]
    ['3', '0.1', '1e-05', 'true', 'x']
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _plain(value: object) -> str:
    # Defaults of enum fields are not converted by use_enum_values; read the value either way.
    return str(value.value) if isinstance(value, Enum) else str(value)


def _coerce(name: str, param: Parameter, raw: ParamValue) -> ParamValue:
    kind = _plain(param.type)
    value: ParamValue
    if kind == "bool":
        if isinstance(raw, bool):
            value = raw
        elif isinstance(raw, str) and raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        else:
            raise PlanError(f"parameter {name!r} is a bool; got {raw!r} (use true or false)")
    elif kind == "int":
        try:
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError
            value = int(raw)
        except ValueError:
            raise PlanError(f"parameter {name!r} is an int; got {raw!r}") from None
    elif kind == "float":
        try:
            if isinstance(raw, bool):
                raise ValueError
            value = float(raw)
        except ValueError:
            raise PlanError(f"parameter {name!r} is a float; got {raw!r}") from None
        if not math.isfinite(value):
            raise PlanError(f"parameter {name!r} must be finite; got {raw!r}")
    else:
        value = raw if isinstance(raw, str) else format_value(raw)
    if param.choices is not None and value not in param.choices:
        allowed = ", ".join(format_value(c) for c in param.choices)
        raise PlanError(f"parameter {name!r} must be one of {allowed}; got {format_value(value)!r}")
    return value


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    """``k=v`` strings as a mapping; PlanError for an item without '='."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise PlanError(f"--param needs NAME=VALUE; got {item!r}")
        out[key.strip()] = value
    return out


def substitute(template: str, values: Mapping[str, str], where: str) -> str:
    """Replace ``{name}`` placeholders; PlanError for an unknown name. ``{{``/``}}`` are braces."""
    out: list[str] = []
    pos = 0
    for match in _PLACEHOLDER.finditer(template):
        out.append(template[pos:match.start()])
        pos = match.end()
        name = match.group(1)
        if name is None:
            out.append(match.group(0)[0])
            continue
        if name not in values:
            known = ", ".join(sorted(values)) or "none"
            raise PlanError(f"{where}: unknown placeholder {{{name}}} in {template!r} (known: {known})")
        out.append(values[name])
    out.append(template[pos:])
    return "".join(out)


def resolve_parameters(launcher: Launcher, overrides: Mapping[str, str],
                       strict: bool = True) -> dict[str, ParamValue]:
    """Defaults with ``overrides`` applied, each checked against its type and choices."""
    if strict:
        unknown = sorted(set(overrides) - set(launcher.parameters))
        if unknown:
            known = ", ".join(repr(k) for k in launcher.parameters) or "none"
            raise PlanError(f"launcher {launcher.id!r} has no parameter {unknown[0]!r} (it has {known})")
    values: dict[str, ParamValue] = {}
    for name, param in launcher.parameters.items():
        raw: ParamValue = overrides.get(name, param.default)
        values[name] = _coerce(name, param, raw)
    return values


def seeds_for(launcher: Launcher, seed: int | None, all_seeds: bool) -> list[int | None]:
    """The seeds to run: the given one, all declared ones, or by default the first declared."""
    if not launcher.stochastic:
        if seed is not None:
            raise PlanError(f"launcher {launcher.id!r} is not stochastic; it takes no seed")
        return [None]
    if seed is not None:
        if seed < 0:
            raise PlanError(f"seed must be >= 0; got {seed}")
        return [seed]
    if not launcher.seeds:
        raise PlanError(f"launcher {launcher.id!r} declares no seeds; give one with --seed")
    return list(launcher.seeds) if all_seeds else [launcher.seeds[0]]


def plan_one(artifact: Artifact, launcher: Launcher, seed: int | None,
             parameters: dict[str, ParamValue]) -> RunPlan:
    """Resolve one run of ``launcher`` with ``seed`` and checked ``parameters``."""
    values = {name: format_value(v) for name, v in parameters.items()}
    if seed is not None:
        values["seed"] = str(seed)
    where = f"launcher {launcher.id!r}"
    argv = [substitute(arg, values, where) for arg in launcher.argv]
    outputs = [(out.id, substitute(out.path, values, f"{where} output {out.id!r}"), _plain(out.format))
               for out in launcher.outputs]
    return RunPlan(artifact, launcher, seed, dict(parameters), argv, launcher.cwd, dict(launcher.env), outputs)


def launcher_order(artifact: Artifact, ids: Sequence[str] | None = None) -> list[Launcher]:
    """Launchers (all, or ``ids`` and what they depend on) so that dependencies come first.

    Declaration order breaks ties; PlanError on an unknown dependency or a cycle.
    """
    by_id = {launcher.id: launcher for launcher in artifact.manifest.launchers}
    wanted = list(by_id) if ids is None else [artifact.launcher(i).id for i in ids]
    order: list[Launcher] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(ident: str, path: list[str]) -> None:
        if state.get(ident) == 2:
            return
        if state.get(ident) == 1:
            cycle = path[path.index(ident):] + [ident]
            raise PlanError("launchers depend on each other in a cycle: " + " -> ".join(cycle))
        launcher = by_id.get(ident)
        if launcher is None:
            raise PlanError(f"launcher {path[-1] if path else ident!r} depends on unknown launcher {ident!r}")
        state[ident] = 1
        for dep in launcher.depends_on:
            visit(dep, path + [ident])
        state[ident] = 2
        order.append(launcher)

    for ident in wanted:
        visit(ident, [])
    return order


def plan_runs(artifact: Artifact, launcher_id: str | None, *, seed: int | None = None,
              all_seeds: bool = False, overrides: Mapping[str, str] | None = None) -> list[RunPlan]:
    """Plans for one launcher (``launcher_id``) or, when it is None, every launcher in
    dependency order with all its seeds."""
    overrides = dict(overrides or {})
    if launcher_id is not None:
        launcher = artifact.launcher(launcher_id)
        params = resolve_parameters(launcher, overrides)
        return [plan_one(artifact, launcher, s, params) for s in seeds_for(launcher, seed, all_seeds)]
    launchers = launcher_order(artifact)
    declared = {name for launcher in launchers for name in launcher.parameters}
    unknown = sorted(set(overrides) - declared)
    if unknown:
        raise PlanError(f"no launcher has a parameter {unknown[0]!r}")
    plans: list[RunPlan] = []
    for launcher in launchers:
        params = resolve_parameters(launcher, overrides, strict=False)
        seeds = seeds_for(launcher, seed if launcher.stochastic else None, True if seed is None else all_seeds)
        plans.extend(plan_one(artifact, launcher, s, params) for s in seeds)
    return plans
