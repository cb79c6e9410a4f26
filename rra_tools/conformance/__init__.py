"""The conformance suite: load language-neutral cases, run any implementation on them, report."""

from .cases import LoadedCase, load_suite, materialise, select_cases, suite_path
from .runner import Outcome, Reported, command_impl, in_process_impl, prepare, run_suite

__all__ = [
    "LoadedCase",
    "Outcome",
    "Reported",
    "command_impl",
    "in_process_impl",
    "load_suite",
    "materialise",
    "prepare",
    "run_suite",
    "select_cases",
    "suite_path",
]
