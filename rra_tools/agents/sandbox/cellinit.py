"""The first program inside a sandbox: relays the cell's loopback port to the metering proxy's
Unix socket, then runs the cell's command and ends with it.

Run as a script by the Python the sandbox can see (it imports nothing of rra_tools, so any
Python 3 will do). The sandbox has its own network namespace: ``127.0.0.1:PORT`` here is the
sandbox's own loopback, and this relay is the only thing that listens on it. The relay copies
bytes both ways and understands nothing of HTTP: everything that matters (keys, metering,
budgets) happens in the proxy, outside, where the command cannot reach it. A command that kills
the relay only cuts itself off.

Before the command starts, the largest file a process may write is capped (RLIMIT_FSIZE, the
workspace's quota) and core dumps are off; the sandbox has dropped every capability, so the
command cannot raise those limits again.

Usage: ``python3 cellinit.py [--socket PATH --port N] [--fsize BYTES] -- sh -c COMMAND``
"""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import threading


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        # Half-close so the other direction can finish (a streamed answer after the request).
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(path)
        except OSError:
            client.close()
            continue
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def main(argv: list[str]) -> int:
    """Parse ``argv``, start the relay, run the command; the command's exit status (128+N for a
    signal N, as a shell reports it)."""
    sock = port = fsize = None
    while argv and argv[0] != "--":
        flag, value, argv = argv[0], argv[1], argv[2:]
        if flag == "--socket":
            sock = value
        elif flag == "--port":
            port = int(value)
        elif flag == "--fsize":
            fsize = int(value)
        else:
            sys.stderr.write(f"cellinit: unknown option {flag!r}\n")
            return 125
    command = argv[1:]
    if not command:
        sys.stderr.write("cellinit: no command after --\n")
        return 125
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if fsize is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    if sock is not None and port is not None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        threading.Thread(target=_serve, args=(listener, sock), daemon=True).start()
    # The command gets default dispositions (restore_signals): writing past the quota kills
    # the writer with SIGXFSZ, which the runner reports as the disk limit.
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, restore_signals=True)
    status = proc.wait()
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
