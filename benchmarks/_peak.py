"""Time and peak memory of one piece of code in a fresh interpreter.

Shared by ``benchmarks/state_limit.py`` and ``benchmarks/input_limits.py``. The child's peak
memory is the high-water mark of its own pages (Linux's ``VmHWM``), which starts afresh at
exec; ``ru_maxrss`` would carry over the parent's, which built the input.
"""

from __future__ import annotations

import os
import subprocess
import sys

_CHILD = """
import sys, time
{setup}
def peak():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
before = peak()
start = time.perf_counter()
{measured}
seconds = time.perf_counter() - start
print(seconds, (peak() - before) * 1024)
"""


def measure(setup: str, measured: str, *args: str) -> tuple[float, int]:
    """Seconds and bytes of peak memory, beyond the interpreter's after ``setup``, that
    ``measured`` takes in a fresh interpreter given ``args`` as ``sys.argv[1:]``."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(setup=setup, measured=measured), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    seconds, peak = done.stdout.split()
    return float(seconds), int(peak)
