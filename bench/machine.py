"""The machine line every bench prints with its figures: a figure means nothing without it.

``describe`` names the device (the GPU's name on CUDA), the dtype, torch's version, the CPU
model and the cores this process may use, plus the load average, since the development
machines are shared and a loaded machine's figures are not comparable with an idle one's.
"""

from __future__ import annotations

import os
import platform


def cpu_model() -> str:
    """The CPU's marketing name (``/proc/cpuinfo``'s "model name"), else what platform says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def describe(device: str, dtype: str) -> str:
    """``MACHINE device=... dtype=... torch=... cpu="..." cores=N load=a/b/c``, one line."""
    import torch

    name = device
    if device.startswith("cuda") and torch.cuda.is_available():
        name = f"{device} ({torch.cuda.get_device_name(torch.device(device))})"
    try:
        load = "/".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        load = "n/a"
    return (
        f'MACHINE device={name} dtype={dtype} torch={torch.__version__} cpu="{cpu_model()}" '
        f"cores={usable_cores()} load={load}"
    )
