"""dispatch: per-call overhead of a tiny jitted op, and host<->device transfers of 1 MB and 100 MB.

The dispatch time is the floor under every loop iteration on a device; the transfer times are what a
lecture pays each time it moves data between NumPy and JAX.
"""

from benchmarks.common import (
    DEVICES,
    DTYPES,
    ColdStart,
    CompileSplit,
    WarmTime,
    place,
    skip_unless_runnable,
    start_jax,
    track_scale,  # noqa: F401  (a run fact: the scale this suite ran at)
)

SIZES_MB = [1, 100]
CI_MAX_MB = 1


def _tiny(dtype):
    import numpy as np

    from benchmarks.kernels import dispatch

    return dispatch.tiny, (np.asarray(1.0, dtype=dtype),)


class TinyOp(WarmTime):
    params = [DTYPES, DEVICES]
    param_names = ["dtype", "device"]

    def build(self, dtype):
        return _tiny(dtype)


class Transfer:
    """h2d: device_put of a host array; d2h: device_get of a device array (float32 payload).

    A jax.Array keeps its host copy after the first device_get, so every sample is one call on a
    freshly placed array: number = 1, no warm-up calls, and asv reruns setup before each sample.
    """

    number = 1
    warmup_time = 0
    repeat = (5, 20, 20.0)
    params = [["h2d", "d2h"], SIZES_MB, DEVICES]
    param_names = ["direction", "megabytes", "device"]
    timeout = 120

    def setup(self, direction, megabytes, device):
        skip_unless_runnable(device, large=megabytes > CI_MAX_MB)
        from benchmarks.kernels import dispatch

        self.jax, self.device = start_jax(device, "float32")
        self.host = dispatch.payload(megabytes)
        self.on_device = place(self.jax, self.device, self.host)

    def time_transfer(self, direction, megabytes, device):
        if direction == "h2d":
            self.jax.device_put(self.host, self.device).block_until_ready()
        else:
            self.jax.device_get(self.on_device)


class DispatchCompile(CompileSplit):
    params = [DTYPES, DEVICES]
    param_names = ["dtype", "device"]

    def build(self, dtype):
        return _tiny(dtype)


class DispatchColdStart(ColdStart):
    params = DispatchCompile.params
    param_names = DispatchCompile.param_names
    build = DispatchCompile.build
