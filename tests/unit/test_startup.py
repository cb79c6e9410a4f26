"""`rra validate` stays fast to start: no pydantic, no format-checking grammars, no heavy layers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from rra_tools.cli.lazy import LazyGroup
from rra_tools.cli.main import COMMANDS, cli
from tests.rra_cli import rra

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from rra_tools.cli.main import main
try:
    main(["validate", "--format", "json", sys.argv[1]])
except SystemExit as exit:
    code = exit.code
import json
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_validate_imports_only_what_it_needs() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "examples" / "digits-logreg")],
                          capture_output=True, text=True, check=False)
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe["code"] == 0, proc.stdout
    loaded = set(probe["modules"])
    heavy = {"pydantic", "pydantic_core", "rfc3987_syntax", "lark", "cyclonedx", "docker", "oras", "submitit",
             "numpy", "rra_tools.model.manifest", "rra_tools.run", "rra_tools.env"}
    assert not heavy & loaded, f"rra validate imported {sorted(heavy & loaded)}"


EXPLAIN = """
import sys
from rra_tools.cli.main import main
try:
    main(["explain", "RRA401"])
except SystemExit as exit:
    code = exit.code
import json
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_explain_imports_only_the_renderer() -> None:
    # rra explain reads the one documentation file that holds the code, without the models.
    proc = subprocess.run([sys.executable, "-c", EXPLAIN], capture_output=True, text=True, check=False)
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe["code"] in (0, None), proc.stdout
    assert proc.stdout.startswith("# RRA401 — commit-not-pinned\n")
    loaded = set(probe["modules"])
    heavy = {"pydantic", "jsonschema", "rra_tools.model.manifest", "rra_tools.run", "rra_tools.env",
             "rra_tools.oci"}
    assert not heavy & loaded, f"rra explain imported {sorted(heavy & loaded)}"


RUN = """
import json, os, sys
real_exit = os._exit


def report(code):
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr, flush=True)
    real_exit(code)


os._exit = report  # rra run ends with os._exit after flushing
from rra_tools.cli.main import main
try:
    main(["run", sys.argv[1], "train", "--seed", "0", "-q"])
except SystemExit as exit:
    report(exit.code)
"""


def test_first_run_of_a_manifest_imports_neither_jsonschema_nor_threads(tmp_path: Path) -> None:
    # The first rra run of a manifest checks it (schema, then its own errors): the compiled
    # validator it has loaded for the schema answers the second check too, and nothing is hashed.
    import os
    import shutil

    art = tmp_path / "art"
    shutil.copytree(ROOT / "examples" / "digits-logreg", art)
    text = (art / "rra.yaml").read_text()
    (art / "rra.yaml").write_text(text.replace('argv: ["python", "train.py"', 'argv: ["/bin/true", "train.py"'))
    env = {**os.environ, "RRA_CACHE_DIR": str(tmp_path / "cache")}  # empty: nothing checked yet
    proc = subprocess.run([sys.executable, "-c", RUN, str(art)], capture_output=True, text=True, check=False,
                          env=env)
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe["code"] in (0, 1), proc.stderr
    assert (tmp_path / "cache" / "preflight").is_dir(), "the manifest's own checks did not run"
    loaded = set(probe["modules"])
    assert "jsonschema_rs" in loaded and "rra_tools.validate.engine" in loaded
    assert not {"jsonschema", "concurrent.futures"} & loaded, sorted({"jsonschema", "concurrent.futures"} & loaded)


GUIDE = """
import json, sys
from rra_tools.cli.main import main
try:
    main(["guide", "-o", sys.argv[2], sys.argv[1]])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_a_command_imports_only_its_own_command_module(tmp_path: Path) -> None:
    # rra guide is short: importing the modules of the other commands was a tenth of its time.
    import shutil

    art = tmp_path / "art"
    shutil.copytree(ROOT / "examples" / "digits-logreg", art)
    proc = subprocess.run([sys.executable, "-c", GUIDE, str(art), str(tmp_path / "GUIDE.md")], capture_output=True,
                          text=True, check=False)
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe["code"] in (0, None), proc.stderr
    commands = sorted(m for m in probe["modules"] if m.startswith("rra_tools.cli.") and m.endswith("_cmd"))
    assert commands == ["rra_tools.cli.guide_cmd"]


def test_every_lazy_command_loads_under_its_name() -> None:
    with click.Context(cli) as ctx:
        listed = cli.list_commands(ctx)
        assert set(COMMANDS) <= set(listed) and listed == sorted(listed)
        for name in COMMANDS:
            command = cli.get_command(ctx, name)
            assert command is not None and command.name == name


def test_a_lazy_entry_under_the_wrong_name_is_refused() -> None:
    group = LazyGroup("rra", lazy_commands={"manual": "guide_cmd:guide"})
    with click.Context(group) as ctx, pytest.raises(ValueError, match="is named 'guide', registered as 'manual'"):
        group.get_command(ctx, "manual")


def test_rra_help_lists_every_command() -> None:
    proc = rra("--help")
    assert proc.returncode == 0, proc.stderr
    listed = proc.stdout.split("Commands:\n", 1)[1]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and not line.startswith("   ")]
    assert set(COMMANDS) | {"validate", "rules", "explain", "conformance"} == set(names)
    assert names == sorted(names)


REVIEW = """
import json, sys
from rra_tools.cli.main import main
try:
    main(["review", "--no-run", "-o", sys.argv[2], sys.argv[1]])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_review_of_a_valid_manifest_imports_neither_pydantic_nor_jsonschema(tmp_path: Path) -> None:
    # The report is built as plain data (pydantic: about 0.3 s); the compiled schema validator,
    # loaded first, answers for a valid manifest (jsonschema: 57 ms against 17 ms). The second
    # review is the one probed: the first fills the checked-manifest cache, after which loading
    # the artifact no longer loads the compiled validator by itself.
    import os
    import shutil

    art = tmp_path / "art"
    shutil.copytree(ROOT / "tests" / "fixtures" / "review" / "score", art)
    env = {**os.environ, "RRA_CACHE_DIR": str(tmp_path / "cache")}
    for name in ("first", "second"):
        proc = subprocess.run([sys.executable, "-c", REVIEW, str(art), str(tmp_path / name)], capture_output=True,
                              text=True, check=False, env=env)
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe["code"] == 1, proc.stderr  # not run: the review cannot pass
    assert (tmp_path / "second" / "review.json").is_file()
    loaded = set(probe["modules"])
    assert "jsonschema_rs" in loaded
    assert not {"pydantic", "jsonschema"} & loaded, sorted({"pydantic", "jsonschema"} & loaded)


def test_writing_a_new_guide_needs_no_diff(tmp_path: Path) -> None:
    # '--output', not '-o': click looks a short option up among the long ones first, and the
    # close-match suggestion it prepares for that miss imports difflib itself.
    import shutil

    art = tmp_path / "art"
    shutil.copytree(ROOT / "examples" / "digits-logreg", art)
    probe_code = GUIDE.replace('"-o"', '"--output"')
    proc = subprocess.run([sys.executable, "-c", probe_code, str(art), str(tmp_path / "NEW.md")],
                          capture_output=True, text=True, check=False)
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe["code"] in (0, None), proc.stderr
    assert (tmp_path / "NEW.md").is_file()
    assert "difflib" not in probe["modules"]
