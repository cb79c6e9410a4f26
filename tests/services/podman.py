"""A real container engine for tests: Podman's Docker-compatible API service, on a unix socket
in a private directory, with its own storage, configuration and a busybox test image.

Nothing outside that directory is used: storage roots, run root, temporary files, network
configuration and the containers.conf that Podman needs here (no default ulimits, which runc
cannot set in this sandbox) all live under it, and the machine's image store is never touched.
Images are never pulled: the test image is imported from a root filesystem built here from
the host's static busybox. crun does not work on these machines; runc does.

Recipe: ../shared/SERVICES.md ("Container engine"). Podman is required, not optional: a
missing podman is an error, because .ci/run installs it.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["IMAGE", "PodmanService", "podman_service"]

#: Reference of the test image (podman import tags it :latest).
IMAGE = "localhost/rra-test-busybox:latest"
#: Applets linked in the image's /bin; the rest of busybox is reachable as 'busybox <applet>'.
APPLETS = ("sh", "echo", "cat", "ls", "id", "env", "sleep", "mkdir", "touch", "true", "false", "ip", "printf")
#: The image's configured PATH, which a run's PATH comes from.
IMAGE_PATH = "/bin:/usr/bin"
STARTUP_TIMEOUT_S = 120.0  # generous: a loaded machine starts services slowly


@dataclass
class PodmanService:
    """A running Podman API service and the test image in its store."""

    base: Path
    url: str
    image: str
    #: The image as the engine reports it: id and registry digests.
    image_id: str = ""
    repo_digests: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    @property
    def global_args(self) -> list[str]:
        """podman's global options that keep it inside ``base``."""
        return ["--runtime", _runc(), "--root", str(self.base / "root"), "--runroot", str(self.base / "run"),
                "--storage-driver", "vfs", "--tmpdir", str(self.base / "tmp"),
                "--cgroup-manager", "cgroupfs", "--events-backend", "file"]

    @property
    def env(self) -> dict[str, str]:
        """The environment podman runs with: our containers.conf, not /etc's."""
        return {**os.environ, "CONTAINERS_CONF": str(self.base / "containers.conf")}

    def podman(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run the podman CLI against this service's store; raises on failure with podman's stderr."""
        proc = subprocess.run(["podman", *self.global_args, *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"podman {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def client(self) -> Any:
        """A docker-py low-level client for the service."""
        import docker

        return docker.APIClient(base_url=self.url, version="1.41", timeout=60)

    def containers(self, label: str) -> list[dict[str, Any]]:
        """Every container (running or not) carrying ``label``."""
        client = self.client()
        try:
            return list(client.containers(all=True, filters={"label": label}))
        finally:
            client.close()


def _runc() -> str:
    path = "/usr/sbin/runc" if os.access("/usr/sbin/runc", os.X_OK) else shutil.which("runc")
    if not path:
        raise RuntimeError("runc is not installed; the container tests need it (apt-get install runc; "
                           ".ci/run installs it)")
    return path


def _busybox() -> str:
    path = "/bin/busybox" if os.access("/bin/busybox", os.X_OK) else shutil.which("busybox")
    if not path:
        raise RuntimeError("busybox is not installed; the container tests build their image from it "
                           "(apt-get install busybox-static; .ci/run installs it)")
    if _dynamically_linked(path):
        raise RuntimeError(f"{path} is dynamically linked, so it cannot run alone in the test image; "
                           f"install busybox-static")
    return path


def _dynamically_linked(path: str) -> bool:
    """Whether the 64-bit little-endian ELF at ``path`` names a program interpreter (PT_INTERP)."""
    import struct

    with open(path, "rb") as handle:
        head = handle.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return False  # not a 64-bit little-endian ELF: let the image build tell
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        handle.seek(phoff)
        table = handle.read(phentsize * phnum)
    return any(struct.unpack_from("<I", table, i * phentsize)[0] == 3 for i in range(phnum))


def _rootfs_tar(busybox: str) -> bytes:
    """A root filesystem: /bin/busybox and RELATIVE applet links (busybox --install makes
    absolute ones, which point out of the image), plus the directories a container expects."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in ("bin", "tmp", "etc", "usr", "usr/bin"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755
            tar.addfile(info)
        with open(busybox, "rb") as handle:
            data = handle.read()
        info = tarfile.TarInfo("bin/busybox")
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
        for applet in APPLETS:
            info = tarfile.TarInfo(f"bin/{applet}")
            info.type, info.linkname = tarfile.SYMTYPE, "busybox"
            tar.addfile(info)
        passwd = b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n"
        info = tarfile.TarInfo("etc/passwd")
        info.size, info.mode = len(passwd), 0o644
        tar.addfile(info, io.BytesIO(passwd))
    return buf.getvalue()


def _ping(url: str) -> bool:
    import http.client
    import socket

    path = url.removeprefix("unix://")

    class Conn(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(2.0)
            self.sock.connect(path)

    conn = Conn("localhost", timeout=2.0)
    try:
        conn.request("GET", "/_ping")
        response = conn.getresponse()
        return response.status == 200 and response.read() == b"OK"
    except OSError:
        return False
    finally:
        conn.close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def podman_service() -> Iterator[PodmanService]:
    """Start the service with the test image; stop it and remove everything on exit."""
    if shutil.which("podman") is None:
        raise RuntimeError("podman is not installed; the container executor's tests need it "
                           "(apt-get install podman runc busybox-static; .ci/run installs them)")
    busybox = _busybox()
    # Short and directly under /tmp: conmon's per-container socket paths must fit in 108 bytes.
    base = Path(tempfile.mkdtemp(prefix="rra-podman-", dir="/tmp"))
    service = PodmanService(base=base, url=f"unix://{base}/podman.sock", image=IMAGE)
    try:
        (base / "tmp").mkdir()
        (base / "networks").mkdir()
        (base / "containers.conf").write_text(
            "[containers]\n"
            "default_ulimits = []\n"
            "\n[network]\n"
            'network_backend = "netavark"\n'
            f'network_config_dir = "{base}/networks"\n',
            encoding="utf-8")
        log = open(base / "service.log", "wb")  # noqa: SIM115 - closed with the service
        try:
            service.process = subprocess.Popen(
                ["podman", *service.global_args, "system", "service", "--time=0", service.url],
                env=service.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        finally:
            log.close()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _ping(service.url):
            if service.process.poll() is not None or time.monotonic() > deadline:
                detail = (base / "service.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"podman system service did not answer on {service.url} within {STARTUP_TIMEOUT_S:g} s "
                                   f"(or exited): {detail}")
            time.sleep(0.05)
        (base / "rootfs.tar").write_bytes(_rootfs_tar(busybox))
        # An ENTRYPOINT the executor must replace, and a PATH it must adopt.
        service.podman("import", "--change", 'ENTRYPOINT ["/bin/echo", "image-entrypoint"]',
                       "--change", f"ENV PATH={IMAGE_PATH}", str(base / "rootfs.tar"), IMAGE)
        client = service.client()
        try:
            attrs = client.inspect_image(IMAGE)
        finally:
            client.close()
        service.image_id = attrs["Id"]
        service.repo_digests = list(attrs.get("RepoDigests") or [])
        yield service
    finally:
        if service.process is not None:
            try:
                service.podman("rm", "--all", "--force", timeout=60)
            except (RuntimeError, subprocess.SubprocessError):
                pass
            _stop(service.process)
        shutil.rmtree(base, ignore_errors=True)
