"""The Python environment a repository declares: requirements and the interpreter version.

Sources, in the order of precedence ``rra init`` applies (the first that declares requirements is
the one used; every other one is still reported, with a note saying it was not used, so the choice
is never silent):

1. ``requirements.in``, then ``requirements.txt`` (what ``rra lock`` reads first, and most often the
   set the authors actually ran); other top-level ``requirements*.txt`` files are reported only;
2. ``pyproject.toml`` ``[project] dependencies`` (PEP 621);
3. ``setup.py`` ``install_requires`` (read with :mod:`ast`, never executed), then ``setup.cfg``
   ``[options] install_requires``;
4. a conda file (``environment.yml``/``.yaml``, or the one an ``MLproject`` names): conda packages
   translated to pip requirements, plus its ``pip:`` section; what has no pip equivalent (the
   CUDA toolkit, compilers, ``mkl``, ...) is listed as untranslated;
5. ``Pipfile`` ``[packages]``;
6. a ``requirements.in``/``.txt`` one or two folders down (``code/requirements.txt``), when exactly
   one folder has one (folders of docs, tests and examples left out);
7. the README's dependency list (:mod:`.readme_deps`: ``pip install`` lines, a "Requirements"
   section's bullets);
8. the packages the code imports (:mod:`.imports`), when nothing above declares any.

Whichever source is used, a package the code imports (outside ``try/except ImportError``) that it
does not name is reported as ``imported-not-required`` and added to the drafted ``requirements.in``
(:attr:`DetectedEnvironment.missing`): the run would fail on its import, after the lock and a full
environment build, so the draft names it now, with where it is imported, for the author to keep or
drop; a declared file is never edited.

The interpreter version: ``.python-version``, then ``runtime.txt`` (``python-3.x.y``), then a
conda file's ``python=`` pin, then a version the README names ("Tested with Python 3.7.3": what
the authors ran), then the lower bound of ``requires-python`` / ``python_requires`` (the oldest
allowed, not what anyone ran; a bound below :data:`OLDEST_RUNNABLE` is noted as a decision).

Requirement strings are checked with :mod:`packaging` (a dependency already); requirement files
are read line by line here because their grammar (options, ``-r`` includes, hashes) is small and
pip-requirements-parser is not installed.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from ...io.read import bounded_toml
from .findings import Finding
from .imports import ALTERNATIVES, Imported, imported_packages
from .readme_deps import README_NAMES, readme_requirements
from .repo import RawRepo
from .yamlfile import YamlFile, read_yaml

__all__ = ["IMPORTS_SOURCE", "DetectedEnvironment", "conda_to_pip", "detect_environment", "setup_py_metadata"]

#: :attr:`DetectedEnvironment.source` when the requirements are the packages the code imports.
IMPORTS_SOURCE = "the code's imports"

CONDA_FILES = ("environment.yml", "environment.yaml", "conda.yml", "conda.yaml")

#: conda packages that are not Python packages on PyPI (system libraries, toolchains, runtimes).
_CONDA_ONLY = re.compile(r"(python|pip|cudatoolkit|cuda(-.*)?|cudnn|nccl|pytorch-cuda|pytorch-mutex|cpuonly|mkl(-.*)?|"
                         r"blas|libblas|openblas|libgcc.*|libstdcxx.*|_libgcc_mutex|_openmp_mutex|gcc.*|gxx.*|"
                         r"openssl|ca-certificates|ffmpeg|libjpeg-turbo|zlib|r-.*|nodejs|"
                         # C and system libraries a conda export lists beside the Python packages
                         # (an explicit export of a scientific stack holds dozens): pip has none of
                         # them, and the wheels of the packages that need them bundle their own.
                         r"(?!librosa|libpysal|libsass|libtmux|libcst)lib[a-z0-9_+-]*|intel-openmp|llvm-openmp|tbb|bzip2|xz|lz4-c|zstd|ncurses|readline|"
                         r"sqlite|tk|tzdata|expat|freetype|fontconfig|icu|jpeg|lcms2|lerc|openjpeg|pcre2?|"
                         r"yaml|c-ares|krb5|dbus|glib|gst-plugins-base|gstreamer|qt(-main)?|harfbuzz|"
                         r"brotli|brotli-bin|unicodedata2-bin|giflib|graphite2|fribidi|pixman|cairo|"
                         r"nspr|nss|mysql-.*|ld_impl_linux-64|gettext|gmp|mpfr|mpc|blosc|hdf5|"
                         r"tornado-bin|zeromq|unzip|wget|curl|git|make|cmake|conda.*)")
#: conda names whose PyPI name differs.
_CONDA_TO_PYPI = {"pytorch": "torch", "pytorch-cpu": "torch", "py-opencv": "opencv-python",
                  "matplotlib-base": "matplotlib", "pytables": "tables", "tensorflow-gpu": "tensorflow",
                  "pytorch-lightning": "pytorch-lightning", "brotli-python": "brotli", "brotlipy": "brotlipy",
                  "msgpack-python": "msgpack", "python-graphviz": "graphviz", "pyqt": "PyQt5",
                  "python-kaleido": "kaleido", "python-tzdata": "tzdata", "pytorch-geometric": "torch-geometric",
                  "python-flatbuffers": "flatbuffers", "typing_extensions": "typing-extensions"}


@dataclass
class DetectedEnvironment:
    """Requirements and interpreter version found, with where they came from."""

    requirements: list[str] = field(default_factory=list)
    #: The file the requirements were taken from (``None`` when no file declares any).
    source: str | None = None
    python: str | None = None
    #: conda entries with no pip equivalent, ``"name (file:line)"``.
    untranslated: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: Packages one source pins differently from the one used (reported, not resolved).
    conflicts: list[Finding] = field(default_factory=list)
    #: console_scripts of the repository's own package: name -> "module:function".
    console_scripts: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    #: Where each requirement came from, ``file:line`` (with the import, for imported ones), by
    #: requirement, when the source is the README or the imports: the draft lists them as assumed.
    origins: dict[str, str] = field(default_factory=dict)
    #: Packages the code imports that the source used does not name.
    missing: list[Imported] = field(default_factory=list)
    #: Notes for the author on values detected without certainty (distribution names assumed).
    assumed: list[str] = field(default_factory=list)


def _requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


#: ``-r FILE`` includes followed from a requirements file, at most (pip follows any depth).
_INCLUDE_DEPTH = 5
_INCLUDE = re.compile(r"(?:-r|--requirement)(?:\s+|=)(\S+)")


def _requirements_file(repo: RawRepo, name: str, _seen: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    """(requirement, line) of a requirements file; the requirements of a file it includes with
    ``-r FILE`` (a file of the repository) are given the line of that ``-r``, where the file
    brings them in."""
    text = repo.text(name) or ""
    found: list[tuple[str, int]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.split(r"(^|\s)#", raw, maxsplit=1)[0].strip()
        include = _INCLUDE.fullmatch(line)
        if include is not None and len(_seen) < _INCLUDE_DEPTH:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), include.group(1)))
            if repo.has(target) and target not in (*_seen, name):
                found.extend((r, number) for r, _ in _requirements_file(repo, target, (*_seen, name)))
            continue
        # Options (-c, -e, --index-url, hashes) are pip's, not requirements; '-e .' and
        # paths install the repository itself, which item 2 of the builder handles.
        if not line or line.startswith("-") or line.startswith((".", "/")):
            continue
        line = line.split(" --hash", 1)[0].strip().rstrip("\\").strip()
        if _requirement(line) is not None:
            found.append((line, number))
    return found


def _line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return None


def read_toml(repo: RawRepo, name: str, problems: list[Finding]) -> dict[str, Any] | None:
    """The parsed TOML file ``name``, or None when it is absent or not valid TOML within the
    bounds (:mod:`rra_tools.io.read.bounded_toml`); an invalid file is reported once in ``problems``
    (detection goes on without it) rather than raised."""
    text = repo.text(name)
    if text is None:
        return None
    try:
        return bounded_toml.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if not any(p.item == "unreadable" and p.file == name for p in problems):
            problems.append(Finding("unreadable", name, name, None, f"not valid TOML, skipped: {exc}"))
        return None


def _pyproject(repo: RawRepo, problems: list[Finding]) -> tuple[list[tuple[str, int | None]],
                                                                 tuple[str, int | None] | None]:
    text = repo.text("pyproject.toml")
    data = read_toml(repo, "pyproject.toml", problems)
    if text is None or data is None:
        return [], None
    project = data.get("project", {})
    if not isinstance(project, dict):
        return [], None
    deps = [(d, _line_of(text, f'"{d}"') or _line_of(text, f"'{d}'")) for d in project.get("dependencies", [])
            if isinstance(d, str)]
    requires = project.get("requires-python")
    python = (requires, _line_of(text, "requires-python")) if isinstance(requires, str) else None
    return deps, python


def _pyproject_scripts(repo: RawRepo, env: DetectedEnvironment, problems: list[Finding]) -> None:
    """The console scripts of ``[project.scripts]`` (PEP 621), where setup.py names none."""
    text = repo.text("pyproject.toml")
    data = read_toml(repo, "pyproject.toml", problems)
    if text is None or data is None:
        return
    try:
        scripts = data.get("project", {}).get("scripts", {})
    except AttributeError:
        return
    for name, target in (scripts.items() if isinstance(scripts, dict) else []):
        if isinstance(target, str) and target.strip() and name not in env.console_scripts:
            line = _line_of(text, f'"{target.strip()}"') or _line_of(text, name) or 0
            env.console_scripts[name] = (target.strip(), "pyproject.toml", line)


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def setup_py_metadata(source: str) -> dict[str, tuple[Any, int]]:
    """The literal keyword arguments of the ``setup(...)`` call in ``source``, with their lines;
    the file is parsed, never executed, so a value computed at run time (read from a file, ...) is
    absent rather than guessed.

    >>> setup_py_metadata("from setuptools import setup\\nsetup(name='x', install_requires=['a>=1'])")
    {'name': ('x', 2), 'install_requires': (['a>=1'], 2)}
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name == "setup":
                found: dict[str, tuple[Any, int]] = {}
                for keyword in node.keywords:
                    value = _literal(keyword.value)
                    if keyword.arg is not None and value is not None:
                        found[keyword.arg] = (value, keyword.value.lineno)
                return found
    return {}


def _console_scripts(entry_points: Any) -> list[str]:
    if isinstance(entry_points, dict):
        scripts = entry_points.get("console_scripts", [])
        return [s for s in ([scripts] if isinstance(scripts, str) else scripts) if isinstance(s, str)]
    return []


def conda_to_pip(spec: str) -> str | None:
    """The pip requirement for a conda dependency, or ``None`` when it has no pip equivalent.

    A conda ``=1.26`` means any 1.26.x (pip ``==1.26.*``); ``==`` is exact; a build string after a
    second ``=`` is dropped; a ``channel::`` prefix is dropped.

    A conda meta-package (``_pytorch_select``, ``_libgcc_mutex``: a leading underscore) and a
    version pip cannot read (``jpeg=9e``, not PEP 440) have no pip equivalent either: they are
    left out (and printed) rather than written as a requirement ``rra lock`` would refuse.

    >>> conda_to_pip("pytorch=2.1.0"), conda_to_pip("numpy=1.26"), conda_to_pip("cudatoolkit=11.8")
    ('torch==2.1.0.*', 'numpy==1.26.*', None)
    >>> conda_to_pip("jpeg=9e=h7f8727e_0"), conda_to_pip("_pytorch_select=0.2")
    (None, None)
    """
    spec = spec.split("::", 1)[-1].strip()
    match = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", spec)
    if match is None:
        return None
    name, version = match.group(1).lower(), match.group(2).strip()
    if _CONDA_ONLY.fullmatch(name) or name.startswith("_"):
        return None
    name = _CONDA_TO_PYPI.get(name, name)
    if not version:
        return name
    if version.startswith("=") and not version.startswith("=="):
        pin = version[1:].split("=", 1)[0]
        text = f"{name}=={pin if pin.endswith('*') else pin + '.*'}"
    elif version[0].isdigit():
        text = f"{name}=={version.split('=', 1)[0]}.*"
    else:
        text = f"{name}{version.split(' ', 1)[0]}"
    requirement = _requirement(text)
    return str(requirement) if requirement is not None else None


def _conda(conda: YamlFile) -> tuple[list[tuple[str, int | None]], list[str], tuple[str, int | None] | None]:
    """(pip requirements, untranslated entries, python pin) of a conda environment file."""
    data = conda.data if isinstance(conda.data, dict) else {}
    deps = data.get("dependencies")
    requirements: list[tuple[str, int | None]] = []
    untranslated: list[str] = []
    python: tuple[str, int | None] | None = None
    for index, dep in enumerate(deps if isinstance(deps, list) else []):
        line = conda.line("dependencies", index)
        if isinstance(dep, dict) and isinstance(dep.get("pip"), list):
            for pip_index, pip_dep in enumerate(dep["pip"]):
                if isinstance(pip_dep, str) and _requirement(pip_dep) is not None:
                    requirements.append((pip_dep, conda.line("dependencies", index, "pip", pip_index)))
            continue
        if not isinstance(dep, str):
            continue
        name = re.split(r"[=<>!\s]", dep.split("::", 1)[-1], maxsplit=1)[0].lower()
        if name == "python":
            pin = re.search(r"[0-9]+(\.[0-9]+){0,2}", dep)
            python = (pin.group(0), line) if pin else None
            continue
        if name == "pip":
            continue
        pip = conda_to_pip(dep)
        if pip is None:
            untranslated.append(f"{dep} ({conda.name}:{line})")
        else:
            requirements.append((pip, line))
    return requirements, untranslated, python


def _lower_bound(spec: str) -> str | None:
    match = re.search(r">=\s*([0-9]+\.[0-9]+)", spec) or re.search(r"~=\s*([0-9]+\.[0-9]+)", spec)
    return match.group(1) if match else None


def detect_environment(repo: RawRepo, problems: list[Finding], conda_file: str | None = None) -> DetectedEnvironment:
    """Requirements (from the first source in the precedence order) and the interpreter version."""
    env = DetectedEnvironment()
    sources: list[tuple[str, list[tuple[str, int | None]]]] = []
    pythons: list[tuple[str, str, int | None, str]] = []

    for name in ("requirements.in", "requirements.txt"):
        if repo.has(name):
            sources.append((name, [(r, n) for r, n in _requirements_file(repo, name)]))
    for name in repo.files:
        if "/" not in name and re.fullmatch(r"requirements[-_.].*\.txt", name) and name != "requirements.txt":
            problems_note = "not used: an extra set (development, docs, ...) rather than the run's"
            env.findings.append(Finding("requirements", f"{len(_requirements_file(repo, name))} packages", name,
                                        None, problems_note))
    deps, requires_python = _pyproject(repo, problems)
    if deps:
        sources.append(("pyproject.toml", deps))
    if requires_python is not None:
        pythons.append(("requires-python", requires_python[0], requires_python[1], "pyproject.toml"))
    setup_text = repo.text("setup.py")
    if setup_text is not None:
        meta = setup_py_metadata(setup_text)
        install = meta.get("install_requires")
        if install is not None and isinstance(install[0], list):
            sources.append(("setup.py", [(d, _line_of(setup_text, d) or install[1]) for d in install[0]
                                         if isinstance(d, str)]))
        if "python_requires" in meta and isinstance(meta["python_requires"][0], str):
            pythons.append(("python_requires", meta["python_requires"][0], meta["python_requires"][1], "setup.py"))
        entry = meta.get("entry_points")
        for script in _console_scripts(entry[0] if entry else None):
            script_name, _, target = (part.strip() for part in script.partition("="))
            if script_name and target:
                env.console_scripts[script_name] = (target, "setup.py", _line_of(setup_text, script) or 0)
    _setup_cfg(repo, sources, pythons, env)
    _pyproject_scripts(repo, env, problems)
    conda_file = conda_file or _mlproject_conda(repo, problems)
    conda_name = conda_file if conda_file and repo.has(conda_file) else repo.first(*CONDA_FILES[:2])
    conda = read_yaml(repo, conda_name, problems) if conda_name else None
    if conda is not None:
        conda_reqs, env.untranslated, conda_python = _conda(conda)
        sources.append((conda.name, conda_reqs))
        if conda_python is not None:
            pythons.append(("python", conda_python[0], conda_python[1], conda.name))
    pipfile = repo.text("Pipfile")
    if pipfile is not None:
        pipdata = read_toml(repo, "Pipfile", problems)
        packages = pipdata.get("packages", {}) if pipdata is not None else {}
        reqs = [(f"{k}{v if isinstance(v, str) and v != '*' else ''}", _line_of(pipfile, k))
                for k, v in (packages.items() if isinstance(packages, dict) else [])]
        if reqs:
            sources.append(("Pipfile", reqs))
    _subfolder_requirements(repo, sources, env)
    readme, listed = readme_requirements(repo)
    if readme is not None and listed:
        sources.append((readme, [(r, n) for r, n in listed]))
    _choose(env, sources)
    if env.source == readme and listed:
        env.origins = {r: f"{readme}:{n}" for r, n in listed}
    _imports(env, imported_packages(repo), _extras(repo, setup_text))
    _python(repo, env, pythons)
    return env


#: Folders whose requirements are another job's (building the docs, testing, an example), not
#: the experiments' run.
_NOT_THE_RUN = frozenset({"doc", "docs", "documentation", "test", "tests", "testing", "example", "examples",
                          "ci", ".github", "benchmark", "benchmarks", "website", "site"})


def _subfolder_requirements(repo: RawRepo, sources: list[tuple[str, list[tuple[str, int | None]]]],
                            env: DetectedEnvironment) -> None:
    """A ``requirements.in``/``requirements.txt`` one or two folders down (``code/requirements.txt``,
    the layout of many replications that keep the article and the code side by side) as a
    source after the root's declarations; with several such folders, none is chosen (which one
    the run uses is the author's to say), and each is reported."""
    found = [name for name in repo.files
             if name.count("/") in (1, 2) and posixpath.basename(name) in ("requirements.in", "requirements.txt")
             and not _NOT_THE_RUN & {part.lower() for part in name.split("/")[:-1]}]
    folders = sorted({posixpath.dirname(name) for name in found})
    if len(folders) == 1:
        # requirements.in before requirements.txt in the folder, as at the root.
        name = min((n for n in found), key=lambda n: not n.endswith(".in"))
        sources.append((name, [(r, n) for r, n in _requirements_file(repo, name)]))
        return
    for name in sorted(found):
        env.findings.append(Finding("requirements", f"{len(_requirements_file(repo, name))} packages", name, None,
                                    f"not used: {len(folders)} folders declare requirements "
                                    f"({', '.join(folders)}); say which the run uses"))


def _extras(repo: RawRepo, setup_text: str | None) -> dict[str, str]:
    """Canonical distribution name -> where an optional extra names it (pyproject.toml's
    ``[project.optional-dependencies]``, setup.py's ``extras_require``)."""
    found: dict[str, str] = {}
    data = read_toml(repo, "pyproject.toml", []) if repo.text("pyproject.toml") is not None else None
    project = data.get("project") if isinstance(data, dict) else None
    optional = project.get("optional-dependencies") if isinstance(project, dict) else None
    extras: list[tuple[str, Any, str]] = [(str(k), v, "pyproject.toml") for k, v in optional.items()] \
        if isinstance(optional, dict) else []
    if setup_text is not None:
        declared = setup_py_metadata(setup_text).get("extras_require")
        if declared is not None and isinstance(declared[0], dict):
            extras.extend((str(k), v, "setup.py") for k, v in declared[0].items())
    for extra, requirements, where in extras:
        for requirement in requirements if isinstance(requirements, list) else []:
            parsed = _requirement(requirement) if isinstance(requirement, str) else None
            if parsed is not None:
                found.setdefault(_canonical(parsed.name), f"the extra {extra!r} of {where}")
    return found


def _imports(env: DetectedEnvironment, imported: list[Imported], extras: dict[str, str] | None = None) -> None:
    """The imports as the source (when nothing declares requirements), else the packages the
    source used leaves out, each a finding; one an optional extra names is reported, not added
    (the package's users ask for it; a run of the experiments may not need it)."""
    required: list[Imported] = []
    for item in imported:  # one entry per distribution (mpl_toolkits and matplotlib are one)
        if not item.optional and all(_canonical(o.distribution) != _canonical(item.distribution) for o in required):
            required.append(item)
    if env.source is None:
        if required:
            env.source = IMPORTS_SOURCE
            env.requirements = [item.distribution for item in required]
            for item in required:
                env.origins[item.distribution] = f"{item.where}, import {item.module}"
                env.findings.append(Finding("requirement", item.distribution, item.file, item.line,
                                            f"imported ({item.module}); no file declares the requirements"))
        used = required
    else:
        named = {_canonical(parsed.name) for parsed in map(_requirement, env.requirements) if parsed is not None}
        for item in imported:
            provides = {_canonical(d) for d in (item.distribution, *ALTERNATIVES.get(item.distribution, ()))}
            if provides & named:
                continue
            named.add(_canonical(item.distribution))
            if item.optional:
                env.findings.append(Finding("imported-optional", item.distribution, item.file, item.line,
                                            f"inside try/except ImportError; {env.source} does not name it: not "
                                            "added"))
                continue
            extra = (extras or {}).get(_canonical(item.distribution))
            if extra is not None:
                env.findings.append(Finding("imported-optional", item.distribution, item.file, item.line,
                                            f"import {item.module}; {extra} names it, {env.source} does not: not "
                                            "added (add it if a launcher needs it)"))
                continue
            env.missing.append(item)
            env.findings.append(Finding("imported-not-required", item.distribution, item.file, item.line,
                                        f"import {item.module}; {env.source} does not name it"))
        used = env.missing
    env.assumed.extend(f"distribution {item.distribution!r} of 'import {item.module}' ({item.where}): assumed: "
                       "distribution name = import name (not in the table of names that differ)"
                       for item in used if not item.known)


def _mlproject_conda(repo: RawRepo, problems: list[Finding]) -> str | None:
    """The conda file an MLproject names (``conda_env``), relative to the repository root."""
    if not repo.has("MLproject"):
        return None
    project = read_yaml(repo, "MLproject", [])
    conda = project.data.get("conda_env") if project is not None and isinstance(project.data, dict) else None
    return conda.removeprefix("./") if isinstance(conda, str) else None


def _setup_cfg(repo: RawRepo, sources: list[tuple[str, list[tuple[str, int | None]]]],
               pythons: list[tuple[str, str, int | None, str]], env: DetectedEnvironment) -> None:
    text = repo.text("setup.cfg")
    if text is None:
        return
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    if parser.has_option("options", "install_requires"):
        lines = [d.strip() for d in parser.get("options", "install_requires").splitlines() if d.strip()]
        sources.append(("setup.cfg", [(d, _line_of(text, d)) for d in lines if _requirement(d) is not None]))
    if parser.has_option("options", "python_requires"):
        spec = parser.get("options", "python_requires").strip()
        pythons.append(("python_requires", spec, _line_of(text, "python_requires"), "setup.cfg"))
    if parser.has_option("options.entry_points", "console_scripts"):
        for script in parser.get("options.entry_points", "console_scripts").splitlines():
            script_name, _, target = (part.strip() for part in script.partition("="))
            if script_name and target and script_name not in env.console_scripts:
                env.console_scripts[script_name] = (target, "setup.cfg", _line_of(text, script.strip()) or 0)


def _choose(env: DetectedEnvironment, sources: list[tuple[str, list[tuple[str, int | None]]]]) -> None:
    used: dict[str, tuple[str, str, int | None]] = {}
    for index, (name, reqs) in enumerate(sources):
        if index == 0:
            env.source = name
            env.requirements = [r for r, _ in reqs]
            for requirement, line in reqs:
                env.findings.append(Finding("requirement", requirement, name, line))
                parsed = _requirement(requirement)
                if parsed is not None:
                    used[_canonical(parsed.name)] = (requirement, name, line)
            continue
        env.findings.append(Finding("requirements", f"{len(reqs)} packages", name, None,
                                    f"not used: {sources[0][0]} comes first in the precedence order"))
        for requirement, line in reqs:
            parsed = _requirement(requirement)
            other = used.get(_canonical(parsed.name)) if parsed is not None else None
            if parsed is not None and other is not None and _requirement(other[0]) is not None:
                mine = _requirement(other[0])
                if mine is not None and str(mine.specifier) != str(parsed.specifier) and parsed.specifier:
                    env.conflicts.append(Finding("requirement-conflict", f"{requirement!r} vs {other[0]!r}", name,
                                                 line, f"{other[1]}:{other[2]} is used"))


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


#: "Python 3.7.3", "python==3.8", "Python version: 3.9", "python3.10" (not inside a path or a
#: longer number: 'python3.7/site-packages' names a directory, not what was run).
_README_PYTHON = re.compile(r"(?i)(?<![\w/.-])python\s*(?:version)?\s*(?:==|>=|=|:|v)?\s*(3\.[0-9]{1,2}(?:\.[0-9]{1,2})?)"
                            r"(?![\w.]*/)(?![0-9])")
#: The oldest interpreter the environment tools still install: a lower bound below it is what the
#: project allows, not something to lock.
OLDEST_RUNNABLE = (3, 8)


def readme_python(repo: RawRepo) -> tuple[str, str, int] | None:
    """The first Python version a README names, with the README and its line; None when none does.

    >>> _README_PYTHON.search("Tested with Python 3.7.3 and PyTorch 1.4").group(1)
    '3.7.3'
    >>> _README_PYTHON.search("see venv/lib/python3.7/site-packages") is None
    True
    """
    for name in README_NAMES:
        text = repo.text(name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            found = _README_PYTHON.search(line)
            if found is not None:
                return found.group(1), name, number
    return None


def _python(repo: RawRepo, env: DetectedEnvironment, pythons: list[tuple[str, str, int | None, str]]) -> None:
    candidates: list[tuple[str, str, int | None, str]] = []
    text = repo.text(".python-version")
    if text is not None and re.fullmatch(r"\s*[0-9]+\.[0-9]+(\.[0-9]+)?\s*", text):
        candidates.append((text.strip(), ".python-version", 1, ""))
    text = repo.text("runtime.txt")
    match = re.fullmatch(r"\s*python-([0-9]+\.[0-9]+(\.[0-9]+)?)\s*", text or "")
    if match:
        candidates.append((match.group(1), "runtime.txt", 1, ""))
    for kind, spec, line, name in pythons:
        if kind == "python":
            candidates.append((spec, name, line, "conda pin"))
    named = readme_python(repo)
    if named is not None:
        candidates.append((named[0], named[1], named[2], "the version the README names"))
    for kind, spec, line, name in pythons:
        if kind != "python":
            bound = _lower_bound(spec)
            env.findings.append(Finding("python.requires", spec, name, line))
            if bound is not None:
                old = tuple(int(p) for p in bound.split(".")[:2]) < OLDEST_RUNNABLE
                candidates.append((bound, name, line, f"lower bound of {spec!r}: the oldest allowed, not "
                                                      "necessarily the one the authors ran"
                                   + ("; older than any interpreter the environment tools install: decide "
                                      "which to lock (environment.interpreter.version)" if old else "")))
    for index, (version, name, line, note) in enumerate(candidates):
        if index == 0:
            env.python = version
            env.findings.append(Finding("python", version, name, line, note))
        elif version.split(".")[:2] != candidates[0][0].split(".")[:2]:
            env.findings.append(Finding("python", version, name, line,
                                        f"not used: {candidates[0][1]} comes first in the precedence order"))
