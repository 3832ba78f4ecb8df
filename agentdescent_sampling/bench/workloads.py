"""Simulated workloads: a shard of task ids, each with a true pass probability.

A workload is a recipe; ``build(seed)`` turns it into a :class:`Scenario`, one
realization whose numbers are identical for identical seeds. Whether a rollout is
informative is a property of the task's **true** pass probability at pick time
(:func:`is_informative`), never of the rewards a sampler observes.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, BinaryIO, ClassVar, Protocol, TypeGuard

import attrs

from .._display import shown
from .._files import open_regular, reason_of, strict_json
from ..errors import BenchError
from ..protocol import SOLVED, short_repr
from ..validators import number_in, solved_threshold

__all__ = [
    "INFORMATIVE_BAND",
    "MAX_ROLLOUTS",
    "MAX_WORKERS",
    "WORKLOADS",
    "Drift",
    "FromLog",
    "Scenario",
    "Stationary",
    "Workload",
    "is_informative",
    "read_log",
]

#: A rollout is informative when the task's true pass probability lies in this band.
INFORMATIVE_BAND = (0.1, 0.9)


def is_informative(p: float) -> bool:
    """Whether a task with true pass probability ``p`` still carries learning signal."""
    return INFORMATIVE_BAND[0] <= p <= INFORMATIVE_BAND[1]


class Scenario(Protocol):
    """One seeded realization of a workload: the shard and how its rollouts turn out.

    ``progress`` is the fraction of the rollout budget spent when the task was
    picked, in [0, 1); time-dependent workloads read their true p from it.
    """

    @property
    def keys(self) -> tuple[str, ...]:
        """Every task id, in the order a worker's shard is built from."""
        ...

    @property
    def pass_threshold(self) -> float:
        """The score at which a rollout of this workload counts as a pass."""
        ...

    def true_p(self, task_id: str, progress: float) -> float:
        """The probability that a rollout of ``task_id`` passes at ``progress``."""
        ...

    def rollout(self, task_id: str, progress: float, rng: random.Random) -> float:
        """Draw the score one rollout reports, observation noise included."""
        ...


class Workload(Protocol):
    """A seeded family of scenarios, selected by ``name`` on the command line."""

    @property
    def name(self) -> str:
        """The name ``--workload`` selects it by."""
        ...

    @property
    def label(self) -> str:
        """A row label for reports, such as ``noisy (15% noise)``."""
        ...

    @property
    def noise(self) -> float:
        """The probability that an observed reward is flipped."""
        ...

    def build(self, seed: int) -> Scenario:
        """The realization for ``seed``; the same seed always gives the same numbers."""
        ...


def _count(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"{type(instance).__name__}({attribute.name}={value!r}): expected a whole "
            f"number >= 1, for example {attribute.default!r}"
        )


_noise = number_in(0.0, 1.0, hint="; 0.15 flips about one reward in seven")


@attrs.frozen
class Stationary:
    """The doc's shape: a few tasks with mixed outcomes among always- and never-passing ones.

    By default 40 tasks: 6 with p drawn uniformly from [0.2, 0.8], 17 that always
    pass and 17 that never pass. Probabilities are dealt to the ids at random, so
    a task's position in the shard says nothing about it. ``noise`` flips each
    observed reward with that probability; the true p, and so what counts as
    informative, is unchanged.

    Args:
        name: the name reports show (presets reuse this class as ``noisy`` and ``large``).
        n_tasks: how many tasks the shard holds.
        n_informative: how many of them get a p in [0.2, 0.8]; the rest split
            evenly between always-pass and never-pass.
        noise: probability that an observed reward is flipped.
    """

    name: str = "stationary"
    n_tasks: int = attrs.field(default=40, validator=_count)
    n_informative: int = attrs.field(default=6)
    noise: float = attrs.field(default=0.0, validator=_noise)

    @n_informative.validator
    def _check_informative(self, attribute: attrs.Attribute[int], value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= self.n_tasks:
            raise ValueError(
                f"Stationary(n_informative={value!r}): expected a whole number from 0 to "
                f"n_tasks={self.n_tasks}"
            )

    @property
    def label(self) -> str:
        """``stationary (clean)``, ``noisy (15% noise)``."""
        return _label(self.name, self.noise)

    def with_tasks(self, n_tasks: int) -> Stationary:
        """The same workload with ``n_tasks`` tasks and the same informative fraction."""
        informative = round(self.n_informative * n_tasks / self.n_tasks)
        return attrs.evolve(self, n_tasks=n_tasks, n_informative=informative)

    def build(self, seed: int) -> Scenario:
        """Deal the pass probabilities to the task ids for ``seed``."""
        rng = random.Random(seed)
        rest = self.n_tasks - self.n_informative
        probabilities = [rng.uniform(0.2, 0.8) for _ in range(self.n_informative)]
        probabilities += [1.0] * (rest - rest // 2) + [0.0] * (rest // 2)
        rng.shuffle(probabilities)
        keys = _task_ids(self.n_tasks)
        return _Fixed(keys, dict(zip(keys, probabilities, strict=True)), self.noise)


@attrs.frozen
class Drift:
    """The artifact improves during the run, so tasks pass through the informative band.

    Each task has a difficulty d drawn uniformly from [0, 10]. Skill rises linearly
    from 0 to 10 over the budget, and ``p = sigmoid(steepness * (skill - d))``. With
    the default steepness a task is informative for about a fifth of the run.

    Args:
        n_tasks: how many tasks the shard holds.
        steepness: the k in the sigmoid; higher makes each task's band crossing quicker.
        noise: probability that an observed reward is flipped.
    """

    name: ClassVar[str] = "drift"
    n_tasks: int = attrs.field(default=40, validator=_count)
    steepness: float = attrs.field(default=2.0, validator=number_in(0.0, low_open=True))
    noise: float = attrs.field(default=0.0, validator=_noise)

    @property
    def label(self) -> str:
        """``drift (clean)`` or ``drift (15% noise)``."""
        return _label(self.name, self.noise)

    def with_tasks(self, n_tasks: int) -> Drift:
        """The same workload with ``n_tasks`` tasks."""
        return attrs.evolve(self, n_tasks=n_tasks)

    def build(self, seed: int) -> Scenario:
        """Draw each task's difficulty for ``seed``."""
        rng = random.Random(seed)
        keys = _task_ids(self.n_tasks)
        difficulty = {key: rng.uniform(0.0, 10.0) for key in keys}
        return _Drifting(keys, difficulty, self.steepness, self.noise)


def _frozen(scores: Mapping[str, Sequence[float]]) -> Mapping[str, tuple[float, ...]]:
    return MappingProxyType({task: tuple(logged) for task, logged in scores.items()})


@attrs.frozen
class FromLog:
    """Your own logged rollouts, as an empirical workload: is a sampler worth it on your data?

    Each seed bootstraps every task's logged scores (draws as many as were logged,
    with replacement). A task's true p is the share of its resampled scores that
    reach ``pass_threshold``, and a rollout reports one of them at random, so
    graded scores stay graded. Estimates pool all rounds: a task in a typical log
    has too few rollouts per round to estimate its drift.

    Args:
        scores: every task's logged scores, in log order.
        pass_threshold: the score at which a logged rollout counted as a pass.
        noise: probability that an observed reward is flipped, on top of the log's own.
        source: where the scores came from, for reports.
    """

    name: ClassVar[str] = "from-log"
    scores: Mapping[str, tuple[float, ...]] = attrs.field(converter=_frozen, repr=False)
    pass_threshold: float = attrs.field(default=SOLVED, validator=solved_threshold())
    noise: float = attrs.field(default=0.0, validator=_noise)
    source: str = "rollouts"

    @scores.validator
    def _check_scores(self, attribute: attrs.Attribute[Any], value: Mapping[str, Any]) -> None:
        if not value or not all(value.values()):
            raise ValueError(
                f"FromLog({self.source}): every task needs at least one logged score, and "
                f"there must be at least one task; got {len(value)} tasks"
            )

    @property
    def label(self) -> str:
        """``from-log rollouts.jsonl`` plus the added noise, if any."""
        return _label(f"{self.name} {shown(self.source, 200)}", self.noise, clean="")

    def build(self, seed: int) -> Scenario:
        """Resample the log for ``seed`` and shuffle the shard order."""
        rng = random.Random(seed)
        resampled = {
            task: tuple(rng.choice(logged) for _ in logged) for task, logged in self.scores.items()
        }
        keys = list(resampled)
        rng.shuffle(keys)
        return _Logged(tuple(keys), resampled, self.pass_threshold, self.noise)


#: A rollout log is read up to this size, a line at a time (each bounded below).
_MAX_LOG_BYTES = 1 << 30
#: One rollout is a line of a hundred bytes or so; a longer line is not a rollout.
_MAX_LINE_BYTES = 1 << 16
#: Each seed resamples every logged rollout, and each pick of the oracle (and of several
#: samplers) looks at every task, so these bound a from-log bench's time and memory, which
#: the file's size does not: at both limits a seed of the default lineup took 12 s and the
#: run 350 MB on two shared cores, where a 42 MB log of a million tasks had taken over 5
#: minutes a seed and 2.3 GB, and 1 GiB of rollouts 2.5 minutes and 1.4 GB to read.
MAX_ROLLOUTS = 1_000_000
_MAX_LOG_TASKS = 100_000
#: Lines read at most, blank ones included.
_MAX_LOG_LINES = 2 * MAX_ROLLOUTS
#: The most workers a bench runs: ``bench share --workers`` and a ``--from-run`` run.
MAX_WORKERS = 1_000
_EXAMPLE = '{"task_id": "t1", "score": 0.0}'
#: The longest a path is shown in a message: a path on disk is shorter (PATH_MAX is 4,096).
_PATH = 1000


def read_log(path: str | PathLike[str], noise: float = 0.0) -> FromLog:
    """Read a JSONL rollout log into a :class:`FromLog` workload.

    Each non-blank line is an object with ``task_id`` (a string), ``score`` (a number
    in [0, 1]) and ``round`` (a whole number), and optionally ``pass_threshold``,
    which must agree across lines (default :data:`SOLVED`). Other keys are ignored.
    A last line cut short (no newline ends it, and it is not JSON), as a run stopped
    mid-write leaves it, is skipped, and the workload's label says so.

    Raises:
        BenchError: the file can't be read, is not a regular file (a directory, a FIFO,
            a device), is over 1 GiB, holds more than 1,000,000 rollouts or 100,000 tasks,
            or a line is malformed or over 64 KiB; the message names the path given, or the
            file and line, and what to try.
    """
    file = Path(path)
    try:
        with open_regular(file, _MAX_LOG_BYTES) as handle:
            return _parsed_log(file, _log_lines(file, handle), noise)
    except OSError as error:
        raise BenchError(
            f"cannot read the rollout log {short_repr(str(os.fspath(path)), _PATH)}: "
            f"{_unreadable(file, error)}; "
            f"expected a JSONL file of at most {_MAX_LOG_BYTES:,} bytes with one rollout per "
            f"line, such as {_EXAMPLE}"
        ) from error


def _unreadable(file: Path, error: OSError) -> str:
    """Why the log at ``file`` cannot be read, and what to try, in words: an ``OSError``
    names the file descriptor where it failed on one, not the path."""
    if isinstance(error, FileNotFoundError):
        return "there is no such file; check the path"
    if isinstance(error, PermissionError):
        return "permission denied; check that you may read it (ls -l)"
    if isinstance(error, IsADirectoryError) or os.path.isdir(file):  # isdir() never raises
        try:  # a bounded look: the directory may be huge
            children = itertools.islice(file.iterdir(), 1000)
            found = next((c for c in children if c.suffix == ".jsonl" and c.is_file()), None)
        except OSError:
            found = None
        such = f", such as {short_repr(str(found), _PATH)}" if found else ""
        return f"it is a directory; give the path of the log file in it{such}"
    return reason_of(error)


def _log_lines(file: Path, handle: BinaryIO) -> Iterator[str]:
    """The log's lines, each refused if longer than :data:`_MAX_LINE_BYTES`."""
    total = 0
    for number, line in enumerate(iter(lambda: handle.readline(_MAX_LINE_BYTES + 1), b""), 1):
        if number > _MAX_LOG_LINES:  # blank lines count no rollout, but each takes a read
            raise BenchError(
                f"{file.name} has more than {_MAX_LOG_LINES:,} lines, and a rollout log holds one "
                f"rollout a line, {MAX_ROLLOUTS:,} at most; give it a sample, such as its "
                f"last lines: tail -n {MAX_ROLLOUTS} {shlex.quote(str(file))} > sample.jsonl"
            )
        total += len(line)
        if total > _MAX_LOG_BYTES:  # a file can grow while it is read
            raise OSError(f"it is larger than the limit of {_MAX_LOG_BYTES:,} bytes")
        if len(line) > _MAX_LINE_BYTES:
            raise BenchError(
                f"{file.name} line {number} is longer than {_MAX_LINE_BYTES:,} bytes; a rollout "
                f"is one short line, such as {_EXAMPLE}"
            )
        encoding = "utf-8-sig" if number == 1 else "utf-8"
        try:
            text = line.decode(encoding)
        except UnicodeDecodeError as error:
            if line.endswith(b"\n") or error.end < len(line):
                raise BenchError(
                    f"{file.name} line {number} is not UTF-8 text: byte {error.start + 1} of "
                    f"the line is {line[error.start : error.start + 1]!r}; a rollout log is "
                    f"UTF-8, such as {_EXAMPLE}: convert it (iconv -f LATIN1 -t UTF-8, say)"
                ) from None
            # The last line, cut short inside a character: _parsed_log skips it as cut short.
            text = line[: error.start].decode(encoding)
        yield text


def _cut_short(line: str) -> bool:
    """Whether ``line``, which is not JSON, is a rollout cut short by a run stopped
    mid-write: the log's last line (no newline ends it), begun as an object."""
    return not line.endswith("\n") and line.lstrip().startswith("{")


def _parsed_log(file: Path, lines: Iterable[str], noise: float) -> FromLog:
    example = _EXAMPLE
    scores: dict[str, list[float]] = {}
    thresholds: dict[float, int] = {}
    torn = rollouts = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file.name} line {number}"
        try:
            entry = strict_json(line)
        except (ValueError, RecursionError) as error:  # RecursionError: nested too deeply
            if _cut_short(line):
                torn = number
                continue
            reason = error if isinstance(error, ValueError) else "nested too deeply"
            raise BenchError(f"{where} is not JSON ({reason}); expected {example}") from None
        if not isinstance(entry, dict):
            raise BenchError(
                f"{where} is {short_repr(entry)}, not a JSON object; expected {example}"
            )
        missing = [key for key in ("task_id", "score") if key not in entry]
        if missing:
            raise BenchError(
                f"{where} has no {' or '.join(map(repr, missing))} key; each line needs both, "
                f"such as {example} (a 'round' and a 'pass_threshold' may be given too)"
            )
        task, score = entry["task_id"], entry["score"]
        if not isinstance(task, str) or not task:
            quote = f" (quote it: {json.dumps(str(task))})" if type(task) in (int, float) else ""
            raise BenchError(
                f"{where}: 'task_id' must be a non-empty string, got {short_repr(task)}{quote}"
            )
        if not _is_fraction(score):
            advice = (
                "write a pass as 1.0 and a failure as 0.0"
                if isinstance(score, bool)
                else "normalise the reward (for example accuracy / 100)"
            )
            raise BenchError(
                f"{where}: 'score' must be a number in [0, 1], got {short_repr(score)}; {advice}"
            )
        round_index = entry.get("round", 0)  # rounds are pooled: one given is only checked
        if isinstance(round_index, bool) or not isinstance(round_index, int) or round_index < 0:
            raise BenchError(
                f"{where}: 'round' must be a whole number >= 0, got {short_repr(round_index)}"
            )
        if "pass_threshold" in entry:
            threshold = entry["pass_threshold"]
            if not _is_fraction(threshold) or threshold == 0:
                raise BenchError(
                    f"{where}: 'pass_threshold' must be a number in (0, 1], "
                    f"got {short_repr(threshold)}"
                )
            thresholds.setdefault(float(threshold), number)
        rollouts += 1
        if rollouts > MAX_ROLLOUTS:
            raise BenchError(
                f"{where}: the log holds more than {MAX_ROLLOUTS:,} rollouts, which the "
                f"bench resamples for every seed; give it a sample, such as its last "
                f"{MAX_ROLLOUTS:,} lines: tail -n {MAX_ROLLOUTS} "
                f"{shlex.quote(str(file))} > sample.jsonl"
            )
        if task not in scores and len(scores) == _MAX_LOG_TASKS:
            raise BenchError(
                f"{where}: the log names more than {_MAX_LOG_TASKS:,} tasks, and the oracle "
                f"looks at every task on each pick; give it the lines of a sample of at most "
                f"{_MAX_LOG_TASKS:,} tasks"
            )
        scores.setdefault(task, []).append(float(score))
    if len(thresholds) > 1:
        found = ", ".join(f"{value:g} (line {line})" for value, line in thresholds.items())
        raise BenchError(
            f"{file.name}: lines disagree on pass_threshold: {found}; a run has one threshold, "
            f"so split the log by run"
        )
    cut = f"line {torn}, the last, cut short" if torn else ""
    if not scores:
        raise BenchError(
            f"the rollout log {str(file)!r} has no rollouts"
            + (f" ({cut}, as a run stopped mid-write leaves it)" if torn else "")
            + f"; expected lines like {example}"
        )
    return FromLog(
        scores,
        pass_threshold=next(iter(thresholds), SOLVED),
        noise=noise,
        source=file.name + (f" ({cut} and skipped)" if torn else ""),
    )


#: The built-in workloads by name; ``from-log`` is built from a file with :func:`read_log`.
WORKLOADS: Mapping[str, Workload] = MappingProxyType(
    {
        "stationary": Stationary(),
        "noisy": Stationary(name="noisy", noise=0.15),
        "drift": Drift(),
        "large": Stationary(name="large", n_tasks=10_000, n_informative=200),
    }
)


@attrs.frozen
class _Fixed:
    keys: tuple[str, ...]
    p: Mapping[str, float]
    noise: float
    pass_threshold: float = SOLVED

    def true_p(self, task_id: str, progress: float) -> float:
        return self.p[task_id]

    def rollout(self, task_id: str, progress: float, rng: random.Random) -> float:
        return _flip(
            1.0 if rng.random() < self.p[task_id] else 0.0, self.pass_threshold, self.noise, rng
        )


@attrs.frozen
class _Drifting:
    keys: tuple[str, ...]
    difficulty: Mapping[str, float]
    steepness: float
    noise: float
    pass_threshold: float = SOLVED

    def true_p(self, task_id: str, progress: float) -> float:
        x = self.steepness * (10.0 * progress - self.difficulty[task_id])
        # The two branches keep exp() from overflowing for a large steepness.
        return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))

    def rollout(self, task_id: str, progress: float, rng: random.Random) -> float:
        passed = rng.random() < self.true_p(task_id, progress)
        return _flip(1.0 if passed else 0.0, self.pass_threshold, self.noise, rng)


@attrs.frozen
class _Logged:
    keys: tuple[str, ...]
    scores: Mapping[str, tuple[float, ...]]
    pass_threshold: float
    noise: float
    p: Mapping[str, float] = attrs.field(init=False)

    @p.default
    def _pass_rates(self) -> Mapping[str, float]:
        threshold = self.pass_threshold
        return {
            task: sum(score >= threshold for score in drawn) / len(drawn)
            for task, drawn in self.scores.items()
        }

    def true_p(self, task_id: str, progress: float) -> float:
        return self.p[task_id]

    def rollout(self, task_id: str, progress: float, rng: random.Random) -> float:
        return _flip(rng.choice(self.scores[task_id]), self.pass_threshold, self.noise, rng)


def _flip(score: float, pass_threshold: float, noise: float, rng: random.Random) -> float:
    # The draw happens even without noise, so that clean and noisy runs of one seed
    # consume the generator identically and differ only where a reward was flipped.
    if rng.random() < noise:
        return 0.0 if score >= pass_threshold else 1.0
    return score


def _task_ids(n_tasks: int) -> tuple[str, ...]:
    width = len(str(n_tasks - 1))
    return tuple(f"task-{index:0{width}d}" for index in range(n_tasks))


def _label(name: str, noise: float, clean: str = " (clean)") -> str:
    return f"{name} ({noise:.0%} noise)" if noise else f"{name}{clean}"


def _is_fraction(value: object) -> TypeGuard[float]:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0.0 <= value <= 1.0
