"""Words of the run-record format that code outside the models uses: statuses, executors, streams.

Plain enums without pydantic, so that ``rra run`` can name them without importing the models
(:mod:`rra_tools.model.run_record` re-exports them and builds the schema from them).
"""

from __future__ import annotations

from enum import Enum

from .. import FORMAT_VERSIONS

__all__ = ["RECORD_VERSION", "SCHEMA_BASE_URL", "Executor", "LogStream", "RunStatus"]

#: Stable base of every published schema's ``$id``; the path carries the standard's version.
#: Here rather than in :mod:`.schema` so that code outside the models names it without importing pydantic.
SCHEMA_BASE_URL = "https://rra.dev/schemas"

#: Version of the run-record format written by this package.
RECORD_VERSION = FORMAT_VERSIONS["run-record"]


class RunStatus(str, Enum):
    """How a run ended."""

    COMPLETED = "completed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"


class Executor(str, Enum):
    """What ran the process."""

    LOCAL = "local"
    CONTAINER = "container"


class LogStream(str, Enum):
    """Which standard stream a log file holds."""

    STDOUT = "stdout"
    STDERR = "stderr"
