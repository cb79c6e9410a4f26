"""Coding agents as a cell's reproducer: one adapter per agent, each knowing how to install its
pinned version into a cached read-only tree (:mod:`.install`), its non-interactive command line,
the environment that routes it through the cell's metering proxy, where its transcript lands and
how to read the usage it reports of itself (:mod:`.base`).

- :mod:`.claude_code`: Claude Code (npm ``@anthropic-ai/claude-code``);
- :mod:`.codex`: Codex CLI (npm ``@openai/codex``);
- :mod:`.gemini_cli`: Gemini CLI (npm ``@google/gemini-cli``);
- :mod:`.mini_swe_agent`: mini-swe-agent (PyPI ``mini-swe-agent``);
- :mod:`.command`: the operator's own shell command, as before.

docs/agents.md says what each agent sees, and how to add an adapter.

>>> sorted(ADAPTERS)
['claude-code', 'codex', 'command', 'gemini-cli', 'mini-swe-agent']
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from . import claude_code, codex, command, gemini_cli, mini_swe_agent
from .base import Adapter, AdapterError, AgentCell, Launch, Shell
from .install import AgentStatus, cache_root, install, installed, status, tree

__all__ = ["ADAPTERS", "Adapter", "AdapterError", "AgentCell", "AgentStatus", "Launch", "Shell", "cache_root",
           "get_adapter", "install", "installed", "status", "tree"]

#: Every adapter by name.
ADAPTERS: Mapping[str, Adapter] = MappingProxyType({a.name: a for a in (
    claude_code.ADAPTER, codex.ADAPTER, gemini_cli.ADAPTER, mini_swe_agent.ADAPTER, command.ADAPTER)})


def get_adapter(name: str) -> Adapter:
    """The adapter ``name``; AdapterError naming the others when there is none.

    >>> get_adapter("claud")
    Traceback (most recent call last):
    ...
    rra_tools.agents.adapters.base.AdapterError: no agent adapter 'claud'; the adapters are claude-code, codex, command, gemini-cli, mini-swe-agent
    """
    found = ADAPTERS.get(name)
    if found is None:
        raise AdapterError(f"no agent adapter {name!r}; the adapters are {', '.join(sorted(ADAPTERS))}",
                           "'rra bench agents' lists them")
    return found
