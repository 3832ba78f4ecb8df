"""What selecting a sampler by name adds to a fresh process that imports the engine.

Run it with ``python benchmarks/startup.py [--runs N] [--with CODE]``. It alternates
two commands, each in a fresh interpreter, so that both see the same machine load:

- base: ``import agentdescent``
- with: ``import agentdescent, agentdescent_sampling as a; a.create('informative-band')``,
  or the code given with ``--with`` (``--with 'import agentdescent, attrs'`` prices a
  dependency alone)

and prints, for wall time and for CPU time (user + system of the child), the median
of each and the median of the paired ratios (with/base, one pair per run, the order
within a pair alternating). CPU time is the steadier figure on a machine shared with
other jobs. The target is a ratio under 1.05. A timing script, not a test: it asserts
nothing.

The children run with bytecode caching on, whatever ``PYTHONDONTWRITEBYTECODE`` says:
the engine's modules load from the caches pip wrote at install, so without caches of
this package's modules the ratio would time compiling them, which a user pays once.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

BASE = "import agentdescent"
WITH = "import agentdescent, agentdescent_sampling as a; a.create('informative-band')"


#: The children's environment: bytecode caches written and used, as in a user's process.
ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def run(code: str) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one fresh ``python -c code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=ENVIRONMENT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    """Alternate the two commands and print the medians and the paired ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="pairs to run (default 60)")
    parser.add_argument(
        "--with", dest="code", default=WITH, help="the code to time against the base"
    )
    arguments = parser.parse_args()
    runs, code = arguments.runs, arguments.code
    run(code)  # write bytecode caches before timing anything
    base: list[tuple[float, float]] = []
    with_: list[tuple[float, float]] = []
    for index in range(runs):
        if index % 2:
            second, first = run(code), run(BASE)
        else:
            first, second = run(BASE), run(code)
        base.append(first)
        with_.append(second)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"start-up cost of create() by name; Python {platform.python_version()}, {runs} pairs, "
        f"load average {load:.1f} at the end"
    )
    print(f"base: python -c {BASE!r}")
    print(f"with: python -c {code!r}")
    for column, what in ((0, "wall"), (1, "CPU")):
        ratios = sorted(w[column] / b[column] for w, b in zip(with_, base, strict=True))
        low, high = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        print(
            f"{what:>4}: base median {statistics.median(b[column] for b in base) * 1000:6.1f} ms, "
            f"with median {statistics.median(w[column] for w in with_) * 1000:6.1f} ms, "
            f"ratio median {statistics.median(ratios):.3f} (interquartile {low:.3f}-{high:.3f})"
        )
    print("target: ratio < 1.05")


if __name__ == "__main__":
    main()
