"""One error root: every exception of rra-tools is an RRAError, and the real ``rra`` command turns
one raised inside any command into ``error: <message>`` (and its hint) with its exit status."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import rra_tools
import rra_tools.errors
from rra_tools.cli.errors import Failure, as_failure
from rra_tools.errors import ExitStatus, RRAError
from rra_tools.oci.errors import LayoutError

from ..rra_cli import rra


def _modules() -> list[str]:
    # __main__ runs the CLI when imported; it defines nothing.
    return sorted(info.name for info in pkgutil.walk_packages(rra_tools.__path__, "rra_tools.")
                  if not info.name.endswith("__main__"))


def test_every_exception_class_derives_from_rraerror() -> None:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith("rra_tools."):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    assert len(found) > 40, sorted(found)  # the walk really reached the subpackages
    strays = sorted(name for name, cls in found.items() if not issubclass(cls, RRAError))
    assert strays == [], f"exception classes outside the RRAError root: {strays}"


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top of a module of rra_tools, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == name:
                found[f"{name}.{obj.__qualname__}"] = obj
    return found


def _layer_bases() -> dict[str, type[RRAError]]:
    """The one base of each layer's errors (a subpackage's ``errors`` module), by layer."""
    from rra_tools.agents.errors import AgentsLayerError
    from rra_tools.answers import AnswerError
    from rra_tools.bench.errors import BenchLayerError
    from rra_tools.builder.errors import BuilderLayerError
    from rra_tools.conformance.errors import ConformanceLayerError
    from rra_tools.env.errors import EnvLayerError
    from rra_tools.interop.errors import InteropLayerError
    from rra_tools.io.errors import IOLayerError
    from rra_tools.oci.errors import OCILayerError
    from rra_tools.run.errors import RunLayerError
    from rra_tools.validate.errors import ValidateLayerError

    return {"io": IOLayerError, "answers": AnswerError, "validate": ValidateLayerError, "env": EnvLayerError,
            "run": RunLayerError, "oci": OCILayerError, "agents": AgentsLayerError, "builder": BuilderLayerError,
            "conformance": ConformanceLayerError, "bench": BenchLayerError, "interop": InteropLayerError}


def test_every_exception_class_derives_from_its_layers_base() -> None:
    bases = _layer_bases()
    assert all(base.__bases__ == (RRAError,) for base in bases.values())
    # A layer base defines nothing of its own, so that no error's exit status, hint or message
    # changes by hanging below it.
    assert all(set(vars(base)) <= {"__module__", "__doc__", "__qualname__", "__firstlineno__",
                                   "__static_attributes__"}
               for name, base in bases.items() if name != "answers")
    strays = []
    for name, cls in _exception_classes().items():
        if cls is RRAError:
            continue
        layer = name.split(".")[1]
        if layer not in bases or not issubclass(cls, bases[layer]):
            strays.append(name)
    assert strays == [], f"exception classes outside their layer's base: {strays}"


_TREE_LINE = re.compile(r"^(?P<indent>(?:│   |    )*)(?:├── |└── )?(?P<name>\w+) \((?P<module>[\w.]+)(?:; also (?P<also>\w+))?\)$")


def test_the_tree_in_the_errors_docstring_is_the_real_one() -> None:
    # Drawn: (class, module) -> (parent drawn above it, the other parent it names).
    doc = rra_tools.errors.__doc__ or ""
    block = doc.split("::\n\n", 1)[1]
    lines = [line[4:] for line in block.splitlines() if line.strip()]
    drawn: dict[tuple[str, str], tuple[tuple[str, str] | None, str | None]] = {}
    stack: list[tuple[str, str]] = []
    for line in lines:
        match = _TREE_LINE.match(line)
        assert match, f"not a line of the tree: {line!r}"
        node = (match["name"], match["module"])
        depth = len(match["indent"]) // 4 + (0 if node == ("RRAError", "errors") else 1)
        del stack[depth:]
        assert node not in drawn, f"drawn twice: {node}"
        drawn[node] = (stack[-1] if stack else None, match["also"])
        stack.append(node)
    real: dict[tuple[str, str], tuple[tuple[str, str] | None, str | None]] = {}
    for cls in _exception_classes().values():
        parents = [b for b in cls.__bases__ if issubclass(b, RRAError)]
        node = (cls.__name__, cls.__module__.removeprefix("rra_tools."))
        if not parents:
            real[node] = (None, None)
            continue
        # Drawn under its layer's base when it has two parents, naming the other.
        first = next((b for b in parents if b.__name__.endswith("LayerError")), parents[0])
        others = [b.__name__ for b in parents if b is not first]
        real[node] = ((first.__name__, first.__module__.removeprefix("rra_tools.")), others[0] if others else None)
    assert sorted(set(real) - set(drawn)) == [], "classes the tree in rra_tools/errors.py does not draw"
    assert sorted(set(drawn) - set(real)) == [], "classes drawn in rra_tools/errors.py that do not exist"
    assert {k: v for k, v in drawn.items() if real[k] != v} == {}, "drawn under the wrong parent"


def test_exit_statuses_are_those_the_cli_documents() -> None:
    assert [(s.name, int(s)) for s in ExitStatus] == [("OK", 0), ("FAILED", 1), ("USAGE", 2), ("STOPPED", 3),
                                                      ("INTERRUPTED", 130)]
    assert ExitStatus.FINDINGS is ExitStatus.FAILED


def test_failure_of_an_error_with_a_code_and_hint() -> None:
    error = LayoutError("the layout has no oci-layout file", hint="is this an OCI image layout directory?")
    assert as_failure(error) == Failure("RRA801 the layout has no oci-layout file", ExitStatus.FAILED,
                                        "is this an OCI image layout directory?")
    assert as_failure(ValueError("a bug")) is None


@pytest.mark.parametrize(("args", "status", "stderr"), [
    # AlreadyExists (builder), the default status of the root: 2.
    (["init", "has-manifest"], 2, "error: has-manifest/rra.yaml already exists; nothing was written\n"),
    # InvalidReference (oci registry): a usage error.
    (["pull", "bad//ref", "-o", "out"], 2,
     "error: reference 'bad//ref' has no registry host; write HOST[:PORT]/REPOSITORY:TAG, "
     "e.g. 'localhost:5000/lab/model:v1'\n"),
    # LayoutError (an OCIError): its rule code in front, its hint after, status 1.
    (["pull", "oci-layout:empty", "-o", "out"], 1,
     "error: RRA801 the layout has no oci-layout file\nhint: is this an OCI image layout directory?\n"),
    # ArtifactError (io layer, the one loader) from 'rra results'.
    (["results", "empty"], 2, "error: directory 'empty' has no rra.yaml or rra.yml or rra.json\n"
     "hint: give the artifact directory or its manifest file\n"),
    # PackError (oci pack).
    (["pack", "empty", "-o", "layout"], 2, "error: 'empty' has no rra.yaml, rra.yml or rra.json\n"),
    # ConfigError (validate) from a subcommand's configuration.
    (["validate", "--config", "nope.toml", "has-manifest"], 2,
     "error: nope.toml: cannot read: [Errno 2] No such file or directory: 'nope.toml'\n"),
], ids=["AlreadyExists", "InvalidReference", "LayoutError", "ArtifactError", "PackError", "ConfigError"])
def test_an_rraerror_in_a_command_is_an_error_line_and_its_exit_status(
        tmp_path: Path, args: list[str], status: int, stderr: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "has-manifest").mkdir()
    (tmp_path / "has-manifest" / "rra.yaml").write_text("rra_version: '1.0'\n")
    done = rra(*args, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (status, stderr)
    assert "Traceback" not in done.stdout + done.stderr
