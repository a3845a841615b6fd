"""ninetoothed.visualization: PNG pictures of tensors and arrangements."""

import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.image  # noqa: E402

import ninetoothed  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from ninetoothed.visualization import visualize, visualize_arrangement  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def read_png(path):
    path = Path(path)
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    return matplotlib.image.imread(str(path))


def _unique_colors(pixels):
    """The distinct colours (rounded to 2 decimals) of an (n, channels) float array."""
    levels = np.round(pixels * 100).astype(np.int64)
    keys = np.zeros(len(levels), dtype=np.int64)
    for channel in range(levels.shape[1]):
        keys = keys * 101 + levels[:, channel]
    colors = set()
    for key in np.unique(keys):
        channels = []
        for _ in range(levels.shape[1]):
            key, level = divmod(int(key), 101)
            channels.append(level / 100)
        colors.add(tuple(reversed(channels)))
    return colors


def distinct_colors(image):
    return _unique_colors(image.reshape(-1, image.shape[-1]))


def opaque_colors(image):
    pixels = image.reshape(-1, image.shape[-1])
    if pixels.shape[1] == 4:
        pixels = pixels[pixels[:, 3] > 0.99]
    return _unique_colors(pixels[:, :3])


def matmul_arrangement(input, other, output, BLOCK_SIZE_M=ninetoothed.block_size(),
                       BLOCK_SIZE_N=ninetoothed.block_size(), BLOCK_SIZE_K=ninetoothed.block_size()):
    output_arranged = output.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))
    input_arranged = input.tile((BLOCK_SIZE_M, BLOCK_SIZE_K)).tile((1, -1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    other_arranged = other.tile((BLOCK_SIZE_K, BLOCK_SIZE_N)).tile((-1, 1))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)
    return input_arranged, other_arranged, output_arranged


# --- visualize --------------------------------------------------------------------------


def test_visualize_tiled_tensor(tmp_path):
    path = tmp_path / "tiled.png"
    visualize(Tensor(shape=(8, 8)).tile((4, 4)), color="tab:blue", save_path=path)
    image = read_png(path)
    assert path.stat().st_size > 500
    height, width = image.shape[:2]
    # Two levels side by side (2x2 and 4x4 squares with 4 cells between): wider than tall.
    assert width > 2 * height > 100
    colors = opaque_colors(image)
    blue = tuple(np.round(matplotlib.colors.to_rgb("tab:blue"), 2))
    assert any(np.allclose(c, blue, atol=0.02) for c in colors)
    assert (0.0, 0.0, 0.0) in colors  # the squares' outlines and the dashed lines
    # The background is transparent, as upstream's.
    assert image.shape[-1] == 4 and image[..., 3].min() == 0.0


def test_visualize_draws_every_level(tmp_path):
    one, three = tmp_path / "one.png", tmp_path / "three.png"
    visualize(Tensor(shape=(4, 6)), color="C1", save_path=one)
    visualize(Tensor(shape=(4, 6, 8)).tile((1, 2, 4)).tile((1, 1, 2)), color="C1", save_path=three)
    a, b = read_png(one), read_png(three)
    assert b.shape[1] > 2 * a.shape[1]
    assert len(distinct_colors(b)) > 2


def test_visualize_default_colors_cycle(tmp_path):
    first, second = tmp_path / "first.png", tmp_path / "second.png"
    visualize(Tensor(shape=(2, 2)), save_path=first)
    visualize(Tensor(shape=(2, 2)), save_path=second)
    assert opaque_colors(read_png(first)) != opaque_colors(read_png(second))


def test_visualize_higher_dims_and_0_dim(tmp_path):
    path = tmp_path / "4d.png"
    visualize(Tensor(shape=(2, 3, 2, 2)), save_path=path)
    assert read_png(path).shape[0] > 0
    visualize(Tensor(0), save_path=tmp_path / "scalar.png")
    assert read_png(tmp_path / "scalar.png").size > 0


def test_visualize_substituted_tensor(tmp_path):
    block = ninetoothed.block_size()
    tiled = Tensor(2).tile((block, block))
    with pytest.raises(ValueError, match="numeric sizes"):
        visualize(tiled, save_path=tmp_path / "no.png")
    assert not (tmp_path / "no.png").exists()
    concrete = tiled.subs({tiled.source: {"shape": (6, 4)}, block: 2})
    visualize(concrete, save_path=tmp_path / "yes.png")
    assert read_png(tmp_path / "yes.png").size > 0


def test_visualize_bad_input(tmp_path):
    with pytest.raises(TypeError, match="ninetoothed Tensor"):
        visualize(torch.empty(2, 2), save_path=tmp_path / "x.png")


def test_visualize_without_a_path_shows(monkeypatch):
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(plt, "show", lambda *args, **kwargs: shown.append(plt.gcf()))
    visualize(Tensor(shape=(2, 3)))
    assert len(shown) == 1


# --- visualize_arrangement ---------------------------------------------------------------


def test_visualize_arrangement_matmul(tmp_path):
    path = tmp_path / "matmul.png"
    arrangement = functools.partial(matmul_arrangement, BLOCK_SIZE_M=2, BLOCK_SIZE_N=2, BLOCK_SIZE_K=2)
    visualize_arrangement(arrangement, (Tensor(shape=(3, 5)), Tensor(shape=(5, 4)), Tensor(shape=(3, 4))),
                          save_path=path)
    image = read_png(path)
    assert path.stat().st_size > 5000
    # Four programs: four program colours besides white and black, on an opaque background.
    colors = opaque_colors(image)
    program_colors = {tuple(np.round(matplotlib.colormaps["tab10"](i)[:3], 2)) for i in range(4)}
    for color in program_colors:
        assert any(np.allclose(c, color, atol=0.02) for c in colors), color
    assert (1.0, 1.0, 1.0) in colors
    if image.shape[-1] == 4:
        assert image[..., 3].min() == 1.0


def test_visualize_arrangement_with_torch_tensors_and_scalars(tmp_path):
    def arrangement(x, alpha, y, BLOCK_SIZE=4):
        return x.tile((BLOCK_SIZE,)), alpha, y.tile((BLOCK_SIZE,))

    path = tmp_path / "add.png"
    visualize_arrangement(arrangement, (torch.empty(10), 2.0, torch.empty(10)), save_path=path)
    image = read_png(path)
    assert len(distinct_colors(image)) > 3


def test_visualize_arrangement_many_programs(tmp_path):
    # More programs than a qualitative colour map has: a continuous one; no labels.
    def arrangement(x):
        return (x.tile((4, 4)),)

    path = tmp_path / "many.png"
    visualize_arrangement(arrangement, (Tensor(shape=(40, 36)),), save_path=path)
    assert len(distinct_colors(read_png(path))) > 30


def test_visualize_arrangement_errors(tmp_path):
    with pytest.raises(ValueError, match="functools.partial"):
        visualize_arrangement(matmul_arrangement, (Tensor(shape=(3, 5)), Tensor(shape=(5, 4)),
                                                   Tensor(shape=(3, 4))), save_path=tmp_path / "x.png")
    with pytest.raises(ValueError, match="no tensor with dims"):
        visualize_arrangement(lambda a: (a,), (1.0,), save_path=tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_import_ninetoothed_does_not_import_matplotlib():
    code = "import sys, ninetoothed, ninetoothed.visualization; print('matplotlib' in sys.modules)"
    package_parent = str(Path(ninetoothed.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (package_parent, os.environ.get("PYTHONPATH")))))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip() == "False"
