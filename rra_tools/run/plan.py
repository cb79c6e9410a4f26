"""Planning runs: load the artifact, resolve seeds and typed parameters, order launchers.

A plan is pure data: it says what will run (argv with placeholders resolved, working
directory, environment, outputs) without running anything.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum

from ..io.artifact import Artifact, load_artifact
from ..model.manifest_view import LauncherSpec as Launcher
from ..model.manifest_view import ParameterSpec as Parameter
from ..plain import Frozen
from .errors import PlanError

__all__ = [
    "Artifact",
    "ParamValue",
    "RunPlan",
    "find_launcher",
    "format_value",
    "launcher_order",
    "load_artifact",
    "parse_overrides",
    "plan_runs",
    "substitute",
]

ParamValue = int | float | str | bool
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class RunPlan(Frozen):
    """One launcher execution, fully resolved.

    Besides the launcher, seed, parameter values, argv and working directory: ``env``, the
    launcher's variables; ``outputs``, the declared outputs as (id, path relative to the root
    with placeholders resolved, format); ``repeat``, the number of the run of a seedless
    launcher (0 to repeats - 1; None for a stochastic one); ``secrets``, the values of the
    launcher's secrets (variables and parameters) by name, from the caller's environment, never
    written anywhere (records and logs show '[redacted]', and so does ``repr``).
    """

    __slots__ = ("artifact", "launcher", "seed", "parameters", "argv", "cwd", "env", "outputs", "repeat", "secrets")
    _unshown = ("secrets",)

    def __init__(self, artifact: Artifact, launcher: Launcher, seed: int | None, parameters: dict[str, ParamValue],
                 argv: list[str], cwd: str, env: dict[str, str] | None = None,
                 outputs: list[tuple[str, str, str]] | None = None, repeat: int | None = None,
                 secrets: dict[str, str] | None = None) -> None:
        self.artifact, self.launcher, self.seed, self.parameters, self.argv, self.cwd = (
            artifact, launcher, seed, parameters, argv, cwd)
        self.env = {} if env is None else env
        self.outputs = [] if outputs is None else outputs
        self.repeat = repeat
        self.secrets = {} if secrets is None else secrets

    @property
    def secret_values(self) -> list[str]:
        """The values to redact wherever the run's evidence would show them."""
        return [v for v in self.secrets.values() if v]

    @property
    def timeout_s(self) -> float:
        """Wall-clock limit of the run."""
        return self.launcher.resources.timeout_s

    @property
    def expected_s(self) -> float:
        """Typical wall-clock time of the run."""
        return self.launcher.resources.expected_runtime_s


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
                       strict: bool = True, environ: Mapping[str, str] | None = None) -> dict[str, ParamValue]:
    """Defaults with ``overrides`` applied, each checked against its type and choices; a secret
    parameter's value comes from ``environ`` (default: this process's environment)."""
    if strict:
        unknown = sorted(set(overrides) - set(launcher.parameters))
        if unknown:
            known = ", ".join(repr(k) for k in launcher.parameters) or "none"
            raise PlanError(f"launcher {launcher.id!r} has no parameter {unknown[0]!r} (it has {known})")
    values: dict[str, ParamValue] = {}
    for name, param in launcher.parameters.items():
        if param.secret:
            if name in overrides:
                raise PlanError(f"parameter {name!r} is secret: set the environment variable {name} instead of "
                                "passing it on the command line (shells keep command lines in their history)")
            try:
                values[name] = _coerce(name, param, _secret(launcher, name, environ))
            except PlanError as exc:
                if "needs the secret" in str(exc):
                    raise
                # _coerce's message quotes the value; a secret's is never shown.
                raise PlanError(f"secret parameter {name!r}: the value of the environment variable {name} "
                                f"is not a valid {_plain(param.type)}"
                                f"{' among its choices' if param.choices else ''}") from None
            continue
        raw = overrides.get(name, param.default)
        assert raw is not None  # the schema requires a default of a parameter that is not secret
        values[name] = _coerce(name, param, raw)
    return values


def _secret(launcher: Launcher, name: str, environ: Mapping[str, str] | None) -> str:
    value = (os.environ if environ is None else environ).get(name)
    if not value:
        raise PlanError(f"launcher {launcher.id!r} needs the secret {name!r}: set the environment variable "
                        f"{name} for rra run (its value is never recorded)")
    return value


def secret_environment(launcher: Launcher, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The launcher's secret variables, copied from ``environ`` (default: this process's
    environment); PlanError naming the first one that is not set."""
    return {name: _secret(launcher, name, environ) for name in launcher.secrets}


def seeds_for(launcher: Launcher, seed: int | None, all_seeds: bool) -> list[int | None]:
    """The seeds to run: the given one, all declared ones, or by default the first declared.
    A seedless launcher runs without a seed (see :func:`repeats_for`)."""
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


def repeats_for(launcher: Launcher, all_runs: bool) -> list[int | None]:
    """The numbers of the runs of a seedless launcher: all ``repeats`` of them, or by default the
    first; [None] for a stochastic launcher (its runs are its seeds) and for a launcher that runs
    once (repeats: 1, the default), whose single run needs no number."""
    if launcher.stochastic or launcher.repeats == 1:
        return [None]
    return list(range(launcher.repeats)) if all_runs else [0]


def plan_one(artifact: Artifact, launcher: Launcher, seed: int | None,
             parameters: dict[str, ParamValue], repeat: int | None = None,
             secrets: Mapping[str, str] | None = None) -> RunPlan:
    """Resolve one run of ``launcher`` with ``seed`` (or ``repeat``) and checked ``parameters``;
    ``secrets`` holds the values of its secret variables (see :func:`secret_environment`)."""
    values = {name: format_value(v) for name, v in parameters.items()}
    if seed is not None:
        values["seed"] = str(seed)
    where = f"launcher {launcher.id!r}"
    argv = [substitute(arg, values, where) for arg in launcher.argv]
    outputs = [(out.id, substitute(out.path, values, f"{where} output {out.id!r}"), _plain(out.format))
               for out in launcher.outputs]
    secret_env = dict(secrets or {})
    hidden = {**secret_env, **{name: format_value(parameters[name]) for name, p in launcher.parameters.items()
                               if p.secret and name in parameters}}
    return RunPlan(artifact, launcher, seed, dict(parameters), argv, launcher.cwd, {**launcher.env, **secret_env},
                   outputs, repeat=repeat, secrets=hidden)


def find_launcher(artifact: Artifact, ident: str) -> Launcher:
    """The launcher with id ``ident``; PlanError naming the known ones otherwise."""
    for launcher in artifact.manifest.launchers:
        if launcher.id == ident:
            return launcher
    known = ", ".join(repr(x.id) for x in artifact.manifest.launchers)
    raise PlanError(f"unknown launcher {ident!r}; the manifest declares {known}")


def launcher_order(artifact: Artifact, ids: Sequence[str] | None = None) -> list[Launcher]:
    """Launchers (all, or ``ids`` and what they depend on) so that dependencies come first.

    Declaration order breaks ties; PlanError on an unknown dependency or a cycle.
    """
    by_id = {launcher.id: launcher for launcher in artifact.manifest.launchers}
    wanted = list(by_id) if ids is None else [find_launcher(artifact, i).id for i in ids]
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
              all_seeds: bool = False, overrides: Mapping[str, str] | None = None,
              environ: Mapping[str, str] | None = None) -> list[RunPlan]:
    """Plans for one launcher (``launcher_id``) or, when it is None, every launcher in
    dependency order with all its seeds (a seedless launcher: all its repeats). Secrets are read
    from ``environ`` (default: this process's environment)."""
    overrides = dict(overrides or {})
    if launcher_id is not None:
        launcher = find_launcher(artifact, launcher_id)
        params = resolve_parameters(launcher, overrides, environ=environ)
        secrets = secret_environment(launcher, environ)
        return [plan_one(artifact, launcher, s, params, r, secrets) for s in seeds_for(launcher, seed, all_seeds)
                for r in repeats_for(launcher, all_seeds)]
    launchers = launcher_order(artifact)
    declared = {name for launcher in launchers for name in launcher.parameters}
    unknown = sorted(set(overrides) - declared)
    if unknown:
        raise PlanError(f"no launcher has a parameter {unknown[0]!r}")
    plans: list[RunPlan] = []
    for launcher in launchers:
        params = resolve_parameters(launcher, overrides, strict=False, environ=environ)
        secrets = secret_environment(launcher, environ)
        every = True if seed is None else all_seeds
        seeds = seeds_for(launcher, seed if launcher.stochastic else None, every)
        plans.extend(plan_one(artifact, launcher, s, params, r, secrets) for s in seeds
                     for r in repeats_for(launcher, every))
    return plans
