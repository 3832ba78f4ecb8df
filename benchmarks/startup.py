"""What selecting a sampler by name adds to a fresh process that imports the engine.

Run it with ``python benchmarks/startup.py [--runs N]``. It alternates two commands,
each in a fresh interpreter, so that both see the same machine load:

- base: ``import agentdescent``
- with: ``import agentdescent, agentdescent_sampling as a; a.create('informative-band')``

and prints the median wall time of each and the median of the paired ratios
(with/base, one pair per run, the order within a pair alternating). The target is a
ratio under 1.05. A timing script, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time

BASE = "import agentdescent"
WITH = "import agentdescent, agentdescent_sampling as a; a.create('informative-band')"


def run(code: str) -> float:
    """Seconds of wall time for one fresh ``python -c code``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> None:
    """Alternate the two commands and print the medians and the paired ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="pairs to run (default 60)")
    runs = parser.parse_args().runs
    run(WITH)  # write bytecode caches before timing anything
    base, with_, ratios = [], [], []
    for index in range(runs):
        if index % 2:
            second, first = run(WITH), run(BASE)
        else:
            first, second = run(BASE), run(WITH)
        base.append(first)
        with_.append(second)
        ratios.append(second / first)
    ratios.sort()
    low, high = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
    print(f"start-up cost of create() by name; Python {platform.python_version()}, {runs} pairs")
    print(f"base  median {statistics.median(base) * 1000:7.1f} ms   python -c {BASE!r}")
    print(f"with  median {statistics.median(with_) * 1000:7.1f} ms   python -c {WITH!r}")
    print(
        f"ratio with/base: median {statistics.median(ratios):.3f} "
        f"(interquartile {low:.3f}-{high:.3f}); target < 1.05"
    )


if __name__ == "__main__":
    main()
