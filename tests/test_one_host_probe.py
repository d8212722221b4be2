"""One host factor, one function (issue 81 item 4): the pure-Python prediction of `jaxci predict`, the audit's host
factor and the report's twin check all read a family's host probe through jaxci.analysis.host_speed.family_probe,
so every family the audit prices is priced by the command too, and two CPUs whose probes differ are told apart."""

from __future__ import annotations

import pytest

from jaxci.analysis.host_speed import family_probe
from jaxci.audit.judging import host
from jaxci.audit.runner.host_probe import given
from jaxci.catalogue import load_catalogue
from jaxci.commands import predict as predict_cmd
from jaxci.evidence.inputs import reference
from jaxci.policy.builds import cpu_twins
from tests.committed import committed
from tests.modelutil import runner_model

N = 10_000_000
RUNNERS = [name for name, entry in load_catalogue().items() if not entry.is_lab]


@pytest.fixture(scope="module")
def model():
    return runner_model(committed(), published=reference())


@pytest.mark.parametrize("family", RUNNERS)
def test_the_pure_python_prediction_is_the_audit_s_probe(family, model):
    probe = family_probe(reference(), family)
    if probe is None:
        pytest.skip(f"{family}: no sourced CPU model or score: no probe, said by the audit and the command alike")
    p = model.predict(family, "pure_python", N, "float64", "cpu")
    assert p, p.reason
    assert p.seconds == pytest.approx(probe.value.mid * N / probe.n)
    assert (p.low, p.high) == pytest.approx((probe.value.low * N / probe.n, probe.value.high * N / probe.n))
    here = given(0.1, n=1_000_000)   # a host at 0.1 s per 1M: h = the same probe over 1.0 s at 10M
    h = host.factor(family, reference(), here)
    assert h.value == pytest.approx(probe.value.mid * N / probe.n / (0.1 * N / 1e6))


def test_every_family_the_audit_prices_the_command_prices(capsys):
    for family in ("g4dn.xlarge", "g5.2xlarge", "g6.xlarge", "g6e.xlarge", "c7i.4xlarge"):
        assert predict_cmd.main(["--family", family, "--kernel", "pure_python", "--device", "cpu",
                                 "--n", str(N), "--results", str(committed())]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert "cannot predict" not in out and "host probe" in out


def test_two_cpus_whose_probes_differ_are_not_twins(model):
    cat = load_catalogue(include_lab=True)
    c7i, g6 = (family_probe(reference(), f) for f in ("c7i.2xlarge", "g6.2xlarge"))
    assert c7i is not None and g6 is not None and abs(c7i.value.mid / g6.value.mid - 1) > 0.02
    assert "g6.2xlarge" not in cpu_twins(model, cat, "c7i.2xlarge")
    assert "c7i.2xlarge" not in cpu_twins(model, cat, "g6.2xlarge")
