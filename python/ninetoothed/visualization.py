"""Pictures of tensors and arrangements, drawn with matplotlib.

``visualize(tensor)`` draws every level of a tensor with numeric sizes as a grid
of unit squares, the levels side by side, outermost first, with dashed lines
from each level to the next (as upstream NineToothed's
``ninetoothed.visualization.visualize``). ``visualize_arrangement`` draws, for
each tensor of an arrangement, its source coloured by the program that reads
each element and the programs' blocks in the same colours (upstream opens an
interactive Tk window instead; here it is a picture, saved or shown).

matplotlib is imported when a picture is drawn, so ``import ninetoothed`` does
not need it.
"""

import numpy as np

from ninetoothed._core import Tensor
from ninetoothed.debugging import _simulate

__all__ = ["visualize", "visualize_arrangement"]

_LEVEL_SPACING = 4  # cells between two levels drawn by visualize
_MAX_SIDE_INCHES = 40.0  # longest side of a picture (4000 pixels at 100 dpi)
_CELL_INCHES = 0.3
_MAX_LABELLED_CELLS = 400  # cells of a panel up to which each cell shows its index


def visualize(tensor, color=None, save_path=None):
    """Draws a tensor's levels as grids of unit squares.

    :param tensor: a ``Tensor`` whose levels all have numeric sizes.
    :param color: the squares' colour (a matplotlib colour); by default the
        colour cycle's ``C0``, ``C1``, ... in turn, one per call.
    :param save_path: where to save the picture (PNG by its extension, or any
        format matplotlib writes); ``None`` shows it.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"visualize draws a ninetoothed Tensor, got {type(tensor).__name__}")
    levels = _numeric_levels(tensor)
    if color is None:
        color = f"C{visualize.count}"

    cells = []  # (row, col) of each square, and the level's extent
    boxes = []  # (top, left, height, width) of each level
    left = 0
    for shape in levels:
        rows, cols, height, width = _grid(shape)
        cells.append((rows, cols + left))
        boxes.append((0, left, height, width))
        left += width + _LEVEL_SPACING
    total_width = left - _LEVEL_SPACING
    total_height = max(box[2] for box in boxes)

    fig, ax, cell = _canvas(total_height, total_width, save_path)
    line = max(0.1 * cell * 72, 0.3)
    for rows, cols in cells:
        _squares(ax, rows, cols, color, line)
    for (top, left, height, width), (_, next_left, next_height, _) in zip(boxes, boxes[1:]):
        # A zoom from the level's first row to the whole of the next level.
        right = left + width
        ax.plot((right, next_left), (top, 0), "k--", linewidth=line)
        ax.plot((right, next_left), (top + 1, next_height), "k--", linewidth=line)
    _finish(fig, save_path, transparent=True)
    visualize.count += 1


visualize.count = 0


def visualize_arrangement(arrangement, tensors, save_path=None):
    """Draws how an arrangement maps each tensor onto the programs.

    One row per tensor with dims: on the left its source, each element in
    the colour of the program that reads it (white: read by none; hatched:
    read by more than one, coloured by the first); on the right the
    programs, in the grid of the outermost level, each holding its blocks
    (the levels below, nested) in its colour, white where masked. Small
    pictures show each element's index.

    :param arrangement: as for ``ninetoothed.debugging.simulate_arrangement``
        (block sizes must be numbers).
    :param tensors: as for ``simulate_arrangement``.
    :param save_path: where to save the picture; ``None`` shows it.
    """
    records = [record for record in _simulate(arrangement, tensors) if record.values is not None]
    if not records:
        raise ValueError("visualize_arrangement: the arrangement has no tensor with dims to draw")

    title_rows = 2  # cells above each panel for its title
    panels = []
    top = 0
    width = 0
    for record in records:
        panel = _ArrangementRow(record, top + title_rows)
        panels.append(panel)
        top = panel.bottom + 1
        width = max(width, panel.right)
    fig, ax, cell = _canvas(top + 1, width, save_path)
    for panel in panels:
        panel.draw(ax, cell)
    ax.text(
        0,
        top + 1,
        "colour: the program (row-major over the outermost shape); white: masked or read by none; "
        "hatched: read by several programs",
        fontsize=_clamp(cell * 72 * 0.6, 5, 10),
        va="bottom",
        ha="left",
    )
    _finish(fig, save_path, transparent=False)


class _ArrangementRow:
    """One tensor of an arrangement: its source and its programs, placed."""

    def __init__(self, record, top):
        self.record = record
        self.top = top
        values = record.values
        self.num_programs = record.num_programs
        ids = np.broadcast_to(
            np.arange(self.num_programs).reshape(record.outer_shape + (1,) * (values.ndim - len(record.outer_shape))),
            values.shape,
        )
        # Which programs read each source element: the first one, and how many.
        flat_values, flat_ids = values.reshape(-1), ids.reshape(-1)
        size = int(np.prod(record.source_shape))
        read = (flat_values >= 0) & (flat_values < size)
        first = np.full(size, self.num_programs, dtype=np.int64)
        np.minimum.at(first, flat_values[read], flat_ids[read])
        self.first_reader = np.where(first < self.num_programs, first, -1)
        pairs = np.unique(flat_values[read] * self.num_programs + flat_ids[read])
        self.readers = np.bincount(pairs // max(self.num_programs, 1), minlength=size)

        source_shape = record.source_shape
        self.source_rows, self.source_cols, source_height, source_width = _grid(source_shape)
        self.source_rows = self.source_rows + top
        shapes, start = [], 0
        for ndim in record.level_ndims:
            shapes.append(values.shape[start : start + ndim])
            start += ndim
        target_left = source_width + 3
        self.target_rows, self.target_cols, target_height, target_width = _nested_grid(shapes)
        self.target_rows = self.target_rows + top
        self.target_cols = self.target_cols + target_left
        self.flat_values, self.flat_ids = flat_values, flat_ids
        self.bottom = top + max(source_height, target_height)
        self.right = target_left + max(target_width, 1)

    def draw(self, ax, cell):
        record = self.record
        # One colour per program, and white (index -1) for none.
        colors = np.array(_program_colors(self.num_programs) + [(1.0, 1.0, 1.0, 1.0)])
        line = max(0.06 * cell * 72, 0.2)
        font = _clamp(cell * 72 * 0.9, 6, 14)

        # The source: the colour of the first program that reads each element.
        source_colors = colors[self.first_reader]
        shared = self.readers > 1
        _squares(ax, self.source_rows[~shared], self.source_cols[~shared], source_colors[~shared], line)
        if shared.any():
            _squares(ax, self.source_rows[shared], self.source_cols[shared], source_colors[shared], line, hatch="//")
        # The programs' blocks.
        target_colors = colors[np.where(self.flat_values >= 0, self.flat_ids, -1)]
        _squares(ax, self.target_rows, self.target_cols, target_colors, line)

        if self.source_rows.size <= _MAX_LABELLED_CELLS:
            _labels(ax, self.source_rows, self.source_cols, np.arange(self.source_rows.size), font * 0.6)
        if self.target_rows.size <= _MAX_LABELLED_CELLS:
            _labels(ax, self.target_rows, self.target_cols, self.flat_values, font * 0.6)

        block_shape = tuple(record.values.shape[record.level_ndims[0] :])
        programs = f"{self.num_programs} program{'s' if self.num_programs != 1 else ''}"
        title = (
            f"{record.name}: source {tuple(record.source_shape)} -> {programs} {tuple(record.outer_shape)}, "
            f"blocks {block_shape}"
        )
        ax.text(0, self.top - 0.5, title, fontsize=font, va="bottom", ha="left")


def _numeric_levels(tensor):
    """The shapes of a tensor's levels, outermost first; every size an int."""
    shapes = []
    level = tensor
    depth = 0
    while isinstance(level, Tensor):
        shape = tuple(level.shape)
        if not all(isinstance(size, int) for size in shape):
            raise ValueError(
                f"visualize needs numeric sizes: level {depth} of {tensor.name} has the shape {shape}; "
                "give the sizes (Tensor(shape=(...))) and block sizes as numbers, or substitute them "
                "with Tensor.subs"
            )
        if any(size < 0 for size in shape):
            raise ValueError(f"level {depth} of {tensor.name} has a negative size: {shape}")
        shapes.append(shape)
        level = level.dtype
        depth += 1
    return shapes


def _grid(shape, unit=(1, 1), gap=0):
    """Positions of the elements of one level, row-major.

    Each element is a ``unit`` (height, width) box. The last dim runs to the
    right, the one before it down, and further dims alternate, each repeating
    the picture so far with one cell more between repetitions than ``gap``.
    Returns the rows and columns of the elements' top-left corners and the
    extent (height, width).
    """
    rows = np.zeros(1, dtype=np.int64)
    cols = np.zeros(1, dtype=np.int64)
    height, width = unit
    for count, dim in enumerate(reversed(range(len(shape)))):
        size = shape[dim]
        between = gap if count < 2 else gap + 1
        index = np.arange(size)
        if count % 2 == 0:
            step = width + between
            rows = np.tile(rows, size)
            cols = (index[:, None] * step + cols[None, :]).reshape(-1)
            width = max(size * step - between, 0)
        else:
            step = height + between
            cols = np.tile(cols, size)
            rows = (index[:, None] * step + rows[None, :]).reshape(-1)
            height = max(size * step - between, 0)
    return rows, cols, height, width


def _nested_grid(shapes):
    """Positions of the elements of several levels (outermost first): each
    element of a level is a box holding the picture of the levels below it,
    the boxes one cell apart (two for the outermost level's)."""
    rows, cols, height, width = _grid(shapes[-1])
    for depth in reversed(range(len(shapes) - 1)):
        gap = 2 if depth == 0 else 1
        outer_rows, outer_cols, height, width = _grid(shapes[depth], unit=(height, width), gap=gap)
        rows = (outer_rows[:, None] + rows[None, :]).reshape(-1)
        cols = (outer_cols[:, None] + cols[None, :]).reshape(-1)
    return rows, cols, height, width


def _program_colors(count):
    import matplotlib

    if count <= 10:
        cmap = matplotlib.colormaps["tab10"]
        return [cmap(i) for i in range(count)]
    if count <= 20:
        cmap = matplotlib.colormaps["tab20"]
        return [cmap(i) for i in range(count)]
    cmap = matplotlib.colormaps["viridis"]
    return [cmap(i / (count - 1)) for i in range(count)]


def _clamp(value, low, high):
    return min(max(value, low), high)


def _canvas(height, width, save_path):
    """A figure with one borderless axes whose units are cells (y down)."""
    cell = min(_CELL_INCHES, _MAX_SIDE_INCHES / max(height, width, 1))
    size = (max(width, 1) * cell, max(height, 1) * cell)
    if save_path is None:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=size)
    else:
        from matplotlib.figure import Figure

        fig = Figure(figsize=size)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.1, max(width, 1) + 0.1)
    ax.set_ylim(max(height, 1) + 0.1, -0.1)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax, cell


def _squares(ax, rows, cols, colors, linewidth, hatch=None):
    from matplotlib.collections import PolyCollection

    if len(rows) == 0:
        return
    corners = np.array([(0, 0), (1, 0), (1, 1), (0, 1)], dtype=float)
    verts = np.stack((cols, rows), axis=-1)[:, None, :] + corners[None, :, :]
    collection = PolyCollection(verts, facecolors=colors, edgecolors="k", linewidths=linewidth)
    if hatch is not None:
        collection.set_hatch(hatch)
    ax.add_collection(collection)


def _labels(ax, rows, cols, values, fontsize):
    for row, col, value in zip(rows, cols, values):
        ax.text(col + 0.5, row + 0.5, str(int(value)), fontsize=fontsize, ha="center", va="center")


def _finish(fig, save_path, transparent):
    import matplotlib

    with matplotlib.rc_context({"hatch.linewidth": 0.5}):  # hatching that leaves labels readable
        if save_path is None:
            import matplotlib.pyplot as plt

            plt.show()
            plt.close(fig)
        else:
            fig.savefig(save_path, transparent=transparent, bbox_inches="tight", pad_inches=0.05)
