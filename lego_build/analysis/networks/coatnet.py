"""CoAtNet-0 at 224x224 (ImageNet classifier).

Source of the shapes: Dai, Liu, Le, Tan, "CoAtNet: Marrying Convolution and Attention for
All Data Sizes", NeurIPS 2021, Table 3 (the C-C-T-T layout: stages S0..S4 at 1/2 .. 1/32 of
the input, CoAtNet-0 with L = (2, 2, 3, 5, 2) blocks and D = (64, 96, 192, 384, 768)
channels), Section 3 (Eq. 3, relative attention: ``softmax(Q K^T + w_{i-j})``; Eq. 5, the
down-sampling first block of a stage: ``x <- Proj(Pool(x)) + Module(...)``) and the model
details of its appendix (pre-normalisation, expansion rate 4 in the MBConvs and the FFNs,
attention heads of size 32, GELU, squeeze-and-excitation in the MBConvs). Layer names
follow the paper's stages: ``s<stage>.<block>.<part>``.

* S0, the stem: a 3x3 conv with stride 2 and a 3x3 conv, 64 channels (BN and GELU after
  the first; the second's output is normalised by the next block's pre-norm).
* S1, S2, MBConv (pre-activation): batch norm of the input, 1x1 expansion to 4x the
  block's input channels, BN, GELU, 3x3 depthwise, BN, GELU, squeeze-and-excitation,
  1x1 projection, residual add. The SE squeezes to 0.25 x the block's *input* channels
  (the EfficientNet / torchvision convention of :mod:`.efficientnet`: global pool, fc,
  SiLU, fc, sigmoid, channel-wise product). A stage's first block halves the map: the
  stride 2 sits in the depthwise conv (the MobileNet / EfficientNet placement), and the
  shortcut is ``Proj(Pool(x))``: 2x2 pooling with stride 2, then a 1x1 conv to the new
  width.
* S3, S4, Transformer with relative attention (pre-norm): layer norm, Q, K, V projections
  (fc GEMMs over the tokens), ``Q K^T`` and ``P V`` as batched GEMMs with the heads as the
  batch (head size 32: 12 heads in S3, 24 in S4), the relative-position bias added to
  the logits on the PPU (``add``, one bias per head and key-query pair), softmax, the
  output projection, residual add; then layer norm, FFN (4x, GELU), residual add. The
  stage's first block pools (2x2, stride 2) the normalised input before attention, whose
  Q, K, V projections widen it to the new width, and its shortcut is ``Proj(Pool(x))``.
  The ``1/sqrt(d)`` scale folds into the softmax, as in :mod:`.transformers`.
* The paper leaves the pooling unnamed; 2x2 max pooling is recorded (average pooling
  touches the same elements).
* Head: global average pool, fc 768 -> 1000, softmax.
* Total MACs (convs, projections, attention GEMMs, SE and classifier, batch 1):
  4,224,826,368 at 224x224, 0.6 % above the paper's 4.2 G "FLOPs" (Table 4), read as
  multiply-adds: the Google papers it compares with use "FLOPs" that way (EfficientNetV2-S's
  8.8 B against the 8.37 G MACs of :mod:`.efficientnet`), and 4.2 G two-operation FLOPs
  would leave 2.1 G MACs, half of what the paper's own shapes need. Placing the
  stride in the first 1x1 conv instead (a literal reading of Eq. 5) gives 3,983,981,568
  (5 % below). The conv and fc weights come to 24.1 M (plus 52 K relative-position
  biases and the norms), 3.5 % under Table 4's 25M: the paper leaves the SE and head widths
  open (an SE squeezing the expanded width instead would add 0.6 M weights, no MACs of note).
"""
from __future__ import annotations

from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer

#: Table 3, CoAtNet-0: (block type, blocks L, channels D) of S0 .. S4
STAGES: tuple[tuple[str, int, int], ...] = (
    ("conv", 2, 64),
    ("mbconv", 2, 96),
    ("mbconv", 3, 192),
    ("transformer", 5, 384),
    ("transformer", 2, 768),
)
EXPANSION, SE_RATIO, HEAD_DIM, MLP_RATIO = 4, 0.25, 32, 4


def _shortcut(net: NetBuilder, name: str, x: tuple[int, int, int], out_ch: int) -> None:
    """Eq. 5's ``Proj(Pool(x))``: 2x2 pooling with stride 2, then a 1x1 conv to ``out_ch``."""
    net.shape = x
    net.pool(f"{name}.pool", "maxpool", 2, stride=2)
    net.conv(f"{name}.proj", out_ch, 1)


def _mbconv(net: NetBuilder, name: str, out_ch: int, stride: int) -> None:
    x = net.shape
    hidden = x[0] * EXPANSION
    net.ppu(f"{name}.norm", "batchnorm")
    net.conv(f"{name}.expand", hidden, 1)
    net.ppu(f"{name}.expand_bn", "batchnorm")
    net.ppu(f"{name}.expand_act", "gelu")
    net.conv(f"{name}.dw", hidden, 3, stride=stride, pad=1, groups=hidden)
    net.ppu(f"{name}.dw_bn", "batchnorm")
    net.ppu(f"{name}.dw_act", "gelu")
    net.squeeze_excite(f"{name}.se", int(x[0] * SE_RATIO))
    net.conv(f"{name}.project", out_ch, 1)
    if stride != 1 or x[0] != out_ch:
        _shortcut(net, f"{name}.shortcut", x, out_ch)
    net.add(f"{name}.add")


def _transformer(net: NetBuilder, name: str, out_ch: int, downsample: bool) -> None:
    """Pre-norm relative-attention block; ``downsample``: Eq. 5's pooled first block of a stage."""
    b, x = net.batch, net.shape
    net.ppu(f"{name}.norm1", "layernorm")
    if downsample:
        net.pool(f"{name}.attn.pool", "maxpool", 2, stride=2)
    c_in, h, w = net.shape
    n, heads = h * w, out_ch // HEAD_DIM
    t = b * n
    for proj in ("q", "k", "v"):
        net.matmul(f"{name}.attn.{proj}", t, out_ch, c_in, op="fc")
    net.matmul(f"{name}.attn.qk", n, n, HEAD_DIM, batch=b * heads, op="attention_qk")
    net.ppu(f"{name}.attn.rel_pos_bias", "add", b * heads * n * n)  # w_{i-j} of Eq. 3
    net.ppu(f"{name}.attn.softmax", "softmax", b * heads * n * n)
    net.matmul(f"{name}.attn.av", n, HEAD_DIM, n, batch=b * heads, op="attention_av")
    net.matmul(f"{name}.attn.proj", t, out_ch, out_ch, op="fc")
    if downsample:
        _shortcut(net, f"{name}.shortcut", x, out_ch)
    net.shape = (out_ch, h, w)
    net.add(f"{name}.attn.add")
    net.ppu(f"{name}.norm2", "layernorm")
    net.matmul(f"{name}.mlp.fc1", t, MLP_RATIO * out_ch, out_ch, op="fc")
    net.ppu(f"{name}.mlp.act", "gelu", t * MLP_RATIO * out_ch)
    net.matmul(f"{name}.mlp.fc2", t, out_ch, MLP_RATIO * out_ch, op="fc")
    net.add(f"{name}.mlp.add")


def coatnet0(batch: int, bits: int) -> tuple[Layer, ...]:
    net = NetBuilder("coatnet", batch, bits, (3, 224, 224))
    (_, _, stem), *stages = STAGES
    net.conv("s0.0.conv", stem, 3, stride=2, pad=1)
    net.ppu("s0.0.bn", "batchnorm")
    net.ppu("s0.0.act", "gelu")
    net.conv("s0.1.conv", stem, 3, pad=1)
    for s, (kind, n, ch) in enumerate(stages, start=1):
        for i in range(n):
            if kind == "mbconv":
                _mbconv(net, f"s{s}.{i}", ch, 2 if i == 0 else 1)
            else:
                _transformer(net, f"s{s}.{i}", ch, downsample=i == 0)
    net.global_pool("head.pool", "avgpool")
    net.fc("head.fc", 1000)
    net.ppu("head.softmax", "softmax")
    return tuple(net.layers)
