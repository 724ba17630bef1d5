"""The agent's ``Bash`` sandbox: bubblewrap where the machine has it, limits and cleanup always.

With ``bwrap`` (bubblewrap) a command runs with:

* no network (a network namespace of its own holding only a loopback device);
* a private ``/proc`` in its own PID namespace, so ``/proc/<pytest pid>/environ`` is not there
  to read, and every process of the namespace dies when the command ends (``setsid`` jobs too);
* the whole file system read-only except the working copy and a private ``/tmp``;
* resource limits (:data:`LIMITS`): address space, file size, processes, CPU time;
* when pytest runs as root, as the unprivileged user :data:`UNPRIVILEGED_UID` (``setpriv``): the
  kernel never applies the process limit to uid 0, so a fork bomb would otherwise not be held.
  The working copy is handed to that user before each command (:meth:`Sandbox.prepare`), its
  home is the private ``/tmp``, and it cannot read root-only files (``/root``).

Without ``bwrap`` (or where it cannot create namespaces) the same limits apply, the run says so
once, and cleanup still kills the command's process group and every process carrying its marker
(:mod:`pytest_omk._util.proctree`). In both cases secrets never enter the command's environment.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

LIMITS = {
    "-v": 4 * 1024 * 1024,  # address space, KiB (4 GiB: node and JVMs reserve a lot of it)
    "-f": 1024 * 1024,  # largest file written, KiB (1 GiB)
    "-u": 4096,  # processes of the user
    "-t": 600,  # CPU seconds
}
"""``ulimit`` flags and values applied to every ``Bash`` command (soft and hard)."""
UNPRIVILEGED_UID = 65534
"""The user (``nobody``) sandboxed commands run as when pytest runs as root."""
UNSANDBOXED_NOTICE = (
    "the agent's Bash runs without a sandbox (bubblewrap 'bwrap' is not available or cannot create "
    "namespaces here): it has the network and can read your files; resource limits and process "
    "cleanup still apply. Install bubblewrap to confine it (docs/security.md)."
)
ROOT_NOTICE = (
    "pytest runs as root and the agent's Bash cannot drop to an unprivileged user (it needs "
    "bubblewrap and setpriv): the kernel exempts root from the process limit, so a fork bomb is "
    "stopped only by the tool timeout (docs/security.md)."
)


def _limits_script(limits: dict[str, int]) -> str:
    # A failing ulimit (a hard limit already lower) must not stop the command itself.
    settings = "; ".join(f"ulimit -S -H {flag} {value} 2>/dev/null" for flag, value in limits.items())
    return f'{settings}; exec bash -c "$1"'


def _run_ok(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@dataclass(frozen=True)
class Sandbox:
    """How ``Bash`` commands are started: with ``bwrap`` at ``bwrap`` or, when ``None``, without;
    as ``uid`` (through ``setpriv`` at ``setpriv``) or, when ``None``, as the test process's user."""

    bwrap: str | None
    setpriv: str | None = None
    uid: int | None = None
    limits: tuple[tuple[str, int], ...] = tuple(LIMITS.items())

    @classmethod
    def detect(cls) -> Sandbox:
        """Use ``bwrap`` if it is installed and can set up its namespaces on this machine; as
        root, also drop to :data:`UNPRIVILEGED_UID` when ``setpriv`` can do so inside it."""
        path = shutil.which("bwrap")
        if path is None or not _run_ok([path, *_bwrap_flags(False), "--bind", "/tmp", "/tmp", "--", "true"]):
            return cls(None)
        setpriv = shutil.which("setpriv") if os.geteuid() == 0 else None
        if setpriv is not None:
            dropped = cls(path, setpriv, UNPRIVILEGED_UID)
            if _run_ok(dropped.argv("true", Path("/tmp"))):
                return dropped
        return cls(path)

    @property
    def available(self) -> bool:
        """Whether commands run inside bubblewrap."""
        return self.bwrap is not None

    @property
    def limits_processes(self) -> bool:
        """Whether the process limit binds (it never does for uid 0)."""
        return os.geteuid() != 0 or self.uid is not None

    @property
    def notice(self) -> str | None:
        """What the run should say once about this sandbox's gaps (``None``: nothing)."""
        parts = [UNSANDBOXED_NOTICE] if self.bwrap is None else []
        if not self.limits_processes:
            parts.append(ROOT_NOTICE)
        return " ".join(parts) or None

    def prepare(self, root: Path) -> None:
        """Give ``root``'s tree to the sandbox's user, so commands may change what tools wrote.

        Links are changed, never followed, and a file with a second hard link is left alone: were
        it a link to a file elsewhere, handing it over would give that file away too.
        """
        if self.uid is None:
            return
        _hand_over(str(root), self.uid)
        for directory, dirs, files in os.walk(root):
            for name in (*dirs, *files):
                _hand_over(os.path.join(directory, name), self.uid)

    def argv(self, command: str, root: Path) -> list[str]:
        """The argument vector that runs ``command`` with ``bash`` in ``root``."""
        inner = ["bash", "-c", _limits_script(dict(self.limits)), "omk-bash", command]
        if self.bwrap is None:
            return inner
        where = str(root)
        flags = [self.bwrap, *_bwrap_flags(self.uid is not None)]
        if self.setpriv is not None and self.uid is not None:
            # bwrap creates the parents of a bind below its tmpfs as 0700: the user could not
            # reach its working copy by absolute path.
            flags += [a for parent in _parents_in_tmp(root) for a in ("--perms", "0755", "--dir", parent)]
            flags += ["--bind", where, where, "--chdir", where, "--setenv", "HOME", "/tmp", "--"]
            ids = str(self.uid)
            drop = [
                self.setpriv,
                "--reuid",
                ids,
                "--regid",
                ids,
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
            ]
            return [*flags, *drop, *inner]
        return [*flags, "--bind", where, where, "--chdir", where, "--", *inner]


def _hand_over(path: str, uid: int) -> None:
    with contextlib.suppress(OSError):
        info = os.lstat(path)
        if info.st_uid != uid and not (stat.S_ISREG(info.st_mode) and info.st_nlink > 1):
            os.lchown(path, uid, uid)


def _parents_in_tmp(root: Path) -> list[str]:
    tmp = Path("/tmp")
    return [str(p) for p in reversed(root.parents) if tmp in p.parents]


def _bwrap_flags(as_root: bool) -> list[str]:
    # As root a user namespace would map the dropped user back to uid 0 outside (exempt from the
    # process limit, and setresuid fails inside it): every other namespace, but not that one.
    unshare = (
        ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        if as_root
        else ["--unshare-all"]
    )
    return [
        *unshare,
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        # The dropped user needs a writable /tmp (``--perms`` is bwrap 0.5 or later).
        *(["--perms", "1777"] if as_root else []),
        "--tmpfs",
        "/tmp",
    ]
