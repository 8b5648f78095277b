"""The files of a Spark event log and their lines, decompressed: what ``lrc.eventlog`` parses.

Input: one JSON object per line as Spark's ``JsonProtocol`` writes it; plain, or compressed as
Spark writes it (``.zstd`` - Spark 4's default -, ``.lz4``: lz4-java's ``LZ4Block`` framing,
``.snappy``: snappy-java's stream framing; all three decoded with pyarrow's codecs; ``.lzf`` is
not supported); a single file or a rolling event-log directory ``eventlog_v2_<app>`` with
``events_<N>_<app>[.codec]`` files (a ``.compact`` file, written by Spark's compaction, stands for
every file before it); a directory holding exactly one event log (``spark.eventLog.dir``) works
too. ``.inprogress`` files (a running or killed application) are read up to their last whole line.
"""
from __future__ import annotations

import logging
import re
import struct
from pathlib import Path
from typing import Callable, Iterator

log = logging.getLogger("lrc.eventlog")

CODECS = {".zstd": "zstd", ".zst": "zstd", ".lz4": "lz4", ".snappy": "snappy", ".lzf": "lzf"}
_MAGIC = ((b"\x28\xb5\x2f\xfd", "zstd"), (b"LZ4Block", "lz4"), (b"\x82SNAPPY\x00", "snappy"))
_ROLLING_FILE = re.compile(r"events_(\d+)_(.+?)(\.compact)?(\.inprogress)?$")
_CHUNK = 1 << 20


def is_eventlog(path: str | Path) -> bool:
    """A Spark event log (file or rolling directory) rather than an lrc trace: by directory,
    compression magic or a first line that is a Spark listener event."""
    path = Path(path)
    if path.is_dir():
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False
    if head.startswith(b"PAR1"):
        return False
    if any(head.startswith(m) for m, _ in _MAGIC):
        return True
    return re.match(rb'\s*\{\s*"Event"\s*:\s*"SparkListener', head) is not None


def eventlog_files(path: str | Path, warn: Callable[[str], None] | None = None) -> list[Path]:
    """The files of the event log at ``path``, in order (rolling directories: from the newest
    compacted file on). ValueError if it is not an event log or is incomplete."""
    warn = warn or log.warning
    path = Path(path)
    if not path.exists():
        raise ValueError(f"event log {path} does not exist")
    if path.is_file():
        return [path]
    entries = sorted(p for p in path.iterdir() if not p.name.startswith("."))
    rolling = [p for p in entries if p.is_file() and _ROLLING_FILE.match(p.name)]
    if not rolling:
        logs = [p for p in entries if (p.is_dir() and p.name.startswith("eventlog_v2_")) or
                (p.is_file() and not p.name.startswith("appstatus") and is_eventlog(p))]
        if len(logs) == 1:
            return eventlog_files(logs[0], warn)
        if not logs:
            raise ValueError(f"{path}: a directory with no event log in it (expected a rolling "
                             "event-log directory eventlog_v2_<app> with events_<N>_<app> files, "
                             "or a directory holding one event log)")
        raise ValueError(f"{path} holds {len(logs)} event logs; name one: "
                         + ", ".join(p.name for p in logs[:10]) + (" ..." if len(logs) > 10 else ""))
    index: dict[int, Path] = {}
    compact = 0
    for p in rolling:
        m = _ROLLING_FILE.match(p.name)
        n = int(m[1])
        if n in index:
            raise ValueError(f"{path}: two files with index {n}: {index[n].name}, {p.name}")
        index[n] = p
        if m[3]:
            compact = max(compact, n)
    first = compact or 1
    wanted = range(first, max(index) + 1)
    missing = [n for n in wanted if n not in index]
    if missing:
        raise ValueError(f"{path}: incomplete rolling event log: events_{missing[0]}_* is missing "
                         f"(have {', '.join(str(n) for n in sorted(index))}"
                         + (f"; compacted up to {compact}" if compact else "") + ")")
    if compact:
        warn(f"{path}: events before index {compact} come from Spark's compacted file "
             f"{index[compact].name} (compaction drops finished jobs' task events)")
    return [index[n] for n in wanted]


def codec_of(path: Path, head: bytes) -> str | None:
    name = path.name[:-len(".inprogress")] if path.name.endswith(".inprogress") else path.name
    for m, codec in _MAGIC:
        if head.startswith(m):
            return codec
    suffix = Path(name).suffix
    if suffix == ".compact":
        suffix = Path(name[:-len(".compact")]).suffix
    codec = CODECS.get(suffix)
    if codec is not None and head.lstrip()[:1] == b"{":
        return None  # named .zstd but plain: go by content
    return codec


def _chunks(path: Path, warn: Callable[[str], None]) -> Iterator[bytes]:
    """The decompressed bytes of one file, chunk by chunk; a truncated stream ends with a
    warning after what could be decoded."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e}") from None
    with f:
        head = f.read(16)
        f.seek(0)
        codec = codec_of(path, head)
        if codec is None:
            while True:
                try:
                    b = f.read(_CHUNK)
                except OSError as e:
                    raise ValueError(f"{path}: cannot read: {e}") from None
                if not b:
                    return
                yield b
        elif codec == "zstd":
            yield from _zstd(f, path, warn)
        elif codec == "lz4":
            yield from _lz4_blocks(f, path, warn)
        elif codec == "snappy":
            yield from _snappy_stream(f, path, warn)
        else:
            raise ValueError(f"{path}: event log compressed with {codec!r}, which lrc cannot read "
                             "(supported: zstd, lz4, snappy, plain); decompress it first or set "
                             "spark.eventLog.compression.codec to zstd")


def _codec_obj(name: str, path: Path):
    import pyarrow as pa

    if not pa.Codec.is_available(name):
        raise ValueError(f"{path}: needs the {name} codec, which this pyarrow build lacks")
    return pa.Codec(name)


def _zstd(f, path: Path, warn) -> Iterator[bytes]:
    import pyarrow as pa

    _codec_obj("zstd", path)
    stream = pa.CompressedInputStream(pa.PythonFile(f, mode="r"), "zstd")
    while True:
        try:
            b = stream.read(_CHUNK)
        except (OSError, pa.ArrowException) as e:
            warn(f"{path}: zstd stream is truncated or corrupt ({e}); using what was decoded")
            return
        if not b:
            return
        yield b


def _lz4_blocks(f, path: Path, warn) -> Iterator[bytes]:
    """lz4-java's LZ4BlockOutputStream: per block "LZ4Block", token (method | level), compressed
    and decompressed length, checksum (little-endian ints), data; an empty block ends a stream."""
    codec = _codec_obj("lz4_raw", path)
    while True:
        hdr = f.read(21)
        if not hdr:
            return
        if len(hdr) < 21 or not hdr.startswith(b"LZ4Block"):
            warn(f"{path}: lz4 stream is truncated or corrupt at byte {f.tell() - len(hdr)}; "
                 "using what was decoded")
            return
        method = hdr[8] & 0xF0
        clen, dlen, _ = struct.unpack("<iii", hdr[9:21])
        if clen < 0 or dlen < 0 or clen > (1 << 30) or dlen > (1 << 30):
            warn(f"{path}: corrupt lz4 block header; using what was decoded")
            return
        data = f.read(clen)
        if len(data) < clen:
            warn(f"{path}: lz4 stream is truncated; using what was decoded")
            return
        if dlen == 0:
            continue  # end of one stream (another may follow: appended files)
        try:
            yield data if method == 0x10 else codec.decompress(data, decompressed_size=dlen).to_pybytes()
        except Exception as e:  # pyarrow's errors for corrupt data
            warn(f"{path}: corrupt lz4 block ({e}); using what was decoded")
            return


def _varint(b: bytes) -> int:
    n = shift = 0
    for i, c in enumerate(b[:5]):
        n |= (c & 0x7F) << shift
        if c < 0x80:
            return n
        shift += 7
    raise ValueError("bad varint")


def _snappy_stream(f, path: Path, warn) -> Iterator[bytes]:
    """snappy-java's SnappyOutputStream: 16-byte header (magic, version, compatible version),
    then chunks of a big-endian int length and a raw snappy block."""
    codec = _codec_obj("snappy", path)
    f.read(16)
    while True:
        hdr = f.read(4)
        if not hdr:
            return
        if hdr == b"\x82SNA":  # a second stream appended: skip its header
            f.read(12)
            continue
        (clen,) = struct.unpack(">i", hdr) if len(hdr) == 4 else (-1,)
        data = f.read(clen) if 0 <= clen <= (1 << 30) else b""
        if clen < 0 or len(data) < clen:
            warn(f"{path}: snappy stream is truncated or corrupt; using what was decoded")
            return
        try:
            yield codec.decompress(data, decompressed_size=_varint(data)).to_pybytes()
        except Exception as e:
            warn(f"{path}: corrupt snappy block ({e}); using what was decoded")
            return


def lines(files: list[Path], warn, progress=None) -> Iterator[tuple[Path, int, bytes, bool]]:
    """(file, line number, line, is the file's last line) for every non-empty line."""
    for path in files:
        rest = b""
        n = 0
        pending: tuple[int, bytes] | None = None
        for chunk in _chunks(path, warn):
            if progress is not None:
                progress(len(chunk))
            parts = (rest + chunk).split(b"\n")
            rest = parts.pop()
            for line in parts:
                n += 1
                if line.strip():
                    if pending is not None:
                        yield path, pending[0], pending[1], False
                    pending = (n, line)
        if rest.strip():
            if pending is not None:
                yield path, pending[0], pending[1], False
            pending = (n + 1, rest)
        if pending is not None:
            yield path, pending[0], pending[1], True


def stage_timeline(path: str | Path) -> tuple[str | None, dict, dict, dict]:
    """An event log's application name, each stage's submission and completion times and its
    tasks' (launch, finish, executor) (ms; None where the log has none): where a run's time went
    between its tasks, for the analysis scripts in results/."""
    import json

    name, sub, comp, tasks = None, {}, {}, {}
    for _, _, raw, _ in lines(eventlog_files(path), lambda m: None):
        e = json.loads(raw)
        ev = e.get("Event")
        if ev == "SparkListenerApplicationStart":
            name = e["App Name"]
        elif ev == "SparkListenerStageCompleted":
            i = e["Stage Info"]
            sub[i["Stage ID"]] = i.get("Submission Time")
            comp[i["Stage ID"]] = i.get("Completion Time")
        elif ev == "SparkListenerTaskEnd":
            t = e["Task Info"]
            tasks.setdefault(e["Stage ID"], []).append(
                (t.get("Launch Time"), t.get("Finish Time"), t.get("Executor ID")))
    return name, sub, comp, tasks
