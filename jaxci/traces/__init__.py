"""jax.profiler traces run in this process, outside asv (named apart from the `measure/` scripts): `profile`
(device-busy time and launch gaps of the pathological kernels, from a jax.profiler trace). Never fed into asv's
history.
"""
