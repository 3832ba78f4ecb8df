"""Where a warning of this package points: at the user's code that called into it."""

from __future__ import annotations

import os
import sys

#: This package's directory, the start of every file name its frames run in.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def outside_the_package() -> int:
    """The ``stacklevel``, for a ``warnings.warn()`` in the function that calls this one, of
    the nearest caller outside this package: the user's call, however deep within this
    package the warning is raised (through a wrapper serving a sampler, or a lazy load)."""
    frame, level = sys._getframe(2), 2  # the caller of the caller of warn()
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
