#!/usr/bin/env python3
"""Benchmark of the metering proxy: the latency it adds to a model call. Target (issue 21): at
most 5 ms added at the median.

Usage::

    python benchmarks/bench_proxy.py               # 400 calls of each kind on each path
    python benchmarks/bench_proxy.py --calls 100   # fewer
    python benchmarks/bench_proxy.py --quick       # 100

Three processes, as in a cell: the scripted loopback model (the upstream), the metering proxy
(listening on TCP and on a Unix socket, as the evaluator runs it) and this one, the client (the
agent's SDK, with a kept-alive connection per path). Each round makes one call on each of three
paths, in turn, so that drift hits all three alike:

- direct: client -> scripted model (TCP);
- proxy TCP: client -> proxy (TCP) -> scripted model;
- proxy Unix: client -> proxy (Unix socket, as the sandbox's relay reaches it) -> scripted model.

Two kinds of call, Anthropic Messages as Claude Code sends them (a 20 KB conversation):
``whole`` (not streamed; the time until the whole answer is read) and ``stream`` (streamed; the
time to the first byte of the body, then the stream is read to its end). 20 rounds of warm-up
are not counted. Printed: p50 and p99 of each, and what the proxy adds at p50 and p99 (the
difference of the percentiles). The proxy's call log is checked at the end: every call metered,
with the script's usage.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

TARGET_MS = 5.0
WARMUP = 20
USAGE = {"input": 2100, "output": 180, "cache_read": 18000, "cache_write": 350}
TEXT = "I ran the training script; the accuracy is 0.912 on the test split, within the paper's interval. " * 3


def serve_upstream() -> None:
    from rra_tools.agents.scripted import ScriptedReply, ScriptedUpstream, ScriptedUsage

    reply = ScriptedReply(TEXT, tool_call=("Bash", {"command": "python3 train.py"}), usage=ScriptedUsage(**USAGE))
    with ScriptedUpstream([], default=reply) as upstream:
        print(upstream.url, flush=True)
        sys.stdin.read()  # until the parent closes it


def serve_proxy(upstream: str, directory: str) -> None:
    from rra_tools.agents.proxy import MeteringProxy, ProxySettings, load_price_table, parse_upstreams

    settings = ProxySettings(upstreams=parse_upstreams([f"anthropic={upstream}"]), keys={"anthropic": "real"},
                             prices=load_price_table(None), call_log=Path(directory) / "calls.jsonl")
    with MeteringProxy(settings, unix_socket=Path(directory) / "proxy.sock", tcp=("127.0.0.1", 0)) as proxy:
        assert proxy.tcp_address is not None
        print(proxy.tcp_address[1], flush=True)
        sys.stdin.read()


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def body(stream: bool) -> bytes:
    turns = [{"role": "user" if n % 2 == 0 else "assistant", "content": "Run the launcher and report. " * 30}
             for n in range(21)]
    return json.dumps({"model": "claude-sonnet-4-5-20250929", "max_tokens": 4096, "stream": stream,
                       "system": "You are a careful reproducer.", "messages": turns,
                       "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]}).encode()


HEADERS = {"Content-Type": "application/json", "x-api-key": "dummy", "anthropic-version": "2023-06-01"}


def timed(conn: http.client.HTTPConnection, data: bytes, stream: bool) -> float:
    """Seconds to the whole answer (whole) or to the first byte of its body (stream)."""
    started = time.perf_counter()
    conn.request("POST", "/v1/messages?beta=true", data, HEADERS)
    response = conn.getresponse()
    if stream:
        first = response.read1(65536)
        elapsed = time.perf_counter() - started
        rest = response.read()
        assert first and rest.endswith(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), rest[-80:]
    else:
        answer = response.read()
        elapsed = time.perf_counter() - started
        assert response.status == 200 and answer.startswith(b'{"id":"msg_'), answer[:200]
    return elapsed


def percentile(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="timed calls of each kind on each path")
    parser.add_argument("--quick", action="store_true", help="100 calls")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-proxy", nargs=2, metavar=("UPSTREAM", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream()
        return
    if args.serve_proxy:
        serve_proxy(*args.serve_proxy)
        return
    calls = 100 if args.quick else args.calls
    print(f"machine: {machine()}")
    directory = tempfile.mkdtemp(prefix="rra-bench-proxy-", dir="/tmp")  # a socket name has at most 107 bytes
    me = [sys.executable, __file__]
    upstream_process = subprocess.Popen([*me, "--serve-upstream"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
    assert upstream_process.stdout is not None and upstream_process.stdin is not None
    upstream = upstream_process.stdout.readline().strip()
    proxy_process = subprocess.Popen([*me, "--serve-proxy", upstream, directory], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
    assert proxy_process.stdout is not None and proxy_process.stdin is not None
    port = int(proxy_process.stdout.readline())
    host, upstream_port = upstream.removeprefix("http://").split(":")
    paths = {"direct": http.client.HTTPConnection(host, int(upstream_port), timeout=30),
             "proxy TCP": http.client.HTTPConnection("127.0.0.1", port, timeout=30),
             "proxy Unix": UnixConnection(f"{directory}/proxy.sock")}
    times: dict[tuple[str, str], list[float]] = {(path, kind): [] for path in paths for kind in ("whole", "stream")}
    payload = {False: body(False), True: body(True)}
    print(f"{calls} calls of each kind on each path after {WARMUP} rounds of warm-up; request body "
          f"{len(payload[False]):,} bytes")
    for n in range(WARMUP + calls):
        for kind, stream in (("whole", False), ("stream", True)):
            for path, conn in paths.items():
                elapsed = timed(conn, payload[stream], stream)
                if n >= WARMUP:
                    times[(path, kind)].append(elapsed)
    for conn in paths.values():
        conn.close()
    for process in (proxy_process, upstream_process):
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)
    lines = [json.loads(line) for line in Path(directory, "calls.jsonl").read_text().splitlines()]
    expected = 2 * 2 * (WARMUP + calls)
    metered = sum(1 for line in lines if line["status"] == 200 and line["input_tokens"] == USAGE["input"]
                  and line["output_tokens"] == USAGE["output"] and line["cache_read_tokens"] == USAGE["cache_read"]
                  and line["cache_write_tokens"] == USAGE["cache_write"])
    print(f"call log: {len(lines)} lines, {metered} metered as scripted (expected {expected})")
    print()
    print(f"{'kind':<7} {'path':<11} {'p50 ms':>8} {'p99 ms':>8} {'added p50':>10} {'added p99':>10}")
    met = True
    for kind in ("whole", "stream"):
        base50, base99 = (percentile(times[("direct", kind)], p) for p in (50, 99))
        for path in paths:
            p50, p99 = (percentile(times[(path, kind)], p) for p in (50, 99))
            added = "" if path == "direct" else f"{(p50 - base50) * 1000:>+10.2f} {(p99 - base99) * 1000:>+10.2f}"
            if path != "direct":
                met = met and (p50 - base50) * 1000 <= TARGET_MS
            print(f"{kind:<7} {path:<11} {p50 * 1000:>8.2f} {p99 * 1000:>8.2f} {added}")
    print()
    print(f"target: at most {TARGET_MS:g} ms added at p50 ('whole': to the whole answer; 'stream': to the first "
          f"byte): {'met' if met and metered == expected else 'NOT met'}")


if __name__ == "__main__":
    main()
