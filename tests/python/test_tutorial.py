"""The tutorial's `>>>` examples, run as doctests in a fresh Python process.

A fresh process matters: unnamed tensors are numbered by a process-wide
counter, and the tutorial's output (`ninetoothed_tensor_0_size_0`) assumes
the first tensor of the process. The examples are committed under
data/basics_examples.txt because CI checks out the repository alone; where
the tutorial's source (the seed basics.rst) is present, it is run as well and
its examples must equal the committed copy.
"""

import doctest
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLES = HERE / "data" / "basics_examples.txt"
SEED = pathlib.Path("/work/shared/seeds/basics.rst")

DOCUMENTS = [EXAMPLES] + ([SEED] if SEED.is_file() else [])

_RUNNER = """
import doctest, json, sys
result = doctest.testfile(sys.argv[1], module_relative=False, report=True)
print(json.dumps({"failed": result.failed, "attempted": result.attempted}))
"""


def _examples(path):
    """(source, expected output) of every `>>>` example of a text file."""
    text = pathlib.Path(path).read_text()
    parsed = doctest.DocTestParser().get_examples(text, str(path))
    return [(example.source, example.want) for example in parsed]


def _run_doctest_in_fresh_process(path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    )
    completed = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(ROOT),
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    return summary, completed.stdout


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_examples_pass_in_a_fresh_process(document):
    expected_count = len(_examples(document))
    assert expected_count > 0

    summary, output = _run_doctest_in_fresh_process(document)

    assert summary["attempted"] == expected_count, output
    assert summary["failed"] == 0, output


def test_committed_examples_are_the_tutorials():
    examples = _examples(EXAMPLES)
    sources = [source for source, _ in examples]
    # The tutorial's three example blocks, in order.
    assert sources[0] == "from ninetoothed import Symbol\n"
    assert "x = Tensor(2)\n" in sources
    assert "x = Tensor(shape=(4, 8))\n" in sources
    assert examples[-1] == ("x_tiled.dtype.shape\n", "(2, 2)\n")
    if SEED.is_file():
        assert examples == _examples(SEED)


def test_first_tensor_of_a_fresh_process_is_numbered_zero():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    script = (
        "import ninetoothed\n"
        "x = ninetoothed.Tensor(1)\n"
        "y = ninetoothed.Tensor(1)\n"
        "print(x.shape, y.shape)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "(ninetoothed_tensor_0_size_0,) (ninetoothed_tensor_1_size_0,)\n"
