"""A reply body read within a size cap, as sent and once inflated.

aiohttp inflates a compressed body whole, so a 1 MB gzip body that inflates to 1 GB took
a run to 2.2 GB. Here the body is read as it arrives and inflated in bounded steps, and
either size past the cap ends the read with an error saying which. Only the encodings
the client asks for (gzip, deflate) are accepted.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

# Far above any chat completion (a 32k-token reply is ~150 KB of JSON), far below a
# size that strains memory with a thousand calls in flight.
MAX_REPLY_BYTES = 16 * 1024 * 1024
ACCEPTED_ENCODINGS = "gzip, deflate"
CHUNK = 64 * 1024  # bytes read from the socket at a time


class ReplyBodyError(ValueError):
    """A body past the cap, or in an encoding the client did not ask for."""


def _inflater(encoding: str, first: bytes) -> zlib._Decompress | None:
    """The decompressor for `encoding` (None: the body is as sent). Deflate comes wrapped
    in zlib's header or, from some servers, raw, as aiohttp accepts it."""
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(wbits=31)
    if encoding == "deflate":
        wrapped = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
        return zlib.decompressobj(wbits=15 if wrapped else -15)
    raise ReplyBodyError(f"the reply came in the {encoding!r} encoding, which was not asked for")


def _inflate(inflater: zlib._Decompress, data: bytes, room: int, cap: int) -> bytes:
    """`data` inflated, failing as soon as the result would pass `room` bytes."""
    out = []
    while data:
        piece = inflater.decompress(data, room + 1)
        room -= len(piece)
        if room < 0:
            raise ReplyBodyError(f"the reply body inflates past the {cap:,}-byte cap")
        out.append(piece)
        data = inflater.unconsumed_tail
    return b"".join(out)


def _inflate_or_fail(inflater: zlib._Decompress, data: bytes, room: int, cap: int) -> bytes:
    try:
        return _inflate(inflater, data, room, cap)
    except zlib.error as exc:
        raise ReplyBodyError(f"the reply body does not inflate ({exc})") from None


async def read_capped(
    chunks: AsyncIterator[bytes], encoding: str, declared: int | None, cap: int
) -> bytes:
    """The whole body from `chunks` (as sent over the wire), inflated per `encoding`."""
    too_large = f"the reply body is larger than the {cap:,}-byte cap"
    if declared is not None and declared > cap:
        raise ReplyBodyError(f"{too_large} ({declared:,} bytes announced)")
    encoding = encoding.strip().lower()
    inflater: zlib._Decompress | None = None
    sent = 0
    body: list[bytes] = []
    size = 0
    async for chunk in chunks:
        if sent == 0:
            inflater = _inflater(encoding, chunk)
        sent += len(chunk)
        if sent > cap:
            raise ReplyBodyError(too_large)
        piece = chunk if inflater is None else _inflate_or_fail(inflater, chunk, cap - size, cap)
        size += len(piece)
        body.append(piece)
    if inflater is not None:
        tail = inflater.flush()
        if size + len(tail) > cap:
            raise ReplyBodyError(f"the reply body inflates past the {cap:,}-byte cap")
        body.append(tail)
    return b"".join(body)
