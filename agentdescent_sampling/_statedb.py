"""The SQLite file behind ``create(spec, state=PATH)``: opened safely, held by one process.

The database has four tables: ``meta`` (the format marker and the sampler's name and spec),
``snapshot`` (one row: a ``state_dict()`` with the record and round counts it stands for),
``event`` (what the sampler was told since that snapshot, in order) and ``shard`` (the
shards that logged picks were made from, stored once each). It runs in WAL mode with
``synchronous=FULL``, so a committed transaction survives a crash and, as far as SQLite's
own guarantees go, a power loss.

Opening it is careful, because a state path comes from a config file:

- the path is opened with ``O_NOFOLLOW``: a symlink there is refused, never followed;
- the descriptor pins the file's inode, and every write first checks that the path still
  names that inode, so a file moved, deleted or swapped for a symlink later is never
  written through, and the write fails loudly instead of going to an orphaned file;
- a file that is not this package's state (another SQLite database, a JSON export, any
  other file) is refused by its first bytes before SQLite touches it, and so is a path that
  names the ``-wal``, ``-shm`` or ``-journal`` file SQLite keeps beside a database;
- a new file is created with mode 0600 before SQLite writes a byte, and SQLite gives its
  ``-wal``, ``-shm`` and ``-journal`` files the database's own mode;
- a ``flock`` on that descriptor, held while the file is open, refuses a second holder,
  in this process or another, with the holder's process id. A new path is claimed the same
  way, when it is opened: its file is made then, in one transaction with its tables, its
  first snapshot and its holder, so a crash leaves either no state or a whole one. A new
  file nothing was written to is removed again when it is closed (with the directories made
  for it, if empty), and an empty file found at the path is emptied again; an existing state
  is written to only by its first write (which names its holder), so that building a
  sampler (``agentdescent plan``) leaves every file as it found it;
- a reader reads in one transaction (:meth:`StateDB.reading`): in WAL mode it sees the
  file as of one commit, even while the holder folds its log into a new snapshot. A reader
  makes no file beside the state: one that no run holds is read as it is (SQLite's
  ``immutable``), under a shared ``flock`` that keeps a run from starting meanwhile, and one
  a run holds is read through the run's own ``-wal`` and ``-shm`` files.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import signal
import socket
import sqlite3
import stat
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ._display import a_type
from ._files import (
    kind_of,
    name_too_long,
    no_room_beside,
    process_ended,
    read_only_mount,
    reason_of,
    write_refused,
)
from .errors import StateError
from .protocol import is_count, short_repr
from .state import FORMAT, check_owner

__all__ = ["APPLICATION_ID", "SIDECARS", "StateDB", "held_signals", "opens_as_json", "sidecar_of"]

#: ``PRAGMA application_id`` of a state database ("adss"): checked in the file's header.
APPLICATION_ID = 0x61647373
#: ``PRAGMA user_version``: the layout of the tables below.
SCHEMA = 1
_MAGIC = b"SQLite format 3\x00"
#: What a state path must name, as a refusal tells it.
_A_STATE = "the SQLite file create(spec, state=PATH) writes"
_WAL_LIMIT = 4 << 20
_SCHEMA_SQL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE snapshot (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    records INTEGER NOT NULL,
    rounds INTEGER NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE event (seq INTEGER PRIMARY KEY, name TEXT NOT NULL, args TEXT NOT NULL);
CREATE TABLE shard (id INTEGER PRIMARY KEY, keys TEXT NOT NULL);
CREATE TABLE holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER, host TEXT, since TEXT);
"""
#: ``(type, name, table, sql)`` of every entry of a state's ``sqlite_schema``, exactly: a
#: trigger or a view (a recursive one never ends) would run inside every read or write.
_SCHEMA_ROWS = frozenset(
    {("table", sql.split()[2], sql.split()[2], sql.strip()) for sql in _SCHEMA_SQL.split(";")
     if sql.strip()}
    | {("index", "sqlite_autoindex_meta_1", "meta", None)}
)  # fmt: skip
_META_ROW = next(row for row in _SCHEMA_ROWS if row[1] == "meta")
#: How long an opener waits for a holder to let go, then for it to have written its pid.
_HOLDER_WAIT = 2.0
#: How much longer an opener waits while only readers ('state show', 'export') hold the file.
_READER_WAIT = 60.0
#: How many times an opener tries again when the file it waited for was removed meanwhile
#: (a new state that its maker closed unused).
_REOPENS = 3
#: The files SQLite keeps beside a database, by the suffix of their names.
SIDECARS = ("-wal", "-shm", "-journal")
#: What SQLite raises on a damaged file: its errors, and, when the text of its message holds
#: bytes that are not UTF-8 (a damaged schema), the error of decoding that message.
_SQLITE_ERRORS = (sqlite3.Error, UnicodeDecodeError)
#: How SQLite stores a value that is not text, for a message.
_STORED_AS = {int: "an INTEGER", float: "a REAL", bytes: "a BLOB", type(None): "NULL"}

# (st_dev, st_ino) of every state file open in this process. A second descriptor of a
# file SQLite has open must never be closed while SQLite holds it (closing any descriptor
# drops every POSIX lock the process holds on the file), so a second opener in this
# process is refused before it opens one.
_held: dict[tuple[int, int], str] = {}
_held_lock = threading.Lock()


#: Every state open in this process, for a forked child to let go of.
_open: weakref.WeakSet[StateDB] = weakref.WeakSet()


def _forget_after_fork() -> None:
    """In a forked child: no state is open in it (its parent's are the parent's, refused by
    :meth:`StateDB.refuse_forked`), so it lets go of their descriptors, whose flock would
    otherwise hold each file after its parent closed it; and the lock may have been held by a
    thread that is gone."""
    global _held_lock
    _held.clear()
    _held_lock = threading.Lock()
    for db in list(_open):
        if db._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(db._fd)  # the parent's descriptor, and its lock, stay the parent's
            db._fd, db._locked = -1, False


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_forget_after_fork)


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """Hold back every signal a Python handler takes until the block ends, then hand each to
    its handler: a Ctrl-C (``KeyboardInterrupt``), or a SIGTERM handler calling
    ``sys.exit()``, between a commit and the writer's note of it would have the next write
    commit the same entries again, and one after ``BEGIN`` would leave the transaction open.
    Only on the main thread, where Python runs signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = {int(n): h for n in signal.valid_signals() if callable(h := signal.getsignal(n))}
    held: list[int] = []
    for number in handlers:
        signal.signal(number, lambda received, frame: held.append(received))
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        for number in held:
            handlers[number](number, None)


def opens_as_json(head: bytes) -> bool:
    """Whether a file starting with ``head`` opens as a JSON object does, after a UTF-8 BOM
    and white space: a ``save_state`` export, say."""
    return head.removeprefix(codecs.BOM_UTF8).lstrip()[:1] == b"{"


def sidecar_of(path: str | os.PathLike[str]) -> tuple[str, str] | None:
    """``(database, kind)`` when ``path`` names one of the files SQLite keeps beside a file
    that exists, ``database``: its ``"wal"``, ``"shm"`` or ``"journal"``; else None.

    Such a path is never a state's, nor an export's: SQLite reads the file as part of that
    database, and would overwrite or roll back whatever is written there."""
    named = _sidecar_name(os.fspath(path))
    if named is not None and os.path.isfile(named[0]) and _is_sqlite(named[0]):
        return named[0], named[1][1:]
    return None


def _sidecar_name(text: str) -> tuple[str, str] | None:
    """``(database, suffix)`` when ``text`` ends with one of :data:`SIDECARS` (``x.sqlite``
    and ``-wal`` for ``x.sqlite-wal``): the name SQLite would give that database's file."""
    suffix = next((suffix for suffix in SIDECARS if text.endswith(suffix)), None)
    return None if suffix is None else (text.removesuffix(suffix), suffix)


def is_database(path: str | os.PathLike[str]) -> bool:
    """Whether a regular file is at ``path`` and starts as an SQLite database does (read
    without waiting: a FIFO there is not one)."""
    return _header(path) == _MAGIC


def _is_sqlite(path: str) -> bool:
    """Whether the file at ``path`` starts as an SQLite database does (an empty one, being
    made, counts): only then does SQLite keep files beside it. An unreadable one counts too:
    refuse rather than risk writing into a database's journal."""
    return _header(path) in (None, b"", _MAGIC)


def _header(path: str | os.PathLike[str]) -> bytes | None:
    """The first bytes of the regular file at ``path``, as many as SQLite's marker, read
    without waiting on a FIFO; None if it is no regular file or cannot be read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return os.read(descriptor, len(_MAGIC))
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _check_makeable(path: Path, where: str) -> None:
    """Refuse now a new state's path that its first write could not make: a name too long,
    or a file (or an unwritable directory) where its directory would go.

    Raises:
        StateError: the path could not be made, saying why.
    """
    too_long = name_too_long(path)
    if too_long is not None:
        raise StateError(
            f"cannot make the sampler state {short_repr(where)}: {too_long}; give a shorter path"
        )
    named = _sidecar_name(path.name)
    # x.sqlite-wal: SQLite would take it for the file of a state x.sqlite, once there is one
    # (a name such as team-journal, with no file suffix before it, is left alone).
    if named is not None and Path(named[0]).suffix:
        database, suffix = named
        raise StateError(
            f"cannot make the sampler state {short_repr(where)}: its name ends with "
            f"{suffix!r}, as the file SQLite keeps beside a database named {database!r} does, "
            f"so a state there would be read as part of that one's; give a name without "
            f"{suffix!r}"
        )
    no_room = no_room_beside(path, len("-journal"), "SQLite keeps a file ('-journal') beside it")
    if no_room is not None:
        raise StateError(f"cannot make the sampler state {short_repr(where)}: {no_room}")
    ancestor = path.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise StateError(
            f"cannot make the sampler state {short_repr(where)}: {str(ancestor)!r} is "
            f"{kind_of(os.lstat(ancestor).st_mode)}, not a directory; give a path in a directory"
        )
    if read_only_mount(ancestor):
        raise StateError(
            f"cannot make the sampler state {short_repr(where)}: the directory "
            f"{str(ancestor)!r} is on a file system mounted read-only; give a path on a "
            f"writable file system, or remount it read-write"
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise StateError(
            f"cannot make the sampler state {short_repr(where)}: the directory "
            f"{str(ancestor)!r} is not writable by this user; give a path in one that is"
        )


class StateDB:
    """An open state database: its connection, and the descriptor that pins and locks it.

    Args:
        path: the state file; created (mode 0600) if missing, with its parent directory.
        owner: the sampler's name, stored in a new file and checked in an existing one.
        spec: the spec the sampler was built from, stored in a new file for ``state export``
            and for a reader to replay the log with.
        writable: False to read a state another process may hold (no lock is taken).
        initial: for a writable state, the JSON text of the first snapshot of a new file
            (the sampler as it was given); called before anything is made.

    Raises:
        StateError: the path is a symlink, not a regular file, not this package's state,
            SQLite's file beside a database, of another sampler, read-only for this user
            (a writable state), or held by another process (named with its pid); or
            ``initial`` raised it.
    """

    def __init__(
        self,
        path: Path,
        owner: str,
        spec: str,
        *,
        writable: bool = True,
        initial: Callable[[], str] | None = None,
    ) -> None:
        # Absolute, so that a process changing its directory still writes this file; the
        # path as given names it in messages.
        self.path = Path(path).absolute()  # not normalized: a ".." after a symlink stays
        self.where = str(path)
        self.writable = writable
        self._owner, self._spec = owner, spec
        self._respec = False  # see respec()
        self._initial = initial
        self._initial_text: str | None = None
        self._locked = False
        # A reader's shared flock, held while it reads: no run holds the file meanwhile.
        self._shared = False
        self._closed = False
        self._fd = -1
        #: The process that opened the file: a child forked from it holds the same
        #: connection, so it must neither write nor close it (see :meth:`refuse_forked`).
        self.opener = os.getpid()
        _open.add(self)
        #: Whether this opening made the state (its tables, in a new or empty file).
        self.made = False
        # Whether this opening created the file itself (then removed if left unused, where
        # an empty file it found is emptied again); whether it has written anything since;
        # whether it has written itself in as the holder; whether a reader made the -shm.
        self._created = self._written = self._claimed = self._made_shm = False
        self._made_directories: list[Path] = []
        self._unwritable_before: list[str] = []
        self.connection: sqlite3.Connection | None = None
        sidecar = sidecar_of(path)
        if sidecar is not None:
            database, kind = sidecar
            raise StateError(
                f"the sampler state {self.where!r} is the {kind} file SQLite keeps beside the "
                f"database {database!r}: SQLite reads it as part of that database, and would "
                f"overwrite what is written there. Give the database's own path to "
                f"{'use' if writable else 'read'} that state, or a path of another name"
            )
        missing = not os.path.lexists(path)
        if missing:
            _refuse_orphan_log(self.where)
        try:
            if writable and missing:
                # Refused before anything is made: a path that could not be made, or a
                # sampler whose state is not JSON.
                _check_makeable(path, self.where)
                self._initial_text = self._first_snapshot()
            self._open()
        finally:
            # Needed only to open: kept, it would tie the sampler to this object in a cycle
            # (the sampler's own method), and an unused sampler would hold the file until
            # the garbage collector ran, not until its last reference was dropped.
            self._initial = self._initial_text = None

    @property
    def written(self) -> bool:
        """Whether this opening has written anything to the file (a record, a told call)."""
        return self._written

    @property
    def exists(self) -> bool:
        """Whether the file is open: False only for a reader of a file being made."""
        return self.connection is not None

    def _first_snapshot(self) -> str:
        if self._initial_text is None:
            if self._initial is None:
                raise StateError(f"the sampler state {self.where!r} is new: nothing to read yet")
            self._initial_text = self._initial()
        return self._initial_text

    def _open(self) -> None:
        if self.writable and not self.path.parent.is_dir():
            self._make_directory()
        try:
            for _ in range(_REOPENS):
                self._fd = self._open_descriptor()
                self._identity = _identity(os.fstat(self._fd))
                if not self.writable:
                    # Kept while reading, if no run holds the file: none can start and
                    # write it under a reader that reads it as it is (see _immutable).
                    self._shared = _HAS_FLOCK and _try_lock(self._fd, shared=True)
                    break
                self._lock()
                if self._named_instead() is None:
                    break
                # Removed while this opener waited for it: a new state closed unused by
                # the process that made it. Open what the path names now.
                self._release()
                self._created = False
            else:
                raise StateError(
                    f"the sampler state {self.where!r} was removed or replaced each time it "
                    f"was opened; stop whatever keeps replacing it, then try again"
                )
            new = self._check_header()
            if new and not self.writable:
                return  # being made by its opener: nothing recorded yet
            self._unwritable_before = self._unwritable() if self.writable else []
            self.connection = self._connect()
            try:
                if not new and self.writable and self._rolled_back():
                    new = True  # a creation killed mid-commit, which SQLite has just undone
                if new:
                    self._create(self._owner, self._spec, self._first_snapshot())
                    self.made = self._claimed = True
                self._check_contents(self._owner)
                if self.writable:
                    self.connection.execute("PRAGMA journal_mode=WAL")
                    self.connection.execute("PRAGMA synchronous=FULL")
                    # After a checkpoint the WAL shrinks back, instead of keeping the size of
                    # the largest snapshot ever written through it.
                    self.connection.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT}")
                    # A state this user cannot write (a read-only file, or a read-only -shm
                    # beside it) is refused now, not at the first record. The write lock
                    # taken and given back writes nothing to the file.
                    self.connection.execute("BEGIN IMMEDIATE")
                    self.connection.execute("ROLLBACK")
            except _SQLITE_ERRORS as error:
                raise self._unreadable(error) from error
        except BaseException:
            self._release(discard=self.made or self._created)
            self._remove_made_directories()
            raise

    def _make_directory(self) -> None:
        """Make the state's directory, remembering which directories were made."""
        missing, ancestor = [], self.path.parent
        while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
            missing.append(ancestor)
            ancestor = ancestor.parent
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            why = write_refused(error)
            if why == reason_of(error):  # no advice of its own: a file system making none
                why += "; give a path in a directory this user can make and write, such as ~/runs"
            raise StateError(
                f"cannot create the directory of the sampler state {self.where!r}: {why}"
            ) from error
        self._made_directories = missing  # deepest first

    def _named_instead(self) -> str | None:
        """What the path names instead of the file this opening pinned: ``"nothing"``,
        ``"another file"`` or another kind of file (``"a symbolic link"``); None while it
        still names that file. The one check of the path against the pinned file."""
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return "nothing"
        if _identity(now) == self._identity:
            return None
        return "another file" if stat.S_ISREG(now.st_mode) else kind_of(now.st_mode)

    def _rolled_back(self) -> bool:
        """Whether the file is empty once SQLite has read it: its creation was killed
        mid-commit, after the header was written, and SQLite rolled it back."""
        (pages,) = self._db().execute("PRAGMA page_count").fetchone()
        return int(pages) == 0

    # -- reading -------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction: every read inside sees the file as of one commit, even
        while its holder writes (a snapshot folded in between two reads would otherwise
        have a newer log replayed onto an older snapshot)."""
        db = self._db()
        try:
            db.execute("BEGIN")
        except _SQLITE_ERRORS as error:
            raise self._unreadable(error) from error
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):
                db.execute("COMMIT")

    @contextlib.contextmanager
    def _reads(self) -> Iterator[sqlite3.Connection]:
        """The connection, to read with: what SQLite cannot read (a damaged page, text that
        is not UTF-8, a missing table) is a :class:`StateError` naming the file."""
        db = self._db()
        try:
            yield db
        except _SQLITE_ERRORS as error:
            raise self._unreadable(error) from error

    def meta(self, key: str) -> str | None:
        """The ``meta`` value of ``key``."""
        with self._reads() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def respec(self, spec: str) -> None:
        """Store ``spec`` in place of an existing file's spec with this opening's first write:
        a resumed run may change a parameter that the state allows to change (fixable-first's
        ``failure_cost``), and its log is then replayed with the spec that wrote it."""
        self._spec, self._respec = spec, True

    def snapshot(self) -> tuple[int, int, Any]:
        """``(records, rounds, state)`` of the snapshot.

        Raises:
            StateError: there is none: a file is made whole, its snapshot in its first
                commit, and a fold replaces it in one, so something else removed it.
        """
        with self._reads() as db:
            row = db.execute("SELECT records, rounds, state FROM snapshot").fetchone()
        if row is None:
            raise StateError(
                f"{self.where!r}: the file holds no snapshot, which every state file this "
                f"library writes holds from its first commit: it was changed by something "
                f"else, or made by a development version of it; give the run a new state path "
                f"(the file was left as it is)"
            )
        records, rounds, text = row
        if not (is_count(records) and is_count(rounds)):
            raise StateError(
                f"{self.where!r}: the snapshot's record and round counts must be whole numbers "
                f">= 0, got {short_repr(records)} and {short_repr(rounds)} (the file was left as "
                f"it is)"
            )
        return records, rounds, loads(text, self.where, "the snapshot")

    def events(self) -> Iterator[tuple[int, str, Any]]:
        """``(seq, name, args)`` of every event after the snapshot, in order."""
        with self._reads() as db:
            for seq, name, text in db.execute("SELECT seq, name, args FROM event ORDER BY seq"):
                yield seq, name, loads(text, self.where, f"event {seq}")

    def entries_besides_picks(self) -> tuple[int, int]:
        """How many entries of the log are not picks (records, told calls), and the
        characters of their arguments."""
        query = "SELECT COUNT(*), coalesce(sum(length(args)), 0) FROM event WHERE name != 'pick'"
        with self._reads() as db:
            count, characters = db.execute(query).fetchone()
        return int(count), int(characters)

    def log(self) -> Iterator[tuple[object, Any, int]]:
        """``(name, args, characters)`` of every logged entry, in order: ``args`` read for a
        pick of at most :data:`PICK_CHARACTERS` only (None for the rest), and the characters
        of the arguments as stored."""
        query = (
            "SELECT seq, name, CASE WHEN name = 'pick' AND length(args) <= ? THEN args END, "
            "coalesce(length(args), 0) FROM event ORDER BY seq"
        )
        with self._reads() as db:
            for seq, name, text, characters in db.execute(query, (PICK_CHARACTERS,)):
                args = None if text is None else loads(text, self.where, f"event {seq}")
                yield name, args, int(characters)

    def snapshot_size(self) -> int:
        """The length of the snapshot's JSON text."""
        with self._reads() as db:
            row = db.execute("SELECT length(state) FROM snapshot").fetchone()
        return 0 if row is None or row[0] is None else int(row[0])

    def shard(self, shard_id: int) -> list[str]:
        """The keys of a logged shard."""
        with self._reads() as db:
            row = db.execute("SELECT keys FROM shard WHERE id = ?", (shard_id,)).fetchone()
        keys = None if row is None else loads(row[0], self.where, f"shard {shard_id}")
        if not (isinstance(keys, list) and keys and all(isinstance(k, str) for k in keys)):
            raise StateError(
                f"{self.where!r}: a logged pick names shard {shard_id}, which the file does not "
                f"hold as a list of task ids (the file was left as it is)"
            )
        return keys

    def counts(self) -> tuple[int, int]:
        """How many events follow the snapshot, and the largest shard id logged (0 if none)."""
        with self._reads() as db:
            (events,) = db.execute("SELECT count(*) FROM event").fetchone()
            (top,) = db.execute("SELECT coalesce(max(id), 0) FROM shard").fetchone()
        return int(events), int(top)

    def holder(self) -> str | None:
        """Who holds the file, as ``process N on HOST (since T)``; None if nobody does."""
        if self._locked:
            return f"this process ({os.getpid()})"
        if self._shared or _nobody_holds(self._fd):
            return None
        # A run names itself with its first write: until then, its pid is not in the file.
        return _describe_holder(self._db()) or "another process"

    # -- writing -------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, after checking that the path still names this file. The
        first of an opening also writes this process in as the file's holder, for an
        opener that is refused: opening an existing state writes nothing to it.

        Raises:
            StateError: the path was moved, deleted or replaced (by a symlink, say) since
                it was opened, or SQLite could not write (a full disk, say); nothing of
                this transaction is written.
        """
        if self._closed:
            raise StateError(f"the sampler state {self.where!r} is closed")
        self.refuse_forked()
        found = self._named_instead()
        if found is not None:
            raise StateError(
                f"the sampler state {self.where!r} was moved, deleted or replaced while this "
                f"run held it (the path now names {found}); nothing is written there until the "
                f"file is back at that path: what is recorded meanwhile is kept in memory, "
                f"written with the next write after the file is back, or lost if the sampler "
                f"is closed first"
            )
        db = self._db()
        with held_signals():  # the commit and what this object notes of it, together
            try:
                if db.in_transaction:  # one an interrupt left open (a thread's async exception)
                    db.execute("ROLLBACK")
                db.execute("BEGIN IMMEDIATE")
                try:
                    if not self._claimed:
                        db.execute(
                            "INSERT OR REPLACE INTO holder VALUES (1, ?, ?, ?)", _holder_row()
                        )
                        if self._respec:
                            db.execute(
                                "INSERT OR REPLACE INTO meta VALUES ('spec', ?)", (self._spec,)
                            )
                    yield db
                except BaseException:
                    # SQLite may have rolled it back itself (a full disk, say): a ROLLBACK then
                    # raises "no transaction is active" in place of what went wrong.
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
                self._written = self._claimed = True
            except _SQLITE_ERRORS as error:
                if "readonly" in str(error):
                    raise StateError(self._read_only(error)) from error
                advice = (
                    "; free space on its file system, or stop the run and give it a state path on "
                    "one with room (nothing of this write is in the file: a record or told call "
                    "stays in memory and is written with the next one that succeeds)"
                    if "full" in str(error)
                    else ""
                )
                raise StateError(
                    f"cannot write the sampler state {self.where!r}: {error}{advice}"
                ) from error

    @property
    def forked(self) -> bool:
        """Whether this is a process forked from the one that opened the file."""
        return os.getpid() != self.opener

    def refuse_forked(self, call: str = "write") -> None:
        """Refuse ``call`` in a process forked from the one that opened the file.

        A forked child shares the opener's lock, SQLite connection and descriptor: its
        writes would interleave with the opener's through one connection (records of both
        were lost), and its closing would remove a new file the opener still holds.

        Raises:
            StateError: this is not the process that opened the file.
        """
        if self.forked:
            raise StateError(
                f"{call}: the sampler state {self.where!r} was opened by process "
                f"{self.opener}, and this process (pid {os.getpid()}) is a fork of it, which "
                f"cannot keep records there: build each process's sampler in that process, "
                f"with a state path of its own (create(spec, state=PATH)), or send outcomes "
                f"to the process that opened it"
            )

    def close(self) -> None:
        """Close the connection, then the descriptor (which releases the lock). A new state
        that nothing was written to is undone, as if the sampler had never been built: a
        file this opening created is removed, an empty file it found is emptied again. One
        this process wrote itself into as the holder is left naming no holder. In a process
        forked from the opener, nothing: the file, its lock and connection are the opener's."""
        if self.forked:
            self._closed = True
            return
        discard = self.made and not self._written
        if self._claimed and not discard and not self._closed and self.connection is not None:
            # Best effort: the next holder names itself only with its first write, and a
            # refused opener meanwhile is better told of no holder than of this one.
            with contextlib.suppress(StateError), self.transaction() as db:
                db.execute("DELETE FROM holder")
        self._closed = True
        self._release(discard=discard)

    def _release(self, *, discard: bool = False) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        if discard and self._locked:  # unlocked, the file may be another opener's by now
            self._discard()
        if self._made_shm and self._shared and _try_lock(self._fd, shared=False):
            # Made by this reader, for a -wal a killed run left: no run can have opened it
            # while this reader holds its flock, no other reader uses it once this one holds
            # it alone, and SQLite makes it again from the -wal whenever it is needed.
            with contextlib.suppress(OSError):
                os.unlink(f"{self.path}-shm")
        if self._fd >= 0:
            if self._locked:
                with _held_lock:
                    del _held[self._identity]
                self._locked = False
            os.close(self._fd)
            self._fd = -1

    def _discard(self) -> None:
        """Undo this opening's making of the state: remove the file it created, with its
        SQLite files and the directories made for it (if empty), or empty again the empty
        file it found there. Done holding the lock: an opener waiting for it then finds
        the path gone (or empty) and makes its own, and nobody can be making a file there
        meanwhile."""
        if self._named_instead() is not None:
            return  # moved or replaced: whatever the path names now is not this file
        for suffix in SIDECARS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")
        # The database last: while it exists, no one else can make SQLite files beside it.
        if not self._created:
            os.ftruncate(self._fd, 0)  # not this opening's to remove: left as it was found
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        self._remove_made_directories()

    def _remove_made_directories(self) -> None:
        """Remove the directories made for a new file, those of them left empty."""
        for directory in self._made_directories:
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        self._made_directories = []

    # -- opening -------------------------------------------------------------------

    def _open_descriptor(self) -> int:
        with contextlib.suppress(OSError):
            identity = _identity(os.stat(self.path, follow_symlinks=False))
            with _held_lock:
                if identity in _held:
                    raise StateError(
                        f"the sampler state {self.where!r} is already open in this process "
                        f"(pid {os.getpid()}); close that sampler first (sampler.close(), or "
                        f"build it in a with block), or give this one another state path; "
                        f"save_state(sampler, PATH) exports what the open one holds"
                    )
        # O_NONBLOCK: a FIFO at the path opens at once (and is refused below) instead of
        # waiting for a writer. O_NOFOLLOW: a symlink at the path is never followed.
        flags = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        try:
            if not self.writable:
                fd = os.open(self.path, flags | os.O_RDONLY)
            else:
                try:  # O_EXCL: made by this opening, so it is this one's to remove if unused
                    fd = os.open(self.path, flags | os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                    self._created = True
                except FileExistsError:
                    fd = os.open(self.path, flags | os.O_RDWR)
        except OSError as error:
            if os.path.islink(self.path):
                why = (
                    "a state path must name the file itself, so that nothing can redirect "
                    "the writes"
                    if self.writable
                    else "a state is read, as it is written, only by its own path"
                )
                raise StateError(
                    f"the sampler state {self.where!r} is a symbolic link (to "
                    f"{os.readlink(self.path)!r}); {why}: give the file's own path"
                ) from None
            why = write_refused(error) if self.writable else reason_of(error)
            if not self.writable and isinstance(error, FileNotFoundError):
                why += f"; give the path of {_A_STATE}"
            raise StateError(f"cannot open the sampler state {self.where!r}: {why}") from error
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            advice = (
                "give the path of a file (it is created if missing)"
                if self.writable
                else "give the path of a state file"
            )
            raise StateError(
                f"the sampler state {self.where!r} is {kind_of(mode)}, not a regular file; {advice}"
            )
        return fd

    def _lock(self) -> None:
        # The file is marked held in this process before the wait, and _held_lock is not held
        # through it: a wait of up to a minute for another process must not hold up the
        # opening and closing of other states in this one.
        with _held_lock:
            if self._identity in _held:
                raise StateError(
                    f"the sampler state {self.where!r} is already open in this process "
                    f"(pid {os.getpid()}); close that sampler first, or give this one another "
                    f"state path"
                )
            _held[self._identity] = self.where
        try:
            self._wait_for_other_processes()
        except BaseException:
            with _held_lock:
                del _held[self._identity]
            raise
        self._locked = True

    def _wait_for_other_processes(self) -> None:
        """Take the file's lock, waiting for a run or readers elsewhere a while.

        Raises:
            StateError: another run holds it, or readers held it past the wait.
        """
        locked = self._wait_for_lock(_HOLDER_WAIT)
        if not locked and _nobody_holds(self._fd):  # only shared locks: readers, no run
            # A read ('state show' or 'export') lasts seconds at most: a run waits it out,
            # so a reader polling the state does not make a resume fail.
            locked = self._wait_for_lock(_READER_WAIT)
            if not locked and _nobody_holds(self._fd):
                raise StateError(
                    f"the sampler state {self.where!r} has been read by other processes "
                    f"('agentdescent-sampling state show' or 'export', say) for over "
                    f"{_HOLDER_WAIT + _READER_WAIT:g} s, which keeps runs from writing it "
                    f"meanwhile; try again once they have finished"
                )
        if not locked:
            raise StateError(
                f"the sampler state {self.where!r} is in use by {self._wait_for_holder()}; "
                f"two runs recording into one state would each lose the other's records. "
                f"Stop that run first, or give this run another state path"
            )

    def _wait_for_lock(self, seconds: float) -> bool:
        # A holder killed a moment ago keeps the lock until its last thread has exited,
        # after its process already looks gone: `agentdescent resume` may start by then.
        deadline = time.monotonic() + seconds
        while not _try_lock(self._fd, shared=False):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def _wait_for_holder(self) -> str:
        # The holder takes the lock, then writes its pid with its first write: wait a moment
        # for it, or name the lock's owner where the system says (Linux's /proc/locks).
        deadline = time.monotonic() + _HOLDER_WAIT
        while True:
            described = None
            with contextlib.suppress(sqlite3.Error, StateError):
                if not self._check_header():
                    reader = self._connect(read_only=True)
                    try:
                        described = _describe_holder(reader)
                    finally:
                        reader.close()
            if described is None:
                owner = _flock_owner(os.fstat(self._fd))
                if owner is not None:
                    described = f"process {owner} on {socket.gethostname()} (no record yet)"
            if described or time.monotonic() > deadline:
                return described or "another process"
            time.sleep(0.05)

    def _check_header(self) -> bool:
        """Whether the file is new (empty); refuse one that is not a state database."""
        os.lseek(self._fd, 0, os.SEEK_SET)  # not pread: Windows has none
        header = os.read(self._fd, 100)
        if not header:
            return True
        if header.startswith(_MAGIC) and len(header) == 100:
            if int.from_bytes(header[68:72], "big") == APPLICATION_ID:
                return False
            what = "an SQLite database of another program"
        elif opens_as_json(header):
            what = (
                "a JSON file (an export from save_state or 'agentdescent-sampling state "
                "export'?). Import it into a new state with 'agentdescent-sampling state "
                "import EXPORT -o NEW_PATH --spec SPEC', or load_state(create(spec, "
                "state=NEW_PATH), EXPORT) in Python"
            )
        else:
            start = header[:16].decode("utf-8", "replace")
            what = f"not a sampler state, {_A_STATE} (it starts with {short_repr(start)})"
        advice = " Give a new path for the state" if self.writable else ""
        raise StateError(f"{self.where!r} is {what}; it was left untouched.{advice}")

    def _unreadable(self, error: sqlite3.Error | UnicodeDecodeError) -> StateError:
        """The error for a state SQLite could not read: read-only, a symbolic link beside it,
        or not a state."""
        linked = next((self.where + s for s in SIDECARS if os.path.islink(self.where + s)), None)
        if linked is not None:  # SQLite refuses to open such a database at all
            target = ""
            with contextlib.suppress(OSError):  # gone since: named without its target
                target = f" to {os.readlink(linked)!r}"
            return StateError(
                f"cannot open the sampler state {self.where!r}: {linked!r} beside it, a file "
                f"SQLite keeps as part of the database, is a symbolic link{target}, which "
                f"SQLite refuses to write through, and so does this (the state was left as it "
                f"is); remove the link"
            )
        if "readonly" in str(error) and self.writable:
            return StateError(self._read_only(error))
        if "full" in str(error) and self.writable:
            return StateError(
                f"cannot write the sampler state {self.where!r}: {error}; free space on its "
                f"file system, or give a state path on one with room (nothing was kept)"
            )
        if "readonly" in str(error):  # a hot -journal, which only a writer rolls back
            return StateError(
                f"cannot read the sampler state {self.where!r}: SQLite must first roll back "
                f"the writes a killed run left in its -journal ({error}), and a reader writes "
                f"nothing; open it for a run (create(spec, state=PATH)), which does"
            )
        return StateError(
            f"{self.where!r} is not a readable sampler state: {error} (the file was left as it "
            f"is); it is damaged, or was changed by something else: restore it from a copy, or "
            f"give the run a new state path"
        )

    def _unwritable(self) -> list[str]:
        """What of the state this user cannot write, for a message: the file, the SQLite
        files beside it (a read-only ``-shm`` refuses every write), its directory."""
        names = [self.where, *(self.where + s for s in SIDECARS if os.path.lexists(self.where + s))]
        culprits = [repr(name) for name in names if not os.access(name, os.W_OK)]
        directory = os.path.dirname(os.path.abspath(self.where))
        if not os.access(directory, os.W_OK | os.X_OK):
            culprits.append(f"its directory {directory!r}")
        return culprits

    def _read_only(self, error: sqlite3.Error | UnicodeDecodeError) -> str:
        """Why SQLite could not write the state, naming what of it this user could not
        write before SQLite opened it: opening a read-only ``-shm`` this user owns, SQLite
        gives it the database's mode, and still refuses to write through it."""
        # os.access cannot tell a read-only mount, say; SQLite could.
        culprits = self._unwritable_before or self._unwritable() or ["the file or its directory"]
        shm = repr(self.where + "-shm")
        return (
            f"cannot write the sampler state {self.where!r}: {' and '.join(culprits)} "
            f"{'is' if len(culprits) == 1 else 'are'} read-only for this user ({error}); make "
            f"{'it' if len(culprits) == 1 else 'them'} writable"
            + (
                f" (or remove {shm} while no process has the state open: SQLite makes it again)"
                if shm in culprits
                else ""
            )
            + ", or give a path this user can write ('agentdescent-sampling state show' reads "
            "the state as it is)"
        )

    def _immutable(self) -> str:
        """``&immutable=1`` for a reader of a state no run holds, else ``""``.

        A reader of a WAL database makes ``-wal`` and ``-shm`` files beside it, and leaves
        them there, with the database's mode: a read-only state's read-only ``-shm`` would
        then refuse every later run. Read as it is (SQLite then makes no file and takes no
        lock), the file must be still: this reader's shared flock keeps a run from opening
        it meanwhile, and a ``-wal`` or ``-journal`` holding writes not yet in the file (a
        run killed there) is read through SQLite instead (which makes a missing ``-shm``,
        removed again after). A state a run holds is read through the run's own files.

        Raises:
            StateError: the directory is read-only for this user, and a run holds the
                state or its ``-wal`` holds unfolded writes (SQLite would make a ``-shm``).
        """
        if self._shared and not any(_size(self.where + s) for s in ("-wal", "-journal")):
            return "&immutable=1"
        if not os.access(os.path.dirname(os.path.abspath(self.where)), os.W_OK | os.X_OK):
            if not self._shared:
                raise StateError(
                    f"cannot read the sampler state {self.where!r}: a run holds it, in a "
                    f"directory this user cannot write, so it cannot be read while it "
                    f"changes; read it as the run's user, or once the run has stopped"
                )
            raise StateError(
                f"cannot read the sampler state {self.where!r}: its directory is read-only for "
                f"this user, and its -wal file holds writes SQLite must fold into the file "
                f"first; make the directory writable, or copy the state and its -wal to one "
                f"that is"
            )
        self._made_shm = self._shared and not os.path.lexists(self.where + "-shm")
        return ""

    def _connect(self, *, read_only: bool = False) -> sqlite3.Connection:
        # Always a file: URI: SQLite built with SQLITE_USE_URI reads a plain ":memory:" or
        # "file:..." as an in-memory database or another file, where nothing is kept. Its
        # directory resolved as the system resolves it: SQLite reads a ".." as dropping the
        # name before it, which is another directory after a symlink, and none above "/".
        resolved = Path(os.path.realpath(self.path.parent)) / self.path.name
        name, as_uri = resolved.as_uri(), True
        if read_only or not self.writable:
            name += f"?mode=ro{self._immutable()}"
        elif not name.startswith("file:///"):
            # A Windows share's URI has an authority (file://server/share), which SQLite
            # refuses; its name cannot read as ":memory:" or "file:".
            name, as_uri = str(resolved), False
        try:
            db = sqlite3.connect(name, uri=as_uri, isolation_level=None, check_same_thread=False)
        except _SQLITE_ERRORS as error:
            raise StateError(f"cannot open the sampler state {self.where!r}: {error}") from error
        # What SQLite opened must be the file checked above, not one swapped in since.
        found = self._named_instead()
        if found is not None:
            db.close()
            raise StateError(
                f"the sampler state {self.where!r} was replaced while being opened (the path "
                f"now names {found})"
            )
        return db

    def _create(self, owner: str, spec: str, initial: str) -> None:
        """Make the tables, the first snapshot (``initial``) and the holder row in one
        transaction: a crash leaves an empty file, which is new, or a whole state."""
        # In the rollback journal, so the header carries the application id from the first
        # byte SQLite writes; WAL mode is switched on after.
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA}")
            for statement in _SCHEMA_SQL.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [("format", FORMAT), ("sampler", owner), ("spec", spec)],
            )
            db.execute("INSERT INTO snapshot VALUES (1, 0, 0, ?)", (initial,))
            db.execute("INSERT INTO holder VALUES (1, ?, ?, ?)", _holder_row())
        except BaseException:
            if db.in_transaction:  # SQLite may have rolled it back itself (a full disk)
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _check_contents(self, owner: str) -> None:
        db = self._db()
        try:
            (version,) = db.execute("PRAGMA user_version").fetchone()
            # Read first: a table read next could be a view that never ends.
            # sqlite_master: sqlite_schema is its name only from SQLite 3.33.
            rows = set(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
            # ANALYZE's statistics change no read or write.
            rows = {row for row in rows if not str(row[1]).startswith("sqlite_stat")}
            found = self.meta("format") if _META_ROW in rows else None
        except _SQLITE_ERRORS as error:
            raise self._unreadable(error) from error
        if version == SCHEMA and rows != _SCHEMA_ROWS:
            extra = rows - _SCHEMA_ROWS
            kind, name, _, _ = min(extra or _SCHEMA_ROWS - rows, key=repr)
            named = f"{kind} {short_repr(name)}"
            if not extra:
                what = f"it lacks the {named}, which every state this library writes holds"
            elif (kind, name) in {(row[0], row[1]) for row in _SCHEMA_ROWS}:
                what = f"its {named} is not defined as this library defines it"
            else:
                what = f"it holds the {named}, which no state this library writes holds"
            raise StateError(
                f"{self.where!r} is not a readable sampler state: {what} (the file was left as "
                f"it is); it was changed by something else: restore it from a copy, or give "
                f"the run a new state path"
            )
        if version != SCHEMA or found != FORMAT:
            raise StateError(
                f"{self.where!r}: state layout {version} with format {short_repr(found)} is not "
                f"one this version reads (layout {SCHEMA}, {FORMAT!r}); use the release that "
                f"wrote it, or give a new path (the file was left as it is)"
            )
        if owner:
            try:
                saved_owner = self.meta("sampler")
            except _SQLITE_ERRORS as error:
                raise self._unreadable(error) from error
            check_owner(saved_owner, owner, self.where)

    def _db(self) -> sqlite3.Connection:
        if self.connection is None:
            raise StateError(f"the sampler state {self.where!r} is closed")
        return self.connection


try:
    import fcntl as _fcntl
except ImportError:  # Windows: SQLite's own locks still keep the file whole
    _fcntl = None  # type: ignore[assignment]  # a module, or None where there is none
#: Whether this system has ``flock``; without it every lock is granted.
_HAS_FLOCK = _fcntl is not None


def _try_lock(fd: int, *, shared: bool) -> bool:
    """Take a non-blocking ``flock``, kept until ``fd`` is closed; whether it was granted
    (always yes without fcntl)."""
    if _fcntl is None:
        return True
    try:
        _fcntl.flock(fd, (_fcntl.LOCK_SH if shared else _fcntl.LOCK_EX) | _fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _nobody_holds(fd: int) -> bool:
    """Whether no run holds the file of ``fd`` (a shared ``flock`` would be granted)."""
    if not _try_lock(fd, shared=True):
        return False
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
    return True


def _refuse_orphan_log(where: str) -> None:
    """Refuse the missing state ``where`` when SQLite's log of it is still beside the path.

    A run killed or cancelled leaves its latest records in ``-wal`` (or a ``-journal``) beside
    the state until SQLite next opens the file and folds them in. Moved or deleted without that
    file, the state would be made afresh here (or read as missing) and those records lost.

    Raises:
        StateError: ``where`` + ``-wal`` or ``-journal`` is a file that is not empty.
    """
    for suffix in ("-wal", "-journal"):
        if _size(where + suffix):
            raise StateError(
                f"the sampler state {where!r} is missing, but {where + suffix!r} beside it "
                f"holds writes SQLite had not yet folded into it: the state was moved or "
                f"deleted without it (after a run was killed or cancelled, its latest "
                f"records are there), and a state made at this path would lose them. Put "
                f"the state file back at {where!r}, and SQLite folds them into it when it is "
                f"next opened (if it was opened where it went, it went on without them, and "
                f"they cannot be added to it); to start afresh, remove {where + suffix!r}"
            )


def _size(name: str) -> int:
    """The size of the file ``name``; 0 if there is none."""
    try:
        return os.stat(name).st_size
    except OSError:
        return 0


def _describe_holder(db: sqlite3.Connection) -> str | None:
    """The holder the file names, unless it is a process of this host that has exited
    (the row of an earlier holder, before the new one has written its own)."""
    try:
        row = db.execute("SELECT pid, host, since FROM holder").fetchone()
    except _SQLITE_ERRORS:
        return None
    if row is None:
        return None
    pid, host, since = row
    if host == socket.gethostname() and isinstance(pid, int) and process_ended(pid):
        return None
    return f"process {pid} on {host} (since {since})"


def _flock_owner(status: os.stat_result) -> int | None:
    """The pid holding an exclusive ``flock`` on the file of ``status``, as Linux's
    ``/proc/locks`` says; None where it says nothing (another system, or a file system whose
    locks it lists under other numbers)."""
    if not hasattr(os, "major"):  # Windows
        return None
    here = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            for line in locks:
                fields = line.split()
                # "1: FLOCK  ADVISORY  WRITE 12345 fe:00:2146523 0 EOF"; a waiter's has "->"
                if fields[1:4] == ["FLOCK", "ADVISORY", "WRITE"] and fields[5] == here:
                    return int(fields[4]) if fields[4].isdigit() else None
    except (OSError, IndexError):
        return None
    return None


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


def _holder_row() -> tuple[int, str, str]:
    """This process as the file's holder: its pid, its host and the time it took the file."""
    return os.getpid(), socket.gethostname(), time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


#: The most characters of a pick's arguments read to count a replay's cost: a pick is logged
#: as ``[shard id, round index, task id]``; a longer one is counted as not a pick, and its
#: replay refuses it.
PICK_CHARACTERS = 4096


def loads(text: object, where: str, what: str) -> Any:
    """The JSON value ``what`` of the state file ``where`` keeps as ``text``.

    Raises:
        StateError: it is not JSON, not stored as TEXT, or nests too deep for Python.
    """
    try:
        if not isinstance(text, str):
            stored = _STORED_AS.get(type(text), a_type(text))
            raise ValueError(f"it is stored as {stored}, not as TEXT")
        return json.loads(text)  # a state this package wrote is read back whatever it holds
    except RecursionError:
        raise StateError(
            f"{where!r}: {what} nests too deep for Python to read (thousands of levels); the "
            f"file was left as it is"
        ) from None
    except ValueError as error:
        raise StateError(
            f"{where!r}: {what} is not valid JSON ({reason_of(error)}); the file was left as it is"
        ) from None
