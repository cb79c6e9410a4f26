"""A command whose optional extra is missing names the extra; never a traceback.

Each case runs the real ``rra`` with a directory first on ``PYTHONPATH`` that shadows the
extra's package by one whose import fails: either as a missing package does (ModuleNotFoundError
naming it) or as a broken install does (a bare ImportError raised inside it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "digits-logreg"
NOWHERE = "oci://127.0.0.1:9/nobody/nothing:v1"

_FAILING_IMPORT = {
    "missing": "raise ModuleNotFoundError(f'No module named {__name__!r}', name=__name__)\n",
    "broken": "raise ImportError('a dependency of this package is broken')\n",
}


def _message(module: str, extra: str) -> str:
    return (f"error: this command needs the optional extra {extra!r} ({module!r} cannot be imported); "
            f"install it with: pip install 'rra-tools[{extra}]'\n")


# (command line, modules hidden, module named, extra)
CASES = {
    "sbom": (["sbom", "{art}"], ["cyclonedx"], "cyclonedx", "env"),
    "validate-oci": (["validate", NOWHERE], ["oras", "requests"], "oras", "oci"),
    "pull": (["pull", NOWHERE, "-o", "{tmp}/pulled"], ["oras", "requests"], "oras", "oci"),
    "push": (["push", "{art}", NOWHERE], ["oras", "requests"], "oras", "oci"),
    "discover": (["discover", NOWHERE], ["oras", "requests"], "oras", "oci"),
    "run-container": (["run", "--executor", "container", "{art}", "train"], ["docker"], "docker", "container"),
    "bench-report": (["bench", "report", "{results}"], ["matplotlib"], "matplotlib", "report"),
    "bench-report-numpy": (["bench", "report", "{results}"], ["numpy"], "numpy", "report"),
    "export-ro-crate": (["export", "ro-crate", "{art}", "-o", "{tmp}/crate"], ["rocrate"], "rocrate", "export"),
}


@pytest.mark.parametrize("flavour", sorted(_FAILING_IMPORT))
@pytest.mark.parametrize("case", sorted(CASES))
def test_missing_extra_is_named(case: str, flavour: str, tmp_path: Path) -> None:
    argv, hidden, module, extra = CASES[case]
    art = tmp_path / "art"
    shutil.copytree(EXAMPLE, art)
    shim = tmp_path / "shim"
    for name in hidden:
        (shim / name).mkdir(parents=True)
        (shim / name / "__init__.py").write_text(_FAILING_IMPORT[flavour], encoding="utf-8")
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"bench_version": "1.0", "mode": "reproduce", "taskset": "t", "repeats": 1,
                                   "tasks": [], "totals": {"attempts": 0, "states": {}}}), encoding="utf-8")
    args = [a.format(art=art, tmp=tmp_path, results=results) for a in argv]
    path = os.pathsep.join(p for p in (str(shim), os.environ.get("PYTHONPATH", "")) if p)
    done = rra(*args, env={"PYTHONPATH": path}, cwd=tmp_path, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stderr) == (2, _message(module, extra)), done.stdout


def test_lock_without_uv_names_the_extra(tmp_path: Path) -> None:
    """uv may also come from PATH; with neither, the message is the same as for other extras."""
    art = tmp_path / "art"
    shutil.copytree(EXAMPLE, art)
    shim = tmp_path / "shim"
    (shim / "uv").mkdir(parents=True)
    (shim / "uv" / "__init__.py").write_text(_FAILING_IMPORT["missing"], encoding="utf-8")
    bare_path = os.pathsep.join(d for d in ("/usr/bin", "/bin") if not (Path(d) / "uv").exists())
    done = rra("lock", str(art), env={"PYTHONPATH": str(shim), "PATH": bare_path}, cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stderr) == (2, "error: this command needs the optional extra 'env' ('uv' cannot "
                                                 "be imported and there is no uv on PATH); install it with: pip "
                                                 "install 'rra-tools[env]'\n"), done.stdout
