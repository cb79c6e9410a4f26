"""Task packets for human reproducers (``rra bench packet``): which person got which task under
which condition, drawn at random from a recorded seed, and where each packet is.

A packet is a directory a person works in: the raw code or the refined artifact, the paper and
the task description, with no reference value in it (the same preparation as a cell's
workspace). The person writes ``submission.json`` into it; ``rra bench score TASKSET --packets
DIR`` scores every assignment (a packet returned without a submission is a missing value).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import Id, RRAModel
from .taskset import ConditionName, TaskKey

__all__ = ["Assignment", "PacketSet"]


class Assignment(RRAModel):
    """One person, one task, the condition they were given, and their packet."""

    person: Id
    task: TaskKey
    condition: ConditionName
    packet: str = Field(description="The packet directory, relative to the packet set's directory.")


class PacketSet(RRAModel):
    """The packets of one human study and how their conditions were assigned."""

    packet_set_version: Annotated[str, StringConstraints(pattern=r"^1\.0$")] = Field(
        description="Version of the format: '1.0'.")
    taskset: Id
    taskset_sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")] = Field(
        description="SHA-256 of the task-set file the packets were made from (scoring checks it).")
    seed: int = Field(description="Seed of the assignment: the same seed, people and task set give the same one.")
    method: str = Field(description="How conditions were assigned, in words.")
    people: list[Id] = Field(min_length=1)
    conditions: list[ConditionName] = Field(min_length=1)
    exported: float = Field(description="When the packets were made (epoch seconds): the start of every "
                            "attempt's window for the auditor.")
    assignments: list[Assignment]
