"""A representative subset of Baidu DeepBench's inference kernels.

Source of the shapes: Baidu Research, DeepBench (https://github.com/baidu-research/DeepBench),
the inference kernel tables ``code/kernels/gemm_problems.h`` (``inference_server_set``,
``inference_device_set``: ``m, n, k``) and ``code/kernels/conv_problems.h``
(``inference_server_set``: ``w, h, c, n, k, filter_w, filter_h, pad_w, pad_h,
wstride, hstride``), also listed in the README's inference results.

Six GEMMs ``C[m, n] = A[m, k] B[k, n]`` (speech GEMMs with ``n`` = 700 or 1500
time steps x batch, and the batch 1/2/4 GEMMs of recurrent layers; DeepBench's ``n``
is the batch dimension) and six convolutions (the DeepSpeech front end on 700x161
spectrograms, ResNet's 7x7 stem, a 1x1 at 112x112x64, a GoogLeNet-style 5x5 at
28x28x192, a VGG-style 3x3 at 7x7x512). The kernels
are independent: no activations chain between them and no PPU ops are listed.

At ``batch`` 1 the shapes are exactly DeepBench's; a larger ``batch`` multiplies
DeepBench's batch dimension (GEMM ``n``, conv ``n``).
"""
from __future__ import annotations

from lego_build.analysis.kernels import conv2d, gemm
from lego_build.ir.workload import Layer

#: gemm_problems.h inference sets: (m, n, k)
GEMMS: tuple[tuple[int, int, int], ...] = (
    (5124, 700, 2048),
    (35, 700, 2048),
    (3072, 1500, 1024),
    (3072, 1, 1024),
    (7680, 2, 2560),
    (6144, 4, 2048),
)

#: conv_problems.h inference_server_set: (w, h, c, n, k, filter_w, filter_h, pad_w, pad_h, wstride, hstride)
CONVS: tuple[tuple[int, ...], ...] = (
    (700, 161, 1, 1, 32, 20, 5, 0, 0, 2, 2),
    (341, 79, 32, 1, 32, 10, 5, 0, 0, 2, 2),
    (224, 224, 3, 1, 64, 7, 7, 3, 3, 2, 2),
    (112, 112, 64, 1, 64, 1, 1, 0, 0, 1, 1),
    (28, 28, 192, 1, 32, 5, 5, 2, 2, 1, 1),
    (7, 7, 512, 1, 512, 3, 3, 1, 1, 1, 1),
)


def deepbench(batch: int, bits: int) -> tuple[Layer, ...]:
    layers = [Layer(f"gemm_{m}x{n}x{k}", "gemm", gemm(m, n * batch, k, bits=bits)) for m, n, k in GEMMS]
    for w, h, c, n, k, s, r, pw, ph, sw, sh in CONVS:
        kernel = conv2d(n * batch, c, k, h, w, r, s, (sh, sw), (ph, pw, ph, pw), bits=bits)
        layers.append(Layer(f"conv_{w}x{h}x{c}_k{k}_{s}x{r}_s{sw}", "conv2d", kernel))
    return tuple(layers)
