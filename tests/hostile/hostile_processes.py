"""Real ``assertree`` processes under hostile conditions: a file-size limit, permissions that hold.

`run_assertree` starts ``python -m assertree`` in a child process. ``fsize``
sets RLIMIT_FSIZE there, so a write past it fails with EFBIG as on a full disk
(Python ignores SIGXFSZ). ``unprivileged`` makes permission bits bind: as an
ordinary user they already do; as root (CI containers) the child gives up the
capabilities that let root ignore them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH,
CAP_FOWNER) before it starts, so a read-only file or folder stops it as it
would stop anyone. It stays uid 0, so it can still run the interpreter from a
home folder only root may enter. `permissions_skip` says why a platform cannot
do this (then the permission tests skip with that reason).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PR_CAPBSET_DROP = 24  # <linux/prctl.h>
ROOT_OVERRIDES = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER (<linux/capability.h>)


def _drop_root_overrides() -> None:
    """In the child, before exec: remove root's permission overrides from the bounding set, so the new
    program never gets them (capabilities of a uid-0 program are recomputed from that set at exec)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    for capability in ROOT_OVERRIDES:
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused")


def preexec(*, fsize: int | None = None, unprivileged: bool = False) -> Callable[[], None]:
    def prepare() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if unprivileged and os.geteuid() == 0:
            _drop_root_overrides()

    return prepare


def run_assertree(args: list[str | Path], *, cwd: Path, fsize: int | None = None, unprivileged: bool = False,
                  timeout: float = 120, stdin: int | None = None) -> subprocess.CompletedProcess:
    """``python -m assertree ARGS`` in `cwd` under the conditions asked for; stdout and stderr as text."""
    return subprocess.run([sys.executable, "-m", "assertree", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, stdin=stdin, preexec_fn=preexec(fsize=fsize,
                                                                                      unprivileged=unprivileged),
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def start_assertree(args: list[str | Path], *, cwd: Path) -> subprocess.Popen:
    """``python -m assertree ARGS`` started, not waited for (its output discarded)."""
    return subprocess.Popen([sys.executable, "-m", "assertree", *map(str, args)], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO)})


@functools.cache
def permissions_skip() -> str | None:
    """None when a child process can be made to obey permission bits here, else why not."""
    if not sys.platform.startswith("linux"):
        return "permission tests drop root's capabilities with Linux's prctl; this platform is not Linux"
    with tempfile.TemporaryDirectory() as folder:
        locked = Path(folder) / "read-only"
        locked.write_text("x")
        locked.chmod(0o444)
        try:
            done = subprocess.run([sys.executable, "-c", f"open({str(locked)!r}, 'a')"], capture_output=True,
                                  text=True, timeout=60, preexec_fn=preexec(unprivileged=True))
        except subprocess.SubprocessError as error:  # the preexec step failed: no CAP_SETPCAP here
            return f"cannot drop root's permission overrides in a child process here ({error})"
    if "PermissionError" not in done.stderr:
        return "a read-only file stays writable to a child process here (root without dropped overrides)"
    return None

