"""The whole conformance suite through the external-implementation protocol: 'rra validate'
(and 'rra bench check' for task-set cases) wrapped in a shell script, as another implementation
would be run, passes every case with the exact codes — directory cases, packaging cases
(oci-layout:DIR) and task-set cases (taskset:PATH) alike."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from click.testing import CliRunner

from rra_tools.cli.main import cli
from rra_tools.conformance import load_suite, suite_path


def test_rra_validate_as_an_external_implementation_passes_the_whole_suite(tmp_path: Path) -> None:
    wrapper = tmp_path / "rra-validate-impl"
    # Task-set cases (taskset:PATH, a references.json beside it) go to 'rra bench check'.
    wrapper.write_text(f"""#!/bin/sh
case "$1" in
  taskset:*)
    path="${{1#taskset:}}"; refs="$(dirname "$path")/references.json"
    if [ -f "$refs" ]; then exec "{sys.executable}" -m rra_tools bench check --format json "$path" --references "$refs"
    else exec "{sys.executable}" -m rra_tools bench check --format json "$path"; fi ;;
  *) exec "{sys.executable}" -m rra_tools validate --format json "$1" ;;
esac
""")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    result = CliRunner().invoke(cli, ["conformance", "run", "--strict-codes", "-j", "4", "--timeout", "120",
                                      "--impl", str(wrapper)])
    assert result.exit_code == 0, result.output
    total = str(len(load_suite(suite_path())))
    assert result.output.strip().splitlines()[-1].split() == ["all", total, total, "0", "100.0%"]
