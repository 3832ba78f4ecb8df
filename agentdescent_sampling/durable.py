"""Sampler state on disk that survives a stop, a crash and ``agentdescent resume``.

``create(spec, state=PATH)`` wraps the sampler it builds in a :class:`DurableSampler`:

- **Load.** If ``PATH`` exists it is loaded when the sampler is built. A file of another
  sampler, or of the same sampler with parameters that change what its statistics mean,
  raises :class:`~agentdescent_sampling.state.StateError` and is left untouched.
- **Save.** Every ``record()`` rewrites ``PATH`` atomically (a flushed temporary file,
  renamed over it) before it returns, so the file always holds a whole prefix of the
  records in the order they were made. A missing parent directory is created at the first
  save.
- **Crash.** A record is on disk once ``record()`` has returned. A crash (even SIGKILL)
  loses only the records whose ``record()`` had not returned yet, at most one per worker
  recording at that moment, plus the picks whose rollouts were still running (their
  outcomes never arrived, so there was nothing to record).
- **Rounds.** ``agentdescent`` numbers rounds from 0 again in every process, so a resumed
  run would hand round-robin the round indexes it already used. The file keeps the next
  round index, and a loaded sampler adds it to every ``round_index`` it is given.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from .errors import InvalidSamplerConfig
from .protocol import TaskSampler, short_repr
from .state import FORMAT, StateError, Stateful, is_count, read_state_file, write_state_file

__all__ = ["DurableSampler"]


class DurableSampler:
    """A sampler whose statistics are saved to ``path`` after every record and loaded from it.

    Built by ``create(spec, state=path)``; build it directly to keep the state of a sampler
    you constructed yourself. Every other attribute (``stats()``, ``settle()``, ...) is the
    wrapped sampler's.

    Args:
        sampler: any sampler with ``state_dict()`` and ``load_state_dict()``: every
            built-in, and any plugin sampler that has them.
        path: the state file. Loaded now if it exists; rewritten after every record.

    Raises:
        InvalidSamplerConfig: ``sampler`` has no ``state_dict()`` / ``load_state_dict()``,
            or ``path`` is a directory.
        StateError: ``path`` exists but is unreadable, corrupt, or belongs to another
            sampler or to other parameters; the file is left as it was.
    """

    def __init__(self, sampler: TaskSampler, path: str | PathLike[str]) -> None:
        name = _name_of(sampler)
        target = Path(path)
        if not isinstance(sampler, Stateful):
            raise InvalidSamplerConfig(
                f"sampler {name!r} ({type(sampler).__name__}) cannot keep its state in "
                f"{str(target)!r}: it has no state_dict() and load_state_dict() methods. "
                f"Drop the state path, use a sampler that has them (every built-in does), or "
                f"give it both (agentdescent_sampling.Stateful: a JSON-ready state_dict() and a "
                f"load_state_dict(state) that raises StateError on a state it cannot take)"
            )
        if target.is_dir():
            raise InvalidSamplerConfig(
                f"the sampler state path {str(target)!r} is a directory; give a file path "
                f"such as {str(target / 'sampler-state.json')!r}"
            )
        self.wrapped = sampler
        self.path = target
        self._stateful: Stateful = sampler
        self._name = name
        self._records = 0
        self._round_base = 0
        self._next_round = 0
        # One lock orders record-and-save, so the file always holds a prefix of the records;
        # picks take only the small one, so they never wait for a save.
        self._lock = threading.Lock()
        self._rounds_lock = threading.Lock()
        if target.exists():
            self._load()

    @property
    def name(self) -> str:
        """The wrapped sampler's name."""
        return self._name

    @property
    def records(self) -> int:
        """How many records the state file holds, counting those of earlier processes."""
        return self._records

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        """The wrapped ``pick``, with round indexes continuing those of the loaded file."""
        shifted = self._round_base + operator.index(round_index)
        picked = self.wrapped.pick(keys, shifted)
        with self._rounds_lock:
            self._next_round = max(self._next_round, shifted + 1)
        return picked

    def record(self, task_id: str, score: float) -> None:
        """The wrapped ``record``, then an atomic save; on disk when this returns.

        Raises:
            StateError: the file could not be written (the record is kept in memory and
                is saved with the next one that succeeds).
        """
        with self._lock:
            self.wrapped.record(task_id, score)
            self._records += 1
            self._save()

    def _save(self) -> None:
        with self._rounds_lock:
            rounds = self._next_round
        document = {
            "format": FORMAT,
            "sampler": self._name,
            "records": self._records,
            "rounds": rounds,
            "state": self._stateful.state_dict(),
        }
        if not self.path.parent.is_dir():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StateError(
                    f"cannot create the directory of the sampler state {str(self.path)!r}: {error}"
                ) from error
        write_state_file(self.path, document)

    def _load(self) -> None:
        where = str(self.path)
        document = read_state_file(self.path)
        owner = document.get("sampler", self._name)
        if owner != self._name:
            raise StateError(
                f"{where!r} holds the state of sampler {short_repr(owner)}, not {self._name!r}; "
                f"select {short_repr(owner)} to continue it, or give this sampler another state "
                f"path (the file was left as it is)"
            )
        records, rounds = document.get("records", 0), document.get("rounds", 0)
        if not (is_count(records) and is_count(rounds)):
            raise StateError(
                f"{where!r}: 'records' and 'rounds' must be whole numbers >= 0, got "
                f"{short_repr(records)} and {short_repr(rounds)} (the file was left as it is)"
            )
        state: Any = document.get("state")
        try:
            self._stateful.load_state_dict(state)
        except StateError as error:
            raise StateError(f"{where!r}: {error} (the file was left as it is)") from None
        # A plugin's load_state_dict may raise anything on a state it cannot take.
        except Exception as error:
            raise StateError(
                f"{where!r}: sampler {self._name!r} could not load this state: "
                f"{type(error).__name__}: {short_repr(str(error), 200)} "
                f"(the file was left as it is)"
            ) from error
        self._records, self._round_base, self._next_round = records, rounds, rounds

    def __getattr__(self, attribute: str) -> Any:
        # Only reached for names not defined here: stats(), settle(), state_dict(), ...
        # "wrapped" itself is missing only on an instance made without __init__ (copy,
        # pickle); looking it up here would recurse forever.
        if attribute == "wrapped":
            raise AttributeError(attribute)
        return getattr(self.wrapped, attribute)

    def __repr__(self) -> str:
        return f"DurableSampler({self.wrapped!r}, {str(self.path)!r})"


def _name_of(sampler: object) -> str:
    name = getattr(sampler, "name", None)
    return name if isinstance(name, str) else type(sampler).__qualname__
