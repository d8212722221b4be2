"""measure/offline_data.py: a lecture's FRED download served from local copies in the measuring kernel (this host
has no network). Checked: the frame is what pandas_datareader's FRED reader returns (a column per series, outer-
joined, cut to the dates), a missing copy names its file, other sources pass through, the patch lands whoever
imports the module first, the kernelspec rewrite, and a real Jupyter kernel serving a fixture lecture's read.
The series are our own made-up numbers."""

import importlib.util
import json
import os
import subprocess
import sys
import types
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


_spec = importlib.util.spec_from_file_location("offline_data", REPO / "measure" / "offline_data.py")
od = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(od)


@pytest.fixture
def data(tmp_path):
    fred = tmp_path / "data" / "fred"
    fred.mkdir(parents=True)
    (fred / "AAA.csv").write_text("observation_date,AAA\n1960-01-01,1.0\n1960-04-01,2.0\n1960-07-01,3.0\n"
                                  "1960-10-01,.\n", encoding="utf-8")
    (fred / "BBB.csv").write_text("DATE,BBB\n1960-04-01,20\n1960-07-01,30\n1961-01-01,50\n", encoding="utf-8")
    return tmp_path / "data"


def test_a_fred_read_is_one_column_per_series_outer_joined_and_cut_to_the_dates(data):
    frame = od.fred_frame(data, ["AAA", "BBB"], "1960-04-01", "1960-12-31")
    assert list(frame.columns) == ["AAA", "BBB"]
    assert frame.index.name == "DATE"
    assert [d.strftime("%Y-%m-%d") for d in frame.index] == ["1960-04-01", "1960-07-01", "1960-10-01"]
    assert frame["AAA"].tolist()[:2] == [2.0, 3.0] and frame["AAA"].isna().tolist()[2]  # FRED's "." is missing
    assert frame["BBB"].tolist()[:2] == [20.0, 30.0]


def test_each_kernel_records_the_series_it_served(data):
    od.fred_frame(data, "AAA", "1960-01-01", "1961-12-31")
    od.fred_frame(data, ["AAA", "BBB"], "1960-01-01", "1961-12-31")
    served = json.loads(od.served_path(data, os.getpid()).read_text(encoding="utf-8"))
    assert served == ["FRED:AAA", "FRED:BBB"]


def test_a_series_with_no_copy_names_the_file_it_wanted(data):
    with pytest.raises(FileNotFoundError, match=r"FRED series 'ZZZ'.*fred/ZZZ\.csv"):
        od.fred_frame(data, ["AAA", "ZZZ"], "1960-01-01", "1961-01-01")


def test_other_sources_pass_through_to_the_original_reader(data):
    calls = []
    module = types.SimpleNamespace(DataReader=lambda *a, **k: calls.append(a) or "original")
    od.patch_datareader(module, data)
    assert module.DataReader("X", "stooq", None, None) == "original"
    assert calls == [("X", "stooq", None, None)]
    assert module.DataReader("AAA", "fred", "1960-01-01", "1960-12-31")["AAA"].tolist()[0] == 1.0


def test_install_does_nothing_without_the_variable(monkeypatch):
    monkeypatch.delenv(od.ENV, raising=False)
    assert od.install() is False


def _fake_datareader(root: Path) -> None:
    """A package laid out like pandas_datareader: its __init__ binds DataReader from .data."""
    pkg = root / "pandas_datareader"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .data import DataReader\n", encoding="utf-8")
    (pkg / "data.py").write_text("def DataReader(name, data_source=None, start=None, end=None):\n"
                                 "    raise OSError('no network')\n", encoding="utf-8")


def test_the_patch_lands_when_the_package_is_imported_first(tmp_path, data):
    _fake_datareader(tmp_path)
    code = (f"import runpy; runpy.run_path({str(REPO / 'measure' / 'offline_data.py')!r}, "
            "run_name='jaxci_offline_data')\n"
            "import pandas_datareader\nimport pandas_datareader.data as web\n"
            "assert pandas_datareader.DataReader is web.DataReader\n"
            "print(web.DataReader(['AAA'], 'fred', '1960-01-01', '1960-12-31')['AAA'].sum())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, od.ENV: str(data), "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "6.0"


def _kernelspec(tmp_path):
    spec = tmp_path / "kernel.json"
    spec.write_text(json.dumps({"argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]}))
    return spec


def test_a_data_folder_that_is_missing_is_said(tmp_path, capsys):
    spec = _kernelspec(tmp_path)
    assert od.main([str(spec), str(tmp_path / "nowhere")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_the_kernelspec_rewrite_is_idempotent(tmp_path, data):
    spec = _kernelspec(tmp_path)
    assert od.main([str(spec), str(data)]) == 0
    assert od.main([str(spec), str(data)]) == 0
    out = json.loads(spec.read_text())
    assert sum(a.startswith("--IPKernelApp.exec_lines=") for a in out["argv"]) == 1
    assert out["env"][od.ENV] == str(data.resolve())
    assert (tmp_path / "offline_data.py").is_file()


def test_a_real_kernel_serves_a_fixture_lectures_fred_read(tmp_path, data, monkeypatch):
    """The whole route: a kernelspec rewritten by the module, a Jupyter kernel started from it, a notebook that
    reads FRED through (a stand-in for) pandas_datareader, and nothing of the module left in its namespace."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    _fake_datareader(tmp_path)
    kernels = tmp_path / "share" / "jupyter" / "kernels" / "offtest"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "offtest", "language": "python"}))
    assert od.main([str(kernels / "kernel.json"), str(data)]) == 0
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import pandas_datareader.data as web\n"
                                  "raw = web.DataReader(['AAA', 'BBB'], 'fred', '1960-01-01', '1961-12-31')\n"
                                  "print(raw['BBB'].sum(), sorted(k for k in dir() if 'offline' in k.lower()))")])
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    nbclient.NotebookClient(nb, kernel_name="offtest", timeout=120,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    out = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert out.strip() == "100.0 []"
    served = list((data / "served").glob("*.json"))
    assert len(served) == 1 and json.loads(served[0].read_text()) == ["FRED:AAA", "FRED:BBB"]


def test_a_url_with_a_local_copy_is_answered_from_it_and_any_other_goes_on(data):
    copy = data / "web" / "example.org" / "files" / "table.csv"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"a,b\n1,2\n")
    calls = []
    module = types.SimpleNamespace(urlopen=lambda url, *a, **k: calls.append(url) or "network")
    od.patch_urlopen(module, data)
    with module.urlopen("https://example.org/files/table.csv?raw=true") as resp:
        assert resp.read() == b"a,b\n1,2\n" and resp.status == 200
        assert resp.headers.get("Content-Encoding") is None
    assert module.urlopen(urllib.request.Request("https://example.org/files/table.csv")).read() == b"a,b\n1,2\n"
    assert module.urlopen("https://example.org/other.csv") == "network"
    assert module.urlopen("https://example.org/../../fred/AAA.csv") == "network"  # never outside web/
    assert calls == ["https://example.org/other.csv", "https://example.org/../../fred/AAA.csv"]
    served = json.loads(od.served_path(data, os.getpid()).read_text(encoding="utf-8"))
    assert served == ["URL:https://example.org/files/table.csv?raw=true", "URL:https://example.org/files/table.csv"]


def test_pandas_reads_a_url_from_its_local_copy(data, monkeypatch):
    pd = pytest.importorskip("pandas")
    copy = data / "web" / "example.org" / "t.csv"
    copy.parent.mkdir(parents=True)
    copy.write_text("x,y\n1,10\n2,20\n", encoding="utf-8")
    monkeypatch.setattr(urllib.request, "urlopen", urllib.request.urlopen)  # both restored after the test
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setenv(od.ENV, str(data))
    assert od.install() is True
    assert pd.read_csv("https://example.org/t.csv")["y"].sum() == 30


def test_fred_graph_downloads_are_composed_from_the_series_copies(data, monkeypatch):
    pd = pytest.importorskip("pandas")
    monkeypatch.setattr(urllib.request, "urlopen", urllib.request.urlopen)  # restored after the test
    od.patch_urlopen(urllib.request, data)
    table = pd.read_csv("https://fred.stlouisfed.org/graph/fredgraph.csv?id=AAA%2CBBB",
                        parse_dates=["observation_date"]).set_index("observation_date")
    assert list(table.columns) == ["AAA", "BBB"]
    assert [d.strftime("%Y-%m-%d") for d in table.index] == ["1960-01-01", "1960-04-01", "1960-07-01",
                                                             "1960-10-01", "1961-01-01"]
    assert table["BBB"].isna().tolist() == [True, False, False, True, False]  # an empty field where a series has none
    assert table["AAA"].tolist()[:3] == [1.0, 2.0, 3.0]
    served = json.loads(od.served_path(data, os.getpid()).read_text(encoding="utf-8"))
    assert served == ["FRED:AAA", "FRED:BBB"]


def test_a_fred_graph_series_with_no_copy_names_the_file_it_wanted(data):
    module = types.SimpleNamespace(urlopen=lambda url, *a, **k: "network")
    od.patch_urlopen(module, data)
    with pytest.raises(od.OfflineCopyMissing, match=r"FRED series 'ZZZ'"):
        module.urlopen("https://fred.stlouisfed.org/graph/fredgraph.csv?id=AAA,ZZZ")
    assert od.fredgraph_ids("https://fred.stlouisfed.org/series/UNRATE") is None
    assert od.fredgraph_ids("https://example.org/graph/fredgraph.csv?id=AAA") is None
