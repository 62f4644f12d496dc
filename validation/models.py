"""Models for the DDP runner and the profiler: resnet50, bert-base, gpt2 (small) and an MLP.

``build_workload(name)`` returns the model, a synthetic-batch maker and a loss function. The real
library definitions are used when importable, built from configs (never downloaded weights):
``torchvision.models.resnet50(weights=None)``, ``transformers.BertForMaskedLM(BertConfig())``
and ``transformers.GPT2LMHeadModel(GPT2Config())``. Without those libraries, pure-torch
definitions below stand in; they have the same parameter names, shapes and registration order
as the library models (so gradient sizes and their order, which is what DDP bucketing and the
simulator care about, are the same), though not the same numerics.

``tiny=True`` always uses the pure-torch definitions at toy sizes so CPU tests run in seconds.
This module imports torch at import time: import it only from runner entry points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn

from simulator.core.errors import InputError

MODELS = ("resnet50", "bert-base", "gpt2", "mlp")

Batch = dict[str, torch.Tensor]


@dataclass(frozen=True)
class Workload:
    """A model with what it takes to train it on synthetic data.

    ``make_batch(batch_size, device, generator)`` returns the inputs; ``loss(model, batch)`` runs
    the forward pass and returns a scalar loss. ``source`` says which definition was used:
    ``"torchvision"``, ``"transformers"`` or ``"gpunetsim"`` (this module's own).
    """

    name: str
    model: nn.Module
    make_batch: Callable[[int, torch.device, torch.Generator | None], Batch]
    loss: Callable[[nn.Module, Batch], torch.Tensor]
    source: str


# ------------------------------------------------------------------ ResNet (torchvision layout)


class Bottleneck(nn.Module):
    """torchvision's ResNet v1.5 bottleneck (stride on the 3x3 conv)."""

    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1,
                 downsample: nn.Module | None = None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision's ResNet with Bottleneck blocks; ``width=64, layers=(3,4,6,3)`` is resnet50."""

    def __init__(self, layers: tuple[int, ...] = (3, 4, 6, 3), width: int = 64,
                 num_classes: int = 1000) -> None:
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._make_layer(width, layers[0], 1)
        self.layer2 = self._make_layer(width * 2, layers[1], 2)
        self.layer3 = self._make_layer(width * 4, layers[2], 2)
        self.layer4 = self._make_layer(width * 8, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * Bottleneck.expansion, num_classes)

    def _make_layer(self, planes: int, blocks: int, stride: int) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * Bottleneck.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * Bottleneck.expansion, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * Bottleneck.expansion))
        blocks_list = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * Bottleneck.expansion
        blocks_list += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*blocks_list)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# ------------------------------------------------------------------ BERT (transformers layout)


@dataclass(frozen=True)
class BertSizes:
    """BERT hyper-parameters; the defaults are bert-base-uncased."""

    vocab_size: int = 30522
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    intermediate: int = 3072
    max_positions: int = 512
    type_vocab: int = 2
    dropout: float = 0.1


class _Module(nn.Module):
    """A bare container, so attribute names reproduce the library's parameter names."""


class BertSelfAttention(nn.Module):
    def __init__(self, c: BertSizes) -> None:
        super().__init__()
        self.heads = c.heads
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)
        self.dropout_p = c.dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, s, self.heads, h // self.heads).transpose(1, 2)
        out = F.scaled_dot_product_attention(split(self.query(x)), split(self.key(x)),
                                             split(self.value(x)),
                                             dropout_p=self.dropout_p if self.training else 0.0)
        return out.transpose(1, 2).reshape(b, s, h)


class BertLayer(nn.Module):
    def __init__(self, c: BertSizes) -> None:
        super().__init__()
        self.attention = _Module()
        self.attention.self = BertSelfAttention(c)
        self.attention.output = _Module()
        self.attention.output.dense = nn.Linear(c.hidden, c.hidden)
        self.attention.output.LayerNorm = nn.LayerNorm(c.hidden, eps=1e-12)
        self.intermediate = _Module()
        self.intermediate.dense = nn.Linear(c.hidden, c.intermediate)
        self.output = _Module()
        self.output.dense = nn.Linear(c.intermediate, c.hidden)
        self.output.LayerNorm = nn.LayerNorm(c.hidden, eps=1e-12)
        self.drop = nn.Dropout(c.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.attention
        x = a.output.LayerNorm(x + self.drop(a.output.dense(a.self(x))))
        y = self.output.dense(F.gelu(self.intermediate.dense(x)))
        return self.output.LayerNorm(x + self.drop(y))


class BertForMaskedLM(nn.Module):
    """transformers' BertForMaskedLM parameter layout (no pooler; decoder tied to embeddings).

    ``forward(input_ids, labels)`` returns the masked-LM cross-entropy loss.
    """

    def __init__(self, c: BertSizes = BertSizes()) -> None:
        super().__init__()
        self.bert = _Module()
        emb = self.bert.embeddings = _Module()
        emb.word_embeddings = nn.Embedding(c.vocab_size, c.hidden)
        emb.position_embeddings = nn.Embedding(c.max_positions, c.hidden)
        emb.token_type_embeddings = nn.Embedding(c.type_vocab, c.hidden)
        emb.LayerNorm = nn.LayerNorm(c.hidden, eps=1e-12)
        emb.dropout = nn.Dropout(c.dropout)
        self.bert.encoder = _Module()
        self.bert.encoder.layer = nn.ModuleList(BertLayer(c) for _ in range(c.layers))
        self.cls = _Module()
        pred = self.cls.predictions = _Module()
        pred.transform = _Module()
        pred.transform.dense = nn.Linear(c.hidden, c.hidden)
        pred.transform.LayerNorm = nn.LayerNorm(c.hidden, eps=1e-12)
        pred.decoder = nn.Linear(c.hidden, c.vocab_size, bias=False)
        pred.bias = nn.Parameter(torch.zeros(c.vocab_size))
        pred.decoder.weight = emb.word_embeddings.weight
        pred.decoder.bias = pred.bias

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        emb = self.bert.embeddings
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = (emb.word_embeddings(input_ids) + emb.position_embeddings(pos)[None]
             + emb.token_type_embeddings(torch.zeros_like(input_ids)))
        x = emb.dropout(emb.LayerNorm(x))
        for layer in self.bert.encoder.layer:
            x = layer(x)
        pred = self.cls.predictions
        x = pred.transform.LayerNorm(F.gelu(pred.transform.dense(x)))
        logits = pred.decoder(x)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), labels.view(-1))


# ------------------------------------------------------------------ GPT-2 (transformers layout)


@dataclass(frozen=True)
class GPT2Sizes:
    """GPT-2 hyper-parameters; the defaults are gpt2 (small, 124M)."""

    vocab_size: int = 50257
    n_positions: int = 1024
    n_embd: int = 768
    n_layer: int = 12
    n_head: int = 12
    dropout: float = 0.1


class Conv1D(nn.Module):
    """transformers' Conv1D: a linear layer whose weight is stored (in, out)."""

    def __init__(self, nf: int, nx: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(
            *x.shape[:-1], self.weight.shape[1])


class GPT2Block(nn.Module):
    def __init__(self, c: GPT2Sizes) -> None:
        super().__init__()
        self.n_head, self.dropout_p = c.n_head, c.dropout
        self.ln_1 = nn.LayerNorm(c.n_embd)
        self.attn = _Module()
        self.attn.c_attn = Conv1D(3 * c.n_embd, c.n_embd)
        self.attn.c_proj = Conv1D(c.n_embd, c.n_embd)
        self.ln_2 = nn.LayerNorm(c.n_embd)
        self.mlp = _Module()
        self.mlp.c_fc = Conv1D(4 * c.n_embd, c.n_embd)
        self.mlp.c_proj = Conv1D(c.n_embd, 4 * c.n_embd)
        self.drop = nn.Dropout(c.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(h, dim=2)

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, s, self.n_head, h // self.n_head).transpose(1, 2)
        a = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True,
                                           dropout_p=self.dropout_p if self.training else 0.0)
        x = x + self.drop(self.attn.c_proj(a.transpose(1, 2).reshape(b, s, h)))
        return x + self.drop(self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)),
                                                    approximate="tanh")))


class GPT2LMHeadModel(nn.Module):
    """transformers' GPT2LMHeadModel parameter layout (lm_head tied to wte).

    ``forward(input_ids, labels)`` returns the next-token cross-entropy loss.
    """

    def __init__(self, c: GPT2Sizes = GPT2Sizes()) -> None:
        super().__init__()
        self.transformer = _Module()
        t = self.transformer
        t.wte = nn.Embedding(c.vocab_size, c.n_embd)
        t.wpe = nn.Embedding(c.n_positions, c.n_embd)
        t.drop = nn.Dropout(c.dropout)
        t.h = nn.ModuleList(GPT2Block(c) for _ in range(c.n_layer))
        t.ln_f = nn.LayerNorm(c.n_embd)
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.lm_head.weight = t.wte.weight

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        t = self.transformer
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = t.drop(t.wte(input_ids) + t.wpe(pos)[None])
        for block in t.h:
            x = block(x)
        logits = self.lm_head(t.ln_f(x))[:, :-1]
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                               labels[:, 1:].reshape(-1))


# ------------------------------------------------------------------ MLP


def mlp(width: int = 4096, layers: int = 8) -> nn.Sequential:
    """``layers`` Linear(width, width) layers with ReLU between them (input ``width``)."""
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(nn.Linear(width, width))
        if i < layers - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods)


# ------------------------------------------------------------------ workloads


def _token_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    out: Any = model(input_ids=batch["input_ids"], labels=batch["labels"])
    return out.loss if hasattr(out, "loss") else out


def _token_batch(vocab: int, seq: int) -> Callable[[int, torch.device, torch.Generator | None], Batch]:
    def make(batch_size: int, device: torch.device, gen: torch.Generator | None = None) -> Batch:
        ids = torch.randint(0, vocab, (batch_size, seq), generator=gen).to(device)
        return {"input_ids": ids, "labels": ids.clone()}
    return make


def _image_batch(size: int, classes: int) -> Callable[[int, torch.device, torch.Generator | None], Batch]:
    def make(batch_size: int, device: torch.device, gen: torch.Generator | None = None) -> Batch:
        return {"x": torch.randn(batch_size, 3, size, size, generator=gen).to(device),
                "y": torch.randint(0, classes, (batch_size,), generator=gen).to(device)}
    return make


def _vector_batch(width: int) -> Callable[[int, torch.device, torch.Generator | None], Batch]:
    def make(batch_size: int, device: torch.device, gen: torch.Generator | None = None) -> Batch:
        return {"x": torch.randn(batch_size, width, generator=gen).to(device),
                "y": torch.randn(batch_size, width, generator=gen).to(device)}
    return make


def _classify_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    return F.cross_entropy(model(batch["x"]).float(), batch["y"])


def _regress_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    return F.mse_loss(model(batch["x"]).float(), batch["y"])


def _resnet50(tiny: bool, use_libraries: bool) -> Workload:
    if tiny:
        return Workload("resnet50", ResNet(width=8, num_classes=10), _image_batch(32, 10),
                        _classify_loss, "gpunetsim")
    model, source = None, "gpunetsim"
    if use_libraries:
        try:
            import torchvision
            model, source = torchvision.models.resnet50(weights=None), "torchvision"
        except Exception:  # noqa: BLE001 - missing or broken torchvision: use our own
            model = None
    return Workload("resnet50", model or ResNet(), _image_batch(224, 1000), _classify_loss,
                    source)


def _bert(tiny: bool, use_libraries: bool, seq: int = 128) -> Workload:
    if tiny:
        c = BertSizes(vocab_size=512, hidden=32, layers=2, heads=2, intermediate=64,
                      max_positions=64)
        return Workload("bert-base", BertForMaskedLM(c), _token_batch(512, 16), _token_loss,
                        "gpunetsim")
    if use_libraries:
        try:
            from transformers import BertConfig
            from transformers import BertForMaskedLM as HFBert
            return Workload("bert-base", HFBert(BertConfig()), _token_batch(30522, seq),
                            _token_loss, "transformers")
        except Exception:  # noqa: BLE001 - missing or broken transformers: use our own
            pass
    return Workload("bert-base", BertForMaskedLM(), _token_batch(30522, seq), _token_loss,
                    "gpunetsim")


def _gpt2(tiny: bool, use_libraries: bool, seq: int = 512) -> Workload:
    if tiny:
        c = GPT2Sizes(vocab_size=512, n_positions=64, n_embd=32, n_layer=2, n_head=2)
        return Workload("gpt2", GPT2LMHeadModel(c), _token_batch(512, 16), _token_loss,
                        "gpunetsim")
    if use_libraries:
        try:
            from transformers import GPT2Config
            from transformers import GPT2LMHeadModel as HFGPT2
            return Workload("gpt2", HFGPT2(GPT2Config()), _token_batch(50257, seq), _token_loss,
                            "transformers")
        except Exception:  # noqa: BLE001 - missing or broken transformers: use our own
            pass
    return Workload("gpt2", GPT2LMHeadModel(), _token_batch(50257, seq), _token_loss, "gpunetsim")


def build_workload(name: str, tiny: bool = False, use_libraries: bool = True,
                   seed: int = 0) -> Workload:
    """The named workload, with parameters initialised from ``seed`` (same on every rank)."""
    torch.manual_seed(seed)
    if name == "resnet50":
        return _resnet50(tiny, use_libraries)
    if name == "bert-base":
        return _bert(tiny, use_libraries)
    if name == "gpt2":
        return _gpt2(tiny, use_libraries)
    if name == "mlp":
        width = 64 if tiny else 4096
        return Workload("mlp", mlp(width), _vector_batch(width), _regress_loss, "gpunetsim")
    raise InputError(f"unknown model; choose from {', '.join(MODELS)}", field="model", value=name)


def grad_bytes(model: nn.Module) -> int:
    """Bytes of all gradients (trainable parameters, shared ones once), as DDP all-reduces them."""
    return sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)


def param_count(model: nn.Module) -> int:
    """Number of trainable parameters, shared ones counted once."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


__all__ = ["MODELS", "Workload", "build_workload", "grad_bytes", "param_count", "ResNet",
           "BertForMaskedLM", "GPT2LMHeadModel", "mlp"]
