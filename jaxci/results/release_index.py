"""What the package index holds for a JAX history: the installable JAX releases (those with a wheel for this
Python and backend), their release dates, and the numpyro release each JAX release needs. Every call is bounded
in time: a package index that does not answer is a HistoryError, not a hang.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from jaxci.util.validate import quoted
from jaxci.util.versions import RELEASE, release_key

PYPI_JSON = "https://pypi.org/pypi/{name}/json"
# The wheel that has to exist for a release to be installable here, per backend.
BACKEND_WHEEL = {"cpu": "jaxlib", "cuda13": "jax-cuda13-plugin"}


class HistoryError(ValueError):
    """The backfill cannot start: bad arguments, no releases, not a git checkout, a corrupt state file."""


def index_versions(package: str, python: str = sys.executable, index_url: str | None = None,
                   timeout: float = 120) -> list[str]:
    """Final releases of `package` with a wheel for `python`'s interpreter and platform (pip's own answer);
    from `index_url` (a PEP 503 simple index) instead of pip's configured index when given. An index that
    does not answer within `timeout` seconds is a HistoryError (pip is ended), not a hang."""
    extra = ["--index-url", index_url] if index_url else []
    proc = _bounded([python, "-m", "pip", "index", "versions", package, "--disable-pip-version-check", *extra],
                    timeout)
    if proc is None:
        raise HistoryError(f"pip index versions {package}: no answer from the package index within "
                           f"{timeout:g} s") from None
    if proc.returncode:
        last = [line for line in proc.stderr.splitlines() if line.strip()][-1:] or ["no message"]
        raise HistoryError(f"pip index versions {package} failed (offline?): {quoted(last[0].strip(), 300)}")
    for line in proc.stdout.splitlines():
        if line.strip().startswith("Available versions:"):
            found = [v.strip() for v in line.split(":", 1)[1].split(",")]
            return sorted((v for v in found if RELEASE.fullmatch(v)), key=release_key)
    raise HistoryError(f"pip index versions {package}: no version list in its output")


def _bounded(argv: list[str], timeout: float) -> subprocess.CompletedProcess | None:
    """Run `argv` with its output captured, for at most `timeout` seconds in all: None when it ran out. It runs
    in a session of its own and the whole session is ended then, so no process it started (a keyring helper,
    a build) can hold its pipes open and keep the caller waiting past the limit."""
    from jaxci.util.proc import kill_group

    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(child.pid)
        child.kill()
        try:
            child.communicate(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        return None
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def installable_releases(backend: str, python: str = sys.executable) -> list[str]:
    """JAX releases installable for this Python and backend: jax releases at or after the oldest release of
    the backend's wheel (jaxlib or the CUDA plugin) that pip finds for this interpreter. A jax release with
    no jaxlib of its own number (e.g. 0.5.2) installs with the jaxlib its metadata asks for."""
    wheels = index_versions(BACKEND_WHEEL[backend], python)
    if not wheels:
        raise HistoryError(f"no {BACKEND_WHEEL[backend]} wheel for this Python: no JAX release installs here")
    oldest = release_key(wheels[0])
    return [v for v in index_versions("jax", python) if release_key(v) >= oldest]


def release_dates(versions: list[str], fetch=None) -> dict[str, str]:
    """Upload time (ISO, UTC) of each jax release on PyPI; a release PyPI does not date is left out."""
    if fetch is None:
        def fetch(url):
            import urllib.request

            with urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310 (fixed https URL)
                return json.load(resp)
    data = fetch(PYPI_JSON.format(name="jax"))
    out = {}
    for v in versions:
        files = data.get("releases", {}).get(v) or []
        times = sorted(f["upload_time_iso_8601"] for f in files if f.get("upload_time_iso_8601"))
        if times:
            out[v] = times[0]
    return out


def numpyro_jax_specs(cache: Path | None = None, fetch_bytes=None) -> dict[str, str]:
    """numpyro release -> its `jax` requirement specifier (e.g. '>=0.7.0'), read from each wheel's METADATA.

    PyPI serves no separate metadata files for numpyro, so each wheel (~0.4 MB) is read once; the answer never
    changes for a published release, so it is cached (cache file) and only new releases are fetched."""
    import io
    import zipfile

    if fetch_bytes is None:
        def fetch_bytes(url, accept=None):
            import urllib.request

            req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
            with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 (fixed https URLs)
                return resp.read()
    known = json.loads(cache.read_text()) if cache and cache.is_file() else {}
    index = json.loads(fetch_bytes("https://pypi.org/simple/numpyro/", "application/vnd.pypi.simple.v1+json"))
    for entry in index.get("files", []):
        name = entry.get("filename", "")
        match = re.fullmatch(r"numpyro-([0-9.]+)-py3-none-any\.whl", name)
        if not match or match[1] in known or entry.get("yanked"):
            continue
        with zipfile.ZipFile(io.BytesIO(fetch_bytes(entry["url"]))) as wheel:
            meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            text = wheel.read(meta).decode()
        known[match[1]] = _jax_spec(text)
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(known, indent=1, sort_keys=True))
    return known


def _jax_spec(metadata: str) -> str:
    """The specifier of the unconditional `jax` requirement in a wheel's METADATA ('' when unbounded)."""
    from packaging.requirements import InvalidRequirement, Requirement

    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        try:
            req = Requirement(line.split(":", 1)[1].strip())
        except InvalidRequirement:
            continue
        if req.name.lower() == "jax" and req.marker is None:
            return str(req.specifier)
    return ""


def numpyro_for(jax_version: str, specs: dict[str, str]) -> str | None:
    """The newest numpyro whose declared jax requirement admits `jax_version` (what pip would pick)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    ok = [v for v, spec in specs.items() if RELEASE.fullmatch(v) and Version(jax_version) in SpecifierSet(spec)]
    return max(ok, key=release_key) if ok else None


#: a snapshot of the package index's answer (`jaxci history --index-snapshot FILE`): the releases a chain is built
#: from, fixed, so a test or a rebuilt chain does not move when a new JAX release appears on the index
SNAPSHOT_FORMAT, SNAPSHOT_VERSION = "jax-release-index", 1


@dataclass(frozen=True)
class IndexAnswer:
    """What a history chain needs from the package index: the installable jax releases (oldest first), the jaxlib
    releases, each release's upload date and each numpyro release's jax requirement."""
    releases: list[str]
    jaxlib: set[str]
    dates: dict[str, str]
    numpyro_jax: dict[str, str]


def ask_index(backend: str, numpyro_cache: Path | None) -> IndexAnswer:
    """The package index's answer today (pip and PyPI's JSON API; HistoryError when either does not answer)."""
    releases = installable_releases(backend)
    return IndexAnswer(releases, set(index_versions("jaxlib")), release_dates(releases),
                       numpyro_jax_specs(numpyro_cache))


def read_snapshot(path: str | Path) -> IndexAnswer:
    """A jax-release-index file (format + version, util.versioned's rule), each field checked: a HistoryError
    naming the file and the field otherwise."""
    from jaxci.util.versioned import load

    doc = load(path, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, 1 << 20, HistoryError,
               "write it again in this version's shape (docs/history.md, 'A fixed release list')")
    releases, jaxlib = doc.get("releases"), doc.get("jaxlib")
    dates, numpyro = doc.get("dates"), doc.get("numpyro_jax")
    for name, value, kind in (("releases", releases, list), ("jaxlib", jaxlib, list), ("dates", dates, dict),
                              ("numpyro_jax", numpyro, dict)):
        if not isinstance(value, kind):
            raise HistoryError(f"{path}: {name!r} is not a JSON {'list' if kind is list else 'object'}")
    assert isinstance(releases, list) and isinstance(jaxlib, list) and isinstance(dates, dict) \
        and isinstance(numpyro, dict)
    bad = [v for v in [*releases, *jaxlib, *dates, *numpyro] if not (isinstance(v, str) and RELEASE.fullmatch(v))]
    if bad:
        raise HistoryError(f"{path}: {quoted(str(bad[0]), 40)} is not a release number like 0.11.0")
    if not all(isinstance(v, str) for v in [*dates.values(), *numpyro.values()]):
        raise HistoryError(f"{path}: every date and every numpyro requirement is a string")
    return IndexAnswer(sorted(releases, key=release_key), set(jaxlib), dict(dates), dict(numpyro))
