"""Typed views of ``launchguard.analysis/1``, ``launchguard.analysis-ranks/1`` and
``launchguard.check/1``.

Only the fields every consumer needs are typed; the whole document stays in ``Result.raw``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PASS = "pass"
WARN = "warn"
FAIL = "fail"
SKIP = "skip"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Check:
    """One check's outcome, as the binary judged it."""

    id: str
    """Stable identifier: ``occupancy``, ``gaps``, ``graph_launch``, …"""
    status: str
    """``pass``, ``warn``, ``fail`` or ``skip``."""
    message: str
    """One line: what was measured and why it has this status."""
    value: Any = None
    """The measured value (a number or a string; ``None`` when none)."""
    limit: Any = None
    """The limit it was judged against (``None`` when none)."""
    hint: str | None = None
    """What to do about it, when there is something to do."""

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Check:
        """Reads one element of the document's ``checks`` array."""
        return cls(
            id=str(doc["id"]),
            status=str(doc["status"]),
            message=str(doc.get("message", "")),
            value=doc.get("value"),
            limit=doc.get("limit"),
            hint=doc.get("hint"),
        )


@dataclass(frozen=True)
class Result:
    """The outcome of ``analyze`` or ``check``: the verdict, the checks, and the whole document."""

    schema: str
    """``launchguard.analysis/1``, ``launchguard.analysis-ranks/1`` (several ranks) or
    ``launchguard.check/1``."""
    verdict: str
    """Worst status of the checks: ``pass``, ``warn``, ``fail``; ``skip`` when nothing could run;
    ``inconclusive`` when the trace lost GPU events or its causality is impossible (``reason``
    says what and how it was told)."""
    checks: tuple[Check, ...]
    """All checks, in report order."""
    exit_code: int
    """The binary's exit code: 0 pass, warn or skip; 1 fail; 2 inconclusive."""
    reason: str | None = None
    """Why the verdict is ``skip`` or ``inconclusive``."""
    warnings: tuple[str, ...] = ()
    """Things the reader should know about the trace (``analyze`` only)."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, hash=False)
    """The parsed JSON document, every key included."""

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], exit_code: int) -> Result:
        """Reads a parsed document."""
        return cls(
            schema=str(doc["schema"]),
            verdict=str(doc["verdict"]),
            checks=tuple(Check.from_json(c) for c in doc.get("checks", ())),
            exit_code=exit_code,
            reason=doc.get("reason"),
            warnings=tuple(doc.get("warnings", ())),
            raw=dict(doc),
        )

    @property
    def failed(self) -> tuple[Check, ...]:
        """The checks that failed."""
        return tuple(c for c in self.checks if c.status == FAIL)

    def get(self, check_id: str) -> Check | None:
        """The check with this id, or ``None``."""
        return next((c for c in self.checks if c.id == check_id), None)
