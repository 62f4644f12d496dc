"""The one module that turns strings with units into SI numbers (seconds, bytes, bytes/s).

Accepted forms (case matters for b/B; whitespace optional)::

    "400 Gb/s", "400 Gbps", "900 GB/s", "25 GiB/s"   -> bytes per second (float)
    "1.5 us", "2 ms", "500 ns", "3 s", "1.5 µs"        -> seconds (float)
    "5 min", "50000 h", "30 d", "2 w", "1 y"           -> seconds (MTBFs, run lengths; y = 365 d)
    "25 MiB", "1 GB", "8K", "512"                      -> bytes (int)

Decimal prefixes (k, M, G, T) are powers of 1000, binary ones (Ki, Mi, Gi, Ti) powers of 1024.
A bare number is taken as already in SI units, except where a caller asks for the unit (a NIC's bandwidth, a
failure's time). Sizes written nccl-tests style ("8G", "128M")
are binary, as in nccl-tests.
"""

from __future__ import annotations

import re

from simulator.core.errors import InputError
from simulator.core.limits import MAX_BW_Bps, MAX_DURATION_S, MAX_SIZE_BYTES, MIN_BW_Bps, check_range

KiB, MiB, GiB = 2**10, 2**20, 2**30   # binary sizes in bytes, for code that writes sizes as constants

_DEC = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BIN = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9, "ps": 1e-12,
         "sec": 1.0, "msec": 1e-3, "usec": 1e-6, "nsec": 1e-9,
         "min": 60.0, "h": 3600.0, "hr": 3600.0, "d": 86400.0, "day": 86400.0, "days": 86400.0,
         "w": 604800.0, "y": 365.0 * 86400.0}
_WORDS = {"s": ("second", "seconds", "secs"), "min": ("minute", "minutes", "mins"), "h": ("hour", "hours", "hrs"),
          "w": ("week", "weeks"), "y": ("year", "years")}    # as "days" already was ("50000 hours" was refused)
_TIME.update({word: _TIME[unit] for unit, words in _WORDS.items() for word in words})
_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"


def _float(value: int | float) -> float:
    """``float(value)``; an int too large for a float becomes infinity (refused by the range checks)."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _prefix(p: str) -> float | None:
    if p in _BIN:
        return _BIN[p]
    return _DEC.get(p)


AMOUNT_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
"""Decimal suffixes of a large amount as LLM training budgets are written ('300B', '15T' tokens)."""


def parse_amount(value: object, field: str = "tokens") -> float:
    """A large positive amount (training tokens) as a number or a number with a decimal suffix K, M, B (billion) or T
    (``1e12``, ``"300B"``, ``"15T"``, ``"1.5 T"``); refused, naming ``field``, unless positive and finite."""
    amount = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        amount = _float(value)
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        scale = AMOUNT_SUFFIXES.get(text[-1:].lower())
        amount = _number(text[:-1] if scale else text)
        amount = None if amount is None else amount * (scale or 1.0)
    if amount is None or not 0 < amount < float("inf"):
        raise InputError("expected a positive number, e.g. 1e12, '300B' or '15T'", field=field, value=value)
    return amount


BANDWIDTH_WORDS = "not a bandwidth: write a number and a unit such as '400 Gb/s' or '900 GB/s'"
"""The message of a refused bandwidth, one for the command line and the files."""


def parse_bandwidth(value: object, field: str = "bandwidth", unit: bool = False) -> float:
    """Bytes per second from "400 Gb/s", "900 GB/s", "50 GiB/s", or a number (bytes/s); ``unit``: a number alone
    is refused, as on the command line (a NIC's ``200`` could be Gb/s or GB/s)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not unit:
        bw = _float(value)
    else:
        text = str(value).strip()
        m = re.fullmatch(_NUM + r"\s*([kKMGTP]i?)?\s*(b|B|bit|bits|byte|bytes)\s*(?:/\s*s|ps|/sec)", text)
        if not m:
            raise InputError(BANDWIDTH_WORDS, field=field, value=value)
        num, pre, unit = m.group(1), m.group(2) or "", m.group(3)
        scale = _prefix(pre)
        if scale is None:
            raise InputError(f"unknown unit prefix {pre!r}", field=field, value=value)
        bw = float(num) * scale / (8.0 if unit in ("b", "bit", "bits") else 1.0)
    if not bw > 0 or bw == float("inf"):
        raise InputError("must be positive and finite", field=field, value=value)
    if not MIN_BW_Bps <= bw <= MAX_BW_Bps:
        raise InputError(f"out of range [{MIN_BW_Bps:g}, {MAX_BW_Bps:g}] bytes/s", field=field,
                         value=value)
    return bw


def bandwidth_text(value: object, field: str = "bandwidth") -> str:
    """``value`` kept as written ("200 Gb/s") once :func:`parse_bandwidth` reads it with its unit: a study's or a
    scenario's ``nic_bw`` (pydantic said 'Input should be a valid string' for ``nic_bw: 200``)."""
    parse_bandwidth(value, field=field, unit=True)
    return str(value).strip()


def parse_time(value: object, field: str = "latency", allow_zero: bool = True,
               max_s: float = MAX_DURATION_S, unit: bool = False) -> float:
    """Seconds from "1.5 us", "2 ms", "500 ns", or a number (seconds), at most ``max_s``; ``unit``: a number alone
    (or its text) other than 0 is refused, as ``nic_bw: 200`` is (a failure's ``4`` could be hours or seconds)."""
    if unit:
        bare = _number(value) if isinstance(value, str) else (
            value if isinstance(value, (int, float)) and not isinstance(value, bool) else None)
        if bare is not None and 0 < bare < float("inf"):
            number = str(value).strip()
            raise InputError(f"a time needs a unit: write e.g. '{number} us', '{number} s' or '{number} h' "
                             "(ns, us, ms, s, min, h, d, w, y)", field=field, value=value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        t = _float(value)
    elif unit and isinstance(value, str) and _number(value) is not None:
        t = float(value)            # "0", and "nan" or "inf" for the checks below to refuse
    else:
        text = str(value).strip()
        m = re.fullmatch(_NUM + r"\s*([a-zµμ]+)", text)
        if not m or m.group(2) not in _TIME:
            raise InputError("not a time: write a number and a unit such as '1.5 us', '2 ms' or '50000 h' "
                             "(ns, us, ms, s, min, h, d, w, y)", field=field, value=value)
        t = float(m.group(1)) * _TIME[m.group(2)]
    if t < 0 or t != t or t == float("inf") or (t == 0 and not allow_zero):
        raise InputError("must be " + ("non-negative" if allow_zero else "positive")
                         + " and finite", field=field, value=value)
    if t > max_s:
        raise InputError(f"out of range (at most {max_s:g} s)", field=field, value=value)
    return t


def parse_size(value: object, field: str = "size") -> int:
    """Bytes from "25 MiB", "1 GB", nccl-tests' "8G"/"128M"/"4K" (binary), or a number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        size = _float(value)
    else:
        text = str(value).strip()
        m = re.fullmatch(_NUM + r"\s*([kKMGTP]i?)?\s*(B|bytes?)?", text)
        if not m:
            raise InputError("not a size: write a number and a unit such as '25 MiB' or '8G'",
                             field=field, value=value)
        num, pre, unit = m.group(1), m.group(2) or "", m.group(3)
        if pre and not pre.endswith("i") and unit is None:
            scale = _BIN[pre.upper() + "i"] if pre.upper() + "i" in _BIN else None  # nccl-tests style
        else:
            scale = _prefix(pre)
        if scale is None:
            raise InputError(f"unknown unit prefix {pre!r}", field=field, value=value)
        size = float(num) * scale
    if size < 0 or size != size or size == float("inf"):
        raise InputError("must be non-negative and finite", field=field, value=value)
    if size > MAX_SIZE_BYTES:
        raise InputError("out of range (at most 2^60 bytes = 1 EiB)", field=field, value=value)
    return int(round(size))


def mebibytes(value: object, field: str = "size_mb", high: float = MAX_SIZE_BYTES / MiB) -> float:
    """A positive number of MiB at most ``high``, written without a unit (PyTorch's ``bucket_cap_mb``): a number or
    its text (the command line's). Text with a unit is refused with the number to write instead (``"25 MiB"``:
    write 25), the one message of ``--bucket-cap-mb``, a study's and a scenario's ``bucket_cap_mb`` and the API."""
    if isinstance(value, str):
        try:
            number: object = float(value)
        except ValueError:
            try:
                hint = f": write {parse_size(value, field) / MiB:g}"
            except InputError:
                hint = ", such as 25"
            raise InputError(f"a number of MiB without a unit{hint}", field=field, value=value) from None
    else:
        number = value
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise InputError("a number of MiB without a unit, such as 25", field=field, value=value)
    if number <= 0:
        raise InputError("must be a positive number of MiB", field=field, value=value)
    try:
        return check_range(number, field=field, low=0.0, high=high, low_open=True, unit="MiB")
    except InputError as e:
        raise InputError(e.message, field=field, value=value) from None     # the value as written ('0', not 0.0)


def format_bytes(size_bytes: float) -> str:
    """Short binary size for tables: 8 B, 64 KiB, 1 GiB."""
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size_bytes >= scale:
            v = size_bytes / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{size_bytes:.0f} B"


def format_duration(seconds: float) -> str:
    """Short duration for tables: 850 ms, 42.0 s, 32.7 min, 9.28 h, 32.2 d."""
    if seconds != seconds or seconds == float("inf"):
        return "inf"
    if seconds == 0:
        return "0 s"
    for unit, scale, fmt in (("d", 86400.0, "{:.2f}"), ("h", 3600.0, "{:.2f}"), ("min", 60.0, "{:.1f}"),
                             ("s", 1.0, "{:.1f}")):
        if abs(seconds) >= (2 * scale if unit == "d" else scale):
            return f"{fmt.format(seconds / scale)} {unit}"
    return f"{seconds * 1e3:.0f} ms"
