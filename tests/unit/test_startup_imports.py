"""What loading the plugin imports: only what a run needs before its first model call.

Everything imported when pytest loads the plugin delays the first wave of calls (docs/performance.md,
"The lean call path"); the report writers are needed only when the run ends.
"""

from __future__ import annotations

import json
import subprocess
import sys

LATE = ("pytest_omk.report.html", "pytest_omk.report.markdown")


def test_loading_the_plugin_does_not_import_the_report_writers() -> None:
    # A fresh interpreter: this test process has imported everything already.
    code = f"import sys, json, pytest_omk.plugin; print(json.dumps([m for m in {LATE!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []
