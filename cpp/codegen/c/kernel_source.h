// OpenCL C for a kernel.
//
// In: a lowered Kernel (single-use Lets already inlined, see
// lower/inline_lets.h). Out: one OpenCL C source with one `__kernel`, and
// the list of its arguments in order, which the launcher fills.
//
// The mapping, node by node (see docs/architecture.md):
// - programs: the ProgramLayout prologue; an element-wise kernel's one body
//   runs a program on one work-item or, built with -DNT_WORK_ITEMS=<n>, on a
//   work-group; any other kernel has two bodies, `#if NT_WORK_ITEMS > 1` the
//   work-group one (tile layouts; values shared between work-items in local
//   memory behind barriers; reductions and dots over the work-group; block
//   operations on work-item 0), `#else` the work-item one described below;
// - a statement over a block is one loop nest over the block's shape whose
//   body is the C expression of the value's element (elementwise trees are
//   fused); if the loads and the store have conditions that are monotone in
//   the element indices, the nest is emitted twice: a mask-free fast path
//   taken when the block's corners are in bounds, and a masked path;
// - materialised values (remaining Lets, locals, reductions, dot operands and
//   results) are private arrays `CT name[size]`, sized by constexpr/meta
//   macros;
// - float16 and bfloat16 are loaded and stored through conversions
//   (vload_half/vstore_half_rte, bit shifts for bfloat16) and computed in
//   float; constexpr and meta symbols are macros given with -D at build.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/dialect.h"
#include "ir/ir.h"

namespace nt::codegen {

struct KernelArg {
  // SequenceOffsets: a jagged tensor's offsets (where each sequence starts, and the end), int64.
  // Workspace, WorkspaceOn: the launch's workspace (param -1) and whether it has one (a long), the
  // last two of a kernel with a dot, whose work-item form packs operands once for the programs that
  // share them (shared_packs.h).
  enum class Kind { Buffer, Offset, Extent, Size, Stride, Scalar, SequenceOffsets, Workspace, WorkspaceOn };
  Kind kind;
  int param = -1;
  int dim = -1;
  std::string symbol;  // Size/Stride: the symbol's name
};

struct KernelSource {
  std::string name;  // of the __kernel function
  std::string source;
  std::vector<KernelArg> args;
  std::map<std::string, SymbolAttrs> symbols;  // constexpr/meta symbols used: macros given with -D
  Expr private_bytes = Expr(0);  // private arrays of one program (an upper bound), over those symbols
  // The workspace a launch gives the programs that share packed dot operands (0: none), over them,
  // and its first bytes, the flags, which the host zeroes before each launch.
  Expr workspace_bytes = Expr(0);
  Expr workspace_flag_bytes = Expr(0);
  // The source runs a program on a work-group of NT_WORK_ITEMS work-items when built with
  // -DNT_WORK_ITEMS=<n> (lower/program_layout.h); without, on one work-item.
  bool work_group_capable = false;
  // The local memory a program on a work-group needs (an upper bound), over those symbols
  // kWorkItemsSymbol (the work-items of a program), kMmaLayoutSymbol, kStagesSymbol and kWgmmaDeferSymbol.
  Expr local_bytes = Expr(0);
  // The meta symbols that a build with -DNT_RUNTIME_META (and no -D of them) takes as kernel
  // arguments after `args`, in this order, so that one build serves every configuration (tuning's
  // candidates on a CPU, driver/tuning.cpp). Only an element-wise source whose meta symbols size no
  // array and appear in no preprocessor test offers them; empty otherwise.
  std::vector<std::string> runtime_meta;
};

// The symbol local_bytes names the work-items of a program by.
inline constexpr const char* kWorkItemsSymbol = "nt_work_items";
// The symbol local_bytes names by 1 a build with -DNT_MMA_LAYOUT (lower/program_layout.h), else 0:
// tensor-core dots pad their operands' rows in local memory.
inline constexpr const char* kMmaLayoutSymbol = "nt_mma_layout";

// The symbol local_bytes names NT_STAGES by: the buffers a k loop's tensor-core operands are
// loaded ahead into (codegen/c/emitter_pipeline.cpp; CUDA C only).
inline constexpr const char* kStagesSymbol = "nt_stages";
// The symbol local_bytes names NT_WGMMA_DEFER by: 1 in a build with NT_WGMMA (Hopper's warpgroup
// MMAs: a tensor-core build for sm_90a) on 256 work-items or more, else 0. A k loop whose dots'
// wgmma groups then run on into the next iteration keeps one buffer more than NT_STAGES
// (NT_ASYNC_BUFFERS; codegen/c/emitter_pipeline.cpp).
inline constexpr const char* kWgmmaDeferSymbol = "nt_wgmma_defer";
inline constexpr const char* kAsyncBuffersMacro = "NT_ASYNC_BUFFERS";
// NT_STAGES where a build does not set it (num_stages not given).
inline constexpr int kDefaultStages = 3;

// The comments that open the two bodies of a kernel that has two.
extern const char* const kWorkGroupBody;
extern const char* const kWorkItemBody;

// The macro that, defined to 1 at build, makes a stride symbol the constant 1.
std::string unit_stride_macro(const std::string& stride_symbol);
// The macro that, defined to 1 at build, says that tensor parameter `param`'s first element is
// 16-byte aligned, its last stride 1 and its other strides multiples of 16 bytes: its blocks' rows
// are then 16-byte aligned where their first column is a multiple of 16 bytes.
std::string aligned_rows_macro(int param);
// The macro holding a constexpr scalar parameter's value.
std::string constexpr_param_macro(int param);

// The source of `kernel` in `dialect` (codegen/dialect.h). A dialect without the work-item form
// (CUDA) gets the work-group and element-wise forms only, and a ValueError for a kernel that has
// neither.
KernelSource generate_source(const ir::Kernel& kernel, const Dialect& dialect);
// generate_source() in OpenCL C.
KernelSource generate_opencl(const ir::Kernel& kernel);

}  // namespace nt::codegen
