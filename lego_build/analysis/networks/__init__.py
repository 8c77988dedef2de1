"""Built-in networks from published layer shapes; each module cites its source.

:data:`NETWORKS` maps a preset name to ``"module:function"``; the function takes
``(batch, bits)`` and returns the network's layers in execution order.
"""
from __future__ import annotations

import importlib

from lego_build.ir.workload import Layer

NETWORKS: dict[str, str] = {
    "resnet18": "resnet:resnet18",
    "resnet50": "resnet:resnet50",
    "mobilenetv2": "mobilenet:mobilenetv2",
    "efficientnetv2": "efficientnet:efficientnetv2_s",
    "alexnet": "alexnet:alexnet",
    "vgg16": "vgg:vgg16",
    "inceptionv3": "inception:inceptionv3",
    "squeezenet": "squeezenet:squeezenet",
    "lenet": "lenet:lenet",
    "bert": "transformers:bert",
    "gpt2": "transformers:gpt2",
    "llama7b": "transformers:llama7b",
    "deepbench": "deepbench:deepbench",
    "coatnet": "coatnet:coatnet0",
    "ddpm": "ddpm:ddpm_cifar10",
    "stable_diffusion": "sd_unet:sd_unet",
}


def network(name: str, batch: int = 1, bits: int = 8) -> tuple[Layer, ...]:
    """Layers of a built-in network; ``KeyError`` for an unknown name."""
    module, func = NETWORKS[name].split(":")
    return tuple(getattr(importlib.import_module(f"{__name__}.{module}"), func)(batch, bits))


def names() -> list[str]:
    return sorted(NETWORKS)
