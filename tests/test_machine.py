"""Machine registration: catalogue lookup, unknown names refused, the no-GPU path, GPU facts recorded."""

import json
import subprocess

import pytest

from jaxci.catalogue import CatalogueError, get_machine, load_catalogue
from jaxci.commands import machine as machine_cmd
from jaxci.machines import register as machine
from jaxci.nvml import GpuFacts, driver_warning
from tests.suiteutil import python

T4 = GpuFacts(0, "Tesla T4", 15360, "575.57.08", "7.5")


def test_catalogue_has_the_required_families_with_sources():
    cat = load_catalogue()
    for name in ["g4dn.2xlarge", "g5.2xlarge", "g6.2xlarge", "c7i.2xlarge", "ubuntu-latest"]:
        entry = cat[name]
        price = entry.figure("price_per_hour")
        assert price.value is not None and price.source
        for figure in entry.figures.values():
            assert (figure.value is not None and figure.source) or (figure.value is None and figure.reason)
    assert cat["g4dn.2xlarge"].value("gpu_fp64_tflops") == 0.25
    assert cat["c7i.2xlarge"].value("cpu_fp64_gflops") is None  # no vendor source: null with a reason
    assert not cat["c7i.2xlarge"].has_gpu and cat["g6.2xlarge"].has_gpu


def test_runs_on_label():
    t4 = get_machine("g4dn.2xlarge")
    assert t4.runs_on_label("42") == "runs-on=42/family=g4dn.2xlarge/image=ubuntu24-gpu-x64/spot=false"
    assert get_machine("ubuntu-latest").runs_on_label("42") == "ubuntu-latest"


def test_unknown_name_is_refused_with_the_known_names(tmp_path, capsys):
    assert machine_cmd.main(["g9.mega", "--machine-file", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "unknown machine 'g9.mega'" in err and "g4dn.2xlarge" in err
    assert not (tmp_path / "m.json").exists()
    with pytest.raises(CatalogueError, match="g4dn.2xlarge"):
        get_machine("g9.mega")


def test_cpu_family_registers_without_gpu(tmp_path):
    path = tmp_path / "m.json"
    info = machine.register("c7i.2xlarge", machine_file=str(path), gpus=())
    saved = json.loads(path.read_text())["c7i.2xlarge"]
    assert saved["gpu"] == "no GPU" == info["gpu"]
    assert saved["jaxci_kind"] == "catalogue" and saved["jaxci_backend"] == "cpu"
    assert saved["machine"] == "c7i.2xlarge" and int(saved["num_cpu"]) >= 1


def test_gpu_family_without_gpu_is_refused(tmp_path):
    with pytest.raises(machine.RegistrationError, match="NVML sees no GPU"):
        machine.register("g4dn.2xlarge", machine_file=str(tmp_path / "m.json"), gpus=())


def test_gpu_facts_recorded_and_old_driver_warned(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("JAXCI_BACKEND", raising=False)
    info = machine.register("g4dn.2xlarge", machine_file=str(tmp_path / "m.json"), gpus=(T4,))
    assert info["gpu"] == "1 x Tesla T4" and info["gpu_memory_mib"] == "15360"
    assert info["jaxci_backend"] == "cuda13" and info["gpu_driver"] == "575.57.08"
    assert "older than 580" in capsys.readouterr().err
    assert driver_warning((GpuFacts(0, "L4", 23034, "580.65.06", "8.9"),)) is None


def test_local_machine_kept_apart_from_catalogue(tmp_path):
    with pytest.raises(machine.RegistrationError, match="catalogue runner family"):
        machine.register("g4dn.2xlarge", local=True, machine_file=str(tmp_path / "m.json"), gpus=())
    info = machine.register("local-laptop", local=True, machine_file=str(tmp_path / "m.json"), gpus=())
    assert info["jaxci_kind"] == "local"


def test_local_results_are_git_ignored_and_catalogue_results_are_not():
    def ignored(path):
        return subprocess.run(["git", "check-ignore", "-q", path]).returncode == 0

    assert ignored("results/local-laptop/abc.json")
    assert ignored("results/ci-test/abc.json")
    for name in load_catalogue(include_lab=True):  # runner families and lab machines are committed
        assert not ignored(f"results/{name}/abc.json"), name
    assert ignored(".device/wheels/asv-0.6.6.whl")  # wheels prepared for a lent GPU machine


H200 = GpuFacts(0, "NVIDIA H200", 143771, "580.159.03", "9.0")


def test_lab_machine_registers_as_lab_and_needs_its_gpu(tmp_path):
    info = machine.register("lab-h200", machine_file=str(tmp_path / "m.json"), gpus=(H200,))
    assert info["jaxci_kind"] == "lab" and info["gpu"] == "1 x NVIDIA H200"
    with pytest.raises(machine.RegistrationError, match="NVML sees no GPU"):
        machine.register("lab-h200", machine_file=str(tmp_path / "m.json"), gpus=())
    with pytest.raises(machine.RegistrationError, match="catalogue runner family"):  # lab names are taken too
        machine.register("lab-h200", local=True, machine_file=str(tmp_path / "m.json"), gpus=())


@pytest.mark.parametrize("name", ["../x", "/abs", "a/b", ".", "..", "a\nb", "x" * 5000, "-rf", ""])
def test_local_names_stay_one_folder_under_results(tmp_path, name):
    """asv writes results/<name>/: a path, a dot or a newline would put results outside results/."""
    with pytest.raises(machine.RegistrationError, match="a machine name is 1-64 letters"):
        machine.register(name, local=True, machine_file=str(tmp_path / "m.json"), gpus=())
    assert not (tmp_path / "m.json").exists()


def test_cli_refuses_a_bad_local_name_in_one_line(tmp_path):
    proc = python("-m", "jaxci", "machine", "--local", "../x", "--machine-file", str(tmp_path / "m.json"), cwd=None)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "'../x'" in proc.stderr


@pytest.mark.parametrize("value", ["rocm", "../cpu", "CPU", " cpu"])
def test_jaxci_backend_is_checked(monkeypatch, value):
    from jaxci.util.validate import InputError

    monkeypatch.setenv("JAXCI_BACKEND", value)
    with pytest.raises(InputError, match="JAXCI_BACKEND: unknown backend"):
        machine.backend_for(())


def test_default_local_name_is_a_valid_name(monkeypatch):
    monkeypatch.setattr(machine.socket, "gethostname", lambda: "my host/with\nodd" + "x" * 100)
    name = machine.default_local_name()
    assert name.startswith("local-my-host-with-odd") and len(name) == 64
    from jaxci.util.validate import machine_name

    assert machine_name("name", name) == name


ZEN4 = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nflags\t\t: fpu avx2 avx512f\n\nprocessor : 1\n"
ZEN3 = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nflags\t\t: fpu avx avx2\n"


def test_a_cpu_signature_names_what_this_host_lacks():
    sig = "AuthenticAMD family 25 model 17 avx512f"
    assert machine.signature_mismatch(sig, machine.cpu_identity(ZEN4)) == []
    assert machine.signature_mismatch(sig, machine.cpu_identity(ZEN3)) == ["model 17 (here 1)",
                                                                           "flag avx512f (absent here)"]
    intel = ZEN4.replace("AuthenticAMD", "GenuineIntel")
    assert machine.signature_mismatch(sig, machine.cpu_identity(intel))[0].startswith("vendor AuthenticAMD")


def test_a_lab_cpu_name_is_refused_on_other_hardware(tmp_path, monkeypatch):
    """Two VMs that both report "AMD EPYC" measured pure Python 2x apart (2026-12-02): one name, one CPU."""
    path, read = tmp_path / "m.json", machine.cpu_identity
    monkeypatch.setattr(machine, "cpu_identity", lambda: read(ZEN3))
    with pytest.raises(machine.RegistrationError, match=r"model 17 \(here 1\).*use --local"):
        machine.register("lab-epyc-2c", machine_file=str(path), gpus=())
    assert not path.exists()
    monkeypatch.setattr(machine, "cpu_identity", lambda: read(ZEN4))
    assert machine.register("lab-epyc-2c", machine_file=str(path), gpus=())["jaxci_kind"] == "lab"
