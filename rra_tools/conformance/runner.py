"""Run an implementation on every case and compare its verdict (and codes) with the expectation.

Protocol for an implementation given as a command: it is run as ``CMD... ARTIFACT_DIR`` (or with
``{path}`` in CMD replaced), must exit 0 when the artifact is valid, 1 when invalid and 2 when
the input cannot be read (counted as invalid), and print JSON on standard output: either
``{"verdict": "valid"|"invalid", "codes": [...]}`` or an RRA validation report
(``rra validate --format json``). Any other exit status is a failure of the case.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cases import CaseError, LoadedCase, materialise

__all__ = ["Implementation", "Outcome", "Reported", "command_impl", "in_process_impl", "run_suite"]


@dataclass(frozen=True)
class Reported:
    """What an implementation said about one artifact."""

    verdict: str
    codes: frozenset[str]
    error: str | None = None


Implementation = Callable[[Path], Reported]


@dataclass
class Outcome:
    """The result of one case."""

    loaded: LoadedCase
    passed: bool
    reported: Reported | None
    message: str = ""
    seconds: float = 0.0
    tags: list[str] = field(default_factory=list)


def in_process_impl(path: Path) -> Reported:
    """This package's validator, called as a library (no subprocess); reads the artifact's own
    ``.rra.toml`` when a case supplies one (the 'config' feature)."""
    from ..validate.api import validate_path
    from ..validate.config import Config, load_config
    from ..validate.diagnostics import Severity

    from ..validate.config import ConfigError

    config_file = path / ".rra.toml"
    try:
        config = load_config(config_file) if config_file.is_file() else Config()
    except ConfigError as exc:
        return Reported("error", frozenset(), str(exc))
    result = validate_path(path, config=config)
    codes = frozenset(d.code for d in result.diagnostics if d.severity >= Severity.WARNING)
    return Reported("valid" if result.valid else "invalid", codes)


def _parse_output(stdout: str) -> tuple[str | None, frozenset[str]]:
    data: Any = json.loads(stdout)
    if isinstance(data, dict) and "verdict" in data:
        return str(data["verdict"]), frozenset(str(c) for c in data.get("codes", []))
    if isinstance(data, dict) and isinstance(data.get("results"), list) and data["results"]:
        first = data["results"][0]
        codes = frozenset(d["code"] for d in first.get("diagnostics", []) if d.get("severity") in ("error", "warning"))
        return ("valid" if first.get("valid") else "invalid"), codes
    return None, frozenset()


def command_impl(command: str, timeout: float = 60.0) -> Implementation:
    """An implementation run as an external command, following the protocol above."""
    argv = shlex.split(command)

    def run(path: Path) -> Reported:
        args = [a.replace("{path}", str(path)) for a in argv]
        if not any("{path}" in a for a in argv):
            args.append(str(path))
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return Reported("error", frozenset(), f"timed out after {timeout:g} s")
        except OSError as exc:
            return Reported("error", frozenset(), f"cannot run {argv[0]!r}: {exc}")
        if proc.returncode not in (0, 1, 2):
            return Reported("error", frozenset(), f"exit status {proc.returncode}: {proc.stderr.strip()[-300:]}")
        try:
            verdict, codes = _parse_output(proc.stdout)
        except ValueError:
            verdict, codes = None, frozenset()
        by_status = "valid" if proc.returncode == 0 else "invalid"
        if verdict is not None and verdict != by_status:
            return Reported("error", codes, f"printed verdict {verdict!r} but exited {proc.returncode}")
        return Reported(by_status, codes)

    return run


def run_suite(suite: Path, cases: Iterable[LoadedCase], impl: Implementation, *, strict_codes: bool = False,
              progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Materialise each case in a fresh directory, run ``impl`` on it and judge the result."""
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="rra-conformance-") as tmp:
        for number, loaded in enumerate(cases):
            case = loaded.case
            dest = Path(tmp) / f"{number:04d}-{case.id}"
            start = time.perf_counter()
            try:
                materialise(suite, loaded, dest)
            except CaseError as exc:
                outcome = Outcome(loaded, False, None, f"broken case: {exc}", tags=list(case.tags))
            else:
                outcome = _judge(loaded, impl(dest), strict_codes)
            outcome.seconds = time.perf_counter() - start
            outcomes.append(outcome)
            if progress is not None:
                progress(outcome)
    return outcomes


def _judge(loaded: LoadedCase, reported: Reported, strict_codes: bool) -> Outcome:
    case = loaded.case
    expect = case.expect
    tags = list(case.tags)
    if reported.error is not None:
        return Outcome(loaded, False, reported, f"implementation failed: {reported.error}", tags=tags)
    if reported.verdict != expect.verdict:
        return Outcome(loaded, False, reported, f"verdict {reported.verdict!r}, expected {expect.verdict!r} "
                       f"(reported codes: {', '.join(sorted(reported.codes)) or 'none'})", tags=tags)
    if strict_codes and reported.codes != frozenset(expect.codes):
        missing = sorted(set(expect.codes) - reported.codes)
        extra = sorted(reported.codes - set(expect.codes))
        return Outcome(loaded, False, reported, f"codes differ: missing {missing}, unexpected {extra}", tags=tags)
    return Outcome(loaded, True, reported, tags=tags)
