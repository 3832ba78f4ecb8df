"""Notice when a graded scorer meets a binary pass threshold, and say so once."""

from __future__ import annotations

import warnings

from .._caller import outside_the_package

__all__ = ["GradedScoreWarning", "GradedScoreWatch"]

_MIN_RECORDS = 20


class GradedScoreWarning(UserWarning):
    """Scores look graded but none reaches ``pass_threshold``: every task looks unsolved."""


class GradedScoreWatch:
    """Counts scores strictly between 0 and the threshold; warns once if they dominate.

    The degenerate case: after at least 20 records, most scores are strictly between
    0 and ``pass_threshold`` and not one reached it, so every pass rate is 0 and the
    sampler's targeting is gone.
    """

    # A plain class: an attrs class would cost every create() by name its definition.
    __slots__ = ("graded", "pass_threshold", "passes", "records", "sampler", "warned")

    def __init__(self, sampler: str, pass_threshold: float) -> None:
        self.sampler = sampler
        self.pass_threshold = pass_threshold
        self.records = 0
        self.graded = 0
        self.passes = 0
        self.warned = False

    def observe(self, score: float) -> None:
        """Count one recorded score; warn if the run now looks degenerate.

        The warning comes before anything is counted, and once: where warnings are errors
        (``-W error``) the call that warns raises and changes nothing, and every later
        call, its retry included, counts.
        """
        records = self.records + 1
        passes = self.passes + (score >= self.pass_threshold)
        graded = self.graded + (0.0 < score < self.pass_threshold)
        degenerate = passes == 0 and 2 * graded > records
        if degenerate and not self.warned and records >= _MIN_RECORDS:
            self.warned = True  # before warn(), which raises where warnings are errors
            warnings.warn(
                f"{self.sampler}: {graded} of {records} recorded scores lie strictly "
                f"between 0 and pass_threshold={self.pass_threshold} and none reached it, so "
                f"every task looks unsolved and the sampler cannot target. For a graded "
                f"scorer lower pass_threshold and the engine's solved_threshold together, "
                f"e.g. pass_threshold=0.8 with evolve(solved_threshold=0.8).",
                GradedScoreWarning,
                stacklevel=outside_the_package(),
            )
        self.records, self.passes, self.graded = records, passes, graded
