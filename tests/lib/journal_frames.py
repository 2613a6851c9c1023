"""Reading and writing tracer journal frames (src/journal/journal_format.h).

A journal is a sequence of frames: a 64-byte little-endian header, then the
payload. The header holds the magic "TRFM", version 1, the frame type, the
CRC-32 (IEEE, zlib's) of the header with its CRC field 0 and of the payload,
the payload's size, and chunk fields (location, tid, seq, records, flags)
that other frames leave 0. Tests use this to give journals frames a real run
would have written (an MPI rank, clock offsets) and to cut or splice them.

This is a second implementation of the journal format, on purpose: the
tests do not trust the C reader (src/journal/journal_read.c) to check
itself. It must stay in step with journal_format.h; test_journal_decoders.py
checks that it and the C reader see the same frames and records in a real
journal (and in cuts of it), so a format change that misses one of the two
fails there.
"""

import collections
import ctypes
import ctypes.util
import struct
import zlib

MAGIC = 0x4d465254
VERSION = 1
HEADER = struct.Struct("<IHHIIQQIIQIIQ")   # 64 bytes, field order of tr_frame_header
assert HEADER.size == 64

START, CHUNK, STRING, SYMBOL, CLOCK, END, CRASH, VARIABLE, MPIT, MPI_RANK, CLOCK_OFFSET, SALVAGED, UNLOAD = range(1, 14)

MPI_RANK_PAYLOAD = struct.Struct("<iiQQ")      # tr_journal_mpi_rank: rank, size, reserved[2]
CLOCK_OFFSET_PAYLOAD = struct.Struct("<QqQII")  # tr_journal_clock_offset: local_ns, offset_ns, rtt_ns, when, pad
WHEN_INIT, WHEN_FINALIZE = 1, 2

RECORD = struct.Struct("<QBBHiiIQQQQQ")  # tr_record: time type phase sub dev dev2 aux id u0..u3
assert RECORD.size == 64
FLAG_ZSTD = 1
FLAG_ZSTD_DELTA = 2  # records delta-coded, then zstd (src/journal/record_delta.h)

Frame = collections.namedtuple("Frame", "offset end type location seq records flags payload tid raw_bytes")


def frame(ftype, payload, location=0, tid=0, seq=0, records=0, flags=0):
    """One sealed frame (header + payload) as bytes."""
    payload = bytes(payload)
    fields = [MAGIC, VERSION, ftype, 0, zlib.crc32(payload), len(payload), len(payload),
              location, tid, seq, records, flags, 0]
    fields[3] = zlib.crc32(HEADER.pack(*fields))
    return HEADER.pack(*fields) + payload


def mpi_rank(rank, size):
    """An MPI_RANK frame: the process was rank `rank` of `size`."""
    return frame(MPI_RANK, MPI_RANK_PAYLOAD.pack(rank, size, 0, 0))


def clock_offset(local_ns, offset_ns, rtt_ns, when):
    """A CLOCK_OFFSET frame: rank 0's clock = local + offset_ns at local_ns."""
    return frame(CLOCK_OFFSET, CLOCK_OFFSET_PAYLOAD.pack(local_ns, offset_ns, rtt_ns, when, 0))


def parse(data, cut_ok=False):
    """[Frame] of an intact journal (raises ValueError at damage). With
    @cut_ok, a journal cut inside its last frame gives the frames before."""
    out = []
    off = 0
    while off + 64 <= len(data):
        f = HEADER.unpack_from(data, off)
        if f[0] != MAGIC:
            raise ValueError("no frame at offset %d" % off)
        end = off + 64 + f[5]
        if end > len(data):
            break
        out.append(Frame(off, end, f[2], f[7], f[9], f[10], f[11], data[off + 64:end], f[8], f[6]))
        off = end
    if off != len(data) and not cut_ok:
        raise ValueError("the journal does not end on a frame boundary")
    return out


def insert_after_first(data, extra):
    """`extra` (frames) spliced in after the journal's first frame (START),
    where a real run's early frames would be."""
    first = parse(data)[0]
    return data[:first.end] + extra + data[first.end:]


_zstd = None


def zstd_decompress(payload, raw_bytes):
    """A zstd-compressed chunk payload, decompressed (libzstd, through ctypes:
    Debian's python has no zstd module)."""
    global _zstd
    if _zstd is None:
        _zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
        _zstd.ZSTD_decompress.restype = ctypes.c_size_t
        _zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    out = ctypes.create_string_buffer(max(raw_bytes, 1))
    n = _zstd.ZSTD_decompress(out, raw_bytes, payload, len(payload))
    return out.raw[:n]


_WORDS = struct.Struct("<8Q")


def undelta(raw, records):
    """Undoes the delta coding of @records records (record_delta.h): each
    64-bit word was stored minus the same word of the record before it."""
    out = bytearray(raw)
    prev = (0,) * 8
    for i in range(records):
        words = _WORDS.unpack_from(out, i * 64)
        prev = tuple((w + p) & 0xFFFFFFFFFFFFFFFF for w, p in zip(words, prev))
        _WORDS.pack_into(out, i * 64, *prev)
    return bytes(out)


def chunk_bytes(payload, raw_bytes, flags, records):
    """A CHUNK payload as the records' bytes, whatever its flags."""
    if flags == FLAG_ZSTD:
        return zstd_decompress(payload, raw_bytes)
    if flags == FLAG_ZSTD_DELTA:
        return undelta(zstd_decompress(payload, raw_bytes), records)
    return payload


def chunk_records(f):
    """The record tuples (RECORD's fields) of a CHUNK frame."""
    raw = chunk_bytes(f.payload, f.raw_bytes, f.flags, f.records)
    return [RECORD.unpack_from(raw, i * 64) for i in range(f.records)]


def raw_chunk(location, tid, seq, records):
    """An uncompressed CHUNK frame of the record tuples."""
    return frame(CHUNK, b"".join(RECORD.pack(*r) for r in records), location=location, tid=tid, seq=seq,
                 records=len(records))
