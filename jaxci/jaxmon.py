"""Compile seconds and cache events from `jax.monitoring`, for benchmarks, notebooks and profiles.

JAX reports each compilation as three duration events (tracing, lowering to MLIR, backend compile) and
persistent-cache use as plain events. A `CompileClock` listens to both and keeps running totals; listeners
accept **kwargs because newer JAX passes extra keywords (fun_name=...).
"""

from __future__ import annotations

STAGES = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "backend",
}
CACHE_EVENTS = {
    "/jax/compilation_cache/cache_hits": "cache_hits",
    "/jax/compilation_cache/cache_misses": "cache_misses",
    "/jax/compilation_cache/compile_requests_use_cache": "cache_requests",
}


class CompileClock:
    """Running totals of compile seconds per stage, compilations, and persistent-cache events."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.seconds = {stage: 0.0 for stage in STAGES.values()}
        self.compilations = 0
        self.events = {name: 0 for name in CACHE_EVENTS.values()}

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def snapshot(self) -> dict:
        return {**self.seconds, "compile": self.total, "compilations": self.compilations, **self.events}

    def on_duration(self, event: str, duration_secs: float, **kwargs) -> None:
        stage = STAGES.get(event)
        if stage is not None:
            self.seconds[stage] += duration_secs
            if stage == "backend":
                self.compilations += 1

    def on_event(self, event: str, **kwargs) -> None:
        name = CACHE_EVENTS.get(event)
        if name is not None:
            self.events[name] += 1

    def install(self) -> CompileClock:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(self.on_duration)
        jax.monitoring.register_event_listener(self.on_event)
        return self
