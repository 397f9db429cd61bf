"""Finding the ``launchguard`` binary that the wheel installs beside the interpreter."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

ENV_OVERRIDE = "LAUNCHGUARD_BIN"
"""Environment variable naming the binary to run instead of the installed one."""

_EXE = "launchguard" + (sysconfig.get_config_var("EXE") or "")


class BinaryNotFound(FileNotFoundError):
    """No ``launchguard`` binary where the wheel puts it, nor on ``PATH``."""


def _candidates() -> Iterator[Path]:
    # The wheel's scripts directory: where pip put the binary for this interpreter.
    yield Path(sysconfig.get_path("scripts")) / _EXE
    # `pip install --user`: the user scheme's scripts directory.
    yield Path(sysconfig.get_path("scripts", scheme=_user_scheme())) / _EXE
    # `pip install --target DIR`: the scripts land in DIR/bin, beside the package.
    yield Path(__file__).resolve().parent.parent / "bin" / _EXE
    # A virtual environment whose scheme paths were not rewritten (some embedders).
    yield Path(sys.executable).parent / _EXE


def _user_scheme() -> str:
    preferred = getattr(sysconfig, "get_preferred_scheme", None)  # Python 3.10+
    if preferred is not None:
        return str(preferred("user"))
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return f"{os.name}_user"


def find_binary() -> str:
    """Returns the path of the ``launchguard`` binary to run.

    ``$LAUNCHGUARD_BIN`` wins when set (and must name an executable file); otherwise the
    directories where pip installs the wheel's binary for this interpreter, then ``PATH``.
    """
    override = os.environ.get(ENV_OVERRIDE)
    if override:
        if os.path.isfile(override) and os.access(override, os.X_OK):
            return override
        raise BinaryNotFound(f"${ENV_OVERRIDE}={override} is not an executable file")
    for path in _candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which(_EXE)
    if found:
        return found
    raise BinaryNotFound(
        "no launchguard binary: reinstall the wheel (pip install launchguard) or set "
        f"${ENV_OVERRIDE} to the binary's path"
    )
