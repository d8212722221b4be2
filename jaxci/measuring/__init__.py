"""Libraries of the measuring commands that run JAX in this process, outside asv: `profile` (device-busy time
and launch gaps of the pathological kernels, from a jax.profiler trace). Never fed into asv's history.
"""
