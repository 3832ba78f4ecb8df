"""Select a sampler by name from a TOML config, then spend rollouts with it.

    python examples/select_from_toml.py                              # fixable_first.toml
    python examples/select_from_toml.py examples/hardest_first.toml  # a plugin's sampler

Rolls out a toy shard of six tasks for 24 rollouts (no engine, no model: each task
has a fixed score) and prints where the sampler spent them. A sampler that is not
installed, or a config that is wrong, ends it with one line and exit status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections import Counter
from pathlib import Path

from agentdescent_sampling import SamplerError, create, spec_from_file

SCORES = {"easy-1": 1.0, "easy-2": 1.0, "mid-1": 0.6, "mid-2": 0.4, "hard-1": 0.1, "hard-2": 0.0}


def main(config: Path) -> int:
    """Run the example; return the process exit status."""
    try:
        spec = spec_from_file(config)
        sampler = create(spec)
    except SamplerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    keys = list(SCORES)
    spent: Counter[str] = Counter()
    for round_index in range(24):
        task = sampler.pick(keys, round_index)
        sampler.record(task, SCORES[task])
        spent[task] += 1
    print(f"{spec} -> {sampler!r}")
    for task in keys:
        print(f"  {task:<7} score {SCORES[task]:.1f}  rollouts {spent[task]:>2}")
    return 0


if __name__ == "__main__":
    # End quietly when the reader of a pipe stops early (`... | head -1`), as Unix tools do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).with_name("fixable_first.toml")  # a built-in: no plugin needed
    parser.add_argument("config", nargs="?", type=Path, default=default, help="a TOML file")
    sys.exit(main(parser.parse_args().config))
