#include "codegen/opencl/kernel_source.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/opencl/block_ops.h"
#include "codegen/opencl/c_expr.h"
#include "codegen/opencl/c_types.h"
#include "codegen/opencl/dot_kernel.h"
#include "codegen/opencl/math_calls.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "lower/program_layout.h"
#include "lower/tensor_access.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

using namespace nt::ir;

namespace {

bool is_compile_time(const Expr& e) {
  for (const Expr& v : collect_vars(e)) {
    if (!v->attrs.constexpr_ && !v->attrs.meta) return false;
  }
  return true;
}

// How the emitted source runs a program (lower/program_layout.h).
enum class Mode {
  WorkItem,     // on one work-item
  Elementwise,  // on NT_WORK_ITEMS work-items, each taking every NT_WORK_ITEMS-th element of the
                // innermost dimension of every nest; or on one (distributable() says which)
  WorkGroup,    // on NT_WORK_ITEMS > 1 work-items in tile layouts, sharing through local memory
};

class Emitter : public EmitContext {
 public:
  // `shared` (Mode::WorkGroup): the values (value_key()) to hold in local memory though
  // read only where they are computed; see misaligned().
  Emitter(const Kernel& kernel, Mode mode, std::set<std::string> shared = {})
      : k_(kernel),
        layout_(ir::grid_shape(kernel)),
        distribute_(mode == Mode::Elementwise),
        group_(mode == Mode::WorkGroup),
        must_share_(std::move(shared)) {
    layout_.add_bounds(env_);
    for (const std::string& name : ir::block_size_symbols(kernel)) env_.set(name, 1, std::nullopt);
    if (group_) count_accesses();
  }

  KernelSource run() {
    KernelSource out;
    // A prefix of its own keeps the kernel apart from the helpers above;
    // characters C does not allow in names become '_'.
    out.name = "nt_kernel_" + k_.name;
    for (char& ch : out.name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    std::vector<std::string> params;
    std::vector<std::string> prologue;
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
      params.push_back("__global " + storage_type(p.dtype) + "* " + name + "_data");
      out.args.push_back({KernelArg::Kind::Buffer, pi, -1, ""});
      params.push_back("long " + name + "_offset");
      out.args.push_back({KernelArg::Kind::Offset, pi, -1, ""});
      params.push_back("long " + name + "_extent");
      out.args.push_back({KernelArg::Kind::Extent, pi, -1, ""});
      prologue.push_back("__global " + storage_type(p.dtype) + "* " + name + " = " + name + "_data + " +
                         name + "_offset;");
      const Tensor& src = p.arranged->source_ref();
      for (size_t d = 0; d < src.ndim(); ++d) {
        const Expr& size = src.shape()[d];
        if (size.is_var() && !size->attrs.constexpr_ && !size->attrs.meta && !declared_.count(size->name)) {
          declared_.insert(size->name);
          params.push_back("long " + size->name);
          out.args.push_back({KernelArg::Kind::Size, pi, static_cast<int>(d), size->name});
        }
        std::string stride = src.stride_symbol(d)->name;
        if (declared_.count(stride)) continue;
        declared_.insert(stride);
        params.push_back("long " + stride + "_arg");
        out.args.push_back({KernelArg::Kind::Stride, pi, static_cast<int>(d), stride});
        std::string macro = unit_stride_macro(stride);
        prologue.push_back("const long " + stride + " = " + macro + " ? 1 : " + stride + "_arg;");
        unit_macros_.push_back(macro);
      }
    }
    std::vector<std::string> printed;
    for (const Expr& s : layout_.outermost_shape()) printed.push_back(c(simplify(s, env_)));
    for (const std::string& line : layout_.prologue(printed, distribute_ || group_)) line_(line);
    for (const std::string& line : prologue) line_(line);
    for (const auto& [a, b] : k_.assumed_equal) {
      if (!is_compile_time(a) || !is_compile_time(b)) {
        throw ValueError(
            "the sizes " + to_python(a) + " and " + to_python(b) +
            " must be equal, which can only be checked when both are constexpr; make them constexpr "
            "(e.g. shape_options={\"constexpr\": True})");
      }
      body_ << "#if (" << c(a) << ") != (" << c(b) << ")\n#error \"" << to_python(a) << " and "
            << to_python(b) << " must be equal\"\n#endif\n";
    }
    emit_list(k_.body);

    std::ostringstream src;
    if (distribute_ || group_) src << lower::ProgramLayout::work_group_macros();
    if (group_) src << lower::ProgramLayout::tile_macros() << layout_macros_;
    for (const std::string& m : unit_macros_) {
      src << "#ifndef " << m << "\n#define " << m << " 0\n#endif\n";
    }
    // Clang (PoCL) may use 512-bit vectors in this kernel: see vector_hint().
    // A loop the vectoriser cannot widen as hinted stays as it was, without a warning.
    src << "\n#if defined(__clang__)\n#pragma clang diagnostic ignored \"-Wpass-failed\"\n"
        << "__attribute__((min_vector_width(512)))\n#endif\n";
    src << "__kernel void " << out.name << "(";
    for (size_t i = 0; i < params.size(); ++i) src << (i ? ",\n    " : "") << params[i];
    src << ") {\n";
    for (const std::string& line : local_decls_) src << "  " << line << "\n";
    src << body_.str() << "}\n";
    kernel_text_ = src.str();
    out.source = std::string(kPreamble) + kMathPreamble + kAtomicPreamble + "\n" + kernel_text_;
    out.symbols = symbols_;
    out.private_bytes = simplify(private_bytes_);
    out.local_bytes = simplify(local_bytes_);
    // A parameter both stored and loaded could be read by one work-item where another wrote it
    // (a transposed or shifted read, say): with no barrier between them, not distributable.
    for (int param : stored_params_) distributable_ = distributable_ && !loaded_params_.count(param);
    out.work_group_capable = distribute_ && distributable_;
    return out;
  }

  // Could every nest of the kernel be spread over a work-group's work-items? Only when
  // each element is computed and stored by one work-item with nothing shared between
  // them: no private arrays (blocks held in memory), reductions, dots, block operations,
  // scatters, pointer stores, atomics, prints or asserts (those need local memory and
  // barriers: not yet), and no parameter stored twice or both stored and loaded (what one
  // work-item wrote another could read). Parameters that alias at launch (one tensor passed
  // twice) are not seen: as in upstream, a program's reads of what it wrote are unordered.
  bool distributable() const { return distributable_; }
  // The source without the preamble of helpers: the macros and the __kernel.
  const std::string& kernel_text() const { return kernel_text_; }
  // Mode::WorkGroup: the values held by the work-items that compute them (value_key()) which
  // the kernel reads elsewhere too (another element, another shape, a reduction, a block
  // operation): the source is wrong until they are emitted again as shared.
  const std::set<std::string>& misaligned() const { return misaligned_; }

 private:
  // --- output -------------------------------------------------------------

  void line_(const std::string& s) { body_ << std::string(indent_ * 2, ' ') << s << "\n"; }
  void open(const std::string& s) {
    line_(s + " {");
    ++indent_;
  }
  void close(const std::string& s = "}") {
    --indent_;
    line_(s);
  }
  std::string fresh(const std::string& prefix) { return prefix + std::to_string(counter_++); }
  std::string c(const Expr& e) {
    for (const Expr& v : collect_vars(e)) {
      if (v->attrs.constexpr_ || v->attrs.meta) symbols_.emplace(v->name, v->attrs);
    }
    return c_expr(e, env_);
  }

  // --- shapes and arrays --------------------------------------------------

  // The element count of a private array of `shape`, which must be known at
  // build time; declaring one (`dtype` given) adds to the private bytes.
  std::string array_size(const std::vector<Expr>& shape, const std::string& what,
                         std::optional<DType> dtype = std::nullopt) {
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

  Expr flat_index(const std::vector<Expr>& shape, const std::vector<Expr>& index) {
    Expr flat = Expr(0);
    for (size_t d = 0; d < shape.size(); ++d) flat = add(mul(flat, shape[d]), index[d]);
    return simplify(flat, env_);
  }

  std::string element_of(const std::string& name, const Type& type, const std::vector<Expr>& index) {
    if (type.is_scalar()) return name;
    if (auto d = distributed_.find(name); d != distributed_.end()) {
      // A work-item holds its own elements only: read where the nest of its tile layout is.
      if (aligned_ && aligned_->shape == shape_key(type.shape) && same_index(aligned_->index, index))
        return name + "[" + aligned_->slot + "]";
      misaligned_.insert(d->second);
      return name + "[0]";
    }
    return name + "[" + c(flat_index(type.shape, index)) + "]";
  }

  // --- loop nests ---------------------------------------------------------

  // Emits loops over `shape`; `body` gets the element index.
  void loops(const std::vector<Expr>& shape, const std::function<void(const std::vector<Expr>&)>& body,
             size_t d = 0, std::vector<Expr> index = {}, bool plain = false) {
    if (d == shape.size()) {
      body(index);
      return;
    }
    if (group_ && d == 0 && !plain) {
      bool fixed = true;
      for (const Expr& s : shape) fixed = fixed && is_compile_time(s);
      if (fixed && !serial_) {
        tile_loops(shape, body);
        return;
      }
      // Nothing held by a work-item is at the element of a nest of another layout.
      auto saved = aligned_;
      aligned_.reset();
      loops(shape, body, 0, index, /*plain=*/true);
      aligned_ = saved;
      return;
    }
    std::string v = fresh("e");
    SymbolAttrs attrs;
    attrs.lower_bound = 0;
    env_.set(v, 0, std::nullopt);
    env_.set_symbolic(v, Expr(0), sub(shape[d], 1));
    index.push_back(var(v, attrs));
    std::streampos hint_at = body_.tellp(), loop_at = hint_at;
    if (d + 1 == shape.size() && vector_trees_) {
      const std::vector<Value>* trees = vector_trees_;
      vector_trees_ = nullptr;  // the innermost loop of this nest only
      vector_hint(*trees, vector_target_, index, v);
      loop_at = body_.tellp();
    }
    std::string extent = c(simplify(shape[d], env_));
    if ((distribute_ || (group_ && !serial_)) && d + 1 == shape.size()) {  // this work-item's elements: see run()
      open("for (long " + v + " = NT_LANE; " + v + " < " + extent + "; " + v + " += NT_WORK_ITEMS)");
    } else {
      open("for (long " + v + " = 0; " + v + " < " + extent + "; ++" + v + ")");
    }
    std::streampos body_at = body_.tellp();
    loops(shape, body, d + 1, index, plain);
    close();
    if (loop_at != hint_at) {
      // The body has loops of its own (a reduction's, say): the hint is not for this loop.
      std::string text = body_.str();
      if (text.find("for (", static_cast<size_t>(body_at)) != std::string::npos) {
        text.erase(static_cast<size_t>(hint_at), static_cast<size_t>(loop_at - hint_at));
        body_.str(text);
        body_.seekp(0, std::ios_base::end);
      }
    }
  }

  // A loop nest over `shape` whose body reads `trees` (and writes through
  // `target`, if any): a fast path without masks when every block involved
  // is wholly in bounds.
  // `hint`: whether the innermost loop may get a vector-width hint (vector_hint()); not for
  // nests that write through positions or pointers, nor stores of float16/bfloat16.
  void nest(const std::vector<Expr>& shape, const std::vector<Value>& trees,
            const lower::TensorAccess* target, const std::function<void(const std::vector<Expr>&)>& body,
            bool hint = true) {
    std::vector<std::string> tests;
    std::set<std::string> seen;
    bool never_fast = false;  // a corner test that is constant false: only the masked path
    auto add_tests = [&](const lower::TensorAccess& a) {
      for (const Expr& t : a.block_test) {
        std::string s = c(t);
        if (s == "0") never_fast = true;
        if (s != "1" && seen.insert(s).second) tests.push_back(s);
      }
    };
    for (const Value& t : trees) {
      for_each_load(t, [&](const Value& load) { add_tests(access_of(load)); });
    }
    if (target) add_tests(*target);
    if (tests.empty() || never_fast) {
      loops(shape, body);
      return;
    }
    std::string all;
    for (size_t i = 0; i < tests.size(); ++i) all += (i ? " && " : "") + tests[i];
    open("if (" + all + ")");
    fast_ = true;
    vector_trees_ = hint && !group_ ? &trees : nullptr;
    vector_target_ = target;
    loops(shape, body);
    vector_trees_ = nullptr;
    vector_target_ = nullptr;
    fast_ = false;
    close("} else {");
    ++indent_;
    loops(shape, body);
    close();
  }

  // Loads read by a tree where it is emitted (not inside materialised nodes).
  void for_each_load(const Value& v, const std::function<void(const Value&)>& f) {
    if (materialized_.count(v.get())) return;
    if (v->kind == ValueKind::Load) f(v);
    for (const Value& o : v->operands) for_each_load(o, f);
  }

  // --- the vector width of unmasked inner loops ------------------------------

  // The coefficient of `v` in `e` when `e` is affine in `v` (else nullopt).
  static std::optional<Expr> coefficient(const Expr& e, const std::string& v) {
    bool uses = false;
    for (const Expr& x : collect_vars(e)) uses = uses || x->name == v;
    if (!uses) return Expr(0);
    if (e.is_var()) return Expr(1);
    if (e->kind != ExprKind::Binary && e->kind != ExprKind::Unary) return std::nullopt;
    if (e->kind == ExprKind::Unary) {
      if (e->unary_op != UnaryOp::Neg) return std::nullopt;
      auto a = coefficient(e->operands[0], v);
      return a ? std::optional<Expr>(neg(*a)) : std::nullopt;
    }
    auto a = coefficient(e->operands[0], v), b = coefficient(e->operands[1], v);
    if (!a || !b) return std::nullopt;
    switch (e->binary_op) {
      case BinaryOp::Add:
        return add(*a, *b);
      case BinaryOp::Sub:
        return sub(*a, *b);
      case BinaryOp::Mul:
        if (a->is_int(0)) return mul(e->operands[0], *b);
        if (b->is_int(0)) return mul(*a, e->operands[1]);
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }

  // Does element `index` of `v` read memory at unit (or zero) steps of the variable `inner`,
  // with nothing but elementwise operations? Collects the unit-stride macros that must hold
  // and whether any value is 64-bit.
  bool unit_steps(const Value& v, const std::vector<Expr>& index, const std::string& inner,
                  std::set<std::string>& macros, bool& wide) {
    DType dt = v->type.dtype;
    if (dt == DType::float64 || dt == DType::int64 || dt == DType::uint64) wide = true;
    if (materialized_.count(v.get())) return true;  // a private array read at the element
    switch (v->kind) {
      case ValueKind::Constant:
      case ValueKind::ScalarParam:
      case ValueKind::LoopVar:
      case ValueKind::ProgramId:
      case ValueKind::Arange:
      case ValueKind::LetRef:
      case ValueKind::LocalRef:
        return true;
      case ValueKind::Full:
        return unit_steps(v->operands[0], {}, inner, macros, wide);
      case ValueKind::Unary:
      case ValueKind::Binary:
      case ValueKind::Where:
      case ValueKind::Cast:
      case ValueKind::Fma:
      case ValueKind::Call:
        for (const Value& o : v->operands) {
          size_t rank = o->type.shape.size();
          if (rank != 0 && rank != index.size()) return false;
          if (!unit_steps(o, rank ? index : std::vector<Expr>{}, inner, macros, wide)) return false;
        }
        return true;
      case ValueKind::ExpandDims: {
        std::vector<Expr> i = index;
        i.erase(i.begin() + v->axis);
        return unit_steps(v->operands[0], i, inner, macros, wide);
      }
      case ValueKind::Broadcast: {
        std::vector<Expr> i = index;
        for (size_t d = 0; d < i.size(); ++d) {
          if (v->operands[0]->type.shape[d].is_int(1) && !v->type.shape[d].is_int(1)) i[d] = Expr(0);
        }
        return unit_steps(v->operands[0], i, inner, macros, wide);
      }
      case ValueKind::Load: {
        const lower::TensorAccess& a = access_of(v);
        if (a.never) return true;
        // vload_half and bfloat16's shifts at 16 lanes measured 2x slower than PoCL's own choice.
        DType stored = k_.params[v->param].dtype;
        if (stored == DType::float16 || stored == DType::bfloat16) return false;
        auto step = coefficient(simplify(a.offset_at(index), env_), inner);
        if (!step) return false;
        Expr s = simplify(*step, env_);
        if (s.is_int(0) || s.is_int(1)) return true;
        if (!s.is_var() || !declared_.count(s->name)) return false;
        std::string macro = unit_stride_macro(s->name);
        if (std::find(unit_macros_.begin(), unit_macros_.end(), macro) == unit_macros_.end()) return false;
        macros.insert(macro);
        return true;
      }
      default:
        return false;
    }
  }

  // Before the innermost loop of an unmasked nest whose loads and store step through memory
  // by one element (when the unit-stride macros say so): a hint to vectorise it 512 bits
  // wide. PoCL's vectoriser prefers 256-bit vectors on AVX-512 CPUs; the kernel's
  // min_vector_width(512) (see run()) makes the wider ones legal, and on this project's CPUs
  // they do twice the work per instruction. Loops that do not qualify keep the vectoriser's
  // own choice.
  void vector_hint(const std::vector<Value>& trees, const lower::TensorAccess* target,
                   const std::vector<Expr>& index, const std::string& inner) {
    std::set<std::string> macros;
    bool wide = false;
    for (const Value& t : trees) {
      if (!unit_steps(t, index, inner, macros, wide)) return;
    }
    if (target) {
      auto step = coefficient(simplify(target->offset_at(index), env_), inner);
      if (!step) return;
      Expr s = simplify(*step, env_);
      if (!s.is_int(1)) {
        if (!s.is_var() || !declared_.count(s->name)) return;
        std::string macro = unit_stride_macro(s->name);
        if (std::find(unit_macros_.begin(), unit_macros_.end(), macro) == unit_macros_.end()) return;
        macros.insert(macro);
      }
    }
    std::string test = "defined(__clang__)";
    for (const std::string& m : macros) test += " && " + m;
    line_("#if " + test);
    line_(std::string("#pragma clang loop vectorize_width(") + (wide ? "8" : "16") + ")");
    line_("#endif");
  }


  // --- the work-group layout (Mode::WorkGroup) ---------------------------------
  //
  // Every nest over a block shape known at build time walks the elements that the tile
  // layout of that shape (lower::ProgramLayout::tile_layout) gives this work-item. A value
  // read only at the element where it is computed (a Let, a local, a dot's result) stays
  // with the work-items that compute it, in private slots ("distributed"); any other held
  // value (reduction results, dot operands, block operations' arrays, and values read
  // elsewhere: misaligned()) lives in local memory ("shared"), declared at kernel scope,
  // with a barrier before and after every nest that writes it. Block operations and
  // statements with side effects beyond stores run on work-item 0 (serial_).

  struct Aligned {
    std::string shape;               // shape_key() of the nest's shape
    std::vector<std::string> index;  // the nest's index variables
    std::string slot;                // the work-item's slot of the element, as C
  };

  std::string shape_key(const std::vector<Expr>& shape) {
    std::string key = "[";
    for (const Expr& s : shape) key += c(simplify(s, env_)) + ",";
    return key + "]";
  }

  static bool same_index(const std::vector<std::string>& names, const std::vector<Expr>& index) {
    if (names.size() != index.size()) return false;
    for (size_t d = 0; d < names.size(); ++d) {
      if (!index[d].is_var() || index[d]->name != names[d]) return false;
    }
    return true;
  }

  // The key a held value goes by in must_share_/misaligned_.
  static std::string let_key(int id) { return "let" + std::to_string(id); }
  static std::string local_key(int id) { return "local" + std::to_string(id); }
  static std::string node_key(const Value& v) {
    return "node" + std::to_string(reinterpret_cast<uintptr_t>(v.get()));
  }

  // The id of the tile layout of `shape` (its macros NT_TX<id>, ...).
  int tile_layout(const std::vector<Expr>& shape) {
    std::string key = shape_key(shape);
    auto it = layouts_.find(key);
    if (it != layouts_.end()) return it->second;
    int id = static_cast<int>(layouts_.size());
    std::string rows = "1";
    for (size_t d = 0; d + 1 < shape.size(); ++d) rows += " * (" + c(simplify(shape[d], env_)) + ")";
    std::string columns = shape.empty() ? "1" : c(simplify(shape.back(), env_));
    layout_macros_ += lower::ProgramLayout::tile_layout(id, rows, columns);
    layouts_.emplace(key, id);
    return id;
  }

  // The nest over `shape` (sizes known at build time) in its tile layout.
  void tile_loops(const std::vector<Expr>& shape, const std::function<void(const std::vector<Expr>&)>& body) {
    std::string n = std::to_string(tile_layout(shape));
    std::string tx = fresh("nt_tx"), ty = fresh("nt_ty"), r = fresh("nt_r"), col = fresh("nt_c");
    std::string row = fresh("nt_row");
    open("");
    line_("const long " + tx + " = NT_LANE % NT_TX" + n + ", " + ty + " = NT_LANE / NT_TX" + n + ";");
    line_("NT_UNROLL");
    open("for (int " + r + " = 0; " + r + " < NT_R" + n + "; ++" + r + ")");
    line_("const long " + row + " = " + ty + " + NT_TY" + n + " * " + r + ";");
    line_("NT_UNROLL");
    open("for (int " + col + " = 0; " + col + " < NT_C" + n + "; ++" + col + ")");
    std::vector<Expr> index(shape.size());
    std::vector<std::string> names(shape.size());
    SymbolAttrs attrs;
    attrs.lower_bound = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      names[d] = fresh("e");
      env_.set(names[d], 0, std::nullopt);
      env_.set_symbolic(names[d], Expr(0), sub(shape[d], 1));
      index[d] = var(names[d], attrs);
    }
    line_("const long " + names.back() + " = " + tx + " + NT_TX" + n + " * " + col + ";");
    open("if (" + row + " < NT_ROWS" + n + " && " + names.back() + " < NT_COLS" + n + ")");
    // The row's digits over the leading sizes, the last fastest.
    std::string rest = row;
    for (size_t d = shape.size() - 1; d-- > 0;) {
      std::string size = c(simplify(shape[d], env_));
      line_("const long " + names[d] + " = " + (d == 0 ? rest : rest + " % (" + size + ")") + ";");
      if (d > 0) {
        std::string next = fresh("nt_rest");
        line_("const long " + next + " = " + rest + " / (" + size + ");");
        rest = next;
      }
    }
    auto saved = aligned_;
    aligned_ = Aligned{shape_key(shape), names, "(" + r + " * NT_C" + n + " + " + col + ")"};
    body(index);
    aligned_ = saved;
    close();
    close();
    close();
    close();
  }

  void barrier() {
    if (group_ && !serial_) line_("NT_BARRIER();");
  }

  // A held block `name` of `shape`: in Mode::WorkGroup shared (at kernel scope, in local
  // memory) unless `key` names a value that may stay distributed, else a private array.
  void new_array(const std::string& name, const std::vector<Expr>& shape, DType dtype, const std::string& what,
                 const std::string& key = "") {
    std::string ct = compute_type(dtype);
    if (!group_) {
      line_(ct + " " + name + "[" + array_size(shape, what, dtype) + "];");
      return;
    }
    if (!key.empty() && !serial_ && !must_share_.count(key)) {
      array_size(shape, what);  // the sizes must be known at build time
      std::string n = std::to_string(tile_layout(shape));
      line_(ct + " " + name + "[NT_R" + n + " * NT_C" + n + "];");
      distributed_[name] = key;
      distributed_shapes_[name] = shape_key(shape);
      return;
    }
    std::string count = array_size(shape, what);
    Expr n = Expr(1);
    for (const Expr& s : shape) n = mul(n, s);
    local_bytes_ = add(local_bytes_, mul(n, static_cast<int64_t>(c_size(ct))));
    local_decls_.push_back("__local " + ct + " " + name + "[" + count + "];");
  }

  // A scalar that work-item 0 may set for all (Mode::WorkGroup: in local memory).
  void new_scalar(const std::string& name, DType dtype) {
    std::string ct = compute_type(dtype);
    if (!group_) {
      line_(ct + " " + name + ";");
      return;
    }
    local_bytes_ = add(local_bytes_, Expr(static_cast<int64_t>(c_size(ct))));
    local_decls_.push_back("__local " + ct + " " + name + ";");
  }

  static int c_size(const std::string& ct) {
    return ct == "double" || ct == "long" || ct == "ulong" ? 8 : 4;
  }

  bool is_distributed(const std::string& name) const { return distributed_.count(name) > 0; }

  // Code that one work-item runs for the work-group (block operations, atomics, prints):
  // what it writes is shared, seen by all after the barrier.
  void on_first_work_item(const std::function<void()>& f) {
    if (!group_ || serial_) {
      f();
      return;
    }
    barrier();
    open("if (NT_LANE == 0)");
    serial_ = true;
    f();
    serial_ = false;
    close();
    barrier();
  }

  // Which parameters the kernel loads, and how often it stores each: a store to one that is
  // loaded or stored again ends with a barrier, so that no work-item reads an element before
  // another has written it.
  void count_accesses() {
    struct Accesses : IRVisitor {
      using IRVisitor::visit;
      void visit(const Value& v) override {
        if (v->kind == ValueKind::Load || v->kind == ValueKind::LoadAt || v->kind == ValueKind::LoadPointer)
          loaded.insert(v->param);
        IRVisitor::visit(v);
      }
      void visit(const Stmt& s) override {
        if (s->kind == StmtKind::Store || s->kind == StmtKind::StoreAt || s->kind == StmtKind::StorePointer ||
            s->kind == StmtKind::AtomicAdd || s->kind == StmtKind::Atomic)
          ++stored[s->param];
        IRVisitor::visit(s);
      }
      std::set<int> loaded;
      std::map<int, int> stored;
    } accesses;
    accesses.visit(k_.body);
    for (const auto& [param, count] : accesses.stored) {
      if (count > 1 || accesses.loaded.count(param)) reread_params_.insert(param);
    }
  }

  void after_store(int param) {
    if (group_ && reread_params_.count(param)) barrier();
  }

  // A reduction over a work-group: each work-item folds a strided part of a row into a
  // partial result, the partials meet in local memory in a tree, and the result goes to a
  // shared array (a shared scalar for a full reduction).
  void emit_reduce_group(const Value& v) {
    auto fn = static_cast<ReduceFn>(v->op);
    const Value& x = v->operands[0];
    DType in = x->type.dtype;
    std::string ct = compute_type(v->type.dtype), xt = compute_type(in);
    bool f = dtype_is_float(in);
    bool arg = fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin;
    std::string at = arg ? xt : ct;  // the partials' type
    std::string init = reduce_init(fn, in);
    const std::vector<Expr>& shape = x->type.shape;
    std::vector<Expr> kept, reduced;
    for (size_t d = 0; d < shape.size(); ++d) {
      bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
      (r ? reduced : kept).push_back(shape[d]);
    }
    std::string name = fresh("nt_red");
    bool scalar = v->type.is_scalar();
    if (scalar) {
      new_scalar(name, v->type.dtype);
    } else {
      new_array(name, v->type.shape, v->type.dtype, "a reduction result");
    }
    Expr kept_count = Expr(1), reduced_count = Expr(1);
    for (const Expr& s : kept) kept_count = mul(kept_count, s);
    for (const Expr& s : reduced) reduced_count = mul(reduced_count, s);
    std::string K = c(simplify(kept_count, env_)), R = c(simplify(reduced_count, env_));
    std::string parts = fresh("nt_parts"), best_parts = fresh("nt_bests");
    local_decls_.push_back("__local " + at + " " + parts + "[NT_WORK_ITEMS];");
    local_bytes_ = add(local_bytes_, Expr(int64_t{1024}));  // an upper bound of W * 8 with W <= 128
    if (arg) local_decls_.push_back("__local int " + best_parts + "[NT_WORK_ITEMS];");
    for_each_load(x, [&](const Value& load) { access_of(load); });
    // Work-items per row (a power of two): as many as the row has elements, up to the
    // work-group, but fewer when there are many rows.
    std::string tr = fresh("nt_tr"), tk = fresh("nt_tk"), lanes = fresh("nt_lanes"), k0 = fresh("nt_k0");
    std::string k = fresh("nt_k"), r = fresh("nt_rr"), s = fresh("nt_s"), acc = fresh("nt_acc"),
                best = fresh("nt_best");
    barrier();
    open("");
    line_("const long " + lanes + " = NT_MAX(1L, NT_MIN(NT_POW2CEIL(" + R + "), NT_MAX(1L, (long)NT_WORK_ITEMS / NT_POW2CEIL(" + K + "))));");
    line_("const long " + tr + " = NT_LANE % " + lanes + ", " + tk + " = NT_LANE / " + lanes + ";");
    open("for (long " + k0 + " = 0; " + k0 + " < " + K + "; " + k0 + " += (long)NT_WORK_ITEMS / " + lanes + ")");
    line_("const long " + k + " = " + k0 + " + " + tk + ";");
    line_(at + " " + acc + " = " + init + ";");
    line_("int " + best + " = 0;");
    open("if (" + k + " < " + K + ")");
    // The kept digits of k and the reduced digits of r, row-major.
    auto digits = [&](const std::string& flat, const std::vector<Expr>& sizes) {
      std::vector<Expr> index(sizes.size());
      std::string rest = flat;
      SymbolAttrs attrs;
      attrs.lower_bound = 0;
      for (size_t d = sizes.size(); d-- > 0;) {
        std::string name = fresh("e"), size = c(simplify(sizes[d], env_));
        line_("const long " + name + " = " + (d == 0 ? rest : rest + " % (" + size + ")") + ";");
        env_.set(name, 0, std::nullopt);
        env_.set_symbolic(name, Expr(0), sub(sizes[d], 1));
        index[d] = var(name, attrs);
        if (d > 0) {
          std::string next = fresh("nt_rest");
          line_("const long " + next + " = " + rest + " / (" + size + ");");
          rest = next;
        }
      }
      return index;
    };
    std::vector<Expr> outer = digits(k, kept);
    open("for (long " + r + " = " + tr + "; " + r + " < " + R + "; " + r + " += " + lanes + ")");
    std::vector<Expr> inner = digits(r, reduced);
    std::vector<Expr> full;
    size_t ko = 0, ri = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      bool red = v->axis < 0 || static_cast<int>(d) == v->axis;
      full.push_back(red ? inner[ri++] : outer[ko++]);
    }
    std::string value = "(" + at + ")(" + elem(x, full) + ")";
    if (arg) {
      line_("const " + xt + " nt_v = " + value + ";");
      open(std::string("if (nt_v ") + (fn == ReduceFn::ArgMax ? ">" : "<") + " " + acc + ")");
      line_(acc + " = nt_v;");
      line_(best + " = (int)" + r + ";");
      close();
    } else {
      line_(acc + " = " + combine_c(fn, f, acc, value) + ";");
    }
    close();
    close();
    line_(parts + "[NT_LANE] = " + acc + ";");
    if (arg) line_(best_parts + "[NT_LANE] = " + best + ";");
    line_("NT_BARRIER();");
    open("for (long " + s + " = " + lanes + " / 2; " + s + " > 0; " + s + " /= 2)");
    open("if (" + tr + " < " + s + ")");
    std::string mine = parts + "[NT_LANE]", theirs = parts + "[NT_LANE + " + s + "]";
    if (arg) {
      std::string bm = best_parts + "[NT_LANE]", bt = best_parts + "[NT_LANE + " + s + "]";
      open("if (" + theirs + (fn == ReduceFn::ArgMax ? " > " : " < ") + mine + " || (" + theirs + " == " + mine +
           " && " + bt + " < " + bm + "))");
      line_(mine + " = " + theirs + ";");
      line_(bm + " = " + bt + ";");
      close();
    } else {
      line_(mine + " = " + combine_c(fn, f, mine, theirs) + ";");
    }
    close();
    line_("NT_BARRIER();");
    close();
    std::string result = arg ? best_parts + "[NT_LANE]" : parts + "[NT_LANE]";
    std::string target = scalar ? name : name + "[" + k + "]";
    line_("if (" + tr + " == 0 && " + k + " < " + K + ") " + target + " = (" + ct + ")" + result + ";");
    line_("NT_BARRIER();");
    close();
    close();
    materialized_[v.get()] = name;
  }

  // The dot in the tile layout of its result: operands in local memory, each work-item's
  // NT_R x NT_C elements accumulated in registers, a row of a and a column of b read per k.
  void emit_dot_group(const Value& v, const std::string& result, bool accumulate) {
    const Value& a = v->operands[0];
    const Value& b = v->operands[1];
    DType dt = v->type.dtype;
    std::string ct = compute_type(dt);
    std::string A = as_array(a, dt, "a dot operand");
    std::string B = as_array(b, dt, "a dot operand");
    std::string M = c(simplify(a->type.shape[0], env_)), K = c(simplify(a->type.shape[1], env_)),
                N = c(simplify(b->type.shape[1], env_));
    std::string n = std::to_string(tile_layout(v->type.shape));
    auto d = distributed_.find(result);
    bool held = d != distributed_.end();
    if (held && (!aligned_layout(result, v->type.shape))) {
      misaligned_.insert(d->second);
      held = false;
    }
    open("");
    std::string tx = fresh("nt_tx"), ty = fresh("nt_ty"), acc = held ? result : fresh("nt_acc");
    line_("const long " + tx + " = NT_LANE % NT_TX" + n + ", " + ty + " = NT_LANE / NT_TX" + n + ";");
    std::string slots = "NT_R" + n + " * NT_C" + n;
    if (!held) line_(ct + " " + acc + "[" + slots + "];");
    auto each = [&](const std::function<void(const std::string& i, const std::string& j, const std::string& slot)>& f) {
      line_("NT_UNROLL");
      open("for (int nt_r = 0; nt_r < NT_R" + n + "; ++nt_r)");
      line_("NT_UNROLL");
      open("for (int nt_c = 0; nt_c < NT_C" + n + "; ++nt_c)");
      f("(" + ty + " + NT_TY" + n + " * nt_r)", "(" + tx + " + NT_TX" + n + " * nt_c)", "nt_r * NT_C" + n + " + nt_c");
      close();
      close();
    };
    if (!held || !accumulate) {
      each([&](const std::string& i, const std::string& j, const std::string& slot) {
        std::string start = "0";
        if (accumulate) start = "(" + i + " < " + M + " && " + j + " < " + N + ") ? " + result + "[" + i + " * " + N + " + " + j + "] : 0";
        line_(acc + "[" + slot + "] = " + start + ";");
      });
    }
    bool f = dtype_is_float(dt);
    open("for (long nt_k = 0; nt_k < " + K + "; ++nt_k)");
    line_(ct + " nt_a[NT_R" + n + "], nt_b[NT_C" + n + "];");
    line_("NT_UNROLL");
    open("for (int nt_r = 0; nt_r < NT_R" + n + "; ++nt_r)");
    line_("const long nt_i = " + ty + " + NT_TY" + n + " * nt_r;");
    line_("nt_a[nt_r] = nt_i < " + M + " ? " + A + "[nt_i * " + K + " + nt_k] : 0;");
    close();
    line_("NT_UNROLL");
    open("for (int nt_c = 0; nt_c < NT_C" + n + "; ++nt_c)");
    line_("const long nt_j = " + tx + " + NT_TX" + n + " * nt_c;");
    line_("nt_b[nt_c] = nt_j < " + N + " ? " + B + "[nt_k * " + N + " + nt_j] : 0;");
    close();
    each([&](const std::string&, const std::string&, const std::string& slot) {
      std::string x = acc + "[" + slot + "]";
      line_(x + " = " + (f ? "fma(nt_a[nt_r], nt_b[nt_c], " + x + ")" : x + " + nt_a[nt_r] * nt_b[nt_c]") + ";");
    });
    close();
    if (!held) {
      barrier();
      each([&](const std::string& i, const std::string& j, const std::string& slot) {
        line_("if (" + i + " < " + M + " && " + j + " < " + N + ") " + result + "[" + i + " * " + N + " + " + j +
              "] = " + acc + "[" + slot + "];");
      });
      barrier();
    }
    close();
  }

  // Is the distributed array `name` in the tile layout of `shape`?
  bool aligned_layout(const std::string& name, const std::vector<Expr>& shape) {
    auto it = distributed_shapes_.find(name);
    return it != distributed_shapes_.end() && it->second == shape_key(shape);
  }

  // --- tensor accesses ----------------------------------------------------

  Expr index_expr(const Value& v) {
    if (v->kind == ValueKind::Constant) return v->expr;
    if (v->kind == ValueKind::LoopVar) return var(loop_vars_.at(v->name));
    std::string name = fresh("nt_i");
    line_("const long " + name + " = (long)(" + elem(v, {}) + ");");
    return var(name);
  }

  const lower::TensorAccess& access_of(const Value& load) {
    auto it = accesses_.find(load.get());
    if (it != accesses_.end()) return it->second;
    std::vector<Expr> middle;
    size_t count = load->kind == ValueKind::LoadAt ? static_cast<size_t>(load->axis) : load->operands.size();
    for (size_t i = 0; i < count; ++i) middle.push_back(index_expr(load->operands[i]));
    return accesses_.emplace(load.get(), lower::lower_access(k_.params[load->param], layout_, middle, env_))
        .first->second;
  }

  std::string mask_of(const lower::TensorAccess& a, const std::vector<Expr>& index) {
    if (a.never) return "0";
    std::string m;
    for (const Expr& cond : a.conditions_at(index, fast_)) {
      std::string s = c(simplify(cond, env_));
      if (s == "1") continue;
      if (s == "0") return "0";
      m += (m.empty() ? "" : " && ") + s;
    }
    return m;
  }

  // Positions in a block (operands from `first` on, at element `index`) as
  // variables declared here, in `at`; returns the C test that they lie in the
  // block and that the element there is inside the tensor.
  std::string block_positions(const std::vector<Value>& operands, size_t first, const lower::TensorAccess& a,
                              const std::vector<Expr>& index, std::vector<Expr>& at) {
    std::string mask;
    for (size_t d = 0; first + d < operands.size(); ++d) {
      std::string name = fresh("nt_at");
      line_("const long " + name + " = " + elem(operands[first + d], index) + ";");
      at.push_back(var(name));
      mask += std::string(d ? " && " : "") + "(ulong)" + name + " < (ulong)(" +
              c(simplify(a.block_shape[d], env_)) + ")";
    }
    for (const Expr& cond : a.conditions_at(at, /*fast=*/false)) {
      std::string s = c(simplify(cond, env_));
      if (s != "1") mask += (mask.empty() ? "" : " && ") + s;
    }
    return mask.empty() ? "1" : mask;
  }

  std::string load_element(const Param& p, const std::string& ptr, const std::string& offset) {
    switch (p.dtype) {
      case DType::float16:
        return "vload_half(" + offset + ", " + ptr + ")";
      case DType::bfloat16:
        return "nt_bf16_to_float(" + ptr + "[" + offset + "])";
      case DType::boolean:
        return "(int)" + ptr + "[" + offset + "]";
      default:
        return ptr + "[" + offset + "]";
    }
  }

  std::string store_element(const Param& p, const std::string& ptr, const std::string& offset,
                            const std::string& value) {
    switch (p.dtype) {
      case DType::float16:
        return "vstore_half_rte((float)(" + value + "), " + offset + ", " + ptr + ");";
      case DType::bfloat16:
        return ptr + "[" + offset + "] = nt_float_to_bf16((float)(" + value + "));";
      case DType::boolean:
        return ptr + "[" + offset + "] = (uchar)((" + value + ") != 0);";
      default:
        return ptr + "[" + offset + "] = " + value + ";";
    }
  }

  // An element offset from the tensor's element (0, ..., 0) that lies inside
  // the memory the tensor spans: raw pointers never reach outside it.
  std::string in_extent(int param, const std::string& offset) {
    std::string p = "nt_p" + std::to_string(param);
    return "((ulong)(" + offset + " + " + p + "_offset) < (ulong)" + p + "_extent)";
  }

  std::string atomic_add_element(const Param& p, const std::string& ptr, const std::string& offset,
                                 const std::string& value) {
    std::string address = "&" + ptr + "[" + offset + "]";
    switch (p.dtype) {
      case DType::float32:
        return "nt_atomic_add_float(" + address + ", " + value + ");";
      case DType::float64:
        return "nt_atomic_add_double(" + address + ", " + value + ");";
      case DType::int64:
      case DType::uint64:
        return "atom_add(" + address + ", " + value + ");";
      default:
        return "atomic_add(" + address + ", " + value + ");";
    }
  }

  std::string other_of(const Param& p) {
    const auto& other = p.arranged->other();
    if (!other) return c_literal(Expr(0), p.dtype);
    return c_literal(*other, p.dtype);
  }

  // --- values -------------------------------------------------------------

  // The C expression of element `index` of `v`, in v's compute type.
  std::string elem(const Value& v, const std::vector<Expr>& index) {
    auto m = materialized_.find(v.get());
    if (m != materialized_.end()) return element_of(m->second, v->type, index);
    const auto& ops = v->operands;
    std::string ct = compute_type(v->type.dtype);
    switch (v->kind) {
      case ValueKind::Constant:
        if (v->expr->kind == ExprKind::Int || v->expr->kind == ExprKind::Float ||
            v->expr->kind == ExprKind::Bool) {
          return c_literal(v->expr, v->type.dtype);
        }
        return "(" + c(simplify(v->expr, env_)) + ")";
      case ValueKind::ScalarParam:
        return k_.params[v->param].constexpr_ ? "(" + constexpr_param_macro(v->param) + ")"
                                              : "nt_s" + std::to_string(v->param);
      case ValueKind::Load: {
        const Param& p = k_.params[v->param];
        loaded_params_.insert(v->param);
        const lower::TensorAccess& a = access_of(v);
        if (a.never) return other_of(p);
        std::string ptr = "nt_p" + std::to_string(v->param);
        std::string offset = c(simplify(a.offset_at(index), env_));
        std::string value = load_element(p, ptr, offset);
        std::string mask = mask_of(a, index);
        if (mask.empty()) return value;
        return "((" + mask + ") ? " + value + " : " + other_of(p) + ")";
      }
      case ValueKind::LoadAt: {
        const Param& p = k_.params[v->param];
        loaded_params_.insert(v->param);
        const lower::TensorAccess& a = access_of(v);
        if (a.never) return other_of(p);
        std::vector<Expr> at;
        std::string mask = block_positions(v->operands, v->axis, a, index, at);
        return "((" + mask + ") ? " +
               load_element(p, "nt_p" + std::to_string(v->param), c(simplify(a.offset_at(at), env_))) +
               " : " + other_of(p) + ")";
      }
      case ValueKind::LoopVar:
        return loop_vars_.at(v->name);
      case ValueKind::LetRef:
        return element_of(lets_.at(v->id), v->type, index);
      case ValueKind::LocalRef:
        return element_of(locals_.at(v->id), v->type, index);
      case ValueKind::Arange:
        return "((int)(" + c(simplify(add(v->expr, index[0]), env_)) + "))";
      case ValueKind::Full:
        return elem(ops[0], {});
      case ValueKind::Unary:
        return unary_c(static_cast<UnaryFn>(v->op), elem(ops[0], index), v->type.dtype);
      case ValueKind::Binary:
        return binary_c(static_cast<BinaryFn>(v->op), elem(ops[0], index), elem(ops[1], index),
                        ops[0]->type.dtype);
      case ValueKind::Where:
        return "((" + elem(ops[0], index) + ") ? " + elem(ops[1], index) + " : " + elem(ops[2], index) + ")";
      case ValueKind::Cast: {
        std::string x = elem(ops[0], index);
        switch (v->type.dtype) {
          case DType::float16:
            return "nt_round_half((float)(" + x + "))";
          case DType::bfloat16:
            return "nt_round_bf16((float)(" + x + "))";
          case DType::boolean:
            return "((" + x + ") != 0)";
          default:
            return "((" + ct + ")(" + x + "))";
        }
      }
      case ValueKind::ExpandDims: {
        std::vector<Expr> inner = index;
        inner.erase(inner.begin() + v->axis);
        return elem(ops[0], inner);
      }
      case ValueKind::Broadcast: {
        std::vector<Expr> inner = index;
        for (size_t d = 0; d < inner.size(); ++d) {
          if (ops[0]->type.shape[d].is_int(1) && !v->type.shape[d].is_int(1)) inner[d] = Expr(0);
        }
        return elem(ops[0], inner);
      }
      case ValueKind::Trans:
        return elem(ops[0], {index[1], index[0]});
      case ValueKind::Fma:
        return "fma(" + elem(ops[0], index) + ", " + elem(ops[1], index) + ", " + elem(ops[2], index) + ")";
      case ValueKind::Offsets: {
        const lower::TensorAccess& a = access_of(v);
        std::vector<Expr> at = index;
        if (v->op != -1) {  // a 1-D block along block dim `op` (or a constant)
          at.assign(a.block_shape.size(), Expr(0));
          if (v->op >= 0) at[v->op] = index[0];
        }
        Expr e = v->axis < 0 ? a.offset_at(at) : a.coordinate_at(v->axis, at);
        return "(" + c(simplify(e, env_)) + ")";
      }
      case ValueKind::PointerBase:
        return "0L";
      case ValueKind::Random:
        return std::string(v->op ? "nt_randn(" : "nt_rand(") + elem(ops[0], {}) + ", " + elem(ops[1], index) +
               ")";
      case ValueKind::LoadPointer: {
        const Param& p = k_.params[v->param];
        std::string ptr = "nt_p" + std::to_string(v->param);
        std::string offset = "(" + elem(ops[0], index) + ")";
        return "((" + elem(ops[1], index) + " && " + in_extent(v->param, offset) + ") ? " +
               load_element(p, ptr, offset) + " : " + elem(ops[2], index) + ")";
      }
      case ValueKind::ProgramId:
        return "nt_pid_" + std::to_string(v->axis);
      case ValueKind::Call:
      case ValueKind::Rearrange:
      case ValueKind::CombineArg:
      case ValueKind::Extract:
        return block_op_element(*this, v, index);
      case ValueKind::Reduce:
      case ValueKind::Dot:
      case ValueKind::Combine:
      case ValueKind::Sort:
      case ValueKind::Gather:
      case ValueKind::Histogram:
        throw std::logic_error("codegen: reduction or dot not materialised");
    }
    return "0";
  }

  std::string unary_c(UnaryFn fn, const std::string& x, DType dtype) {
    bool f = dtype_is_float(dtype);
    std::string one = dtype == DType::float64 ? "1.0" : "1.0f";
    switch (fn) {
      case UnaryFn::Neg:
        return "(-" + x + ")";
      case UnaryFn::Not:
        return "(!" + x + ")";
      case UnaryFn::BitNot:
        return "(~" + x + ")";
      case UnaryFn::Abs:
        return f ? "fabs(" + x + ")" : "(" + x + " < 0 ? -" + x + " : " + x + ")";
      case UnaryFn::Sigmoid:
        if (compute_type(dtype) == "float") return "(1.0f / (1.0f + nt_exp_f(-" + x + ")))";
        return "(" + one + " / (" + one + " + exp(-" + x + ")))";
      default:
        break;
    }
    if (compute_type(dtype) == "float") {
      std::string fast = float_unary_c(fn, x);
      if (!fast.empty()) return fast;
    }
    std::string arg = f ? x : "(float)" + x;
    return std::string(unary_fn_name(fn)) + "(" + arg + ")";
  }

  // Integer `/` and `%` that never trap: x86 raises SIGFPE for a division by zero (which a
  // padding element's divisor, read as 0, may be) and for MIN / -1. A zero divisor gives the
  // dividend (quotient) or 0 (remainder), undefined as in OpenCL and upstream; MIN / -1 wraps.
  static std::string integer_division(bool remainder, const std::string& a, const std::string& b,
                                      DType operand) {
    std::string t = compute_type(operand);
    if (!dtype_is_signed(operand)) {
      return "((" + b + ") == 0 ? " + (remainder ? "(" + t + ")0" : "(" + a + ")") + " : (" + a + ")" +
             (remainder ? " % " : " / ") + "(" + b + "))";
    }
    if (remainder)
      return "((" + b + ") == 0 || (" + b + ") == -1 ? (" + t + ")0 : (" + a + ") % (" + b + "))";
    return "((" + b + ") == 0 ? (" + a + ") : (" + b + ") == -1 ? (" + t + ")((u" + t + ")0 - (u" + t + ")(" +
           a + ")) : (" + a + ") / (" + b + "))";
  }

  std::string binary_c(BinaryFn fn, const std::string& a, const std::string& b, DType operand) {
    bool f = dtype_is_float(operand);
    switch (fn) {
      case BinaryFn::Div:
        return f ? "(" + a + " / " + b + ")" : integer_division(false, a, b, operand);
      case BinaryFn::FloorDiv:
        return f ? "floor(" + a + " / " + b + ")" : integer_division(false, a, b, operand);
      case BinaryFn::Mod:
        return f ? "fmod(" + a + ", " + b + ")" : integer_division(true, a, b, operand);
      case BinaryFn::Maximum:
        return std::string(f ? "fmax(" : "max(") + a + ", " + b + ")";
      case BinaryFn::Minimum:
        return std::string(f ? "fmin(" : "min(") + a + ", " + b + ")";
      case BinaryFn::Pow:
        return "pow(" + a + ", " + b + ")";
      case BinaryFn::LogicalAnd:
        return "(" + a + " && " + b + ")";
      case BinaryFn::LogicalOr:
        return "(" + a + " || " + b + ")";
      default:
        return "(" + a + " " + binary_fn_name(fn) + " " + b + ")";
    }
  }

  // --- materialisation ----------------------------------------------------

  // Computes the reductions and dots a tree needs (innermost first) into
  // private temporaries, so the tree's own nest can read them.
  void materialize_parts(const Value& v) {
    if (materialized_.count(v.get())) return;
    for (const Value& o : v->operands) materialize_parts(o);
    if (v->kind == ValueKind::LoadAt) access_of(v);  // its level indices, declared outside the nests
    if (v->kind == ValueKind::Reduce) emit_reduce(v);
    if (is_materialized_block_op(v->kind)) {
      distributable_ = false;
      on_first_work_item([&] { materialize_block_op(*this, v); });
    }
    if (v->kind == ValueKind::Dot) {
      std::string name = fresh("nt_dot");
      new_array(name, v->type.shape, v->type.dtype, "a dot result", node_key(v));
      emit_dot(v, name, /*accumulate=*/false);
      materialized_[v.get()] = name;
    }
  }

  // A block as a private array (itself if it already is one of `dtype`).
  std::string as_array(const Value& v, DType dtype, const std::string& what) {
    std::string found;
    auto m = materialized_.find(v.get());
    if (m != materialized_.end() && v->type.dtype == dtype) found = m->second;
    if (v->kind == ValueKind::LetRef && compute_type(v->type.dtype) == compute_type(dtype))
      found = lets_.at(v->id);
    if (v->kind == ValueKind::LocalRef && compute_type(v->type.dtype) == compute_type(dtype))
      found = locals_.at(v->id);
    if (!found.empty()) {
      auto d = distributed_.find(found);
      if (d == distributed_.end()) return found;
      misaligned_.insert(d->second);  // read whole, not where it is held
    }
    std::string name = fresh("nt_op");
    new_array(name, v->type.shape, dtype, what);
    barrier();
    nest(v->type.shape, {v}, nullptr, [&](const std::vector<Expr>& i) {
      line_(name + "[" + c(flat_index(v->type.shape, i)) + "] = (" + compute_type(dtype) + ")(" + elem(v, i) +
            ");");
    });
    barrier();
    return name;
  }

  // The operands packed into private arrays of the result's compute type (each converted
  // once per block), then the register-blocked micro-kernel (dot_kernel.h).
  void emit_dot(const Value& v, const std::string& result, bool accumulate) {
    if (group_ && !serial_) {
      emit_dot_group(v, result, accumulate);
      return;
    }
    const Value& a = v->operands[0];
    const Value& b = v->operands[1];
    DType dt = v->type.dtype;
    DotArrays d;
    d.a = as_array(a, dt, "a dot operand");
    d.b = as_array(b, dt, "a dot operand");
    d.result = result;
    d.M = c(simplify(a->type.shape[0], env_));
    d.K = c(simplify(a->type.shape[1], env_));
    d.N = c(simplify(b->type.shape[1], env_));
    d.type = compute_type(dt);
    d.accumulate = accumulate;
    emit_dot_kernel(*this, d);
  }

  // The start of a reduction's fold over elements of `in`.
  static std::string reduce_init(ReduceFn fn, DType in) {
    bool f = dtype_is_float(in);
    std::string xt = compute_type(in);
    if (!f && xt == "int" && in == DType::boolean)
      return fn == ReduceFn::Max || fn == ReduceFn::ArgMax ? "0" : "1";
    switch (fn) {
      case ReduceFn::Sum:
        return "0";
      case ReduceFn::Max:
      case ReduceFn::ArgMax:
        return f ? "-INFINITY" : limit_macro(xt, false);
      case ReduceFn::Min:
      case ReduceFn::ArgMin:
        return f ? "INFINITY" : limit_macro(xt, true);
    }
    return "0";
  }

  // One step of a sum, max or min fold, as C.
  static std::string combine_c(ReduceFn fn, bool f, const std::string& acc, const std::string& value) {
    if (fn == ReduceFn::Sum) return "(" + acc + " + " + value + ")";
    bool max = fn == ReduceFn::Max;
    return std::string(f ? (max ? "fmax(" : "fmin(") : (max ? "max(" : "min(")) + acc + ", " + value + ")";
  }

  void emit_reduce(const Value& v) {
    distributable_ = false;
    if (group_ && !serial_) {
      emit_reduce_group(v);
      return;
    }
    auto fn = static_cast<ReduceFn>(v->op);
    const Value& x = v->operands[0];
    DType in = x->type.dtype;
    std::string ct = compute_type(v->type.dtype), xt = compute_type(in);
    bool f = dtype_is_float(in);
    std::string name = fresh("nt_red");
    bool arg = fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin;
    std::string init = reduce_init(fn, in);
    // Shapes: the reduced axes and the kept ones.
    const std::vector<Expr>& shape = x->type.shape;
    std::vector<Expr> kept, reduced;
    for (size_t d = 0; d < shape.size(); ++d) {
      bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
      (r ? reduced : kept).push_back(shape[d]);
    }
    bool scalar = kept.empty() && v->type.is_scalar();
    if (scalar) {
      line_(ct + " " + name + ";");
    } else {
      line_(ct + " " + name + "[" + array_size(v->type.shape, "a reduction result", v->type.dtype) + "];");
    }
    auto combine = [&](const std::string& acc, const std::string& best_index, const std::string& value,
                       const std::string& flat) {
      switch (fn) {
        case ReduceFn::Sum:
        case ReduceFn::Max:
        case ReduceFn::Min:
          line_(acc + " = " + combine_c(fn, f, acc, value) + ";");
          break;
        case ReduceFn::ArgMax:
        case ReduceFn::ArgMin: {
          line_("const " + xt + " nt_v = " + value + ";");
          open(std::string("if (nt_v ") + (fn == ReduceFn::ArgMax ? ">" : "<") + " " + acc + ")");
          line_(acc + " = nt_v;");
          line_(best_index + " = " + flat + ";");
          close();
        }
      }
    };
    // Outer loops over the kept dims, inner loops over the reduced ones.
    nest(kept, {x}, nullptr, [&](const std::vector<Expr>& outer) {
      std::string acc = fresh("nt_acc"), best = fresh("nt_best");
      line_((arg ? xt : ct) + " " + acc + " = " + init + ";");
      if (arg) line_("int " + best + " = 0;");
      auto element = [&](const std::vector<Expr>& inner) {
        std::vector<Expr> full;
        size_t ko = 0, ri = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
          bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
          full.push_back(r ? inner[ri++] : outer[ko++]);
        }
        return "(" + (arg ? xt : ct) + ")(" + elem(x, full) + ")";
      };
      if (arg || reduced.empty()) {
        loops(reduced, [&](const std::vector<Expr>& inner) {
          combine(acc, best, element(inner), c(flat_index(reduced, inner)));
        });
      } else {
        // Independent partial results over lanes of the last reduced dim:
        // no chain of dependent operations, and a vectorisable inner loop.
        int lanes = ct == "double" || ct == "long" || ct == "ulong" ? 8 : 16;
        std::string parts = fresh("nt_parts"), lane_count = std::to_string(lanes);
        line_(ct + " " + parts + "[" + lane_count + "];");
        line_("for (int l = 0; l < " + lane_count + "; ++l) " + parts + "[l] = " + init + ";");
        std::vector<Expr> head(reduced.begin(), reduced.end() - 1);
        const Expr& last = reduced.back();
        loops(head, [&](const std::vector<Expr>& inner_head) {
          std::string size = c(simplify(last, env_));
          std::string block = fresh("eo"), lane = fresh("l"), rest = fresh("e");
          SymbolAttrs attrs;
          attrs.lower_bound = 0;
          env_.set(block, 0, std::nullopt);
          env_.set_symbolic(block, Expr(0), sub(last, 1));
          env_.set(lane, 0, lanes - 1);
          env_.set_symbolic(lane, Expr(0), sub(last, 1));
          env_.set(rest, 0, std::nullopt);
          env_.set_symbolic(rest, Expr(0), sub(last, 1));
          open("for (long " + block + " = 0; " + block + " + " + lane_count + " <= " + size + "; " + block +
               " += " + lane_count + ")");
          // The lanes' elements first, in a loop the vectoriser handles whatever the element's
          // expression is; then the combine into the partial results, unrolled by the front end,
          // so the partial results stay in registers across the block loop (combined inside the
          // lane loop, they lived in a stack array, stored and reloaded every 16 elements).
          std::string values = fresh("nt_lanes");
          line_(ct + " " + values + "[" + lane_count + "];");
          std::vector<Expr> index = inner_head;
          index.push_back(add(var(block, attrs), var(lane, attrs)));
          if (fast_) {
            std::vector<Expr> full;
            size_t ko = 0, ri = 0;
            for (size_t d = 0; d < shape.size(); ++d) {
              bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
              full.push_back(r ? index[ri++] : outer[ko++]);
            }
            vector_hint({x}, nullptr, full, lane);
          }
          open("for (int " + lane + " = 0; " + lane + " < " + lane_count + "; ++" + lane + ")");
          line_(values + "[" + lane + "] = " + element(index) + ";");
          close();
          line_("#pragma unroll");
          open("for (int " + lane + " = 0; " + lane + " < " + lane_count + "; ++" + lane + ")");
          combine(parts + "[" + lane + "]", best, values + "[" + lane + "]", "");
          close();
          close();
          open("for (long " + rest + " = " + size + " / " + lane_count + " * " + lane_count + "; " + rest +
               " < " + size + "; ++" + rest + ")");
          index = inner_head;
          index.push_back(var(rest, attrs));
          combine(parts + "[0]", best, element(index), "");
          close();
        });
        line_("for (int l = 0; l < " + lane_count + "; ++l) {");
        ++indent_;
        combine(acc, best, parts + "[l]", "");
        close();
      }
      std::vector<Expr> out_index = outer;
      if (v->keep_dims) {
        out_index.clear();
        size_t ko2 = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
          bool r = v->axis < 0 || static_cast<int>(d) == v->axis;
          out_index.push_back(r ? Expr(0) : outer[ko2++]);
        }
      }
      std::string result = arg ? best : acc;
      line_((scalar ? name : name + "[" + c(flat_index(v->type.shape, out_index)) + "]") + " = " + result +
            ";");
    });
    materialized_[v.get()] = name;
  }

  // A named private value (a Let or a local) of `type` set to `value`.
  // `key`: what the value goes by (value_key()) if it may stay with the work-items computing it.
  void declare(const std::string& name, const Type& type, const Value& value, bool mutable_,
               const std::string& key = "") {
    materialize_parts(value);
    std::string ct = compute_type(type.dtype);
    if (type.is_scalar()) {
      line_(ct + " " + name + " = " + elem(value, {}) + ";");
      return;
    }
    new_array(name, type.shape, type.dtype, mutable_ ? "a loop-carried local" : "a value used twice", key);
    write_array(name, type, value);
  }

  void write_array(const std::string& name, const Type& type, const Value& value) {
    bool shared = group_ && !is_distributed(name);
    if (shared) barrier();
    nest(type.shape, {value}, nullptr, [&](const std::vector<Expr>& i) {
      line_(element_of(name, type, i) + " = " + elem(value, i) + ";");
    });
    if (shared) barrier();
  }

  // Does `v` read local `id` at other elements than the one being written?
  bool reads_local_elsewhere(const Value& v, int id, bool remapped = false) {
    if (materialized_.count(v.get())) return false;
    if (v->kind == ValueKind::LocalRef) return remapped && v->id == id;
    bool r = remapped || v->kind == ValueKind::Trans || v->kind == ValueKind::Broadcast ||
             v->kind == ValueKind::ExpandDims || v->kind == ValueKind::Full ||
             v->kind == ValueKind::Rearrange;
    for (const Value& o : v->operands) {
      if (reads_local_elsewhere(o, id, r)) return true;
    }
    return false;
  }

  // --- statements ---------------------------------------------------------

  void emit_list(const StmtList& stmts) {
    for (const Stmt& s : stmts) emit_stmt(s);
  }

  void emit_stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Let: {
        std::string name = fresh("nt_let");
        declare(name, s->value->type, s->value, false, let_key(s->id));
        lets_[s->id] = name;
        break;
      }
      case StmtKind::DeclareLocal: {
        std::string name = fresh("nt_local");
        declare(name, k_.local_types[s->id], s->value, true, local_key(s->id));
        locals_[s->id] = name;
        break;
      }
      case StmtKind::Assign:
        emit_assign(s);
        break;
      case StmtKind::StorePointer:
      case StmtKind::AtomicAdd:
        emit_store_pointer(s);
        break;
      case StmtKind::Store:
        emit_store(s);
        break;
      case StmtKind::StoreAt:
        emit_scatter(s);
        break;
      case StmtKind::For:
        emit_for(s);
        break;
      case StmtKind::Atomic:
      case StmtKind::Print:
      case StmtKind::Assert:
        distributable_ = false;
        if (group_) {
          // Reductions and dots of its operands need the whole work-group.
          if (s->value) materialize_parts(s->value);
          for (const Value& v : s->indices) materialize_parts(v);
        }
        on_first_work_item([&] { emit_block_op_statement(*this, s); });
        if (s->kind == StmtKind::Atomic) after_store(s->param);
        break;
      case StmtKind::If: {
        materialize_parts(s->value);
        open("if (" + elem(s->value, {}) + ")");
        scoped([&] { emit_list(s->body); });
        if (!s->orelse.empty()) {
          close("} else {");
          ++indent_;
          scoped([&] { emit_list(s->orelse); });
        }
        close();
        break;
      }
    }
  }

  // Runs `f` with bindings made inside it forgotten afterwards.
  void scoped(const std::function<void()>& f) {
    auto lets = lets_;
    auto locals = locals_;
    auto materialized = materialized_;
    auto accesses = accesses_;
    f();
    lets_ = std::move(lets);
    locals_ = std::move(locals);
    materialized_ = std::move(materialized);
    accesses_ = std::move(accesses);
  }

  void emit_assign(const Stmt& s) {
    const std::string& name = locals_.at(s->id);
    const Type& type = k_.local_types[s->id];
    const Value& v = s->value;
    open("");
    scoped([&] {
      // acc += dot(a, b): accumulate into the local.
      if (v->kind == ValueKind::Binary && static_cast<BinaryFn>(v->op) == BinaryFn::Add &&
          v->operands[0]->kind == ValueKind::LocalRef && v->operands[0]->id == s->id &&
          v->operands[1]->kind == ValueKind::Dot && v->operands[1]->type.dtype == type.dtype) {
        for (const Value& o : v->operands[1]->operands) materialize_parts(o);
        emit_dot(v->operands[1], name, /*accumulate=*/true);
        return;
      }
      materialize_parts(v);
      if (type.is_scalar()) {
        line_(name + " = " + elem(v, {}) + ";");
      } else if (reads_local_elsewhere(v, s->id)) {
        std::string tmp = fresh("nt_tmp");
        declare(tmp, type, v, false);
        if (group_) {  // shared: the local is read elsewhere
          barrier();
          loops(type.shape, [&](const std::vector<Expr>& i) {
            line_(element_of(name, type, i) + " = " + element_of(tmp, type, i) + ";");
          });
          barrier();
        } else {
          open("for (long i = 0; i < " + array_size(type.shape, "a local") + "; ++i)");
          line_(name + "[i] = " + tmp + "[i];");
          close();
        }
      } else {
        write_array(name, type, v);
      }
    });
    close();
  }

  void emit_store(const Stmt& s) {
    const Param& p = k_.params[s->param];
    if (!stored_params_.insert(s->param).second) distributable_ = false;  // stored twice
    open("");
    scoped([&] {
      materialize_parts(s->value);
      ValueNode target_node{ValueKind::Load, Type{p.dtype, p.block_shape()}};
      target_node.param = s->param;
      target_node.operands = s->indices;
      Value target = std::make_shared<const ValueNode>(target_node);
      const lower::TensorAccess& a = access_of(target);
      if (a.never) return;
      std::string ptr = "nt_p" + std::to_string(s->param);
      // A store to float16/bfloat16 rounds: a cast to that type before it is redundant.
      Value stored = s->value;
      if (stored->kind == ValueKind::Cast && stored->type.dtype == p.dtype &&
          (p.dtype == DType::float16 || p.dtype == DType::bfloat16)) {
        stored = stored->operands[0];
      }
      bool narrow = p.dtype == DType::float16 || p.dtype == DType::bfloat16;
      nest(
          p.block_shape(), {stored}, &a,
          [&](const std::vector<Expr>& i) {
            std::string offset = c(simplify(a.offset_at(i), env_));
            std::string value = elem(stored, i);
            std::string mask = mask_of(a, i);
            std::string store = store_element(p, ptr, offset, value);
            if (mask.empty()) {
              line_(store);
            } else {
              line_("if (" + mask + ") " + store);
            }
          },
          /*hint=*/!narrow);
      keep_alive_.push_back(target);
    });
    close();
    after_store(s->param);
  }

  // p[positions] = value: each element of `value` to the block element at its positions.
  void emit_scatter(const Stmt& s) {
    distributable_ = false;
    const Param& p = k_.params[s->param];
    open("");
    scoped([&] {
      materialize_parts(s->value);
      for (const Value& i : s->indices) materialize_parts(i);
      ValueNode target_node{ValueKind::Load, Type{p.dtype, p.block_shape()}};
      target_node.param = s->param;
      target_node.operands.assign(s->indices.begin(), s->indices.begin() + s->id);
      Value target = std::make_shared<const ValueNode>(target_node);
      const lower::TensorAccess& a = access_of(target);
      if (a.never) return;
      std::vector<Value> trees = s->indices;
      trees.push_back(s->value);
      nest(
          s->value->type.shape, trees, nullptr,
          [&](const std::vector<Expr>& i) {
            std::vector<Expr> at;
            std::string mask = block_positions(s->indices, s->id, a, i, at);
            // A lane outside the valid part of the target's own block (the padding of
            // a partial block, whose loaded positions and values are fill values)
            // writes nothing, when the scattered block has the target block's shape.
            if (i.size() == a.block_shape.size() && s->value->type.shape.size() == i.size()) {
              for (const Expr& cond : a.conditions_at(i, /*fast=*/false)) {
                std::string lane = c(simplify(cond, env_));
                if (lane != "1") mask += " && " + lane;
              }
            }
            std::string offset = c(simplify(a.offset_at(at), env_));
            line_("if (" + mask + ") " +
                  store_element(p, "nt_p" + std::to_string(s->param), offset, elem(s->value, i)));
          },
          /*hint=*/false);
      keep_alive_.push_back(target);
    });
    close();
    after_store(s->param);
  }

  void emit_store_pointer(const Stmt& s) {
    distributable_ = false;
    const Param& p = k_.params[s->param];
    std::string ptr = "nt_p" + std::to_string(s->param);
    const Value& pointers = s->indices[0];
    const Value& value = s->indices[1];
    const Value& mask = s->indices[2];
    open("");
    scoped([&] {
      for (const Value& v : s->indices) materialize_parts(v);
      nest(
          pointers->type.shape, s->indices, nullptr,
          [&](const std::vector<Expr>& i) {
            std::string offset = fresh("nt_o");
            line_("const long " + offset + " = " + elem(pointers, i) + ";");
            std::string write = s->kind == StmtKind::AtomicAdd
                                    ? atomic_add_element(p, ptr, offset, elem(value, i))
                                    : store_element(p, ptr, offset, elem(value, i));
            line_("if (" + elem(mask, i) + " && " + in_extent(s->param, offset) + ") " + write);
          },
          /*hint=*/false);
    });
    close();
    after_store(s->param);
  }

  void emit_for(const Stmt& s) {
    materialize_parts(s->start);
    materialize_parts(s->stop);
    materialize_parts(s->step);
    std::string v = fresh("nt_" + s->var + "_");
    std::string start = elem(s->start, {}), stop = elem(s->stop, {}), step = elem(s->step, {});
    std::string cond;
    std::optional<int64_t> step_value;
    if (s->step->kind == ValueKind::Constant) step_value = s->step->expr.as_int();
    if (step_value && *step_value == 0) throw ValueError("range() arg 3 must not be zero");
    if (step_value)
      cond = v + (*step_value > 0 ? " < " : " > ") + "(long)(" + stop + ")";
    else
      cond = "(" + step + " > 0 ? " + v + " < (long)(" + stop + ") : " + v + " > (long)(" + stop + "))";
    open("for (long " + v + " = " + start + "; " + cond + "; " + v + " += " + step + ")");
    if (step_value && *step_value > 0 && s->start->kind == ValueKind::Constant &&
        s->stop->kind == ValueKind::Constant) {
      env_.set_symbolic(v, s->start->expr, sub(s->stop->expr, 1));
    }
    auto saved = loop_vars_;
    loop_vars_[s->var] = v;
    scoped([&] { emit_list(s->body); });
    loop_vars_ = saved;
    close();
  }

  // --- EmitContext: what the block operations' code generators use (block_ops.h) ---
 public:
  void emit_line(const std::string& s) override { line_(s); }
  void emit_open(const std::string& s) override { open(s); }
  void emit_close() override { close(); }
  std::string fresh_name(const std::string& prefix) override { return fresh(prefix); }
  std::string index_c(const Expr& e) override { return c(simplify(e, env_)); }
  std::string element(const Value& v, const std::vector<Expr>& index) override { return elem(v, index); }
  void each_index(const std::vector<Expr>& shape,
                  const std::function<void(const std::vector<Expr>&)>& body) override {
    loops(shape, body);
  }
  std::string array_of(const Value& v, DType dtype, const std::string& what) override {
    return as_array(v, dtype, what);
  }
  void declare_array(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                     const std::string& what) override {
    new_array(name, shape, dtype, what);
  }
  void declare_scalar(const std::string& name, DType dtype) override { new_scalar(name, dtype); }
  std::string count_c(const std::vector<Expr>& shape) override { return array_size(shape, "a block"); }
  std::string flat_c(const std::vector<Expr>& shape, const std::vector<Expr>& index) override {
    return c(flat_index(shape, index));
  }
  void materialize(const Value& v) override { materialize_parts(v); }
  std::string materialized_name(const Value& v) override {
    auto it = materialized_.find(v.get());
    return it == materialized_.end() ? "" : it->second;
  }
  void set_materialized(const Value& v, const std::string& name) override {
    materialized_[v.get()] = name;
    keep_alive_.push_back(v);
  }
  void set_combine_args(const std::vector<std::string>& names) override { combine_args_ = names; }
  std::string combine_arg(int index) override { return combine_args_.at(index); }
  void bind_let(int id, const std::string& name) override { lets_[id] = name; }
  bool let_used(int id) override {
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
  const Param& param(int index) override { return k_.params.at(index); }
  int program_dims() override { return static_cast<int>(layout_.outermost_shape().size()); }

 private:
  std::vector<std::string> combine_args_;
  std::optional<std::set<int>> let_uses_;
  const Kernel& k_;
  lower::ProgramLayout layout_;
  BoundsEnv env_;
  std::ostringstream body_;
  int indent_ = 1;
  int counter_ = 0;
  bool fast_ = false;
  const bool distribute_;
  bool distributable_ = true;
  std::set<int> stored_params_, loaded_params_;
  const std::vector<Value>* vector_trees_ = nullptr;  // nest() -> loops(): hint the innermost loop
  const lower::TensorAccess* vector_target_ = nullptr;
  std::set<std::string> declared_;
  std::map<std::string, SymbolAttrs> symbols_;
  Expr private_bytes_ = Expr(0);
  std::vector<std::string> unit_macros_;
  std::map<const ValueNode*, std::string> materialized_;
  std::map<const ValueNode*, lower::TensorAccess> accesses_;
  std::map<int, std::string> lets_, locals_;
  std::map<std::string, std::string> loop_vars_;
  std::vector<Value> keep_alive_;  // nodes whose addresses key the maps above
  // Mode::WorkGroup (see "the work-group layout" above).
  const bool group_ = false;
  bool serial_ = false;  // emitting for work-item 0 alone
  std::optional<Aligned> aligned_;  // the innermost tile nest being emitted
  std::set<std::string> must_share_, misaligned_;
  std::map<std::string, std::string> distributed_;         // array name -> value key
  std::map<std::string, std::string> distributed_shapes_;  // array name -> shape_key()
  std::map<std::string, int> layouts_;                     // shape_key() -> tile layout id
  std::string layout_macros_;
  std::vector<std::string> local_decls_;  // shared arrays and scalars, at kernel scope
  Expr local_bytes_ = Expr(0);
  std::set<int> reread_params_;
  std::string kernel_text_;
};

}  // namespace

const char* const kWorkGroupBody = "// A program on a work-group of NT_WORK_ITEMS work-items.\n";
const char* const kWorkItemBody = "// A program on one work-item.\n";

std::string unit_stride_macro(const std::string& stride_symbol) { return "NT_UNIT_" + stride_symbol; }

std::string constexpr_param_macro(int param) { return "NT_CONSTEXPR_" + std::to_string(param); }

KernelSource generate_opencl(const Kernel& kernel) {
  Emitter elementwise(kernel, Mode::Elementwise);
  KernelSource out = elementwise.run();
  if (elementwise.distributable()) return out;  // one source for both layouts
  Emitter item(kernel, Mode::WorkItem);
  out = item.run();
  // The work-group source, emitted again with what turned out to be read elsewhere shared,
  // until nothing is (each round shares at least one more value).
  std::set<std::string> shared;
  for (;;) {
    Emitter group(kernel, Mode::WorkGroup, shared);
    KernelSource g;
    try {
      g = group.run();
    } catch (const std::exception&) {
      return out;  // a program on one work-item only
    }
    size_t before = shared.size();
    shared.insert(group.misaligned().begin(), group.misaligned().end());
    if (group.misaligned().empty()) {
      out.source = std::string(kPreamble) + kMathPreamble + kAtomicPreamble + "\n#if NT_WORK_ITEMS > 1\n" +
                   kWorkGroupBody + group.kernel_text() + "#else\n" + kWorkItemBody + item.kernel_text() +
                   "#endif  // NT_WORK_ITEMS > 1\n";
      out.symbols.insert(g.symbols.begin(), g.symbols.end());
      out.local_bytes = g.local_bytes;
      out.work_group_capable = true;
      return out;
    }
    if (shared.size() == before) return out;
  }
}

}  // namespace nt::codegen
