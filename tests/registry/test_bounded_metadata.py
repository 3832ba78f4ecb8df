"""Reading installed metadata holds in time and memory, whatever one dist-info holds."""

from __future__ import annotations

import os
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentdescent_sampling import Registry
from agentdescent_sampling.discovery import MAX_ENTRY_POINTS, METADATA_LIMIT
from agentdescent_sampling.records import PluginFailure
from tests.support.distinfo import write_plugin

GOOD = """
class Sampler:
    name = "good"

    def pick(self, keys, round_index):
        return keys[0]

    def record(self, task_id, score):
        pass
"""
HEADERS = "Metadata-Version: 2.1\nName: damaged-dist\nVersion: 0.1\n"
ENTRY_POINTS = "[agentdescent.samplers]\ndamaged = damaged_plugin:Sampler\n"


@pytest.fixture
def feeders() -> Iterator[list[Callable[[], None]]]:
    """Stops for the threads feeding FIFOs, run once the test is done."""
    stops: list[Callable[[], None]] = []
    yield stops
    for stop in stops:
        stop()


def _fifo(path: Path, text: str, feeders: list[Callable[[], None]]) -> None:
    """Make ``path`` a FIFO that a thread feeds ``text`` to each reader, so that a reader
    that waits for a writer gets one and ends rather than hang the test."""
    path.unlink()
    os.mkfifo(path)
    done = threading.Event()

    def feed() -> None:
        while not done.is_set():
            try:
                with open(path, "w", encoding="utf-8") as fifo:  # waits for a reader
                    if not done.is_set():
                        fifo.write(text)
            except OSError:  # the reader left without reading: it refused the FIFO
                pass

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))  # lets a waiting open() return
        thread.join()

    feeders.append(stop)


#: What may be in a dist-info in place of its METADATA or entry_points.txt, each read by
#: the registry up to its limit or not at all; /dev/null stands for every device.
DAMAGE: dict[str, Callable[[Path, list[Callable[[], None]]], None]] = {
    "METADATA a FIFO": lambda dist_info, feeders: _fifo(dist_info / "METADATA", HEADERS, feeders),
    "entry_points.txt a FIFO": lambda dist_info, feeders: _fifo(
        dist_info / "entry_points.txt", ENTRY_POINTS, feeders
    ),
    "METADATA a device": lambda dist_info, _: (
        (dist_info / "METADATA").unlink(),
        (dist_info / "METADATA").symlink_to(os.devnull),
    ),
    "entry_points.txt a device": lambda dist_info, _: (
        (dist_info / "entry_points.txt").unlink(),
        (dist_info / "entry_points.txt").symlink_to(os.devnull),
    ),
    "METADATA headers past the limit": lambda dist_info, _: (dist_info / "METADATA").write_text(
        HEADERS + "Classifier: x\n" * (METADATA_LIMIT // 14 + 1) + "\n", encoding="utf-8"
    ),
    "entry_points.txt past the limit": lambda dist_info, _: (
        dist_info / "entry_points.txt"
    ).write_text(ENTRY_POINTS + "# padding\n" * (METADATA_LIMIT // 10 + 1), encoding="utf-8"),
    "too many entry points": lambda dist_info, _: (dist_info / "entry_points.txt").write_text(
        ENTRY_POINTS
        + "".join(f"damaged-{i} = damaged_plugin:Sampler\n" for i in range(MAX_ENTRY_POINTS)),
        encoding="utf-8",
    ),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE)
def test_metadata_past_what_can_be_read_in_bounds_spoils_only_its_own_distribution(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    feeders: list[Callable[[], None]],
    damage: Callable[[Path, list[Callable[[], None]]], None],
) -> None:
    write_plugin(tmp_path, "good_plugin", GOOD, {"good": "Sampler"}, "good-dist")
    imported = "raise SystemExit('imported')\n"
    write_plugin(tmp_path, "damaged_plugin", imported, {"damaged": "Sampler"}, "damaged-dist")
    damage(tmp_path / "damaged_plugin-0.1.dist-info", feeders)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry(disable=(), strict=False)

    assert registry.create("good").name == "good"
    records = registry.available()

    assert "good" in {record.name for record in records if not isinstance(record, PluginFailure)}
    [refused] = [
        record
        for record in records
        if isinstance(record, PluginFailure)
        and "damaged_plugin-0.1.dist-info" in record.entry_point
    ]
    assert refused.status == "failed"
    assert any(
        reason in refused.message
        for reason in ("not a regular file", f"longer than {METADATA_LIMIT:,} bytes",
                       f"more than the {MAX_ENTRY_POINTS:,} a distribution may")
    )  # fmt: skip
    assert "damaged_plugin" not in sys.modules


def test_a_metadata_description_past_the_limit_is_never_read_and_its_plugins_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plugin(tmp_path, "long_plugin", GOOD, {"good": "Sampler"}, "long-dist")
    metadata = tmp_path / "long_plugin-0.1.dist-info" / "METADATA"
    description = b"a README of more than the limit\n" * (METADATA_LIMIT // 32 + 1)
    # Bytes no UTF-8 reader takes, after the headers: read, they would spoil the distribution.
    metadata.write_bytes(metadata.read_bytes() + b"\n" + description + b"\xff\xfe")
    monkeypatch.syspath_prepend(str(tmp_path))

    assert Registry(disable=(), strict=False).create("good").name == "good"


def _zip_plugins(archive: Path, members: dict[str, str | bytes]) -> None:
    """Write ``members`` (path in the archive: text or bytes) to a deflated zip archive, as
    a zipapp or a zipped site directory holds modules and their dist-info."""
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        for name, data in members.items():
            zipped.writestr(name, data)


def _zipped_dist(
    module: str, source: str, metadata: str | bytes, entry_points: str | None = None
) -> dict[str, str | bytes]:
    """A module and its dist-info, as :func:`_zip_plugins` takes them; by default, the
    module's ``Sampler`` class as the entry point ``good``."""
    if entry_points is None:
        entry_points = f"[agentdescent.samplers]\ngood = {module}:Sampler\n"
    return {
        f"{module}.py": source,
        f"{module}-0.1.dist-info/METADATA": metadata,
        f"{module}-0.1.dist-info/entry_points.txt": entry_points,
    }


#: Zip members that inflate past what is read of them, each a few kilobytes in the archive:
#: read whole, as importlib.metadata reads a zip member, a few hundred kilobytes of archive
#: inflate to gigabytes.
INFLATING: dict[str, tuple[str, str]] = {
    "METADATA headers": (HEADERS + "Classifier: x\n" * (2 * METADATA_LIMIT // 14) + "\n",
                         ENTRY_POINTS),
    "entry_points.txt": (HEADERS, ENTRY_POINTS + "# padding\n" * (2 * METADATA_LIMIT // 10)),
}  # fmt: skip


@pytest.mark.parametrize(("metadata", "entry_points"), INFLATING.values(), ids=INFLATING)
def test_zip_metadata_that_inflates_past_the_limit_spoils_only_its_own_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metadata: str, entry_points: str
) -> None:
    archive = tmp_path / "plugins.zip"
    _zip_plugins(
        archive,
        _zipped_dist("good_plugin", GOOD, HEADERS.replace("damaged", "good"))
        | _zipped_dist("damaged_plugin", "raise SystemExit('imported')\n", metadata, entry_points),
    )
    assert archive.stat().st_size < METADATA_LIMIT // 50
    monkeypatch.syspath_prepend(str(archive))
    registry = Registry(disable=(), strict=False)

    assert registry.create("good").name == "good"
    [refused] = [
        record
        for record in registry.available()
        if isinstance(record, PluginFailure)
        and "damaged_plugin-0.1.dist-info" in record.entry_point
    ]
    assert refused.status == "failed"
    assert f"longer than {METADATA_LIMIT:,} bytes" in refused.message
    assert "damaged_plugin" not in sys.modules


def test_a_zipped_metadata_description_past_the_limit_is_never_read_and_its_plugins_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "plugins.zip"
    description = b"a README of more than the limit\n" * (METADATA_LIMIT // 32 + 1) + b"\xff\xfe"
    metadata = HEADERS.replace("damaged", "long").encode() + b"\n" + description
    _zip_plugins(
        archive,
        _zipped_dist("long_plugin", GOOD, metadata),
    )
    monkeypatch.syspath_prepend(str(archive))

    assert Registry(disable=(), strict=False).create("good").name == "good"
