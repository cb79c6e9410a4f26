"""The README's builder demonstration runs as written: each line of its ``builder-demo`` block,
from the repository root, with ``rra`` and ``python`` of this environment. The first line makes
the demo's directory with ``mktemp -d`` (under the test's own temporary directory, through
TMPDIR) and prints it; the lines after it get it as ``$demo``, as they would in one shell."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def demo_lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- builder-demo: [^>]*-->\n```sh\n(.*?)```", text, re.S)
    assert block is not None, "the README has no builder-demo block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_builder_commands_work(tmp_path: Path) -> None:
    lines = demo_lines()
    assert any(line.startswith("rra build ") and "--agent" in line for line in lines)
    assert lines[0].startswith('demo=$(mktemp -d) && echo "demo directory: $demo" && ')
    assert all("/tmp" not in line and "rm -rf" not in line for line in lines)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "TMPDIR": str(tmp_path)}
    statuses = []
    outputs = []
    for line in lines:
        done = subprocess.run(["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        statuses.append(done.returncode)
        outputs.append(done.stdout + done.stderr)
        if "demo" not in env:
            made = re.search(r"^demo directory: (.+)$", done.stdout, re.M)
            assert made is not None, outputs[-1]
            env["demo"] = made.group(1)
    # The build without an agent stops (3) and says what to do; everything else succeeds.
    assert statuses == [0, 0, 0, 3, 0, 0, 0, 0, 0], "\n".join(outputs)
    assert "stopped at step 'fill': the manifest's /paper/title is a placeholder" in outputs[3]
    assert "recorded change fix-readme-command" in outputs[4]
    assert outputs[5].startswith("ok: 1 patch(es) apply cleanly")
    assert "0 error(s)" in outputs[6]
    assert "  verdict   inside\n" in outputs[7]
    assert "levels claimed: none; met: available, functional, reproduced\n" in outputs[7]
    # The review's copy holds the records the observations cite: its runs meet the same levels.
    assert "levels met with the review's runs: available, functional, reproduced (claimed: none)" in outputs[8]
    assert "RRA940" not in outputs[8]
    assert Path(env["demo"]).parent == tmp_path
    built = Path(env["demo"]) / "artifact"
    assert "python train.py --epochs 20" in (built / "README.md").read_text()
