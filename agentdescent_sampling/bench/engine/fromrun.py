"""``bench --from-run RUN_DIR``: a real ``agentdescent evolve`` run's make-up, as a workload.

A run directory of the engine's run store (``agentdescent evolve`` writes one per run, under
``~/.agentdescent/runs/<run_id>``) keeps one record per rollout under
``ledger/trajectories/``, unless its spec set ``record_rollouts: false``: the task id, the
purpose (``rollout``, ``self_verify``, ``eval`` for the held-out gate), the reward and the
artifact version the rollout ran against. :func:`read_run` reads them with the standard
library (no agentdescent import) and :func:`estimate_make_up` sorts the train tasks by what
their ``rollout`` records show, in order of artifact version:

- **always**: every record passed (reward at or above the run's pass threshold);
- **never**: every record failed;
- **flipped**: failed, then passed after a commit, and passed from then on: a fixable task,
  with the failures it took (:attr:`TaskEstimate.failures`);
- **mixed**: passed and failed under one artifact version, or passed and later failed: a
  task whose reward is not a function of the fixes committed, such as a flaky one;
- **too-few**: fewer than :data:`MIN_RECORDS` records, left out of the workload.

:meth:`RecordedRun.workload` maps that make-up onto the artifact bench's own workload
machinery (:class:`~agentdescent_sampling.bench.engine.workloads.EngineWorkload`): a flipped
task is a lesson whose rule the reflector finds on the failure the task took, a mixed one a
flaky lesson, and the run's rounds, workers and concurrency are the workload's.
:data:`CANNOT_INFER` says what the records cannot tell.
"""

from __future__ import annotations

import errno
import json
import math
import os
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from ..._display import plural, shown
from ..._files import (
    checked_path,
    load_document,
    parse_bounded,
    process_ended,
    read_bytes,
    reason_of,
    strict_json,
)
from ...errors import BenchError
from ...protocol import SOLVED, is_count, short_repr
from ..report import WIDTH
from ..workloads import MAX_ROLLOUTS, MAX_WORKERS
from .workloads import EngineWorkload

__all__ = [
    "CANNOT_INFER",
    "MIN_RECORDS",
    "TASK_KINDS",
    "MakeUp",
    "Record",
    "RecordedRun",
    "TaskEstimate",
    "estimate_make_up",
    "format_make_up",
    "read_run",
]

#: Records a task needs before the estimate places it; fewer make it ``too-few``.
MIN_RECORDS = 2
#: What :func:`estimate_make_up` can call a task, in the order reports list them.
TASK_KINDS = ("always", "never", "flipped", "mixed", "too-few")

#: What the rollout records cannot tell, as the make-up report prints it.
CANNOT_INFER = (
    "a never-pass task from one that needed more failures than the run gave it: both count "
    "as never",
    "an always-pass task first seen after a commit from one that commit fixed",
    "repeats: the store keeps one record per artifact text and task, so a task rolled out "
    "again under an unchanged artifact leaves no record; a flipped task's failures are the "
    "artifact versions it failed under, a floor on the failures it took",
    "which failure taught the fix: a flip is credited to the task itself, so one rule that "
    "fixed many tasks becomes one rule per task",
    "a regression: a task that passed and failed after a commit is mixed, run as a flaky lesson",
    "the held-out side: each train task gets a held-out twin; the run's own held-out "
    "records are not used, nor are self-verify records, which measure a candidate",
    "your reflector: the bench's simulated one stands in for it (--reflector)",
)

_STORE = "ledger/trajectories"
#: One line per round: ``round``, numbered from 0 by each process of the run (a resume
#: starts again at 0), and ``rollouts``, the rollouts that process had made by its end.
_ROUNDS = "rounds.jsonl"
#: The engine warns of a held-out set smaller than this (agentdescent's ``MIN_HELD_OUT``).
_MIN_HELD_OUT = 4
#: A record holds the rendered artifact, which for a skill directory can be large.
_MAX_RECORD_BYTES = 1 << 28
_MAX_FILE_BYTES = 1 << 24
#: A round is one line of a few hundred bytes; a longer line is not read as one.
_MAX_ROUND_BYTES = 1 << 20
#: Bad lines of ``rounds.jsonl`` a note names by number; it counts the rest.
_NAMED_LINES = 5
_RECORD = "a JSON object with task_id, purpose, reward and base_version, as agentdescent writes"
_WHERE = (
    "give the directory of one run, as `agentdescent --json evolve` prints it ('dir'), such "
    "as ~/.agentdescent/runs/<run_id>; `agentdescent status` lists the runs"
)


@attrs.frozen
class Record:
    """One recorded rollout of a train task.

    Args:
        task_id: the task.
        reward: the reward the rollout earned.
        version: the artifact version the rollout ran against.
        at: when the store wrote it (seconds since the epoch): the order within a version.
    """

    task_id: str
    reward: float
    version: int
    at: float = 0.0


@attrs.frozen
class TaskEstimate:
    """What one task's records show.

    Args:
        task_id: the task.
        kind: one of :data:`TASK_KINDS`.
        passes: records at or above the pass threshold.
        failures: records below it; for a ``flipped`` task, the failures before its flip.
    """

    task_id: str
    kind: str = attrs.field(validator=attrs.validators.in_(TASK_KINDS))
    passes: int
    failures: int

    @property
    def records(self) -> int:
        """The task's records."""
        return self.passes + self.failures


@attrs.frozen
class MakeUp:
    """The estimated make-up of a run's train tasks.

    Args:
        tasks: one estimate per task, in task id order.
        pass_threshold: the reward that counted as a pass.
        graded: whether any reward fell strictly between 0 and 1.
    """

    tasks: tuple[TaskEstimate, ...]
    pass_threshold: float = SOLVED
    graded: bool = False

    def of(self, kind: str) -> tuple[TaskEstimate, ...]:
        """The tasks estimated as ``kind``, one of :data:`TASK_KINDS`."""
        return tuple(task for task in self.tasks if task.kind == kind)

    @property
    def flip_failures(self) -> tuple[int, ...]:
        """The failures each flipped task took before it passed, smallest first."""
        return tuple(sorted(task.failures for task in self.of("flipped")))

    @property
    def luck(self) -> float | None:
        """The share of the mixed tasks' records that passed, or None without mixed tasks."""
        mixed = self.of("mixed")
        records = sum(task.records for task in mixed)
        return sum(task.passes for task in mixed) / records if records else None


def estimate_make_up(
    records: Iterable[Record], pass_threshold: float = SOLVED, graded: bool | None = None
) -> MakeUp:
    """Sort each task of ``records`` into one of :data:`TASK_KINDS` (see the module docs).

    Args:
        records: rollout records of train tasks, in any order.
        pass_threshold: the reward that counts as a pass.
        graded: whether the scores are graded; ``None`` to tell from the rewards.
    """
    by_task: dict[str, list[Record]] = {}
    for record in records:
        by_task.setdefault(record.task_id, []).append(record)
    tasks = []
    for task_id in sorted(by_task):
        ordered = sorted(by_task[task_id], key=lambda record: (record.version, record.at))
        tasks.append(_estimate(task_id, ordered, pass_threshold))
    if graded is None:
        graded = any(0.0 < record.reward < 1.0 for group in by_task.values() for record in group)
    return MakeUp(tuple(tasks), pass_threshold, graded)


def _estimate(task_id: str, ordered: list[Record], pass_threshold: float) -> TaskEstimate:
    passed = [record.reward >= pass_threshold for record in ordered]
    passes = sum(passed)
    failures = len(passed) - passes
    if len(passed) < MIN_RECORDS:
        kind = "too-few"
    elif not failures:
        kind = "always"
    elif not passes:
        kind = "never"
    else:
        outcomes: dict[int, set[bool]] = {}
        for record, outcome in zip(ordered, passed, strict=True):
            outcomes.setdefault(record.version, set()).add(outcome)
        first = passed.index(True)
        both = any(len(seen) > 1 for seen in outcomes.values())
        kind = "mixed" if both or not all(passed[first:]) else "flipped"
    return TaskEstimate(task_id, kind, passes, failures)


@attrs.frozen
class RecordedRun:
    """A run directory's rollout records and the shape of the run that made them.

    Args:
        path: the run directory.
        state: the run's state in ``status.json`` (``done``, ``running``, ...).
        make_up: the estimated make-up of its train tasks.
        rollout_records: ``rollout`` records read.
        spent: rollouts the run made, records or not: every round in ``rounds.jsonl``,
            a resumed run's included (``status.json`` counts the last process's alone, and
            stands in for that process's rounds if the file lacks them); a floor if
            ``notes`` says so.
        workers: ``n_workers`` of the run.
        max_concurrency: rollouts the run had in flight at once.
        unused: records of other purposes (``self_verify``, ``eval``), by purpose.
        asynchronous: whether the run went by ``evolve(asynchronous=True)`` (its spec's
            ``evolve.asynchronous``), which the bench then drives too.
        notes: what the make-up report says of a ``rounds.jsonl`` that is missing, empty,
            over its size limit, unreadable, has lines that are not a round or lacks the
            run's last rounds: ``spent`` is then a floor, and the note says what it counts.
    """

    path: Path
    state: str
    make_up: MakeUp
    rollout_records: int
    spent: int
    workers: int
    max_concurrency: int
    unused: Mapping[str, int] = attrs.field(factory=dict)
    asynchronous: bool = False
    notes: tuple[str, ...] = ()

    @property
    def run_id(self) -> str:
        """The run's id: its directory's name."""
        return self.path.name

    @property
    def rounds(self) -> int:
        """Rounds of ``workers`` rollouts that spend what the run spent."""
        return max(1, math.ceil(self.spent / self.workers))

    def workload(self) -> EngineWorkload:
        """The engine workload of this make-up and this run's shape, named ``from-run``.

        Flipped tasks become lessons needing the failures each took; mixed tasks flaky
        lessons, passing by luck at the mixed records' pass share and drawing their
        failures from the flipped tasks' (1 to 3 when none flipped); always- and never-pass
        tasks stay what they were; too-few tasks are left out. Every task has a held-out
        twin. The workload carries :attr:`notes`, which the bench's JSON document reports.

        Raises:
            BenchError: no task flipped or was mixed, so no sampler could buy anything.
        """
        make_up = self.make_up
        ks, mixed = make_up.flip_failures, len(make_up.of("mixed"))
        if not ks and not mixed:
            few, tasks = len(make_up.of("too-few")), len(make_up.tasks)
            # The engine keeps one record of a task per artifact version (it dedupes the same
            # text on the same task), so only commits add records, never rounds alone.
            sparse = (
                f"; {few} of its {tasks} tasks have fewer than {MIN_RECORDS} rollout records, "
                f"and the engine records a task once per version of the artifact, so a task is "
                f"placed only by rollouts before and after a commit"
                if few * 2 > tasks
                else ""
            )
            raise BenchError(
                f"--from-run {str(self.path)!r}: no task flipped from failing to "
                f"passing, and none passed and failed ({_counts(make_up)}), so nothing in this "
                f"make-up can be learned and no sampler can buy anything{sparse}. Bench a run "
                f"in which a task failed, then passed after a commit: if this one stopped "
                f'before its fixes were committed, in its run spec, more "evolve": '
                f'{{"rounds": ...}}, and a "patience" as large (the engine stops a run after '
                f'that many rounds without a commit), or more "n_workers"; if it ran on without '
                f"committing, a run whose reflector's proposals pass the gate"
            )
        options: dict[str, Any] = {}
        if ks:
            options["failures_needed"] = ks
        if make_up.luck is not None:
            options.update(flaky=mixed, luck=round(make_up.luck, 2))
        return EngineWorkload(
            name="from-run",
            summary=f"from the run in {shown(str(self.path))}: {_counts(make_up, too_few=False)}",
            lessons=len(ks) + mixed,
            always=len(make_up.of("always")),
            never=len(make_up.of("never")),
            graded=make_up.graded,
            workers=self.workers,
            max_concurrency=self.max_concurrency,
            rounds=self.rounds,
            notes=self.notes,
            **options,
        )


def _counts(make_up: MakeUp, too_few: bool = True) -> str:
    ks = make_up.flip_failures
    span = "" if not ks else f" (k {ks[0]})" if ks[0] == ks[-1] else f" (k {ks[0]}-{ks[-1]})"
    parts = [
        f"{len(make_up.of('flipped'))} flipped{span}",
        f"{len(make_up.of('mixed'))} mixed",
        f"{len(make_up.of('always'))} always-pass",
        f"{len(make_up.of('never'))} never-pass",
    ]
    if too_few:
        parts.append(f"{len(make_up.of('too-few'))} too few records")
    return ", ".join(parts)


def _failures(ks: tuple[int, ...]) -> str:
    """'1 failure: 2 tasks; 3 failures: 1 task', for the flipped tasks' failures ``ks``."""
    counts = {k: ks.count(k) for k in ks}
    return "; ".join(
        f"{k} failure{'s' * (k > 1)}: {n} task{'s' * (n > 1)}" for k, n in counts.items()
    )


def format_make_up(run: RecordedRun, workload: EngineWorkload | None = None) -> str:
    """What the run's records show, the workload the bench runs, and what they cannot tell,
    wrapped to 100 columns."""
    make_up = run.make_up
    # The run's name, state and record purposes come from its files: shown escaped.
    unused = ", ".join(f"{count} {shown(purpose)}" for purpose, count in sorted(run.unused.items()))
    lines = [
        f"Make-up of run {shown(run.run_id)} ({shown(run.state)}): {run.rollout_records} "
        f"rollout records of {len(make_up.tasks)} train tasks, from the {run.spent} rollouts "
        f"it made",
        *(f"  {note}" for note in run.notes),
        f"  a pass: a reward >= {make_up.pass_threshold:g}"
        + ("; graded scores" if make_up.graded else "")
        + (f"; not used: {unused} records" if unused else ""),
    ]
    for kind in TASK_KINDS:
        tasks = make_up.of(kind)
        detail = ""
        if kind == "flipped" and tasks:
            detail = f"  after {_failures(make_up.flip_failures)}"
        elif kind == "mixed" and tasks:
            detail = f"  {make_up.luck:.0%} of their records passed"
        elif kind == "too-few" and tasks:
            passed = sum(1 for task in tasks if task.passes)
            detail = (
                f"  fewer than {MIN_RECORDS} records ({passed} passed, {len(tasks) - passed} "
                f"failed), left out: a task gets another record only under another artifact "
                f"version"
            )
        lines.append(f"  {kind:<8} {len(tasks):>5}{detail}")
    if workload is not None:
        lines.append(
            f"The bench runs it as the workload {workload.name}: {workload.lessons} lessons "
            f"({workload.flaky} flaky), {workload.always} always-pass, {workload.never} "
            f"never-pass, each with a held-out twin; {workload.rounds} rounds x "
            f"{workload.workers} workers, {workload.max_concurrency} in flight"
            + (f"; graded, a pass at {workload.solved_threshold:g}" if workload.graded else "")
            + ("; by evolve(asynchronous=True), as the run went" if run.asynchronous else "")
        )
        held_out = workload.lessons + workload.always + workload.never
        if held_out < _MIN_HELD_OUT:
            lines.append(
                f"  only {held_out} held-out twins: each commit decision rests on that many "
                f"rollouts, so samplers differ little"
            )
    lines.append("What the records cannot tell:")
    lines += [f"  - {line}" for line in CANNOT_INFER]
    return "\n".join(
        wrapped
        for line in lines
        for wrapped in textwrap.wrap(
            line, WIDTH, subsequent_indent=" " * (len(line) - len(line.lstrip()) + 2)
        )
    )


def read_run(path: str | Path) -> RecordedRun:
    """Read the run directory at ``path``: its rollout records and the run's shape.

    Raises:
        BenchError: ``path`` is not a run directory, its ``status.json``, ``spec.json`` or
            a record cannot be read, it recorded no rollout, or its records are of more
            than one artifact; the message names the path and what to try.
    """
    given = repr(str(path))
    try:
        run = checked_path(path)
    except ValueError as error:
        raise BenchError(f"--from-run {given}: {error}; {_WHERE}") from None
    if not run.is_dir():
        if run.exists():
            what = "not a directory"
        elif run.is_symlink():  # exists() follows the link, and finds nothing at its end
            what = _link_end(run)
        else:
            what = "no such directory"
            looked = os.path.abspath(run)
            if looked != str(path):  # relative, or with a ~: where it was looked for
                what += f" ({short_repr(looked, 1000)})"
            # The engine's run store: $AGENTDESCENT_HOME/runs, else ~/.agentdescent/runs.
            home = os.environ.get("AGENTDESCENT_HOME") or "~/.agentdescent"
            stored = Path(home, "runs", str(path))
            if str(path) == run.name and stored.expanduser().is_dir():  # a run id, not a path
                where = short_repr(str(stored), 1000)
                what += f"; it is the id of the run in {where}: give that directory"
        raise BenchError(f"--from-run {given}: {what}; {_WHERE}")
    if not (run / "status.json").is_file() or not (run / "spec.json").is_file():
        raise BenchError(f"--from-run {given}: {_not_a_run(run)}")
    run = run.resolve()
    status, spec = _document(run / "status.json"), _document(run / "spec.json")
    evolve: dict[str, Any] = spec["evolve"] if isinstance(spec.get("evolve"), dict) else {}
    store = run / _STORE
    records: list[Record] = []
    workers: set[object] = set()
    artifacts: set[str] = set()
    unused: dict[str, int] = {}
    try:
        files = sorted(f for f in store.iterdir() if f.suffix == ".json") if store.is_dir() else []
    except OSError as error:
        raise BenchError(
            f"cannot list the run's rollout records in {str(store)!r}: {reason_of(error)}; "
            f"check that the directory can be read"
        ) from None
    for file in files:
        entry = _record(file)
        if entry["purpose"] != "rollout":
            unused[entry["purpose"]] = unused.get(entry["purpose"], 0) + 1
            continue
        artifacts.add(entry["artifact_id"])
        workers.add(entry.get("worker_id"))
        records.append(Record(entry["task_id"], entry["reward"], entry["version"], entry["at"]))
    if not records:
        raise BenchError(f"--from-run {given}: {_no_rollouts(store, spec, status)}")
    if len(artifacts) > 1:
        raise BenchError(
            f"--from-run {given}: its rollout records are of {len(artifacts)} artifacts "
            f"({', '.join(sorted(map(short_repr, artifacts)))}); bench --from-run reads the "
            f"run of one artifact, as a run spec makes"
        )
    threshold = evolve.get("solved_threshold")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        threshold = SOLVED
    if not 0 < threshold <= 1:
        threshold = SOLVED
    n_workers = _whole(evolve.get("n_workers")) or len(workers)
    concurrency = _whole(evolve.get("max_concurrency")) or n_workers
    # status.json counts the last process alone (the engine writes it after each round's
    # line in rounds.jsonl), so it stands in for that process's rounds if their lines are lost.
    # On the asynchronous path both count the rollouts up to the last merge alone, and only
    # result.json, written as the process ends, counts them all (301 against 16, say).
    last, last_from = _whole(status.get("rollouts")) or 0, "status.json"
    final = _final_rollouts(run)
    if final > last:
        last, last_from = final, "result.json"
    log = _read_rounds(run / _ROUNDS)
    counted = log.before + max(log.last, last)
    spent = max(len(records), counted)
    for what, value, limit in (("workers", n_workers, MAX_WORKERS),
                               ("rollouts", spent, MAX_ROLLOUTS)):  # fmt: skip
        if value > limit:  # each would cost the bench time and memory, for every seed
            raise BenchError(
                f"--from-run {given}: the run counts {value:,} {what} (spec.json, status.json, "
                f"result.json or rounds.jsonl), past the {limit:,} the bench replays; it read "
                f"{len(records):,} rollout records from {len(workers):,} workers, so a file "
                f"was changed or damaged: check those files"
            )
    return RecordedRun(
        path=run,
        state=str(status.get("state", "unknown")),
        make_up=estimate_make_up(records, threshold),
        rollout_records=len(records),
        spent=spent,
        workers=n_workers,
        max_concurrency=min(concurrency, n_workers),
        unused=unused,
        asynchronous=evolve.get("asynchronous") is True,
        notes=_rounds_notes(log, (last, last_from), len(records), spent, n_workers)
        + _ended(run, status),
    )


def _ended(run: Path, status: Mapping[str, Any]) -> tuple[str, ...]:
    """The note on a run that ``status.json`` calls running whose process has ended (killed
    with SIGKILL, say): the engine calls it failed when it next reads it."""
    pid = status.get("pid")
    if status.get("state") != "running" or isinstance(pid, bool) or not isinstance(pid, int):
        return ()
    if not 0 < pid < 2**31 or not _gone(pid):  # a pid no system gives: nothing to tell
        return ()
    return (
        f"status.json says running, but its process {pid} has ended (killed, or the machine "
        f"went away): its records are benched as they stand; agentdescent resume "
        f"{shown(run.name)} continues the run",
    )


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has surely ended, as the engine asks: a zombie has."""
    if process_ended(pid):
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rpartition(")")[2].split()[:1] == ["Z"]
    except OSError:  # no /proc (macOS, Windows): nothing more to tell
        return False


def _link_end(link: Path) -> str:
    """Where the symbolic link at ``link``, which leads to nothing, goes wrong, in words."""
    try:
        os.stat(link)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a loop of symbolic links"
    return f"a symbolic link to {short_repr(os.readlink(link))}, which leads to nothing"


def _whole(value: object) -> int | None:
    """``value`` if it is a whole number >= 1, else None (the engine's default then)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value


@attrs.frozen
class _RoundsLog:
    """What a run's ``rounds.jsonl`` says of the rollouts the run made.

    Each process of a run (the first, then each resume) numbers its rounds from 0 and
    counts its rollouts from 0, so a round numbered no higher than the one before it, or
    counting fewer rollouts, starts another process.

    Args:
        before: rollouts of every process but the last the file shows, by their last rounds.
        last: rollouts of the last process the file shows, by its last round.
        rounds: lines read as a round.
        lines: lines that are not blank.
        bad: the numbers of the lines that are not a round.
        torn: whether the last of ``bad`` is the file's last line, begun as a round but
            with no newline to end it, as a run stopped mid-write leaves it.
        unread: why the file was not read at all, or None.
    """

    before: int = 0
    last: int = 0
    rounds: int = 0
    lines: int = 0
    bad: tuple[int, ...] = ()
    torn: bool = False
    unread: str | None = None


def _read_rounds(file: Path) -> _RoundsLog:
    """The rounds in the run's ``rounds.jsonl`` at ``file``, read as bytes within
    :data:`_MAX_FILE_BYTES` and decoded line by line, so one bad line costs that line."""
    try:
        data = read_bytes(file, _MAX_FILE_BYTES)
    except FileNotFoundError:
        return _RoundsLog(unread=f"there is no {_ROUNDS}, where agentdescent logs each round")
    except OSError as error:
        return _RoundsLog(unread=f"{_ROUNDS} was not read: {shown(reason_of(error))}")
    before = last = rounds = 0
    previous = -1
    bad: list[int] = []
    lines = data.split(b"\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        entry = _round(line, first=number == 1)
        if entry is None:
            bad.append(number)
            continue
        round_index, rollouts = entry
        if round_index <= previous or rollouts < last:  # a resume: a new process
            before += last
        previous, last = round_index, rollouts
        rounds += 1
    return _RoundsLog(
        before=before,
        last=last,
        rounds=rounds,
        lines=rounds + len(bad),
        bad=tuple(bad),
        # split() leaves b"" after a final newline, so only an unended last line is lines[-1].
        torn=bool(bad) and bad[-1] == len(lines) and lines[-1].lstrip().startswith(b"{"),
    )


def _round(line: bytes, first: bool) -> tuple[int, int] | None:
    """A line's round number and rollouts so far, or None if it is not a round."""
    if len(line) > _MAX_ROUND_BYTES:
        return None
    try:
        entry = parse_bounded(line.decode("utf-8-sig" if first else "utf-8"), strict_json)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(entry, dict):
        return None
    round_index, rollouts = entry.get("round"), entry.get("rollouts")
    if not (is_count(round_index) and is_count(rollouts)):
        return None
    return round_index, rollouts


def _rounds_notes(
    log: _RoundsLog, last: tuple[int, str], records: int, spent: int, workers: int
) -> tuple[str, ...]:
    """What the make-up report says of ``log`` when the rollouts counted from it are a
    floor: what is wrong with the file, and what ``spent`` was counted from instead.

    Args:
        log: the run's ``rounds.jsonl``, as read.
        last: the rollouts of the run's last process, and the file that counts them
            (``status.json``, or ``result.json`` where it counts more).
        records: the run's rollout records.
        spent: the rollouts the run made, as :func:`read_run` counted them.
        workers: the run's workers, for the rounds ``spent`` makes.
    """
    status, counted_by = last
    lacking = status > log.last and log.rounds > 0
    if lacking and counted_by == "result.json" and log.unread is None and not log.bad:
        return (  # the asynchronous path: not a floor, the whole count
            f"{_ROUNDS} and status.json count {log.last} rollouts, up to the run's last "
            f"merge, as the asynchronous path writes them; result.json, written as the run "
            f"ended, counts {status}, which the bench takes",
        )
    if log.unread is not None:
        trouble = log.unread
    elif log.bad:
        trouble = _bad_lines(log)
    elif not log.rounds:
        trouble = f"{_ROUNDS} is empty"
    elif lacking:  # status.json comes after each round's line; result.json after them all
        trouble = f"{_ROUNDS} lacks the run's last rounds"
    else:
        return ()
    rounds = f"{log.rounds} {'readable ' * bool(log.bad)}round{'s' * (log.rounds != 1)}"
    counted = log.before + max(log.last, status)
    if not log.rounds:
        source = f"{counted_by}'s {status} (the run's last process's alone, if it was resumed)"
    elif lacking:
        source = (
            f"its {rounds} with {counted_by}'s {status} for the run's last process in place "
            f"of the {log.last} its last round shows"
        )
    else:
        source = f"its {rounds}"
    if records > counted:
        source = f"its {records} rollout records, which outnumber " + (
            source if not log.rounds else f"the {counted} of {source}"
        )
    rounds_run = max(1, math.ceil(spent / workers))
    shape = f"{rounds_run} round{'s' * (rounds_run != 1)} of {workers} worker{'s' * (workers != 1)}"
    return (
        f"{trouble}. So the {spent} rollouts it made ({shape}) are a floor, counted from {source}",
    )


def _bad_lines(log: _RoundsLog) -> str:
    """Which lines of ``log`` are not a round, and that the last is cut short if it is."""
    bad = log.bad
    if log.torn and len(bad) == 1:
        return (
            f"{_ROUNDS}'s last line, line {bad[0]}, is cut short, as a run stopped mid-write "
            f"leaves it, and is skipped"
        )
    named = [str(number) for number in bad[:_NAMED_LINES]]
    if len(bad) > _NAMED_LINES:
        named.append(f"{len(bad) - _NAMED_LINES} more")
    which = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    several = len(bad) > 1
    text = (
        f"{len(bad)} of the {log.lines} lines of {_ROUNDS} {'are' if several else 'is'} not "
        f"a round and {'are' if several else 'is'} skipped: line{'s' * several} {which}"
    )
    if log.torn:
        text += f" (line {bad[-1]}, the last, is cut short, as a run stopped mid-write leaves it)"
    return text


def _not_a_run(path: Path) -> str:
    """Why ``path`` is not a run directory, and which directory near it is."""
    if path.name == "ledger" and (path.parent / "status.json").is_file():
        return f"this is a run's ledger; give the run's directory, {str(path.parent)!r}"
    try:
        runs = sorted(child for child in path.iterdir() if (child / "status.json").is_file())
    except OSError:
        runs = []
    if runs:
        return (
            f"this is a run store holding {plural(len(runs), 'run')}; "
            f"give one run's directory, such as {str(runs[-1])!r}"
        )
    unread = [  # a FIFO or a directory by that name is there, and no file to read
        f"a {name} that is no regular file" if (path / name).exists() else f"no {name}"
        for name in ("status.json", "spec.json")
        if not (path / name).is_file()
    ]
    return (
        f"not an agentdescent run directory: it has {' and '.join(unread)}, which "
        f"`agentdescent evolve` writes in each run's directory as a file; {_WHERE}"
    )


def _no_rollouts(store: Path, spec: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    if spec.get("record_rollouts") is False:
        return (
            "the run recorded no rollouts: its spec sets record_rollouts: false; run the spec "
            "again without it (recording is the default)"
        )
    where = "no rollout records" if store.is_dir() else f"no {_STORE}/ directory"
    state = status.get("state")
    go_on = (
        f"continue it with agentdescent resume {shown(store.parent.parent.name)}"
        if state == "cancelled"
        else "let it finish a round"
    )
    return (
        f"the run has {where} (state {short_repr(state)}, "
        f"{short_repr(status.get('rollouts', 0))} rollouts); {go_on}, or run the "
        f"spec again with agentdescent 0.7.0, which records every rollout by default"
    )


def _final_rollouts(run: Path) -> int:
    """The rollouts ``result.json`` counts, which the engine writes as the run's process
    ends; 0 where it is missing, unreadable or counts none."""
    try:
        document = load_document(run / "result.json", strict_json, _MAX_FILE_BYTES)
    except (OSError, UnicodeDecodeError, ValueError):
        return 0
    return (_whole(document.get("rollouts")) or 0) if isinstance(document, dict) else 0


def _document(file: Path) -> dict[str, Any]:
    """The JSON object in ``file``, a run's ``status.json`` or ``spec.json``."""
    try:
        document = load_document(file, strict_json, _MAX_FILE_BYTES)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BenchError(
            f"cannot read {str(file)!r}: {reason_of(error)}; expected the JSON object "
            f"`agentdescent evolve` writes there; run the spec again if the file was damaged"
        ) from None
    if not isinstance(document, dict):
        raise BenchError(
            f"{str(file)!r} holds {short_repr(document)}, not a JSON object; expected "
            f"the one `agentdescent evolve` writes there"
        )
    return document


def _record(file: Path) -> dict[str, Any]:
    """One record's fields: task_id, purpose, reward, artifact_id, at, and a rollout's
    version of its artifact."""

    def refuse(reason: str) -> BenchError:
        return BenchError(
            f"cannot read the run's rollout record {str(file)!r}: {reason}; expected "
            f"{_RECORD} under {_STORE}/; move the file aside, or run the spec again"
        )

    try:
        entry = load_document(file, strict_json, _MAX_RECORD_BYTES)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise refuse(reason_of(error)) from None
    if not isinstance(entry, dict):
        raise refuse(f"it holds {short_repr(entry)}, not a JSON object")
    for key in ("task_id", "purpose", "artifact_id"):
        if not isinstance(entry.get(key), str):
            raise refuse(f"{key!r} is {short_repr(entry.get(key))}, not a string")
    reward = entry.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        raise refuse(f"'reward' is {short_repr(reward)}, not a number")
    if not 0.0 <= reward <= 1.0:  # a pass is a reward at the run's solved_threshold, up to 1
        raise BenchError(
            f"the run's rollout record {str(file)!r} has 'reward' {short_repr(reward)}, outside "
            f"[0, 1], where the bench reads a run's rewards as the engine's scores: bench a run "
            f"whose reward function returns [0, 1] (for example accuracy / 100)"
        )
    at = entry.get("ts", 0.0)
    if isinstance(at, bool) or not isinstance(at, (int, float)):
        raise refuse(f"'ts' is {short_repr(at)}, not a number")
    version: object = None
    if entry["purpose"] == "rollout":
        encoded = entry.get("base_version")
        try:
            vector = json.loads(encoded) if isinstance(encoded, str) else None
        except ValueError:
            vector = None
        if not isinstance(vector, dict):
            raise refuse(
                f"'base_version' is {short_repr(encoded)}, not a JSON-encoded object such as "
                f"'{{\"my-skill\": 2}}'"
            )
        version = vector.get(entry["artifact_id"])
        if isinstance(version, bool) or not isinstance(version, int):
            raise refuse(
                f"its base_version {short_repr(vector)} gives no whole-number version of its "
                f"artifact {short_repr(entry['artifact_id'])}"
            )
    return {**entry, "reward": float(reward), "at": float(at), "version": version}
