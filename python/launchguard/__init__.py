"""launchguard: guards GPU inference stacks against graph-launch overhead.

A thin wrapper over the ``launchguard`` binary that the wheel installs: :func:`analyze` and
:func:`check` run it with ``--format json`` and return a typed :class:`Result`. The pytest plugin
(``pytest --launchguard`` / ``--launchguard-trace``) lives in :mod:`launchguard.pytest_plugin`.
"""

from ._binary import BinaryNotFound, find_binary
from ._run import LaunchguardError, analyze, check
from .result import Check, Result


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("launchguard")
    except Exception:  # not installed as a distribution (a source checkout)
        return "unknown"


__version__ = _version()

__all__ = [
    "BinaryNotFound",
    "Check",
    "LaunchguardError",
    "Result",
    "analyze",
    "check",
    "find_binary",
    "__version__",
]
