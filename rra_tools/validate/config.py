"""User configuration of the validator: ``[tool.rra]`` in pyproject.toml or a ``.rra.toml``.

The configuration is itself validated: an unknown key, an unknown rule selector or a bad
severity raises :class:`ConfigError` naming the file and key.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ExitStatus
from .catalog import RULES, Rule
from .diagnostics import Severity
from .errors import ValidateLayerError

__all__ = ["CONFIG_FILES", "Config", "ConfigError", "find_config", "load_config", "parse_config"]

#: Searched for in each directory from the artifact upward; the first that configures rra wins.
CONFIG_FILES = (".rra.toml", "pyproject.toml")
_KEYS = {"select", "ignore", "extend-select", "severity", "fail-on"}


class ConfigError(ValidateLayerError):
    """The configuration is invalid; the message names the file and key."""

    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class Config:
    """Which rules run and at which severity."""

    select: frozenset[str] | None = None
    extend_select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    fail_on: Severity | None = None
    source: str | None = None

    def enabled(self, r: Rule) -> bool:
        """Whether rule ``r`` runs under this configuration (mandatory rules always do)."""
        if r.mandatory:
            return True
        if _matches(r, self.ignore):
            return False
        if self.select is not None:
            return _matches(r, self.select) or _matches(r, self.extend_select)
        return r.enabled or _matches(r, self.extend_select)

    def severity_of(self, r: Rule) -> Severity:
        """Severity findings of ``r`` are reported at."""
        return self.severity.get(r.code, r.severity)

    def merged(self, **overrides: Any) -> Config:
        """A copy with command-line overrides applied (None leaves a field as is)."""
        values = {k: v for k, v in overrides.items() if v is not None}
        return Config(
            select=values.get("select", self.select),
            extend_select=self.extend_select | values.get("extend_select", frozenset()),
            ignore=self.ignore | values.get("ignore", frozenset()),
            severity={**self.severity, **values.get("severity", {})},
            fail_on=values.get("fail_on", self.fail_on),
            source=self.source,
        )


def _matches(r: Rule, selectors: Iterable[str]) -> bool:
    return any(s == "ALL" or r.code.startswith(s) or r.name == s for s in selectors)


def _selectors(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of rule codes, prefixes or names, got {value!r}")
    for selector in value:
        if selector != "ALL" and not any(
            code.startswith(selector) or r.name == selector for code, r in RULES.items()
        ):
            raise ConfigError(f"{where}: {selector!r} matches no rule; see 'rra rules'")
    return frozenset(value)


def parse_config(table: Mapping[str, Any], source: str) -> Config:
    """Build a :class:`Config` from the ``[tool.rra]`` table read from ``source``."""
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} in [tool.rra]; expected one of {sorted(_KEYS)}")
    select = _selectors(table["select"], f"{source}: select") if "select" in table else None
    extend = _selectors(table.get("extend-select", []), f"{source}: extend-select")
    ignore = _selectors(table.get("ignore", []), f"{source}: ignore")
    levels: dict[str, Severity] = {}
    raw_levels = table.get("severity", {})
    if not isinstance(raw_levels, Mapping):
        raise ConfigError(f"{source}: severity: expected a table of CODE = 'error'|'warning'|'info'")
    for code, text in raw_levels.items():
        if code not in RULES:
            raise ConfigError(f"{source}: severity: unknown rule code {code!r}")
        try:
            levels[code] = Severity.parse(str(text))
        except ValueError as exc:
            raise ConfigError(f"{source}: severity.{code}: {exc}") from None
    fail_on = None
    if "fail-on" in table:
        try:
            fail_on = Severity.parse(str(table["fail-on"]))
        except ValueError as exc:
            raise ConfigError(f"{source}: fail-on: {exc}") from None
    return Config(select, extend, ignore, levels, fail_on, source)


def find_config(start: Path) -> Path | None:
    """The nearest configuration file at or above ``start`` that has an rra table."""
    here = start.resolve()
    for directory in (here, *here.parents):
        for name in CONFIG_FILES:
            candidate = directory / name
            if candidate.is_file() and (name != "pyproject.toml" or _has_tool_rra(candidate)):
                return candidate
        if (directory / ".git").exists():
            break
    return None


def _has_tool_rra(path: Path) -> bool:
    try:
        return "rra" in tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


def load_config(path: Path) -> Config:
    """Read and validate the configuration file at ``path``."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    table = document.get("tool", {}).get("rra", {}) if path.name == "pyproject.toml" else document
    if not isinstance(table, Mapping):
        raise ConfigError(f"{path}: [tool.rra] must be a table")
    return parse_config(table, str(path))
