"""Reading environment locks: PEP 751 ``pylock.toml``, pip requirements with ``--hash``, conda-lock.

Every format is read into one model, :class:`LockFile`, whose packages carry PEP 503-normalised
names. A file that cannot be read raises :class:`LockError` listing every problem found, each
with the line it is on where the format allows.

>>> parse_requirements("six>=1\\n", "req.lock")
Traceback (most recent call last):
...
rra_tools.env.locks.LockError: req.lock:1: requirement 'six>=1' is not pinned with '==' (a lock pins exact versions)
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..errors import ExitStatus
from ..io.read import bounded_toml
from ..io.read.bounded_yaml import YamlBoundsError, check_yaml
from .errors import EnvLayerError

__all__ = [
    "LOCK_FORMATS",
    "LockError",
    "LockFile",
    "LockProblem",
    "LockedFile",
    "LockedPackage",
    "detect_format",
    "parse_conda_lock",
    "parse_lock",
    "parse_pylock",
    "parse_requirements",
    "read_lock",
]

#: The formats a manifest's ``environment.lock.format`` may name.
LOCK_FORMATS = ("pylock", "requirements-hashes", "conda-lock")

#: Lock files larger than this are refused rather than read into memory.
MAX_LOCK_BYTES = 64 * 1024 * 1024

_HASH_OPTION = re.compile(r"--hash[= ]\s*([A-Za-z0-9_]+):([0-9A-Fa-f]+)")


@dataclass(frozen=True)
class LockProblem:
    """One reason a lock file cannot be used, with its line when known."""

    message: str
    line: int | None = None


class LockError(EnvLayerError):
    """A lock file that cannot be read; carries every problem found."""

    exit_status = ExitStatus.USAGE

    def __init__(self, path: str, problems: list[LockProblem]) -> None:
        self.path = path
        self.problems = problems
        super().__init__("\n".join(self._render(p) for p in problems))

    def _render(self, problem: LockProblem) -> str:
        where = f"{self.path}:{problem.line}" if problem.line else self.path
        return f"{where}: {problem.message}"


@dataclass(frozen=True)
class LockedFile:
    """One distribution file (wheel, sdist, conda package) a locked package may be installed from."""

    name: str | None
    url: str | None
    hashes: tuple[tuple[str, str], ...]  # (algorithm, lower-case hex digest)


@dataclass(frozen=True)
class LockedPackage:
    """One locked package: normalised name, exact version, marker and the files it may come from."""

    name: str
    version: str | None
    files: tuple[LockedFile, ...] = ()
    marker: str | None = None
    #: 'index' (installable by hash), 'directory', 'vcs', 'archive' or 'conda'.
    source: str = "index"
    #: For conda-lock: the package manager ('conda' or 'pip') and platform ('linux-64', ...).
    manager: str | None = None
    platform: str | None = None
    line: int | None = None
    #: Local path (directory source) or URL (vcs, archive), when the source is not an index.
    location: str | None = None
    editable: bool = False
    #: For the artifact's own package (a directory source): the digest of its tree that
    #: 'rra lock' recorded under ``[packages.tool.rra] tree-sha256``.
    tree_sha256: str | None = None

    @property
    def hashes(self) -> tuple[tuple[str, str], ...]:
        """Every (algorithm, digest) over all files, without repeats, in file order."""
        return tuple(dict.fromkeys(h for f in self.files for h in f.hashes))


@dataclass(frozen=True)
class LockFile:
    """A lock file read into the common model."""

    path: str
    format: str
    packages: tuple[LockedPackage, ...]
    requires_python: str | None = None
    environments: tuple[str, ...] = field(default_factory=tuple)

    def by_name(self) -> dict[str, list[LockedPackage]]:
        """Packages grouped by normalised name (a name may be locked once per marker or platform)."""
        groups: dict[str, list[LockedPackage]] = {}
        for package in self.packages:
            groups.setdefault(package.name, []).append(package)
        return groups


def detect_format(path: Path) -> str:
    """Guess a lock's format from its file name: ``pylock*.toml``, ``*conda-lock*.y*ml``, else requirements."""
    name = path.name.lower()
    if name.endswith(".toml"):
        return "pylock"
    if name.endswith((".yml", ".yaml")):
        return "conda-lock"
    return "requirements-hashes"


def read_lock(path: Path, fmt: str | None = None, display: str | None = None) -> LockFile:
    """Read the lock file at ``path`` in format ``fmt`` (guessed from the name when None)."""
    shown = display or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_LOCK_BYTES:
            raise LockError(shown, [LockProblem(f"file is {size} bytes; the limit is {MAX_LOCK_BYTES}")])
        raw = path.read_bytes()
    except OSError as exc:
        raise LockError(shown, [LockProblem(f"cannot read the lock file: {exc.strerror or exc}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LockError(shown, [LockProblem(f"not UTF-8 (byte {exc.start})", _line_of_offset(raw, exc.start))]) from None
    return parse_lock(text, fmt or detect_format(path), shown)


def parse_lock(text: str, fmt: str, path: str = "<lock>") -> LockFile:
    """Parse lock text in one of :data:`LOCK_FORMATS`."""
    if fmt == "pylock":
        return parse_pylock(text, path)
    if fmt == "requirements-hashes":
        return parse_requirements(text, path)
    if fmt == "conda-lock":
        return parse_conda_lock(text, path)
    raise LockError(path, [LockProblem(f"unknown lock format {fmt!r}; expected one of {', '.join(LOCK_FORMATS)}")])


# -- pip requirements with --hash -------------------------------------------------------------


def parse_requirements(text: str, path: str = "<lock>") -> LockFile:
    """Parse a pip requirements file where every requirement is ``name==version`` with ``--hash``."""
    problems: list[LockProblem] = []
    packages: list[LockedPackage] = []
    for line_no, logical in _logical_lines(text):
        body = _strip_comment(logical).strip()
        if not body:
            continue
        if body.startswith("-"):
            option = body.split()[0].split("=")[0]
            if option in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable"):
                problems.append(LockProblem(f"option {option!r} is not allowed in a lock: every package "
                                            "must be listed with its hashes", line_no))
            # Global options (--index-url, --no-binary, ...) do not change what is pinned.
            continue
        hashes = tuple((alg.lower(), digest.lower()) for alg, digest in _HASH_OPTION.findall(body))
        spec = _HASH_OPTION.sub("", body).strip()
        if " --" in f" {spec}":
            spec = spec.split(" --")[0].strip()
        try:
            requirement = Requirement(spec)
        except InvalidRequirement as exc:
            problems.append(LockProblem(f"invalid requirement {spec!r}: {str(exc).splitlines()[0]}", line_no))
            continue
        pins = [s for s in requirement.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if requirement.url:
            problems.append(LockProblem(f"requirement {spec!r} is a direct URL; a lock pins index releases", line_no))
            continue
        if len(pins) != 1 or len(requirement.specifier) != 1:
            problems.append(LockProblem(f"requirement {spec!r} is not pinned with '==' (a lock pins exact versions)",
                                        line_no))
            continue
        if not hashes:
            problems.append(LockProblem(f"requirement {spec!r} has no --hash", line_no))
            continue
        packages.append(LockedPackage(
            name=canonicalize_name(requirement.name),
            version=pins[0].version,
            files=(LockedFile(name=None, url=None, hashes=hashes),),
            marker=str(requirement.marker) if requirement.marker else None,
            line=line_no,
        ))
    if problems:
        raise LockError(path, problems)
    return LockFile(path=path, format="requirements-hashes", packages=tuple(packages))


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations; each logical line keeps the number of its first physical line."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, physical in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        stripped = physical.rstrip()
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(physical)
        out.append((start, " ".join(pending)))
        pending = []
    if pending:
        out.append((start, " ".join(pending)))
    return out


def _strip_comment(line: str) -> str:
    # pip: '#' starts a comment at the start of a line or after whitespace.
    match = re.search(r"(^|\s)#", line)
    return line[: match.start()] if match else line


# -- PEP 751 pylock.toml ----------------------------------------------------------------------


def parse_pylock(text: str, path: str = "<lock>") -> LockFile:
    """Parse a PEP 751 ``pylock.toml`` (lock-version 1.x).

    Why not ``packaging.pylock`` (packaging >= 26; benchmarks/bench_libraries.py, 2026-12-05): it
    reads a 500-package lock in the same time (18.4 ms against 17.9 ms) but stops at the first
    problem and names it by key path, with no line; on a lock with 3 errors this reader reports
    all 3, each with its line, which is what ``rra lock`` and ``rra env check`` print. It also
    reads ``[packages.tool.rra]`` (the tree digest of a local package), which is ours."""
    try:
        data = bounded_toml.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's TOMLDecodeError has only the text: "... (at line L, column C)".
        found = re.search(r"\(at line (\d+), column \d+\)$", str(exc))
        line = int(found.group(1)) if found else None
        message = str(exc)[: found.start()].rstrip() if found else str(exc)
        raise LockError(path, [LockProblem(f"invalid TOML: {message}", line)]) from None
    problems: list[LockProblem] = []
    version = data.get("lock-version")
    if not isinstance(version, str):
        problems.append(LockProblem("missing 'lock-version' (PEP 751 requires it, e.g. \"1.0\")", 1))
    elif version.split(".")[0] != "1":
        problems.append(LockProblem(f"unsupported lock-version {version!r}; this tool reads 1.x", _find_line(text, "lock-version")))
    headers = [i for i, line in enumerate(text.splitlines(), start=1) if line.strip() == "[[packages]]"]
    raw_packages = data.get("packages", [])
    if not isinstance(raw_packages, list):
        problems.append(LockProblem("'packages' must be an array of tables", _find_line(text, "packages")))
        raw_packages = []
    packages: list[LockedPackage] = []
    for index, entry in enumerate(raw_packages):
        line = headers[index] if index < len(headers) else None
        if not isinstance(entry, dict):
            problems.append(LockProblem(f"packages[{index}] is not a table", line))
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            problems.append(LockProblem(f"packages[{index}] has no 'name'", line))
            continue
        pkg_version = entry.get("version")
        if pkg_version is not None and not isinstance(pkg_version, str):
            problems.append(LockProblem(f"'version' of {name!r} must be a string, got {pkg_version!r}", line))
            continue
        files: list[LockedFile] = []
        source = "index"
        location: str | None = None
        editable = False
        for wheel in entry.get("wheels", []) or []:
            files.append(_pylock_file(wheel, name, "wheel", line, problems))
        if "sdist" in entry:
            files.append(_pylock_file(entry["sdist"], name, "sdist", line, problems))
        if isinstance(entry.get("directory"), dict):
            source, location = "directory", str(entry["directory"].get("path", ""))
            editable = bool(entry["directory"].get("editable", False))
        elif isinstance(entry.get("vcs"), dict):
            source, location = "vcs", str(entry["vcs"].get("url") or entry["vcs"].get("path") or "")
        elif isinstance(entry.get("archive"), dict):
            source = "archive"
            location = str(entry["archive"].get("url") or entry["archive"].get("path") or "")
            files.append(_pylock_file(entry["archive"], name, "archive", line, problems))
        elif not files:
            problems.append(LockProblem(f"package {name!r} has no wheels, sdist, archive, directory or vcs source",
                                        line))
        marker = entry.get("marker")
        tool = entry.get("tool")
        rra_tool = tool.get("rra") if isinstance(tool, dict) else None
        tree = rra_tool.get("tree-sha256") if isinstance(rra_tool, dict) else None
        if tree is not None and (not isinstance(tree, str) or not re.fullmatch(r"[0-9a-f]{64}", tree)):
            problems.append(LockProblem(f"[packages.tool.rra] tree-sha256 of {name!r} is not 64 lower-case hex "
                                        "digits", line))
            continue
        packages.append(LockedPackage(
            name=canonicalize_name(name), version=pkg_version, files=tuple(files),
            marker=marker if isinstance(marker, str) else None, source=source, line=line,
            location=location, editable=editable, tree_sha256=tree,
        ))
    if problems:
        raise LockError(path, problems)
    environments = data.get("environments", [])
    return LockFile(
        path=path, format="pylock", packages=tuple(packages),
        requires_python=data.get("requires-python") if isinstance(data.get("requires-python"), str) else None,
        environments=tuple(e for e in environments if isinstance(e, str)) if isinstance(environments, list) else (),
    )


def _pylock_file(entry: Any, package: str, kind: str, line: int | None, problems: list[LockProblem]) -> LockedFile:
    if not isinstance(entry, dict):
        problems.append(LockProblem(f"{kind} of {package!r} is not a table", line))
        return LockedFile(None, None, ())
    hashes = entry.get("hashes")
    if not isinstance(hashes, dict) or not hashes:
        problems.append(LockProblem(f"{kind} {entry.get('name') or entry.get('url') or ''!s} of {package!r} "
                                    "has no 'hashes'".replace("  ", " "), line))
        hashes = {}
    url = entry.get("url") if isinstance(entry.get("url"), str) else None
    name = entry.get("name") if isinstance(entry.get("name"), str) else None
    if name is None and url:
        name = url.rsplit("/", 1)[-1] or None
    return LockedFile(name=name, url=url, hashes=tuple((str(a).lower(), str(d).lower()) for a, d in hashes.items()))


def _find_line(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(key):
            return number
    return None


def _line_of_offset(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


# -- conda-lock -------------------------------------------------------------------------------


def parse_conda_lock(text: str, path: str = "<lock>") -> LockFile:
    """Parse a conda-lock unified lock file (``conda-lock.yml``, version 1): the ``package:`` list."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="rt")
    try:
        # Bounded first (aliases, depth, size): ruamel's round-trip reader, kept for its line
        # numbers, has no bounds of its own.
        check_yaml(text, path)
        data = yaml.load(text)
    except YamlBoundsError as exc:
        raise LockError(path, [LockProblem(f"invalid YAML: {exc.reason}", exc.line)]) from None
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise LockError(path, [LockProblem(f"invalid YAML: {getattr(exc, 'problem', None) or exc}",
                                           mark.line + 1 if mark is not None else None)]) from None
    if not isinstance(data, dict) or not isinstance(data.get("package"), list):
        raise LockError(path, [LockProblem("not a conda-lock file: no 'package:' list", 1)])
    problems: list[LockProblem] = []
    packages: list[LockedPackage] = []
    for index, entry in enumerate(data["package"]):
        line = _rt_line(data["package"], index)
        if not isinstance(entry, dict):
            problems.append(LockProblem(f"package[{index}] is not a mapping", line))
            continue
        name, version = entry.get("name"), entry.get("version")
        if not isinstance(name, str) or not name or version is None:
            problems.append(LockProblem(f"package[{index}] needs 'name' and 'version'", line))
            continue
        hashes = entry.get("hash")
        if not isinstance(hashes, dict) or not hashes:
            problems.append(LockProblem(f"package {name!r} has no 'hash'", line))
            hashes = {}
        url = entry.get("url") if isinstance(entry.get("url"), str) else None
        manager = str(entry.get("manager", "conda"))
        packages.append(LockedPackage(
            name=canonicalize_name(name), version=str(version),
            files=(LockedFile(name=url.rsplit("/", 1)[-1] if url else None, url=url,
                              hashes=tuple((str(a).lower(), str(d).lower()) for a, d in hashes.items())),),
            source="index" if manager == "pip" else "conda", manager=manager,
            platform=str(entry["platform"]) if entry.get("platform") is not None else None, line=line,
        ))
    if problems:
        raise LockError(path, problems)
    return LockFile(path=path, format="conda-lock", packages=tuple(packages))


def _rt_line(sequence: Any, index: int) -> int | None:
    try:
        return int(sequence.lc.item(index)[0]) + 1
    except (AttributeError, KeyError, IndexError, TypeError):
        return None
