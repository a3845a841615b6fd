"""Window pooling over 1-D, 2-D and 3-D inputs: avg_pool, max_pool and lp_pool.

The input is padded, tiled into one window per output position (kernel size, stride, padding
and dilation are constexpr symbols passed at launch), the window grid flattened to rows of
`prod(kernel_size)` elements, and those rows tiled by a block size; the output is arranged as
the matching rows of one element. Leading dims (N, C or just C) are batch dims.

Averages divide by a count of the positions that count, computed the same way as the sum: a
`count` argument of ones (a stride-0 view of one element) arranged as the input is, whose
masked positions read 0. Arranged with the input's padding it counts the positions inside the
input (`count_include_pad=False`); given the padded extent and arranged without padding, it
counts the positions inside the padded input (`count_include_pad=True`; only ceil_mode
windows reach past it).
"""

import functools
import math

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor
from ninetoothed.language import libdevice

BLOCK_SIZE = ninetoothed.block_size()

MAX_NUM_CONFIGS = 1

# The names of the spatial dims, for the symbols' names (`kernel_size_h`, `stride_w`, ...).
SPATIAL_DIM_NAMES = {1: ("l",), 2: ("h", "w"), 3: ("d", "h", "w")}


def symbols(name, num_spatial_dims, upper_bound=None):
    """The constexpr symbols `<name>_<dim>` of one pooling parameter, one per spatial dim."""
    return tuple(
        Symbol(f"{name}_{dim}", constexpr=True, upper_bound=upper_bound) for dim in SPATIAL_DIM_NAMES[num_spatial_dims]
    )


def arrange_windows(input, output, kernel_size, stride, padding, dilation, ceil_mode, block_size):
    """(*batch, *spatial) -> rows of windows: (M / block_size, 1) of (block_size, prod(kernel_size))."""
    num_batch_dims = input.ndim - len(kernel_size)
    batch = (1,) * num_batch_dims

    arranged = input.pad(((0, 0),) * num_batch_dims + tuple((size, size) for size in padding))
    arranged = arranged.tile(
        batch + tuple(kernel_size),
        strides=(-1,) * num_batch_dims + tuple(stride),
        dilation=batch + tuple(dilation),
        floor_mode=not ceil_mode,
    )

    if ceil_mode:
        # A last window that would start in the right padding is not an output position
        # (torch drops it): keep as many windows as the output has positions.
        output_spatial_shape = output.shape[num_batch_dims:]
        arranged = arranged[(slice(None),) * num_batch_dims + tuple(slice(None, size) for size in output_spatial_shape)]

    arranged = arranged.ravel()
    arranged = arranged.flatten(end_dim=input.ndim).flatten(start_dim=1)
    arranged = arranged.tile((block_size, -1))

    return arranged


def arrange_outputs(output, block_size):
    """(*batch, *spatial) -> (M / block_size, 1) of (block_size,), the rows of arrange_windows."""
    arranged = output.tile((1,) * output.ndim)
    arranged = arranged.ravel()
    arranged = arranged.flatten(end_dim=output.ndim).flatten(start_dim=1)
    arranged = arranged.tile((block_size, -1))
    arranged.dtype = arranged.dtype.squeeze(1)

    return arranged


# --- max_pool ------------------------------------------------------------------------------


def max_pool_arrangement(input, output, num_spatial_dims=None, ceil_mode=None, block_size=None):
    if ceil_mode is None:
        ceil_mode = False

    if block_size is None:
        block_size = BLOCK_SIZE

    input_arranged = arrange_windows(
        input,
        output,
        symbols("kernel_size", num_spatial_dims, upper_bound=16),
        symbols("stride", num_spatial_dims),
        symbols("padding", num_spatial_dims),
        symbols("dilation", num_spatial_dims),
        ceil_mode,
        block_size,
    )
    output_arranged = arrange_outputs(output, block_size)

    return input_arranged, output_arranged


def max_pool_application(input, output):
    output = ntl.max(input, axis=-1)  # noqa: F841


def max_pool_premake(ndim, num_spatial_dims, ceil_mode=None, dtype=None, block_size=None):
    arrangement_ = functools.partial(
        max_pool_arrangement,
        num_spatial_dims=num_spatial_dims,
        ceil_mode=ceil_mode,
        block_size=block_size,
    )

    # Padding and what lies past the input read -inf: they never win the maximum.
    tensors = (Tensor(ndim, dtype=dtype, other=float("-inf")), Tensor(ndim, dtype=dtype))

    return arrangement_, max_pool_application, tensors


# --- avg_pool ------------------------------------------------------------------------------


def avg_pool_arrangement(
    input, count, output, num_spatial_dims=None, ceil_mode=None, count_include_pad=None, block_size=None
):
    if ceil_mode is None:
        ceil_mode = False

    if count_include_pad is None:
        count_include_pad = True

    if block_size is None:
        block_size = BLOCK_SIZE

    kernel_size = symbols("kernel_size", num_spatial_dims, upper_bound=16)
    stride = symbols("stride", num_spatial_dims)
    padding = symbols("padding", num_spatial_dims)
    dilation = (1,) * num_spatial_dims

    input_arranged = arrange_windows(input, output, kernel_size, stride, padding, dilation, ceil_mode, block_size)

    # `count` is the padded extent itself when padding counts, the input's extent otherwise.
    count_padding = (0,) * num_spatial_dims if count_include_pad else padding
    count_arranged = arrange_windows(count, output, kernel_size, stride, count_padding, dilation, ceil_mode, block_size)

    output_arranged = arrange_outputs(output, block_size)

    return input_arranged, count_arranged, output_arranged


def avg_pool_application(input, count, output):
    output = ntl.sum(input, axis=-1) / ntl.sum(count, axis=-1)  # noqa: F841


def avg_pool_premake(ndim, num_spatial_dims, ceil_mode=None, count_include_pad=None, dtype=None, block_size=None):
    arrangement_ = functools.partial(
        avg_pool_arrangement,
        num_spatial_dims=num_spatial_dims,
        ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
        block_size=block_size,
    )

    tensors = (Tensor(ndim, dtype=dtype, other=0), Tensor(ndim, dtype=dtype, other=0), Tensor(ndim, dtype=dtype))

    return arrangement_, avg_pool_application, tensors


# --- lp_pool -------------------------------------------------------------------------------


def lp_pool_arrangement(input, count, norm_type, output, num_spatial_dims=None, ceil_mode=None, block_size=None):
    if block_size is None:
        block_size = BLOCK_SIZE

    input_arranged, count_arranged, output_arranged = avg_pool_arrangement(
        input,
        count,
        output,
        num_spatial_dims=num_spatial_dims,
        ceil_mode=ceil_mode,
        count_include_pad=True,
        block_size=block_size,
    )

    return input_arranged, count_arranged, norm_type, output_arranged


def lp_pool_application(input, count, norm_type, output):
    # torch's definition: the average of x ** p over the window's positions inside the input,
    # times the kernel's volume (so a full window gives the plain sum), to the power 1 / p.
    powered = ntl.sum(libdevice.pow(input.to(ntl.float32), norm_type), axis=-1)
    scaled = powered / ntl.sum(count, axis=-1) * input.shape[-1]
    output = libdevice.pow(scaled, 1.0 / norm_type)  # noqa: F841


def lp_pool_premake(ndim, num_spatial_dims, ceil_mode=None, dtype=None, block_size=None):
    arrangement_ = functools.partial(
        lp_pool_arrangement,
        num_spatial_dims=num_spatial_dims,
        ceil_mode=ceil_mode,
        block_size=block_size,
    )

    tensors = (
        Tensor(ndim, dtype=dtype, other=0),
        Tensor(ndim, dtype=dtype, other=0),
        Tensor(0, dtype=ninetoothed.float32),
        Tensor(ndim, dtype=dtype),
    )

    return arrangement_, lp_pool_application, tensors


# --- torch-facing functions ----------------------------------------------------------------


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords), max_num_configs=MAX_NUM_CONFIGS)


def _tuple(value, num_spatial_dims):
    if isinstance(value, int):
        return (value,) * num_spatial_dims

    assert len(value) == num_spatial_dims, f"expected {num_spatial_dims} values, got {value}."

    return tuple(value)


def _output_size(input_size, kernel_size, stride, padding, dilation, ceil_mode):
    round_ = math.ceil if ceil_mode else math.floor

    result = round_((input_size + 2 * padding - dilation * (kernel_size - 1) - 1) / stride) + 1

    # In ceil mode, the last window must start inside the input or its left padding.
    if ceil_mode and (result - 1) * stride >= input_size + padding:
        result -= 1

    return result


def _prepare(input, num_spatial_dims, kernel_size, stride, padding, dilation, ceil_mode, out):
    assert input.ndim in (num_spatial_dims + 1, num_spatial_dims + 2), "expected (N, C, *spatial) or (C, *spatial)."

    kernel_size = _tuple(kernel_size, num_spatial_dims)
    stride = kernel_size if stride is None or stride == [] else _tuple(stride, num_spatial_dims)
    padding = _tuple(padding, num_spatial_dims)
    dilation = _tuple(dilation, num_spatial_dims)

    for size, pad, spacing in zip(kernel_size, padding, dilation):
        assert pad <= (spacing * (size - 1) + 1) // 2, "padding should be at most half of the effective kernel size."

    spatial_shape = input.shape[-num_spatial_dims:]
    output_spatial_shape = tuple(
        _output_size(*arguments, ceil_mode) for arguments in zip(spatial_shape, kernel_size, stride, padding, dilation)
    )
    output_shape = input.shape[:-num_spatial_dims] + output_spatial_shape

    if out is None:
        out = torch.empty(output_shape, dtype=input.dtype, device=input.device)

    assert out.shape == output_shape, f"`out` has shape {tuple(out.shape)}, expected {tuple(output_shape)}."

    names = SPATIAL_DIM_NAMES[num_spatial_dims]
    launch_values = {}

    parameters = (("kernel_size", kernel_size), ("stride", stride), ("padding", padding), ("dilation", dilation))

    for name, values in parameters:
        launch_values |= {f"{name}_{dim}": value for dim, value in zip(names, values)}

    return out, padding, launch_values


def _ones(shape, like):
    """A tensor of ones of `shape` that holds one element."""
    return torch.ones((), dtype=like.dtype, device=like.device).expand(shape)


def _max_pool(input, num_spatial_dims, kernel_size, stride, padding, dilation, ceil_mode, return_indices, out):
    assert not return_indices, "`return_indices` is not supported."

    output, _, launch_values = _prepare(input, num_spatial_dims, kernel_size, stride, padding, dilation, ceil_mode, out)

    kernel = _cached_make(max_pool_premake, input.ndim, num_spatial_dims, ceil_mode=ceil_mode)

    kernel(input, output, **launch_values)

    return output


def _avg_pool(
    input, num_spatial_dims, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out
):
    assert divisor_override is None, "`divisor_override` is not supported."

    output, padding, launch_values = _prepare(input, num_spatial_dims, kernel_size, stride, padding, 1, ceil_mode, out)
    launch_values = {name: value for name, value in launch_values.items() if not name.startswith("dilation")}

    if count_include_pad:
        padded_shape = input.shape[:-num_spatial_dims] + tuple(
            size + 2 * pad for size, pad in zip(input.shape[-num_spatial_dims:], padding)
        )
        count = _ones(padded_shape, input)
    else:
        count = _ones(input.shape, input)

    kernel = _cached_make(
        avg_pool_premake,
        input.ndim,
        num_spatial_dims,
        ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
    )

    kernel(input, count, output, **launch_values)

    return output


def _lp_pool(input, num_spatial_dims, norm_type, kernel_size, stride, ceil_mode, out):
    output, _, launch_values = _prepare(input, num_spatial_dims, kernel_size, stride, 0, 1, ceil_mode, out)
    launch_values = {name: value for name, value in launch_values.items() if not name.startswith("dilation")}

    kernel = _cached_make(lp_pool_premake, input.ndim, num_spatial_dims, ceil_mode=ceil_mode)

    kernel(input, _ones(input.shape, input), float(norm_type), output, **launch_values)

    return output


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False, *, out=None
):
    return _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, return_indices, out)


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False, *, out=None
):
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices, out)


def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False, *, out=None
):
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, return_indices, out)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, *, out=None):
    return _avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None, out)


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
    *,
    out=None,
):
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out)


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
    *,
    out=None,
):
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False, *, out=None):
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode, out)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False, *, out=None):
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode, out)
