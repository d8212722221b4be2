"""docs/reference/notebook-fixed-costs.json and its calibration read as the runner model's notebook fixed costs
(jaxci.analysis.fixed_costs).

Both are data. The fixed costs (FORMAT, VERSION: seconds per term cold and warm, the probes taken beside them, when
and on which host) are written by `measure/notebook_fixed_costs.py --write` (RESTORE), with the section of
notebook-fixed-costs.md a person reads; that page is never read here. The calibration beside them,
`notebook-calibration.json` (CALIBRATION_VERSION), is written by `jaxci devsets --calibrate`: the residual in probe
units with its band, the scale, where it was fitted, and the host it was fitted on (its probes, and the probe
range in which another host cannot be told from it). A missing file gives None (or no calibration: the model then
says "not measured"); a file that cannot be read, of another format or version, or that holds no number where one
is due, is an error naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from jaxci.analysis.fixed_costs import FittedHost, FixedCosts
from jaxci.analysis.primitives import Band

FORMAT, VERSION = "jaxci-notebook-fixed-costs", 1
#: measures the terms again and writes the file this jaxci reads (and the page's section beside it)
RESTORE = "measure/notebook_fixed_costs.py --kernel K --write docs/reference/notebook-fixed-costs.md"
CALIBRATION_NAME, CALIBRATION_VERSION = "notebook-calibration.json", 1
LIMIT = 1024 * 1024


class FixedCostsError(ValueError):
    """The file exists but cannot be read: said with the file's name."""


def default_path() -> Path:
    from jaxci import REPO_ROOT

    return REPO_ROOT / "docs" / "reference" / "notebook-fixed-costs.json"


def load(path: Path | None = None) -> FixedCosts | None:
    path = Path(path) if path else default_path()
    if not path.is_file():
        return None
    found = _record(path)
    try:
        warm, cold = _seconds(found["warm"]), _seconds(found["cold"])
        probes = tuple(float(p) for p in found["probe_s"] if float(p) > 0)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FixedCostsError(f"{path}: notebook fixed costs unreadable ({exc})") from None
    if not probes or not warm:
        raise FixedCostsError(f"{path}: notebook fixed costs have no probe or no warm term")
    residual, source, scale, host = calibration(path.with_name(CALIBRATION_NAME))
    return FixedCosts(warm, cold, probes, f"measured here ({path.name}: {found.get('when', 'date not given')}, "
                                         f"{found.get('host', 'host not given')})", residual, source, scale, host)


def _record(path: Path) -> dict:
    """The fixed-costs record at `path`, of this format's current version."""
    from jaxci.util import versioned

    return versioned.load(path, FORMAT, VERSION, LIMIT, FixedCostsError,
                          f"measure and write it again with `{RESTORE}`")


def record(found: dict) -> dict:
    """The file's form of measured terms (what `load` reads): the measuring script's writer."""
    return {"format": FORMAT, "version": VERSION, **found}


def calibration(path: Path) -> tuple[Band | None, str, float, FittedHost | None]:
    """(residual band in probe units, where it was fitted, scale, the host it was fitted on) from the calibration
    file; (None, "", 1.0, None) without one."""
    if not path.is_file():
        return None, "", 1.0, None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise FixedCostsError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(found, dict) or found.get("version") != CALIBRATION_VERSION:
        raise FixedCostsError(f"{path}: not a version {CALIBRATION_VERSION} calibration")
    try:
        band = Band.of(float(found["probe_units"]), float(found["low"]), float(found["high"]))
        scale = float(found["scale"])
        if not scale > 0:
            raise ValueError(f"scale {scale!r} is not positive")
        host = found["fitted_on"]
        low, high = (float(x) for x in host["accepts_s"])
        fitted = FittedHost(str(host["host"]), int(host["n"]), tuple(float(x) for x in host["probes_s"]),
                            (low, high), str(host["why"]))
        if not (0 < low <= min(fitted.probes_s) and max(fitted.probes_s) <= high):
            raise ValueError("the accepted probe range does not hold the probes it was fitted at")
        return band, str(found["source"]), scale, fitted
    except (KeyError, TypeError, ValueError) as exc:
        raise FixedCostsError(f"{path}: calibration unreadable ({exc})") from None


def committed_form(path: Path | None = None) -> str | None:
    """The form the committed calibration was fitted in (None without one): the form the protocol scores the model
    in, so that a development-set record describes the model the audits apply."""
    path = Path(path) if path else default_path().with_name(CALIBRATION_NAME)
    if not path.is_file():
        return None
    try:
        form = json.loads(path.read_text(encoding="utf-8")).get("form")
    except (OSError, json.JSONDecodeError, AttributeError) as exc:
        raise FixedCostsError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(form, str):
        raise FixedCostsError(f"{path}: the calibration names no form")
    return form


def _seconds(terms: dict) -> dict:
    out = {str(k): float(v) for k, v in terms.items()}
    if any(not (v >= 0) for v in out.values()):
        raise ValueError("a negative or NaN term")
    return out


def with_section(text: str, heading: str, body: str) -> str:
    """`text` with the section under `heading` ('## ...') replaced by `body` (added at the end when absent): how
    the measuring scripts write their part of the file and keep the rest."""
    lines = text.splitlines()
    try:
        start = lines.index(heading)
    except ValueError:
        return text.rstrip("\n") + f"\n\n{heading}\n\n{body.strip()}\n"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    kept = lines[:start + 1] + ["", body.strip(), ""] + lines[end:]
    return "\n".join(kept).rstrip("\n") + "\n"
