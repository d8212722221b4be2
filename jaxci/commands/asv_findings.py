"""The findings page as an asv publisher: `asv publish` writes html/findings/ (and its link) itself.

How asv 0.6 finds it: every asv command loads asv.conf.json and imports each module its "plugins" list names
(asv/commands/__init__.py, Command.run_from_args; asv/plugin_manager.py, PluginManager.import_plugin). A name with
a leading "." is imported with the current directory first on sys.path, so ".jaxci.commands.asv_findings" is
this module from the repository root where asv is started (or the installed jaxci); a name without it is only
looked up among asv's own asv.plugins modules. The import happens in the asv process, never in a benchmark
environment. `asv publish` then calls `publish` of every OutputPublisher subclass it finds, ordered by `order`
(asv/commands/publish.py: util.iter_subclasses(OutputPublisher)), after it copied its template pages into
html_dir and wrote the graphs, before it writes index.json.

A page that cannot be built (no results yet, a refusal of `jaxci report --html`) is said on stderr and asv's own
pages are still written: stock `asv publish` does not fail for it. This module imports asv at its top: only asv
(and tests) import it; jaxci's own code is imported when asv calls `publish`.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from asv.console import log
from asv.publishing import OutputPublisher

PLUGIN = ".jaxci.commands.asv_findings"  # asv.conf.json "plugins": this module, imported from the repository root


class FindingsPage(OutputPublisher):
    """html_dir/findings/ from results_dir, as `jaxci report RESULTS_DIR --html HTML_DIR` writes it."""

    name = "findings"
    button_label = "Findings"
    description = "jax-ci-bench's findings: the decision sheets, figures and evidence (findings/index.html)"
    order = math.inf  # after asv's own pages: the link goes into the index.html asv copied

    @classmethod
    def publish(cls, conf, repo, benchmarks, graphs, revisions) -> None:
        from jaxci.commands.report import Refused, write_site
        from jaxci.util.safeio import UnsafeFile

        try:
            log.info(f"jaxci: {write_site(Path(conf.results_dir), Path(conf.html_dir))}")
        except (Refused, UnsafeFile) as exc:
            print(f"jaxci (asv publish plugin): no findings page: {exc}; asv's own pages are written", file=sys.stderr)
        except (OSError, UnicodeDecodeError) as exc:
            where = getattr(exc, "filename", None) or conf.html_dir
            print(f"jaxci (asv publish plugin): no findings page: cannot write {where}: "
                  f"{getattr(exc, 'strerror', None) or exc}; asv's own pages are written", file=sys.stderr)
