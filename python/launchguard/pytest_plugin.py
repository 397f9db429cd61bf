"""The pytest plugin: the guard's checks as test cases.

``pytest --launchguard`` runs ``launchguard check``; ``pytest --launchguard-trace PATH`` runs
``launchguard analyze PATH`` (no GPU needed). Either adds one test per check, named
``launchguard::<check id>``: a failed check fails with its message, a warning passes with a
:class:`LaunchguardWarning`, a skipped check skips. When ``check`` cannot run here (no GPU, no
torch) there is one skipped test, ``launchguard::check``, with the reason; a trace that lost GPU
events (verdict ``inconclusive``) adds a failed test ``launchguard::verdict`` with the reason. The
``launchguard_result`` fixture gives the same :class:`~launchguard.Result` to a project's tests.

The guard runs once, while pytest collects, because the tests are its checks. Options may also
be set in the ini file: ``launchguard_config`` and ``launchguard_args``.
"""

from __future__ import annotations

import shlex
import warnings
from pathlib import Path
from typing import Any

import pytest

from ._run import LaunchguardError, analyze, check
from .result import FAIL, INCONCLUSIVE, SKIP, WARN, Check, Result

PREFIX = "launchguard"


class LaunchguardWarning(UserWarning):
    """A check past its warning limit."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("launchguard", "graph-launch overhead guard")
    group.addoption(
        "--launchguard",
        action="store_true",
        default=False,
        help="run the guard (launchguard check) on this machine's GPU; one test per check",
    )
    group.addoption(
        "--launchguard-trace",
        action="append",
        metavar="PATH",
        default=[],
        help="analyze an existing trace instead (launchguard analyze); repeat for the ranks of one run",
    )
    group.addoption(
        "--launchguard-config",
        metavar="FILE",
        default=None,
        help="launchguard TOML config file (thresholds, check settings)",
    )
    group.addoption(
        "--launchguard-arg",
        action="append",
        metavar="ARG",
        default=[],
        help="extra argument for the launchguard command, e.g. --launchguard-arg=--occupancy-fail=0.7 (repeatable)",
    )
    parser.addini("launchguard_config", "launchguard TOML config file, relative to the ini file", default=None)
    parser.addini("launchguard_args", "extra arguments for the launchguard command (shell words)", default="")


class _Guard:
    """The run's settings and, once it ran, its result (shared by the tests and the fixture)."""

    def __init__(self, config: pytest.Config):
        self.run_check: bool = config.getoption("launchguard")
        self.traces: list[str] = config.getoption("launchguard_trace")
        if self.run_check and self.traces:
            raise pytest.UsageError("--launchguard and --launchguard-trace exclude each other: pick one")
        self.config_file = config.getoption("launchguard_config") or self._ini_config(config)
        self.args = shlex.split(config.getini("launchguard_args") or "") + config.getoption("launchguard_arg")
        self.rootpath = config.rootpath
        self.result: Result | None = None
        self.error: LaunchguardError | None = None

    @staticmethod
    def _ini_config(config: pytest.Config) -> str | None:
        value = config.getini("launchguard_config")
        if not value:
            return None
        base = config.inipath.parent if config.inipath else config.rootpath
        return str(base / value)

    @property
    def enabled(self) -> bool:
        return self.run_check or bool(self.traces)

    def run(self) -> Result:
        """Runs the binary once; later calls give the same result or raise the same error."""
        if self.result is None and self.error is None:
            try:
                if self.run_check:
                    self.result = check(config=self.config_file, args=self.args)
                else:
                    self.result = analyze(self.traces, config=self.config_file, args=self.args)
            except LaunchguardError as e:
                self.error = e
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


_KEY = pytest.StashKey[_Guard]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_KEY] = _Guard(config)


class CheckFailed(Exception):
    """A check past its failing limit; the message is the check's."""


class GuardCollector(pytest.Collector):
    """Runs the guard and yields one test per check."""

    def collect(self) -> list[pytest.Item]:
        result = self.config.stash[_KEY].run()
        # A run that judged nothing (check without a GPU or torch) is one skipped test; a trace
        # whose checks skip (no graph replay) keeps one test per check, each with its reason.
        if result.verdict == SKIP and result.reason and not result.checks:
            skipped = Check(id="check", status=SKIP, message=result.reason)
            return [CheckItem.from_parent(self, name=skipped.id, check=skipped)]
        items = [CheckItem.from_parent(self, name=c.id, check=c) for c in result.checks]
        if result.verdict == INCONCLUSIVE:
            # The checks may all pass on what is left of a damaged trace: one more test fails
            # with the reason, so that the run is not green.
            verdict = Check(id="verdict", status=FAIL, message=f"inconclusive: {result.reason or ''}")
            items.append(CheckItem.from_parent(self, name=verdict.id, check=verdict))
        return items

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, LaunchguardError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)  # type: ignore[return-value]


class CheckItem(pytest.Item):
    """One check of the guard's result."""

    def __init__(self, *, check: Check, **kwargs: Any):
        super().__init__(**kwargs)
        self.check = check
        if check.status == SKIP:
            # A marker, not pytest.skip(): the skip is known now, and is reported at this item's
            # location rather than inside the plugin.
            self.add_marker(pytest.mark.skip(reason=check.message))

    def runtest(self) -> None:
        c = self.check
        if c.status == FAIL:
            raise CheckFailed(c.message + (f"\nhint: {c.hint}" if c.hint else ""))
        if c.status == WARN:
            warnings.warn_explicit(
                LaunchguardWarning(f"{c.id}: {c.message}"), LaunchguardWarning, filename=self.nodeid, lineno=0
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        # Where the finding comes from: the trace, or (check) the guard itself. A line number is
        # required by pytest's skip reporting.
        guard = self.config.stash[_KEY]
        where = Path(guard.traces[0]) if guard.traces else guard.rootpath / PREFIX
        return where, 0, self.nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: the guard's tests are in the list before -k, -m and --deselect filter it.
    if not config.stash[_KEY].enabled:
        return
    collector = GuardCollector.from_parent(session, name=PREFIX, nodeid=PREFIX)
    # genitems reports a collection error (exit 2) where the binary could not give a verdict.
    items.extend(session.genitems(collector))


@pytest.fixture(scope="session")
def launchguard_result(pytestconfig: pytest.Config) -> Result:
    """The guard's :class:`~launchguard.Result` (the run the ``launchguard::`` tests report)."""
    guard = pytestconfig.stash[_KEY]
    if not guard.enabled:
        pytest.skip("launchguard is not enabled: run pytest with --launchguard or --launchguard-trace PATH")
    return guard.run()
