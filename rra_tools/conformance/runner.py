"""Run an implementation on every case and compare its verdict (and codes) with the expectation.

Protocol for an implementation given as a command (conformance/v1.0/README.md): it is run as
``CMD... TARGET`` (or with ``{path}`` in CMD replaced by TARGET), where TARGET is the artifact
directory, ``oci-layout:DIR`` (``oci-layout:DIR:REF``) for a packed-artifact case, or
``taskset:PATH`` for a task-set case (PATH is ``taskset.json``; a ``references.json`` beside it is
the private references file to check with it). It must
exit 0 when the artifact is valid, 1 when invalid and 2 when the input cannot be read (counted
as invalid), and print JSON on standard output: either ``{"verdict": "valid"|"invalid",
"codes": [...]}`` (with ``"info": [...]``, its info codes, when it says them) or an RRA
validation report (``rra validate --format json``). Any other exit status is a failure of the case.

Each command runs in a session of its own, so a timed-out implementation is killed with every
process it started; each case is materialised under a directory that is the root of an empty
git repository, so that no configuration file above the temporary directory reaches it.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cases import CaseError, LoadedCase, materialise
from .layout import build_layout

__all__ = ["Implementation", "Outcome", "Reported", "command_impl", "in_process_impl", "prepare", "run_suite"]

#: How a case's artifact is named to an implementation: a directory, or ``oci-layout:...``.
LAYOUT_SCHEME = "oci-layout:"
#: How a task-set case is named to an implementation: ``taskset:`` and the task set's path.
TASKSET_SCHEME = "taskset:"


@dataclass(frozen=True)
class Reported:
    """What an implementation said about one artifact."""

    verdict: str
    codes: frozenset[str]
    error: str | None = None
    #: The codes reported with severity info; None when the implementation does not say.
    info: frozenset[str] | None = None


#: Called with the target (a directory, or ``oci-layout:DIR[:REF]``); says what it found.
Implementation = Callable[[str], Reported]


@dataclass
class Outcome:
    """The result of one case."""

    loaded: LoadedCase
    passed: bool
    reported: Reported | None
    message: str = ""
    seconds: float = 0.0
    tags: list[str] = field(default_factory=list)


def in_process_impl(target: str) -> Reported:
    """This package's validator, called as a library (no subprocess); reads the artifact's own
    ``.rra.toml`` when a case supplies one (the 'config' feature) and nothing above it."""
    from ..oci.targets import validate_target
    from ..validate.config import Config, ConfigError, load_config
    from ..validate.diagnostics import Severity

    if target.startswith(TASKSET_SCHEME):
        from ..validate.taskset import check_taskset

        path = Path(target.removeprefix(TASKSET_SCHEME))
        references = path.with_name("references.json")
        checked = check_taskset(path, references if references.is_file() else None)
        found = frozenset(d.code for d in checked.diagnostics if d.severity >= Severity.WARNING)
        info = frozenset(d.code for d in checked.diagnostics if d.severity == Severity.INFO)
        return Reported("valid" if checked.valid else "invalid", found, info=info)
    config = Config()
    if not target.startswith(LAYOUT_SCHEME):
        config_file = Path(target) / ".rra.toml"
        try:
            config = load_config(config_file) if config_file.is_file() else Config()
        except ConfigError as exc:
            return Reported("error", frozenset(), str(exc))
    result = validate_target(target, config=config)
    codes = frozenset(d.code for d in result.diagnostics if d.severity >= Severity.WARNING)
    info = frozenset(d.code for d in result.diagnostics if d.severity == Severity.INFO)
    return Reported("valid" if result.valid else "invalid", codes, info=info)


def _parse_output(stdout: str) -> tuple[str | None, frozenset[str], frozenset[str] | None]:
    """The verdict, the error and warning codes, and the info codes (None: not said) printed."""
    data: Any = json.loads(stdout)
    if isinstance(data, dict) and "verdict" in data:
        info = data.get("info")
        return (str(data["verdict"]), frozenset(str(c) for c in data.get("codes", [])),
                frozenset(str(c) for c in info) if isinstance(info, list) else None)
    if isinstance(data, dict) and isinstance(data.get("results"), list) and data["results"]:
        first = data["results"][0]
        diagnostics = first.get("diagnostics", [])
        codes = frozenset(d["code"] for d in diagnostics if d.get("severity") in ("error", "warning"))
        return (("valid" if first.get("valid") else "invalid"), codes,
                frozenset(d["code"] for d in diagnostics if d.get("severity") == "info"))
    return None, frozenset(), None


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the implementation's whole process group (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already


def command_impl(command: str, timeout: float = 60.0) -> Implementation:
    """An implementation run as an external command, following the protocol above."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("the implementation command is empty")

    def run(target: str) -> Reported:
        args = [a.replace("{path}", target) for a in argv]
        if not any("{path}" in a for a in argv):
            args.append(target)
        try:
            # A session of its own: on timeout the whole group goes, children included, and
            # the implementation cannot signal the runner's own group.
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, start_new_session=True)
        except OSError as exc:
            return Reported("error", frozenset(), f"cannot run {argv[0]!r}: {exc}")
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            return Reported("error", frozenset(), f"timed out after {timeout:g} s")
        finally:
            # A child left behind by an implementation that exited would live on unnoticed.
            _kill_group(proc)
        if proc.returncode not in (0, 1, 2):
            return Reported("error", frozenset(), f"exit status {proc.returncode}: {stderr.strip()[-300:]}")
        try:
            verdict, codes, info = _parse_output(stdout)
        except ValueError:
            verdict, codes, info = None, frozenset(), None
        by_status = "valid" if proc.returncode == 0 else "invalid"
        if verdict is not None and verdict != by_status:
            return Reported("error", codes, f"printed verdict {verdict!r} but exited {proc.returncode}")
        return Reported(by_status, codes, info=info)

    return run


def prepare(suite: Path, loaded: LoadedCase, dest: Path) -> str:
    """Materialise the case under the new directory ``dest``; return the target an
    implementation is run on: the artifact directory, ``taskset:PATH`` for a task-set case (the
    task set, and its references file, written into the artifact directory), or
    ``oci-layout:DIR[:REF]`` for a packaging case (the artifact is then written to ``dest/artifact`` and packed into
    ``dest/layout``)."""
    layout = loaded.case.layout
    if loaded.case.taskset is not None or loaded.case.taskset_text is not None:
        artifact = materialise(suite, loaded, dest)
        for name, document in (("taskset.json", loaded.case.taskset), ("references.json", loaded.case.references)):
            if document is not None:
                (artifact / name).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
        if loaded.case.taskset_text is not None:
            (artifact / "taskset.json").write_bytes(loaded.case.taskset_text.encode("utf-8"))
        return f"{TASKSET_SCHEME}{artifact / 'taskset.json'}"
    if layout is None:
        return str(materialise(suite, loaded, dest))
    artifact = materialise(suite, loaded, dest / "artifact")
    try:
        return build_layout(artifact, loaded.case.manifest_name, layout, dest / "layout")
    except CaseError as exc:
        raise CaseError(f"{loaded.file}: case {loaded.case.id!r}: {exc}") from None


def _repository_root(path: Path) -> None:
    """Make ``path`` the root of an empty git repository: configuration is looked up from the
    artifact directory upwards only to the repository root (spec/01-overview.md#validator-configuration),
    so a ``.rra.toml`` above the temporary directory cannot change a verdict."""
    git = path / ".git"
    (git / "objects").mkdir(parents=True)
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")


def _run_one(suite: Path, root: Path, number: int, loaded: LoadedCase, impl: Implementation,
             strict_codes: bool) -> Outcome:
    case = loaded.case
    dest = root / f"{number:04d}-{case.id}"
    start = time.perf_counter()
    try:
        target = prepare(suite, loaded, dest)
    except CaseError as exc:
        outcome = Outcome(loaded, False, None, f"broken case: {exc}", tags=list(case.tags))
    else:
        outcome = _judge(loaded, impl(target), strict_codes)
    outcome.seconds = time.perf_counter() - start
    return outcome


def run_suite(suite: Path, cases: Iterable[LoadedCase], impl: Implementation, *, strict_codes: bool = False,
              progress: Callable[[Outcome], None] | None = None, jobs: int = 1) -> list[Outcome]:
    """Materialise each case in a fresh directory, run ``impl`` on it and judge the result;
    ``jobs`` cases at a time. Outcomes come back in the order of ``cases``."""
    selected = list(cases)
    with tempfile.TemporaryDirectory(prefix="rra-conformance-") as tmp:
        root = Path(tmp)
        _repository_root(root)
        if jobs <= 1:
            outcomes = []
            for number, loaded in enumerate(selected):
                outcomes.append(_run_one(suite, root, number, loaded, impl, strict_codes))
                if progress is not None:
                    progress(outcomes[-1])
            return outcomes
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_run_one, suite, root, number, loaded, impl, strict_codes)
                       for number, loaded in enumerate(selected)]
            results = []
            for future in futures:
                results.append(future.result())
                if progress is not None:
                    progress(results[-1])
            return results


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
    if strict_codes and expect.info is not None and reported.info is not None and reported.info != frozenset(expect.info):
        missing = sorted(set(expect.info) - reported.info)
        extra = sorted(reported.info - set(expect.info))
        return Outcome(loaded, False, reported, f"info codes differ: missing {missing}, unexpected {extra}", tags=tags)
    return Outcome(loaded, True, reported, tags=tags)
