"""Why a build cannot go on."""

from __future__ import annotations

from ...errors import ExitStatus
from ..errors import BuilderLayerError


class BuildError(BuilderLayerError):
    """The build cannot go on; the message says why and the hint what to do."""

    exit_status = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class BuildInputError(BuildError):
    """RAW_REPO or the artifact directory cannot be built from or into (a usage error)."""

    exit_status = ExitStatus.USAGE
