"""Removes a run's container when ``rra run`` died without doing it: the program a container
run's guard becomes (``python -m rra_tools.run._container_guard URL TOKEN GRACE``).

A container is the engine's child, not ours: killing ``rra run`` with SIGKILL (or the
out-of-memory killer) leaves it running, and no parent-death signal reaches it. So each
container run starts a guard (:class:`rra_tools.run.container.ContainerGuard`): a shell in its
own session, waiting on a pipe whose only writer is ``rra run``. When the run ends normally it
is told so and exits; when ``rra run`` dies, the kernel closes the pipe and the shell execs this
module, which stops every container labelled with the run's token (SIGTERM, SIGKILL after the
grace period, as a timeout would) and removes it. The guard holds the run's locked descriptors
(GPUs, output locks, the pending record) all along, so they stay locked until the container is
gone, and the next ``rra run`` or ``rra results`` then finishes the run's record.

This is a program, not library code: it reads its arguments and exits.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Stop and remove the containers labelled ``TOKEN``; 1 when the engine cannot be asked."""
    url, token, grace_s = argv[0], argv[1], float(argv[2])
    from .container import GUARD_LABEL, connect, engine_url

    # The address rra run used: given explicitly, or read from the same environment (which
    # also carries DOCKER_HOST's TLS settings).
    explicit = None if engine_url(None, os.environ) == url else url
    try:
        engine = connect(explicit, os.environ)
    except Exception:  # noqa: BLE001 - nothing to report to: rra run is gone
        return 1
    try:
        # A create request rra run sent just before it died may land after a first look that
        # found nothing: look once more a second later.
        for attempt in range(2):
            if attempt:
                time.sleep(1.0)
            found = engine.api.containers(all=True, filters={"label": f"{GUARD_LABEL}={token}"})
            for container in found:
                _stop_and_remove(engine.api, str(container["Id"]), grace_s)
            if found:
                break
    except Exception:  # noqa: BLE001 - as above
        return 1
    finally:
        engine.close()
    return 0


def _stop_and_remove(engine: Any, cid: str, grace_s: float) -> None:
    try:
        engine.kill(cid, signal="SIGTERM")
    except Exception:  # noqa: BLE001,S110 - not running (created only, or exited): removal decides
        pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            if not (engine.inspect_container(cid).get("State") or {}).get("Running"):
                break
        except Exception:  # noqa: BLE001 - gone already
            return
        time.sleep(0.1)
    try:
        engine.remove_container(cid, force=True, v=True)  # force: SIGKILL first when still running
    except Exception:  # noqa: BLE001,S110 - removed by someone else meanwhile
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
