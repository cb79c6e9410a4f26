"""``rra validate PATH...`` without click (rra_tools/cli/main.py) says and exits exactly as click does.

Each case runs the console script (which takes the fast path for plain paths) and the same
arguments through click (:func:`rra_tools.cli.main.main`), and compares standard output,
standard error and the exit status byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rra_tools.cli.main import fast_validate_paths
from tests.rra_cli import rra_command

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "digits-logreg"
THROUGH_CLICK = "import sys; from rra_tools.cli.main import main; main(sys.argv[1:])"


def both(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[tuple[int, str, str], ...]:
    environment = {**os.environ, **(env or {})}
    environment.pop("_RRA_COMPLETE", None)
    runs = []
    for command in ([*rra_command(), *args], [sys.executable, "-c", THROUGH_CLICK, *args]):
        proc = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=environment, check=False)
        runs.append((proc.returncode, proc.stdout, proc.stderr))
    return tuple(runs)


def assert_same(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    fast, clicked = both(*args, cwd=cwd, env=env)
    assert fast == clicked
    return fast


@pytest.fixture
def artifacts(tmp_path: Path) -> dict[str, Path]:
    clean = tmp_path / "clean"
    shutil.copytree(EXAMPLE, clean)
    findings = tmp_path / "findings"
    shutil.copytree(EXAMPLE, findings)
    text = (findings / "rra.yaml").read_text()
    (findings / "rra.yaml").write_text(text.replace("id: digits-logreg", "id: Digits Logreg\nsurprise: 1", 1))
    broken = tmp_path / "broken.yaml"
    broken.write_text("rra_version: '1.0'\nid: [unclosed\n")
    bad_config = tmp_path / "bad-config"
    shutil.copytree(EXAMPLE, bad_config)
    (bad_config / ".rra.toml").write_text('select = ["NOPE999"]\n')
    return {"clean": clean, "findings": findings, "broken": broken, "bad_config": bad_config,
            "missing": tmp_path / "missing", "empty": tmp_path}


@pytest.mark.parametrize("names", [["clean"], ["findings"], ["broken"], ["missing"], ["empty"], ["bad_config"],
                                   ["clean", "findings", "missing"]])
def test_the_fast_path_reports_as_click_does(artifacts: dict[str, Path], names: list[str]) -> None:
    code, out, err = assert_same("validate", *(str(artifacts[name]) for name in names))
    assert out or err
    if names == ["clean"]:
        assert code == 0 and "1 clean" in out
    if names == ["bad_config"]:
        assert code == 2 and err.startswith("error: ")


def test_no_path_is_the_working_directory(artifacts: dict[str, Path]) -> None:
    code, out, _ = assert_same("validate", cwd=artifacts["findings"])
    assert code == 1 and "RRA" in out


def test_no_colour_requested_by_the_environment_either(artifacts: dict[str, Path]) -> None:
    assert_same("validate", str(artifacts["findings"]), env={"NO_COLOR": "1"})


def test_on_a_terminal_both_colour_alike(artifacts: dict[str, Path]) -> None:
    pty = pytest.importorskip("pty")
    outputs = []
    for command in ([*rra_command(), "validate", str(artifacts["findings"])],
                    [sys.executable, "-c", THROUGH_CLICK, "validate", str(artifacts["findings"])]):
        leader, follower = pty.openpty()
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "_RRA_COMPLETE")}
        proc = subprocess.Popen(command, stdout=follower, stderr=subprocess.PIPE, cwd=ROOT, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert proc.stderr is not None
        outputs.append((proc.wait(), b"".join(chunks), proc.stderr.read()))
        proc.stderr.close()
    assert outputs[0] == outputs[1]
    assert b"\x1b[" in outputs[0][1]


def test_what_the_fast_path_leaves_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fast_validate_paths(["validate"]) == ()
    assert fast_validate_paths(["validate", "a", "b/rra.yaml"]) == ("a", "b/rra.yaml")
    for argv in (["validate", "-h"], ["validate", "--help"], ["validate", "-f", "json", "a"], ["validate", "a", "--"],
                 ["validate", "-"], ["validate", "oci://host/repo:tag"], ["validate", "oci-layout:dir"],
                 ["validate", ""], ["rules"], ["--version"], []):
        assert fast_validate_paths(argv) is None, argv
    monkeypatch.setenv("_RRA_COMPLETE", "bash_complete")
    assert fast_validate_paths(["validate", "a"]) is None


def test_streams_click_would_replace_are_left_to_it() -> None:
    # An ASCII standard output is replaced by click with a UTF-8 writer; pytest's captures are
    # not text files at all.
    code = ("import io, sys; from rra_tools.cli.output import plain_streams; a = plain_streams(); "
            "sys.stdout = io.StringIO(); b = plain_streams(); print(a, b, file=sys.stderr)")
    for encoding, first in (("utf-8", "True"), ("ascii", "False")):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONIOENCODING": encoding})
        assert proc.stderr.split() == [first, "False"]
    assert_same("validate", str(EXAMPLE), env={"PYTHONIOENCODING": "ascii"})


def test_help_and_usage_errors_still_come_from_click() -> None:
    code, out, _ = assert_same("validate", "--help")
    assert code == 0 and out.startswith("Usage: rra validate [OPTIONS] [PATH]...")
    code, _, err = assert_same("validate", "--no-such-option", str(EXAMPLE))
    assert code == 2 and "No such option" in err


def test_the_ansi_pattern_is_clicks() -> None:
    # echo strips escapes without click exactly where click.echo does, with click's pattern.
    from click._compat import _ansi_re

    from rra_tools.cli.output import _ANSI

    assert _ANSI.pattern == _ansi_re.pattern


PROBE = """
import json, os, sys
real_exit = os._exit


def report(code):
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr, flush=True)
    real_exit(code)


os._exit = report  # the fast path ends with os._exit after flushing
sys.argv = ["rra", *sys.argv[1:]]
from rra_tools.cli.main import entry
entry()
"""


def test_the_fast_path_imports_neither_click_nor_jsonschema() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE, "validate", str(EXAMPLE)], capture_output=True, text=True,
                          check=False)
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe["code"] == 0, proc.stderr
    loaded = set(probe["modules"])
    assert "rra_tools.validate.engine" in loaded and "jsonschema_rs" in loaded
    assert not {"click", "jsonschema", "concurrent.futures"} & loaded, sorted({"click", "jsonschema"} & loaded)


# rra run ARTIFACT LAUNCHER [-q] -------------------------------------------------------------


def _run_artifact(root: Path, argv: str, broken: bool = False) -> Path:
    shutil.copytree(EXAMPLE, root)
    text = (root / "rra.yaml").read_text()
    text = text.replace('argv: ["python", "train.py", "--seed", "{seed}", "--C", "{C}", "--out", "results/seed-{seed}"]',
                        f"argv: {argv}", 1)
    if broken:
        text = text.replace("launcher: train", "launcher: trian", 1)
    (root / "rra.yaml").write_text(text)
    return root


def _normalised(run: tuple[int, str, str]) -> tuple[int, str, str]:
    import re

    def clean(text: str) -> str:
        text = re.sub(r"\d{8}T\d{6}\.\d+Z", "STAMP", text)
        return re.sub(r"\d+\.\d s\b", "N s", text)

    return run[0], clean(run[1]), clean(run[2])


@pytest.mark.parametrize(("argv", "args", "broken"), [
    ('["/bin/echo", "hello", "{seed}"]', ["train"], False),
    ('["/bin/echo", "hello", "{seed}"]', ["train", "-q"], False),
    ('["/bin/echo", "hello", "{seed}"]', ["--quiet", "train"], False),
    ('["/bin/sh", "-c", "exit 3"]', ["train"], False),
    ('["/bin/echo", "hello"]', ["nosuch"], False),
    ('["/bin/echo", "hello"]', ["train"], True),
])
def test_rra_run_without_click_says_what_click_says(tmp_path: Path, argv: str, args: list[str], broken: bool) -> None:
    environment = {k: v for k, v in os.environ.items() if k != "_RRA_COMPLETE"}
    runs = []
    for name, command in (("fast", rra_command()), ("click", [sys.executable, "-c", THROUGH_CLICK])):
        # A cache each: the first run's checked manifest (with its path) would answer the second.
        environment["RRA_CACHE_DIR"] = str(tmp_path / f"cache-{name}")
        root = _run_artifact(tmp_path / name, argv, broken)
        position = 1 if args[0] == "--quiet" else 0
        arguments = [*args[:position], str(root), *args[position:]]
        proc = subprocess.run([*command, "run", *arguments], capture_output=True, text=True, cwd=tmp_path,
                              env=environment, check=False)
        runs.append(_normalised((proc.returncode, proc.stdout, proc.stderr.replace(str(root), "ROOT"))))
    assert runs[0] == runs[1]
    assert runs[0][0] in (0, 1, 2)


def test_rra_run_arguments_the_fast_path_takes() -> None:
    from rra_tools.cli.main import fast_run_args

    assert fast_run_args(["run", "art", "train"]) == ("art", "train", False)
    assert fast_run_args(["run", "-q", "art", "train"]) == ("art", "train", True)
    assert fast_run_args(["run", "art", "--quiet", "train"]) == ("art", "train", True)
    for argv in (["run", "train"], ["run", "art", "train", "--seed", "1"], ["run", "--all", "art"], ["run"],
                 ["run", "art", "train", "extra"], ["run", "art", "-x"], ["run", "-h"], ["run", "art", "train", "-qq"],
                 ["validate", "a", "b"]):
        assert fast_run_args(argv) is None, argv


def test_rra_run_without_click_imports_no_click(tmp_path: Path) -> None:
    root = _run_artifact(tmp_path / "art", '["/bin/true"]')
    proc = subprocess.run([sys.executable, "-c", PROBE, "run", str(root), "train", "-q"], capture_output=True,
                          text=True, check=False, env={**os.environ, "RRA_CACHE_DIR": str(tmp_path / "cache")})
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe["code"] in (0, 1), proc.stderr
    loaded = set(probe["modules"])
    assert "rra_tools.run.local" in loaded and "click" not in loaded


def test_the_fast_paths_pass_the_values_click_would() -> None:
    # The fast paths call the commands with these values for every option: an option added to
    # either command, or a default changed, must be added to main._fast_command too.
    from rra_tools.cli.app import cli
    from rra_tools.cli.run_cmd import run_command

    validate = cli.commands["validate"]
    with validate.make_context("validate", ["a", "b"]) as ctx:
        assert ctx.params == {"paths": ("a", "b"), "fmt": "text", "fail_on": None, "select": None,
                              "extend_select": None, "ignore": None, "config_file": None, "color": None,
                              "output": None, "attach_report": False, "manifest_only": False}
    with run_command.make_context("run", ["art", "train", "-q"]) as ctx:
        assert ctx.params == {"args": ("art", "train"), "seed": None, "all_seeds": False, "params": (),
                              "run_all": False, "quiet": True, "executor": "local", "image": None,
                              "engine_url": None, "network": None, "env": "current", "force": False}
