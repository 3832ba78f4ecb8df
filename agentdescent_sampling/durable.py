"""Sampler state on disk that survives a stop, a crash and ``agentdescent resume``.

``create(spec, state=PATH)`` wraps the sampler it builds in a :class:`DurableSampler`,
which keeps its state in an SQLite database at ``PATH`` (WAL mode, ``synchronous=FULL``):

- **What is kept.** A snapshot of ``state_dict()`` and, after it, a log of everything the
  sampler was told: each ``record(task_id, score)``, each call named in :data:`TOLD`
  (``evidence``, ``end_round``, ``repeated``) with its JSON arguments, and each pick (with its
  shard, stored once). Opening the file loads the snapshot and replays the log, so the
  sampler is exactly the one that stopped, between rounds and, but for what it keeps only in
  memory until a round ends, mid-round. Exactly, that is, for a sampler whose calls depend
  only on its state and arguments, as every built-in's do; replaying a sampler that draws
  random numbers it does not save can pick otherwise, and its resume is as close as its
  ``state_dict()`` allows. Wired ``fixable-first`` stopped mid-round keeps the round's
  records and forgets which of its failed tasks wait for the round's end, as a copy does
  (docs/configuration.md).
- **Cost.** A record writes one row and commits: O(1), whatever the number of tasks (see
  ``benchmarks/resume.md``). A pick is written with the next record or told call, in the
  same transaction (or, once a record was written, when the file is closed); it compares
  its shard with the few it has logged (O(keys), as the pick itself is) and stores a new
  one once. A new snapshot replaces the log once it holds 64 entries and either
  replaying it would take as long as the last snapshot took to write, or it holds an
  entry per 16 bytes of that snapshot (about one per task). So snapshots cost at most
  about as much again as the sampler's own work, amortised O(1) per record, and opening
  replays no more than that. A sampler with ``end_round`` is snapshotted only right after
  one (:data:`ROUND_END`), where its ``state_dict()`` is whole, or at four times the log
  until the file has logged one. Whatever the sampler, the log is
  snapshotted once its entries would cost a replay an eighth of :data:`REPLAY_LIMIT`
  (mid-round, if a round is that long). Picks that no record follows
  (rollouts that never came back) are not held in memory without bound: once they would
  cost a replay :data:`_FLUSH_COST` task ids (some 2,000 picks of a small shard, fewer of a
  large one), they are written as a record would write them, and the log is snapshotted
  if it is time; if this opening has written nothing, so that it must leave the file as
  it found it, or the log is already at an eighth of :data:`REPLAY_LIMIT` (a snapshot
  failed), they are folded into a snapshot that the next entry written carries, once
  their own work has paid for one. That a sampler is told of round ends is kept in the
  file, so a resumed run's rounds are snapshotted only at their ends too.
- **Bounded opening.** Opening or reading a state replays its log, whose entries each cost
  the sampler some microseconds, its picks time in their shard's size too, and its told
  calls time in the number of tasks they may go over (``fixable-first``'s: every task, until
  the log's first pick): a small file of many picks of a large shard, a million picks of
  one task, millions of records, or a few hundred ``end_round`` calls over a large state,
  which this library never writes, would take minutes. A log whose entries would cost more
  than :data:`REPLAY_LIMIT` is refused before any of it is replayed, with a
  :class:`~agentdescent_sampling.errors.StateError` that says what to do.
- **Crash.** ``record()`` and told calls return once committed, so nothing acknowledged is
  lost to a crash (even SIGKILL) and nothing is half-written: a transaction is all or
  nothing. A new file is made in one: its tables, the sampler as given and its holder, so
  a crash while it is made leaves an empty file (a new state) or a whole one; a file with
  tables and no snapshot was changed by something else, and is refused. What is lost are
  the picks whose rollouts were still running; a replayed log drops them from the
  in-flight tracking, as a loaded snapshot does.
- **One process.** The file is locked (``flock``) while a sampler holds it, from the
  moment it is built: a new path is claimed then too, its file made at once (and removed
  at :meth:`~DurableSampler.close` if nothing was recorded, so that building a sampler
  leaves nothing behind). A second ``create(..., state=PATH)``, in this process or
  another, raises :class:`~agentdescent_sampling.errors.StateError` naming the file and
  the holder's pid (before the holder has recorded anything, only where the system lists
  its locks, as Linux does): two samplers appending to one log would each miss the other's
  records in memory. A reader (``agentdescent-sampling state show``) reads the file in one
  transaction, as of one commit, while the holder goes on writing, and makes no file
  beside it.
- **Opening writes nothing.** The log replayed when a file is opened becomes its new
  snapshot (the sampler as replayed, with no pick in flight) in the transaction of the
  first entry written after, which pays for it, not when it is opened: a sampler opened
  and closed without a record (``agentdescent plan``) leaves the file as it was, byte for
  byte.
- **Safe to point at.** See :mod:`agentdescent_sampling._statedb`: symlinks are refused,
  never followed, a replaced file is never written through, a file that is not this
  package's state is refused untouched, and a new file is 0600 from its first byte.
- **Rounds.** ``agentdescent`` numbers rounds from 0 again in every process, so a resumed
  run would hand round-robin the round indexes it already used. The state keeps the next
  round index, and a loaded sampler adds it to every ``round_index`` it is given; so does
  one a state was loaded into (:func:`~agentdescent_sampling.load_state`), from then on.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import re
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

import attrs

from ._files import SEPARATORS
from ._replay import (
    _SHARDS,
    ROUND_END,
    TOLD,
    _Cost,
    _pick_cost,
    _replay,
    _write_snapshot,
)
from ._statedb import StateDB, held_signals, loads
from .errors import InvalidSamplerConfig, SamplerError, StateError
from .protocol import (
    MAX_COUNT,
    Sampler,
    Stateful,
    TaskSampler,
    check_keys,
    check_round_index,
    check_task_ids,
    is_stateful,
    refuse_a_class,
    short_repr,
)
from .served import ServedSampler
from .state import (
    not_json,
    not_stateful,
    refuse_unreadable,
    sampler_name,
    state_dict_of,
    state_document,
)

# What a user may import from here, as docs/plugins.md lists it; the rest serves this package.
__all__ = ["REPLAY_LIMIT", "DurableSampler", "read_durable_state"]

#: A snapshot is never taken before the log holds this many entries.
_MIN_LOG = 64
#: The key in the file's ``meta`` table set with the first ``end_round`` logged: a sampler
#: told of rounds is snapshotted only at one, in the run that made the file and once resumed.
_ROUNDS_META = "rounds_told"
#: What the picks held in memory unwritten may cost a replay, in task ids, before they are
#: written or folded (:meth:`DurableSampler._flush_picks`): a small shard's pick costs about
#: ``_replay._ENTRY``, a pick of a shard of ``n`` tasks ``n`` more, and its first
#: ``_replay._NEW_SHARD`` more, so their memory, a shard's text with its first pick, stays
#: within some megabytes.
_FLUSH_COST = 1 << 20
#: The most work that replaying a state's log may ask of its sampler, in task ids (about 30
#: ns each), as :mod:`agentdescent_sampling._replay` counts it: each logged entry counts
#: ``_ENTRY``; a pick its shard's size more, the first pick of each shard ``_NEW_SHARD`` more
#: (reading and indexing it), and a pick of a shard used again after ``_SHARDS`` others
#: ``_AGAIN`` times as much (a sampler keeps indexes of that many, and indexes such a shard
#: afresh each time); a told call the tasks it may go over (``_Cost``). Opening or reading a
#: state then takes about a second at most, or time in the size of its shards and of its
#: snapshot, however its log was made (a
#: few hundred kilobytes of picks of one large shard, a million picks of one task, or
#: ``end_round`` calls over a large state would otherwise take minutes). Not counted: a
#: ``fixable-first`` pick or told call also goes over every kind of task its state holds,
#: which a snapshot made by something else can make as many as its tasks. The library's own
#: files fold their log into a snapshot once its entries count
#: ``REPLAY_LIMIT // _FOLD_SHARE``, so they stay far below; a file over it is refused before
#: any of its log is replayed. Raise it to open a file you trust that is over.
REPLAY_LIMIT = 1 << 25
#: The share of :data:`REPLAY_LIMIT` at which a writer folds its log, whatever else holds.
_FOLD_SHARE = 8
#: Sixteen digits or more outside a text (a whole number may be past 2**53, 16 digits): a
#: snapshot holding one is walked for it.
_LONG_NUMBER = re.compile(r'(?<![\w."])-?[0-9]{16,}(?![\w."])')


class DurableSampler(ServedSampler):
    """A sampler whose statistics live in the SQLite database at ``path``.

    Built by ``create(spec, state=path)``; build it directly to keep the state of a sampler
    you constructed yourself. The file is held until :meth:`close` (or the end of a
    ``with`` block, or of the process). It is the one wrapper between its user and the
    sampler: given a :class:`~agentdescent_sampling.served.ServedSampler` (the registry
    serves a preset or a ``thread_safe = False`` class in one), it wraps the sampler itself,
    under the same name. Every method call holds its lock, and every other attribute
    (``stats()``, ``state_dict()``, ...) is the wrapped sampler's, as for any
    ``ServedSampler``.

    Args:
        sampler: any sampler with ``state_dict()`` and ``load_state_dict()``: every
            built-in, and any plugin sampler that has them.
        path: the state file. Loaded now if it exists, created (mode 0600) if not, and
            held either way until :meth:`close`; a new file nothing was recorded in is
            removed again then, and an existing one is written to only when something is.
        spec: the spec ``sampler`` was built from, as ``create()`` takes it, kept for
            ``agentdescent-sampling state show`` (which replays the log with it) and
            replacing the file's with the first write (a resumed run may change a parameter
            the state allows to change, such as ``failure_cost``). By default, for a
            built-in, its name and each parameter not at its default (with the ``provider``
            the file's spec names); for any other sampler, the file's, or its name in a new
            file.

    Raises:
        InvalidSamplerConfig: ``sampler`` has no ``state_dict()`` / ``load_state_dict()``,
            or ``path`` is empty, a directory or ends with a separator (a directory's).
        StateError: ``path`` is a symlink, not a regular file, not a sampler state,
            SQLite's ``-wal``, ``-shm`` or ``-journal`` file beside a database, read-only
            for this user, held by another process (named by pid), corrupt, over
            :data:`REPLAY_LIMIT`, or belongs to another sampler or to other parameters;
            the file is left as it was. Or ``path`` is new and the sampler's
            ``state_dict()`` raises or is not plain JSON data (a NaN, a set): one that does
            so later is kept in the log, with a :class:`RuntimeWarning`, and the log is
            snapshotted once it can be.
    """

    #: The sampler it keeps, typed as ``create()`` types a sampler: its state methods are
    #: known to be there (copy it to copy the statistics).
    wrapped: Sampler

    def __init__(
        self,
        sampler: TaskSampler,
        path: str | PathLike[str],
        *,
        spec: str | Mapping[str, Any] | None = None,
    ) -> None:
        refuse_a_class(sampler, "DurableSampler()")
        name = sampler_name(sampler)
        target = state_path(path)
        if not is_stateful(sampler):
            raise InvalidSamplerConfig(
                not_stateful(sampler, f"keep its state in {str(target)!r}", "Drop the state path. ")
            )
        # os.path.isdir, not Path.is_dir: a name too long is refused below, with the others
        # a first write could not make, not raised here as the file system's OSError.
        if os.path.isdir(target):
            raise InvalidSamplerConfig(
                f"the sampler state path {str(target)!r} is a directory; give a file path "
                f"such as {str(target / 'sampler-state.sqlite')!r}"
            )
        if isinstance(sampler, DurableSampler):
            raise InvalidSamplerConfig(
                f"sampler {name!r} already keeps its state in {str(sampler.path)!r}; give "
                f"DurableSampler the sampler itself"
            )
        # One wrapper, not two: a served sampler (a preset, or one that cannot take concurrent
        # calls) is unwrapped, and this one serves it under the same name and its own lock.
        renamed, given_lock = None, False
        if isinstance(sampler, ServedSampler):
            renamed, given_lock = sampler._renamed, sampler.lock is not None
            sampler = sampler.wrapped
        super().__init__(sampler, name=renamed, lock=True)
        self._given_lock = given_lock
        self.path: Path = target
        # What the log replays into and the snapshots are taken of: the sampler, under the
        # name it is served by (a preset's state is marked as the preset's).
        served: Any = sampler if renamed is None else ServedSampler(sampler, name=renamed)
        self._stateful: Stateful = served  # checked above: it has both methods
        self._name = name
        # A new file is made now, whole: its first snapshot is the sampler as given. Given no
        # spec, the file keeps the one its parameters tell (a preset's name alone), with the
        # provider an existing file's names, or its own if they cannot be told.
        told = spec if spec is not None or renamed is not None else _spec_of(sampler, name)
        spec_text = json.dumps(name if told is None else told)
        self._db = StateDB(target, name, spec_text, initial=self._state_json)
        #: The spec the file named and this sampler's that replaced it, if they differ.
        self._respecced: tuple[Any, Any] | None = None
        if told is not None and not self._db.made:  # this run's spec replaces the file's
            kept: Any = None
            with contextlib.suppress(StateError):  # a damaged spec: replaced, not read
                kept = _spec(self._db)
            if spec is None and isinstance(kept, Mapping) and isinstance(kept.get("provider"), str):
                given = {"name": told} if isinstance(told, str) else told
                told = {**given, "provider": kept["provider"]}
            self._db.respec(json.dumps(told))
            named = [{"name": each} if isinstance(each, str) else each for each in (kept, told)]
            if kept is not None and named[0] != named[1]:  # a name alone is {"name": name}
                self._respecced = (kept, told)
        # One lock orders each change of the sampler with its entry in the log, and closing
        # the file after any call in flight (see _close_under).
        assert self.lock is not None  # for mypy: lock=True made it
        self._lock = self.lock
        # Applied in memory and not yet committed: picks wait for the next record, and are
        # written at the latest when the file is closed (the finalizer shares them).
        self._queue = _Unwritten()
        self._closer = weakref.finalize(self, _close_under, self._db, self._lock, self._queue)
        _live.add(self)
        self._shards: list[tuple[list[str], int]] = []
        self._logged = 0  # entries since the snapshot
        self._work = 0.0  # seconds the wrapped sampler spent on them: the cost of a replay
        self._cost = _Cost(0)  # what replaying the logged entries would cost: see _restore
        self._snapshot_cost = 0.0
        self._snapshot_bytes = 0
        self._flush_at = _FLUSH_COST  # see _flush_picks
        # Whether the sampler was told of a round's end, in this opening or one before it:
        # then it is snapshotted only at one; and whether the file says so (_ROUNDS_META).
        self._round_ended = self._round_kept = False
        # After a snapshot failed, none is tried again before the log holds this many
        # entries: a state_dict() that is not JSON costs a try per doubling, not per record.
        self._retry_at = 0
        self._has_round_end = callable(getattr(sampler, ROUND_END, None))
        try:
            self._records, self._next_round, self._next_shard = self._restore()
        except BaseException:
            self.close()
            raise
        self._round_base = self._next_round

    @property
    def name(self) -> str:
        """The wrapped sampler's name."""
        return self._name

    @property
    def records(self) -> int:
        """How many records the state holds, counting those of earlier processes."""
        return self._records

    @property
    def rounds(self) -> int:
        """The next round index, counting the rounds of earlier processes."""
        return self._next_round

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """The wrapped ``pick``, with round indexes continuing those of the loaded state.

        Raises:
            TypeError: a task id in the shard is not a string, which the file could not
                read back (round-robin checks only the one it picks); nothing has changed.
            ValueError: the round index, so continued, is 2**53 or more (or below -2**53),
                past the counts a state file holds; nothing has changed then.
        """
        given = check_round_index(round_index)
        with self._lock:
            # The base is read under the lock: a state loaded by another thread moves it.
            base = self._round_base
            shifted = base + given
            if not -MAX_COUNT <= shifted < MAX_COUNT:
                continued = f" ({base:,} rounds of the state before it)" if base else ""
                raise ValueError(
                    f"pick(..., round_index={short_repr(round_index)}){continued}: the state "
                    f"file holds round indexes from -2**53 to 2**53 - 1; count rounds from 0, "
                    f"as evolve() does"
                )
            self._refuse_closed("pick")
            ids = list(check_keys(keys))
            known = self._known_shard(ids)
            if known is None:  # a logged shard was checked when it was new
                check_task_ids(ids)  # the file could not read it back: refused, unlogged
            started = time.perf_counter()
            picked = self.wrapped.pick(keys, shifted)
            self._work += time.perf_counter() - started
            if not self._queue.entries:  # what the log is without them, should they be let go
                self._queue.before = (copy.copy(self._cost), self._logged, self._shards[:])
            shard = self._new_shard(ids) if known is None else known
            cost = _pick_cost(len(keys), known is None)
            self._cost.pick(cost)  # as a replay counts it
            self._queue.cost += cost
            self._queue.entries.append(("event", "pick", json.dumps([shard, shifted, picked])))
            # Written at close only while the log stays as far within the replay limit as
            # a fold keeps it: no record follows them to fold it.
            self._queue.fits = self._cost.ids < REPLAY_LIMIT // _FOLD_SHARE
            self._next_round = max(self._next_round, shifted + 1)
            self._logged += 1
            if self._queue.cost >= self._flush_at:
                self._flush_picks()
            return picked

    def record(self, task_id: str, score: float) -> None:
        """The wrapped ``record``, then a commit: on disk when this returns.

        A snapshot that fails after the commit (a ``state_dict()`` that raises, or is not
        JSON) loses nothing and fails nothing: it is a :class:`RuntimeWarning` saying the
        record was saved, and the log keeps every record until a snapshot can be taken.

        Raises:
            StateError: the file could not be written (the record is kept in memory and
                is written with the next one that succeeds, or at :meth:`close`, which warns
                naming how many it could not write). The first such failure since a write
                succeeded is a :class:`RuntimeWarning` too.
        """
        with self._lock:
            self._refuse_closed("record")
            started = time.perf_counter()
            self.wrapped.record(task_id, score)
            self._work += time.perf_counter() - started
            self._records += 1
            self._append("record", json.dumps([task_id, float(score)], allow_nan=False))

    def load_state_dict(self, state: Any) -> None:
        """The wrapped ``load_state_dict``, then a snapshot of the state it loaded."""
        # The counts are read under the lock: a record made by another thread before the
        # load takes it is counted.
        with self._lock:
            self.adopt(state, self._records, self._next_round)

    def adopt(self, state: Any, records: int, rounds: int) -> None:
        """Load ``state`` with its counts (from :func:`~agentdescent_sampling.load_state`)
        and make it the durable state at once.

        Raises:
            StateError: the sampler refused ``state``, the file could not be written (then
                the sampler is given back what it held, so that it and the file stay in
                step, unless its ``state_dict()`` could not say what that was), or the
                sampler was closed (then before ``state`` changes it).
        """
        with self._lock:
            self._refuse_closed("load_state_dict")
            counts = self._records, self._next_round, self._round_base
            # As JSON, as the file holds it: a state_dict() may return the sampler's own
            # dicts, which loading ``state`` would change in place.
            try:
                before = json.loads(self._state_json())
            except StateError:  # a sampler that cannot: it is not given back
                before = None
            self._stateful.load_state_dict(state)
            begun = self._next_round - self._round_base  # rounds this process has begun
            self._records, self._next_round = records, max(rounds, self._next_round)
            # The round indexes this process is given go on from the loaded state's, as
            # they would in a process that opened the file afresh.
            self._round_base = self._next_round - begun
            try:
                self._snapshot()
            except StateError:
                # Not in the file (a full disk, say): the records that follow would be
                # logged after the old snapshot, and replayed into what the sampler held.
                self._records, self._next_round, self._round_base = counts
                if before is not None:
                    self._stateful.load_state_dict(before)
                raise

    def document(self) -> dict[str, Any]:
        """The state as the JSON document :func:`~agentdescent_sampling.save_state` writes.

        Raises:
            StateError: the sampler's ``state_dict()`` raised, naming it and the file.
        """
        cannot = f"cannot export the state of sampler {self._name!r} kept in {self._where}"
        with self._lock:
            state = state_dict_of(self._stateful, cannot)
            return state_document(self._name, self._records, self._next_round, state)

    def close(self) -> None:
        """Release the file (it stays on disk); a closed sampler can no longer pick, record,
        load a state or be told anything (a :class:`~agentdescent_sampling.errors.StateError`),
        and its statistics can still be read (``stats()``, ``state_dict()``).

        A call in flight in another thread finishes first: a record racing ``close()``
        is either kept in the file before it closes or refused before it changes the
        sampler."""
        with self._lock:
            self._closer()

    def _refuse_closed(self, call: str) -> None:
        """Raise before ``call`` changes anything if the file was released: a pick would spend
        a rollout whose record could not be kept, and a record would change the sampler in
        memory only."""
        if not self._closer.alive:
            raise StateError(
                f"{call}(): the sampler state {self._where} is closed (close(), or the end of "
                f"its with block), so nothing more can be kept there; open the file again with "
                f"create(spec, state={str(self.path)!r}) to go on"
            )
        self._db.refuse_forked(f"{call}()")

    def __enter__(self) -> DurableSampler:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __copy__(self) -> NoReturn:
        """Refused, as :meth:`__reduce__` is."""
        self.__reduce__()

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        """Refused, as :meth:`__reduce__` is."""
        self.__reduce__()

    def __reduce__(self) -> NoReturn:
        """Refused: a copy would hold the same SQLite file, which one sampler holds at once.

        Raises:
            TypeError: always, saying what to send to another process instead.
        """
        raise TypeError(
            f"a DurableSampler holds its state file {str(self.path)!r} open, so it cannot be "
            f"copied or pickled: copy the sampler it keeps (durable.wrapped), or close it and "
            f"open the file where it is needed with create(spec, state=path)"
        )

    def __repr__(self) -> str:
        served = ServedSampler(self.wrapped, name=self._renamed, lock=self._given_lock)
        return f"DurableSampler({served!r}, {str(self.path)!r})"

    def _method(self, attribute: str, method: Callable[..., Any]) -> Callable[..., Any]:
        # A told call is logged, under the lock; any other runs under the lock.
        if attribute in TOLD:
            return functools.partial(self._told, attribute, method)
        return super()._method(attribute, method)

    # -- the log -------------------------------------------------------------------

    def _told(self, name: str, method: Callable[..., Any], *args: Any) -> Any:
        try:
            encoded = json.dumps(list(args), allow_nan=False)
        except (TypeError, ValueError) as error:
            raise StateError(
                f"cannot keep {name}{short_repr(args)} in the sampler state "
                f"{str(self.path)!r}: its arguments are not JSON ({error}); nothing was told"
            ) from None
        with self._lock:
            self._refuse_closed(name)
            started = time.perf_counter()
            answer = method(*args)
            self._work += time.perf_counter() - started
            self._append(name, encoded)
        return answer

    def _append(self, name: str, args: str) -> None:
        """Commit ``name(args)`` with the picks before it, then snapshot if it is time."""
        self._round_ended = self._round_ended or name == ROUND_END
        if self._round_ended and not self._round_kept:  # so that a resumed run knows it
            self._queue.entries.append(("meta", _ROUNDS_META, "yes"))
        self._queue.entries.append(("event", name, args))
        first = not self._queue.told  # the first to fail since a commit succeeded, if it fails
        self._queue.told = True
        self._logged += 1
        self._cost.entry(name)  # as a replay counts it
        try:
            self._queue.commit(self._db)
        except StateError as error:
            # Said at once too: evolve() takes a sampler's error for its worker's and goes on,
            # and the user heard of it only at close, too late to put the file back. Where
            # warnings are errors, the StateError says it.
            if first:
                with contextlib.suppress(Warning):
                    warnings.warn(
                        f"{error} (at record {self._records:,} of the state)",  # never the same
                        RuntimeWarning,
                        stacklevel=3,  # record()'s caller
                    )
            raise
        self._round_kept = self._round_ended
        self._flush_at = _FLUSH_COST
        if self._snapshot_due(name):
            saved = "the record" if name == "record" else f"the {name}() call"
            self._fold(f"{saved} was saved")

    def _flush_picks(self) -> None:
        """Bound the memory of picks that no record follows (rollouts that never came back):
        write them as a record would, then snapshot the log if it is time; or, if this
        opening has written nothing (it must leave the file as it found it: once the picks'
        own work has paid for a ``state_dict()``), or the log is past an eighth of
        :data:`REPLAY_LIMIT` (a snapshot failed), fold them into a snapshot that the next
        entry written carries. If that fails (a full disk, a ``state_dict()`` that is not
        JSON), they are kept, and tried again once they double; but past that eighth, where
        close would drop them, they are let go now, with a warning, and so are those after
        them until the log has doubled."""
        # Written already, or holding a record that failed to commit: write them.
        writes = self._db.written or self._queue.told
        if not self._queue.fits and not self._queue.told and self._logged < self._retry_at:
            self._let_go()  # a snapshot failed here: not tried again before the log doubles
            return
        if not writes and self._work < self._snapshot_cost:
            # Folding costs a state_dict(): not before the picks' own work has paid for it.
            self._flush_at = 2 * self._queue.cost
            return
        try:
            if writes and self._queue.fits:
                self._queue.commit(self._db)
                self._flush_at = _FLUSH_COST
                if self._snapshot_due("pick"):
                    self._fold("the picks were saved")
            else:  # or, past an eighth of the replay limit, a snapshot the next write carries
                self._snapshot(deferred=True)
                self._flush_at = _FLUSH_COST
        except StateError as error:
            if self._queue.fits or self._queue.told:
                self._flush_at = 2 * self._queue.cost
                return
            self._let_go()
            self._retry_at = 2 * self._logged  # let go unfolded until the log doubles
            warnings.warn(
                f"{error}. Picks that no record follows are let go from the state file, whose "
                f"log is past an eighth of its replay limit, until a snapshot can be taken: "
                f"reopened, it picks as before them. Nothing recorded is lost",
                RuntimeWarning,
                stacklevel=3,  # pick()'s caller
            )

    def _let_go(self) -> None:
        """Forget the queued picks, as :func:`_close_under` does those that do not fit: the
        log's cost, entry count and shards are what they were before the first of them."""
        self._cost, self._logged, self._shards = self._queue.before
        self._queue.entries.clear()
        self._queue.cost = 0

    def _snapshot_due(self, name: str) -> bool:
        """Whether to fold the log into a snapshot after the call ``name``; see the module."""
        if self._logged < self._retry_at:
            return False
        if self._cost.ids >= REPLAY_LIMIT // _FOLD_SHARE:
            return True  # mid-round if need be: a replay stays far within REPLAY_LIMIT
        enough = max(_MIN_LOG, self._snapshot_bytes // 16)
        if self._logged < _MIN_LOG or (self._work < self._snapshot_cost and self._logged < enough):
            return False
        # A sampler told of round ends is snapshotted at one, where its state_dict() is whole;
        # while this opening has been told of none, four times later than otherwise.
        if name == ROUND_END or not self._has_round_end:
            return True
        return not self._round_ended and self._logged >= 4 * enough

    def _fold(self, saved: str, *, deferred: bool = False) -> None:
        """Replace the log with a snapshot (``deferred``: with the next entry written), or
        keep it and try again once it has doubled: what it holds is on disk already, and a
        replay restores it all. A failure is a warning that says so, after ``saved`` (what
        is on disk: "the record was saved")."""
        try:
            self._snapshot(deferred=deferred)
        except StateError as error:
            self._retry_at = 2 * self._logged
            over = (
                f". Its log now costs {self._cost.ids:,} task ids to replay, over "
                f"agentdescent_sampling.durable.REPLAY_LIMIT ({REPLAY_LIMIT:,}): raise it "
                f"past that to open the file again"
                if self._cost.ids > REPLAY_LIMIT
                else ""
            )
            warnings.warn(
                f"{error}. Nothing recorded is lost: {saved}, and the log of the state file "
                f"keeps every record and is replayed whenever the file is opened; a snapshot "
                f"is tried again each time the log doubles{over}",
                RuntimeWarning,
                stacklevel=4,  # record() or a told call's caller
            )

    def _snapshot(self, *, deferred: bool = False) -> None:
        """Replace the log with a snapshot of the sampler now; ``deferred``, in the
        transaction of the next entry written (:meth:`_append`), not now.

        Raises:
            StateError: ``state_dict()`` is not JSON, or the file could not be written;
                nothing was changed.
        """
        started = time.perf_counter()
        text = self._state_json()
        snapshot = (self._records, self._next_round, text)
        with held_signals():  # the fold and what this object notes of the log, together
            if deferred:
                self._queue.snapshot = snapshot
            else:
                with self._db.transaction() as db:
                    _write_snapshot(db, *snapshot)
                    if self._round_ended:  # the queue's row for it, if any, goes with the queue
                        db.execute("INSERT OR REPLACE INTO meta VALUES (?, 'yes')", (_ROUNDS_META,))
                self._queue.snapshot = None
                self._round_kept = self._round_ended
            self._queue.entries.clear()
            self._queue.fits, self._queue.cost, self._queue.told = True, 0, False
            self._shards.clear()
            self._logged, self._work, self._retry_at, self._cost = 0, 0.0, 0, _Cost(len(text))
        self._snapshot_cost = time.perf_counter() - started
        self._snapshot_bytes = len(text)

    def _state_json(self) -> str:
        """The sampler's ``state_dict()`` as the JSON text a snapshot keeps.

        Raises:
            StateError: ``state_dict()`` raised, or returned what is not plain JSON data;
                the message names the sampler, the file and which it was.
        """
        cannot = f"cannot keep the state of sampler {self._name!r} in {self._where}"
        state = state_dict_of(self._stateful, cannot)
        try:
            text = json.dumps(state, allow_nan=False)
        # TypeError: a set, say; ValueError: a NaN, or a list holding itself; RecursionError:
        # nested too deep to encode.
        except (TypeError, ValueError, RecursionError) as error:
            raise StateError(f"{cannot}: {not_json(state, error)}") from error
        if _LONG_NUMBER.search(text):  # walked only then: the walk costs more than encoding
            # A count past 2**53, which the file's readers refuse: the file would not open.
            refuse_unreadable({"state": state}, cannot)
        return text

    @property
    def _where(self) -> str:
        """The state file, for a message."""
        return short_repr(str(self.path), 1000)

    def _known_shard(self, shard: list[str]) -> int | None:
        """The id of ``shard`` in the log, if it is one of the shards logged lately."""
        return next((shard_id for known, shard_id in self._shards if known == shard), None)

    def _new_shard(self, shard: list[str]) -> int:
        """A new id for ``shard``, queueing the shard for writing."""
        shard_id = self._next_shard
        self._next_shard += 1
        self._queue.entries.append(("shard", str(shard_id), json.dumps(shard)))
        self._shards = [(shard, shard_id), *self._shards[: _SHARDS - 1]]
        return shard_id

    def _restore(self) -> tuple[int, int, int]:
        """Load the snapshot, replay the log; ``(records, next round, next shard id)``."""
        if self._db.made:  # a new file, whose snapshot is the sampler as it is
            self._cost = _Cost(self._db.snapshot_size())
            return 0, 0, 1
        self._round_ended = self._round_kept = self._db.meta(_ROUNDS_META) is not None
        snapshot = self._db.snapshot()
        started = time.perf_counter()
        # The cost of the log, counted over the snapshot's size before it was replayed.
        records, rounds, replayed, self._cost = _replay(
            self._stateful, self._db, self._name, snapshot, REPLAY_LIMIT
        )
        self._records, self._next_round = records, rounds
        if replayed:
            # As a loaded snapshot would: picks whose rollouts died with the process are
            # not in flight. Then the replayed log becomes the new snapshot, written with
            # the first entry (opening writes nothing), so that no later entry is ever
            # replayed after picks no longer in flight. If it cannot (a state_dict() that
            # raises, or is not JSON), it stays the log, tried again later: the file opens
            # whatever its sampler's state_dict() does, and a state its load_state_dict()
            # refuses as a StateError (a count past 2**53, which no snapshot may hold) leaves
            # the sampler as replayed; anything else a plugin's raises is raised.
            try:
                current = self._stateful.state_dict()
            except Exception:  # noqa: BLE001  # raised again by _fold below, which warns of it
                pass
            else:
                with contextlib.suppress(StateError):  # _fold below warns of it
                    self._stateful.load_state_dict(current)
            self._logged, self._work = replayed, time.perf_counter() - started
            self._fold(f"its log of {replayed:,} entries was replayed", deferred=True)
        _, top = self._db.counts()
        return records, rounds, top + 1


#: How long closing at the exit of the process waits for a call in flight in another thread.
_EXIT_WAIT = 5.0


class _Unwritten:
    """What a durable sampler applied in memory and has not committed yet: its picks since
    its last record or told call (``entries``: rows of the ``event`` and ``shard`` tables),
    and the snapshot the log replayed at opening became, or that an opening that wrote
    nothing folded its picks into (``snapshot``: records, rounds and JSON text), which the
    first entry written carries, so that opening writes nothing; ``fits``: whether the log
    with those picks stays as far within :data:`REPLAY_LIMIT` as a fold keeps it (picks
    written at close are never folded); ``cost``: what the picks would cost a replay;
    ``told``: whether a record or told call is among them (its commit failed); ``before``:
    the writer's replay cost, entry count and shards before the first of them."""

    __slots__ = ("before", "cost", "entries", "fits", "snapshot", "told")

    def __init__(self) -> None:
        self.entries: list[tuple[str, str, str]] = []
        self.before: tuple[_Cost, int, list[tuple[list[str], int]]] = (_Cost(0), 0, [])
        self.snapshot: tuple[int, int, str] | None = None
        self.fits = True
        self.cost = 0
        self.told = False

    def commit(self, db: StateDB) -> None:
        """Write it all to ``db`` in one transaction, the snapshot first, then forget it.

        Raises:
            StateError: as :meth:`StateDB.transaction`; it is then kept, for the next try.
        """
        # A signal's exception after the commit and before the clear would have them
        # written twice.
        with held_signals():
            with db.transaction() as connection:
                if self.snapshot is not None:
                    _write_snapshot(connection, *self.snapshot)
                for table, first, second in self.entries:
                    if table == "shard":
                        connection.execute("INSERT INTO shard VALUES (?, ?)", (int(first), second))
                    elif table == "meta":
                        connection.execute(
                            "INSERT OR REPLACE INTO meta VALUES (?, ?)", (first, second)
                        )
                    else:
                        connection.execute(
                            "INSERT INTO event (name, args) VALUES (?, ?)", (first, second)
                        )
            self.snapshot = None
            self.entries.clear()
            self.cost, self.told = 0, False


#: Every durable sampler of this process, for a forked child to give new locks.
_live: weakref.WeakSet[DurableSampler] = weakref.WeakSet()


def _unlock_after_fork() -> None:
    """In a forked child, give each durable sampler a new lock: one a thread of the parent
    held at the fork would be held for good, and every call would wait on it instead of being
    refused (:meth:`StateDB.refuse_forked`)."""
    for sampler in list(_live):
        sampler.lock = sampler._lock = threading.RLock()


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_unlock_after_fork)


def _close_under(db: StateDB, lock: threading.RLock, unwritten: _Unwritten) -> None:
    """Close ``db`` holding the sampler's ``lock``: never under a call in flight in another
    thread, whose transaction the closing would cut (SQLite's connection, closed under a
    statement, crashed the process; a new file was removed with a record just committed).

    The picks made since the last record or told call are written first, so that the file
    reopens as the sampler that made them (its pick count, its random draws), if this opening
    wrote anything: one that only picked (``agentdescent plan``) leaves the file as it found
    it, and a new file nothing was recorded in is removed. If the file cannot be written, or
    the log with those picks would near :data:`REPLAY_LIMIT` (a snapshot kept failing), only
    those picks are lost, whose rollouts never came back.

    :meth:`DurableSampler.close` holds the lock already; the end of the process (a daemon
    thread still recording) waits :data:`_EXIT_WAIT` seconds for it, and leaves the file to
    the system if a call never returns: whatever was committed is in it."""
    if db.forked:  # the file, and whatever is unwritten, are the opener's
        return
    if not lock.acquire(timeout=_EXIT_WAIT):
        return
    try:
        failed: StateError | None = None
        if unwritten.entries and unwritten.fits and (db.written or unwritten.told):
            try:
                unwritten.commit(db)
            except StateError as error:
                failed = error
        told = sum(table == "event" and name != "pick" for table, name, _ in unwritten.entries)
    finally:
        db.close()
        lock.release()
    if told:  # records or told calls whose commit failed, and failed again now
        warnings.warn(  # after the close: where warnings are errors, it raises
            f"closing the sampler state {db.where!r}: {told} record(s) or told call(s) could "
            f"not be written and are lost"
            + (f": {failed}" if failed else "; the log was past its limit"),
            RuntimeWarning,
            stacklevel=4,  # close()'s caller, through the finalizer
        )


def read_durable_state(path: str | PathLike[str]) -> dict[str, Any]:
    """What a state file holds, for a person: read-only, even while a run holds the file.

    Returns the file's ``sampler``, ``spec``, ``records``, ``rounds``, ``log`` (entries
    since the snapshot), ``held_by`` (who holds it now, or None) and ``state``: the
    sampler's current ``state_dict()``, rebuilt from the snapshot and the log with the
    spec the file keeps (``state`` is the snapshot alone when ``log`` is 0).

    The file is read in one read transaction, so what is shown is the state as of one
    commit, however the holder folds its log meanwhile.

    Nothing is written to the file, and no file is made beside it.

    Raises:
        StateError: the file is missing, a symlink, not a sampler state, or corrupt,
            replaying its log would take more than :data:`REPLAY_LIMIT` allows, or the
            sampler rebuilt from it cannot give its ``state_dict()``.
        TypeError: ``path`` is not a ``str`` or ``os.PathLike`` of one (bytes, say).
        InvalidSamplerConfig: ``path`` is empty, or ends with a separator.
    """
    db = StateDB(state_path(path), "", "", writable=False)
    if not db.exists:  # an empty file, being made by the process that opened it
        db.close()
        return {
            "sampler": None,
            "spec": None,
            "records": 0,
            "rounds": 0,
            "log": 0,
            "held_by": None,
            "state": None,
        }
    try:
        with db.reading():
            owner, spec = db.meta("sampler") or "", _spec(db)
            snapshot = db.snapshot()
            records, rounds, state = snapshot
            log, _ = db.counts()
            held_by = db.holder()
            if log:
                sampler: Any = _writer(spec, owner, db.where)  # it has state_dict()
                records, rounds, _, _ = _replay(sampler, db, owner, snapshot, REPLAY_LIMIT)
                cannot = f"cannot read the state of sampler {short_repr(owner)} in {db.where!r}"
                state = state_dict_of(sampler, cannot)
    finally:
        db.close()
    return {
        "sampler": owner,
        "spec": spec,
        "records": records,
        "rounds": rounds,
        "log": log,
        "held_by": held_by,
        "state": state,
    }


def _writer(spec: Any, owner: str, where: str) -> Any:
    """The sampler that wrote a state, built from its ``spec`` to replay its log; refused
    when the spec names another sampler than ``owner``: before anything is imported where
    either is a built-in, else once built (a plugin's aliases are known only then).

    Raises:
        StateError: the spec is malformed or names another sampler, or it cannot be built
            here (not installed, a plugin that fails to load, a bad parameter).
    """
    from .policy import known_apart  # imported here: only a read replays a log
    from .registry import create
    from .spec import parse_spec

    def other(name: str) -> StateError:
        return StateError(
            f"{where!r}: its spec names sampler {short_repr(name)}, but the state is of "
            f"sampler {short_repr(owner)}: the file was changed by something else, and it was "
            f"not read. Give the run a new state path (the file was left as it is)"
        )

    try:
        name = parse_spec(spec).name
    except SamplerError as error:
        raise StateError(f"{where!r}: its spec cannot be read: {error}") from None
    if known_apart(name, owner):
        raise other(name)
    try:
        sampler = create(spec)
    except SamplerError as error:
        raise StateError(
            f"{where!r}: its log is read by replaying it through the sampler that wrote it, "
            f"{short_repr(owner)}, which cannot be built here: {error}"
        ) from error
    if sampler_name(sampler) != owner:
        raise other(name)
    return sampler


def _spec_of(sampler: Any, name: str) -> Any:
    """The spec that builds a built-in ``sampler`` again, for a file given none: its name and
    each parameter not at its default; None for any other sampler (a plugin's factory may take
    other parameters than its class's fields)."""
    from .policy import BUILTINS  # a built-in's class is its factory, its fields plain numbers

    built = f"{type(sampler).__module__}:{type(sampler).__qualname__}"
    if not any(b.name == name and b.value == built for b in BUILTINS):
        return None
    params = {
        field.alias or field.name: getattr(sampler, field.name)
        for field in attrs.fields(type(sampler))
        if field.init and getattr(sampler, field.name) != field.default
    }
    return {"name": name, **params} if params else name


def _spec(db: StateDB) -> Any:
    """The spec a state file keeps."""
    return loads(db.meta("spec") or "null", db.where, "its spec")


def state_path(path: object) -> Path:
    """A state path as a ``Path``; anything else (bytes, a number, ``False``) is refused
    saying what to give instead, and so is a path that cannot name a file.

    Raises:
        TypeError: ``path`` is neither a ``str`` nor an ``os.PathLike`` of one.
        InvalidSamplerConfig: ``path`` is empty, or ends with a separator (which makes it a
            directory's path: ``Path`` would drop it, and name a file there instead).
    """
    give = (
        "give the path of the state file, for example 'sampler-state.sqlite', or no state "
        "(None) for a sampler that keeps none"
    )
    text = os.fspath(path) if isinstance(path, (str, bytes, PathLike)) else path
    if isinstance(text, str):
        if not text:
            raise InvalidSamplerConfig(f"the sampler state path is the empty string ''; {give}")
        if text.endswith(SEPARATORS):
            raise InvalidSamplerConfig(
                f"the sampler state path {short_repr(text)} ends with {text[-1]!r}, so it "
                f"names a directory, and a state path names a file: give one such as "
                f"{short_repr(text + 'sampler-state.sqlite')}"
            )
        given = Path(text)
        if not given.is_absolute():
            return given
        # '..' right under the root is the root ('/../tmp' is '/tmp'), which SQLite cannot open.
        rest = list(given.parts[1:])
        while rest and rest[0] == "..":
            rest.pop(0)
        return Path(given.anchor, *rest)
    advice = "decode it with os.fsdecode()" if isinstance(text, bytes) else give
    raise TypeError(
        f"a state path must be a str or an os.PathLike of one, not "
        f"{type(path).__name__} ({short_repr(path)}); {advice}"
    )
