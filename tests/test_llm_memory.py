"""Memory per GPU: Korthikanti et al.'s activation formulas and the sharding of model states."""

import pytest

from simulator.training.llm.config import TrainConfig
from simulator.training.llm.memory import activation_bytes_per_layer, memory_per_gpu, stage_layers
from simulator.training.llm.model import zoo_model

M22 = zoo_model("megatron-22b")
GiB = 2**30


def _act(recompute="none", sp=False, tp=8, b=1):
    return activation_bytes_per_layer(M22, TrainConfig(tp, 1, 1, b, b, recompute=recompute, sequence_parallel=sp))


def test_activation_formulas_of_table_2():
    s, b, h, a, t = M22.seq, 1, M22.hidden, M22.heads, 8
    sbh = s * b * h
    assert _act(tp=1, sp=False) == pytest.approx(sbh * (34 + 5 * a * s / h))
    assert _act() == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)))
    assert _act(sp=True) == pytest.approx(sbh / t * (34 + 5 * a * s / h))
    assert _act("selective", True) == pytest.approx(34 * sbh / t)
    assert _act("full") == pytest.approx(2 * sbh)


@pytest.mark.parametrize("recompute, sp, gib", [("none", False, 59.25), ("selective", True, 9.5625)])
def test_selene_22b_activations_of_figure_1(recompute, sp, gib):
    c = TrainConfig(8, 1, 1, 4, 4, recompute=recompute, sequence_parallel=sp)
    assert memory_per_gpu(M22, c, 80 * GiB).activations / GiB == pytest.approx(gib, rel=1e-3)


def test_interleaving_keeps_more_microbatches_in_flight():
    m = zoo_model("gpt3-175b")
    plain = memory_per_gpu(m, TrainConfig(8, 8, 1, 64), 80 * GiB)
    inter = memory_per_gpu(m, TrainConfig(8, 8, 1, 64, schedule="interleaved", virtual_stages=3), 80 * GiB)
    assert inter.activations == pytest.approx(plain.activations * (1 + 7 / 24))
    assert 66.8 < inter.activations / GiB < 66.9          # Figure 1: 66.84 GiB


def test_zero_stages_shard_more_and_more():
    m = zoo_model("llama-2-7b")
    mems = [memory_per_gpu(m, TrainConfig(1, 1, 8, 8, zero=z), 80 * GiB) for z in (0, 1, 2, 3)]
    assert [x.total for x in mems] == sorted((x.total for x in mems), reverse=True)
    assert mems[1].optimizer == pytest.approx(mems[0].optimizer / 8)
    assert mems[2].grads == pytest.approx(mems[0].grads / 8)
    assert mems[0].params + mems[0].grads + mems[0].optimizer == pytest.approx(18 * m.total_params())


def test_fits_verdict():
    m = zoo_model("llama-2-70b")
    assert not memory_per_gpu(m, TrainConfig(1, 1, 8, 8), 80 * GiB).fits
    assert memory_per_gpu(m, TrainConfig(8, 4, 1, 8, recompute="full"), 80 * GiB).fits


def test_stage_layers_cover_the_model():
    assert stage_layers(105, 35) == [3] * 35
    assert sum(stage_layers(126, 16)) == 126 and max(stage_layers(126, 16)) - min(stage_layers(126, 16)) == 1
