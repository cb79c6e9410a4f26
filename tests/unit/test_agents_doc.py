"""docs/agents.md shows what is true: the hand-over as ``rra bench prompt`` prints it now, a task
set's reproducers that load, every adapter with its pinned package, and places that exist."""

from __future__ import annotations

import re
from pathlib import Path

from ruamel.yaml import YAML

from rra_tools.agents.adapters import ADAPTERS
from rra_tools.bench import load_taskset
from rra_tools.bench.agent_cells import handover_for
from rra_tools.model.taskset import Reproducer

from ..agent_scripts import one_task_taskset

REPO = Path(__file__).resolve().parents[2]
TEXT = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")


def test_the_handover_shown_is_the_current_one(tmp_path: Path) -> None:
    shown = TEXT.split("````markdown\n", 1)[1].split("\n````", 1)[0] + "\n"
    taskset, _ = one_task_taskset(tmp_path, limits={"wall_clock_s": 1800, "cost_usd": 20, "tokens": 5000000})
    current = handover_for(load_taskset(taskset), "p/t1/var", "refined").text
    assert shown == current, "docs/agents.md shows an old hand-over: paste the output of 'rra bench prompt' there"


def test_the_reproducers_example_loads() -> None:
    block = re.search(r"```yaml\n(reproducers:\n.*?)```", TEXT, re.S)
    assert block is not None
    data = YAML(typ="safe").load(block.group(1))
    found = [Reproducer.model_validate(r) for r in data["reproducers"]]
    assert [(r.agent, r.command is not None) for r in found] == [
        ("claude-code", False), ("codex", False), ("mini-swe-agent", False), (None, True)]
    assert found[0].budget is not None and found[0].budget.cost_usd == 20


def test_every_adapter_is_in_the_table_with_its_pin() -> None:
    for adapter in ADAPTERS.values():
        if adapter.installer == "npm":
            assert f"| `{adapter.name}` | npm `{adapter.package}@{adapter.version}` |" in TEXT, adapter.name
        elif adapter.installer == "pypi":
            assert f"| `{adapter.name}` | PyPI `{adapter.package}=={adapter.version}` |" in TEXT, adapter.name
        else:
            assert f"| `{adapter.name}` | none |" in TEXT


def test_every_cited_path_exists() -> None:
    paths = set(re.findall(r"`((?:rra_tools|tests|benchmarks|docs)/[^`<>*\s]*)`", TEXT))
    assert len(paths) > 8
    missing = sorted(p for p in paths if not (REPO / p).exists())
    assert missing == [], f"docs/agents.md cites files that do not exist: {missing}"
