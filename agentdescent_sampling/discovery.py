"""Which sampler plugins are installed, whose they are, and which may load: the trust decisions.

Nothing here imports a plugin, and selecting a built-in never imports this module. The
built-ins are a table in :mod:`~agentdescent_sampling.policy`, never read from installed
metadata, so no distribution can pass itself off as one: an entry point whose
distribution calls itself ``agentdescent-sampling`` is refused, and so is any entry point
whose name is a built-in's. :func:`scan` reads the other distributions'
``agentdescent.samplers`` entry points, one distribution at a time, and sorts each into
"may load" or a :class:`PluginFailure` saying why not.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import zipfile
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, Literal

from ._display import ascii_name, shown
from ._files import kind_of
from .policy import OWN_DISTRIBUTION, RESERVED, EntryPoint, Policy, normalize
from .protocol import check_name
from .records import PluginFailure

__all__ = [
    "MAX_ENTRY_POINTS",
    "METADATA_LIMIT",
    "installed",
    "known_names",
    "scan",
    "unmatched",
    "unmatched_disabled",
]


def scan(group: str, policy: Policy) -> tuple[list[EntryPoint], list[PluginFailure]]:
    """Read every installed distribution's entry points in ``group``; import none of them.

    A distribution whose metadata can't be read is refused alone, and the others are
    still read. Returns the entry points that may load, and one failure per refused one.
    """
    loadable: list[EntryPoint] = []
    refused: list[PluginFailure] = []
    for found in _distributions(group):
        if isinstance(found, PluginFailure):
            refused.append(found)
            continue
        problem = _refusal(found, policy)
        if problem is None:
            loadable.append(found)
        else:
            status, message = problem
            refused.append(
                PluginFailure(
                    found.label, found.distribution, found.version, status, message, (found.name,)
                )
            )
    return loadable, refused


def unmatched(
    policy: Policy, found: Collection[EntryPoint | PluginFailure]
) -> tuple[list[str], frozenset[str]]:
    """What of ``policy``'s ONLY and DISABLE lists matches nothing ``found`` (every entry
    point :func:`scan` read: those that may load, and the failures it refused) declares;
    read from metadata, importing nothing.

    Returns a warning for each ONLY entry that is no installed plugin distribution, and for
    each DISABLE entry that is neither that, nor a built-in's name, nor an entry point's; but
    while a hook-form plugin may load (a hook names its samplers only once imported), the
    DISABLE entries are returned instead, to check with :func:`unmatched_disabled` once the
    hooks have registered their samplers.
    """
    known = known_names(found)
    warnings: list[str] = []
    if policy.only is not None:
        distributions = {normalize(each.distribution) for each in found}
        warnings += _each_unmatched(
            policy.only - distributions - {OWN_DISTRIBUTION}, policy.only_by,
            lambda entry: _unmatched(entry, policy.only_by, "allows",
                                     "is no installed plugin distribution", distributions),
        )  # fmt: skip
    left = policy.disable - known
    if any(isinstance(each, EntryPoint) and each.form == "hook" for each in found):
        return warnings, left
    return warnings + unmatched_disabled(policy, left, known), frozenset()


def unmatched_disabled(policy: Policy, left: frozenset[str], known: Collection[str]) -> list[str]:
    """A warning for each DISABLE entry in ``left`` that is none of the normalized names
    ``known`` (:func:`known_names`, and the samplers the plugins registered)."""
    return _each_unmatched(
        left - set(known),
        policy.disable_by,
        lambda entry: _unmatched(
            entry,
            policy.disable_by,
            "disables",
            "matches no built-in, installed plugin distribution or sampler name (a plugin "
            "that may not load names none)",
            known,
        ),
    )


#: The most entries of a plugin list warned of one by one; the rest are counted in one more.
_WARNED = 10


def _each_unmatched(entries: Collection[str], by: str, warning: Callable[[str], str]) -> list[str]:
    """The ``warning`` of each of ``entries`` in order, up to :data:`_WARNED`, and one that
    counts the rest: a list of thousands printed thousands of lines."""
    ordered = sorted(entries)
    told = [warning(entry) for entry in ordered[:_WARNED]]
    more = len(ordered) - _WARNED
    if more > 0:
        entries_word = "entry that matches" if more == 1 else "entries that match"
        told.append(f"{by} names {more:,} more {entries_word} nothing installed")
    return told


def known_names(found: Collection[EntryPoint | PluginFailure]) -> set[str]:
    """The normalized names DISABLE may give of ``found``: each distribution, and each name
    its metadata or registrations carry; and the built-ins' and this package's."""
    known = set(RESERVED) | {OWN_DISTRIBUTION}
    for each in found:
        known.add(normalize(each.distribution))
        names = (each.name,) if isinstance(each, EntryPoint) else each.names
        known.update(normalize(name) for name in names)
    return known


def _unmatched(entry: str, by: str, effect: str, nothing: str, known: Collection[str]) -> str:
    """``ONLY names 'x', which is no ...; did you mean 'y'? Correct or remove it ...``."""
    import difflib  # only a policy naming nothing installed needs it

    from ._display import ascii_name

    close = difflib.get_close_matches(entry, sorted(known), n=1, cutoff=0.75)
    meant = f"; did you mean {close[0]!r}?" if close else "."
    return (
        f"{by} names {ascii_name(entry)}, which {nothing}, so it {effect} nothing{meant} "
        f"Correct or remove it; 'agentdescent-sampling list' shows what is installed"
    )


#: The most read of a dist-info's METADATA headers (its description, after them, is never
#: read) and of its entry_points.txt; a longer one spoils its own distribution alone.
METADATA_LIMIT = 1 << 20
#: A distribution declaring more entry points in the group is refused, none imported: each
#: costs ``list`` about a quarter of a millisecond to describe, and 1 MiB holds 66,000.
MAX_ENTRY_POINTS = 1000
#: The blank line that ends a METADATA's headers.
_HEADERS_END = re.compile(rb"\n\r?\n")

#: A distribution name as PEP 508 writes it; pip installs no other.
_VALID_DISTRIBUTION = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?", re.ASCII)


def _refusal(
    ep: EntryPoint, policy: Policy
) -> tuple[Literal["failed", "conflict", "disabled"], str] | None:
    if not _VALID_DISTRIBUTION.fullmatch(ep.distribution):
        return "conflict", (
            f"its distribution's name, {ascii(ep.distribution)[:80]}, is not a valid "
            f"distribution name (ASCII letters and digits, with '-', '_' or '.' between them; "
            f"PEP 508), so it could pass for another one (a trailing space, a look-alike "
            f"letter). Refused and never imported; uninstall the distribution that installed "
            f"this entry point"
        )
    if normalize(ep.distribution) == OWN_DISTRIBUTION:
        return "conflict", (
            f"its distribution calls itself {OWN_DISTRIBUTION!r}, but that package declares no "
            f"entry points: its built-ins are defined in its code. Refused and never imported; "
            f"uninstall the distribution that installed this entry point"
        )
    if normalize(ep.name) in RESERVED:
        claim = (
            f"its entry point is named {ascii_name(ep.name, 80)}, which selects a built-in; "
            f"built-in names are reserved, so it was refused and never imported"
        )
        # The user turned this very distribution off: their choice, not a fault to fail on. A
        # built-in's name in DISABLE disables the built-in, and leaves the claim a conflict.
        if normalize(ep.distribution) in policy.disable:
            return "disabled", f"disabled by {policy.disable_by}; also, {claim}"
        return "conflict", f"{claim}. Rename it"
    if ep.form == "class":
        try:
            check_name(ep.name)
        except ValueError as error:
            return "failed", f"{error}. Refused and never imported"
    blocked = policy.blocked(ep)
    return ("disabled", blocked) if blocked else None


def installed(distribution: str) -> bool:
    """Whether a distribution of that name is installed, with sampler entry points or none,
    found by its dist-info's name alone: no metadata file is read."""
    return next(iter(_metadata().distributions(name=distribution)), None) is not None


def _metadata() -> Any:
    """``importlib.metadata``, imported on first use: selecting a built-in never reads
    installed metadata, and importing the metadata machinery costs more than a built-in's
    whole module."""
    if sys.version_info >= (3, 12):
        from importlib import metadata
    else:
        # The backport gives 3.10 and 3.11 the 3.12 API this is written against.
        import importlib_metadata as metadata
    return metadata


def _distributions(group: str) -> Iterator[EntryPoint | PluginFailure]:
    metadata = _metadata()

    # The base class is a value (importlib_metadata, or the standard library's), not a name
    # mypy can follow.
    class Bounded(metadata.Distribution):  # type: ignore[misc,name-defined]
        """An installed distribution parsed by importlib.metadata, its files read by
        ``read``: :func:`_read` for a directory's, :func:`_read_member` for a zip archive's."""

        def __init__(self, path: Any, read: Callable[..., str | None]) -> None:
            self._path = path
            self._read = read

        def read_text(self, filename: str | os.PathLike[str]) -> str | None:
            metadata_file = str(filename) in ("METADATA", "PKG-INFO", "")  # "": an egg-info file
            return self._read(self._path / filename, headers_only=metadata_file)

        def locate_file(self, path: str | os.PathLike[str]) -> Path:
            # _path is a pathlib or a zipfile path, typed Any: a Path either way.
            return self._path.parent / path  # type: ignore[no-any-return]

    seen: set[str] = set()
    for found in metadata.distributions():
        path = getattr(found, "_path", None)
        # importlib.metadata reads a file whole, whatever it is: a FIFO waits forever, a link
        # to /dev/zero fills memory, a zip member of a few hundred kilobytes inflates to
        # gigabytes. A dist-info in a directory or in a zip archive on sys.path is read within
        # bounds instead; one from a custom finder (code already running here, not data) is
        # read as that finder reads it.
        if isinstance(path, Path):
            dist = Bounded(path, _read)
        elif _in_zip(path):
            dist = Bounded(path, _read_member)
        else:
            dist = found
        location = str(path if path is not None else "an unknown location")
        try:
            name, version = dist.name, dist.version
            if not (isinstance(name, str) and name and isinstance(version, str)):
                raise ValueError("METADATA has no Name or Version")
        except Exception as error:  # noqa: BLE001  # one unreadable dist-info must not hide the rest
            if _declares(dist, group):
                why = _why(error) if isinstance(error, _Unreadable) else type(error).__name__
                yield PluginFailure(
                    location, "unknown", "unknown", "failed",
                    f"the distribution at {location} has no readable metadata ({why}), so whose "
                    f"entry points these are is unknown; refused and never imported. Reinstall "
                    f"or remove it",
                )  # fmt: skip
            continue
        if not _PLAIN_VERSION.fullmatch(version):  # shown everywhere the plugin is named
            version = shown(ascii(version), 40)
        # As importlib.metadata does, the first on sys.path of a name wins; but every one
        # calling itself this package is read, to be refused and listed: this package
        # declares no entry points, so whichever comes first, an impostor is no shadow.
        if normalize(name) in seen and normalize(name) != OWN_DISTRIBUTION:
            continue
        seen.add(normalize(name))
        try:
            declared = list(dist.entry_points.select(group=group))
        except Exception as error:  # noqa: BLE001  # a malformed entry_points.txt spoils only its own dist
            yield PluginFailure(
                location, name, version, "failed",
                f"its entry_points.txt can't be parsed ({_why(error)}); none of its plugins "
                f"load. Reinstall or fix it",
            )  # fmt: skip
            continue
        if len(declared) > MAX_ENTRY_POINTS:
            yield PluginFailure(
                location, name, version, "failed",
                f"it declares {len(declared):,} entry points in {group}, more than the "
                f"{MAX_ENTRY_POINTS:,} a distribution may; none of its plugins load. Reinstall "
                f"or remove it",
            )  # fmt: skip
            continue
        for entry in declared:
            yield EntryPoint(entry.name, entry.value, name, version, entry)


#: A version as PEP 440 writes one (a local label of a git hash and a date included), at a
#: length a message can quote; any other is shown by ``ascii()``, cut: metadata text must not
#: pass for a table's columns, nor fill a message.
_PLAIN_VERSION = re.compile(r"[A-Za-z0-9.+!_-]{1,128}")


class _Unreadable(OSError):
    """A metadata file that is no regular file, or past :data:`METADATA_LIMIT`."""


def _read(path: Path, *, headers_only: bool) -> str | None:
    """The metadata file at ``path`` as importlib.metadata reads it (``None`` if missing or a
    directory), but only a regular file and at most :data:`METADATA_LIMIT` bytes of it:
    with ``headers_only``, up to the blank line that ends a METADATA's headers, so that the
    description after them is never read.

    Raises:
        _Unreadable: it is a FIFO, a device or another special file (never waited on nor
            read), or longer than the limit.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:  # O_NONBLOCK: opening a FIFO returns at once, and fstat refuses it
        descriptor = os.open(path, flags)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None  # as importlib.metadata's own read_text
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            return None
        if not stat.S_ISREG(mode):
            raise _Unreadable(f"{path.name or path} is {kind_of(mode)}, not a regular file")
        return _bounded(lambda size: os.read(descriptor, size), path.name or str(path),
                        headers_only=headers_only)  # fmt: skip
    finally:
        os.close(descriptor)


def _in_zip(path: object) -> bool:
    """Whether ``path`` is a location inside a zip archive, as importlib.metadata gives a
    dist-info in a zip on sys.path (a ``zipfile.Path``, or the backport's ``zipp.Path``)."""
    return isinstance(getattr(path, "root", None), zipfile.ZipFile) and isinstance(
        getattr(path, "at", None), str
    )


def _read_member(path: Any, *, headers_only: bool) -> str | None:
    """The zip archive member at ``path`` as :func:`_read` reads a file: ``None`` if missing or
    a directory, else inflated a chunk at a time and at most :data:`METADATA_LIMIT` bytes of
    it, so a member that inflates a thousandfold costs no more than the limit.

    Raises:
        _Unreadable: it inflates past the limit.
    """
    try:
        info = path.root.getinfo(path.at)
    except KeyError:
        return None
    if info.is_dir():
        return None
    with path.root.open(info) as member:
        return _bounded(member.read, path.name or path.at, headers_only=headers_only)


def _bounded(read: Callable[[int], bytes], name: str, *, headers_only: bool) -> str:
    """What ``read`` gives, a chunk at a time, up to :data:`METADATA_LIMIT` bytes; with
    ``headers_only``, up to the blank line that ends a METADATA's headers.

    Raises:
        _Unreadable: it gives more than the limit first.
    """
    text = bytearray()
    while chunk := read(1 << 16):
        start = max(len(text) - 2, 0)
        text += chunk
        end = _HEADERS_END.search(text, start) if headers_only else None
        if end is not None:
            del text[end.end() :]
        if len(text) > METADATA_LIMIT:
            what = "its headers are" if headers_only else "it is"
            raise _Unreadable(f"{name}: {what} longer than {METADATA_LIMIT:,} bytes")
        if end is not None:
            break
    return text.decode("utf-8")


def _why(error: Exception) -> str:
    """``Type: text`` of ``error``, short; a bounded read's refusal says what was refused."""
    text = str(error)[:200]
    return text if isinstance(error, _Unreadable) else f"{type(error).__name__}: {text}"


def _declares(dist: Any, group: str) -> bool:
    try:
        text = dist.read_text("entry_points.txt") or ""
    except Exception:  # noqa: BLE001  # unreadable means "declares nothing we can use"
        return False
    return f"[{group}]" in text
