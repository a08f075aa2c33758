"""Where a model runs: the one place a device is chosen for encoders, second readers and training.

``choose_device("auto")`` is ``"cuda"`` when torch sees a GPU, else ``"cpu"``; ``"cpu"``,
``"cuda"``, ``"cuda:<n>"`` and ``"mps"`` are taken as given when torch sees that device (else one
line saying so, before any model loads). Not asking (``None``) means the
``GABARITO_DEVICE`` variable when it is set, else the CPU -- so a machine without a GPU, and every
default, computes exactly what it did before. Each model records the device it ran on in its
provenance.
"""

from __future__ import annotations

import os
import re

from gabarito.errors import GabaritoError

#: The environment variable read when no device is asked for.
ENV = "GABARITO_DEVICE"
#: The forms :func:`choose_device` understands, for messages and ``--device`` help.
DEVICE_FORMS = "auto, cpu, cuda, cuda:<n> or mps"
_FORM = re.compile(r"^(auto|cpu|mps|cuda(:[0-9]+)?)$")


def cuda_available() -> bool:
    """True when torch is installed and sees a CUDA device."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def choose_device(device: str | None = None, *, cpu_only: bool = False) -> str:
    """The device a model runs on (see the module docstring). ``cpu_only`` is for an engine that
    has no GPU path: ``auto`` is then the CPU, and an explicit GPU device an error."""
    asked = os.environ.get(ENV) or "cpu" if device is None else device
    text = asked.strip().lower() if isinstance(asked, str) else ""
    if not _FORM.match(text):
        raise GabaritoError(f"unknown device {asked!r} (expected {DEVICE_FORMS})")
    if text == "auto":
        return "cpu" if cpu_only or not cuda_available() else "cuda"
    if cpu_only and text != "cpu":
        raise GabaritoError(f"this engine runs on the CPU only, not on {asked!r}")
    missing = _absent(text)
    if missing is not None:
        raise GabaritoError(f"device {asked!r}: {missing}; use --device cpu, or auto (the GPU when torch sees one)")
    return text


def _absent(device: str) -> str | None:
    """Why torch cannot run on ``device`` here (a GPU it was not built for or does not see), or
    ``None``: asked before any work, not by torch's own assertion deep inside the first model."""
    if device == "cpu":
        return None
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if device == "mps":
        return None if torch.backends.mps.is_available() else "torch sees no Apple GPU (mps) here"
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = int(device.partition(":")[2] or 0)
    if index < count:
        return None
    if count == 0:
        build = "built without CUDA" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        return f"torch {torch.__version__} ({build}) sees no CUDA device here"
    return f"torch sees {count} CUDA device(s) here (cuda:0 to cuda:{count - 1})"


def add_device_argument(parser) -> None:
    """``--device`` on an argparse parser (default: not asked, see :func:`choose_device`)."""
    parser.add_argument("--device", default=None,
                        help=f"where models run: {DEVICE_FORMS} (auto: the GPU when torch sees one; "
                             f"default: ${ENV}, else cpu)")
