"""The accelerator is whatever JAX has: the one place that decides this machine's accelerator platform (issue 71).

JAX names an accelerator by its platform: "cuda" and "rocm" are GPUs, "tpu" is a TPU. The benchmarks' device param
names the kind of device, never the vendor's runtime: "gpu" (cuda or rocm: the param the committed H200 history
holds) and "tpu"; a TPU is never shown as a gpu. The decision is made without starting a JAX backend (the
benchmarks' forkserver imports this before any fork; a TPU admits one process at a time), from what the machine
shows the process, in the order JAX's own plugin gates look (jax/_src/hardware_utils.py):
- JAXCI_ACCELERATOR (cuda, rocm, tpu or none): an explicit choice wins (a test, or a machine whose devices
  /sys does not show);
- NVML or the NVIDIA driver sees a GPU: cuda (NVML stays the source of GPU facts);
- a Google TPU on the PCI bus: tpu;
- AMD's kernel driver (/dev/kfd): rocm.
The process that then starts JAX checks the platform it got (benchmarks.common.check_started): a wrong guess
fails loudly, it never measures the CPU under an accelerator's name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any  # a run: whatever record its reader holds (a NotebookRun, a run read back)

ACCELERATORS = ("cuda", "rocm", "tpu")
#: the benchmarks' device param for each accelerator platform, and back (gpu: the platform the machine has)
DEVICE_OF = {"cpu": "cpu", "cuda": "gpu", "rocm": "gpu", "tpu": "tpu"}
ACCELERATOR_DEVICES = ("gpu", "tpu")
#: Google's PCI vendor id and the TPU device ids JAX's hardware_utils knows (v3 .. tpu8t)
GOOGLE_PCI_VENDOR = "0x1ae0"
TPU_PCI_DEVICES = {"0x0027", "0x0056", "0x005e", "0x0062", "0x0063", "0x006f", "0x0076", "0x0083", "0x007c"}
SYS_PCI = Path("/sys/bus/pci/devices")


def accelerator_platform() -> str | None:
    """This machine's accelerator as a JAX platform ("cuda", "rocm", "tpu"), or None; starts no backend."""
    chosen = os.environ.get("JAXCI_ACCELERATOR", "").strip().lower()
    if chosen:
        if chosen == "none":
            return None
        if chosen not in ACCELERATORS:
            raise ValueError(f"JAXCI_ACCELERATOR={chosen!r}: expected one of {ACCELERATORS} or 'none'")
        return chosen
    from jaxci.nvml import gpu_present

    if gpu_present():
        return "cuda"
    if tpu_chips():
        return "tpu"
    if Path("/dev/kfd").exists():
        return "rocm"
    return None


def tpu_chips(root: Path | None = None) -> int:
    """How many TPU chips the PCI bus shows (function 0 of a Google device with a TPU id), as JAX counts them."""
    found = 0
    for vendor in (root or SYS_PCI).glob("*/vendor"):
        try:
            if vendor.parent.name.endswith(".0") and vendor.read_text().strip() == GOOGLE_PCI_VENDOR \
                    and (vendor.parent / "device").read_text().strip() in TPU_PCI_DEVICES:
                found += 1
        except OSError:
            continue
    return found


def accelerator_device() -> str | None:
    """The device param ("gpu", "tpu") of this machine's accelerator, or None."""
    platform = accelerator_platform()
    return DEVICE_OF[platform] if platform else None


def platform_for(device: str) -> str:
    """The JAX platform a device param runs on: cpu; gpu is this machine's GPU platform (cuda unless it has rocm);
    tpu."""
    if device == "gpu":
        platform = accelerator_platform()
        return platform if platform in ("cuda", "rocm") else "cuda"
    if device in ("cpu", "tpu"):
        return device
    raise ValueError(f"device {device!r}: expected one of cpu, {', '.join(ACCELERATOR_DEVICES)}")


def missing_reason(device: str) -> str | None:
    """Why an accelerator device param cannot run on this machine (one line), or None when it can."""
    if device == "cpu":
        return None
    have = accelerator_platform()
    if have is not None and DEVICE_OF[have] == device:
        return None
    seen = f"this machine's accelerator is {have}" if have else "no accelerator on this machine"
    return f"{seen}: {device} combination skipped"


def accelerator_run(runs: dict) -> tuple[str | None, Any]:
    """(platform, run) of the accelerator run among an audit's runs keyed by platform (cuda, rocm, tpu; "gpu" in
    old records), or (None, None): the judging reads the accelerator the lecture ran on, whichever it was."""
    for platform in (*ACCELERATORS, "gpu"):
        if runs.get(platform) is not None:
            return platform, runs[platform]
    return None, None


def device_facts(dev) -> dict:
    """What a started JAX device says of itself where NVML has nothing (a TPU, ROCm): platform, kind, memory."""
    facts = {"platform": dev.platform, "device_kind": getattr(dev, "device_kind", "?")}
    try:
        stats = dev.memory_stats() or {}
    except Exception:   # a backend without memory stats (the CPU's raises or returns None)
        stats = {}
    if stats.get("bytes_limit"):
        facts["memory_mib"] = int(stats["bytes_limit"] // 2**20)
    return facts


#: what a backend is known to lack, by (platform, dtype): {JAX primitive: the backend's own words}. A combination
#: whose kernel holds one is n/a with that line before anything is compiled (a cold start is timed in a fresh
#: interpreter, where a failure could only fail the benchmark). Seen on a TPU v5e, JAX 0.10.2 (issue 71).
BACKEND_LACKS = {
    ("tpu", "float64"): {"lu": "UNIMPLEMENTED: Only F32 and C64 types are implemented in LuDecomposition"},
}


def primitives(jaxpr) -> set[str]:
    """Every primitive name in a jaxpr, its sub-jaxprs (scan, cond, pjit, custom rules) included."""
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)   # a ClosedJaxpr holds its Jaxpr
                if hasattr(inner, "eqns"):
                    names |= primitives(inner)
    return names


def lacking_reason(platform: str, dtype: str, names: set[str]) -> str | None:
    """One line naming what the backend lacks among a kernel's primitives, or None."""
    lacks = BACKEND_LACKS.get((platform, dtype), {})
    found = sorted(n for n in names if n in lacks)
    if not found:
        return None
    return f"{platform} backend lacks {found[0]} in {dtype}: {lacks[found[0]]}"


def unimplemented_reason(exc: BaseException, platform: str, dtype: str) -> str | None:
    """One line for an XLA UNIMPLEMENTED error (a backend without an op or dtype), or None for any other error."""
    text = str(exc)
    at = text.find("UNIMPLEMENTED")
    if at < 0:
        return None
    return f"{platform} backend lacks this kernel in {dtype}: {text[at:].splitlines()[0][:300]}"
