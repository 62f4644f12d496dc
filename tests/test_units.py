import pytest

from simulator.core.errors import InputError
from simulator.core.units import parse_bandwidth, parse_size, parse_time


@pytest.mark.parametrize("text, expected", [
    ("400 Gb/s", 50e9), ("400Gbps", 50e9), ("900 GB/s", 900e9), ("1 GiB/s", 2**30), ("25 MB/s", 25e6), (1e9, 1e9),
])
def test_bandwidth(text, expected):
    assert parse_bandwidth(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, expected", [
    ("1.5 us", 1.5e-6), ("2 ms", 2e-3), ("500 ns", 5e-7), ("3 s", 3.0), ("1.5 µs", 1.5e-6), (0, 0.0),
])
def test_time(text, expected):
    assert parse_time(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, expected", [
    ("50000 hours", 50000 * 3600.0), ("1 hour", 3600.0), ("5 minutes", 300.0), ("5 mins", 300.0),
    ("30 seconds", 30.0), ("2 weeks", 2 * 604800.0), ("1 year", 365 * 86400.0), ("30 days", 30 * 86400.0),
])
def test_time_in_words(text, expected):
    """"30 days" was a time and "50000 hours" was not (review s26): the words of every unit are read."""
    assert parse_time(text) == pytest.approx(expected)


def test_a_time_error_lists_the_units():
    with pytest.raises(InputError, match=r"\(ns, us, ms, s, min, h, d, w, y\)"):
        parse_time("50000 hourz", field="--mtbf-gpu")


@pytest.mark.parametrize("text, expected", [
    ("25 MiB", 25 * 2**20), ("1 GB", 10**9), ("8G", 8 * 2**30), ("128M", 128 * 2**20), ("4K", 4096), ("8", 8),
])
def test_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("fn, bad", [
    (parse_bandwidth, "400 Gb"), (parse_bandwidth, "-5 GB/s"), (parse_bandwidth, "0 GB/s"), (parse_bandwidth, "fast"),
    (parse_bandwidth, "4 Xb/s"), (parse_time, "3 parsecs"), (parse_time, "-1 us"), (parse_size, "12 furlongs"),
])
def test_bad_values_name_field_and_value(fn, bad):
    with pytest.raises(InputError) as e:
        fn(bad, field="links[0].bandwidth")
    assert "links[0].bandwidth" in str(e.value) and repr(bad) in str(e.value)
