"""Launchers a repository already declares: ``MLproject`` entry points, ``dvc.yaml`` stages, the
console scripts of its package; the commands of the README's shell code blocks that run a file of
the repository no declared launcher runs (:mod:`.readme_launchers`); and, when nothing declares a
launcher, the repository's scripts: ``__main__``-guarded ones with their argparse options, and
files whose module level does the work (:mod:`.scripts`). A README command and a script that run
the same file are one launcher, the README's (what the authors ran). Each launcher that runs a
Python file declares the files it visibly writes (:mod:`.outputs`).

Where two sources give one parameter different defaults (an MLproject entry point passing
``--lr {lr}`` with default 0.05 to a script whose ``--lr`` defaults to 0.1), both are recorded as
a discrepancy stub for the author to decide, never silently resolved.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from .argparse_static import Option, has_main_guard, read_options
from .fences import SHELL, fenced_lines
from .findings import Finding
from .outputs import Written, committed_header, declare_outputs, written_files
from .readme_launchers import file_run_by, readme_launchers
from .repo import RawRepo
from .scripts import first_work, imported_files
from .yamlfile import YamlFile, read_yaml

__all__ = ["DetectedLaunchers", "detect_launchers"]

_ID = re.compile(r"[^A-Za-z0-9._-]+")
_PARAM = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_MLFLOW_TYPES = {"int": "int", "float": "float", "string": "str", "str": "str", "path": "path", "uri": "str"}
#: Directories whose scripts are not experiments.
_NOT_EXPERIMENTS = re.compile(r"(^|/)(tests?|docs?|examples?|\.github|setup\.py$|conftest\.py$)")


@dataclass
class DetectedLaunchers:
    """Launcher entries (manifest data), discrepancy stubs, and what was found where."""

    launchers: list[dict[str, Any]] = field(default_factory=list)
    discrepancies: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: conda file an MLproject names (``conda_env``), for the environment's detection.
    conda_file: str | None = None
    #: Python files that define argparse options, by path: their options.
    scripts: dict[str, list[Option]] = field(default_factory=dict)
    #: Python files with a ``__main__`` guard (scripts meant to be run), in path order.
    mains: list[str] = field(default_factory=list)
    #: Python files without a guard whose module level does work and that no other file imports:
    #: the line of their first statement that does work.
    unguarded: dict[str, int] = field(default_factory=dict)
    #: What the Python file each launcher runs visibly writes, by file (see :mod:`.outputs`).
    written: dict[str, list[Written]] = field(default_factory=dict)
    assumed: list[str] = field(default_factory=list)


def _launcher_id(name: str, taken: set[str]) -> str:
    base = _ID.sub("-", name).strip("-._")[:120] or "launcher"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


def _resources() -> dict[str, Any]:
    return {"timeout_s": 3600, "expected_runtime_s": 600}


def _format_of(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    return {".json": "json", ".csv": "csv", ".tsv": "csv", ".log": "log", ".txt": "text", ".md": "text",
            ".yaml": "text", ".yml": "text"}.get(suffix, "binary" if suffix else "directory")


def _argv(command: str) -> list[str] | None:
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    return argv or None


def _script_of(argv: list[str]) -> str | None:
    """The Python file a command runs (``python train.py ...``), if it runs one."""
    if len(argv) >= 2 and re.fullmatch(r"python[0-9.]*", PurePosixPath(argv[0]).name) and argv[1].endswith(".py"):
        return argv[1].removeprefix("./")
    return None


def _compare(out: DetectedLaunchers, launcher: str, argv: list[str], params: dict[str, Any],
             where: tuple[str, dict[str, int | None]]) -> None:
    """Discrepancy stubs where a launcher's parameter default differs from the script's default
    for the option it is passed to."""
    script = _script_of(argv)
    options = {o.flag: o for o in out.scripts.get(script or "", [])}
    for flag, value in zip(argv, argv[1:]):
        match = re.fullmatch(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", value)
        option = options.get(flag)
        if match is None or option is None or not option.has_default or match.group(1) not in params:
            continue
        name = match.group(1)
        mine = params[name]["default"]
        if isinstance(mine, str) and mine.startswith("TODO"):
            continue
        same = mine == option.default or (str(mine) == str(option.default))
        if same:
            continue
        file, lines = where
        code_does = (f"{file}:{lines.get(name)} gives parameter {name!r} the default {mine!r}; "
                     f"{script}:{option.line} gives {flag} the default {option.default!r}")
        out.discrepancies.append({
            "id": _ID.sub("-", f"{launcher}-{name}-default").strip("-")[:128],
            "paper_says": f"TODO: the value of {name} the paper reports",
            "code_does": code_does,
            # The schema needs a side; the launcher passes its own value, so 'code' is what runs
            # today. The TODO rationale keeps the decision open until the author writes it.
            "follows": "code",
            "rationale": f"TODO: which default of {name} the artifact follows, and why",
            "impact": "TODO: expected effect on the results",
        })
        out.findings.append(Finding("discrepancy", f"{name}: {mine!r} vs {option.default!r}", file,
                                    lines.get(name), f"{script}:{option.line} disagrees; recorded as a "
                                                     "discrepancy stub, not resolved"))


def _seeds(out: DetectedLaunchers, launcher: dict[str, Any], where: str) -> None:
    """Seeds of a launcher from MLproject or dvc: its ``seed`` parameter's default, else it is
    marked deterministic; either way the choice is listed among the assumptions."""
    params = launcher.get("parameters", {})
    seed = params.get("seed")
    if seed is not None and seed.get("type") == "int" and isinstance(seed.get("default"), int):
        del params["seed"]
        if not params:
            launcher.pop("parameters")
        launcher["seeds"] = [max(seed["default"], 0)]
        out.assumed.append(f"launcher {launcher['id']} seeds {launcher['seeds']}: the default of its seed "
                           f"parameter ({where}); a full reproduction usually runs several")
    else:
        launcher["stochastic"] = False
        out.assumed.append(f"launcher {launcher['id']} stochastic: false: {where} passes it no seed")


def _mlproject(repo: RawRepo, out: DetectedLaunchers, taken: set[str], problems: list[Finding]) -> None:
    project = read_yaml(repo, "MLproject", problems) if repo.has("MLproject") else None
    if project is None or not isinstance(project.data, dict):
        return
    conda = project.data.get("conda_env")
    if isinstance(conda, str):
        out.conda_file = conda
        out.findings.append(project.finding("conda_env", conda, "conda_env"))
    entries = project.data.get("entry_points")
    for name, entry in (entries.items() if isinstance(entries, dict) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            continue
        argv = _argv(entry["command"])
        if argv is None:
            continue
        params: dict[str, Any] = {}
        lines: dict[str, int | None] = {}
        raw_params = entry.get("parameters")
        for pname, spec in (raw_params.items() if isinstance(raw_params, dict) else []):
            if not isinstance(pname, str) or not _PARAM.fullmatch(pname):
                continue
            kind = spec if isinstance(spec, str) else spec.get("type", "string") if isinstance(spec, dict) else "string"
            ptype = _MLFLOW_TYPES.get(str(kind), "str")
            param: dict[str, Any] = {"type": ptype}
            lines[pname] = project.line("entry_points", name, "parameters", pname)
            if isinstance(spec, dict) and "default" in spec:
                param["default"] = str(spec["default"]) if ptype in ("str", "path") else spec["default"]
                out.findings.append(project.finding("parameter", f"{name}.{pname}: {ptype} = {spec['default']!r}",
                                                    "entry_points", name, "parameters", pname))
            else:
                param["default"] = f"TODO: a value for {pname} (MLproject gives no default)"
                out.findings.append(project.finding("parameter", f"{name}.{pname}: {ptype}, no default",
                                                    "entry_points", name, "parameters", pname))
            params[pname] = param
        launcher_id = _launcher_id(str(name), taken)
        launcher: dict[str, Any] = {"id": launcher_id, "description": f"MLproject entry point {name!r}",
                                    "argv": argv}
        if params:
            launcher["parameters"] = params
        out.findings.append(project.finding("launcher", f"{launcher_id}: {entry['command']}",
                                            "entry_points", name, "command"))
        _compare(out, launcher_id, argv, params, ("MLproject", lines))
        _seeds(out, launcher, f"MLproject entry point {name!r}")
        out.launchers.append(launcher)


def _stage_command(stage: dict[str, Any]) -> tuple[str | None, bool]:
    """A stage's one command, and whether it has several (``cmd`` may be a list)."""
    cmd = stage.get("cmd")
    if isinstance(cmd, str):
        return cmd, False
    if isinstance(cmd, list):
        commands = [c for c in cmd if isinstance(c, str)]
        return (commands[0] if len(commands) == 1 else None), len(commands) != 1
    return None, False


def _stage_paths(stage: dict[str, Any], key: str) -> list[tuple[int, str]]:
    """(index, path) of a stage's ``deps``, ``outs``, ``metrics`` or ``plots`` (a path, or a
    one-key mapping from the path to its options, as ``- eval/metrics.json: {cache: false}``)."""
    items = stage.get(key)
    found: list[tuple[int, str]] = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        path = item if isinstance(item, str) else next(iter(item), None) if isinstance(item, dict) else None
        if isinstance(path, str) and path.strip():
            found.append((index, path))
    return found


def _same_or_inside(a: str, b: str) -> bool:
    """Whether path ``a`` is ``b`` or inside it, or ``b`` is inside ``a`` (a stage that reads
    ``data/prepared/train.csv`` needs the stage whose out is ``data/prepared``, and one that reads
    the directory ``data`` needs the stage writing ``data/raw.csv``)."""
    pa, pb = PurePosixPath(posixpath.normpath(a)), PurePosixPath(posixpath.normpath(b))
    return pa == pb or pb in pa.parents or pa in pb.parents


def _dvc(repo: RawRepo, out: DetectedLaunchers, taken: set[str], problems: list[Finding]) -> None:
    dvc = read_yaml(repo, "dvc.yaml", problems) if repo.has("dvc.yaml") else None
    if dvc is None or not isinstance(dvc.data, dict):
        return
    params_file = read_yaml(repo, "params.yaml", problems) if repo.has("params.yaml") else None
    stages = dvc.data.get("stages")
    drafted: list[tuple[dict[str, Any], list[str]]] = []
    # What each stage writes, by launcher id: dvc orders stages by their deps and outs, not by
    # where they are written in dvc.yaml, so every stage's outs are known before any depends_on.
    produced: list[tuple[str, str]] = []
    for name, stage in (stages.items() if isinstance(stages, dict) else []):
        if not isinstance(stage, dict):
            continue
        command, several = _stage_command(stage)
        if several:
            out.findings.append(dvc.finding("launcher", f"{name}: several commands, not drafted", "stages", name,
                                            note="an argv runs one command; split the stage by hand"))
            continue
        argv = _argv(command) if command is not None else None
        if argv is None:
            continue
        launcher_id = _launcher_id(str(name), taken)
        # depends_on is filled in (or dropped) once every stage's outs are known.
        launcher: dict[str, Any] = {"id": launcher_id, "description": f"dvc stage {name!r}", "argv": argv,
                                    "depends_on": []}
        deps = [path for _, path in _stage_paths(stage, "deps")]
        outputs: list[dict[str, Any]] = []
        for key in ("outs", "metrics", "plots"):
            for index, path in _stage_paths(stage, key):
                produced.append((path, launcher_id))
                output_id = _ID.sub("-", PurePosixPath(path).stem or "output").strip("-._") or "output"
                existing = {o["id"] for o in outputs}
                while output_id in existing:
                    output_id += "-2"
                outputs.append({"id": output_id, "path": path, "format": _format_of(path)})
                out.findings.append(dvc.finding(key.rstrip("s") if key != "metrics" else "metrics", path,
                                                "stages", name, key, index, note=f"stage {name}"))
        if outputs:
            launcher["outputs"] = outputs
        seeds: list[str] = []
        for index, param in enumerate(stage.get("params", []) if isinstance(stage.get("params"), list) else []):
            for key in ([param] if isinstance(param, str) else []):
                value, line = _param_value(params_file, key)
                out.findings.append(Finding("param", f"{name}: {key} = {value!r}" if line else f"{name}: {key}",
                                            "params.yaml" if line else "dvc.yaml",
                                            line or dvc.line("stages", name, "params", index),
                                            "" if line else "not found in params.yaml"))
                if key.rsplit(".", 1)[-1] == "seed" and line:
                    seeds.append(f"{key} = {value!r}, params.yaml:{line}")
        if deps:
            out.findings.append(dvc.finding("deps", ", ".join(deps), "stages", name, "deps", note=f"stage {name}"))
        if seeds:
            # The stage reads its seed from params.yaml: every run draws the same numbers.
            launcher["stochastic"] = False
            out.assumed.append(f"launcher {launcher_id} stochastic: false: dvc stage {name!r} reads a fixed seed "
                               f"from params.yaml ({'; '.join(seeds)}); change it there to draw another sample")
        else:
            _seeds(out, launcher, f"dvc stage {name!r}")
        drafted.append((launcher, deps))
        out.findings.append(dvc.finding("launcher", f"{launcher_id}: {command}", "stages", name, "cmd"))
    for launcher, deps in drafted:
        depends = sorted({producer for dep in deps for path, producer in produced
                          if producer != launcher["id"] and _same_or_inside(dep, path)})
        if depends:
            launcher["depends_on"] = depends
        else:
            del launcher["depends_on"]
        out.launchers.append(launcher)


def _param_value(params: YamlFile | None, key: str) -> tuple[Any, int | None]:
    if params is None:
        return None, None
    node: Any = params.data
    parts = key.split(".")
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return None, None
        node = node[part]
    return node, params.line(*parts)


#: A line that may start a module-level statement doing work: a call (a parenthesis before any
#: '=', not a def or class), a loop, a with, an if or a try at column 0. Only files with one are
#: parsed for :func:`.scripts.first_work`.
_MODULE_WORK = re.compile(r"^(?:(?!def |class |async def )[A-Za-z_][^=\n]*\(|for |while |with |if |try:|async )",
                          re.MULTILINE)


def _scripts(repo: RawRepo, out: DetectedLaunchers) -> None:
    unguarded: dict[str, int] = {}
    for name in repo.files:
        if not name.endswith(".py") or _NOT_EXPERIMENTS.search(name) or name.count("/") > 2:
            continue
        text = repo.text(name)
        if text is None:
            continue
        work = PurePosixPath(name).name != "__init__.py" and _MODULE_WORK.search(text) is not None
        if "__main__" not in text and "add_argument" not in text and "option(" not in text and not work:
            continue
        tree = repo.tree(name)
        if tree is None:
            continue
        if "__main__" in text or "add_argument" in text or "option(" in text:
            out.scripts[name] = read_options(tree, text) if "add_argument" in text or "option(" in text else []
        if has_main_guard(tree):
            out.mains.append(name)
        elif work and (first := first_work(tree)) is not None:
            unguarded[name] = first.lineno
    imported = imported_files(repo, sorted(unguarded))
    out.unguarded = {name: line for name, line in unguarded.items() if name not in imported}


def _from_options(argv: list[str], options: list[Option], file: str, out: DetectedLaunchers,
                  launcher_id: str) -> dict[str, Any]:
    """A launcher for ``argv`` plus one ``--flag {name}`` per option that has a value."""
    launcher: dict[str, Any] = {"id": launcher_id, "argv": list(argv)}
    params: dict[str, Any] = {}
    for option in options:
        if option.is_flag or option.type is None or not _PARAM.fullmatch(option.dest):
            continue
        out.findings.append(Finding("option", f"{option.flag}: {option.type}"
                                    + (f" = {option.default!r}" if option.has_default else ", no default"),
                                    file, option.line))
        if option.dest == "seed" and option.type == "int":
            launcher["argv"] += [option.flag, "{seed}"]
            launcher["seeds"] = [option.default if isinstance(option.default, int) and option.default >= 0 else 0]
            out.assumed.append(f"launcher {launcher_id} seeds {launcher['seeds']}: the default of {option.flag} "
                               f"({file}:{option.line}); a full reproduction usually runs several")
            continue
        if not option.has_default and not option.required:
            continue
        default = option.default if option.has_default and option.default is not None else \
            f"TODO: a value for {option.flag}"
        if option.type in ("str", "path") and not isinstance(default, str):
            default = str(default)
        param: dict[str, Any] = {"type": option.type, "default": default}
        if option.choices:
            param["choices"] = option.choices
        params[option.dest] = param
        launcher["argv"] += [option.flag, "{" + option.dest + "}"]
    if params:
        launcher["parameters"] = params
    if "seeds" not in launcher:
        launcher["stochastic"] = False
        out.assumed.append(f"launcher {launcher_id} stochastic: false: it has no --seed option")
    return launcher


#: A command that runs something, after any environment assignments (``CUDA_VISIBLE_DEVICES=0 python ...``).
_COMMAND = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(python[0-9.]*|bash|sh|\./|torchrun|accelerate|deepspeed|"
                      r"mlflow|dvc|make)\b")


def readme_commands(name: str, text: str, scripts: frozenset[str] = frozenset()) -> list[Finding]:
    """Commands in the README's shell code blocks that run something (not install steps):
    interpreters, runners, and the package's own console ``scripts``."""
    found: list[Finding] = []
    for index, line, where in fenced_lines(text.splitlines()):
        if where == SHELL:
            command = line.strip().removeprefix("$ ").strip()
            if _COMMAND.match(command) or command.split(" ", 1)[0] in scripts:
                found.append(Finding("readme-command", command, name, index + 1,
                                     "a command the README shows; compare it with the launchers"))
    return found


def detect_launchers(repo: RawRepo, console_scripts: dict[str, tuple[str, str, int]],
                     problems: list[Finding]) -> DetectedLaunchers:
    """Launchers from MLproject, dvc.yaml, console scripts, the README's commands that run a file
    none of those runs, and (when none of those declares any) the repository's scripts; each with
    the files its Python script visibly writes as outputs."""
    out = DetectedLaunchers()
    taken: set[str] = set()
    covered: set[str] = set()
    readme = repo.first("README.md", "README.rst", "README")
    readme_text = repo.text(readme) if readme else None
    if readme is not None and readme_text is not None:
        out.findings.extend(readme_commands(readme, readme_text, frozenset(console_scripts)))
    _scripts(repo, out)
    _mlproject(repo, out, taken, problems)
    _dvc(repo, out, taken, problems)
    for script, (target, file, line) in sorted(console_scripts.items()):
        module = target.split(":", 1)[0].strip()
        candidates = [module.replace(".", "/") + ".py", "src/" + module.replace(".", "/") + ".py"]
        path = next((c for c in candidates if c in out.scripts), None)
        options = out.scripts.get(path, []) if path else []
        if path is None:
            # A console script's module is a library module (no __main__ guard): its argparse or
            # click options are read all the same, since the entry point runs its function.
            path = next((c for c in candidates if repo.has(c)), None)
            tree = repo.tree(path) if path is not None else None
            options = read_options(tree, repo.text(path)) if tree is not None and path is not None else []
        covered.update(candidates)
        launcher = _from_options([script], options, path or file, out, _launcher_id(script, taken))
        launcher["description"] = f"console script {script} ({target})"
        out.launchers.append(launcher)
        out.findings.append(Finding("launcher", f"{launcher['id']}: {' '.join(launcher['argv'])}", file,
                                    line or None, f"console script {script} = {target}"))
    covered.update(f for launcher in out.launchers if (f := file_run_by(repo, [str(a) for a in launcher["argv"]])))
    commands = [f for f in out.findings if f.item == "readme-command"]
    from_readme, notes = readme_launchers(repo, commands, out.scripts, covered,
                                          lambda name: _launcher_id(name, taken))
    out.findings.extend(notes)
    declared = bool(out.launchers)
    for drafted in from_readme:
        out.launchers.append(drafted.launcher)
        out.findings.extend(drafted.findings)
        out.assumed.extend(drafted.assumed)
        _no_seed(out, drafted.launcher)
    if not declared:
        run = {drafted.file for drafted in from_readme}
        for script in sorted({*out.mains, *out.unguarded}):
            if script not in run:
                _script_launcher(out, script, taken)
    for launcher in out.launchers:
        runs = file_run_by(repo, [str(a) for a in launcher["argv"]])
        tree = repo.tree(runs) if runs is not None and runs.endswith(".py") else None
        if runs is None or tree is None:
            continue
        if runs not in out.written:
            out.written[runs] = written_files(tree)
            for item in out.written[runs]:
                # Columns the code makes at run time may be in the copy of the results the
                # repository holds (its header row).
                text = repo.text(item.path) if item.kind == "csv" and item.fields is None and item.path else None
                if text is not None and (header := committed_header(text)) is not None:
                    item.fields, item.fields_from = header, item.path
        out.findings.extend(declare_outputs(launcher, runs, out.written[runs]))
    return out


def _no_seed(out: DetectedLaunchers, launcher: dict[str, Any]) -> None:
    if "seeds" not in launcher:
        launcher["stochastic"] = False
        out.assumed.append(f"launcher {launcher['id']} stochastic: false: it has no --seed option")


def _script_launcher(out: DetectedLaunchers, script: str, taken: set[str]) -> None:
    """The launcher of a ``__main__``-guarded script, or of one whose module level does the work."""
    main = PurePosixPath(script)
    if main.name == "__main__.py" and len(main.parts) > 1:
        # A package's __main__ imports its package (often relatively): it runs as 'python -m
        # package', not as a file, which would fail on its first relative import.
        package = main.parent.as_posix().removeprefix("src/")
        argv, name = ["python", "-m", package.replace("/", ".")], main.parent.name
    else:
        argv, name = ["python", script], main.stem
    launcher = _from_options(argv, out.scripts.get(script, []), script, out, _launcher_id(name, taken))
    launcher["description"] = f"TODO: what {script} computes"
    out.launchers.append(launcher)
    if script in out.mains:
        out.findings.append(Finding("launcher", f"{launcher['id']}: {' '.join(launcher['argv'])}", script, 1,
                                    "a script run as __main__"))
        return
    line = out.unguarded[script]
    out.findings.append(Finding("launcher", f"{launcher['id']}: {' '.join(launcher['argv'])}", script, line,
                                "a script without a __main__ guard: its module level runs code"))
    out.assumed.append(f"launcher {launcher['id']}: {script} has no __main__ guard; taken for a script as its "
                       f"module level runs code from {script}:{line} and no file of the repository imports it")
