#!/usr/bin/env python3
"""Benchmark of the agents' adapters: what running a real coding agent as a cell of ``rra bench
run`` adds to the same agent started by hand. Target (issue 22): at most 1.5 s per cell.

Usage::

    python benchmarks/bench_agents.py              # 5 timed runs of each agent and way
    python benchmarks/bench_agents.py --runs 10
    python benchmarks/bench_agents.py --quick      # 2
    python benchmarks/bench_agents.py --agent codex

For each installed agent (Claude Code, Codex, mini-swe-agent, Gemini CLI at their pinned
versions) and a scripted loopback model that makes it run the tiny artifact's launcher with ``rra
run``, write ``submission.json`` and finish (tests/agent_scripts.py, three model calls):

- **adapter**: the whole ``rra bench run`` of a one-cell task set (``--reproducer
  a=agent:AGENT:MODEL --sandbox bwrap``), timed from the command's start to its exit: the CLI,
  the task set's check, the workspace, the hand-over, the sandbox, the metering proxy, the
  agent, reading its report, the audit and the results;
- **by hand**: the same program with the same command line and hand-over, started directly in
  a fresh copy of the same workspace, its base URL pointed straight at the scripted model, no
  sandbox and no proxy: what an operator's own wrapper would start.

Runs alternate (adapter, by hand) after one untimed pair; printed per agent: min and p50 of
each, the cell's own process time inside the sandbox (``wall_s`` of the result), and the p50
difference, the figure held against the target. Every adapter run must end ``success`` and
every by-hand run exit 0 with a submission written, or the row says NO.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, WORK, Row, fmt_s, load, machine, print_table, tool

sys.path.insert(0, str(REPO))
from rra_tools.agents.adapters import AgentCell, get_adapter, installed
from rra_tools.agents.adapters import tree as agent_tree
from rra_tools.agents.cell import DUMMY_KEY
from rra_tools.agents.scripted import ScriptedUpstream
from rra_tools.bench import load_taskset
from rra_tools.bench.agent_cells import handover_for
from rra_tools.bench.workspace import prepare_workspace
from tests.agent_scripts import AGENTS, TASK, one_task_taskset, script

TARGET_S = 1.5


def adapter_run(agent: str, root: Path, n: int, taskset: Path, references: Path) -> tuple[float, float, bool]:
    """One ``rra bench run`` of the one cell: (seconds, the cell's wall_s, success)."""
    spec = AGENTS[agent]
    out = root / f"out-{n}"
    with ScriptedUpstream(script(spec)) as model:
        started = time.perf_counter()
        proc = subprocess.run([tool("rra"), "bench", "run", str(taskset), "--references", str(references), "-o",
                               str(out), "--sandbox", "bwrap", "--upstream", f"{spec.provider}={model.url}",
                               "--price-table", str(root / "prices.json"), "--reproducer",
                               f"a=agent:{agent}:{spec.model}"], capture_output=True, text=True)
        elapsed = time.perf_counter() - started
    cell = json.loads((out / "results.json").read_text())["cells"][0] if proc.returncode == 0 else {}
    shutil.rmtree(out, ignore_errors=True)
    return elapsed, float(cell.get("wall_s") or 0.0), cell.get("state") == "success"


def by_hand_run(agent: str, root: Path, n: int, taskset: Path) -> tuple[float, bool]:
    """The same agent started directly: (seconds, exit 0 with a submission)."""
    spec = AGENTS[agent]
    adapter = get_adapter(agent)
    loaded = load_taskset(taskset)
    task = next(t for t in loaded.tasks if t.key == TASK)
    place = root / f"hand-{n}"
    workspace = place / "workspace"
    prepare_workspace(loaded, task, "refined", workspace, root / "cache")
    (place / "transcript").mkdir()
    (place / "home").mkdir()
    bindir = str(Path(sys.executable).parent)
    # Codex runs its commands in a login shell, whose /etc/profile resets PATH on the host (the
    # sandbox shows no /etc/profile): the operator's profile puts rra back, as theirs would.
    (place / "home" / ".bash_profile").write_text(f'export PATH="{bindir}:$PATH"\n')
    cell = AgentCell(prompt=handover_for(loaded, TASK, "refined").text, model=spec.model, workspace=workspace,
                     transcript=place / "transcript", stdout=place / "stdout.log", tree=agent_tree(adapter))
    launch = adapter.launch(cell)
    with ScriptedUpstream(script(spec)) as model:
        env = {"PATH": os.pathsep.join([bindir, "/usr/local/bin", "/usr/bin", "/bin"]),
               "HOME": str(place / "home"), "LANG": "C.UTF-8", "ANTHROPIC_BASE_URL": model.url,
               "OPENAI_BASE_URL": f"{model.url}/v1", "GOOGLE_GEMINI_BASE_URL": model.url,
               "ANTHROPIC_API_KEY": DUMMY_KEY, "OPENAI_API_KEY": DUMMY_KEY, "GEMINI_API_KEY": DUMMY_KEY,
               **launch.env}
        with open(cell.stdout, "wb") as out:
            started = time.perf_counter()
            proc = subprocess.run(["sh", "-c", launch.command], cwd=workspace, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            elapsed = time.perf_counter() - started
    ok = proc.returncode == 0 and (workspace / "submission.json").is_file()
    if not ok:
        print(f"{agent} by hand: exit {proc.returncode}:\n{cell.stdout.read_text(errors='replace')[-2000:]}")
    shutil.rmtree(place, ignore_errors=True)
    return elapsed, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each agent and way")
    parser.add_argument("--quick", action="store_true", help="2 runs of each")
    parser.add_argument("--agent", action="append", choices=sorted(AGENTS), help="only these agents")
    args = parser.parse_args()
    runs = 2 if args.quick else args.runs
    print(f"machine: {machine()}")
    print(f"environment: {sys.prefix}")
    agents = args.agent or sorted(AGENTS)
    for agent in agents:
        adapter = get_adapter(agent)
        state = "installed" if installed(adapter) else "NOT INSTALLED (rra bench agents install " + agent + ")"
        print(f"{agent} {adapter.version}: {state}")
    agents = [a for a in agents if installed(get_adapter(a))]
    root = WORK / "agents"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    taskset, references = one_task_taskset(root)
    table = json.loads((REPO / "rra_tools/agents/proxy/prices/rra-prices-2026-12-01.json").read_text())
    table["providers"]["openai"]["models"]["gpt-5.5"] = table["providers"]["openai"]["models"]["gpt-5"]
    (root / "prices.json").write_text(json.dumps(table))
    rows = []
    print()
    print(f"{'agent':<15} {'way':<8} {'min':>8} {'p50':>8} {'in sandbox p50':>15} {'added p50':>10}")
    for agent in agents:
        through: list[float] = []
        inside: list[float] = []
        hand: list[float] = []
        failed = 0
        for n in range(runs + 1):
            a, w, ok_a = adapter_run(agent, root, n, taskset, references)
            h, ok_h = by_hand_run(agent, root, n, taskset)
            failed += (not ok_a) + (not ok_h)
            if n == 0:
                continue  # untimed pair: page cache, bytecode, the sandbox's probe
            through.append(a)
            inside.append(w)
            hand.append(h)
        added = statistics.median(through) - statistics.median(hand)
        print(f"{agent:<15} {'adapter':<8} {fmt_s(min(through)):>8} {fmt_s(statistics.median(through)):>8} "
              f"{fmt_s(statistics.median(inside)):>15} {fmt_s(added):>10}")
        print(f"{'':<15} {'by hand':<8} {fmt_s(min(hand)):>8} {fmt_s(statistics.median(hand)):>8}")
        met = "NO: a run failed" if failed else ("yes" if added <= TARGET_S else "NO")
        rows.append(Row(f"{agent}: rra bench run cell vs by hand (p50)", fmt_s(added), "limit", fmt_s(TARGET_S),
                        f"{added / TARGET_S:.2f}", f"<= {TARGET_S:g} s added", met))
    print(f"\n{runs} timed runs of each agent and way, alternating, after one untimed pair; load average "
          f"{load():.2f} at the end")
    print()
    print_table(rows)
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
