"""The agents' adapters without the agents: the registry, the command lines as a shell hands them
over, the settings each writes, the readers of each agent's own usage report (from outputs in the
shapes the real agents print, as seen in tests/acceptance/test_agents_real.py), and the
installer (with a stand-in npm: the real install is .ci/run's and the acceptance tests')."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from rra_tools.agents.adapters import ADAPTERS, AdapterError, AgentCell, get_adapter, install, installed, tree
from rra_tools.agents.adapters.base import Shell
from rra_tools.agents.adapters.install import MARKER
from rra_tools.agents.cell import compare_usage
from rra_tools.model.cell import MeteredUsage, ReportedUsage
from rra_tools.model.submission import Usage
from rra_tools.model.taskset import AGENTS

#: An argv printer standing in for every agent's program.
PRINTER = f"#!{sys.executable}\nimport json, os, sys\nprint(json.dumps(sys.argv[1:]))\n"


def make_cell(tmp_path: Path, adapter: str, model: str = "m-1", prompt: str = "do it") -> AgentCell:
    found = get_adapter(adapter)
    tree_dir = tmp_path / "tree"
    program = tree_dir / found.program
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text(PRINTER, encoding="utf-8")
    program.chmod(0o755)
    (tmp_path / "transcript").mkdir(exist_ok=True)
    (tmp_path / "workspace").mkdir(exist_ok=True)
    return AgentCell(prompt=prompt, model=model, workspace=tmp_path / "workspace",
                     transcript=tmp_path / "transcript", stdout=tmp_path / "reproducer.stdout.log", tree=tree_dir)


def launched_argv(tmp_path: Path, adapter: str, prompt: str, model: str = "m-1") -> list[str]:
    """The argv the agent's program receives when the cell's shell runs the adapter's command."""
    cell = make_cell(tmp_path, adapter, model, prompt)
    launch = get_adapter(adapter).launch(cell)
    env = {"PATH": os.environ["PATH"], "OPENAI_BASE_URL": "http://127.0.0.1:13131/v1",
           "ANTHROPIC_BASE_URL": "http://127.0.0.1:13131", **launch.env}
    out = subprocess.run(["sh", "-c", launch.command], env=env, capture_output=True, text=True, check=True)
    argv: list[str] = json.loads(out.stdout)
    return argv


def test_every_agent_a_task_set_names_has_an_adapter() -> None:
    assert set(AGENTS) | {"command"} == set(ADAPTERS)
    for name in AGENTS:
        adapter = ADAPTERS[name]
        assert adapter.version and adapter.package and adapter.program and adapter.installer in ("npm", "pypi")


def test_an_unknown_adapter_names_the_others() -> None:
    with pytest.raises(AdapterError, match="no agent adapter 'aider'; the adapters are claude-code, codex, command"):
        get_adapter("aider")


HOSTILE = "Say \"hi\" and $HOME `id` $(id) 'quoted' \\ back\nslash {{task}} 100%"


@pytest.mark.parametrize("adapter", sorted(AGENTS))
def test_the_prompt_reaches_the_agent_byte_for_byte(tmp_path: Path, adapter: str) -> None:
    argv = launched_argv(tmp_path, adapter, HOSTILE, model="openai/m-1" if adapter == "mini-swe-agent" else "m-1")
    assert HOSTILE in argv


def test_claude_codes_command_line_and_environment(tmp_path: Path) -> None:
    argv = launched_argv(tmp_path, "claude-code", "P", "claude-sonnet-4-5")
    assert argv == ["-p", "P", "--model", "claude-sonnet-4-5", "--output-format", "stream-json", "--verbose",
                    "--dangerously-skip-permissions"]
    env = get_adapter("claude-code").env(make_cell(tmp_path, "claude-code"))
    assert env["IS_SANDBOX"] == "1" and env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / "transcript" / "claude")


def test_codex_is_pointed_at_the_proxy_inside_the_cell(tmp_path: Path) -> None:
    argv = launched_argv(tmp_path, "codex", "P", 'gpt-5.5')
    # The base URL is the cell's, expanded by its shell (it differs under --sandbox none).
    assert argv == ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-c",
                    'model_providers.rra.base_url="http://127.0.0.1:13131/v1"', "P"]
    config = tomllib.loads((tmp_path / "transcript" / "codex-home" / "config.toml").read_text(encoding="utf-8"))
    assert config["model"] == "gpt-5.5" and config["model_provider"] == "rra"
    assert config["model_providers"]["rra"] == {"name": "rra metering proxy", "wire_api": "responses",
                                                "env_key": "OPENAI_API_KEY"}
    assert config["features"] == {"plugins": False} and config["analytics"] == {"enabled": False}


def test_mini_swe_agent_routes_by_provider_prefix(tmp_path: Path) -> None:
    argv = launched_argv(tmp_path, "mini-swe-agent", "P", "anthropic/claude-sonnet-4-5")
    assert "model.model_kwargs.api_base=http://127.0.0.1:13131" in argv
    config = json.loads((tmp_path / "transcript" / "rra-mini.yaml").read_text(encoding="utf-8"))
    assert config["model"]["model_name"] == "anthropic/claude-sonnet-4-5"
    bare = launched_argv(tmp_path / "bare", "mini-swe-agent", "P", "gpt-5-mini")
    assert "model.model_kwargs.api_base=http://127.0.0.1:13131/v1" in bare
    with pytest.raises(AdapterError, match="names the provider 'bedrock'"):
        get_adapter("mini-swe-agent").check_model("bedrock/claude")


def test_gemini_cli_settings_select_the_api_key(tmp_path: Path) -> None:
    argv = launched_argv(tmp_path, "gemini-cli", "P", "gemini-2.5-flash")
    assert argv == ["-p", "P", "-m", "gemini-2.5-flash", "--yolo", "--skip-trust", "--output-format", "stream-json"]
    settings = json.loads((tmp_path / "transcript" / "gemini-home" / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"


def test_shell_pieces_expand_only_variables() -> None:
    piece = Shell('a="$X" `b` \\c')
    out = subprocess.run(["sh", "-c", f"printf %s {piece.render()}"], env={"X": "x y"}, capture_output=True, text=True)
    assert out.stdout == 'a="x y" `b` \\c'


def write_lines(path: Path, *documents: Any, noise: str = "progress text\n") -> None:
    path.write_text(noise + "".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")


def test_claude_codes_report_is_its_result_event(tmp_path: Path) -> None:
    cell = make_cell(tmp_path, "claude-code")
    write_lines(cell.stdout, {"type": "assistant", "message": {"usage": {"input_tokens": 1}}},
                {"type": "result", "total_cost_usd": 0.01788, "usage": {
                    "input_tokens": 4500, "output_tokens": 272, "cache_read_input_tokens": 1000,
                    "cache_creation_input_tokens": 5}})
    found = get_adapter("claude-code").reported_usage(cell)
    assert found == ReportedUsage(input_tokens=4500, output_tokens=272, cache_read_tokens=1000, cache_write_tokens=5,
                                  cost_usd=0.01788, source="stdout: the result event's usage and total_cost_usd")
    assert found.tokens() == 5777


def test_codex_report_sums_its_turns(tmp_path: Path) -> None:
    cell = make_cell(tmp_path, "codex")
    turn = {"type": "turn.completed", "usage": {"input_tokens": 300, "cached_input_tokens": 40,
                                                "cache_write_input_tokens": 0, "output_tokens": 27}}
    write_lines(cell.stdout, {"type": "thread.started"}, turn, turn)
    found = get_adapter("codex").reported_usage(cell)
    assert found is not None
    assert (found.input_tokens, found.cache_read_tokens, found.output_tokens, found.cost_usd) == (520, 80, 54, None)


def test_mini_swe_agents_report_is_its_trajectory(tmp_path: Path) -> None:
    cell = make_cell(tmp_path, "mini-swe-agent")
    response = {"usage": {"prompt_tokens": 1300, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 100}}}
    trajectory = {"info": {"model_stats": {"instance_cost": 0.5, "api_calls": 2}},
                  "messages": [{"role": "system", "content": "x"},
                               {"role": "assistant", "extra": {"response": response}},
                               {"role": "tool", "extra": {"raw_output": ""}},
                               {"role": "assistant", "extra": {"response": response}}]}
    (cell.transcript / "trajectory.json").write_text(json.dumps(trajectory), encoding="utf-8")
    found = get_adapter("mini-swe-agent").reported_usage(cell)
    assert found is not None
    assert (found.input_tokens, found.cache_read_tokens, found.output_tokens, found.calls, found.cost_usd) == (
        2400, 200, 40, 2, 0.5)


def test_gemini_clis_report_is_its_result_event(tmp_path: Path) -> None:
    cell = make_cell(tmp_path, "gemini-cli")
    write_lines(cell.stdout, {"type": "result", "status": "success", "stats": {
        "total_tokens": 327, "input_tokens": 300, "output_tokens": 27, "cached": 40, "input": 260}})
    found = get_adapter("gemini-cli").reported_usage(cell)
    assert found is not None and (found.input_tokens, found.cache_read_tokens, found.output_tokens) == (260, 40, 27)


@pytest.mark.parametrize("adapter", sorted(AGENTS))
def test_no_readable_report_is_none(tmp_path: Path, adapter: str) -> None:
    cell = make_cell(tmp_path, adapter)
    # Killed before it reported: nothing, or a truncated last line.
    cell.stdout.write_text('{"type": "result", "usage": {"input_tok', encoding="utf-8")
    (cell.transcript / "trajectory.json").write_text('{"messages": [', encoding="utf-8")
    assert get_adapter(adapter).reported_usage(cell) is None


def test_a_report_that_differs_is_a_difference() -> None:
    metered = MeteredUsage(calls=3, input_tokens=4500, output_tokens=272, cache_read_tokens=1000, cache_write_tokens=0,
                           reasoning_tokens=0, cost_usd=0.01788, price_table="rra-prices 2026-12-01")
    reported = ReportedUsage(input_tokens=4500, output_tokens=272, cache_read_tokens=0, cost_usd=0.02, source="x")
    found = compare_usage(Usage(tokens=reported.tokens(), cost_usd=reported.cost_usd), metered)
    assert [(d.field, d.stated, d.metered) for d in found] == [("tokens", 4772.0, 5772.0), ("cost_usd", 0.02, 0.01788)]


def test_transcript_lists_the_agents_own_files(tmp_path: Path) -> None:
    cell = make_cell(tmp_path, "claude-code")
    session = cell.transcript / "claude" / "projects" / "-ws" / "s.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text("{}\n")
    cell.stdout.write_text("{}\n")
    assert get_adapter("claude-code").transcript(cell) == [cell.stdout, session]


# -- the installer, with a stand-in npm ---------------------------------------------------------

FAKE_NPM = """#!/bin/sh
# npm install --prefix DIR PACKAGE@VERSION ...: records the call, makes the package's program.
echo "$@" >> "$NPM_CALLS"
[ -n "$NPM_FAIL" ] && { echo "npm ERR! 404 Not Found" >&2; exit 1; }
mkdir -p "$3/node_modules/.bin"
printf '#!/bin/sh\\necho agent\\n' > "$3/node_modules/.bin/claude"
chmod +x "$3/node_modules/.bin/claude"
"""


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    (bin_dir / "node").write_text("#!/bin/sh\n")
    (bin_dir / "node").chmod(0o755)
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("NPM_CALLS", str(calls))
    monkeypatch.setenv("RRA_AGENTS_CACHE", str(tmp_path / "cache"))
    return calls


def test_install_makes_a_complete_read_only_tree_once(fake_npm: Path, tmp_path: Path) -> None:
    adapter = get_adapter("claude-code")
    assert tree(adapter) == tmp_path / "cache" / "claude-code-2.1.332"
    assert not installed(adapter)
    target = install(adapter)
    assert installed(adapter) and target == tree(adapter)
    assert json.loads((target / MARKER).read_text())["version"] == "2.1.332"
    for path in [target, *target.rglob("*")]:
        assert not path.lstat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), path
    assert fake_npm.read_text().split()[:4] == ["install", "--prefix", str(target), "@anthropic-ai/claude-code@2.1.332"]
    install(adapter)
    assert len(fake_npm.read_text().splitlines()) == 1  # complete: not installed again
    install(adapter, force=True)
    assert len(fake_npm.read_text().splitlines()) == 2 and installed(adapter)


def test_an_interrupted_install_is_started_over(fake_npm: Path) -> None:
    adapter = get_adapter("claude-code")
    half = tree(adapter) / "node_modules" / ".bin"
    half.mkdir(parents=True)
    (half / "claude").write_text("half")
    assert not installed(adapter)  # no marker: not taken for finished
    install(adapter)
    assert installed(adapter) and (half / "claude").read_text() != "half"


def test_a_failed_install_says_why_and_leaves_nothing(fake_npm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NPM_FAIL", "1")
    adapter = get_adapter("claude-code")
    with pytest.raises(AdapterError, match=r"npm install @anthropic-ai/claude-code@2.1.332 failed \(exit status 1\)"
                       r":\nnpm ERR! 404 Not Found") as caught:
        install(adapter)
    assert caught.value.hint is not None and "registry" in caught.value.hint
    assert not tree(adapter).exists()


def test_without_npm_the_install_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("RRA_AGENTS_CACHE", str(tmp_path / "cache"))
    with pytest.raises(AdapterError, match="needs Node.js and npm") as caught:
        install(get_adapter("codex"))
    assert caught.value.hint == "install them (Debian: apt-get install nodejs npm)"


def test_the_command_adapter_installs_nothing() -> None:
    adapter = get_adapter("command")
    assert installed(adapter)
    with pytest.raises(AdapterError, match="installs nothing"):
        install(adapter)
