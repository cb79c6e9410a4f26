"""A streaming tar reader for untrusted layers: bounded memory, every header checked.

It reads ustar, GNU (long names, base-256 sizes) and PAX (``path``, ``linkpath`` and ``size``
records) headers from any object with ``read(n)``, never seeks, and never holds more than one
entry's metadata (capped) in memory. It only parses: what an entry may do to the file system
is for the caller to decide (see :mod:`.unpack`, which also says why this is not ``tarfile``).
Numbers are read as the formats define them: octal or base-256 header fields, and PAX
lengths and sizes of ASCII digits only, at most 20 of them (``int`` alone would take
``'٣'`` or thousands of digits, the second with a ValueError).
"""

from __future__ import annotations

from dataclasses import dataclass

from .compression import Reader
from .errors import UnsafeLayer

__all__ = ["Member", "TarReader"]

BLOCK = 512
_ZERO = bytes(BLOCK)


@dataclass(frozen=True)
class Member:
    """One entry's header, after long-name and PAX records are applied."""

    name: str
    typeflag: bytes
    size: int
    mode: int
    linkname: str


class TarReader:
    """Iterate the members of a tar stream; read each regular member's data before the next."""

    def __init__(self, stream: Reader, *, digest: str | None = None, max_meta_bytes: int = 1024 * 1024,
                 max_name_bytes: int = 4096) -> None:
        self._stream = stream
        self._digest = digest
        self._max_meta = max_meta_bytes
        self._max_name = max_name_bytes
        self._remaining = 0
        self._padding = 0
        self._ended = False
        self._last: str | None = None

    def _unsafe(self, message: str, entry: str | None = None) -> UnsafeLayer:
        return UnsafeLayer(message, digest=self._digest, entry=entry if entry is not None else self._last)

    def _read_exact(self, n: int) -> bytes:
        parts: list[bytes] = []
        while n:
            chunk = self._stream.read(min(n, 1024 * 1024))
            if not chunk:
                raise self._unsafe("the layer's tar stream ends inside an entry")
            parts.append(chunk)
            n -= len(chunk)
        return b"".join(parts)

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes of the current member's data (b"" once it is all read)."""
        n = min(n, self._remaining)
        if n <= 0:
            return b""
        chunk = self._stream.read(n)
        if not chunk:
            raise self._unsafe("the layer's tar stream ends inside an entry")
        self._remaining -= len(chunk)
        return chunk

    def _skip_rest(self) -> None:
        while self._remaining:
            self.read(min(self._remaining, 1024 * 1024))
        if self._padding:
            self._read_exact(self._padding)
            self._padding = 0

    def next(self) -> Member | None:
        """The next member, or None at the end of the archive. Unread data of the previous member
        is skipped."""
        self._skip_rest()
        if self._ended:
            return None
        long_name: str | None = None
        long_link: str | None = None
        pax: dict[str, str] = {}
        while True:
            block = self._stream.read(BLOCK)
            if len(block) < BLOCK and block:
                block += self._read_exact(BLOCK - len(block))
            if not block or block == _ZERO:
                if long_name is not None or long_link is not None or pax:
                    raise self._unsafe("the tar stream ends after an extended header without its entry")
                self._ended = True
                return None
            self._check_sum(block)
            typeflag = block[156:157]
            size = self._number(block[124:136], "size")
            if typeflag in (b"L", b"K", b"x", b"g"):
                if size > self._max_meta:
                    raise self._unsafe(f"an extended header of {size} bytes is larger than the cap of "
                                       f"{self._max_meta}")
                data = self._read_exact(size)
                self._read_exact(-size % BLOCK)
                if typeflag == b"L":
                    long_name = self._text(data.split(b"\x00", 1)[0], "name")
                elif typeflag == b"K":
                    long_link = self._text(data.split(b"\x00", 1)[0], "link target")
                elif typeflag == b"x":
                    pax.update(self._pax(data))
                continue  # 'g' (global) records describe the archive, not entries: ignored
            name = self._text(block[0:100].split(b"\x00", 1)[0], "name")
            if block[257:263] == b"ustar\x00":  # POSIX ustar: a prefix field extends the name
                prefix = block[345:500].split(b"\x00", 1)[0]
                if prefix:
                    name = self._text(prefix, "name") + "/" + name
            linkname = self._text(block[157:257].split(b"\x00", 1)[0], "link target")
            name = pax.get("path", long_name if long_name is not None else name)
            linkname = pax.get("linkpath", long_link if long_link is not None else linkname)
            if "size" in pax:
                pax_size = _decimal(pax["size"])
                if pax_size is None:
                    raise self._unsafe(f"a PAX size record is {_clip(pax['size'])!r}, not a decimal number of "
                                       f"at most {_MAX_DIGITS} ASCII digits", name)
                size = pax_size
            if len(name.encode("utf-8")) > self._max_name:
                raise self._unsafe(f"an entry name is longer than {self._max_name} bytes", name[:200])
            self._last = name
            mode = self._number(block[100:108], "mode")
            # Only regular files carry data; any other member's size is skipped as padding data.
            self._remaining = size
            self._padding = -size % BLOCK
            return Member(name, typeflag, size, mode, linkname)

    def _check_sum(self, block: bytes) -> None:
        stored = self._number(block[148:156], "checksum")
        unsigned = sum(block[:148]) + 8 * 32 + sum(block[156:])
        if stored == unsigned:
            return  # the common case; the signed sum (old tars) walks the bytes in Python, so only when needed
        signed = unsigned - sum(256 for b in block[:148] + block[156:] if b > 127)
        if stored != signed:
            raise self._unsafe("a tar header's checksum is wrong; the layer is corrupt")

    def _number(self, field: bytes, what: str) -> int:
        if field[:1] == b"\x80":  # GNU base-256, positive
            return int.from_bytes(field[1:], "big")
        if field[:1] == b"\xff":
            raise self._unsafe(f"a tar header has a negative {what}")
        text = field.split(b"\x00", 1)[0].strip(b" ")
        if not text:
            return 0
        try:
            return int(text, 8)
        except ValueError:
            raise self._unsafe(f"a tar header's {what} field is {bytes(field)!r}") from None

    def _text(self, raw: bytes, what: str) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._unsafe(f"an entry's {what} is not UTF-8: {raw!r}", raw.decode("utf-8", "replace")) from None

    def _pax(self, data: bytes) -> dict[str, str]:
        records: dict[str, str] = {}
        pos = 0
        while pos < len(data):
            if not data[pos:].strip(b"\x00"):
                break
            space = data.find(b" ", pos)
            length = _decimal(data[pos:space].decode("latin-1")) if space >= 0 else None
            if length is None:
                raise self._unsafe("a PAX header is malformed")
            record = data[space + 1:pos + length]
            if length <= space - pos or pos + length > len(data) or not record.endswith(b"\n") or b"=" not in record:
                raise self._unsafe("a PAX header is malformed")
            key, _, value = record[:-1].partition(b"=")
            records[self._text(key, "PAX key")] = self._text(value, "PAX value")
            pos += length
        return records


#: Most digits of a PAX number: 20 hold any 64-bit size.
_MAX_DIGITS = 20


def _decimal(text: str) -> int | None:
    """``text`` as a number when it is 1 to 20 ASCII digits, else None.

    >>> _decimal("512"), _decimal("\u0663"), _decimal("9" * 5000), _decimal("")
    (512, None, None, None)
    """
    if not 0 < len(text) <= _MAX_DIGITS or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def _clip(text: str) -> str:
    return text if len(text) <= 40 else text[:40] + "..."
