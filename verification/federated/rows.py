"""The rows the federated checks report: a claim, what was found, flagged or not."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CheckRow", "Verdict"]


class Verdict:
    """What a catalogue row or a check says: ``flagged`` (the verdict) against ``broken`` (whether
    the entry is a known defect, so should be flagged)."""

    broken: bool
    flagged: bool

    @property
    def expected(self) -> bool:
        return self.broken

    @property
    def ok(self) -> bool:
        return self.flagged == self.broken

    @property
    def as_expected(self) -> bool:
        """Same as :attr:`ok` (the name the other verification reports use)."""
        return self.ok


@dataclass(frozen=True)
class CheckRow(Verdict):
    """One check of :func:`run_checks`: a claim, what was measured or computed, and the verdict.

    ``broken`` says whether the claim is a known defect (it should be flagged); ``ok`` whether
    the verdict agrees.
    """

    name: str
    audit: str
    broken: bool
    claim: str
    finding: str
    flagged: bool
    values: dict[str, float] = field(default_factory=dict)
    reference: str = ""

    def summary(self) -> str:
        """Three human-readable lines: the verdict, the claim, the finding."""
        kind = "broken " if self.broken else "correct"
        verdict = "flagged" if self.flagged else "not flagged"
        return (
            f"{kind} {self.name:29s} [{self.audit}] {verdict:12s} {'ok' if self.ok else 'UNEXPECTED'}\n"
            f"        claim: {self.claim}\n        found: {self.finding}"
        )
