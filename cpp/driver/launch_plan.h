// LaunchPlan: everything launching a generated kernel needs, and nothing of
// the IR it came from.
//
// In: a lowered kernel and its generated OpenCL C (make_launch_plan). Out:
// the source, the kernel's arguments, and per parameter its dtype, the
// source tensor's size expressions and stride symbols, the outermost and
// block shapes, and whether the kernel writes it; the constexpr and meta
// symbols with their attributes and the default configuration. A discrete
// device copies a tensor in only when the kernel reads it, or writes part of
// it (PlanParam::read, ::overwritten), and back only when it writes it.
//
// A plan for CUDA callers carries the kernel's CUDA C as well (LaunchPlan::cuda_source).
//
// A plan is written as text (format_launch_plan) and read back
// (parse_launch_plan) unchanged: expressions as Python source, read by the
// symbolic parser. That text is what an ahead-of-time library embeds
// (cpp/aot): a library launches, tunes and caches with the same driver as
// the Python module, with no IR and no Python in the process.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/c/kernel_source.h"
#include "symbolic/expr.h"
#include "tensor/dtype.h"

namespace nt {

namespace ir {
struct Kernel;
}

using SymbolValues = std::map<std::string, int64_t>;

struct PlanParam {
  std::string name;
  DType dtype = DType::float32;
  bool scalar = false;
  bool constexpr_ = false;
  bool written = false;
  // Does the kernel read the tensor's memory (loads, pointers into it,
  // atomics)? Unknown reads count: a pointer may go anywhere.
  bool read = false;
  // Does every program store its whole block, at the top of the kernel, over
  // an arrangement that reaches every element (Tensor::covers_source)? Then a
  // launch writes every element of a dense tensor.
  bool overwritten = false;
  std::vector<Expr> source_shape;           // sizes of the source tensor
  std::vector<std::string> stride_symbols;  // its stride symbols, per dimension
  bool has_outer_level = false;
  std::vector<Expr> outer_shape;   // one program per element
  std::vector<Expr> middle_shape;  // the levels between (what a program's `p[k]` indexes)
  std::vector<Expr> block_shape;   // the innermost level
  // A jagged source's ragged dimension (Tensor::jagged_dim), -1 for none: its argument is the
  // values of its sequences and their offsets (TensorArg::sequences). Not in the text form: an
  // ahead-of-time library takes no jagged tensors.
  int jagged_dim = -1;
};

struct LaunchPlan {
  codegen::KernelSource source;
  std::vector<PlanParam> params;
  int grid_param = -1;                          // whose outermost shape is the grid; -1: one program
  std::vector<std::string> constexpr_symbols;   // given by the caller (not sizes)
  std::vector<std::string> meta_symbols;        // chosen by tuning
  std::vector<std::string> block_size_symbols;  // at least 1 at launch
  SymbolValues default_config;                  // for meta symbols
  // Values of constexpr scalar parameters fixed when the plan was made (an
  // ahead-of-time build bakes them in, as upstream); by parameter index.
  std::map<int, double> fixed_scalars;
  // upstream's num_warps (make/jit): work-items of a program on a work-group
  // are num_warps x 32 (program_work_items); 0: the default.
  size_t num_warps = 0;
  // The kernel in CUDA C, where the plan is for a CUDA caller (an ahead-of-time library built with
  // caller="cuda"): its arguments are the OpenCL source's, in the same order.
  std::optional<codegen::KernelSource> cuda_source;
};

LaunchPlan make_launch_plan(const ir::Kernel& lowered, codegen::KernelSource source);

std::string format_launch_plan(const LaunchPlan& plan);
// Throws ValueError naming the line when `text` is not a plan.
LaunchPlan parse_launch_plan(const std::string& text);

}  // namespace nt
