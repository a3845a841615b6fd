#include "codegen/c/emitter.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/c/block_ops.h"
#include "codegen/c/c_expr.h"
#include "codegen/c/c_types.h"
#include "codegen/c/dot_kernel.h"
#include "codegen/c/math_calls.h"
#include "codegen/c/mma_ptx.h"
#include "codegen/c/transposed_tiles.h"
#include "codegen/c/wgmma_ptx.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "lower/program_layout.h"
#include "lower/tensor_access.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

Emitter::Emitter(const Kernel& kernel, Mode mode, std::set<std::string> shared, const Dialect& dialect)
    : k_(kernel),
      d_(dialect),
      layout_(ir::grid_shape(kernel)),
      distribute_(mode == Mode::Elementwise),
      group_(mode == Mode::WorkGroup),
      must_share_(std::move(shared)) {
  layout_.add_bounds(env_);
  for (const std::string& name : ir::block_size_symbols(kernel)) env_.set(name, 1, std::nullopt);
  collect_equal_sizes();
  if (group_) {
    count_accesses();
    collect_mma_shapes();
    collect_row_families();
  }
  if (!group_ && !distribute_) collect_let_reductions();
}

using namespace nt::ir;

bool is_compile_time(const Expr& e) {
  for (const Expr& v : collect_vars(e)) {
    if (!v->attrs.constexpr_ && !v->attrs.meta) return false;
  }
  return true;
}

KernelSource Emitter::run() {
  KernelSource out;
  // A prefix of its own keeps the kernel apart from the helpers above;
  // characters C does not allow in names become '_'.
  out.name = "nt_kernel_" + k_.name;
  for (char& ch : out.name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  std::vector<std::string> params;
  std::vector<std::string> prologue;
  std::vector<std::string> jagged_lines;  // after every stride: a sequence may be read through them
  for (size_t i = 0; i < k_.params.size(); ++i) {
    const Param& p = k_.params[i];
    int pi = static_cast<int>(i);
    if (p.scalar) {
      if (p.constexpr_) continue;
      params.push_back(compute_type(p.dtype) + " nt_s" + std::to_string(i));
      out.args.push_back({KernelArg::Kind::Scalar, pi, -1, ""});
      continue;
    }
    std::string name = "nt_p" + std::to_string(i);
    params.push_back(std::string(d_.global_pointer) + storage_type(p.dtype) + "* " + name + "_data");
    out.args.push_back({KernelArg::Kind::Buffer, pi, -1, ""});
    params.push_back(kIndexType + " " + name + "_offset");
    out.args.push_back({KernelArg::Kind::Offset, pi, -1, ""});
    params.push_back(kIndexType + " " + name + "_extent");
    out.args.push_back({KernelArg::Kind::Extent, pi, -1, ""});
    prologue.push_back(std::string(d_.global_pointer) + storage_type(p.dtype) + "* " + name + " = " + name +
                       "_data + " + name + "_offset;");
    const Tensor& src = p.arranged->source_ref();
    for (size_t d = 0; d < src.ndim(); ++d) {
      const Expr& size = src.shape()[d];
      if (size.is_var() && !size->attrs.constexpr_ && !size->attrs.meta && !declared_.count(size->name)) {
        declared_.insert(size->name);
        params.push_back(kIndexType + " " + size->name);
        out.args.push_back({KernelArg::Kind::Size, pi, static_cast<int>(d), size->name});
      }
      std::string stride = src.stride_symbol(d)->name;
      if (declared_.count(stride)) continue;
      declared_.insert(stride);
      params.push_back(kIndexType + " " + stride + "_arg");
      out.args.push_back({KernelArg::Kind::Stride, pi, static_cast<int>(d), stride});
      std::string macro = unit_stride_macro(stride);
      prologue.push_back("const nt_index " + stride + " = " + macro + " ? 1 : " + stride + "_arg;");
      launch_macros_.push_back(macro);
    }
    if (src.jagged_dim()) {  // the program's sequence: where it starts, how long it is
      const std::string b = name + "_sequence", start = lower::jagged_seq_start(src)->name;
      if (!declared_.insert(start).second)
        throw ValueError("'" + p.name +
                         "' is arranged from a jagged Tensor another parameter is arranged from: "
                         "a jagged Tensor may be one parameter's only");
      params.push_back(std::string(d_.global_pointer) + "const long* " + name + "_seq_offsets");
      out.args.push_back({KernelArg::Kind::SequenceOffsets, pi, -1, ""});
      jagged_lines.push_back(
          "const nt_index " + b + " = " +
          c(simplify(lower::jagged_sequence(p, layout_, env_, k_.own_programs.count(pi) > 0), env_)) + ";");
      jagged_lines.push_back("const int " + b + "_exists = 0 <= " + b + " && " + b + " < " +
                             c(src.shape()[0]) + ";");
      jagged_lines.push_back("const nt_index " + start + " = " + b + "_exists ? " + name + "_seq_offsets[" +
                             b + "] : 0;");
      jagged_lines.push_back("const nt_index " + lower::jagged_seq_len(src)->name + " = " + b + "_exists ? " +
                             name + "_seq_offsets[" + b + " + 1] - " + start + " : 0;");
    }
  }
  prologue.insert(prologue.end(), jagged_lines.begin(), jagged_lines.end());
  std::vector<std::string> printed;
  for (const Expr& s : layout_.outermost_shape()) printed.push_back(c(simplify(s, env_)));
  for (const std::string& line : layout_.prologue(printed, distribute_ || group_, d_.global_id)) line_(line);
  for (const std::string& line : prologue) line_(line);
  after_prologue_ = body_.tellp();
  for (const auto& [a, b] : k_.assumed_equal) {
    if (!is_compile_time(a) || !is_compile_time(b)) {
      throw ValueError(
          "the sizes " + to_python(a) + " and " + to_python(b) +
          " must be equal, which can only be checked when both are constexpr; make them constexpr "
          "(e.g. shape_options={\"constexpr\": True})");
    }
    body_ << "#if (" << c(a) << ") != (" << c(b) << ")\n#error \"" << to_python(a) << " and " << to_python(b)
          << " must be equal\"\n#endif\n";
  }
  emit_list(k_.body);
  // Every form of a kernel with a dot takes the workspace (as_shared_array()'s), shared or not: its
  // forms, and its variants (parameters with programs of their own), take the same arguments.
  if (shared_kernel_.dots) {
    params.push_back(std::string(d_.global_pointer) + "int* nt_ws");
    out.args.push_back({KernelArg::Kind::Workspace, -1, -1, ""});
    params.push_back("long nt_ws_on");
    out.args.push_back({KernelArg::Kind::WorkspaceOn, -1, -1, ""});
    out.workspace_bytes = workspace_.bytes();
    out.workspace_flag_bytes = workspace_.flag_bytes();
  }

  std::ostringstream src;
  if (distribute_ || group_)
    src << lower::ProgramLayout::work_group_macros(d_.group_id, d_.local_id, d_.global_id);
  if (group_) src << lower::ProgramLayout::tile_macros(d_.barrier, d_.if_unrolls) << layout_macros_;
  // Tensor cores (codegen/c/mma_ptx.h), where a dot could use them.
  if (group_ && !mma_shapes_.empty()) {
    src << "#ifdef NT_MMA_SYNC\n" << respell(kMmaHelpers, d_);
    if (d_.mma_async_staging)
      src << respell(kMmaStagingHelpers, d_)
          << "#else\n#define NT_CP_ASYNC_COMMIT()\n#define NT_CP_ASYNC_WAIT(n)\n";
    src << "#endif\n";
    // Warpgroup MMAs: k loops' accumulations, and dots whose a registers may hold.
    if (!wgmma_shapes_.empty() || !row_warp_shapes_.empty()) src << respell(wgmma_helpers(), d_);
    // Dots' a fragments read from registers (registers_of_a()); -DNT_NO_HELD_A stages them instead.
    if (!row_warp_shapes_.empty())
      src << "#ifdef NT_NO_HELD_A\n#define NT_HELD_A 0\n#else\n#define NT_HELD_A 1\n#endif\n";
    if (pipelined_)
      src << "#ifndef NT_STAGES\n#define NT_STAGES " + std::to_string(kDefaultStages) + "\n#endif\n";
    // Warpgroup MMAs left running into the next iteration (emitter_pipeline.cpp) on two warpgroups
    // or more: on one, two programs an SM on fewer buffers measured faster.
    if (async_buffers_)
      src << "#if defined(NT_WGMMA) && NT_WORK_ITEMS >= 256\n#define NT_WGMMA_DEFER 1\n#else\n"
          << "#define NT_WGMMA_DEFER 0\n#endif\n#define " << kAsyncBuffersMacro
          << " (NT_STAGES + NT_WGMMA_DEFER)\n";
  }
  if (!workspace_.flag_bytes().is_int(0))  // where the slots begin (shared_packs.h)
    src << "#define NT_WS_SLOTS (" << c(workspace_.flag_bytes()) << ")\n";
  for (const std::string& m : launch_macros_) {
    src << "#ifndef " << m << "\n#define " << m << " 0\n#endif\n";
  }
  if (uses_transposes_)
    src << kIfWideVectors << "\n"
        << transpose_helper(16, d_) << "#else\n"
        << transpose_helper(8, d_) << "#endif\n";
  // Clang (PoCL) may use 512-bit vectors in this kernel: see vector_hint().
  // A loop the vectoriser cannot widen as hinted stays as it was, without a warning. Conditions
  // over constexpr parameters (macros given at build: `0 <= index && ...`) are constant by design.
  src << "\n#if defined(__clang__)\n#pragma clang diagnostic ignored \"-Wpass-failed\"\n"
      << "#pragma clang diagnostic ignored \"-Wconstant-logical-operand\"\n"
      << "__attribute__((min_vector_width(512)))\n#endif\n";
  // A parameter both stored and loaded could be read by one work-item where another wrote it
  // (a transposed or shifted read, say): with no barrier between them, not distributable.
  for (int param : stored_params_) distributable_ = distributable_ && !loaded_params_.count(param);
  std::string body = body_.str();
  out.runtime_meta = runtime_meta(src.str() + body);
  src << d_.kernel << " " << out.name << "(";
  for (size_t i = 0; i < params.size(); ++i) src << (i ? ",\n    " : "") << params[i];
  if (!out.runtime_meta.empty()) src << "\n#ifdef NT_RUNTIME_META";
  for (size_t i = 0; i < out.runtime_meta.size(); ++i)
    src << "\n    " << (params.empty() && i == 0 ? "" : ", ") << kIndexType << " nt_meta_"
        << out.runtime_meta[i];
  if (!out.runtime_meta.empty()) src << "\n#endif\n";
  src << ") {\n";
  if (!out.runtime_meta.empty()) {
    src << "#ifdef NT_RUNTIME_META\n";
    for (const std::string& name : out.runtime_meta) src << "#define " << name << " nt_meta_" << name << "\n";
    src << "#endif\n";
  }
  if (!local_decls_.empty() && !d_.dynamic_local_base.empty()) src << "  " << d_.dynamic_local_base << "\n";
  for (const std::string& line : local_decls_) src << "  " << line << "\n";
  std::string next_program;  // emit_prefetches()
  for (const std::string& line : next_program_lines_) next_program += "  " + line + "\n";
  body.insert(static_cast<size_t>(after_prologue_), next_program);
  src << body << "}\n";
  kernel_text_ = src.str();
  out.source = preambles(d_, kernel_text_) + "\n" + kernel_text_;
  out.symbols = symbols_;
  out.private_bytes = simplify(private_bytes_);
  out.local_bytes = simplify(local_bytes_);
  out.work_group_capable = distribute_ && distributable_;
  return out;
}

std::vector<std::string> Emitter::runtime_meta(const std::string& text) const {
  // Only a distributable element-wise source of a target with a work-item form (OpenCL C): its
  // meta symbols size loops and offsets, never an array, and no preprocessor line may test one.
  std::vector<std::string> names;
  if (!distribute_ || !distributable_ || !d_.work_item_form) return names;
  for (const auto& [name, attrs] : symbols_)
    if (attrs.meta) names.push_back(name);
  auto word_in = [](const std::string& line, const std::string& name) {
    for (size_t at = line.find(name); at != std::string::npos; at = line.find(name, at + 1)) {
      auto is_name = [&](size_t i) {
        return std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_';
      };
      if ((at == 0 || !is_name(at - 1)) && (at + name.size() == line.size() || !is_name(at + name.size())))
        return true;
    }
    return false;
  };
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] != '#') continue;
    for (const std::string& name : names)
      if (word_in(line, name)) return {};
  }
  return names;
}

bool Emitter::distributable() const { return distributable_; }

const std::string& Emitter::kernel_text() const { return kernel_text_; }

const std::set<std::string>& Emitter::misaligned() const { return misaligned_; }

void Emitter::line_(const std::string& s) { body_ << std::string(indent_ * 2, ' ') << s << "\n"; }

void Emitter::open(const std::string& s) {
  line_(s + " {");
  ++indent_;
}

void Emitter::close(const std::string& s) {
  --indent_;
  line_(s);
}

std::string Emitter::fresh(const std::string& prefix) {
  std::string name = prefix + std::to_string(counter_++);
  tables_.note_declared(name);
  return name;
}

std::string Emitter::c(const Expr& e, const std::string& widen) {
  for (const Expr& v : collect_vars(e)) {
    if (v->attrs.constexpr_ || v->attrs.meta) symbols_.emplace(v->name, v->attrs);
  }
  return c_expr(tables_.tabulated(e), env_, widen);
}

std::string Emitter::array_size(const std::vector<Expr>& shape, const std::string& what,
                                std::optional<DType> dtype) {
  distributable_ = false;
  Expr n = Expr(1);
  for (const Expr& s : shape) {
    if (!is_compile_time(s)) {
      throw ValueError(what + " has the block shape " + shape_string(shape) +
                       ", which depends on sizes known only at launch; block shapes that must be "
                       "held in memory must be made of constexpr or meta symbols");
    }
    n = mul(n, s);
  }
  if (dtype) {
    int bytes = compute_type(*dtype) == "double" || compute_type(*dtype) == "long" ? 8 : 4;
    private_bytes_ = add(private_bytes_, mul(n, bytes));
  }
  return c(simplify(n, env_));
}

Expr Emitter::flat_index(const std::vector<Expr>& shape, const std::vector<Expr>& index) {
  Expr flat = Expr(0);
  for (size_t d = 0; d < shape.size(); ++d) flat = add(mul(flat, shape[d]), index[d]);
  return simplify(flat, env_);
}

std::string Emitter::element_of(const std::string& name, const Type& type, const std::vector<Expr>& index) {
  if (type.is_scalar()) return name;
  if (auto d = distributed_.find(name); d != distributed_.end()) {
    // A work-item holds its own elements only: read where the nest of its tile layout is.
    if (aligned_ && aligned_->shape == shape_key(type.shape) && same_index(aligned_->index, index))
      return name + "[" + aligned_->slot + "]";
    if (auto slot = slice_element(name, type, index)) return *slot;
    misaligned_.insert(d->second);
    return name + "[0]";
  }
  return name + "[" + c(flat_index(type.shape, index)) + "]";
}

void Emitter::emit_line(const std::string& s) { line_(s); }

void Emitter::emit_open(const std::string& s) { open(s); }

void Emitter::emit_close() { close(); }

void Emitter::emit_else() {
  close("} else {");
  ++indent_;
}

std::string Emitter::fresh_name(const std::string& prefix) { return fresh(prefix); }

std::string Emitter::index_c(const Expr& e) { return c(simplify(e, env_)); }

std::string Emitter::element(const Value& v, const std::vector<Expr>& index) { return elem(v, index); }

void Emitter::each_index(const std::vector<Expr>& shape,
                         const std::function<void(const std::vector<Expr>&)>& body) {
  loops(shape, body);
}

std::string Emitter::array_of(const Value& v, DType dtype, const std::string& what) {
  return as_array(v, dtype, what);
}

void Emitter::declare_array(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                            const std::string& what) {
  new_array(name, shape, dtype, what);
}

void Emitter::declare_scalar(const std::string& name, DType dtype) { new_scalar(name, dtype); }

void Emitter::declare_scratch(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                              const std::string& what) {
  line_(compute_type(dtype) + " " + name + "[" + array_size(shape, what, dtype) + "];");
}

std::string Emitter::count_c(const std::vector<Expr>& shape) { return array_size(shape, "a block"); }

std::string Emitter::flat_c(const std::vector<Expr>& shape, const std::vector<Expr>& index) {
  return c(flat_index(shape, index));
}

void Emitter::materialize(const Value& v) { materialize_parts(v); }

std::string Emitter::materialized_name(const Value& v) {
  auto it = materialized_.find(v.get());
  return it == materialized_.end() ? "" : it->second;
}

void Emitter::set_materialized(const Value& v, const std::string& name) {
  materialized_[v.get()] = name;
  keep_alive_.push_back(v);
}

void Emitter::set_combine_args(const std::vector<std::string>& names) { combine_args_ = names; }

std::string Emitter::combine_arg(int index) { return combine_args_.at(index); }

void Emitter::bind_let(int id, const std::string& name) { lets_[id] = name; }

bool Emitter::let_used(int id) {
  if (!let_uses_) {
    struct Uses : IRVisitor {
      using IRVisitor::visit;
      void visit(const Value& v) override {
        if (v->kind == ValueKind::LetRef) ids.insert(v->id);
        IRVisitor::visit(v);
      }
      std::set<int> ids;
    } uses;
    uses.visit(k_.body);
    let_uses_ = uses.ids;
  }
  return let_uses_->count(id) > 0;
}

const Param& Emitter::param(int index) { return k_.params.at(index); }

const Dialect& Emitter::dialect() { return d_; }

int Emitter::program_dims() { return static_cast<int>(layout_.outermost_shape().size()); }

}  // namespace nt::codegen
