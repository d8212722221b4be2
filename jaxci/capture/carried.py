"""What a lent GPU machine lacks and the build machine carries to it (scripts/prepare-device.sh): asv's
wheels, unpacked here without pip, and the commit being captured, read from git or, where the copy of the
repository holds no .git, from .device/commit.json. Standard library only: this runs before asv exists."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.util.git import GitError, git
from jaxci.util.safeio import load_json


class CaptureError(RuntimeError):
    """The capture cannot start here (no commit to name, no asv, a lab name on the wrong GPU); the message
    says what to do."""


def install_wheels(wheels: Path, site: Path) -> list[str]:
    """Unpack into `site` each carried wheel whose distribution is not installed (no pip needed; a wheel is
    a zip laid out for site-packages). Returns the names unpacked."""
    from importlib.metadata import PackageNotFoundError, version

    done = []
    for whl in sorted(wheels.glob("*.whl")):
        name = whl.name.split("-")[0]
        try:
            version(name)
            continue
        except PackageNotFoundError:
            pass
        with zipfile.ZipFile(whl) as zf:
            zf.extractall(site)
        done.append(whl.name)
    if done:
        sys.path.insert(0, str(site))
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return done


def source_commit(repo: Path = REPO_ROOT) -> dict:
    """{commit, date (unix seconds), source}: from git where the copy has .git, else .device/commit.json."""
    try:
        out = git(repo, "show", "-s", "--format=%H %ct", "HEAD", timeout=30)
        if out:
            commit, date = out.split()
            return {"commit": commit, "date": int(date), "source": "git"}
    except GitError:  # no git installed, or no .git in this copy
        pass
    path = repo / ".device" / "commit.json"
    try:
        data = load_json(path)
        return {"commit": str(data["commit"]), "date": int(data["date"]), "source": str(path.relative_to(repo))}
    except (OSError, ValueError, KeyError) as exc:
        raise CaptureError(f"gpu_capture: no git here and {path} unusable ({exc}): run scripts/prepare-device.sh "
                           "on the build machine and carry .device") from None
