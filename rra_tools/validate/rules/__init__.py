"""Semantic rules, one module per area; each check declares the codes it may report."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from ..context import Context, Finding

__all__ = ["CHECKS", "Check", "check", "load_all"]


@dataclass(frozen=True)
class Check:
    """A function that inspects a manifest and yields findings of the listed codes."""

    codes: tuple[str, ...]
    run: Callable[[Context], Iterable[Finding]]


CHECKS: list[Check] = []


_F = TypeVar("_F", bound=Callable[[Context], Iterable[Finding]])


def check(*codes: str) -> Callable[[_F], _F]:
    """Register a check that may report ``codes``; skipped when none of them is enabled."""

    def register(fn: _F) -> _F:
        CHECKS.append(Check(codes, fn))
        return fn

    return register


def load_all() -> list[Check]:
    """Import every rule module (registering its checks) and return the registry."""
    from . import experiments, extensions, files, guide, kinds, levels, patches, pinning, references, unfinished  # noqa: F401

    return CHECKS
