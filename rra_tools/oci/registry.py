"""A registry client on top of oras-py's session and auth: streamed, verified, retried.

oras-py gives us registry authentication (Docker config files, credential helpers, anonymous and
basic-backed bearer tokens) and a configured ``requests`` session. What it lacks is added here:
blobs are streamed from and to files in bounded memory, every downloaded blob is checked against
its digest and size before anyone uses it, manifests are read only up to a size cap, and
transient failures (5xx, 429, dropped connections) are retried with bounded exponential backoff,
each retry reported through the progress callback rather than printed.

oras is imported inside :class:`RegistryClient` so that importing this module stays cheap.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ..errors import ExitStatus
from .errors import DigestMismatch, DocumentTooLarge, LayoutError, OCILayerError, SizeMismatch
from .mediatypes import INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES

if TYPE_CHECKING:
    import requests

__all__ = [
    "CHUNK_SIZE",
    "DEFAULT_MAX_MANIFEST_BYTES",
    "MANIFEST_ACCEPT",
    "OCI_INDEX",
    "OCI_MANIFEST",
    "AuthenticationError",
    "BlobStream",
    "Cancelled",
    "Fetched",
    "IntegrityError",
    "InvalidReference",
    "MalformedError",
    "NotFoundError",
    "Progress",
    "ProgressCallback",
    "Reference",
    "RegistryClient",
    "RegistryError",
    "RetryPolicy",
    "SizeMismatchError",
    "Stats",
    "StreamBroken",
    "TooLargeError",
    "hasher_for",
    "header_count",
    "is_loopback",
    "retry_after_s",
]

T = TypeVar("T")

#: Bytes read, hashed and sent per step: large enough that per-call overhead vanishes, small
#: enough that a few workers stay far below the memory target.
CHUNK_SIZE = 1024 * 1024

#: Cap on manifests when the caller gives none: the packaging format's (4 MiB, the size
#: distribution-spec asks registries and clients to handle); larger ones are refused unread.
DEFAULT_MAX_MANIFEST_BYTES = MAX_MANIFEST_BYTES

OCI_MANIFEST = MANIFEST_MEDIA_TYPE
OCI_INDEX = INDEX_MEDIA_TYPE
#: What we accept when fetching a manifest; Docker types are listed so that registries holding
#: them answer with what they have and the caller can say precisely why it is unusable.
MANIFEST_ACCEPT = (OCI_MANIFEST, OCI_INDEX, "application/vnd.docker.distribution.manifest.v2+json",
                   "application/vnd.docker.distribution.manifest.list.v2+json")

_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_DIGEST = re.compile(r"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_REPO_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")


class RegistryError(OCILayerError):
    """A registry operation failed; the message says which and why. ``code`` is the rule code
    ``rra validate oci://`` reports it under (RRA001: the input cannot be read at all)."""

    exit_status = ExitStatus.FAILED

    code: ClassVar[str] = "RRA001"


class InvalidReference(RegistryError, ValueError):
    """A reference is not ``HOST[:PORT]/REPOSITORY[:TAG][@DIGEST]``."""

    exit_status = ExitStatus.USAGE


class AuthenticationError(RegistryError):
    """The registry refused our credentials, or wants some we do not have."""


class NotFoundError(RegistryError):
    """The registry does not have the manifest, blob or repository."""


# Transport-side errors, reported by `rra validate oci://` under the same codes as the layout
# errors of :mod:`.errors` that mean the same thing.


class IntegrityError(RegistryError):
    """Content does not match its digest; it is never used."""

    code = DigestMismatch.code


class MalformedError(IntegrityError):
    """A manifest or index is not the JSON document its media type requires."""

    code = LayoutError.code


class SizeMismatchError(IntegrityError):
    """Content is not of its declared size; it is never used."""

    code = SizeMismatch.code


class TooLargeError(RegistryError):
    """A manifest or config is larger than the cap; refused before it is read."""

    code = DocumentTooLarge.code


class Cancelled(RegistryError):
    """Stopped because a sibling transfer failed for good (see :attr:`RegistryClient.abort`)."""


class _Transient(RegistryError):
    """A failure worth retrying (5xx, 429, dropped connection)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Reference:
    """``HOST[:PORT]/REPOSITORY[:TAG][@DIGEST]``; an ``oci://`` prefix is accepted and dropped.

    The registry host is required: there is no implicit Docker Hub.

    >>> Reference.parse("localhost:5000/lab/model:v1").repository
    'lab/model'
    >>> Reference.parse("model:v1")
    Traceback (most recent call last):
    ...
    rra_tools.oci.registry.InvalidReference: reference 'model:v1' has no registry host; write HOST[:PORT]/REPOSITORY:TAG, e.g. 'localhost:5000/model:v1'
    """

    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @classmethod
    def parse(cls, text: str) -> Reference:
        """Parse ``text``; InvalidReference says what is wrong."""
        raw = text[len("oci://"):] if text.startswith("oci://") else text
        head, sep, rest = raw.partition("/")
        if not sep or not ("." in head or ":" in head or head == "localhost") or not rest:
            example = f"'localhost:5000/{raw}'" if "/" not in raw else "'localhost:5000/lab/model:v1'"
            raise InvalidReference(f"reference {text!r} has no registry host; write HOST[:PORT]/REPOSITORY:TAG, "
                                   f"e.g. {example}")
        digest = None
        if "@" in rest:
            rest, digest = rest.split("@", 1)
            if not _DIGEST.match(digest):
                raise InvalidReference(f"digest {digest!r} in {text!r} is not sha256:<64 hex> or sha512:<128 hex>")
        tag = None
        last = rest.rsplit("/", 1)[-1]
        if ":" in last:
            rest, tag = rest.rsplit(":", 1)
            if not _TAG.match(tag):
                raise InvalidReference(f"tag {tag!r} in {text!r} is not valid (letters, digits, '_', '.', '-'; "
                                       "at most 128)")
        for part in rest.split("/"):
            if not _REPO_COMPONENT.match(part):
                raise InvalidReference(f"repository {rest!r} in {text!r} is not valid: path components are "
                                       "lowercase letters and digits separated by '.', '_', '__' or '-'")
        return cls(head, rest, tag, digest)

    @property
    def reference(self) -> str:
        """What goes after ``/manifests/``: the digest when there is one, else the tag (or 'latest')."""
        return self.digest or self.tag or "latest"

    def with_digest(self, digest: str) -> Reference:
        """The same repository pinned to ``digest`` (the tag is dropped)."""
        return Reference(self.registry, self.repository, None, digest)

    def with_tag(self, tag: str) -> Reference:
        """The same repository at ``tag``."""
        return Reference(self.registry, self.repository, tag, None)

    def __str__(self) -> str:
        out = f"{self.registry}/{self.repository}"
        if self.tag:
            out += f":{self.tag}"
        if self.digest:
            out += f"@{self.digest}"
        return out


def is_loopback(registry: str) -> bool:
    """Whether ``registry`` (host or host:port) names this machine: localhost or a loopback IP."""
    host = registry
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def hasher_for(digest: str) -> Any:
    """A fresh hashlib object for the algorithm of ``digest``."""
    algorithm = digest.split(":", 1)[0]
    if algorithm not in ("sha256", "sha512"):
        raise IntegrityError(f"unsupported digest algorithm {algorithm!r} in {digest!r}")
    return hashlib.new(algorithm)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries: ``attempts`` tries in all, waits of ``backoff_s`` doubling up to ``max_backoff_s``."""

    attempts: int = 5
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0

    def wait(self, attempt: int, hint: float | None = None) -> float:
        """Seconds to wait before try ``attempt + 1`` (``attempt`` counts from 1)."""
        base = min(self.max_backoff_s, self.backoff_s * 2.0 ** (attempt - 1))
        return min(self.max_backoff_s, max(base, hint or 0.0))


@dataclass(frozen=True)
class Progress:
    """One thing that happened: ``event`` is 'start', 'bytes', 'done', 'skip', 'retry' or 'manifest'.

    For 'bytes', ``done`` of ``total`` bytes of blob ``digest`` have been transferred.
    """

    event: str
    digest: str = ""
    done: int = 0
    total: int = 0
    detail: str = ""


ProgressCallback = Callable[[Progress], None]


@dataclass
class Stats:
    """What a client did, counted: what the tests and the benchmark compare."""

    heads: int = 0
    uploads: int = 0
    downloads: int = 0
    bytes_up: int = 0
    bytes_down: int = 0
    retries: int = 0
    uploaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Fetched:
    """A manifest (or other small document) as the registry served it, already verified."""

    data: bytes
    digest: str
    media_type: str


class RegistryClient:
    """Talks to one registry. Thread-safe for the blob operations, which workers run in parallel.

    ``plain_http`` None means: plain HTTP for a loopback registry (nothing leaves the machine, and
    local test registries rarely have certificates), HTTPS otherwise. ``verify_tls`` False skips
    certificate verification (``--insecure``).
    """

    def __init__(self, registry: str, *, plain_http: bool | None = None, verify_tls: bool = True,
                 retry: RetryPolicy | None = None, progress: ProgressCallback | None = None,
                 auth_configs: Sequence[str] = (), timeout_s: float = 300.0, workers: int = 4) -> None:
        from http.cookiejar import DefaultCookiePolicy

        import oras.auth
        import oras.container
        import requests
        import requests.adapters

        self.registry = registry
        self.plain_http = is_loopback(registry) if plain_http is None else plain_http
        self.scheme = "http" if self.plain_http else "https"
        self.retry = retry or RetryPolicy()
        self.progress = progress
        self.workers = max(1, workers)
        self.stats = Stats()
        self._timeout = (10.0, timeout_s)
        self._lock = threading.Lock()
        #: Set when a sibling operation failed for good: others stop retrying and give up.
        self.abort = threading.Event()
        # The session is set up as oras.provider.Registry sets up its own (cookies ignored: some
        # registries take them for a browser); oras.provider itself is not imported because it
        # pulls in jsonschema's format checkers, over a second of start-up for nothing we use.
        self.session = requests.Session()
        self.session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
        adapter = requests.adapters.HTTPAdapter(pool_connections=2, pool_maxsize=max(10, 2 * self.workers))
        self.session.mount(f"{self.scheme}://", adapter)
        self._verify = verify_tls
        if not verify_tls:
            import urllib3

            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        # oras's token backend: anonymous and credential-backed bearer tokens, sharing our session.
        self._auth = oras.auth.get_auth_backend("token", self.session, self.plain_http, tls_verify=verify_tls)
        # Credentials from ~/.docker/config.json (+ extra files), credential helpers, or oras's
        # ORAS_USER / ORAS_PASS variables; none is fine for anonymous registries.
        self._auth.load_configs(oras.container.Container(f"{registry}/probe"), configs=list(auth_configs) or None)
        user, password = os.environ.get("ORAS_USER"), os.environ.get("ORAS_PASS")
        if user and password:
            self._auth.set_basic_auth(user, password)
        self._basic_challenged = False

    # -- plumbing ---------------------------------------------------------------------------

    def url(self, repository: str, *parts: str) -> str:
        """``<scheme>://<registry>/v2/<repository>/<parts...>``."""
        return f"{self.scheme}://{self.registry}/v2/{repository}/" + "/".join(parts)

    def emit(self, event: Progress) -> None:
        """Report ``event`` to the progress callback, if any."""
        if self.progress is not None:
            self.progress(event)

    def _auth_headers(self) -> dict[str, str]:
        token = getattr(self._auth, "token", None)
        if token:
            return {"Authorization": f"Bearer {token}"}
        basic = getattr(self._auth, "_basic_auth", None)
        if basic and self._basic_challenged:
            return {"Authorization": f"Basic {basic}"}
        return {}

    def _answer_challenge(self, response: requests.Response) -> bool:
        challenge = response.headers.get("Www-Authenticate", "")
        scheme = challenge.split(" ", 1)[0].lower()
        if scheme == "basic":
            # oras's token backend only speaks Bearer; for a Basic challenge we send the
            # credentials it loaded from the Docker config.
            self._basic_challenged = True
            return bool(getattr(self._auth, "_basic_auth", None))
        if scheme == "bearer":
            # refresh=True: a token we hold may be for another scope (pull vs push).
            _, changed = self._auth.authenticate_request(response, {}, refresh=True)
            return bool(changed and getattr(self._auth, "token", None))
        return False

    def send(self, method: str, url: str, *, headers: Mapping[str, str] | None = None,
             body: Callable[[], Any] | bytes | None = None, stream: bool = False,
             allow_redirects: bool = True) -> requests.Response:
        """One HTTP exchange, answering one authentication challenge. ``body`` may be a factory
        so that a streamed body can be sent again after the challenge. Network failures and
        5xx/429 answers raise the internal transient error; see :meth:`retrying`."""
        import requests

        response: requests.Response | None = None
        for round_ in range(2):
            sent = {**(headers or {}), **self._auth_headers()}
            data = body() if callable(body) else body
            try:
                response = self.session.request(method, url, headers=sent, data=data, stream=stream,
                                                timeout=self._timeout, verify=self._verify,
                                                allow_redirects=allow_redirects)
            except (requests.ConnectionError, requests.Timeout) as exc:
                raise _Transient(f"{method} {_short(url)}: {_reason(exc)}") from None
            if response.status_code == 401 and round_ == 0:
                answered = self._answer_challenge(response)
                response.close()
                if not answered:
                    raise AuthenticationError(f"{self.registry} requires authentication for {method} "
                                              f"{_short(url)}; log in (docker login / oras login) or set "
                                              "ORAS_USER and ORAS_PASS")
                continue
            break
        assert response is not None
        status = response.status_code
        if status in (401, 403):
            message = _error_text(response)
            response.close()
            raise AuthenticationError(f"{self.registry} denied {method} {_short(url)} ({status}): {message}")
        if status in _TRANSIENT_STATUS:
            message = _error_text(response)
            response.close()
            raise _Transient(f"{method} {_short(url)}: {status} {message}".rstrip(),
                             retry_after_s(response.headers.get("Retry-After")))
        return response

    def retrying(self, what: str, action: Callable[[], T], *, digest: str = "") -> T:
        """Run ``action``; on a transient failure wait and try again, ``retry.attempts`` times in all."""
        import requests

        attempt = 0
        while True:
            attempt += 1
            try:
                return action()
            except (_Transient, requests.exceptions.ChunkedEncodingError,
                    requests.exceptions.ConnectionError) as exc:
                if attempt >= self.retry.attempts or self.abort.is_set():
                    raise RegistryError(f"{what} failed after {attempt} attempts: {exc}") from None
                wait = self.retry.wait(attempt, getattr(exc, "retry_after", None))
                with self._lock:
                    self.stats.retries += 1
                self.emit(Progress("retry", digest, attempt, self.retry.attempts,
                                   f"{what}: {exc}; retrying in {wait:.1f} s"))
                time.sleep(wait)

    # -- blobs ------------------------------------------------------------------------------

    def blob_exists(self, repository: str, digest: str, size: int | None = None) -> bool:
        """HEAD the blob: True when the registry has it (with the expected size, when given)."""
        def head() -> bool:
            response = self.send("HEAD", self.url(repository, "blobs", digest))
            response.close()
            with self._lock:
                self.stats.heads += 1
            if response.status_code == 200:
                length = header_count(response.headers.get("Content-Length"))
                return size is None or length is None or length == size
            if response.status_code == 404:
                return False
            raise RegistryError(f"HEAD blob {digest} in {repository}: unexpected status {response.status_code}")

        return self.retrying(f"checking blob {digest}", head, digest=digest)

    def transfer_all(self, transfer: Callable[[str, str, int, Path], object], repository: str,
                     blobs: Mapping[str, int], path_of: Callable[[str], Path]) -> None:
        """Run ``transfer(repository, digest, size, path)`` (upload_blob or download_blob) for
        every blob on ``workers`` threads, largest first; the first failure stops the rest and
        is raised (not the "stopped" errors of the others)."""
        from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait

        order = sorted(blobs.items(), key=lambda item: (-item[1], item[0]))
        if not order:
            return
        with ThreadPoolExecutor(max_workers=min(self.workers, len(order))) as pool:
            futures: list[Future[Any]] = [pool.submit(transfer, repository, digest, size, path_of(digest))
                                          for digest, size in order]
            _, pending = wait(futures, return_when=FIRST_EXCEPTION)
            if pending:
                # One blob failed for good: the others stop retrying, those not started are dropped.
                self.abort.set()
                for future in pending:
                    future.cancel()
        self.abort.clear()
        errors = [e for e in (None if f.cancelled() else f.exception() for f in futures) if e is not None]
        errors.sort(key=lambda e: isinstance(e, Cancelled))
        if errors:
            raise errors[0]

    def upload_blob(self, repository: str, digest: str, size: int, path: Path) -> bool:
        """Upload the file at ``path`` as blob ``digest`` unless the registry has it; True when uploaded.

        The file is streamed in :data:`CHUNK_SIZE` pieces (POST for a session, then one PUT with
        the whole body); a failed try starts a fresh session. The registry checks the digest.
        """
        if self.blob_exists(repository, digest, size):
            with self._lock:
                self.stats.skipped.append(digest)
            self.emit(Progress("skip", digest, size, size, "exists"))
            return False
        actual = path.stat().st_size
        if actual != size:
            raise SizeMismatchError(f"blob {digest} at {path} is {actual} bytes; its descriptor says {size}")

        def attempt() -> None:
            self.emit(Progress("start", digest, 0, size))
            location = self._start_upload(repository)
            # An empty body must be bytes: an empty iterable would be sent chunked.
            body: Callable[[], Any] | bytes = b"" if size == 0 else (lambda: _FileBody(
                path, size, lambda n: self.emit(Progress("bytes", digest, n, size)), self.abort))
            response = self.send("PUT", _with_query(location, digest=digest), body=body,
                                 headers={"Content-Type": "application/octet-stream"})
            with response:
                if response.status_code in (200, 201, 204):
                    return
                if response.status_code == 400:
                    raise IntegrityError(f"the registry refused blob {digest}: {_error_text(response)}")
                raise RegistryError(f"uploading blob {digest}: {response.status_code} {_error_text(response)}")

        self.retrying(f"uploading blob {digest}", attempt, digest=digest)
        with self._lock:
            self.stats.uploads += 1
            self.stats.bytes_up += size
            self.stats.uploaded.append(digest)
        self.emit(Progress("done", digest, size, size))
        return True

    def upload_bytes(self, repository: str, data: bytes, digest: str | None = None) -> tuple[str, bool]:
        """Upload a small in-memory blob (a referrer's file, an empty config); (digest, uploaded)."""
        digest = digest or "sha256:" + hashlib.sha256(data).hexdigest()
        if self.blob_exists(repository, digest, len(data)):
            with self._lock:
                self.stats.skipped.append(digest)
            return digest, False

        def attempt() -> None:
            location = self._start_upload(repository)
            response = self.send("PUT", _with_query(location, digest=digest), body=data,
                                 headers={"Content-Type": "application/octet-stream"})
            with response:
                if response.status_code not in (200, 201, 204):
                    raise RegistryError(f"uploading blob {digest}: {response.status_code} {_error_text(response)}")

        self.retrying(f"uploading blob {digest}", attempt, digest=digest)
        with self._lock:
            self.stats.uploads += 1
            self.stats.bytes_up += len(data)
            self.stats.uploaded.append(digest)
        return digest, True

    def _start_upload(self, repository: str) -> str:
        response = self.send("POST", self.url(repository, "blobs", "uploads/"), body=b"",
                             headers={"Content-Length": "0"})
        with response:
            if response.status_code not in (200, 201, 202):
                raise RegistryError(f"starting an upload to {repository}: {response.status_code} "
                                    f"{_error_text(response)}")
            location = response.headers.get("Location", "")
        if not location:
            raise RegistryError(f"starting an upload to {repository}: the registry sent no Location")
        if location.startswith("/"):
            location = f"{self.scheme}://{self.registry}{location}"
        return location

    def _blob_response(self, repository: str, digest: str) -> requests.Response:
        """The streamed 200 answer to GET blob ``digest``; NotFoundError or RegistryError otherwise."""
        response = self.send("GET", self.url(repository, "blobs", digest), stream=True)
        if response.status_code == 200:
            return response
        with response:
            if response.status_code == 404:
                raise NotFoundError(f"blob {digest} is not in {self.registry}/{repository}")
            raise RegistryError(f"GET blob {digest}: {response.status_code} {_error_text(response)}")

    def download_blob(self, repository: str, digest: str, size: int, dest: Path) -> None:
        """Stream blob ``digest`` into ``dest``, hashing as it arrives; ``dest`` appears only when
        the size and digest match. IntegrityError names the digest otherwise."""
        def attempt() -> None:
            self.emit(Progress("start", digest, 0, size))
            with self._blob_response(repository, digest) as response:
                length = header_count(response.headers.get("Content-Length"))
                if length is not None and length != size:
                    raise SizeMismatchError(f"blob {digest}: the registry sends {length} bytes; its descriptor "
                                            f"says {size}")
                hasher = hasher_for(digest)
                fd, tmp = tempfile.mkstemp(prefix=".part-", dir=dest.parent)
                try:
                    received = 0
                    with os.fdopen(fd, "wb") as out:
                        for chunk in response.iter_content(CHUNK_SIZE):
                            if self.abort.is_set():
                                raise Cancelled(f"download of blob {digest} stopped: another blob failed")
                            received += len(chunk)
                            if received > size:
                                raise SizeMismatchError(f"blob {digest}: more than the {size} bytes its "
                                                        "descriptor declares")
                            hasher.update(chunk)
                            out.write(chunk)
                            self.emit(Progress("bytes", digest, received, size))
                    if received != size:
                        raise _Transient(f"blob {digest}: connection ended after {received} of {size} bytes")
                    actual = f"{digest.split(':', 1)[0]}:{hasher.hexdigest()}"
                    if actual != digest:
                        raise IntegrityError(f"blob {digest} does not match its digest: the registry sent "
                                             f"content with digest {actual}")
                    os.replace(tmp, dest)
                except BaseException:
                    _unlink(tmp)
                    raise

        self.retrying(f"downloading blob {digest}", attempt, digest=digest)
        with self._lock:
            self.stats.downloads += 1
            self.stats.bytes_down += size
        self.emit(Progress("done", digest, size, size))

    def open_blob(self, repository: str, digest: str, size: int) -> BlobStream:
        """Blob ``digest`` as a stream to read once (for unpacking while it arrives). Starting the
        request is retried like any other; the caller hashes what it reads and checks the size
        and digest at the end. A connection lost mid-blob raises :class:`StreamBroken`, after
        which the caller may fall back to :meth:`download_blob`, which retries whole blobs."""
        def start() -> requests.Response:
            response = self._blob_response(repository, digest)
            length = header_count(response.headers.get("Content-Length"))
            if length is not None and length != size:
                response.close()
                raise SizeMismatchError(f"blob {digest}: the registry sends {length} bytes; its descriptor says {size}")
            return response

        self.emit(Progress("start", digest, 0, size))
        return BlobStream(self, self.retrying(f"downloading blob {digest}", start, digest=digest), digest, size)

    def fetch_blob_bytes(self, repository: str, digest: str, size: int, max_bytes: int) -> bytes:
        """A small blob (a config) in memory, refused before reading when over ``max_bytes``."""
        if size > max_bytes:
            raise TooLargeError(f"blob {digest} is {size} bytes, more than the cap of {max_bytes}")

        def attempt() -> bytes:
            with self._blob_response(repository, digest) as response:
                data = _read_capped(response, min(size, max_bytes), f"blob {digest}")
            if len(data) != size:
                raise SizeMismatchError(f"blob {digest} is {len(data)} bytes; its descriptor says {size}")
            _check_digest(data, digest, f"blob {digest}")
            return data

        data = self.retrying(f"downloading blob {digest}", attempt, digest=digest)
        with self._lock:
            self.stats.downloads += 1
            self.stats.bytes_down += size
        return data

    # -- manifests --------------------------------------------------------------------------

    def get_manifest(self, repository: str, reference: str, *, max_bytes: int = DEFAULT_MAX_MANIFEST_BYTES,
                     accept: Iterable[str] = MANIFEST_ACCEPT) -> Fetched:
        """Fetch a manifest or index by tag or digest, verified.

        Refused when larger than ``max_bytes`` (checked on the declared length, then while
        reading). By digest, the content must hash to it; by tag, to the registry's
        Docker-Content-Digest when it sends one.
        """
        def attempt() -> Fetched:
            response = self.send("GET", self.url(repository, "manifests", reference), stream=True,
                                 headers={"Accept": ", ".join(accept)})
            with response:
                if response.status_code == 404:
                    raise NotFoundError(f"manifest {reference!r} is not in {self.registry}/{repository}")
                if response.status_code != 200:
                    raise RegistryError(f"GET manifest {reference}: {response.status_code} "
                                        f"{_error_text(response)}")
                data = _read_capped(response, max_bytes, f"manifest {reference!r}")
                media_type = response.headers.get("Content-Type", "").split(";", 1)[0].strip()
                claimed = response.headers.get("Docker-Content-Digest")
            expected = reference if _DIGEST.match(reference) else claimed
            if expected is not None and _DIGEST.match(expected):
                _check_digest(data, expected, f"manifest {reference!r}")
                digest = expected
            else:
                digest = "sha256:" + hashlib.sha256(data).hexdigest()
            try:
                declared = json.loads(data).get("mediaType")
            except (ValueError, AttributeError):
                raise MalformedError(f"manifest {reference!r} ({digest}) is not a JSON object") from None
            return Fetched(data, digest, declared if isinstance(declared, str) and declared else media_type)

        return self.retrying(f"fetching manifest {reference}", attempt)

    def put_manifest(self, repository: str, reference: str, data: bytes, media_type: str) -> tuple[str, bool]:
        """PUT manifest bytes unchanged under ``reference``; (digest, registry processed ``subject``).

        The second value is True when the registry answered with OCI-Subject, i.e. it keeps
        the referrers list itself.
        """
        digest = "sha256:" + hashlib.sha256(data).hexdigest()

        def attempt() -> tuple[str, bool]:
            response = self.send("PUT", self.url(repository, "manifests", reference), body=data,
                                 headers={"Content-Type": media_type})
            with response:
                if response.status_code not in (200, 201, 202):
                    raise RegistryError(f"the registry refused manifest {digest} for {repository}:{reference}: "
                                        f"{response.status_code} {_error_text(response)}")
                echoed = response.headers.get("Docker-Content-Digest")
                subject = response.headers.get("OCI-Subject")
            if echoed and echoed != digest:
                raise IntegrityError(f"manifest {digest}: the registry stored it as {echoed}")
            return digest, bool(subject)

        result = self.retrying(f"pushing manifest {digest}", attempt, digest=digest)
        self.emit(Progress("manifest", digest, len(data), len(data), f"{repository}:{reference}"))
        return result

    def referrers_api(self, repository: str, digest: str, artifact_type: str | None = None,
                      max_bytes: int = DEFAULT_MAX_MANIFEST_BYTES) -> list[dict[str, Any]] | None:
        """Descriptors from ``GET /v2/<name>/referrers/<digest>`` (all pages), or None when the
        registry lacks the API (404), which means: use the referrers tag schema."""
        url: str | None = self.url(repository, "referrers", digest)
        if artifact_type:
            url = _with_query(url or "", artifactType=artifact_type)
        found: list[dict[str, Any]] = []
        pages = 0
        while url is not None:
            def attempt(page_url: str = url) -> tuple[bytes | None, str | None]:
                response = self.send("GET", page_url, stream=True, headers={"Accept": OCI_INDEX})
                with response:
                    if response.status_code == 404:
                        return None, None
                    if response.status_code != 200:
                        raise RegistryError(f"GET referrers of {digest}: {response.status_code} "
                                            f"{_error_text(response)}")
                    content_type = response.headers.get("Content-Type", "").split(";", 1)[0].strip()
                    if content_type and content_type != OCI_INDEX:
                        # Not an index: a registry without the API answering something else.
                        return None, None
                    data = _read_capped(response, max_bytes, f"referrers of {digest}")
                    return data, _next_link(response.headers.get("Link"), page_url)

            data, next_url = self.retrying(f"listing referrers of {digest}", attempt)
            if data is None:
                return None if pages == 0 else found
            pages += 1
            try:
                index = json.loads(data)
                manifests = index.get("manifests", [])
            except (ValueError, AttributeError):
                raise IntegrityError(f"the referrers list of {digest} is not a JSON image index") from None
            found.extend(m for m in manifests if isinstance(m, dict))
            url = next_url
        return found

    def delete_manifest(self, repository: str, digest: str) -> None:
        """Delete a manifest by digest (best effort is the caller's choice)."""
        response = self.send("DELETE", self.url(repository, "manifests", digest))
        response.close()
        if response.status_code not in (200, 202, 404):
            raise RegistryError(f"DELETE manifest {digest}: {response.status_code}")

    def close(self) -> None:
        """Close pooled connections."""
        self.session.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _FileBody:
    """An iterable request body over a file: requests takes its length for Content-Length and
    urllib3 sends each 1 MiB piece as it is read, so memory stays bounded whatever the size."""

    def __init__(self, path: Path, size: int, sent: Callable[[int], None], abort: threading.Event) -> None:
        self._path = path
        self._size = size
        self._sent = sent
        self._abort = abort

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[bytes]:
        done = 0
        with open(self._path, "rb", buffering=0) as handle:
            while done < self._size:
                if self._abort.is_set():
                    raise Cancelled(f"upload of {self._path.name} stopped: another blob failed")
                chunk = handle.read(min(CHUNK_SIZE, self._size - done))
                if not chunk:
                    raise IntegrityError(f"{self._path} ended after {done} of {self._size} bytes")
                done += len(chunk)
                yield chunk
                self._sent(done)


class StreamBroken(RegistryError):
    """The connection was lost in the middle of a streamed blob (see :meth:`RegistryClient.open_blob`)."""


class BlobStream:
    """A blob being received: ``read(n)`` gives up to ``n`` bytes, b"" at its end. Reports
    progress like a download; closing it (or leaving its ``with`` block) ends the request."""

    def __init__(self, client: RegistryClient, response: requests.Response, digest: str, size: int) -> None:
        self._client = client
        self._response = response
        self._chunks = response.iter_content(CHUNK_SIZE)
        self._piece = b""
        self._at = 0
        self._digest = digest
        self._size = size
        self.received = 0

    def read(self, n: int = -1, /) -> bytes:
        """Up to ``n`` bytes (all that remains of the current piece when ``n`` is -1)."""
        import requests

        if self._at >= len(self._piece):
            try:
                piece = next(self._chunks, b"")
            except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError) as exc:
                raise StreamBroken(f"blob {self._digest}: the connection broke after {self.received} bytes: "
                                   f"{_reason(exc)}") from None
            if not piece:
                if self.received < self._size:
                    raise StreamBroken(f"blob {self._digest}: connection ended after {self.received} of "
                                       f"{self._size} bytes")
                return b""
            self._piece, self._at = piece, 0
            self.received += len(piece)
            self._client.emit(Progress("bytes", self._digest, self.received, self._size))
        left = len(self._piece) - self._at
        take = left if n < 0 else min(n, left)
        # A whole piece is handed on as it is: no copy on the path of the file data.
        out = self._piece if take == len(self._piece) else self._piece[self._at:self._at + take]
        self._at += take
        return out

    def close(self) -> None:
        """End the request (a blob read to its end is reported done)."""
        self._response.close()
        if self.received == self._size and self._at >= len(self._piece):
            self._client.emit(Progress("done", self._digest, self._size, self._size))

    def __enter__(self) -> BlobStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def header_count(value: str | None) -> int | None:
    """A count header (``Content-Length``) as an int: 1 to 20 ASCII digits, else None (ignored).

    ``str.isdigit`` alone takes ``'²'``, which ``int`` then refuses with a ValueError (header
    values arrive decoded as Latin-1, where byte 0xB2 is that superscript).

    >>> header_count("1024"), header_count("\u00b2"), header_count("9" * 5000)
    (1024, None, None)
    """
    if value is None or not 0 < len(value) <= 20 or not value.isascii() or not value.isdigit():
        return None
    return int(value)


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait, None when absent or unreadable (any form
    is tolerated; :meth:`RetryPolicy.wait` caps the wait anyway).

    RFC 9110 allows delay-seconds or an HTTP-date; a date in the past means no wait.

    >>> retry_after_s("3"), retry_after_s("\u00b2"), retry_after_s("soon")
    (3.0, None, None)
    >>> retry_after_s("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0)
    6.0
    """
    if value is None:
        return None
    text = value.strip()
    seconds = header_count(text)
    if seconds is not None:
        return float(seconds)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def _read_capped(response: requests.Response, max_bytes: int, what: str) -> bytes:
    length = header_count(response.headers.get("Content-Length"))
    if length is not None and length > max_bytes:
        raise TooLargeError(f"{what} is {length} bytes, more than the cap of {max_bytes}")
    parts: list[bytes] = []
    total = 0
    for chunk in response.iter_content(64 * 1024):
        total += len(chunk)
        if total > max_bytes:
            raise TooLargeError(f"{what} is more than the cap of {max_bytes} bytes")
        parts.append(chunk)
    return b"".join(parts)


def _check_digest(data: bytes, digest: str, what: str) -> None:
    hasher = hasher_for(digest)
    hasher.update(data)
    actual = f"{digest.split(':', 1)[0]}:{hasher.hexdigest()}"
    if actual != digest:
        raise IntegrityError(f"{what} does not match digest {digest}: the content has digest {actual}")


def _error_text(response: requests.Response) -> str:
    """The registry's error codes and messages (OCI error JSON), else a short body excerpt."""
    try:
        raw = response.content[:4096]
    except Exception:  # noqa: BLE001 - a dropped connection while reading an error body
        return response.reason or ""
    try:
        errors = json.loads(raw).get("errors", [])
        text = "; ".join(f"{e.get('code', '')} {e.get('message', '')}".strip() for e in errors if isinstance(e, dict))
        if text:
            return text
    except (ValueError, AttributeError):
        pass
    snippet = raw.decode("utf-8", "replace").strip().splitlines()
    return snippet[0][:200] if snippet else (response.reason or "")


def _with_query(url: str, **params: str) -> str:
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


def _next_link(header: str | None, current: str) -> str | None:
    """The rel="next" target of an RFC 5988 Link header, made absolute."""
    from urllib.parse import urljoin

    if not header:
        return None
    for part in header.split(","):
        if 'rel="next"' in part or "rel=next" in part:
            start, end = part.find("<"), part.find(">")
            if 0 <= start < end:
                return urljoin(current, part[start + 1:end])
    return None


def _short(url: str) -> str:
    return url.split("?", 1)[0]


def _reason(exc: Exception) -> str:
    text = str(exc)
    for marker in ("Connection refused", "Connection reset", "Connection aborted", "timed out",
                   "Name or service not known", "Remote end closed"):
        if marker in text:
            return marker.lower()
    return type(exc).__name__


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
