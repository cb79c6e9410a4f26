#!/usr/bin/env python3
"""Benchmark of a model call as a sandboxed cell makes it: from inside a bubblewrap sandbox,
through the cell's relay (127.0.0.1:13131 inside, copied to the proxy's Unix socket) and the
metering proxy, to the scripted loopback model; against the same call made directly to the
model from the host. Target (issue 21): at most 5 ms added at the median.

Usage::

    python benchmarks/bench_cell_relay.py              # 300 calls each way, in 3 alternating blocks
    python benchmarks/bench_cell_relay.py --calls 60

``bench_proxy.py`` times the proxy alone (client on the host); this adds the relay and the
sandbox's network namespace, the whole path of a cell. The client inside is timed by itself (its
own clock), a block of calls at a time; blocks alternate with the host's direct blocks so that
drift hits both. Non-streamed Anthropic Messages calls, a kept-alive connection each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

TARGET_MS = 5.0
BLOCKS = 3

CLIENT = r"""
import http.client, json, os, sys, time
n = int(sys.argv[1])
body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 64,
                   "messages": [{"role": "user", "content": "x" * 2000}]}).encode()
conn = http.client.HTTPConnection("127.0.0.1", 13131)
times = []
for i in range(n + 5):
    t = time.perf_counter()
    conn.request("POST", "/v1/messages", body, {"content-type": "application/json", "x-api-key": "dummy"})
    conn.getresponse().read()
    if i >= 5:
        times.append((time.perf_counter() - t) * 1000)
print(json.dumps(times))
"""


def direct(port: int, n: int) -> list[float]:
    import http.client

    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 64,
                       "messages": [{"role": "user", "content": "x" * 2000}]}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    for i in range(n + 5):
        t = time.perf_counter()
        conn.request("POST", "/v1/messages", body, {"content-type": "application/json", "x-api-key": "dummy"})
        conn.getresponse().read()
        if i >= 5:
            times.append((time.perf_counter() - t) * 1000)
    conn.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls each way (default 300)")
    args = parser.parse_args()
    from rra_tools.agents.cell import make_cell_options, run_cell_command
    from rra_tools.agents.proxy import Budgets
    from rra_tools.agents.scripted import ScriptedReply, ScriptedUpstream, ScriptedUsage
    from rra_tools.model.cell import SandboxLimits

    print(machine())
    per_block = max(1, args.calls // BLOCKS)
    options = make_cell_options("bwrap")
    inside: list[float] = []
    host: list[float] = []
    reply = ScriptedReply("ok", usage=ScriptedUsage(input=500, output=20))
    with ScriptedUpstream([], default=reply) as upstream, tempfile.TemporaryDirectory() as tmp:
        options = make_cell_options("bwrap", [f"anthropic={upstream.url}"])
        work = Path(tmp)
        (work / "ws").mkdir()
        (work / "ws" / "client.py").write_text(CLIENT, encoding="utf-8")
        for block in range(BLOCKS):
            host += direct(upstream.port, per_block)
            logs = work / f"logs-{block}"
            ran = run_cell_command(f"python3 client.py {per_block}", work / "ws", options=options, env={},
                                   limits=SandboxLimits(wall_clock_s=600), budgets=Budgets(), logs=logs,
                                   call_log=logs / "calls.jsonl")
            if ran.exit.exit_status != 0:
                sys.exit(f"the client in the sandbox failed: {(logs / 'reproducer.stderr.log').read_text()}")
            inside += json.loads((logs / "reproducer.stdout.log").read_text())
            if ran.metered.calls != per_block + 5:
                sys.exit(f"the proxy metered {ran.metered.calls} calls, expected {per_block + 5}")

    def pct(values: list[float], p: int) -> float:
        return statistics.quantiles(values, n=100, method="inclusive")[p - 1]

    print(f"{len(host)} calls each way in {BLOCKS} alternating blocks; non-streamed Anthropic Messages\n")
    print(f"{'path':<40} {'p50 ms':>8} {'p99 ms':>8}")
    print(f"{'direct (host -> model)':<40} {pct(host, 50):>8.2f} {pct(host, 99):>8.2f}")
    print(f"{'cell (sandbox -> relay -> proxy -> model)':<40} {pct(inside, 50):>8.2f} {pct(inside, 99):>8.2f}")
    added50, added99 = pct(inside, 50) - pct(host, 50), pct(inside, 99) - pct(host, 99)
    print(f"\nadded by the relay and the proxy: p50 {added50:+.2f} ms, p99 {added99:+.2f} ms")
    print(f"target: at most {TARGET_MS:g} ms added at p50: {'met' if added50 <= TARGET_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
