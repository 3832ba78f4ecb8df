"""Replaying a durable state's log into its sampler, and what that costs.

A state file (:mod:`agentdescent_sampling.durable`) keeps a snapshot and the log of what its
sampler was told since. Opening the file loads the snapshot and replays the log; this module
counts what a replay asks of the sampler, in task ids, entry by entry, alike as the writer
logs them and as a reader finds them, so that a log too costly to replay is refused before
any of it is. The limit is ``agentdescent_sampling.durable.REPLAY_LIMIT``, a setting users
raise there: each caller passes it as ``limit``.
"""

from __future__ import annotations

import collections
import warnings
from typing import Any

from ._statedb import StateDB
from .errors import StateError
from .protocol import MAX_COUNT, Stateful, short_repr

#: The methods through which the engine wiring tells a sampler something (:func:`wire` calls
#: ``evidence`` for each card, ``repeated`` after a card made where its task's card before
#: was, and ``end_round`` after each round). A durable sampler forwards each call, then logs
#: its name and JSON arguments, so the call is replayed on resume. A sampler that learns
#: from another such call only needs its name added here.
TOLD: tuple[str, ...] = ("end_round", "evidence", "repeated")
#: The told call after which a sampler's ``state_dict()`` is whole: ``fixable-first``'s leaves
#: out the failures of a round not yet ended. Such a sampler is snapshotted only after it.
ROUND_END = "end_round"

#: Shards remembered for logging picks; the engine rotates workers through a few.
_SHARDS = 8

#: What the first pick of a shard costs more: reading it, and a sampler's indexing it.
_NEW_SHARD = 4096
#: How many times as much a pick of a shard used again after :data:`_SHARDS` others costs.
#: The library never logs one (it gives such a shard a new id, as a new shard).
_AGAIN = 512
#: What any logged entry (a pick, a record, a told call) costs at least: what a replay
#: takes over any call, reading it and the sampler's own overhead (up to some 15
#: microseconds: an ``informative-band`` record, or its pick of one task).
_ENTRY = 512
#: What a character of an entry's arguments costs, read as the replay reads them: up to
#: 150 ns (a record of 30 MB of ``[],`` took 4.5 s and 900 MB). The writer leaves it out:
#: its entries' arguments are a few dozen characters, some of their :data:`_ENTRY`.
_CHARACTER = 8
#: What a told call costs more per character of the state it goes over: ``fixable-first``'s
#: ``end_round`` and ``evidence`` refile every task it holds until its first pick (40 to 70
#: ns a character of the snapshot), and after it the tasks touched since (:class:`_Cost`).
_STATE = 2
#: The characters a task counts in that state: one a record or a told call may add or touch.
_TASK = 32
#: How many told calls before the log's first pick cost :data:`_ENTRY` alone, whatever the
#: size of the state: replaying them takes time in the size of the snapshot, as loading it
#: does. A writer's log starts with a pick, unless it was folded mid-round.
_TOLD_ROOM = 4


def _write_snapshot(db: Any, records: int, rounds: int, text: str) -> None:
    """Replace the log with the snapshot ``text`` of ``records`` and ``rounds``, in the
    transaction ``db``."""
    db.execute("DELETE FROM event")
    db.execute("DELETE FROM shard")
    db.execute("INSERT OR REPLACE INTO snapshot VALUES (1, ?, ?, ?)", (records, rounds, text))


def _replay(
    sampler: Any, db: StateDB, name: str, snapshot: tuple[int, int, Any], limit: int
) -> tuple[int, int, int, _Cost]:
    """Load the snapshot into ``sampler`` and replay the log after it, without logging;
    ``(records, next round, entries replayed, its cost)``, the cost as :func:`_replay_cost`
    counts it.

    Raises:
        StateError: the snapshot or an entry cannot be loaded, or replaying the log would
            cost more than ``limit`` (checked before anything is replayed).
    """
    records, rounds, state = snapshot
    cost = _replay_cost(db, limit)
    _load(sampler, state, name, db.where)
    replayed = 0
    # The shards of the last picks, as a sampler keeps them: memory follows them, not the log.
    shards: dict[int, list[str]] = {}
    # A replay makes again calls that were made and warned of before: not warned of twice,
    # nor made errors by a filter that makes warnings errors (-W error), which would leave a
    # run unable to reopen its state. The filters are the process's: a warning another
    # thread gives meanwhile is dropped too.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seq, call, args in db.events():
            try:
                if call == "pick":
                    logged = _logged_pick(args)
                    if logged is None:
                        raise ValueError(
                            "this library logs a pick as [shard id, round index, task id], both "
                            "ids whole numbers, so something else wrote this one: give the run a "
                            "new state path"
                        )
                    shard_id, round_index = logged
                    if shard_id not in shards:
                        if len(shards) >= _SHARDS:
                            del shards[next(iter(shards))]
                        shards[shard_id] = db.shard(shard_id)
                    sampler.pick(shards[shard_id], round_index)
                    rounds = max(rounds, round_index + 1)
                elif call == "record":
                    sampler.record(*args)
                    records += 1
                elif call in TOLD:
                    getattr(sampler, call)(*args)
                else:
                    raise ValueError(f"no such call as {call!r}")
            except StateError:
                raise
            # A sampler may raise anything on a call it cannot take.
            except Exception as error:
                known = call in {"pick", "record", *TOLD}
                raise StateError(
                    f"{db.where!r}: cannot replay entry {seq} of its log, "
                    f"{call if known else short_repr(call)}{short_repr(args)}, into sampler "
                    f"{name!r}: {type(error).__name__}: {short_repr(str(error), 200)} (the file "
                    f"was left as it is)"
                ) from error
            replayed += 1
    return records, rounds, replayed, cost


def _logged_pick(args: object) -> tuple[int, int] | None:
    """``(shard id, round index)`` of a pick logged as ``DurableSampler.pick`` logs one,
    ``[shard id, round index, task id]``; None for anything else. The one reading of a pick,
    for its cost and its replay alike: SQLite would find shard 1 by a shard id of ``"1"``,
    ``1.0`` or ``true`` too."""
    if not (isinstance(args, list) and len(args) == 3):
        return None
    shard_id, round_index, _ = args
    if type(shard_id) is not int or not 0 <= shard_id < 1 << 63:
        return None
    if type(round_index) is not int or not -MAX_COUNT <= round_index < MAX_COUNT:
        return None
    return shard_id, round_index


def _pick_cost(size: int, new: bool) -> int:
    """What replaying one pick of a shard of ``size`` tasks costs, in task ids: the shard,
    :data:`_ENTRY`, and :data:`_NEW_SHARD` more for a shard's first pick."""
    return size + _ENTRY + (_NEW_SHARD if new else 0)


class _Cost:
    """What replaying a log costs its sampler, in task ids (``ids``, see ``REPLAY_LIMIT``),
    counted entry by entry, alike as the writer logs them and as :func:`_replay_cost` reads
    them. A pick costs what the caller says (:func:`_pick_cost`), a record :data:`_ENTRY`, a
    told call :data:`_ENTRY` and :data:`_STATE` a character of the tasks it may go over, as
    ``fixable-first`` refiles them: before the log's first pick, every task (the snapshot's,
    and :data:`_TASK` for each record since), after :data:`_TOLD_ROOM` such calls; after it,
    :data:`_TASK` for each task touched since the last pick (each record and told call since,
    and the failures of a round that an ``end_round`` since has touched, which a pick refiles
    but the calls after it do not)."""

    __slots__ = ("held", "ids", "picked", "records", "round", "since_pick", "snapshot", "told")

    def __init__(self, snapshot: int) -> None:
        self.snapshot = snapshot  # the length of the snapshot the log is replayed over
        self.ids = self.records = self.told = 0
        self.picked = False
        self.since_pick = 0  # records and told calls since the last pick
        self.round = 0  # records since the last end_round, which the next one touches again
        self.held = 0  # records an end_round touched since the last pick

    def pick(self, ids: int) -> None:
        self.ids += ids
        self.picked = True
        self.since_pick = self.held = 0

    def entry(self, name: object) -> None:
        """A record (``name`` ``"record"``) or a told call."""
        self.ids += _ENTRY
        if name == "record":
            self.records += 1
            self.round += 1
        elif not self.picked:
            if self.told >= _TOLD_ROOM:
                self.ids += _STATE * (self.snapshot + _TASK * self.records)
            self.told += 1
        else:
            if name == ROUND_END:
                self.held, self.round = self.held + self.round, 0
            self.ids += _STATE * _TASK * (self.since_pick + self.held)
        self.since_pick += 1


def _replay_cost(db: StateDB, limit: int) -> _Cost:
    """What replaying the log asks of a sampler, in task ids (see ``REPLAY_LIMIT``); a
    log over the limit is refused before any of it is replayed.

    The count is the writer's (:class:`_Cost`, as ``DurableSampler.pick``,
    ``DurableSampler.record`` and a told call count it): an entry counts :data:`_ENTRY` and
    :data:`_CHARACTER` a character of its arguments (which the writer leaves out), a told
    call the tasks it may go over too, and a pick its shard's size, plus
    :data:`_NEW_SHARD` for the first pick of a shard, which the writer gives a new id. A
    shard used again after the log went on to :data:`_SHARDS` others, which the writer would
    have given a new id too, counts :data:`_AGAIN` times over: a sampler keeps the indexes of
    the last few shards it used, so the pick of a shard within those :data:`_SHARDS` uses an
    index it holds, and any other builds one afresh."""
    entries, characters = db.entries_besides_picks()
    _refuse_costly(db, entries * _ENTRY + characters * _CHARACTER, limit)  # before reading any
    cost = _Cost(db.snapshot_size())
    sizes: dict[int, int] = {}
    recent: collections.deque[int] = collections.deque(maxlen=_SHARDS)
    for name, args, characters in db.log():
        cost.ids += characters * _CHARACTER
        if name != "pick":
            cost.entry(name)
        elif (logged := _logged_pick(args)) is None:
            # Not a pick: the replay says so, naming the entry, before replaying it. Counted
            # as any entry, so that millions of them cannot make this walk itself unbounded.
            cost.pick(_ENTRY)
        elif (shard_id := logged[0]) in recent:
            cost.pick(_pick_cost(sizes[shard_id], new=False))
        elif shard_id not in sizes:
            sizes[shard_id] = len(db.shard(shard_id))
            recent.append(shard_id)
            cost.pick(_pick_cost(sizes[shard_id], new=True))
        else:
            recent.append(shard_id)
            cost.pick(_pick_cost(sizes[shard_id], new=False) * _AGAIN)
        _refuse_costly(db, cost.ids, limit)
    return cost


def _refuse_costly(db: StateDB, cost: int, limit: int) -> None:
    """Raise if replaying entries that ``cost`` so much exceeds ``limit``, the user's
    ``REPLAY_LIMIT``."""
    if cost > limit:
        raise StateError(
            f"{db.where!r}: replaying its log would ask more of the sampler than opening a "
            f"state may: its entries cost over {limit:,} task ids, the limit (any entry "
            f"costs {_ENTRY} and {_CHARACTER} a character of its arguments, a pick the tasks of "
            f"its shard more, {_AGAIN} times as much for "
            f"a shard used again after {_SHARDS} others, and a told call the tasks it may go "
            f"over). The state files this library writes fold their log into a snapshot "
            f"long before that, unless their sampler's state_dict() kept failing (a "
            f"RuntimeWarning said so as the run went on); otherwise this one was made or "
            f"changed by something else: give the run a new state path. If you trust the "
            f"file, raise agentdescent_sampling.durable.REPLAY_LIMIT before opening it (the "
            f"file was left as it is)"
        )


def _load(sampler: Stateful, state: Any, name: str, where: str) -> None:
    try:
        sampler.load_state_dict(state)
    except StateError as error:
        raise StateError(f"{where!r}: {error} (the file was left as it is)") from None
    # A plugin's load_state_dict may raise anything on a state it cannot take.
    except Exception as error:
        raise StateError(
            f"{where!r}: sampler {name!r} could not load this state: "
            f"{type(error).__name__}: {short_repr(str(error), 200)} "
            f"(the file was left as it is)"
        ) from error
