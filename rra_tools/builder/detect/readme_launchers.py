"""Launchers from the commands a README shows: ``python train.py --epochs 10``, ``python -m
pkg.run``, ``bash run.sh`` in its shell code blocks.

A command is drafted when it runs a file the repository holds and no declared launcher
(MLproject, dvc, console script) runs that file already. Its argv is the README's words, as the
authors ran them; the value given to an option the script declares (argparse or click) becomes a
typed parameter whose default is the README's value (``--seed`` becomes the launcher's seed), and
the script's other options follow as parameters at their own defaults (unless the README passes
an option the script does not declare), so that the command runs as the README says and its
settings can be changed; leading assignments (``CUDA_VISIBLE_DEVICES=0 python ...``) are the
launcher's ``env``. Prose may be out of date: each
drafted command is listed under "assumed", and the build's execute step shows whether it runs. A
command the manifest cannot hold as one argv (pipes, redirections, ``&&``, shell variables, a
continued line) or that runs a file the repository lacks is reported, not drafted.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .argparse_static import Option
from .findings import Finding
from .repo import RawRepo

__all__ = ["ReadmeLauncher", "file_run_by", "readme_launchers"]

_PYTHON = re.compile(r"python[0-9.]*")
_SHELLS = frozenset({"bash", "sh", "zsh"})
#: Words that need a shell, which a launcher's argv (run without one) cannot hold.
_SHELL_WORDS = frozenset({"|", "||", "&&", ";", ">", ">>", "<", "&", "2>&1", "2>", "1>", "&>", "\\"})
_PARAM = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_NUMBER = re.compile(r"-[0-9.]+(?:[eE][-+]?[0-9]+)?")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)


@dataclass
class ReadmeLauncher:
    """A launcher drafted from a README command, the file it runs, and what was said about it."""

    file: str
    launcher: dict[str, Any]
    findings: list[Finding]
    assumed: list[str]


def file_run_by(repo: RawRepo, argv: list[str]) -> str | None:
    """The repository file a command runs (``python X.py``, ``bash X.sh``, ``./X.sh``, whether or
    not the repository holds it; ``python -m a.b`` when it holds ``a/b.py`` or
    ``a/b/__main__.py``); ``None`` when it runs no file of the repository, or ``setup.py``."""
    if not argv:
        return None
    program = PurePosixPath(argv[0]).name
    if _PYTHON.fullmatch(program):
        rest = [a for a in argv[1:] if a not in ("-u", "-O", "-B")]
        if rest[:1] == ["-m"] and len(rest) > 1:
            # A module the repository does not hold is an installed one (pip, venv, a package's
            # own): it runs no file of the repository.
            module = rest[1].replace(".", "/")
            candidates = [f"{module}.py", f"{module}/__main__.py", f"src/{module}.py", f"src/{module}/__main__.py"]
            return next((c for c in candidates if repo.has(c)), None)
        script = rest[0].removeprefix("./") if rest and rest[0].endswith(".py") else None
        # 'python setup.py develop' installs the package: it is not an experiment.
        return None if script is not None and PurePosixPath(script).name == "setup.py" else script
    if program in _SHELLS and len(argv) > 1 and not argv[1].startswith("-"):
        return argv[1].removeprefix("./")
    if argv[0].startswith("./"):
        return argv[0].removeprefix("./")
    return None


def _arguments_start(argv: list[str]) -> int:
    """Where the arguments of the file a command runs start (after ``python -m module``,
    ``python FILE``, ``bash FILE``, ``./FILE``)."""
    if _PYTHON.fullmatch(PurePosixPath(argv[0]).name):
        index = 1
        while index < len(argv) and argv[index] in ("-u", "-O", "-B"):
            index += 1
        return index + 2 if argv[index:index + 1] == ["-m"] else index + 1
    return 2 if PurePosixPath(argv[0]).name in _SHELLS else 1


def _value(text: str, option: Option) -> tuple[bool, Any]:
    """The README's text as a value of the option's type; ``(False, None)`` when it is not one."""
    try:
        if option.type == "int":
            return True, int(text)
        if option.type == "float":
            return True, float(text)
    except ValueError:
        return False, None
    if option.type == "bool":
        lowered = text.lower()
        return (True, lowered == "true") if lowered in ("true", "false") else (False, None)
    return True, text


def _parameters(argv: list[str], options: list[Option], file: str, readme: str, line: int,
                launcher: dict[str, Any], findings: list[Finding]) -> list[str]:
    """``argv`` with the values of the script's declared options made placeholders, each a
    parameter (or the seed) of ``launcher`` whose default is the README's value."""
    by_flag = {o.flag: o for o in options}
    words = list(argv)
    params: dict[str, Any] = {}
    for index in range(len(words) - 1):
        option = by_flag.get(words[index])
        value = words[index + 1]
        if option is None or option.is_flag or option.type is None or not _PARAM.fullmatch(option.dest) or \
                value.startswith("-") or "{" in value or option.dest in params:
            continue
        ok, typed = _value(value, option)
        if not ok:
            continue
        declared = f"{file}:{option.line} declares {option.flag}" + (
            f" with default {option.default!r}" if option.has_default else "")
        if option.dest == "seed" and option.type == "int" and isinstance(typed, int) and typed >= 0:
            words[index + 1] = "{seed}"
            launcher["seeds"] = [typed]
            findings.append(Finding("option", f"{option.flag}: int = {typed!r}", readme, line,
                                    f"the README's seed; {declared}"))
            continue
        param: dict[str, Any] = {"type": option.type, "default": typed}
        if option.choices and typed in option.choices:
            param["choices"] = option.choices
        params[option.dest] = param
        words[index + 1] = "{" + option.dest + "}"
        findings.append(Finding("option", f"{option.flag}: {option.type} = {typed!r}", readme, line,
                                f"the README's value; {declared}"))
    # Options the README passes, as written ('--lr=0.1' too); a short or unknown one may stand for
    # a declared option, which then must not be passed a second time.
    given = {w.split("=", 1)[0] for w in argv[_arguments_start(argv):] if w.startswith("-") and not _NUMBER.fullmatch(w)}
    unknown = given - set(by_flag)
    for option in options if not unknown else []:
        # The script's other options, at their defaults (the same run), so that they can be set
        # too; not when the README passes an option the script lacks: its command is then kept as
        # it is, for the execute step to show whether it runs.
        if option.flag in given or option.is_flag or option.type is None or not _PARAM.fullmatch(option.dest) or \
                not option.has_default or option.default is None or option.dest in params:
            continue
        findings.append(Finding("option", f"{option.flag}: {option.type} = {option.default!r}", file, option.line,
                                "not passed by the README: its default"))
        if option.dest == "seed" and option.type == "int" and "seeds" not in launcher:
            words += [option.flag, "{seed}"]
            launcher["seeds"] = [option.default if isinstance(option.default, int) and option.default >= 0 else 0]
            continue
        default = str(option.default) if option.type in ("str", "path") else option.default
        params[option.dest] = {"type": option.type, "default": default, **(
            {"choices": option.choices} if option.choices else {})}
        words += [option.flag, "{" + option.dest + "}"]
    if params:
        launcher["parameters"] = params
    return words


def readme_launchers(repo: RawRepo, commands: list[Finding], options: dict[str, list[Option]],
                     covered: set[str], ids: Callable[[str], str]) -> tuple[list[ReadmeLauncher], list[Finding]]:
    """Launchers for the README ``commands`` (its ``readme-command`` findings) that run a file of
    the repository no declared launcher runs (``covered``); ``options`` are the scripts' declared
    options by file, ``ids`` makes a unique launcher id from a name. Also the findings saying why
    a command was not drafted."""
    drafted: list[ReadmeLauncher] = []
    notes: list[Finding] = []
    seen: set[tuple[str, ...]] = set()
    for command in commands:
        readme, line = command.file or "README.md", command.line or 0
        text = str(command.value)
        try:
            argv = shlex.split(text)
        except ValueError:
            continue
        # Leading assignments (CUDA_VISIBLE_DEVICES=0 python ...) are the launcher's environment.
        env: dict[str, str] = {}
        while argv and (assignment := _ASSIGNMENT.fullmatch(argv[0])) is not None:
            env[assignment.group(1)] = assignment.group(2)
            argv = argv[1:]
        file = file_run_by(repo, argv)
        if file is None or file in covered:
            continue
        where = f"{readme}:{line}"
        if text.endswith("\\") or any(w in _SHELL_WORDS or w.startswith((">", "2>")) or "$" in w or "`" in w
                                      for w in argv):
            notes.append(Finding("launcher", f"not drafted: {text}", readme, line,
                                 "the command needs a shell (a pipe, a redirection, '&&', a variable or a continued "
                                 "line): write its launcher by hand"))
            continue
        if not repo.has(file):
            notes.append(Finding("launcher", f"not drafted: {text}", readme, line,
                                 f"it runs {file}, which the repository does not hold"))
            continue
        if tuple(argv) in seen:
            continue
        seen.add(tuple(argv))
        launcher_id = ids(PurePosixPath(file).stem if PurePosixPath(file).stem != "__main__"
                          else PurePosixPath(file).parent.name)
        launcher: dict[str, Any] = {"id": launcher_id, "description": f"TODO: what {file} computes", "argv": argv}
        findings: list[Finding] = []
        launcher["argv"] = _parameters(argv, options.get(file, []), file, readme, line, launcher, findings)
        if env:
            launcher["env"] = env
        findings.insert(0, Finding("launcher", f"{launcher_id}: {' '.join(launcher['argv'])}", readme, line,
                                   f"from {where}: the README's command for {file}"))
        assumed = [f"launcher {launcher_id}: the command {where} shows for {file} (prose may be out of date: the "
                   "build's execute step shows whether it runs)"]
        if "seeds" in launcher:
            given = "{seed}" in launcher["argv"][:len(argv)]  # replaced among the README's own words
            assumed.append(f"launcher {launcher_id} seeds {launcher['seeds']}: "
                           + (f"the README's --seed ({where})" if given else f"the default of {file}'s --seed")
                           + "; a full reproduction usually runs several")
        drafted.append(ReadmeLauncher(file, launcher, findings, assumed))
    return drafted, notes
