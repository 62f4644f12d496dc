"""validation.peer_probe and validation.runners.peer_copy: issue 10's peer-copy probe."""

import sys
import types

import pytest

from simulator.core.errors import InputError
from validation import peer_probe as pp
from validation.data import DATA_DIR
from validation.runners import peer_copy

MIB = 1 << 20


def _records(variant, b_s_per_mib, mid_bump=0.0, issue_share=0.1, kind="peer"):
    out = []
    for mib in (4, 8, 16, 32, 64, 128, 256, 512, 1024):
        t = 10e-6 + b_s_per_mib * mib * (1 + (mid_bump if 16 <= mib <= 64 else 0))
        rec = {"kind": kind, "bytes": mib * MIB - (8 if kind == "peer" else 0), "rep_times_s": [t, t * 1.01]}
        if kind == "peer":
            rec.update(variant=variant, rep_issue_s=[issue_share * t] * 2)
        else:
            rec.update(op=variant)
        out.append(("probe.jsonl", len(out) + 1, rec))
    return out


def test_a_steeper_mid_line_shows_and_a_straight_one_does_not():
    got = {s.name: s for s in pp.series(_records("raw_ce_uni", 2.7e-6) + _records("all_reduce", 3e-6, 0.2, kind="coll"))}
    flat, nccl = got["raw_ce_uni"], got["nccl all_reduce"]
    assert flat.mid.slope_s_per_byte == pytest.approx(flat.big.slope_s_per_byte, rel=1e-6)
    assert nccl.mid.slope_s_per_byte > 1.1 * nccl.big.slope_s_per_byte
    assert flat.host_bound_mib == ()


def test_sizes_whose_host_issue_sets_the_pace_are_named():
    s = pp.series(_records("ce_bi", 2.7e-6, issue_share=0.95))[0]
    assert s.host_bound_mib == (4, 8, 16, 32, 64, 128, 256, 512, 1024)


def test_the_shipped_probe_shows_the_step_in_nccl_only():
    by = {(lease, s.name): s for lease, recs in pp.load(DATA_DIR / pp.DATASET).items() for s in pp.series(recs)}
    ratio = {k: s.mid.slope_s_per_byte / s.big.slope_s_per_byte - 1 for k, s in by.items()}
    for v in ("raw_ce_uni", "raw_ce_bi", "raw_sm_uni", "raw_sm_bi"):
        assert abs(ratio[("raw", v)]) < 0.02, v
        assert not [m for m in by[("raw", v)].host_bound_mib if 16 <= m]
    assert ratio[("raw", "nccl all_reduce")] > 0.15 and ratio[("torch", "nccl all_reduce")] > 0.15
    assert ratio[("raw", "nccl all_gather")] > 0.10


def test_missing_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError):
        pp.load(tmp_path)


@pytest.mark.parametrize("line, field", [('{"kind": "peer", "bytes": 4194304, "rep_times_s": [0.001]}', "variant"),
                                         ('{"kind": "peer", "variant": "ce_uni", "bytes": 4194304}', "rep_times_s"),
                                         ('{"kind": "coll", "op": "all_reduce", "bytes": -1, "rep_times_s": [1]}',
                                          "bytes"),
                                         ("not json", "line 1")])
def test_a_bad_probe_record_names_file_line_and_field(tmp_path, capsys, line, field):
    """A folder of the user's own probe files: a bad record is one error line naming the file, the line and the
    field, exit status 2 (was a KeyError / JSONDecodeError traceback)."""
    (tmp_path / "peer_L1.jsonl").write_text(line + "\n")
    assert pp.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "peer_L1.jsonl" in err and field in err


def test_runner_sizes_are_whole_words_and_variants_follow_the_api():
    s = peer_copy.parse_settings(["--out", "x", "--min-bytes", "4M", "--max-bytes", "16M"])
    assert s.variants == peer_copy.VARIANTS and all(b % peer_copy.SIZE_GRAIN == 0 for b in s.sizes)
    raw = peer_copy.parse_settings(["--out", "x", "--api", "cupy", "--variants", "raw_sm24_bi"])
    assert raw.variants == ("raw_sm24_bi",)
    with pytest.raises(InputError):
        peer_copy.parse_settings(["--out", "x", "--api", "cupy", "--variants", "ce_uni"])


@pytest.mark.parametrize("argv, field", [(["--reps", "0"], "reps"), (["--warmup", "0"], "warmup"),
                                         (["--min-bytes", "8", "--max-bytes", "8"], "max-bytes")])
def test_peer_copy_bad_settings_name_their_field(argv: list[str], field: str) -> None:
    with pytest.raises(InputError, match=field):
        peer_copy.parse_settings(["--out", "x", *argv])


def test_raw_copies_without_cupy_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--api cupy`` on a host without CuPy: an InputError naming the option (``run`` prints it and exits 2
    before writing a meta line), not an ImportError traceback after one."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(InputError, match="CuPy"):
        peer_copy.RawCopies()


def test_raw_copies_refuse_gpus_without_peer_access(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without peer access the raw kernel would store into unreachable memory: refused by name, not swallowed
    as 'already enabled'."""
    runtime = types.SimpleNamespace(deviceCanAccessPeer=lambda a, b: 0, CUDARuntimeError=RuntimeError,
                                    deviceEnablePeerAccess=lambda b: None)
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    with pytest.raises(InputError, match="peer access"):
        peer_copy.RawCopies()
