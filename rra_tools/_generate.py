"""Regenerate the committed generated files: ``python -m rra_tools._generate [--check]``.

Writes the JSON Schemas into ``schemas/``, the rule pages into ``docs/rules/`` and the CLI
reference into ``docs/cli.md``. With ``--check`` nothing is written; the exit
status is 1 and the stale files are named when anything differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["generated_files", "main"]

ROOT = Path(__file__).resolve().parent.parent


def generated_files() -> dict[Path, str]:
    """Every generated file's path (in a source checkout) and its expected content."""
    from .model.schema import generated_schemas

    from .cli.reference import cli_reference

    files = {ROOT / "schemas" / name: text for name, text in generated_schemas().items()}
    files[ROOT / "docs" / "cli.md"] = cli_reference()
    try:
        from .validate.rule_docs import generated_rule_pages
    except ImportError:
        pass
    else:
        files.update({ROOT / "docs" / "rules" / name: text for name, text in generated_rule_pages().items()})
    return files


def main(argv: list[str]) -> int:
    """Write (or with --check, compare) every generated file."""
    check = "--check" in argv
    stale = []
    for path, text in generated_files().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if check else 'wrote'}: {path.relative_to(ROOT)}")
    if check and stale:
        print("run 'python -m rra_tools._generate' to regenerate")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
