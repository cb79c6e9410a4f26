"""Regenerate the committed generated files: ``python -m rra_tools._generate [--check]``.

Writes the JSON Schemas into ``schemas/``, the rule pages into ``docs/rules/``, the CLI
reference into ``docs/cli.md``, the run path's plain view of the manifest into
``rra_tools/model/manifest_view.py`` (from the models), the table of ``rra env check``'s codes into
``docs/environment.md``, the field tables of ``spec/02-manifest.md`` (see
:mod:`rra_tools.model.spec_tables`), the rule catalog of ``spec/06-rules.md``, the conformance
suite README's list of codes without a case and the table of ``rra review``'s codes in
``docs/builder.md`` (the last five between generated-block markers). With ``--check`` nothing is written; the exit status is 1 and the stale files are
named when anything differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .errors import ExitStatus

__all__ = ["generated_files", "main", "with_block"]

ROOT = Path(__file__).resolve().parent.parent


def generated_files() -> dict[Path, str]:
    """Every generated file's path (in a source checkout) and its expected content."""
    # Every part is imported unconditionally: a generator that skipped a part it could not
    # import would let that part's files drift while --check still passed.
    from .cli.reference import cli_reference
    from .model.schema import generated_schemas
    from .model.spec_tables import with_field_tables
    from .model.view_source import spec_module
    from .validate.rule_docs import catalog_table, env_codes_table, generated_rule_pages

    files = {ROOT / "schemas" / name: text for name, text in generated_schemas().items()}
    files[ROOT / "docs" / "cli.md"] = cli_reference()
    files[ROOT / "rra_tools" / "model" / "manifest_view.py"] = spec_module()
    files.update({ROOT / "docs" / "rules" / name: text for name, text in generated_rule_pages().items()})
    environment = ROOT / "docs" / "environment.md"
    files[environment] = with_block(environment.read_text(encoding="utf-8"), "env-codes", env_codes_table())
    manifest_spec = ROOT / "spec" / "02-manifest.md"
    files[manifest_spec] = with_field_tables(manifest_spec.read_text(encoding="utf-8"))
    rules_spec = ROOT / "spec" / "06-rules.md"
    files[rules_spec] = with_block(rules_spec.read_text(encoding="utf-8"), "rule-catalog", catalog_table(ROOT / "spec"))
    files.update(_conformance_readme())
    from .builder.review.codes import review_codes_table

    builder = ROOT / "docs" / "builder.md"
    files[builder] = with_block(builder.read_text(encoding="utf-8"), "review-codes", review_codes_table())
    return files


def _conformance_readme() -> dict[Path, str]:
    """The suite README's list of rule codes without a case and its table of the RRA 1.1 cases
    that pin the optional edge cases, computed from the cases."""
    from .conformance.cases import load_suite
    from .conformance.coverage import pinned_block, uncovered_block
    from .validate.catalog import RULES

    suite = ROOT / "conformance" / "v1.0"
    readme = suite / "README.md"
    cases = load_suite(suite)
    text = with_block(readme.read_text(encoding="utf-8"), "uncovered-codes", uncovered_block(RULES, cases))
    return {readme: with_block(text, "pinned-in-1.1", pinned_block(cases))}


def with_block(text: str, name: str, block: str) -> str:
    """``text`` with the lines between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``
    replaced by ``block`` (the rest of a hand-written page stays as written)."""
    begin, end = f"<!-- generated: {name} -->\n", f"<!-- end generated: {name} -->"
    head, found, rest = text.partition(begin)
    if not found or end not in rest:
        raise ValueError(f"the markers of the generated block {name!r} are missing")
    return head + begin + block + end + rest.split(end, 1)[1]


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
        return ExitStatus.FAILED
    return ExitStatus.OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
