"""The suite's shared rules: skips decided before JAX, params independent of the environment."""

import importlib
import pkgutil

import pytest

import benchmarks
from benchmarks import common


def test_scale_default_full_and_invalid(monkeypatch):
    monkeypatch.delenv("JAXCI_SCALE", raising=False)
    assert common.scale() == "full"
    monkeypatch.setenv("JAXCI_SCALE", "huge")
    with pytest.raises(ValueError, match="JAXCI_SCALE"):
        common.scale()


def test_large_case_skipped_only_at_ci_scale(monkeypatch):
    monkeypatch.setenv("JAXCI_SCALE", "ci")
    with pytest.raises(NotImplementedError, match="large"):
        common.skip_unless_runnable("cpu", large=True)
    common.skip_unless_runnable("cpu", large=False)
    monkeypatch.setenv("JAXCI_SCALE", "full")
    common.skip_unless_runnable("cpu", large=True)


def test_gpu_skipped_without_gpu(monkeypatch):
    monkeypatch.delenv("JAXCI_ACCELERATOR", raising=False)
    monkeypatch.setattr("jaxci.nvml.gpu_present", lambda: False)
    monkeypatch.setattr("jaxci.accel.tpu_chips", lambda: 0)
    monkeypatch.setattr("jaxci.accel.Path.exists", lambda self: False)
    with pytest.raises(NotImplementedError, match="no accelerator on this machine: gpu combination skipped"):
        common.skip_unless_runnable("gpu")
    with pytest.raises(NotImplementedError, match="no accelerator on this machine: tpu combination skipped"):
        common.skip_unless_runnable("tpu")


def test_unknown_device_is_an_error():
    with pytest.raises(ValueError, match="device param"):
        common.skip_unless_runnable("npu")


def _suite_classes():
    for info in pkgutil.iter_modules(benchmarks.__path__):
        if info.name in ("common",) or info.ispkg:
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and obj.__module__ == module.__name__ and getattr(obj, "params", None):
                yield obj


def test_params_do_not_depend_on_the_environment(monkeypatch):
    """Importing the suites at either scale yields identical param lists (history stays comparable)."""
    seen = {}
    for value in ("ci", "full"):
        monkeypatch.setenv("JAXCI_SCALE", value)
        seen[value] = {cls.__qualname__: repr(cls.params) for cls in _suite_classes()}
    assert seen["ci"] == seen["full"] and seen["ci"]


def test_every_suite_class_has_a_timeout_and_device_last():
    for cls in _suite_classes():
        assert getattr(cls, "timeout", None), f"{cls.__qualname__} has no asv timeout"
        names = list(cls.param_names)
        if "device" in names:
            assert names[-1] == "device", cls.__qualname__
