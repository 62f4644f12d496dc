"""The wave-quantisation law of persistent GEMMs beside NCCL kernels (validation.gemm_wave)."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.gemm_wave import Tile, kernel_tile, static_factor, tiles, wave_factor


@pytest.mark.parametrize("n_tiles, channels, factor", [
    (128, 24, 2.0),            # one round alone, two beside 24 channels
    (1664, 24, 16 / 13),       # 13 rounds alone, ceil(1664 / 108) = 16 beside
    (120, 8, 1.0),             # fits the 124 SMs left
    (120, 16, 2.0),            # does not fit the 116 left
    (264, 0, 1.0),             # nothing beside
])
def test_wave_factor_counts_rounds(n_tiles: int, channels: int, factor: float) -> None:
    assert wave_factor(n_tiles, 132, channels) == pytest.approx(factor)


@pytest.mark.parametrize("n_tiles, channels, factor", [
    (128, 24, 2.0),
    (264, 0, 1.0),
    (384, 8, 5 / 3),           # CTAs 0-119 own 3 tiles, 120-131 two; the 8 late ones follow 120-123 (at 2) and 4 others
    (1664, 24, 24 / 13),       # the late CTAs run their whole 12-tile share after the first CTA ends
])
def test_static_factor_runs_late_ctas_whole_share(n_tiles: int, channels: int, factor: float) -> None:
    assert static_factor(n_tiles, 132, channels) == pytest.approx(factor)


def test_laws_refuse_more_channels_than_sms() -> None:
    with pytest.raises(InputError):
        wave_factor(128, 132, 132)
    with pytest.raises(InputError):
        static_factor(128, 132, -1)


def test_kernel_names_give_tiles() -> None:
    assert kernel_tile("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT") == Tile(256, 128)
    assert kernel_tile("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT") == Tile(320, 128)
    assert kernel_tile("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128") is None
    assert tiles(512, 12288, Tile(192, 128)) == 64 * 4
    assert tiles(8192, 8192, Tile(320, 128)) == 26 * 64


# ------------------------------------------------------------------ the committed probe and profiles


def test_committed_probe_refutes_the_wave_law() -> None:
    """High for one-round GEMMs, low for 2-4 rounds, near for many rounds; where it steps with the channels (512
    tiles: 1.25 at 8-24, 1.50 at 32) the measurement stays flat."""
    from validation.gemm_wave import probe_gemms

    gemms = probe_gemms()
    assert {g.channels for g in gemms} == {8, 16, 24, 32} and len(gemms) == 35
    for g in gemms:
        law = wave_factor(g.n_tiles, g.sms, g.channels)
        assert g.spin is not None and g.xfer is not None
        if g.n_tiles == 128:
            assert max(g.spin, g.xfer) < law - 0.1
        elif g.n_tiles <= 512 and g.channels < 32:
            assert min(g.spin, g.xfer) > law + 0.1
        elif g.n_tiles > 512:
            assert abs(g.spin - law) < 0.1
    step = [(g.spin + g.xfer) / 2 for g in gemms if g.n_tiles == 512 and g.launch in ("ch8", "ch32")]
    assert abs(step[0] - step[1]) < 0.1 < wave_factor(512, 132, 32) - wave_factor(512, 132, 8)


def test_profiled_steps_gemms_by_place() -> None:
    """Each step's GEMMs named by place; two weight gradients of the same tiles slowed 1.2x and 1.9x."""
    from validation.gemm_wave import places

    ps = places()
    assert {p.gemm.name for p in ps if p.probed} == {"qkv", "proj", "fc1", "fc2"}
    by = {(p.folder, p.hidden, p.gemm.name): p for p in ps}
    for folder in ("h200x2_2026-11-27_fsdpprof", "h200x4_2026-11-27_fsdpprof4"):
        assert by[(folder, 2048, "proj")].median("spin") > 1.7                      # one round: about 2x
        fc1, fc2 = by[(folder, 4096, "fc1 wgrad")], by[(folder, 4096, "fc2 wgrad")]
        assert fc1.n_tiles == fc2.n_tiles and fc1.wave == fc2.wave
        assert fc2.median("xfer") - fc1.median("xfer") > 0.5                        # no tile count separates them


def test_report_prints_every_table(capsys: Any) -> None:
    from validation.gemm_wave import main

    assert main([]) == 0
    out = capsys.readouterr().out
    assert "| wave quantisation | 70 |" in out and "| 4096 | backward |" in out
