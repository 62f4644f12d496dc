"""validation.slope_probe: issue 10's slope probe (per-doubling slopes, verdicts, NCCL-loop fit, clocks)."""

import json

import pytest

from validation import slope_probe as sp

MIB = 1 << 20
SIZES = (8, 16, 32, 64, 128, 256, 512, 1024)
ENV = {"NCCL_NVLS_ENABLE": "0"}


def _line(a_s, b_s_per_mib, bump=0.0):
    """size (bytes) -> s: a + b S, big sizes (>= 256 MiB) ``bump`` slower per byte."""
    return {s * MIB: a_s + b_s_per_mib * s * (1 + (bump if s >= 256 else 0)) for s in SIZES}


def _write(folder, name, variant, times, env=ENV, op="all_reduce", world=2, start_s=1000.0, iters=10):
    with open(folder / name, "a", encoding="utf-8") as f:
        f.write(json.dumps({"kind": "meta", "variant": variant}) + "\n")
        for i, (size, t) in enumerate(sorted(times.items())):
            ends = [start_s + i + 0.1 * (r + 1) for r in range(3)]
            f.write(json.dumps({"kind": "coll", "op": op, "world": world, "bytes": size, "time_s": t,
                                "rep_times_s": [t] * 3, "rep_end_unix_s": ends, "iters": iters, "variant": variant,
                                "env": env}) + "\n")


def _probe(tmp_path, bump=0.10, wobble=0.001):
    for i, w in (("L1", 0.0), ("L2", wobble)):
        _write(tmp_path, f"slope_world2_{i}.jsonl", "default", _line(20e-6, 3e-6 * (1 + w)))
        _write(tmp_path, f"slope_world2_{i}.jsonl", "buf16", _line(20e-6, 3e-6 * (1 + w), bump),
               env={**ENV, "NCCL_BUFFSIZE": "16777216"})
    return sp.load(tmp_path)


def test_doubling_slopes_of_a_line_are_its_slope():
    d = sp.doubling_slopes(_line(20e-6, 3e-6 / MIB * MIB))
    assert set(d) == set(sp.DOUBLINGS_MIB)
    assert all(v * MIB == pytest.approx(3e-6) for v in d.values())


def test_a_variant_that_slows_the_big_sizes_moves_the_big_line_only(tmp_path):
    """The passes differ by 0.1%, so a 10% change of the big sizes' slope counts and the unchanged mid one does not."""
    vs = {v.variant: v for v in sp.verdicts(_probe(tmp_path))}
    assert vs["buf16"].moves_big and not vs["buf16"].moves_mid
    assert vs["buf16"].big_change == pytest.approx(0.10, rel=1e-6)
    assert not vs["default"].moves_big and vs["default"].big_change == 0
    assert vs["default"].mid_noise == pytest.approx(0.001, rel=1e-3)
    assert vs["default"].big_noise == pytest.approx(0.001, rel=1e-3)


def test_each_world_size_and_line_is_judged_by_its_own_pass_noise(tmp_path):
    """4 GPUs whose mid line moves 20% between passes neither hide a 2-GPU change nor the 4-GPU big line's."""
    _probe(tmp_path)
    for i, w in (("L1", 0.0), ("L2", 0.2)):
        mid_wobble = {s: t * (1 + w) if s <= 64 * MIB else t for s, t in _line(20e-6, 3e-6).items()}
        _write(tmp_path, f"slope_world4_{i}.jsonl", "default", mid_wobble, world=4)
        _write(tmp_path, f"slope_world4_{i}.jsonl", "buf16", {**mid_wobble, **{
            s: t for s, t in _line(20e-6, 3e-6, 0.05).items() if s >= 256 * MIB}},
            env={**ENV, "NCCL_BUFFSIZE": "16777216"}, world=4)
    vs = {(v.variant, v.world): v for v in sp.verdicts(sp.load(tmp_path))}
    assert vs["buf16", 2].moves_big and vs["buf16", 2].big_noise == pytest.approx(0.001, rel=1e-3)
    assert vs["buf16", 4].mid_noise > 0.1 and vs["buf16", 4].big_noise < 1e-9
    assert vs["buf16", 4].moves_big


def test_no_change_counts_when_the_passes_differ_more_than_the_variant(tmp_path):
    vs = {v.variant: v for v in sp.verdicts(_probe(tmp_path, bump=0.01, wobble=0.02))}
    assert not vs["buf16"].moves_big


def test_buffer_series_takes_the_default_and_buffer_only_variants(tmp_path):
    _probe(tmp_path)
    _write(tmp_path, "slope_world2_L1.jsonl", "ch12", _line(20e-6, 4e-6), env={**ENV, "NCCL_MAX_NCHANNELS": "12"})
    points = [p for pts in sp.load(tmp_path).values() for p in pts]
    loops = [lp for lp, _ in sp.buffer_series(points, 2)]
    assert loops == [sp.loop_bytes(4 * MIB, 2), sp.loop_bytes(16 * MIB, 2)]
    assert sp.loop_bytes(4 * MIB, 2) == 96 * MIB          # 24 channels x 2 ranks x a 2 MiB chunk


def test_loop_fit_finds_the_reach_in_loops_when_it_scales_with_the_buffer():
    """Times made with an excess of 8% over the first 4 loops of each buffer's own loop: the scaled fit recovers
    them exactly, one loop for all cannot."""
    sizes = [int(45 * MIB * 2 ** (k / 2)) for k in range(10)]

    def times(loop):
        return {s: 30e-6 + 3e-6 / MIB * s + 0.08 * 3e-6 / MIB * min(s, 4 * loop) for s in sizes}
    series = [(96 * MIB, times(96 * MIB)), (24 * MIB, times(24 * MIB))]
    scaled = sp.loop_fit(series, scaled=True)
    assert scaled.loops == pytest.approx(4, rel=0.02)
    assert scaled.excess == pytest.approx(0.08, rel=0.05)
    assert scaled.errors[2] < 1e-3
    assert sp.loop_fit(series, scaled=False).errors[2] > 5 * scaled.errors[2]


def test_clock_rows_keep_the_samples_inside_repetitions_of_the_points_gpus(tmp_path):
    points = [p for pts in _probe(tmp_path).values() for p in pts if p.variant == "default"]
    end = points[0].rep_end_unix_s[0]           # the first point's first repetition: 10 calls before it
    rep = points[0].rep_times_s[0] * 10
    samples = [sp.Sample(end - rep / 2, 0, 1980, 3201, 300, 0x0),
               sp.Sample(end - rep / 2, 1, 1755, 3201, 310, 0x4),      # a power slowdown inside
               sp.Sample(end - rep / 2, 2, 100, 100, 100, 0x4),        # a GPU the point did not use
               sp.Sample(end - 5 * rep, 0, 345, 3201, 70, 0x1)]        # idle, outside every repetition
    (row,) = sp.clock_rows(points, samples)
    assert row.samples == 4                      # two GPUs, in both passes' first repetition
    assert row.sm_mhz == (1755, 1980) and row.slowdowns == (0x4,)


def test_read_smi_turns_local_stamps_into_unix_time(tmp_path):
    (tmp_path / "clock.txt").write_text("unix_s 3600.5 local 1970/01/01 02:00:00.500000000 CET\n")
    (tmp_path / "smi.csv").write_text("timestamp, index, sm, mem, power, temp, reasons\n"
                                      "1970/01/01 02:00:01.000, 1, 1980, 3201, 250.5, 40, 0x0000000000000004\n"
                                      "1970/01/01 02:00:01.100, 0, [N/A], 3201, 250.5, 40, 0x0\n")
    (s,) = sp.read_smi(tmp_path / "smi.csv", tmp_path / "clock.txt")
    assert s.unix_s == pytest.approx(3601.0) and (s.gpu, s.sm_mhz, s.reasons) == (1, 1980, 4)


def test_the_first_repetition_ratio_is_one_for_equal_repetitions(tmp_path):
    points = [p for pts in _probe(tmp_path).values() for p in pts]
    assert set(sp.first_rep_ratio(points).values()) == {1.0}


def test_report_runs_on_a_folder_and_main_refuses_options(tmp_path, capsys):
    _probe(tmp_path)
    assert sp.main([str(tmp_path)]) == 0
    assert "| all_reduce | 2 | buf16 |" in capsys.readouterr().out
    assert sp.main(["--bogus"]) == 2
    assert sp.main(["--help"]) == 0                   # usage on stdout, not an error (review s19)
    assert sp.main([str(tmp_path / "none")]) == 2


def test_rep_end_times_and_iters_round_trip_and_bad_ones_are_refused(tmp_path):
    from simulator.core.errors import InputError
    from validation.parsers import Dataset, read_jsonl, write_jsonl
    points = [p for pts in _probe(tmp_path).values() for p in pts][:2]
    write_jsonl(Dataset(meta={}, points=tuple(points)), tmp_path / "rt.jsonl")
    back = read_jsonl(tmp_path / "rt.jsonl").points
    assert [(p.rep_end_unix_s, p.iters) for p in back] == [(p.rep_end_unix_s, 10) for p in points]
    bad = tmp_path / "bad.jsonl"
    for ends in ("[1.0, 2.0]", "[1.0, 2.0, -3.0]", "[1.0, 2.0, true]"):
        bad.write_text('{"kind": "coll", "op": "all_reduce", "world": 2, "bytes": 8, "time_s": 1e-5, '
                       f'"rep_times_s": [1e-5, 1e-5, 1e-5], "rep_end_unix_s": {ends}}}\n')
        with pytest.raises(InputError, match="rep_end_unix_s"):
            read_jsonl(bad)


def _groups(rule, excess_rule, loops=4.0, excess=0.08):
    """Two world sizes' all_reduce under three buffers, made with one reach rule and excess."""
    sizes = [int(45 * MIB * 2 ** (k / 2)) for k in range(10)]
    out = []
    for world in (2, 4):
        e = excess if excess_rule == "shared" else excess / (world - 1)
        series = tuple((buf, {s: 30e-6 + 3e-6 * world / MIB * (s + e * min(s, sp.reach_bytes(rule, world, buf, loops)))
                              for s in sizes}) for buf in (4 * MIB, 16 * MIB, MIB))
        out.append(sp.Group("made", world, series))
    return out


@pytest.mark.parametrize("rule", ["loops", "bytes"])
def test_reach_fit_recovers_the_rule_the_times_were_made_with(rule):
    groups = _groups(rule, "1/(n-1)")
    fit = sp.reach_fit(groups, rule, "1/(n-1)")
    assert fit.loops == pytest.approx(4, rel=0.03) and fit.excess == pytest.approx(0.08, abs=0.003)
    assert fit.errors[2] < 2e-3
    other = "bytes" if rule == "loops" else "loops"
    assert sp.reach_fit(groups, other, "1/(n-1)").errors[1] > 3 * fit.errors[1]


def test_one_excess_for_every_world_size_cannot_fit_an_excess_that_falls_with_the_ranks():
    groups = _groups("loops", "1/(n-1)")
    assert sp.reach_fit(groups, "loops", "shared").errors[1] > 3 * sp.reach_fit(groups, "loops", "1/(n-1)").errors[1]


def test_reach_bytes_follows_ranks_and_buffer_as_its_rule_says():
    assert sp.reach_bytes("loops", 4, 16 * MIB, 1) == 8 * sp.loop_bytes(4 * MIB, 2)      # 768 MiB
    assert sp.reach_bytes("per-rank bytes", 4, 16 * MIB, 1) == 2 * sp.loop_bytes(4 * MIB, 2)
    assert sp.reach_bytes("buffer, not ranks", 4, 16 * MIB, 1) == sp.loop_bytes(16 * MIB, 2)
    assert sp.reach_bytes("bytes", 4, 16 * MIB, 1) == 96 * MIB
    with pytest.raises(Exception, match="rule"):
        sp.reach_fit(_groups("loops", "shared"), "lines", "shared")


def test_several_folders_print_each_report_and_the_fit_through_all(tmp_path, capsys):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        _probe(tmp_path / name)
    assert sp.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "## a" in out and "## b" in out and "## Every probe together" in out
    assert "a 2 GPUs, b 2 GPUs" in out


def test_the_shipped_4_gpu_probe_is_read_at_both_world_sizes():
    """Both world sizes of the 4x H200 probe carry the three buffers, and the 4-GPU excess is the smaller."""
    groups = sp.groups_of(sp.DATA_DIR / sp.DATASET4)
    assert [(g.world, sorted(b >> 20 for b, _ in g.series)) for g in groups] == [(2, [1, 4, 16]), (4, [1, 4, 16])]
    two, four = (sp.reach_fit([g], "loops", "shared") for g in groups)
    assert four.excess < two.excess / 2
