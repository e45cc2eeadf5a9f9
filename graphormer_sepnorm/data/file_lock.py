r"""An exclusive lock on a folder, held while its data is prepared.

Lightning runs :meth:`prepare_data` once per node; with the data root on a
file system the nodes share, the nodes would copy raw files and build the
same caches at the same time and read each other's half-written files.
Under :func:`folder_lock` the first process prepares and the others wait,
then find the caches built. It uses :func:`fcntl.flock`, which Linux
carries over NFS; a file system without locks (Lustre mounted without
``flock``) gets a warning and no lock.
"""
from __future__ import annotations

import contextlib
import errno
import warnings
from pathlib import Path
from typing import Iterator, Union

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: one node only
    fcntl = None

__all__ = ['folder_lock', 'LOCK_FILE']

#: The lock file :func:`folder_lock` creates in the folder.
LOCK_FILE = '.prepare.lock'

# What flock raises where the file system has no locks.
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)


@contextlib.contextmanager
def folder_lock(folder: Union[str, Path]) -> Iterator[None]:
    r"""Runs the block holding an exclusive lock on
    :obj:`<folder>/.prepare.lock` (created with the folder if missing):
    processes of this machine or of others sharing the folder run such
    blocks one at a time.

    Args:
        folder (str or Path): The folder whose files the block writes.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK_FILE, 'a') as handle:
        locked = _lock(handle, folder)
        try:
            yield
        finally:
            if locked:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _lock(handle, folder: Path) -> bool:
    if fcntl is None:  # pragma: no cover
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
    except OSError as error:
        if error.errno not in _NO_LOCKS:
            raise
        warnings.warn(f"{folder} cannot be locked ({error.strerror}): "
                      f"processes sharing it may prepare its data at the "
                      f"same time; prepare it once before a multi-node run",
                      RuntimeWarning, stacklevel=3)
        return False
    return True
