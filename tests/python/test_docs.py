"""The documentation's `>>>` examples run as doctests, each file in a fresh process."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENTS = ["README.md", "docs/tutorial.md", "docs/aot.md"]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_document_examples(document):
    script = (
        "import doctest, sys\n"
        f"failures, tried = doctest.testfile({str(ROOT / document)!r}, module_relative=False)\n"
        "assert tried > 0, 'no examples found'\n"
        "sys.exit(1 if failures else 0)\n"
    )
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
