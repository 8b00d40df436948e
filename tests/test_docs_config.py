"""docs/conf.py, run as Sphinx runs it: it imports the package (and with it TensorFlow), so its
output is the start of every docs build."""

from __future__ import annotations

import os
import subprocess
import sys

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "docs")


def test_docs_configuration_prints_no_tensorflow_start_up_lines():
    env = {k: v for k, v in os.environ.items() if k != "META_POLICY_SEARCH_TF_LOGS"}
    result = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path('conf.py')"],
                            cwd=DOCS, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    output = result.stdout + result.stderr
    for noise in ("cuda", "cuInit", "oneDNN", "absl::InitializeLog"):
        assert noise not in output, output[-2000:]
