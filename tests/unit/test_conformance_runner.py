"""The conformance runner: external implementations in their own process session (killed with
their children on timeout), hermetic case directories, listing, selection, parallel runs, the
'optional' class, and packaging cases driven through an external command."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from rra_tools.cli.main import cli
from rra_tools.conformance import command_impl, in_process_impl, load_suite, run_suite, select_cases, suite_path
from rra_tools.conformance.cases import CaseError

SUITE = suite_path()
CASES = load_suite(SUITE)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child of an exited parent is reaped by init; until then it is a zombie.
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(")")[-1].split()[0] == "Z")


def test_timeout_kills_the_implementation_and_its_children(tmp_path: Path) -> None:
    pids = tmp_path / "child.pid"
    script = tmp_path / "slow.py"
    woke = tmp_path / "woke"
    # The child leaves a mark if it lives to the end of its sleep: killed, not waited for.
    sleeper = f"import time; time.sleep(120); open({str(woke)!r}, 'w')"
    script.write_text(
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {sleeper!r}])\n"
        f"open({str(pids)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(120)\n")
    # 5 s: time enough, on a loaded machine, for the script to start its child and write its pid
    reported = command_impl(f"{sys.executable} {script}", timeout=5)(str(tmp_path))
    assert reported.error == "timed out after 5 s"
    child = int(pids.read_text())
    deadline = time.monotonic() + 60
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the implementation's child was still alive 60 s after the timeout"
    assert not woke.exists(), "the implementation's child was left to end its sleep"


def test_a_child_left_behind_by_an_implementation_is_killed(tmp_path: Path) -> None:
    # The implementation answers and exits, leaving a child that does not hold its output open.
    pids = tmp_path / "child.pid"
    script = tmp_path / "leaky.py"
    script.write_text(
        "import json, subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'],\n"
        "                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"open({str(pids)!r}, 'w').write(str(child.pid))\n"
        "print(json.dumps({'verdict': 'valid', 'codes': []}))\n")
    reported = command_impl(f"{sys.executable} {script}", timeout=60)(str(tmp_path))
    assert (reported.verdict, reported.error) == ("valid", None)
    child = int(pids.read_text())
    deadline = time.monotonic() + 60
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the child the implementation left behind was still alive 60 s after it answered"


def test_a_configuration_file_above_the_temporary_directory_changes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # rra validate looks for .rra.toml from the artifact upwards; one in the system's temporary
    # directory (or any directory above the runner's) must not reach the cases.
    (tmp_path / ".rra.toml").write_text('ignore = ["RRA510"]\n')
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    [case] = select_cases(CASES, ids=["launcher-timeout-below-runtime"])
    [outcome] = run_suite(SUITE, [case], command_impl(f"{sys.executable} -m rra_tools validate --format json"),
                          strict_codes=True)
    assert outcome.passed, outcome.message
    assert outcome.reported is not None and outcome.reported.codes == {"RRA510"}


def test_selection_by_id_glob_tags_and_exclusion() -> None:
    by_glob = select_cases(CASES, ids=["oci-config-*"])
    assert {c.case.id for c in by_glob} >= {"oci-config-blob-missing", "oci-config-altered"}
    assert all(c.case.id.startswith("oci-config-") for c in by_glob)
    packaging = select_cases(CASES, tags={"packaging"})
    assert packaging and all("packaging" in c.case.tags for c in packaging)
    rest = select_cases(CASES, exclude_tags={"packaging", "config"})
    assert len(rest) == len(CASES) - len(packaging) - len(select_cases(CASES, tags={"config"}))
    with pytest.raises(CaseError, match=r"no case has the id 'oci-nothing'; 'rra conformance list' shows them"):
        select_cases(CASES, ids=["oci-nothing"])


def test_list_command() -> None:
    runner = CliRunner()
    text = runner.invoke(cli, ["conformance", "list", "--id", "oci-layer-altered"])
    assert text.exit_code == 0, text.output
    assert text.output.splitlines() == [
        "oci-layer-altered  invalid RRA803            [packaging]  a layer blob altered after packing "
        "(one bit flipped) is invalid", "1 case(s)"]
    listed = runner.invoke(cli, ["conformance", "list", "-f", "json", "--tags", "packaging"])
    rows = json.loads(listed.output)
    assert {r["id"] for r in rows} == {c.case.id for c in select_cases(CASES, tags={"packaging"})}
    assert rows[0].keys() == {"id", "file", "verdict", "codes", "tags", "description"}
    missing = runner.invoke(cli, ["conformance", "list", "--id", "no-such-case"])
    assert missing.exit_code == 2 and "error: no case has the id 'no-such-case'" in missing.output


def test_parallel_run_keeps_the_order_and_the_results() -> None:
    chosen = select_cases(CASES, tags={"versioning"})
    serial = run_suite(SUITE, chosen, in_process_impl, strict_codes=True)
    parallel = run_suite(SUITE, chosen, in_process_impl, strict_codes=True, jobs=3)
    assert [(o.loaded.case.id, o.passed, o.reported) for o in parallel] == \
        [(o.loaded.case.id, o.passed, o.reported) for o in serial]
    result = CliRunner().invoke(cli, ["conformance", "run", "-j", "2", "--tags", "versioning", "--strict-codes"])
    assert result.exit_code == 0, result.output


def test_an_optional_case_that_fails_warns_and_the_run_passes(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "bases").symlink_to(SUITE / "bases")
    (tmp_path / "cases" / "x.yaml").write_text(
        "description: d\ncases:\n"
        "  - {id: strict-one, description: d, sections: [spec/02-manifest.md], tags: [optional, edge-cases],\n"
        "     base: minimal, patch: [{op: replace, path: /launchers/0/resources/timeout_s, value: 1}],\n"
        "     expect: {verdict: valid}}\n"
        "  - {id: core-one, description: d, sections: [spec/02-manifest.md], tags: [required, edge-cases],\n"
        "     base: minimal, expect: {verdict: valid}}\n")
    result = CliRunner().invoke(cli, ["conformance", "run", "--suite", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("WARN strict-one (cases/x.yaml): verdict 'invalid', expected 'valid'")
    assert result.output.rstrip().endswith(
        "1 optional case(s) failed: an interoperability recommendation, not a conformance failure")
    (tmp_path / "cases" / "x.yaml").write_text(
        (tmp_path / "cases" / "x.yaml").read_text().replace("[optional,", "[required,"))
    assert CliRunner().invoke(cli, ["conformance", "run", "--suite", str(tmp_path)]).exit_code == 1


def test_packaging_cases_through_an_external_wrapper(tmp_path: Path) -> None:
    # Another implementation as the protocol sees one: a wrapper script around 'rra validate'
    # that must take oci-layout:DIR[:REF] targets.
    wrapper = tmp_path / "impl.sh"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rra_tools validate --format json "$1"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    ids = "oci-minimal-gzip,oci-selected-by-ref-name,oci-ref-name-selects-nothing,oci-layer-altered," \
          "oci-entry-with-parent-component,oci-packed-with-findings,oci-embedded-artifact-findings"
    result = CliRunner().invoke(cli, ["conformance", "run", "--strict-codes", "-j", "2", "--id", ids,
                                      "--impl", str(wrapper)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1].split() == ["all", "7", "7", "0", "100.0%"]
    seen = tmp_path / "targets"
    recorder = tmp_path / "record.sh"
    recorder.write_text(f'#!/bin/sh\necho "$1" >> "{seen}"\nexec "{wrapper}" "$1"\n')
    recorder.chmod(0o755)
    CliRunner().invoke(cli, ["conformance", "run", "--id", "oci-selected-by-ref-name,oci-minimal-gzip",
                             "--impl", str(recorder)])
    targets = seen.read_text().split()
    assert targets[0].startswith("oci-layout:/") and targets[0].endswith("/layout")
    assert targets[1].endswith("/layout:1.0.2")


def test_a_fresh_interpreter_validates_from_several_threads_at_once(tmp_path: Path) -> None:
    # 'rra conformance run -j' (and any threaded host) validates in threads from the start: the
    # first, lazy import of jsonschema must not hand one thread a half-initialised module.
    script = tmp_path / "threads.py"
    script.write_text(
        "import sys, threading\n"
        "from rra_tools.validate.api import validate_path\n"
        "barrier, errors = threading.Barrier(8), []\n"
        "def go():\n"
        "    barrier.wait()\n"
        "    try:\n"
        "        assert validate_path(sys.argv[1]).valid\n"
        "    except Exception as exc:\n"
        "        errors.append(repr(exc))\n"
        "threads = [threading.Thread(target=go) for _ in range(8)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print(errors)\n")
    proc = subprocess.run([sys.executable, str(script), str(SUITE / "bases" / "minimal")], capture_output=True,
                          text=True, check=False)
    assert (proc.returncode, proc.stdout) == (0, "[]\n"), proc.stderr


def test_a_layout_case_that_cannot_be_built_is_a_broken_case(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "bases").symlink_to(SUITE / "bases")
    (tmp_path / "cases" / "x.yaml").write_text(
        "description: d\ncases:\n"
        "  - {id: no-such-layer, description: d, sections: [spec/05-packaging.md], tags: [packaging],\n"
        "     base: minimal, layout: {tamper: [{op: flip, target: 'layer:9'}]}, expect: {verdict: invalid}}\n"
        "  - {id: bad-patch, description: d, sections: [spec/05-packaging.md], tags: [packaging],\n"
        "     base: minimal, layout: {config_patch: [{op: remove, path: /nothing}]}, expect: {verdict: invalid}}\n")
    result = CliRunner().invoke(cli, ["conformance", "run", "--suite", str(tmp_path)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == ("FAIL no-such-layer (cases/x.yaml): broken case: cases/x.yaml: case 'no-such-layer': "
                        "tamper target 'layer:9' does not exist (the layout has 2 layers)")
    assert lines[1].startswith("FAIL bad-patch (cases/x.yaml): broken case: cases/x.yaml: case 'bad-patch': "
                               "config patch does not apply: ")
