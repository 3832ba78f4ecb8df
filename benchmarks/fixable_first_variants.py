"""How fixable-first's priors were chosen: variants of its defaults in the real ``evolve()``.

Usage::

    python benchmarks/fixable_first_variants.py [--seeds 30] [--first-seed 1000]
        [--workload W ...] [VARIANT ...]

Each variant is a fresh copy of ``agentdescent_sampling.samplers.fixable_first`` with some of
its module-level priors replaced (see ``VARIANTS``). They run beside the shipped defaults,
round-robin and the oracle in the engine bench, by default on seeds 1000 and up, which the
published figures (seeds 0-29) do not use, and the bench's report is printed. Needs the
``engine`` extra.
"""

from __future__ import annotations

import argparse
import importlib.util
from typing import Any

from agentdescent_sampling.bench.engine import (
    EngineBenchConfig,
    EngineEntrant,
    format_engine_report,
    run_engine_bench,
)

_MODULE = "agentdescent_sampling.samplers.fixable_first"
#: No change-aware re-tests: a break rate per artifact change that stays 0.
_NO_CHANGES = {"_CHANGE_BREAKS_PRIOR": (0.0, float("inf"))}
#: The first release of fixable-first: hazard 0.3, 0.3, then fourfold less per failure.
_FIRST = {
    "_FLIP_LUCK_PRIOR": (1.0, 3.0),
    "_PASS_BREAKS_PRIOR": (1.0, 3.0),
    "_STEP": 0.25,
    "_TAIL": 0.25,
    **_NO_CHANGES,
}
_LOWER_RATES = {"_FLIP_LUCK_PRIOR": (0.5, 4.0), "_PASS_BREAKS_PRIOR": (0.5, 4.0)}
_THREE_FLAT = {"_FLAT": 3, "_STEP": 0.1, "_TAIL": 0.1}

VARIANTS: dict[str, dict[str, Any]] = {
    "first-release": _FIRST,
    "lower-luck-and-breaks": {**_FIRST, **_LOWER_RATES},
    "third-failure-half": {**_LOWER_RATES, **_NO_CHANGES},
    "three-flat": {**_LOWER_RATES, **_THREE_FLAT, **_NO_CHANGES},
    "three-flat+changes": {**_LOWER_RATES, **_THREE_FLAT},
}


def variant_class(constants: dict[str, Any]) -> Any:
    """FixableFirst from a fresh copy of its module, with ``constants`` replaced."""
    spec = importlib.util.find_spec(_MODULE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot find {_MODULE}; install agentdescent-sampling")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    unknown = set(constants) - set(vars(module))
    if unknown:
        raise SystemExit(f"{_MODULE} has no {sorted(unknown)}; update VARIANTS")
    vars(module).update(constants)
    return module.FixableFirst


def entrant(label: str) -> EngineEntrant:
    """The engine bench entrant for one variant."""
    factory = variant_class(VARIANTS[label])
    return EngineEntrant(label, lambda built: factory(pass_threshold=built.pass_threshold))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--workload", action="append", help="default: every engine workload")
    parser.add_argument("variants", nargs="*", help=f"default: all of {', '.join(VARIANTS)}")
    args = parser.parse_args()
    unknown = set(args.variants) - set(VARIANTS)
    if unknown:
        parser.error(f"no variant {sorted(unknown)}; choose from {', '.join(VARIANTS)}")
    config = EngineBenchConfig(
        samplers=["fixable-first"],
        extra=[entrant(label) for label in args.variants or VARIANTS],
        seeds=args.seeds,
        first_seed=args.first_seed,
        **({"workloads": args.workload} if args.workload else {}),
    )
    print(format_engine_report(run_engine_bench(config)))


if __name__ == "__main__":
    main()
