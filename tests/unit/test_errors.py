"""One error root: every exception of rra-tools is an RRAError, and the real ``rra`` command turns
one raised inside any command into ``error: <message>`` (and its hint) with its exit status."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import rra_tools
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
