"""The one way gpunetsim writes a user's output file: checked before any work, replaced atomically.

:func:`check_writable` runs when a command starts (``--out``, ``--html``, ``--trace``,
``calibrate --out``): a missing folder, a directory in place of the file or a read-only place
fails at once, as an InputError naming the option, instead of after minutes of work.
:func:`write_atomic` writes the whole content to a temporary file beside the target and renames
it over the target, so a full disk or a killed process never leaves a half-written file (nor
destroys the previous good one); a failure is an InputError naming the file.
"""

from __future__ import annotations

import os
from pathlib import Path

from simulator.core.errors import InputError


def _mkstemp(prefix: str, suffix: str, dir: str | os.PathLike[str]) -> tuple[int, str]:
    """``tempfile.mkstemp`` (imported here: a command that writes no file does not import it, nor
    the archive modules it pulls in)."""
    import tempfile
    return tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=dir)


def check_writable(path: str | os.PathLike[str], field: str) -> Path:
    """``path`` as a Path if a file can be created or replaced there, else InputError."""
    src = str(path)
    if not src:
        raise InputError("empty file name", field=field, value=src)
    try:
        p = Path(path)
        if p.is_dir():
            raise InputError("is a directory; give a file name", field=field, value=src)
        parent = p.parent if str(p.parent) else Path(".")
        if not parent.is_dir():
            raise InputError("folder does not exist" if not parent.exists() else "not in a folder",
                             field=field, value=src)
        fd, tmp = _mkstemp(prefix=f".{p.name[:40]}.", suffix=".check", dir=parent)
        os.close(fd)
        os.unlink(tmp)
        if p.exists() and not os.access(p, os.W_OK):
            raise InputError("file is not writable", field=field, value=src)
    except OSError as e:
        raise InputError(f"cannot write there: {e.strerror or e}", field=field, value=src) from None
    except ValueError as e:
        if isinstance(e, InputError):
            raise
        raise InputError(f"not a usable file name ({e})", field=field, value=src) from None
    return p


def check_folder(path: str | os.PathLike[str], field: str) -> Path:
    """A folder that exists (created if needed, parents too) and accepts new files."""
    src = str(path)
    try:
        p = Path(path)
        if p.exists() and not p.is_dir():
            raise InputError("exists and is not a folder", field=field, value=src)
        p.mkdir(parents=True, exist_ok=True)
        fd, tmp = _mkstemp(prefix=".gpunetsim.", suffix=".check", dir=p)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise InputError(f"cannot write into this folder: {e.strerror or e}", field=field,
                         value=src) from None
    except ValueError as e:
        if isinstance(e, InputError):
            raise
        raise InputError(f"not a usable folder name ({e})", field=field, value=src) from None
    return p


def write_atomic(path: str | os.PathLike[str], content: str | bytes, *, field: str | None = None) -> Path:
    """Write ``content`` (text as UTF-8) to ``path`` through a temporary file and a rename."""
    p = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    tmp = None
    try:
        fd, tmp = _mkstemp(prefix=f".{p.name[:40]}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
        tmp = None
    except OSError as e:
        raise InputError(f"cannot write file: {e.strerror or e}", source=str(p), field=field) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return p


def remove_stale(path: str | os.PathLike[str], field: str | None = None) -> None:
    """Delete an old output file so it cannot be taken for this run's (missing is fine)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise InputError(f"cannot remove the previous run's file: {e.strerror or e}", source=str(path),
                         field=field) from None
