"""The dependency list a README gives: ``pip install`` lines of its shell code blocks, and the
bullet list of its "Requirements" (or "Dependencies", "Installation", "Prerequisites") section.

Authors often list what they ran only there. Each entry is checked as a requirement with
:mod:`packaging`; a bullet is taken only when it is a package name with at most a version
(``- numpy >= 1.19``, ``* scikit-learn``, ``- PyTorch 1.4`` read as ``torch==1.4``) and an
optional comment (``(for the plots)``, ``: plotting``); prose bullets ("Linux or macOS", "a GPU")
and what is not a Python package (the interpreter, CUDA, compilers) are skipped. What is found is
a source of requirements after the declared files (:mod:`.environment`), and is listed under
"assumed" when it is used: prose may be out of date.
"""

from __future__ import annotations

import re
import shlex

from packaging.requirements import InvalidRequirement, Requirement

from .fences import OUTSIDE, SHELL, SHELL_LANGS, fenced_lines
from .repo import RawRepo

__all__ = ["README_NAMES", "readme_requirements"]

#: A ``text`` block of a README often holds the install lines too (pip install, not commands to run).
_SHELL_LANGS = SHELL_LANGS | {"text"}
_PIP = re.compile(r"^(?:\$\s*|>\s*|!|%)?(?:sudo\s+)?(?:python[0-9.]*\s+-m\s+)?pip[0-9.]*\s+install\s+(.*)$")
#: pip options that take a value (the value is not a requirement).
_VALUED = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
                     "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root",
                     "--python-version", "--platform", "--only-binary", "--no-binary", "--src", "--config-settings",
                     "-C", "--trusted-host", "--progress-bar", "--upgrade-strategy", "--abi", "--implementation"})
_HEADING = re.compile(r"(?i)\b(requirements?|dependenc(y|ies)|installation|install|prerequisites?)\b")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|[0-9]+[.)])\s+(.*)$")
#: A package name, extras, then an optional version (with or without an operator), then an
#: optional comment in parentheses or after a dash or colon.
_ENTRY = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<extras>\[[A-Za-z0-9,._ -]*\])?\s*"
                    r"(?P<spec>(?:(?:==|>=|<=|~=|!=|<|>|=)\s*v?[0-9][0-9A-Za-z.*+!-]*\s*,?\s*)+|v?[0-9][0-9.]*)?\s*"
                    r"(?:\(.*\)|[-–—:].*)?")
#: Names a requirements list holds that are not pip packages.
_NOT_PACKAGES = frozenset({"python", "python3", "cuda", "cudnn", "cudatoolkit", "nvidia", "gpu", "cpu", "linux",
                           "ubuntu", "macos", "windows", "conda", "anaconda", "miniconda", "pip", "git", "docker",
                           "gcc", "g++", "cmake", "make", "java", "r", "matlab", "julia", "latex", "ram", "nccl",
                           "mpi", "openmpi", "ffmpeg", "graphviz", "bash", "node", "nodejs", "rust", "go"})
#: How README prose names packages whose distribution has another name.
_PROSE_NAMES = {"pytorch": "torch", "sklearn": "scikit-learn", "opencv": "opencv-python", "pyyaml": "PyYAML",
                "pillow": "Pillow", "tensorflow-gpu": "tensorflow", "cv2": "opencv-python"}
#: README names tried in order (for the dependency list, and for the Python version it names).
README_NAMES = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md")


def _requirement(text: str) -> str | None:
    try:
        return str(Requirement(text))
    except InvalidRequirement:
        return None


def _pip_line(command: str) -> list[str]:
    """The requirements of one ``pip install ...`` command line (options, paths and URLs left out)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return []
    found: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in ("&&", ";", "||", "|"):
            break
        if word.startswith("-"):
            skip = word in _VALUED
            continue
        if word.startswith((".", "/", "~")) or "://" in word or word.endswith((".whl", ".tar.gz", ".zip")):
            continue
        requirement = _requirement(word)
        if requirement is not None and Requirement(requirement).name.lower() not in _NOT_PACKAGES:
            found.append(requirement)
    return found


def _bullet(text: str) -> str | None:
    """The requirement one bullet of a requirements section names, or None for prose."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [numpy](https://numpy.org) -> numpy
    text = text.replace("`", "").replace("**", "").replace("__", " ").strip()
    match = _ENTRY.fullmatch(text)
    if match is None:
        return None
    name = _PROSE_NAMES.get(match.group("name").lower(), match.group("name"))
    if name.lower() in _NOT_PACKAGES:
        return None
    spec = re.sub(r"\s+", "", match.group("spec") or "").rstrip(",")
    if spec[:1] in "v0123456789" and spec:
        spec = "==" + spec.lstrip("v")  # "PyTorch 1.4": the version the authors ran
    elif spec.startswith("=") and not spec.startswith("=="):
        spec = "=" + spec  # "numpy=1.19" (conda's spelling)
    return _requirement(f"{name}{match.group('extras') or ''}{spec}")


def _headings(lines: list[str]) -> dict[int, bool]:
    """Line index of each heading (Markdown ``#`` or reStructuredText underlined) -> whether it
    opens a requirements section."""
    found: dict[int, bool] = {}
    for index, line, where in fenced_lines(lines):
        if where != OUTSIDE:
            continue
        heading = _MD_HEADING.match(line)
        if heading is not None:
            found[index] = _HEADING.search(heading.group(2)) is not None
        elif (index + 1 < len(lines) and line.strip() and _RST_UNDERLINE.match(lines[index + 1])
              and len(lines[index + 1].strip()) >= len(line.strip())):
            found[index] = _HEADING.search(line) is not None
    return found


def readme_requirements(repo: RawRepo) -> tuple[str | None, list[tuple[str, int]]]:
    """(README read, [(requirement, line)]) from the first README there is: its ``pip install``
    lines in shell code blocks and its requirements sections' bullets, in document order, each
    package once (where it is first named)."""
    name = repo.first(*README_NAMES)
    text = repo.text(name) if name is not None else None
    if name is None or text is None:
        return None, []
    lines = text.splitlines()
    headings = _headings(lines)
    found: list[tuple[str, int]] = []
    seen: set[str] = set()

    def add(requirement: str, number: int) -> None:
        key = re.sub(r"[-_.]+", "-", Requirement(requirement).name).lower()
        if key not in seen:
            seen.add(key)
            found.append((requirement, number))

    in_section = False
    for index, line, where in fenced_lines(lines, _SHELL_LANGS):
        if where != OUTSIDE:
            pip = _PIP.match(line.strip()) if where == SHELL else None
            for requirement in _pip_line(pip.group(1)) if pip is not None else []:
                add(requirement, index + 1)
            continue
        if index in headings:
            in_section = headings[index]
            continue
        bullet = _BULLET.match(line) if in_section else None
        if bullet is None:
            continue
        pip = _PIP.match(bullet.group(1).replace("`", "").strip())  # - `pip install numpy scipy`
        for requirement in _pip_line(pip.group(1)) if pip is not None else filter(None, [_bullet(bullet.group(1))]):
            add(requirement, index + 1)
    return name, found
