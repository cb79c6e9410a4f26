"""The container executor: each run in a fresh container of the artifact's image, through the
Docker Engine API (Docker itself, or Podman's compatible service).

What the container gets:

- the artifact root bind-mounted **read-only** at ``/rra/artifact``; the directories of the
  launcher's declared outputs (a file output's directory, a directory output itself)
  bind-mounted **read-write** at their place inside it, so outputs land where the local
  executor would put them and are checked by the same code;
- a fresh tmpfs as ``HOME`` at ``/rra/home``, the launcher's ``cwd`` under ``/rra/artifact``;
- the local executor's clean environment, with the image's own PATH;
- no network (``network_mode="none"``) unless one is asked for;
- the assigned GPUs as Docker device requests. Podman's compatible API accepts device
  requests and ignores them, so a launcher that needs GPUs is refused there before anything
  is created, rather than run without them.

The image is the manifest's ``environment.image`` (or an override) and is recorded with the
id the engine reports. At the timeout, or when stopped, the container gets SIGTERM, then
SIGKILL after the grace period; whatever happens, the container is removed.

The container is the engine's child, not ours, so a parent-death signal cannot tie it to
``rra run``. A guard (:class:`ContainerGuard`) does: if ``rra run`` dies without removing the
container (SIGKILL, the out-of-memory killer), the guard stops and removes it, holding the
run's locks (GPUs, outputs, the pending record of :mod:`.pending`) until it is gone; the next
``rra run`` or ``rra results`` then finishes the run's record, as for the local executor.

The ``docker`` package (extra ``container``) is imported only when an engine is contacted.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from ..io.paths import lexical_issue, resolve_inside
from ..model.vocab import Executor, RunStatus
from .gpus import GpuInfo
from .concurrency import RunSlot
from .errors import EngineUnavailable, EngineUnsupported, ImageUnavailable, PlanError
from .gpus import GpuLease, held_for_run, inventory
from .local import Progress, RunOptions, RunResult, Tee, clean_environment
from .outcome import host_record, record_head, signal_name, snapshot_before, write_record
from .pending import Pending
from .plan import Artifact, RunPlan
from .records import new_run_dir

__all__ = [
    "ARTIFACT_MOUNT",
    "DEFAULT_ENGINE_URL",
    "ENGINE_URL_ENV",
    "GUARD_LABEL",
    "HOME_MOUNT",
    "LABEL",
    "ContainerGuard",
    "ContainerOptions",
    "Engine",
    "Image",
    "check_plan",
    "connect",
    "engine_url",
    "execute",
    "image_reference",
    "prepare",
    "resolve_image",
    "writable_dirs",
]

ARTIFACT_MOUNT = "/rra/artifact"
HOME_MOUNT = "/rra/home"
ENGINE_URL_ENV = "RRA_CONTAINER_HOST"
DEFAULT_ENGINE_URL = "unix:///var/run/docker.sock"
#: Label on every container the executor creates (value: the run directory), to find leftovers.
LABEL = "org.rra.run"
#: Label holding a token unique to one run, by which its guard finds the container.
GUARD_LABEL = "org.rra.guard"
#: PATH of a run whose image does not set one: what Docker gives such containers.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_SIGTERM, _SIGKILL = 15, 9
#: API version of the first request, which is unversioned anyway; device requests need >= 1.40.
_PROBE_API_VERSION = "1.40"


class ContainerOptions(RunOptions):
    """RunOptions plus where the engine is, which image, which network. Its own fields (keyword
    arguments, after RunOptions's):

    - ``image``: image reference to run instead of the manifest's environment.image.
    - ``engine_url``: engine address; None: RRA_CONTAINER_HOST, else DOCKER_HOST, else
      DEFAULT_ENGINE_URL.
    - ``network``: network mode ('bridge', 'host', a network name); None: no network at all.
    - ``engine``: a connected engine to reuse across runs; None connects (and disconnects) per run.
    - ``pull``: pull the image when the engine does not have it.
    """

    __slots__ = ("image", "engine_url", "network", "engine", "pull")

    def __init__(self, *, image: str | None = None, engine_url: str | None = None, network: str | None = None,
                 engine: Engine | None = None, pull: bool = True, **options: Any) -> None:
        super().__init__(**options)
        self.image, self.engine_url, self.network, self.engine, self.pull = image, engine_url, network, engine, pull


def engine_url(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The engine address: ``explicit``, else RRA_CONTAINER_HOST, else DOCKER_HOST, else the Docker socket.

    >>> engine_url(None, {"DOCKER_HOST": "tcp://10.0.0.5:2375"})
    'tcp://10.0.0.5:2375'
    """
    env = os.environ if environ is None else environ
    return explicit or env.get(ENGINE_URL_ENV) or env.get("DOCKER_HOST") or DEFAULT_ENGINE_URL


def _reason(exc: BaseException) -> str:
    """The most telling part of a client error: the innermost OS error, else the message."""
    seen: set[int] = set()
    stack: list[object] = [exc]
    while stack:
        item = stack.pop()
        if id(item) in seen or not isinstance(item, BaseException):
            continue
        seen.add(id(item))
        if isinstance(item, OSError) and item.strerror:
            return item.strerror
        stack.extend([item.__cause__, item.__context__, *item.args])
    explanation = getattr(exc, "explanation", None)
    return str(explanation or exc)


@dataclass(frozen=True)
class Engine:
    """A container engine that answered: its address, name and version, and the API client."""

    url: str
    name: str
    version: str
    api: Any

    @property
    def description(self) -> str:
        """E.g. 'Podman Engine 4.3.1'."""
        return f"{self.name} {self.version}".strip()

    @property
    def honours_device_requests(self) -> bool:
        """Whether GPU device requests take effect; Podman's compatible API drops them silently."""
        return "podman" not in self.name.lower()

    def close(self) -> None:
        """Close the client's connections."""
        try:
            self.api.close()
        except Exception:  # noqa: BLE001,S110 - closing a broken connection must not mask the run's outcome
            pass


def connect(url: str | None = None, environ: Mapping[str, str] | None = None, timeout_s: float = 60.0) -> Engine:
    """Connect to the engine at ``url`` (see :func:`engine_url`) and identify it from /version.

    EngineUnavailable names the address when it does not answer.
    """
    env = os.environ if environ is None else environ
    address = engine_url(url, env)
    # Without the 'container' extra this raises ImportError, which the CLI names in one place
    # for every extra (rra_tools.cli.extras).
    import docker
    from docker.errors import DockerException

    tls: Any = False
    if not url and not env.get(ENGINE_URL_ENV) and env.get("DOCKER_HOST"):
        # DOCKER_HOST comes with DOCKER_TLS_VERIFY / DOCKER_CERT_PATH; honour them as docker does.
        tls = docker.utils.kwargs_from_env(environment=dict(env)).get("tls", False)
    try:
        # One unversioned /version both identifies the engine and gives the API version to speak
        # (docker's version="auto" would ask again, and Podman takes half a second to answer).
        probe = docker.APIClient(base_url=address, version=_PROBE_API_VERSION, timeout=timeout_s, tls=tls)
        try:
            info = probe.version(api_version=False)
        finally:
            probe.close()
        api = docker.APIClient(base_url=address, version=str(info.get("ApiVersion") or _PROBE_API_VERSION),
                               timeout=timeout_s, tls=tls)
    except (DockerException, OSError) as exc:  # requests' errors are OSErrors
        raise EngineUnavailable(f"cannot reach the container engine at {address!r}: {_reason(exc)}") from None
    name, version = "Docker Engine", str(info.get("Version", ""))
    for component in info.get("Components") or []:
        cname = str(component.get("Name", ""))
        if "podman" in cname.lower():
            name, version = cname, str(component.get("Version", version))
            break
    else:
        platform = str((info.get("Platform") or {}).get("Name", ""))
        if "podman" in platform.lower():
            name = "Podman Engine"
    return Engine(address, name, version, api)


@dataclass(frozen=True)
class Image:
    """An image as the engine has it."""

    reference: str
    #: The engine's image id: the digest of the image configuration ('sha256:...').
    id: str
    repo_digests: tuple[str, ...]
    #: PATH from the image's configured environment, if it sets one.
    path: str | None


def image_reference(artifact: Artifact, override: str | None = None) -> str:
    """``override``, else the manifest's environment.image; ImageUnavailable when neither is given."""
    if override:
        return override
    image = artifact.manifest.environment.image
    if not image:
        raise ImageUnavailable("the manifest declares no environment.image; give an image with --image")
    return image


def _pull(engine: Engine, reference: str) -> str | None:
    """Pull ``reference``; the engine's error message, or None when it reported none."""
    try:
        for event in engine.api.pull(reference, stream=True, decode=True):
            if isinstance(event, dict) and event.get("error"):
                return str(event["error"])
    except Exception as exc:  # noqa: BLE001 - any failure to pull is reported the same way
        return _reason(exc)
    return None


def resolve_image(engine: Engine, reference: str, pull: bool = True) -> Image:
    """The image ``reference`` on ``engine``, pulled first when absent and ``pull`` is set."""
    from docker.errors import DockerException, ImageNotFound

    try:
        try:
            attrs = engine.api.inspect_image(reference)
        except ImageNotFound:
            if not pull:
                raise ImageUnavailable(f"image {reference!r} is not on the container engine at "
                                       f"{engine.url!r}") from None
            error = _pull(engine, reference)
            try:
                attrs = engine.api.inspect_image(reference)
            except ImageNotFound:
                raise ImageUnavailable(f"image {reference!r} is not on the container engine at {engine.url!r} "
                                       f"and cannot be pulled: {error or 'no reason given'}") from None
    except (DockerException, OSError) as exc:
        raise EngineUnavailable(f"cannot inspect image {reference!r} on the container engine at "
                                f"{engine.url!r}: {_reason(exc)}") from None
    env = (attrs.get("Config") or {}).get("Env") or []
    path = next((item.split("=", 1)[1] for item in env if item.startswith("PATH=")), None)
    return Image(reference, str(attrs["Id"]), tuple(attrs.get("RepoDigests") or ()), path)


def prepare(artifact: Artifact, plans: Iterable[RunPlan], image: str | None = None, url: str | None = None,
            environ: Mapping[str, str] | None = None) -> tuple[Engine, Image]:
    """Connect to the engine, resolve the image and check every plan before anything runs, so
    that a missing engine or image, or GPUs on an engine that ignores them, is refused up front.
    The engine is closed when a check fails; otherwise the caller closes it."""
    engine = connect(url, environ)
    try:
        resolved = resolve_image(engine, image_reference(artifact, image))
        for plan in plans:
            check_plan(engine, plan)
    except BaseException:
        engine.close()
        raise
    return engine, resolved


def writable_dirs(plan: RunPlan) -> list[str]:
    """Directories the launcher may write, relative to the root: each file output's directory and
    each directory output, none nested in another.

    PlanError for an output directly in the root, which stays read-only. Outputs whose path
    leaves the root are left out here; the record reports them.
    """
    dirs: set[str] = set()
    for ident, rel, fmt in plan.outputs:
        if lexical_issue(rel) is not None:
            continue
        norm = posixpath.normpath(rel.replace("\\", "/"))
        directory = norm if fmt == "directory" else posixpath.dirname(norm)
        if directory in ("", "."):
            raise PlanError(f"launcher {plan.launcher.id!r}: output {ident!r} ({rel}) is directly in the "
                            f"artifact root, which the container executor mounts read-only; declare it "
                            f"inside a directory")
        dirs.add(directory)
    return [d for d in sorted(dirs) if not any(d.startswith(f"{other}/") for other in dirs)]


def check_plan(engine: Engine, plan: RunPlan) -> None:
    """Refuse, before anything is created, a run the engine cannot give what it needs."""
    needed = plan.launcher.resources.gpus
    if needed and not engine.honours_device_requests:
        raise EngineUnsupported(
            f"launcher {plan.launcher.id!r} needs {needed} GPU(s), but the container engine at "
            f"{engine.url!r} is {engine.description}, whose Docker-compatible API ignores GPU device "
            f"requests; run it on Docker with the NVIDIA Container Toolkit, or with --executor local")
    writable_dirs(plan)


def _options(options: RunOptions | None) -> ContainerOptions:
    if isinstance(options, ContainerOptions):
        return options
    if options is None:
        return ContainerOptions()
    return ContainerOptions(**{name: getattr(options, name) for name in RunOptions.field_names()})


def execute(plan: RunPlan, options: RunOptions | None = None) -> RunResult:
    """Run ``plan`` in a container and write its record.

    Raises (and records nothing) only when no run could be set up: the engine does not answer
    (EngineUnavailable), cannot honour the launcher's GPUs (EngineUnsupported), the image is
    missing (ImageUnavailable), an output sits in the read-only root (PlanError), or the GPUs
    are taken (GpuUnavailable). Whatever the container does, a truthful record is written and
    the container is removed.
    """
    opts = _options(options)
    environ = dict(os.environ if opts.environ is None else opts.environ)
    engine = opts.engine or connect(opts.engine_url, environ)
    try:
        check_plan(engine, plan)
        image = resolve_image(engine, image_reference(plan.artifact, opts.image), pull=opts.pull)
        gpus = list(opts.gpus) if opts.gpus is not None else inventory(environ)
        with held_for_run(plan, gpus, environ, opts.gpu_lease) as (lease, slot):
            return _Run(plan, opts, engine, image, gpus, lease, slot, environ).run()
    finally:
        if opts.engine is None:
            engine.close()


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _pump(stream: Iterable[tuple[bytes | None, bytes | None]], out: Tee, err: Tee) -> None:
    try:
        for out_chunk, err_chunk in stream:
            for tee, chunk in ((out, out_chunk), (err, err_chunk)):
                if chunk and not tee.write(chunk):
                    return
    except Exception:  # noqa: BLE001,S110 - the attach connection ends when the container goes away
        pass


def _env_dict(items: Iterable[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in items:
        key, _, value = item.partition("=")
        env[key] = value
    return env


class ContainerGuard:
    """Stops and removes a run's container if ``rra run`` dies without doing it.

    As the local executor's :class:`~rra_tools.run.local.Watchdog`: a shell in its own session
    (so a terminal's Ctrl-C or a kill of rra's group does not reach it) waits on a pipe whose only
    writer is this process. When the run ends, :meth:`dismiss` tells it so. When this process
    dies in any way, the kernel closes the pipe: the shell reads end-of-file and execs
    :mod:`rra_tools.run._container_guard`, which stops (SIGTERM, then SIGKILL after the grace
    period) and removes every container labelled with the run's token. The shell inherits the
    run's locked descriptors (``fds``), so they stay locked until the container is gone. It costs
    a millisecond per run; Python starts only when it has work to do.
    """

    _SCRIPT = 'read line; [ "$line" = done ] && exit 0; exec "$0" -m rra_tools.run._container_guard "$@"'

    def __init__(self, url: str, token: str, grace_s: float, fds: tuple[int, ...], environ: Mapping[str, str]) -> None:
        # The guard imports this package: from wherever this process imported it.
        package_dir = str(Path(__file__).resolve().parents[2])
        env = {**environ, "PYTHONPATH": os.pathsep.join(p for p in (package_dir, environ.get("PYTHONPATH")) if p)}
        self.proc: subprocess.Popen[bytes] | None
        try:
            self.proc = subprocess.Popen(["/bin/sh", "-c", self._SCRIPT, sys.executable, url, token, f"{grace_s:g}"],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                                         pass_fds=fds, env=env)
        except OSError:  # no /bin/sh: the run goes on, unguarded
            self.proc = None

    def dismiss(self) -> None:
        """The container is removed: let the guard exit, and wait for it, so that its copies of
        the locks are closed before this process lets go of its own."""
        if self.proc is None or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write(b"done\n")
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


class _Run:
    """One container run, from the run directory to the written record."""

    def __init__(self, plan: RunPlan, opts: ContainerOptions, engine: Engine, image: Image,
                 gpus: list[GpuInfo], lease: GpuLease, slot: RunSlot, environ: Mapping[str, str]) -> None:
        self.plan, self.opts, self.engine, self.image, self.gpus = plan, opts, engine, image, gpus
        self.slot = slot
        self.environ = environ
        self.lock_fds = (*lease.fds, *slot.fds)
        self.token = uuid.uuid4().hex
        self.api = engine.api
        self.assigned = [g.index for g in lease.devices]
        self.messages: list[str] = []
        self.status = RunStatus.COMPLETED
        self.exit_status: int | None = None
        self.killed_by: int | None = None
        self.network = opts.network or "none"
        # The engine exposes exactly the requested devices, numbered from 0 inside the container.
        visible = ",".join(str(i) for i in range(len(self.assigned))) if self.assigned else None
        self.env = clean_environment(plan.env, HOME_MOUNT, visible, path=image.path or DEFAULT_PATH)
        self.created_dirs: list[Path] = []

    def run(self) -> RunResult:
        plan = self.plan
        started = _now()
        directory = new_run_dir(plan.artifact.runs_dir, plan.launcher.id, plan.seed, started, plan.repeat)
        host = host_record(plan, Executor.CONTAINER, self.gpus, None)
        info = {"engine": self.engine.description, "image": self.image.reference, "image_id": self.image.id,
                "repo_digests": list(self.image.repo_digests), "network": self.network}
        pending = Pending.start(directory, {
            **record_head(plan, executor=Executor.CONTAINER, started=started, host=host, assigned=self.assigned,
                          environment=self.env),
            "container": info})
        try:
            record = self._run(directory, started, host, info, pending.fd)
        except BaseException:
            os.close(pending.fd)  # left in place: the next rra run or rra results finishes it
            raise
        pending.finish()
        return RunResult(record, directory)

    def _run(self, directory: Path, started: datetime, host: dict[str, Any], info: dict[str, Any],
             pending_fd: int) -> dict[str, Any]:
        plan = self.plan
        recorded_env = self.env
        before = snapshot_before(plan)
        started_epoch = time.time()
        t0 = time.monotonic()
        with open(directory / "stdout.log", "wb") as out_log, open(directory / "stderr.log", "wb") as err_log:
            cwd = resolve_inside(plan.artifact.root, plan.cwd, kind="dir")
            if cwd.path is None:
                self.messages.append(f"working directory {plan.cwd!r} is not a directory inside the artifact "
                                     f"({cwd.issue.value if cwd.issue else 'unusable'})")
                self.status = RunStatus.FAILED
            else:
                guard = ContainerGuard(self.engine.url, self.token, self.opts.kill_grace_s,
                                       (*self.lock_fds, pending_fd), self.environ)
                try:
                    recorded_env = self._in_container(directory, cwd.path, out_log, err_log, t0)
                finally:
                    guard.dismiss()
        ended = _now()
        duration = time.monotonic() - t0
        # Mount points made for this run and left empty were not produced by the launcher.
        for made in reversed(self.created_dirs):
            try:
                made.rmdir()
            except OSError:
                pass
        return write_record(plan, directory, executor=Executor.CONTAINER, started=started, ended=ended,
                            duration_s=duration, started_epoch=started_epoch, status=self.status,
                            exit_status=self.exit_status, killed_by=self.killed_by, host_gpus=self.gpus,
                            assigned=self.assigned, environment=recorded_env, messages=self.messages,
                            container=info, before=before, host=host, concurrent=self.slot.concurrent)

    def _mounts(self) -> list[Any]:
        from docker.types import Mount

        real_root = os.path.realpath(self.plan.artifact.root)
        mounts = [Mount(ARTIFACT_MOUNT, real_root, type="bind", read_only=True)]
        for rel in writable_dirs(self.plan):
            real = self._make_dir(real_root, rel)
            if real is not None and real != real_root:
                target = posixpath.join(ARTIFACT_MOUNT, Path(real).relative_to(real_root).as_posix())
                mounts.append(Mount(target, real, type="bind", read_only=False))
        return mounts

    def _make_dir(self, real_root: str, rel: str) -> str | None:
        """The real path of ``rel``, created step by step (and remembered, to undo when left
        empty); None when it leaves the root or is not a directory, which the record then reports
        for the output itself."""
        current = real_root
        for part in rel.split("/"):
            step = os.path.join(current, part)
            if not os.path.lexists(step):
                try:
                    os.mkdir(step)
                except OSError as exc:
                    self.messages.append(f"cannot create output directory {rel!r}: {exc.strerror or exc}")
                    return None
                self.created_dirs.append(Path(step))
            current = os.path.realpath(step)
            if not (current == real_root or current.startswith(real_root + os.sep)) or not os.path.isdir(current):
                return None
        return current

    def _create(self, directory: Path, cwd: Path) -> str:
        from docker.types import DeviceRequest

        plan = self.plan
        requests = None
        if self.assigned:
            requests = [DeviceRequest(device_ids=[str(i) for i in self.assigned], capabilities=[["gpu"]])]
        host_config = self.api.create_host_config(
            mounts=self._mounts(),
            tmpfs={HOME_MOUNT: "rw,mode=1777"},
            network_mode=self.network,
            device_requests=requests,
        )
        rel_cwd = cwd.relative_to(os.path.realpath(plan.artifact.root)).as_posix()
        created = self.api.create_container(
            self.image.id,
            # argv exactly: the image's ENTRYPOINT and CMD are replaced, not prefixed.
            entrypoint=[plan.argv[0]],
            command=plan.argv[1:],
            working_dir=posixpath.normpath(posixpath.join(ARTIFACT_MOUNT, rel_cwd)),
            environment=self.env,
            labels={LABEL: str(directory.relative_to(plan.artifact.root)), GUARD_LABEL: self.token,
                    "org.rra.artifact": plan.artifact.manifest.id, "org.rra.launcher": plan.launcher.id},
            host_config=host_config,
            stdin_open=False,
            tty=False,
            # docker-py would add proxy variables from ~/.docker/config.json: not declared, not wanted.
            use_config_proxy=False,
        )
        return str(created["Id"])

    def _in_container(self, directory: Path, cwd: Path, out_log: IO[bytes], err_log: IO[bytes],
                      t0: float) -> dict[str, str]:
        """Create, start, wait for and remove the container; the environment it was given."""
        from docker.errors import APIError, DockerException

        recorded = self.env
        cid: str | None = None
        reader: threading.Thread | None = None
        try:
            cid = self._create(directory, cwd)
            # The engine's view of the environment: ours plus what the image and the engine add.
            config = self.api.inspect_container(cid).get("Config") or {}
            engine_env = _env_dict(config.get("Env") or [])
            recorded = {**{k: engine_env[k] for k in self.env if k in engine_env},
                        **dict(sorted((k, v) for k, v in engine_env.items() if k not in self.env))} or self.env
            if self.opts.stop is not None and self.opts.stop.is_set():
                self.status = RunStatus.INTERRUPTED
                self.messages.append("interrupted before the container started")
                return recorded
            try:
                # Attached before the start so that no output is lost. Podman prepares the
                # container when attaching, so a command that does not exist fails here already.
                stream = self.api.attach(cid, stdout=True, stderr=True, stream=True, logs=True, demux=True)
                secrets = self.plan.secret_values
                tees = (Tee(out_log, "stdout", self.opts.on_output, secrets),
                        Tee(err_log, "stderr", self.opts.on_output, secrets))
                reader = threading.Thread(target=_pump, args=(stream, *tees), daemon=True)
                reader.start()
                self.api.start(cid)
            except APIError as exc:
                self.status = RunStatus.FAILED
                self.messages.append(f"cannot start {self.plan.argv[0]!r}: {_reason(exc)}")
                return recorded
            self._wait(cid, t0)
        except KeyboardInterrupt:
            self.status = RunStatus.INTERRUPTED
            self.messages.append("interrupted while the container was being set up")
        except (DockerException, OSError) as exc:
            self.status = RunStatus.FAILED
            self.messages.append(f"the container engine at {self.engine.url!r} failed: {_reason(exc)}")
        finally:
            if cid is not None:
                self._remove(cid)
            if reader is not None:
                reader.join(timeout=5.0)
                if reader.is_alive():
                    self.messages.append("the container's output stream did not end; the logs may be incomplete")
                for tee in tees:
                    tee.finish()
        return recorded

    def _remove(self, cid: str) -> None:
        try:
            self.api.remove_container(cid, force=True, v=True)
        except Exception as exc:  # noqa: BLE001 - the record must still be written
            self.messages.append(f"container {cid[:12]} could not be removed: {_reason(exc)}")

    def _kill(self, cid: str, sig: int) -> None:
        try:
            self.api.kill(cid, signal=signal_name(sig))
        except Exception:  # noqa: BLE001,S110 - it may have exited in between; the wait tells
            pass

    def _stop(self, cid: str, done: threading.Event) -> int:
        """SIGTERM, then SIGKILL after the grace period; the signal that ended the container."""
        self._kill(cid, _SIGTERM)
        if done.wait(self.opts.kill_grace_s):
            return _SIGTERM
        self._kill(cid, _SIGKILL)
        done.wait(30.0)
        return _SIGKILL

    def _wait(self, cid: str, t0: float) -> None:
        """Wait for the container, enforcing the timeout and the stop event; sets the outcome."""
        plan, opts = self.plan, self.opts
        done = threading.Event()
        box: dict[str, Any] = {}

        def waiter() -> None:
            try:
                box["result"] = self.api.wait(cid, timeout=None)
            except Exception as exc:  # noqa: BLE001 - read back through inspect below
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=waiter, daemon=True).start()
        sent: int | None = None
        next_progress = t0 + opts.progress_interval_s
        try:
            while not done.wait(0.05):
                now = time.monotonic()
                if opts.stop is not None and opts.stop.is_set():
                    sent = self._stop(cid, done)
                    self.status = RunStatus.INTERRUPTED
                    self.messages.append(f"interrupted after {now - t0:.1f} s; container stopped with "
                                         f"{signal_name(sent)}")
                    break
                if now - t0 > plan.timeout_s:
                    sent = self._stop(cid, done)
                    self.status = RunStatus.TIMEOUT
                    self.messages.append(f"timed out after {plan.timeout_s:g} s; container stopped with "
                                         f"{signal_name(sent)}")
                    break
                if opts.on_progress is not None and now >= next_progress:
                    next_progress = now + opts.progress_interval_s
                    opts.on_progress(Progress(plan.launcher.id, plan.seed, now - t0, plan.expected_s,
                                              plan.timeout_s))
        except KeyboardInterrupt:
            sent = self._stop(cid, done)
            self.status = RunStatus.INTERRUPTED
            self.messages.append(f"interrupted; container stopped with {signal_name(sent)}")
        state = self.api.inspect_container(cid).get("State") or {}
        result = box.get("result")
        code: int | None = None
        if isinstance(result, dict) and isinstance(result.get("StatusCode"), int):
            code = result["StatusCode"]
        elif isinstance(state.get("ExitCode"), int) and not state.get("Running"):
            code = state["ExitCode"]
        if sent is not None:
            self.killed_by = sent
            # 128 + N is how the container's init reports death by signal N.
            self.exit_status = None if code is None or code == 128 + sent else code
        elif state.get("OOMKilled"):
            self.status = RunStatus.FAILED
            self.killed_by = _SIGKILL
            self.messages.append("process was killed by the out-of-memory killer (SIGKILL)")
        elif code is None:
            self.status = RunStatus.FAILED
            self.messages.append(f"the container engine did not report an exit status: "
                                 f"{_reason(box['error']) if 'error' in box else 'unknown'}")
        else:
            self.exit_status = code
            if code != 0:
                self.messages.append(f"process exited with status {code}")
