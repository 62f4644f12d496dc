"""Model zoo: exact parameter counts, names, FLOPs, and (with torch) registration order."""

import pytest

from simulator.core.errors import InputError
from simulator.training.zoo import zoo_model, zoo_names, zoo_workload

TOTALS = {
    "resnet50": 25_557_032, "resnet152": 60_192_808, "vit-b16": 86_567_656,
    # HF BertForMaskedLM (tied decoder); BertModel totals are checked below
    "bert-base": 109_514_298, "bert-large": 335_174_458,
    "gpt2": 124_439_808, "gpt2-medium": 354_823_168, "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200, "llama-7b": 6_738_415_616,
}


def test_zoo_lists_every_model():
    assert sorted(zoo_names()) == sorted(TOTALS)


@pytest.mark.parametrize("name, total", TOTALS.items())
def test_parameter_count_exact(name, total):
    assert zoo_model(name).num_params == total
    assert sum(n for _, n in zoo_model(name).param_numels()) == total


@pytest.mark.parametrize("name, bert_model_total, d", [
    ("bert-base", 109_482_240, 768), ("bert-large", 335_141_888, 1024)])
def test_bert_model_total_without_mlm_head(name, bert_model_total, d):
    encoder = sum(n for p, n in zoo_model(name).param_numels() if not p.startswith("cls."))
    assert encoder + d * d + d == bert_model_total       # + pooler.dense


@pytest.mark.parametrize("name", zoo_names())
def test_names_unique_and_flops_positive(name):
    m = zoo_model(name)
    names = [p for p, _ in m.param_numels()]
    assert len(names) == len(set(names))
    assert all(layer.forward_flops > 0 for layer in m.layers)
    assert {p for layer in m.layers for p, _ in layer.params} == set(names)


def test_resnet50_flops_near_4_1_gmacs():
    assert zoo_model("resnet50").forward_flops == pytest.approx(8.2e9, rel=0.05)


def test_vit_b16_flops_near_torchvision():
    # torchvision lists 17.56 GFLOPS (multiply-accumulates) for vit_b_16
    assert zoo_model("vit-b16").forward_flops == pytest.approx(2 * 17.56e9, rel=0.05)


@pytest.mark.parametrize("name, first, last", [
    ("resnet50", "conv1.weight", "fc.bias"),
    ("vit-b16", "class_token", "heads.head.bias"),
    ("bert-base", "bert.embeddings.word_embeddings.weight",
     "cls.predictions.transform.LayerNorm.bias"),
    ("gpt2", "transformer.wte.weight", "transformer.ln_f.bias"),
    ("llama-7b", "model.embed_tokens.weight", "lm_head.weight"),
])
def test_registration_order_ends(name, first, last):
    names = [p for p, _ in zoo_model(name).param_numels()]
    assert (names[0], names[-1]) == (first, last)


def test_hf_module_order_gpt2_block():
    names = [p for p, _ in zoo_model("gpt2").param_numels()][2:14]
    assert names == [f"transformer.h.0.{s}" for s in (
        "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
        "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
        "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias")]


def test_bert_head_bias_registered_before_transform():
    names = [p for p, _ in zoo_model("bert-base").param_numels()]
    assert names[-5:] == ["cls.predictions.bias", "cls.predictions.transform.dense.weight",
                          "cls.predictions.transform.dense.bias",
                          "cls.predictions.transform.LayerNorm.weight",
                          "cls.predictions.transform.LayerNorm.bias"]


def test_llama_layer_registration_order():
    names = [p for p, _ in zoo_model("llama-7b").param_numels()][1:10]
    assert names == [f"model.layers.0.{s}.weight" for s in (
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
        "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "input_layernorm",
        "post_attention_layernorm")]


@pytest.mark.parametrize("alias, name", [("gpt2-small", "gpt2"), ("vit_b_16", "vit-b16"),
                                         ("BERT_BASE", "bert-base"), ("llama-2-7b", "llama-7b")])
def test_aliases(alias, name):
    assert zoo_model(alias) is zoo_model(name)


def test_unknown_model_lists_names():
    with pytest.raises(InputError) as exc:
        zoo_model("alexnet")
    assert "resnet50" in str(exc.value) and "'alexnet'" in str(exc.value)


@pytest.mark.parametrize("name, seq", [("resnet50", 128), ("gpt2", 2048), ("bert-base", 0)])
def test_bad_seq_len(name, seq):
    with pytest.raises(InputError, match="seq_len"):
        zoo_model(name, seq_len=seq)


def test_seq_len_changes_flops_not_params():
    short, long = zoo_model("gpt2", seq_len=256), zoo_model("gpt2", seq_len=1024)
    assert short.num_params == long.num_params and long.forward_flops > 4 * short.forward_flops


def test_zoo_workload_defaults_and_formula():
    w = zoo_workload("resnet50", gpu="h100", efficiency=0.5)
    m = zoo_model("resnet50")
    assert w.batch_size == 64
    assert w.forward_s == pytest.approx(m.forward_flops * 64 / (989.5e12 * 0.5))
    assert w.backward_s == pytest.approx(2 * w.forward_s)
    assert w.total_bytes == 4 * 25_557_032
    # gradients become ready in reverse layer order: fc first, conv1 last
    assert w.params[-1].grad_ready_s < w.params[0].grad_ready_s == pytest.approx(w.backward_s)


def test_tied_weights_ready_at_end_of_backward():
    w = zoo_workload("gpt2")
    ready = {p.name: p.grad_ready_s for p in w.params}
    assert ready["transformer.wte.weight"] == pytest.approx(w.backward_s)
    assert ready["transformer.ln_f.weight"] > 0       # lm_head backward comes first


# ---------------------------------------------------------------- cross-check with real torch

def _torch_resnet(torch, blocks):
    """A torch ResNet with torchvision's module names and order (no torchvision needed)."""
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self, inplanes, planes, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * 4)
            self.relu = nn.ReLU()
            self.downsample = None
            if stride != 1 or inplanes != planes * 4:
                self.downsample = nn.Sequential(
                    nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False),
                    nn.BatchNorm2d(planes * 4))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            inplanes = 64
            for i, (planes, n) in enumerate(zip((64, 128, 256, 512), blocks), 1):
                layers = []
                for b in range(n):
                    layers.append(Bottleneck(inplanes, planes, (1 if i == 1 or b else 2)))
                    inplanes = planes * 4
                setattr(self, f"layer{i}", nn.Sequential(*layers))
            self.fc = nn.Linear(2048, 1000)

    with torch.device("meta"):
        return ResNet()


def _torch_gpt2(torch, d, n_layer):
    """GPT2LMHeadModel's parameter structure (HF names, Conv1D shapes, tied lm_head)."""
    nn = torch.nn

    def conv1d(nx, nf):
        m = nn.Module()
        m.weight = nn.Parameter(torch.empty(nx, nf))
        m.bias = nn.Parameter(torch.empty(nf))
        return m

    def block():
        b = nn.Module()
        b.ln_1 = nn.LayerNorm(d)
        b.attn = nn.Module()
        b.attn.c_attn, b.attn.c_proj = conv1d(d, 3 * d), conv1d(d, d)
        b.ln_2 = nn.LayerNorm(d)
        b.mlp = nn.Module()
        b.mlp.c_fc, b.mlp.c_proj = conv1d(d, 4 * d), conv1d(4 * d, d)
        return b

    with torch.device("meta"):
        model = nn.Module()
        model.transformer = nn.Module()
        model.transformer.wte = nn.Embedding(50257, d)
        model.transformer.wpe = nn.Embedding(1024, d)
        model.transformer.h = nn.ModuleList(block() for _ in range(n_layer))
        model.transformer.ln_f = nn.LayerNorm(d)
        model.lm_head = nn.Linear(d, 50257, bias=False)
        model.lm_head.weight = model.transformer.wte.weight
    return model


@pytest.mark.parametrize("name, blocks", [("resnet50", (3, 4, 6, 3)),
                                          ("resnet152", (3, 8, 36, 3))])
def test_resnet_matches_torch_module_order(name, blocks):
    torch = pytest.importorskip("torch")
    model = _torch_resnet(torch, blocks)
    expected = [(n, p.numel()) for n, p in model.named_parameters()]
    assert zoo_model(name).param_numels() == expected


@pytest.mark.parametrize("name, d, n_layer", [("gpt2", 768, 12), ("gpt2-xl", 1600, 48)])
def test_gpt2_matches_torch_structure(name, d, n_layer):
    torch = pytest.importorskip("torch")
    model = _torch_gpt2(torch, d, n_layer)
    expected = [(n, p.numel()) for n, p in model.named_parameters()]
    assert zoo_model(name).param_numels() == expected


def test_resnet50_conv_flops_match_torch_shapes():
    torch = pytest.importorskip("torch")
    model = _torch_resnet(torch, (3, 4, 6, 3))
    macs = 0
    x = torch.empty(1, 3, 224, 224, device="meta")

    def hook(mod, inp, out):
        nonlocal macs
        if isinstance(mod, torch.nn.Conv2d):
            macs += out.numel() * mod.weight[0].numel()
    for m in model.modules():
        m.register_forward_hook(hook)
    model.conv1(x)   # only shapes matter: walk the network by hand
    h = torch.nn.functional.max_pool2d(model.bn1(model.conv1(x)), 3, 2, 1)
    for i in range(1, 5):
        for blk in getattr(model, f"layer{i}"):
            out = blk.bn3(blk.conv3(blk.bn2(blk.conv2(blk.bn1(blk.conv1(h))))))
            if blk.downsample is not None:
                blk.downsample(h)
            h = out
    macs -= 3 * 49 * 64 * 112 * 112                   # conv1 was called twice above
    conv_flops = sum(layer.forward_flops for layer in zoo_model("resnet50").layers
                     if layer.name.endswith(("conv1", "conv2", "conv3", "downsample.0")))
    assert conv_flops == 2 * macs


@pytest.mark.parametrize("name, profile", [("resnet50", "profile_resnet50.json"),
                                           ("bert-base", "profile_bert-base.json"),
                                           ("gpt2", "profile_gpt2.json")])
def test_zoo_compute_matches_the_measured_h200_profile(name, profile):
    """Default efficiencies come from the committed H200 profiles: forward+backward within 10%."""
    from simulator.training.workload import load_workload
    from simulator.training.zoo import zoo_workload
    from validation.data import data_path
    measured = load_workload(data_path(f"h200x4_2026-11-26b/{profile}"))
    zoo = zoo_workload(name, gpu="h200", batch_size=measured.batch_size)
    assert zoo.forward_s + zoo.backward_s == pytest.approx(measured.forward_s + measured.backward_s, rel=0.10)
