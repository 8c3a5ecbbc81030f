"""Writing a user-visible file so that a kill, a full disk or any other failure leaves
either the old file or the new one in place, never an empty or half-written one.

The new content goes to a temporary file in the same folder (so the rename cannot cross
file systems), is flushed to disk, and then takes the old name with `os.replace`, which
POSIX and Windows both make atomic. On any failure the temporary file is removed and the
error is raised again; the file at `path` is untouched.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

# The errors that mean "no room": a full disk, or a user's quota spent.
_NO_ROOM = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Put `text` at `path`, all or nothing."""
    write_bytes(path, text.encode(encoding))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Put `data` at `path`, all or nothing."""
    with replacing(path, "wb") as fh:
        fh.write(data)


@contextlib.contextmanager
def replacing(
    path: str | os.PathLike[str], mode: str = "w", newline: str | None = None
) -> Iterator[IO[Any]]:
    """A file open for writing (`mode` "w" for text in UTF-8, "wb" for bytes) whose
    content replaces `path` only when the block ends without an error."""
    # Through a symbolic link the file it names is replaced, as a plain write would.
    target = Path(os.path.realpath(path))
    if _not_regular(target):
        # A pipe or a device (say /dev/stdout) is written to, not replaced by a file; a
        # folder fails here with the usual error.
        with _opened(os.open(target, os.O_WRONLY | os.O_TRUNC), mode, newline) as straight:
            yield straight
        return
    _clear_leftovers(target)
    # The writer's process id in the name tells a later writer whether the file is a
    # leftover of a killed one (removed) or another's write in progress (left alone).
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        _keep_mode(target, fd)
        with _opened(fd, mode, newline) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _sync_folder(target.parent)


def _opened(fd: int, mode: str, newline: str | None) -> IO[Any]:
    if "b" in mode:
        return os.fdopen(fd, "wb")
    return os.fdopen(fd, "w", encoding="utf-8", newline=newline)


def no_room(exc: OSError) -> bool:
    """Whether `exc` says the disk (or the user's quota) is full."""
    return exc.errno in _NO_ROOM


def why_not_written(exc: OSError) -> str:
    """A short reason a write failed, for a one-line error."""
    if no_room(exc):
        return "the disk is full"
    return exc.strerror or str(exc)


def _not_regular(target: Path) -> bool:
    try:
        return not stat.S_ISREG(os.stat(target).st_mode)
    except OSError:
        return False  # nothing there yet (or unreadable: the write will say why)


def _clear_leftovers(target: Path) -> None:
    """Remove the temporary files of writers of `target` that were killed mid-write."""
    for tmp in target.parent.glob(f".{glob.escape(target.name)}.*-*.tmp"):
        pid = tmp.name[len(target.name) + 2 :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                tmp.unlink()


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # someone else's process, or a platform that cannot tell: keep it
    return True


def _keep_mode(target: Path, fd: int) -> None:
    """Give the new file the old one's permissions (a replaced report stays as readable
    as it was)."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return
    with contextlib.suppress(OSError, AttributeError):  # no fchmod on Windows
        os.fchmod(fd, mode)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable where the platform allows opening a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder; the rename is still atomic
    finally:
        os.close(fd)
