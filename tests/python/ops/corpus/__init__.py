"""An operator corpus written the way NineToothed operator libraries write their kernels.

Each module defines one operator (or a family) as upstream operator libraries do: a `premake`
that builds `arrangement, application, tensors` for `ninetoothed.make`, and a torch-facing
function that allocates the output and launches the kernel. The tests beside this package
check every operator element by element against torch on the CPU.
"""
