"""A run's log (`AppendLog`): whole lines in order, on disk when their futures finish; a
partial last line cut, a corrupt one set aside; after a write error, whole lines only."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from metanim.records import AppendLog, read_records


def test_log_ignores_and_cuts_a_partial_last_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with AppendLog(path) as log:
        log.append({"id": "a"})
        log.append({"id": "b"})
    with path.open("ab") as f:
        f.write(b'{"id": "c", "trunc')  # a write cut short by a crash
    assert [r["id"] for r in read_records(path)] == ["a", "b"]
    with AppendLog(path) as log:
        log.append({"id": "d"})
    assert [r["id"] for r in read_records(path)] == ["a", "b", "d"]
    path.write_text('{"id": "a"}\nnot json\n{"id": "b"}\n')
    # A corrupt line in the middle is skipped (once, with a warning) and set aside.
    with pytest.warns(UserWarning, match=":2: a corrupt line"):
        assert [r["id"] for r in read_records(path)] == ["a", "b"]
    assert (tmp_path / "log.jsonl.corrupt").read_text() == "not json\n"


@pytest.mark.parametrize("junk", [b"\x00" * 12, b"\xff\xfe{}", b"\x00garbage"])
def test_a_line_of_binary_junk_is_set_aside_as_a_corrupt_line(tmp_path: Path, junk) -> None:
    # What a crash can leave on disk: NUL bytes or bytes that are not UTF-8. Read as
    # JSON bytes they make a codec error (json guesses UTF-16/32), never a corrupt line.
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"id": "a"}\n' + junk + b'\n{"id": "b"}\n')
    with pytest.warns(UserWarning, match=":2: a corrupt line"):
        assert [r["id"] for r in read_records(path)] == ["a", "b"]


def test_submitted_lines_are_on_disk_whole_and_in_order_when_their_futures_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writer thread batches the lines waiting (one write, one fsync): each future
    # may finish only once an fsync that followed its line's write has returned.
    path = tmp_path / "log.jsonl"
    synced: list[int] = []  # file size at each fsync
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        synced.append(os.fstat(fd).st_size)

    monkeypatch.setattr(os, "fsync", fsync)

    async def many() -> list[bool]:
        with AppendLog(path) as log:
            sizes = []

            async def one(i: int) -> bool:
                await asyncio.sleep(0.001 * (i % 7))
                sent = log.submit({"id": i, "pad": "x" * (i * 37 % 500)})
                await sent
                # Done: the file holds the line, and an fsync came after it was written.
                lines = path.read_bytes().splitlines()
                ok = any(json.loads(x)["id"] == i for x in lines)
                sizes.append(path.stat().st_size)
                return ok and max(synced, default=0) >= _offset_after(path, i)

            results = await asyncio.gather(*(one(i) for i in range(300)))

            # Cancelled while waiting: the line is still written.
            async def late() -> None:
                await log.submit({"id": "late"})

            task = asyncio.ensure_future(late())
            await asyncio.sleep(0)
            task.cancel()
        return results

    results = asyncio.run(many())
    assert all(results)
    ids = [r["id"] for r in read_records(path)]
    assert sorted(ids[:-1]) == list(range(300)) and ids[-1] == "late"
    assert len(synced) < 300  # lines that finished together shared an fsync


def _offset_after(path: Path, wanted: int) -> int:
    """The file size just past the line of record `wanted`."""
    offset = 0
    for line in path.read_bytes().splitlines(keepends=True):
        offset += len(line)
        if json.loads(line)["id"] == wanted:
            return offset
    raise AssertionError(f"record {wanted} is not in the log")


def test_after_a_write_error_the_log_keeps_whole_lines_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk mid-run: the failed batch is cut off, and nothing written after it
    # (the lines still waiting when the run stops) can follow a partial line.
    path = tmp_path / "log.jsonl"
    real_fsync = os.fsync
    full = {"disk": False}

    def fsync(fd: int) -> None:
        if full["disk"]:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)

    async def run() -> list:
        with AppendLog(path) as log:
            await log.submit({"id": "kept"})
            full["disk"] = True
            failed = await asyncio.gather(
                log.submit({"id": "lost", "pad": "x" * 5000}), return_exceptions=True
            )
            full["disk"] = False  # space again: the log stays refused all the same
            later = await asyncio.gather(log.submit({"id": "later"}), return_exceptions=True)
            with pytest.raises(OSError):
                log.append({"id": "sync"})
        return failed + later

    errors = asyncio.run(run())
    assert all(isinstance(e, OSError) and e.errno == 28 for e in errors)
    assert path.read_bytes() == b'{"id":"kept"}\n'


def test_a_write_error_reaches_every_caller_of_the_batch(tmp_path: Path) -> None:
    log = AppendLog(tmp_path / "log.jsonl")

    def broken(data: bytes) -> None:
        raise OSError(28, "No space left on device")

    log._write = broken  # type: ignore[method-assign]

    async def two() -> list:
        return await asyncio.gather(
            log.submit({"id": 1}), log.submit({"id": 2}), return_exceptions=True
        )

    errors = asyncio.run(two())
    log.close()
    assert [type(e) for e in errors] == [OSError, OSError]
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(two())


def test_a_run_lock_is_exclusive_names_its_holder_and_leaves_no_file(tmp_path: Path) -> None:

    from metanim.records import RunLock

    log = tmp_path / "run.jsonl"
    first = RunLock(log).acquire()
    # flock locks one open file description: a second open, even in this process, is
    # another holder, as a second process would be.
    with pytest.raises(Exception, match=f"is being written by process {os.getpid()}"):
        RunLock(log).acquire()
    first.release()
    assert not log.with_suffix(".lock").exists()
    with RunLock(log):  # free again
        assert log.with_suffix(".lock").read_text().strip() == str(os.getpid())


def test_a_lock_error_that_is_no_holder_is_raised_as_it_is(tmp_path: Path, monkeypatch) -> None:
    import errno

    from metanim.records import RunLock, _log

    def unsupported(fd: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(_log, "_lock", unsupported)
    with pytest.raises(OSError, match="No locks available"):
        RunLock(tmp_path / "run.jsonl").acquire()
