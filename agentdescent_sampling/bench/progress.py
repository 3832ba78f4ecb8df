"""A progress bar for long bench runs, on a terminal only."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """A one-line bar on ``stream``, shown once a run has lasted ``delay`` seconds.

    Nothing is drawn when ``stream`` is ``None`` or not a terminal, so piped and
    captured output stay clean, and a short run never flickers a bar at all.

    Args:
        total: how many steps the run has.
        stream: where to draw, usually ``sys.stderr``.
        delay: seconds to wait before the first draw.
    """

    def __init__(self, total: int, stream: TextIO | None, delay: float = 2.0) -> None:
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None and stream.isatty() else None
        self.started = time.monotonic()
        self.next_draw = self.started + delay
        self.drawn = False

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps done, redrawing at most ten times a second."""
        self.done += steps
        now = time.monotonic()
        if self.stream is None or now < self.next_draw:
            return
        self.next_draw = now + 0.1
        elapsed = now - self.started
        fraction = self.done / self.total
        left = elapsed * (1 - fraction) / fraction if fraction else 0.0
        filled = round(30 * fraction)
        self.stream.write(
            f"\rbench [{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%}  "
            f"{elapsed:.0f} s elapsed, about {left:.0f} s left "
        )
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Erase the bar, if one was drawn."""
        if self.stream is not None and self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
