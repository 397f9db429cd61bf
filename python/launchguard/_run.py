"""Running the binary with ``--format json`` and reading its answer. No analysis happens here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from ._binary import find_binary
from .result import Result

PathLike = Union[str, "os.PathLike[str]"]

SCHEMAS = {
    "analyze": ("launchguard.analysis/1", "launchguard.analysis-ranks/1"),
    "check": ("launchguard.check/1",),
}
"""The schemas each command answers with (``analyze`` of several ranks: ``analysis-ranks``). All
have ``checks``, ``verdict`` and ``warnings``; a wrapper for another version must not guess."""


class LaunchguardError(RuntimeError):
    """The binary could not give a verdict: exit code 2 (bad input, bad options), or no usable
    answer. ``str()`` is the binary's one-line error."""

    def __init__(self, message: str, *, exit_code: int | None, stderr: str, command: Sequence[str]):
        super().__init__(message)
        self.exit_code = exit_code
        """The binary's exit code (``None`` when it could not be started)."""
        self.stderr = stderr
        """Everything it wrote to standard error."""
        self.command = list(command)
        """The command line that ran."""


def _text(value: Any) -> str:
    if isinstance(value, os.PathLike):
        return str(os.fspath(value))
    return str(value)


def option_args(options: Mapping[str, Any]) -> list[str]:
    """Maps keyword options to flags: ``occupancy_fail=0.7`` → ``--occupancy-fail=0.7``;
    ``True`` → a bare flag; ``None`` and ``False`` → nothing; a list or tuple → the flag repeated.

    The ``--flag=value`` form keeps a value that starts with ``-`` (a regex, a negative number)
    from being read as a flag.
    """
    out: list[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out.extend(f"{flag}={_text(v)}" for v in value)
        else:
            out.append(f"{flag}={_text(value)}")
    return out


def _run(command: str, args: list[str], positional: Iterable[PathLike] = ()) -> Result:
    argv = [find_binary(), command, "--format=json", *args]
    paths = [_text(p) for p in positional]
    if paths:
        argv += ["--", *paths]
    try:
        proc = subprocess.run(argv, check=False, stdin=subprocess.DEVNULL, capture_output=True)
    except OSError as e:
        raise LaunchguardError(f"cannot run {argv[0]}: {e}", exit_code=None, stderr="", command=argv) from e
    stderr = proc.stderr.decode("utf-8", "replace")
    inconclusive = _inconclusive(proc.returncode, proc.stdout)
    if inconclusive is not None:
        return inconclusive
    if proc.returncode not in (0, 1):
        lines = [line for line in stderr.splitlines() if line.strip()]
        message = lines[-1] if lines else f"launchguard {command} exited with code {proc.returncode}"
        raise LaunchguardError(message, exit_code=proc.returncode, stderr=stderr, command=argv)
    try:
        doc = json.loads(proc.stdout.decode("utf-8"))
        schema = doc["schema"]
    except (ValueError, TypeError, KeyError) as e:
        raise LaunchguardError(
            f"launchguard {command} gave no {' or '.join(SCHEMAS[command])} document: {e}",
            exit_code=proc.returncode,
            stderr=stderr,
            command=argv,
        ) from e
    if schema not in SCHEMAS[command]:
        raise LaunchguardError(
            f"launchguard {command} answered with {schema!r}; this wrapper reads {' or '.join(SCHEMAS[command])}",
            exit_code=proc.returncode,
            stderr=stderr,
            command=argv,
        )
    return Result.from_json(doc, proc.returncode)


def _inconclusive(code: int, stdout: bytes) -> Result | None:
    """The result of a run whose trace is damaged: exit 2 with the report still written,
    verdict ``inconclusive``; ``None`` for anything else (exit 2 is then an error)."""
    if code != 2:
        return None
    try:
        doc = json.loads(stdout.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("verdict") != "inconclusive" or "schema" not in doc:
        return None
    return Result.from_json(doc, code)


def _reject_format(options: Mapping[str, Any]) -> None:
    if "format" in options:
        raise TypeError("format is always json: the wrapper parses the binary's JSON")


def analyze(trace: PathLike | Sequence[PathLike], *, args: Sequence[str] = (), **options: Any) -> Result:
    """Runs ``launchguard analyze TRACE --format json`` and returns its result.

    ``trace`` is a path, or a list of paths (or a folder) analyzed as the ranks of one run (then
    the result's schema is ``launchguard.analysis-ranks/1``).
    ``options`` are the command's flags by name (``within="decode"``, ``config="lg.toml"``,
    ``occupancy_fail=0.7``, ``junit="out.xml"``); ``args`` are extra raw arguments.
    Raises :class:`LaunchguardError` where the binary exits 2 (unreadable trace, bad option); a
    damaged trace (lost GPU events, impossible causality) is a result, verdict ``inconclusive``
    (exit code 2) with a ``reason``.
    """
    _reject_format(options)
    traces = [trace] if isinstance(trace, (str, os.PathLike)) else list(trace)
    return _run("analyze", [*option_args(options), *args], traces)


def _config_names_python(config: PathLike | None) -> bool | None:
    """Whether the config file sets ``[check] python``; ``None`` when that cannot be told."""
    if config is None:
        return False
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        try:
            import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]
        except ImportError:
            return None
    try:
        with open(config, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, ValueError):
        return None  # the binary reports the file's problem itself
    section = doc.get("check")
    return isinstance(section, dict) and "python" in section


def check(*, args: Sequence[str] = (), **options: Any) -> Result:
    """Runs ``launchguard check --format json`` (the guard) and returns its result.

    ``options`` are the command's flags by name (``preset="tiny"``, ``config="lg.toml"``,
    ``require_gpu=True``); ``args`` are extra raw arguments. Unless a ``python`` is named (here, in
    ``args`` or in the config file), the workload runs with this interpreter, so the guard measures
    the PyTorch installed beside it. Where nothing can run (no GPU, no torch) the result's verdict
    is ``skip`` with a ``reason``. Raises :class:`LaunchguardError` where the binary exits 2.
    """
    _reject_format(options)
    named = options.get("python") is not None or any(a == "--python" or a.startswith("--python=") for a in args)
    if not named and _config_names_python(options.get("config")) is False:
        options = {**options, "python": sys.executable}
    return _run("check", [*option_args(options), *args])
