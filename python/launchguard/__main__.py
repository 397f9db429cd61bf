"""``python -m launchguard …``: runs the binary with the same arguments and exit code."""

from __future__ import annotations

import os
import subprocess
import sys

from ._binary import BinaryNotFound, find_binary


def main() -> int:
    """Runs the binary; replaces this process where the platform allows it."""
    try:
        binary = find_binary()
    except BinaryNotFound as e:
        print(f"launchguard: error: {e}", file=sys.stderr)
        return 2
    argv = [binary, *sys.argv[1:]]
    # check's workload runs with this interpreter unless --python or the config names another:
    # `torchrun -m launchguard check` then uses the environment torchrun was started from.
    os.environ.setdefault("LAUNCHGUARD_PYTHON", sys.executable)
    if sys.platform == "win32":
        # No exec on Windows that keeps the console and exit code: wait for a child instead.
        return subprocess.run(argv, check=False).returncode
    os.execv(binary, argv)
    return 2  # not reached: execv replaced the process or raised


if __name__ == "__main__":
    sys.exit(main())
