"""A real OCI registry for the tests: Distribution 2.8 (Debian's ``docker-registry``) on loopback.

The registry stores into a temporary directory with filesystem storage, so tests can reach into
its blobs (to tamper with them) and kill and restart the process (to interrupt a push).
"""

from __future__ import annotations

import http.client
import io
import http.server
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["FaultProxy", "RegistryService", "free_port", "registry_binary"]


def registry_binary() -> str | None:
    """The ``docker-registry`` (Debian) or ``registry`` executable, or None."""
    return shutil.which("docker-registry") or shutil.which("registry")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RegistryService:
    """One registry process: ``start``, ``stop``, ``kill``, ``restart`` on a fixed loopback port."""

    def __init__(self, root: Path, binary: str | None = None, port: int | None = None,
                 htpasswd: Path | None = None) -> None:
        found = binary or registry_binary()
        if found is None:
            raise RuntimeError("docker-registry is not installed (apt-get install docker-registry; .ci/run does)")
        self.binary = found
        self.root = root
        self.data = root / "data"
        self.config = root / "config.yml"
        self.log = root / "registry.log"
        self.port = port or free_port()
        #: An htpasswd file (bcrypt): the registry then demands HTTP Basic credentials.
        self.htpasswd = htpasswd
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        """``127.0.0.1:<port>``: the registry part of references."""
        return f"127.0.0.1:{self.port}"

    def write_config(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            "version: 0.1\n"
            "log: {level: warn, accesslog: {disabled: true}}\n"
            "storage:\n"
            f"  filesystem: {{rootdirectory: {self.data}}}\n"
            "  delete: {enabled: true}\n"
            "http:\n"
            f"  addr: 127.0.0.1:{self.port}\n"
            + (f"auth:\n  htpasswd: {{realm: rra-tests, path: {self.htpasswd}}}\n" if self.htpasswd else ""),
            encoding="utf-8",
        )

    def start(self, timeout_s: float = 120.0) -> None:
        """Start the process and wait until ``GET /v2/`` answers 200 (401 with ``htpasswd``)."""
        self.write_config()
        log = open(self.log, "ab")  # noqa: SIM115 - closed with the service
        try:
            self.process = subprocess.Popen([self.binary, "serve", str(self.config)], stdout=log, stderr=log,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"docker-registry exited with {self.process.returncode}: {self.tail()}")
            try:
                with urllib.request.urlopen(f"http://{self.host}/v2/", timeout=1) as response:
                    if response.status == 200:
                        return
            except urllib.error.HTTPError as exc:
                if exc.code == 401 and self.htpasswd is not None:
                    return  # up, and asking for credentials as configured
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"docker-registry did not answer on {self.host} within {timeout_s} s: {self.tail()}")

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL after 10 s)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None

    def kill(self) -> None:
        """SIGKILL: the registry disappears mid-request, as in a crash."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def restart(self) -> None:
        """Start again on the same port with the same storage."""
        self.kill()
        self.start()

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def blob_file(self, digest: str) -> Path:
        """Where the registry's filesystem driver keeps blob ``digest``."""
        algorithm, _, hexpart = digest.partition(":")
        return self.data / "docker" / "registry" / "v2" / "blobs" / algorithm / hexpart[:2] / hexpart / "data"

    def tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class FaultProxy:
    """A loopback reverse proxy in front of a real registry that answers 500 to the first N
    requests of chosen kinds, then forwards everything: fault injection, not a mock.

    Faults are 500s, or ``fault_status`` with ``fault_headers`` (a 429 with a Retry-After, say);
    ``cut_blobs`` blob GETs of 1 MiB or more are cut off halfway through their body.
    Kinds: 'head' (HEAD blob), 'upload-start' (POST uploads), 'blob-put' (PUT upload), 'blob-get',
    'manifest-get', 'manifest-put', 'other'. ``counts`` records every request seen by kind.

    With ``referrers_api=True`` it also serves ``GET /v2/<name>/referrers/<digest>`` from the
    manifests with a ``subject`` pushed through it, and answers such pushes with ``OCI-Subject``:
    a stand-in for a registry that implements the Referrers API (no such registry is packaged for
    these machines), in front of real storage.
    """

    def __init__(self, upstream: str, failures: dict[str, int] | None = None, referrers_api: bool = False,
                 fault_status: int = 500, fault_headers: dict[str, bytes] | None = None, cut_blobs: int = 0) -> None:
        import threading

        self.upstream = upstream
        self.failures = dict(failures or {})
        #: The status of an injected fault, and extra headers sent with it as raw bytes (any
        #: bytes: a registry may send a Retry-After in any script).
        self.fault_status = fault_status
        self.fault_headers = dict(fault_headers or {})
        #: Blob GETs (of 1 MiB or more: layers, not configs) to answer with their headers and only
        #: half their body, then a closed connection.
        self.cut_blobs = cut_blobs
        self.counts: dict[str, int] = {}
        self.injected = 0
        self.referrers_api = referrers_api
        self.referrers: dict[str, list[dict[str, object]]] = {}
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
                pass

            def do_GET(self) -> None:  # the stdlib's name
                proxy._handle(self)

            do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_GET  # noqa: N815

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def kind(method: str, path: str) -> str:
        if "/blobs/uploads/" in path:
            return "upload-start" if method == "POST" else "blob-put" if method == "PUT" else "other"
        if "/blobs/" in path:
            return "head" if method == "HEAD" else "blob-get" if method == "GET" else "other"
        if "/manifests/" in path:
            return {"GET": "manifest-get", "HEAD": "manifest-get", "PUT": "manifest-put"}.get(method, "other")
        return "other"

    def _handle(self, h: http.server.BaseHTTPRequestHandler) -> None:
        import json
        import re

        method, path = h.command, h.path
        kind = self.kind(method, path)
        length = int(h.headers.get("Content-Length") or 0)
        with self._lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            fail = self.failures.get(kind, 0) > 0
            if fail:
                self.failures[kind] -= 1
                self.injected += 1
        if fail:
            _drain(h.rfile, length)
            # send_header writes Latin-1: decoding the raw bytes so puts them on the wire as they are.
            extra = {key: value.decode("latin-1") for key, value in self.fault_headers.items()}
            self._reply(h, self.fault_status, b'{"errors":[{"code":"UNKNOWN","message":"injected fault"}]}',
                        {"Content-Type": "application/json", **extra})
            return
        match = re.match(r"^/v2/(.+)/referrers/(sha256:[0-9a-f]{64})", path)
        if self.referrers_api and match and method == "GET":
            index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                     "manifests": self.referrers.get(f"{match[1]}@{match[2]}", [])}
            self._reply(h, 200, json.dumps(index).encode(),
                        {"Content-Type": "application/vnd.oci.image.index.v1+json"})
            return
        connection = http.client.HTTPConnection(self.upstream, timeout=300)
        try:
            connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for key, value in h.headers.items():
                if key.lower() not in ("connection", "keep-alive", "transfer-encoding"):
                    connection.putheader(key, value)
            connection.endheaders()
            body_copy = b""
            remaining = length
            while remaining > 0:
                chunk = h.rfile.read(min(1 << 20, remaining))
                if not chunk:
                    break
                remaining -= len(chunk)
                connection.send(chunk)
                if kind == "manifest-put" and len(body_copy) < (4 << 20):
                    body_copy += chunk
            response = connection.getresponse()
            headers = {k: v for k, v in response.getheaders()
                       if k.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length")}
            extra = self._note_subject(path, body_copy, response.status) if kind == "manifest-put" else {}
            headers.update(extra)
            declared = response.getheader("Content-Length")
            if method == "HEAD":
                h.send_response(response.status)
                for key, value in headers.items():
                    h.send_header(key, value)
                if declared is not None:
                    h.send_header("Content-Length", declared)
                h.end_headers()
                return
            if declared is None:
                data = response.read()
                self._reply(h, response.status, data, headers)
                return
            with self._lock:
                cut = (kind == "blob-get" and response.status == 200 and self.cut_blobs > 0
                       and int(declared) >= 1 << 20)
                if cut:
                    self.cut_blobs -= 1
                    self.injected += 1
            h.send_response(response.status)
            for key, value in headers.items():
                h.send_header(key, value)
            h.send_header("Content-Length", declared)
            h.end_headers()
            if cut:  # a connection lost mid-blob: half the body, then nothing
                h.wfile.write(response.read(int(declared) // 2))
                h.wfile.flush()
                h.close_connection = True
                return
            while chunk := response.read(1 << 20):
                h.wfile.write(chunk)
        except OSError:
            h.close_connection = True
        finally:
            connection.close()

    def _note_subject(self, path: str, body: bytes, status: int) -> dict[str, str]:
        import hashlib
        import json
        import re

        if not self.referrers_api or status != 201:
            return {}
        try:
            manifest = json.loads(body)
        except ValueError:
            return {}
        subject = manifest.get("subject") if isinstance(manifest, dict) else None
        if not isinstance(subject, dict):
            return {}
        name = re.match(r"^/v2/(.+)/manifests/", path)
        assert name is not None
        descriptor: dict[str, object] = {"mediaType": manifest.get("mediaType"),
                                         "digest": "sha256:" + hashlib.sha256(body).hexdigest(), "size": len(body)}
        artifact_type = manifest.get("artifactType") or (manifest.get("config") or {}).get("mediaType")
        if artifact_type:
            descriptor["artifactType"] = artifact_type
        if manifest.get("annotations"):
            descriptor["annotations"] = manifest["annotations"]
        listed = self.referrers.setdefault(f"{name[1]}@{subject['digest']}", [])
        if all(d["digest"] != descriptor["digest"] for d in listed):
            listed.append(descriptor)
        return {"OCI-Subject": str(subject["digest"])}

    @staticmethod
    def _reply(h: http.server.BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str]) -> None:
        h.send_response(status)
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)


def _drain(stream: io.BufferedIOBase, length: int) -> None:
    while length > 0:
        chunk = stream.read(min(1 << 20, length))
        if not chunk:
            return
        length -= len(chunk)
