"""Where ``rra validate`` points for a YAML syntax error and for a finding about the whole
document, through the real command: at the mistake, with the parser's context kept."""

from __future__ import annotations

from pathlib import Path

from tests.rra_cli import rra


def _report(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "rra.yaml").write_text(text, encoding="utf-8")
    done = rra("validate", "rra.yaml", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    return done.stdout.splitlines()


def test_unclosed_flow_sequence_points_at_its_bracket(tmp_path: Path) -> None:
    lines = _report(tmp_path, 'rra_version: "1.0"\nid: demo\ntags: [a, b\ntitle: t\n')
    assert lines[:4] == [
        "rra.yaml:3:7: error[RRA002] YAML syntax error: did not find expected ',' or ']' at line 4, column 6, "
        "while parsing a flow sequence that starts here",
        "3 | tags: [a, b",
        "          ^",
        "  = hint: close what opens here, or quote the value if the bracket or quote is meant as text",
    ]


def test_unclosed_quote_points_at_the_quote(tmp_path: Path) -> None:
    lines = _report(tmp_path, 'rra_version: "1.0"\ntitle: "unfinished\nid: x\n')
    assert lines[0].startswith("rra.yaml:2:8: error[RRA002] YAML syntax error: ")
    assert lines[0].endswith(", while scanning a quoted scalar that starts here")


def test_other_syntax_errors_keep_the_parsers_context(tmp_path: Path) -> None:
    lines = _report(tmp_path, 'rra_version: "1.0"\npaper:\n  title: t\n id: x\n')
    assert lines[0] == ("rra.yaml:4:2: error[RRA002] YAML syntax error: did not find expected key (while parsing a "
                        "block mapping started at line 1, column 1)")


def test_missing_field_points_past_leading_comments(tmp_path: Path) -> None:
    lines = _report(tmp_path, '# An artifact.\n# More words.\nrra_version: "1.0"\n')
    assert lines[:3] == ["rra.yaml:3:1: error[RRA110] missing required field 'id'",
                         '3 | rra_version: "1.0"',
                         "    ^^^^^^^^^^^"]
