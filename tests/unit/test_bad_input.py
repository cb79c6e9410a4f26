"""Hostile and broken input to ``rra validate``: every case ends in one clear, located diagnostic,
the documented exit code (1 for findings, 2 for input that cannot be opened) and no traceback.

A few cases run the real CLI in a subprocess (to bound its CPU time, or because a FIFO could hang
the test process); the rest use click's CliRunner.
"""

from __future__ import annotations

import json
import shutil
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rra_tools.cli.main import cli
from rra_tools.io.limits import MAX_DEPTH, MAX_MANIFEST_BYTES, MAX_NODES

VALID = """\
rra_version: "1.0"
id: demo
title: Demo artifact
paper:
  title: A paper
  authors:
    - name: A. Author
code:
  license: MIT
  upstream:
    url: https://github.com/example/demo.git
    commit: 3f786850e387550fdab836ed7e6dc881de23001b
environment:
  interpreter:
    version: "3.11"
launchers:
  - id: train
    argv: [python, train.py, --seed, "{seed}"]
    seeds: [0, 1, 2, 3, 4]
    resources:
      timeout_s: 600
      expected_runtime_s: 60
"""

# CPU seconds (not wall seconds) one ``rra validate`` of a hostile input may take: the quiet
# figure is 0.15-0.3 s, interpreter start-up included, so a bound of more than 10 times that
# only trips on a real blow-up, however loaded the machine is.
CPU_BOUND_S = 5.0


# ---------------------------------------------------------------------------------------------
# Helpers


def _cap_cpu() -> None:
    """In the child: a runaway is stopped (SIGXCPU) just past the largest bound, not left to spin."""
    limit = int(2 * CPU_BOUND_S) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))


def run_cli(*args: str, stdin: bytes | None = None, timeout: float = 120) -> tuple[int, str, float]:
    """Run ``python -m rra_tools`` in a subprocess: (exit code, stdout + stderr, CPU seconds).

    The bound on hostile input is on the CPU time the child spent (user + system, from
    ``getrusage(RUSAGE_CHILDREN)``), which a loaded machine does not inflate the way it inflates
    wall time; ``RLIMIT_CPU`` stops a runaway child, and ``timeout`` only guards against a hang (a
    blocked process spends no CPU).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run([sys.executable, "-m", "rra_tools", *args], input=stdin, capture_output=True,
                              timeout=timeout, preexec_fn=_cap_cpu)
    except subprocess.TimeoutExpired:
        pytest.fail(f"rra {' '.join(args)} did not return within {timeout:g} s: it hung")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    output = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in output, output[-3000:]
    return proc.returncode, output, cpu


def invoke(*args: str, stdin: bytes | None = None) -> tuple[int, str]:
    """Run the CLI in-process with CliRunner: (exit code, output)."""
    result = CliRunner().invoke(cli, list(args), input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output, result.output[-3000:]
    return result.exit_code, result.output


def diagnostics(*args: str) -> tuple[int, list[dict[str, Any]]]:
    """Exit code and the diagnostics of the single input, from ``--format json``."""
    code, output = invoke("validate", "--format", "json", *args)
    report = json.loads(output)
    assert len(report["results"]) == 1
    return code, report["results"][0]["diagnostics"]


def only(diags: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(diags) == 1, [(d["code"], d["message"]) for d in diags]
    return diags[0]


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def test_the_valid_baseline_is_clean(tmp_path: Path) -> None:
    # Sanity check of the fixture the other cases break.
    code, diags = diagnostics(str(write(tmp_path / "rra.yaml", VALID)))
    assert code == 0
    assert all(d["severity"] != "error" for d in diags)


# ---------------------------------------------------------------------------------------------
# Malformed YAML and duplicate keys


def test_malformed_yaml_is_one_located_error(tmp_path: Path) -> None:
    path = write(tmp_path / "rra.yaml", 'rra_version: "1.0"\nid: demo\nlaunchers: [a,\n  b: }\n')
    code, diags = diagnostics(str(path))
    assert code == 1
    d = only(diags)
    assert (d["code"], d["severity"], d["line"], d["column"]) == ("RRA002", "error", 4, 6)
    assert d["message"].startswith("YAML syntax error")
    code, text = invoke("validate", str(path))
    assert code == 1
    assert f"{path}:4:6: error[RRA002] YAML syntax error" in text


@pytest.mark.parametrize("content, line, column", [
    ("a:\n\tb: 1\n", 2, 1),                     # a tab used for indentation
    ("a: 'unterminated\nb: 2\n", 1, 4),          # quote never closed: reported where it opens
    ("a: b: c\n", 1, 5),                         # ': ' inside a plain value
    ("- a\nb: 1\n", 2, 1),                       # sequence then mapping at the same level
    ('{"a": 1,, "b": 2}\n', 1, 9),               # broken JSON falls back to the YAML reader
])
def test_syntax_errors_are_located(tmp_path: Path, content: str, line: int, column: int) -> None:
    code, diags = diagnostics(str(write(tmp_path / "rra.yaml", content)))
    assert code == 1
    d = only(diags)
    assert (d["code"], d["line"], d["column"]) == ("RRA002", line, column)


def test_error_at_end_of_input_is_located_inside_the_file(tmp_path: Path) -> None:
    # No final newline: the last line is line 2; there is no line 3 to point at.
    path = write(tmp_path / "rra.yaml", 'rra_version: "1.0"\nid: [a, b')
    code, diags = diagnostics(str(path))
    assert code == 1
    d = only(diags)
    assert d["code"] == "RRA002"
    assert d["line"] == 2 and 1 <= d["column"] <= len("id: [a, b") + 1, d


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"], ids=["LS", "PS", "NEL"])
@pytest.mark.parametrize("where", ["string", "comment"])
def test_unicode_line_separators_do_not_shift_positions(tmp_path: Path, char: str, where: str) -> None:
    """YAML 1.2 breaks lines at LF and CR only; LS, PS and NEL are ordinary characters.

    A finding after such a character must be reported on the same line as when an ordinary
    letter stands in its place (editors, the text reporter and SARIF all count LF/CR lines).
    """
    def manifest(c: str) -> str:
        if where == "string":
            return VALID.replace("title: Demo artifact", f'title: "Demo{c}artifact"').replace("id: demo", "id: [1]")
        return VALID.replace("id: demo", f"# note{c}more\nid: [1]")

    _, reference = diagnostics(str(write(tmp_path / "plain.yaml", manifest("z"))))
    _, shifted = diagnostics(str(write(tmp_path / "rra.yaml", manifest(char))))
    expected = [(d["code"], d.get("line"), d.get("column")) for d in reference]
    assert ("RRA112", 2 if where == "string" else 3) in [(code, line) for code, line, _ in expected]
    assert [(d["code"], d.get("line"), d.get("column")) for d in shifted] == expected


def test_duplicate_key_is_located_at_the_second_key(tmp_path: Path) -> None:
    text = VALID + "title: Another title\n"
    path = write(tmp_path / "rra.yaml", text)
    line = text.count("\n")  # the appended line
    code, diags = diagnostics(str(path))
    assert code == 1
    d = only([d for d in diags if d["code"] == "RRA005"])
    assert (d["line"], d["column"]) == (line, 1)
    assert "'title'" in d["message"] and "first at line 3" in d["message"]
    assert not [d for d in diags if d["severity"] == "error" and d["code"] != "RRA005"]
    code, out = invoke("validate", str(path))
    assert f"{path}:{line}:1: error[RRA005]" in out


def test_nested_duplicate_key_in_a_list_item(tmp_path: Path) -> None:
    text = VALID.replace("    seeds: [0, 1, 2, 3, 4]\n", "    seeds: [0, 1, 2, 3, 4]\n    seeds: [7]\n")
    code, diags = diagnostics(str(write(tmp_path / "rra.yaml", text)))
    assert code == 1
    d = only([d for d in diags if d["code"] == "RRA005"])
    assert (d["line"], d["column"]) == (20, 5)


def test_json_duplicate_key_is_located(tmp_path: Path) -> None:
    path = write(tmp_path / "rra.json", '{"rra_version": "1.0",\n "id": "a",\n "id": "b"}\n')
    code, diags = diagnostics(str(path))
    assert code == 1
    d = only([d for d in diags if d["code"] == "RRA005"])
    assert (d["line"], d["column"]) == (3, 2)


RICH = VALID.replace(
    "    commit: 3f786850e387550fdab836ed7e6dc881de23001b\n",
    "    commit: 3f786850e387550fdab836ed7e6dc881de23001b\n  patches:\n    - {path: p/1.patch, sha256: " + "a" * 64 + "}\n",
) + """\
    outputs:
      - {id: metrics, path: out/m.json, format: json}
claims:
  - id: acc
    paper_location: {table: "1"}
    launcher: train
    metric: {name: accuracy, unit: "%", direction: higher}
    extract: {output: metrics, json_pointer: /acc}
    reported: {value: 96.5, precision: 1}
    reference:
      observations:
        - {value: 96.2, seed: 0, fingerprint: {hardware: x86_64, software: cpython}}
        - {value: 96.5, seed: 1, fingerprint: {hardware: x86_64, software: cpython}}
        - {value: 96.8, seed: 2, fingerprint: {hardware: x86_64, software: cpython}}
        - {value: 96.4, seed: 3, fingerprint: {hardware: x86_64, software: cpython}}
        - {value: 96.6, seed: 4, fingerprint: {hardware: x86_64, software: cpython}}
discrepancies:
  - {id: lr, paper_says: a, code_does: b, follows: code, rationale: r, impact: i, claims: [acc]}
"""


@pytest.mark.parametrize("old, new, code", [
    ("claims: [acc]", "claims: 1", "RRA112"),                       # discrepancies[].claims not a list
    ("    launcher: train", "    launcher: [train]", "RRA112"),     # claims[].launcher not an id
    ("  - id: acc", "  - id: {x: 1}", "RRA112"),                    # claims[].id not an id
    ("{path: p/1.patch,", "{path: {x: 1},", "RRA112"),              # code.patches[].path not a path
    ("{value: 96.2,", "{value: 1.0e+200,", None),                   # schema-valid, variance overflows
], ids=["discrepancy-claims-int", "claim-launcher-list", "claim-id-map", "patch-path-map", "huge-observation"])
def test_semantic_rules_survive_bad_values(tmp_path: Path, old: str, new: str, code: str | None) -> None:
    assert old in RICH
    path = write(tmp_path / "rra.yaml", RICH.replace(old, new))
    rich_files(tmp_path)
    status, out = invoke("validate", str(path))  # asserts no traceback
    assert status in (0, 1), out[-2000:]
    if code is not None:
        assert f"error[{code}]" in out


def rich_files(root: Path) -> None:
    """The files RICH refers to, and a successful run record (so the level rules read metrics)."""
    (root / "p").mkdir()
    # A well-formed diff (RRA216 reads it); its digest is not the one declared (RRA304).
    (root / "p" / "1.patch").write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    (root / "runs").mkdir()
    (root / "runs" / "train-0.json").write_text(json.dumps({
        "launcher": "train", "seed": 0, "exit_status": 0, "status": "completed", "metrics": {"acc": 96.5}}))


def test_rich_baseline_has_no_unexpected_errors(tmp_path: Path) -> None:
    rich_files(tmp_path)
    _, diags = diagnostics(str(write(tmp_path / "rra.yaml", RICH)))
    # Only the patch digest (the fixture's patch is not the one declared) is an error.
    assert {d["code"] for d in diags if d["severity"] == "error"} <= {"RRA304"}, diags


# ---------------------------------------------------------------------------------------------
# Bounds: alias expansion, nesting, size


def billion_laughs() -> str:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 10)}]")
    return "\n".join(lines) + "\n"  # 10**9 values once expanded


def test_billion_laughs_is_refused_fast(tmp_path: Path) -> None:
    path = write(tmp_path / "rra.yaml", billion_laughs())
    code, out, cpu = run_cli("validate", "--format", "json", str(path))
    assert cpu < CPU_BOUND_S, f"took {cpu:.1f} s of CPU"
    assert code == 1
    d = only(json.loads(out)["results"][0]["diagnostics"])
    assert d["code"] == "RRA006" and "aliases" in d["message"]
    assert 1 <= d["line"] <= 9 and d["column"] >= 1
    code, out, cpu = run_cli("validate", str(path))
    assert code == 1 and cpu < CPU_BOUND_S, f"took {cpu:.1f} s of CPU"
    assert f"{path}:{d['line']}:{d['column']}: error[RRA006]" in out


def test_nested_mapping_laughs_are_refused_fast(tmp_path: Path) -> None:
    # The same attack with mappings instead of lists.
    lines = ["a: &a {k0: x, k1: x, k2: x, k3: x, k4: x, k5: x, k6: x, k7: x, k8: x, k9: x}"]
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} {{{', '.join(f'k{i}: *{prev}' for i in range(10))}}}")
    code, out, cpu = run_cli("validate", "--format", "json", str(write(tmp_path / "rra.yaml", "\n".join(lines))))
    assert cpu < CPU_BOUND_S, f"took {cpu:.1f} s of CPU"
    assert code == 1
    assert only(json.loads(out)["results"][0]["diagnostics"])["code"] == "RRA006"


def test_one_big_string_aliased_many_times_stays_cheap(tmp_path: Path) -> None:
    # Aliases share one string; nothing may copy it 100,000 times (that would be 100 GB).
    text = "x-big: &s " + "y" * 1_000_000 + "\nx-refs: [" + ", ".join(["*s"] * 100_000) + "]\n"
    code, out, cpu = run_cli("validate", "--format", "json", str(write(tmp_path / "rra.yaml", text)))
    assert cpu < 2 * CPU_BOUND_S, f"took {cpu:.1f} s of CPU"  # 0.7 s on a quiet machine
    assert code == 1  # the required fields are missing; the point is that it finishes
    assert {d["code"] for d in json.loads(out)["results"][0]["diagnostics"]} >= {"RRA110"}


def test_value_bound_counts_each_value_once(tmp_path: Path) -> None:
    """250,010 values nested 11 deep are well inside the 2,000,000-value bound, in YAML as in JSON.

    The JSON reader counts each value once and accepts the document; the YAML reader must agree.
    """
    n = 250_000
    assert n + 10 < MAX_NODES
    keys = [f"k{i}" for i in range(10)]
    data: Any = [1] * n
    for key in reversed(keys):
        data = {key: data}
    lines = [f"{'  ' * i}{key}:" for i, key in enumerate(keys[:-1])]
    lines.append(f"{'  ' * 9}{keys[-1]}: [" + ", ".join(["1"] * n) + "]")
    yaml_text = "\n".join(lines) + "\n"
    json_path = write(tmp_path / "rra.json", json.dumps(data))
    yaml_path = write(tmp_path / "rra.yaml", yaml_text)
    from rra_tools.io.errors import LoadError
    from rra_tools.io.read.source import parse_document

    try:
        parsed = parse_document(yaml_text)  # the reader itself must accept it
    except LoadError as exc:
        pytest.fail(f"the YAML reader refused {n + 11} values nested 11 deep: "
                    f"{exc.problem.code} at {exc.problem.line}:{exc.problem.column}: {exc.problem.message}")
    assert parsed.data == data
    for path in (json_path, yaml_path):
        _, diags = diagnostics(str(path))
        assert not [d for d in diags if d["code"] == "RRA006"], (path.name, diags[:1])


@pytest.mark.parametrize("content, line, column", [
    ("[" * 10_000 + "]" * 10_000 + "\n", 1, MAX_DEPTH + 1),                 # flow lists
    ('{"a": ' * 10_000 + "1" + "}" * 10_000 + "\n", 1, 6 * MAX_DEPTH + 1),  # JSON objects
    ("".join(f"{'  ' * i}k{i}:\n" for i in range(200)) + "  " * 200 + "v: 1\n",  # block mappings
     MAX_DEPTH + 1, 2 * MAX_DEPTH + 1),
])
def test_nesting_beyond_the_bound(tmp_path: Path, content: str, line: int, column: int) -> None:
    path = write(tmp_path / "rra.yaml", content)
    code, diags = diagnostics(str(path))
    assert code == 1
    d = only(diags)
    assert (d["code"], d["line"], d["column"]) == ("RRA007", line, column)
    assert str(MAX_DEPTH) in d["message"]


def test_deep_nesting_in_a_subprocess_does_not_overflow_the_stack(tmp_path: Path) -> None:
    # 100,000 levels: far past any recursion limit, in the real CLI.
    path = write(tmp_path / "rra.yaml", "[" * 100_000 + "]" * 100_000 + "\n")
    code, out, cpu = run_cli("validate", str(path))
    assert cpu < CPU_BOUND_S, f"took {cpu:.1f} s of CPU"
    assert code == 1
    assert f"{path}:1:{MAX_DEPTH + 1}: error[RRA007]" in out


def test_file_larger_than_the_cap_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "rra.yaml"
    with open(path, "wb") as handle:  # sparse: no disk used, but stat() says 16 MiB + 1
        handle.truncate(MAX_MANIFEST_BYTES + 1)
    code, out, cpu = run_cli("validate", str(path))
    assert cpu < CPU_BOUND_S, f"took {cpu:.1f} s of CPU"
    assert code == 1
    assert f"{path}: error[RRA006] manifest is {MAX_MANIFEST_BYTES + 1} bytes" in out
    code, diags = diagnostics(str(path))
    d = only(diags)
    assert d["code"] == "RRA006" and "line" not in d


def test_stdin_larger_than_the_cap(tmp_path: Path) -> None:
    code, out, _ = run_cli("validate", "-", stdin=b"# padding\n" * (MAX_MANIFEST_BYTES // 10 + 1))
    assert code == 1
    assert "error[RRA006]" in out and "more than the cap" in out


# ---------------------------------------------------------------------------------------------
# Encoding


def test_non_utf8_byte_is_located(tmp_path: Path) -> None:
    path = write(tmp_path / "rra.yaml", b'rra_version: "1.0"\nid: caf\xe9\n')
    code, diags = diagnostics(str(path))
    assert code == 1
    d = only(diags)
    assert (d["code"], d["line"], d["column"]) == ("RRA004", 2, 8)
    assert "0xe9" in d["message"]
    code, out = invoke("validate", str(path))
    assert f"{path}:2:8: error[RRA004]" in out


def test_binary_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "rra.yaml", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    code, diags = diagnostics(str(path))
    assert code == 1
    d = only(diags)
    assert (d["code"], d["line"], d["column"]) == ("RRA004", 1, 8)
    assert "binary" in d["message"]


def test_utf16_manifest_is_refused_not_misread(tmp_path: Path) -> None:
    path = write(tmp_path / "rra.yaml", VALID.encode("utf-16"))
    code, diags = diagnostics(str(path))
    assert code == 1
    assert only(diags)["code"] == "RRA004"


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    code, diags = diagnostics(str(write(tmp_path / "rra.yaml", b"\xef\xbb\xbf" + VALID.encode())))
    assert code == 0
    assert not [d for d in diags if d["severity"] == "error"]


@pytest.mark.parametrize("content, expected", [
    ("", "RRA003"),
    ("\n\n", "RRA003"),
    ("   \n", "RRA003"),
    ("# only a comment\n", "RRA003"),
    ("---\n", "RRA112"),   # one explicit document whose content is null: "expected a mapping"
    ("...\n", "RRA002"),   # a document end marker with no document
])
def test_empty_manifest(tmp_path: Path, content: str, expected: str) -> None:
    path = write(tmp_path / "rra.yaml", content)
    code, diags = diagnostics(str(path))
    assert code == 1
    d = only(diags)
    assert (d["code"], d["line"], d["column"]) == (expected, 1, 1)
    code, out = invoke("validate", str(path))
    assert code == 1
    assert f"{path}:1:1: error[{expected}]" in out


# ---------------------------------------------------------------------------------------------
# Input that cannot be opened: exit code 2


def unreadable(out: str) -> None:
    assert "error[RRA001]" in out


def test_directory_without_manifest(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("no manifest here\n")
    code, out = invoke("validate", str(tmp_path))
    assert code == 2
    unreadable(out)
    assert "has no rra.yaml" in out


def test_directory_whose_manifest_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").mkdir()
    code, out = invoke("validate", str(tmp_path))
    assert code == 2
    unreadable(out)


def test_symlink_loop(tmp_path: Path) -> None:
    os.symlink(tmp_path / "b.yaml", tmp_path / "a.yaml")
    os.symlink(tmp_path / "a.yaml", tmp_path / "b.yaml")
    code, out, _ = run_cli("validate", str(tmp_path / "a.yaml"))
    assert code == 2
    unreadable(out)
    assert "symbolic links" in out


def test_symlink_loop_as_the_manifest_of_a_directory(tmp_path: Path) -> None:
    os.symlink(tmp_path / "rra.yaml", tmp_path / "rra.yaml")
    code, out = invoke("validate", str(tmp_path))
    assert code == 2
    unreadable(out)


def test_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "rra.yaml"
    os.mkfifo(fifo)
    # Nobody ever writes to the FIFO: opening it for reading would block forever.
    code, out, _ = run_cli("validate", str(fifo))  # blocking on open() would end in the hang guard
    assert code == 2
    unreadable(out)
    assert "FIFO" in out
    code, out, _ = run_cli("validate", str(tmp_path))  # found through the directory
    assert code == 2
    unreadable(out)


def test_device_is_refused() -> None:
    code, out = invoke("validate", os.devnull)
    assert code == 2
    unreadable(out)
    assert "is a device" in out


def test_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "rra.yaml"
    code, out, _ = run_cli("validate", str(missing))
    assert code == 2
    unreadable(out)
    assert "No such file or directory" in out
    code, diags = diagnostics(str(missing))
    assert code == 2
    assert only(diags)["code"] == "RRA001"


def test_unreadable_input_wins_over_findings(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", "a: [\n")
    code, out = invoke("validate", str(bad), str(tmp_path / "missing.yaml"))
    assert code == 2
    assert "error[RRA002]" in out and "error[RRA001]" in out


def invoke_as_nobody(path: Path) -> tuple[int, str]:
    """Run ``rra validate PATH`` in a forked child that has dropped root for uid/gid 65534."""
    invoke("validate", os.devnull)  # import every module the command needs while still root
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            code, out = invoke("validate", str(path))
            os.write(write_end, json.dumps([code, out]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    code, out = json.loads(data)
    return int(code), str(out)


def test_permission_denied(tmp_path: Path) -> None:
    # Root reads any file, so as root the CLI runs as 'nobody' (CI runs as root: never skip).
    import stat
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="rra-perm-", dir="/tmp"))
    shared.chmod(0o755)
    path = write(shared / "rra.yaml", VALID)
    path.chmod(0)
    try:
        if os.geteuid() == 0:
            code, out = invoke_as_nobody(path)
        else:
            code, out = invoke("validate", str(path))
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
        shutil.rmtree(shared)
    assert code == 2, out
    unreadable(out)
    assert "Permission denied" in out
