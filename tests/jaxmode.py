"""x64 as the benchmarks set it: per dtype, so float32 kernels run with x64 off (x64 is process-wide).

The suites call benchmarks.common.start_jax, which sets jax_enable_x64 = (dtype == "float64") in each fresh
process; a test turning x64 on for the whole session would run float32 kernels as float64."""

from contextlib import contextmanager


@contextmanager
def x64_for(dtype: str):
    import jax

    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", dtype == "float64")
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)
