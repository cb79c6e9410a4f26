"""The ``rra`` click group and the commands of the CLI layer itself. Command modules of later
layers are imported when their command runs (:data:`COMMANDS`), heavy library modules inside
the commands. The console script's entry point is :mod:`.main`, which loads this module only
when click parses the command line."""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import SPEC_VERSION, __version__
from .lazy import LazyGroup

__all__ = ["COMMANDS", "FORMATS", "cli"]

FORMATS = ("text", "json", "sarif", "github")

#: The commands of later layers, one line each: name -> "module:attribute" in this package. A
#: module is imported only when its command runs or its help is printed (``rra --help`` lists
#: them all), so that a short command such as ``rra guide`` does not pay for the others. The
#: modules import only click at module level; the library is imported inside the commands.
COMMANDS = {
    "attach": "oci_cmd:attach",
    "bench": "bench_cmd:bench",
    "build": "build_cmd:build_command",
    "change": "change_cmd:change",
    "discover": "oci_cmd:discover",
    "discrepancy": "change_cmd:discrepancy",
    "env": "env_cmd:env",
    "export": "export_cmd:export",
    "guide": "guide_cmd:guide",
    "init": "init_cmd:init_command",
    "lock": "env_cmd:lock",
    "pack": "pack_cmd:pack_command",
    "provenance": "oci_cmd:provenance",
    "pull": "oci_cmd:pull",
    "push": "oci_cmd:push",
    "reference": "change_cmd:reference",
    "results": "run_cmd:results_command",
    "review": "review_cmd:review",
    "run": "run_cmd:run_command",
    "sbom": "env_cmd:sbom",
    "schema": "schema_cmd:schema_command",
}


@click.group(cls=LazyGroup, lazy_commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version",
                      message=f"rra %(version)s (RRA standard {SPEC_VERSION})")
def cli() -> None:
    """Tools for Refined Reproducible Artifacts (RRA) of machine-learning papers."""


@cli.command()
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="Output format.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Lowest severity that makes the exit code 1.  [default: error]")
@click.option("--select", metavar="RULES", help="Comma-separated codes, prefixes or names to run (replaces config).")
@click.option("--extend-select", metavar="RULES", help="Rules to run in addition, e.g. RRA103.")
@click.option("--ignore", metavar="RULES", help="Comma-separated codes, prefixes or names to skip.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="Configuration file (.rra.toml or pyproject.toml); default: nearest one.")
@click.option("--color/--no-color", default=None,
              help="Colour text output, even when piped.  [default: when a terminal and NO_COLOR is unset]")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the report to this file instead of standard output.")
@click.option("--attach-report", is_flag=True,
              help="For oci:// targets: attach the JSON report to the validated manifest as a referrer.")
@click.option("--manifest-only", is_flag=True,
              help="Check manifests without the artifact's files (e.g. before they are uploaded); file "
              "checks are skipped and the report says so, as for '-'.")
def validate(paths: tuple[str, ...], fmt: str, fail_on: str | None, select: str | None,
             extend_select: str | None, ignore: str | None, config_file: str | None,
             color: bool | None, output: str | None, attach_report: bool, manifest_only: bool) -> None:
    """Check RRA manifests: an artifact directory, a manifest file, a packed artifact
    'oci-layout:DIR[:REF]', one in a registry 'oci://HOST/REPO:TAG' (or @sha256:...), or '-'
    for standard input (checked without artifact files: there is no artifact root).

    Static: nothing from the artifact is executed; offline except for oci:// targets. Exit
    status: 0 clean, 1 findings at or above --fail-on, 2 usage error or unreadable input.
    """
    from .validate_cmd import run_validate

    code = run_validate(paths or (".",), fmt=fmt, fail_on=fail_on, select=select, extend_select=extend_select,
                        ignore=ignore, config_file=config_file, color=color, output=output,
                        attach_report=attach_report, manifest_only=manifest_only)
    sys.exit(code)


@cli.command()
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(fmt: str) -> None:
    """List every rule: code, name, default severity, whether it is on by default, the command
    that reports it ('rra validate', 'rra env check' for RRA700-RRA799, 'rra review' for
    RRA900-RRA949, 'rra bench check' for RRA950-RRA999) and a summary."""
    from .rules_cmd import render_rules

    click.echo(render_rules(fmt), nl=False)


@cli.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain one rule: what it checks, why, a failing example and the fix. Codes of 'rra env
    check' (RRA700-RRA799), 'rra review' (RRA900-RRA949) and 'rra bench check' (RRA950-RRA999) are
    explained too."""
    from .rules_cmd import render_explain

    text = render_explain(code)
    if text is None:
        raise click.UsageError(f"unknown rule {code!r}; 'rra rules' lists them")
    click.echo(text, nl=False)


@cli.group()
def conformance() -> None:
    """Run the RRA conformance suite against an implementation."""


def _selection_options(function: Any) -> Any:
    """The options that choose cases, shared by 'conformance run' and 'conformance list'."""
    for option in reversed([
        click.option("--id", "ids", metavar="IDS", default=None,
                     help="Comma-separated case ids or glob patterns (oci-*); run only those."),
        click.option("--tags", metavar="TAGS", default=None, help="Comma-separated tags; keep cases having any of them."),
        click.option("--exclude-tags", metavar="TAGS", default=None,
                     help="Comma-separated tags; drop cases having any of them (e.g. config,packaging,optional)."),
        click.option("--suite", type=click.Path(file_okay=False, exists=True), default=None,
                     help="Suite directory.  [default: the bundled conformance/v1.0]"),
    ]):
        function = option(function)
    return function


@conformance.command("run")
@click.option("--impl", "impl", metavar="CMD", default=None,
              help="Implementation to test, run as 'CMD TARGET' with TARGET an artifact directory or "
              "'oci-layout:DIR' (protocol: conformance/v1.0/README.md).  "
              "[default: this package's validator, in process]")
@_selection_options
@click.option("--strict-codes", is_flag=True, help="Also require the exact set of rule codes.")
@click.option("--junit", "junit", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write JUnit XML to this file.")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per case for --impl.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Cases run at the same time.")
@click.option("-v", "--verbose", is_flag=True, help="List passing cases too.")
def conformance_run(impl: str | None, ids: str | None, tags: str | None, exclude_tags: str | None,
                    suite: str | None, strict_codes: bool, junit: str | None, timeout: float, jobs: int,
                    verbose: bool) -> None:
    """Run every selected case; exit 1 when a case fails (an 'optional' case only warns)."""
    from .conformance_cmd import run_conformance

    sys.exit(run_conformance(impl=impl, ids=ids, tags=tags, exclude_tags=exclude_tags, strict_codes=strict_codes,
                             junit=junit, suite=suite, timeout=timeout, jobs=jobs, verbose=verbose))


@conformance.command("list")
@_selection_options
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def conformance_list(ids: str | None, tags: str | None, exclude_tags: str | None, suite: str | None,
                     fmt: str) -> None:
    """List the selected cases: id, expected verdict and codes, tags, file and description."""
    from .conformance_cmd import list_conformance

    sys.exit(list_conformance(ids=ids, tags=tags, exclude_tags=exclude_tags, suite=suite, fmt=fmt))
