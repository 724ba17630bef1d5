"""The agent's ``Bash`` sandbox: bubblewrap where the machine has it, limits and cleanup always.

With ``bwrap`` (bubblewrap) a command runs with:

* no network (a network namespace of its own holding only a loopback device);
* a private ``/proc`` in its own PID namespace, so ``/proc/<pytest pid>/environ`` is not there
  to read, and every process of the namespace dies when the command ends (``setsid`` jobs too);
* the whole file system read-only except the working copy and a private ``/tmp``;
* resource limits (:data:`LIMITS`): address space, file size, processes, CPU time.

Without ``bwrap`` (or where it cannot create namespaces) the same limits apply, the run says so
once, and cleanup still kills the command's process group and every process carrying its marker
(:mod:`pytest_omk.proctree`). In both cases secrets never enter the command's environment.
"""

from __future__ import annotations

import shutil
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
UNSANDBOXED_NOTICE = (
    "the agent's Bash runs without a sandbox (bubblewrap 'bwrap' is not available or cannot create "
    "namespaces here): it has the network and can read your files; resource limits and process "
    "cleanup still apply. Install bubblewrap to confine it (docs/security.md)."
)


def _limits_script() -> str:
    # A failing ulimit (a hard limit already lower) must not stop the command itself.
    settings = "; ".join(f"ulimit -S -H {flag} {value} 2>/dev/null" for flag, value in LIMITS.items())
    return f'{settings}; exec bash -c "$1"'


@dataclass(frozen=True)
class Sandbox:
    """How ``Bash`` commands are started: with ``bwrap`` at ``bwrap`` or, when ``None``, without."""

    bwrap: str | None

    @classmethod
    def detect(cls) -> Sandbox:
        """Use ``bwrap`` if it is installed and can set up its namespaces on this machine."""
        path = shutil.which("bwrap")
        if path is None:
            return cls(None)
        probe = [path, *_BWRAP_FLAGS, "--bind", "/tmp", "/tmp", "--", "true"]
        try:
            ok = subprocess.run(probe, capture_output=True, timeout=10, check=False).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        return cls(path if ok else None)

    @property
    def available(self) -> bool:
        """Whether commands run inside bubblewrap."""
        return self.bwrap is not None

    def argv(self, command: str, root: Path) -> list[str]:
        """The argument vector that runs ``command`` with ``bash`` in ``root``."""
        inner = ["bash", "-c", _limits_script(), "omk-bash", command]
        if self.bwrap is None:
            return inner
        where = str(root)
        return [self.bwrap, *_BWRAP_FLAGS, "--bind", where, where, "--chdir", where, "--", *inner]


_BWRAP_FLAGS = (
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/tmp",
)
