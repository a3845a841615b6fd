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
#include "codegen/c/emitter.h"
#include "codegen/c/math_calls.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "lower/program_layout.h"
#include "lower/tensor_access.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

using namespace nt::ir;

void Emitter::loops(const std::vector<Expr>& shape, const std::function<void(const std::vector<Expr>&)>& body,
                    size_t d, std::vector<Expr> index, bool plain) {
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
  if (d == 0 && !group_ && !distribute_ && !tables_.in_nest() && shape.size() >= 2) {
    with_index_tables(shape, [&] { loops(shape, body, 0, index, plain); });
    return;
  }
  index.push_back(index_variable("e", shape[d]));
  std::string v = index.back()->name;
  if (tables_.in_nest() && !tables_.complete()) tables_.add_index(v, index.size() == shape.size());
  if (d + 1 == shape.size() && vector_trees_) {
    const std::vector<Value>* trees = vector_trees_;
    vector_trees_ = nullptr;  // the innermost loop of this nest only
    std::vector<Value> prefetch;
    prefetch.swap(prefetch_loads_);
    bool wide = false;
    auto test = vector_hint_test(*trees, vector_target_, index, v, wide);
    std::string streams = test && !wide ? stream_test(index) : "";
    if (streams.empty()) {
      innermost_loop(shape, body, d, index, plain, test, wide, prefetch);
      return;
    }
    // Under the hint's test too: the vector stores assume its unit stride. A distributed nest
    // streams where a program is one work-item (a CPU's), whose loop the strips replace.
    line_("#if " + *test + (distribute_ ? " && NT_WORK_ITEMS == 1" : ""));
    open("if (" + streams + ")");
    strip_mined_loop(shape, body, d, index, plain, prefetch, *test, /*stream=*/true);
    close("} else");
    line_("#endif");
    open("");
    innermost_loop(shape, body, d, index, plain, test, wide, prefetch);
    close();
    return;
  }
  innermost_loop(shape, body, d, index, plain, std::nullopt, false, {});
}

void Emitter::innermost_loop(const std::vector<Expr>& shape,
                             const std::function<void(const std::vector<Expr>&)>& body, size_t d,
                             const std::vector<Expr>& index, bool plain,
                             const std::optional<std::string>& test, bool wide,
                             const std::vector<Value>& prefetch) {
  const std::string v = index.back()->name;
  std::streampos hint_at = body_.tellp(), loop_at = hint_at;
  if (test) {
    if (!wide && (!prefetch.empty() || strips_)) {
      strip_mined_loop(shape, body, d, index, plain, prefetch, *test);
      return;
    }
    emit_vector_hint(*test, wide);
    loop_at = body_.tellp();
  }
  if (d + 1 == shape.size()) lane_of_last_ = "(" + v + " % 16)";
  std::string extent = c(simplify(shape[d], env_));
  if ((distribute_ || (group_ && !serial_)) &&
      d + 1 == shape.size()) {  // this work-item's elements: see run()
    open("for (nt_index " + v + " = NT_LANE; " + v + " < " + extent + "; " + v + " += NT_WORK_ITEMS)");
  } else {
    open("for (nt_index " + v + " = 0; " + v + " < " + extent + "; ++" + v + ")");
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

Expr Emitter::index_variable(const std::string& prefix, const Expr& extent) {
  std::string name = fresh(prefix);
  SymbolAttrs attrs;
  attrs.lower_bound = 0;
  env_.set(name, 0, std::nullopt);
  env_.set_symbolic(name, Expr(0), sub(extent, 1));
  return var(name, attrs);
}

void Emitter::nest(const std::vector<Expr>& shape, const std::vector<Value>& trees,
                   const lower::TensorAccess* target,
                   const std::function<void(const std::vector<Expr>&)>& body, bool hint,
                   const std::function<void()>& fast_path, bool prefetch, bool strips, bool reorder) {
  const std::set<int> read_before = loaded_params_;
  // Only a body that writes its element and nothing else may run in another order; one that folds
  // reductions by lane (write_array()) reads the lane of loops()' innermost loop.
  auto in_order = [&] {
    reorder && !strips ? ordered_loops(shape, trees, target, body) : loops(shape, body);
  };
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
  if (never_fast) {
    in_order();
    return;
  }
  if (tests.empty()) {  // wholly in bounds wherever the block is: the unmasked path alone
    bool was_fast = fast_;
    fast_ = true;
    if (fast_path) {
      fast_path();
    } else {
      vector_trees_ = hint && !group_ && !shape.empty() ? &trees : nullptr;
      vector_target_ = target;
      if (prefetch) prefetch_loads_ = reread_loads(trees, read_before);
      strips_ = strips;
      in_order();
      vector_trees_ = nullptr;
      vector_target_ = nullptr;
      prefetch_loads_.clear();
      strips_ = false;
    }
    fast_ = was_fast;
    return;
  }
  std::string all;
  for (size_t i = 0; i < tests.size(); ++i) all += (i ? " && " : "") + tests[i];
  open("if (" + all + ")");
  fast_ = true;
  vector_trees_ = hint && !group_ && !fast_path && !shape.empty() ? &trees : nullptr;
  vector_target_ = target;
  if (prefetch && !fast_path) prefetch_loads_ = reread_loads(trees, read_before);
  strips_ = strips && !fast_path;
  if (fast_path) {
    fast_path();
  } else {
    in_order();
  }
  vector_trees_ = nullptr;
  vector_target_ = nullptr;
  prefetch_loads_.clear();
  strips_ = false;
  fast_ = false;
  close("} else {");
  ++indent_;
  in_order();
  close();
}

void Emitter::for_each_load(const Value& v, const std::function<void(const Value&)>& f) {
  if (materialized_.count(v.get())) return;
  if (v->kind == ValueKind::Load) f(v);
  for (const Value& o : v->operands) for_each_load(o, f);
}

std::optional<std::string> Emitter::unit_macro_of(const Expr& stride) const {
  if (!stride.is_var() || !declared_.count(stride->name)) return std::nullopt;
  std::string macro = unit_stride_macro(stride->name);
  if (std::find(launch_macros_.begin(), launch_macros_.end(), macro) == launch_macros_.end())
    return std::nullopt;
  return macro;
}

std::optional<Expr> Emitter::coefficient(const Expr& e, const std::string& v) {
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

bool Emitter::elementwise_reads(const Value& v, const std::vector<Expr>& index,
                                const std::function<bool(const Value&, const std::vector<Expr>&)>& visit) {
  if (!visit(v, index)) return false;
  if (materialized_.count(v.get())) return true;  // a private array read at the element
  switch (v->kind) {
    case ValueKind::Constant:
    case ValueKind::ScalarParam:
    case ValueKind::LoopVar:
    case ValueKind::ProgramId:
    case ValueKind::Arange:
    case ValueKind::LetRef:
    case ValueKind::LocalRef:
    case ValueKind::Load:
      return true;
    case ValueKind::Full:
      return elementwise_reads(v->operands[0], {}, visit);
    case ValueKind::Unary:
    case ValueKind::Binary:
    case ValueKind::Where:
    case ValueKind::Cast:
    case ValueKind::Fma:
    case ValueKind::Call:
      for (const Value& o : v->operands) {
        size_t rank = o->type.shape.size();
        if (rank != 0 && rank != index.size()) return false;
        if (!elementwise_reads(o, rank ? index : std::vector<Expr>{}, visit)) return false;
      }
      return true;
    case ValueKind::ExpandDims: {
      std::vector<Expr> i = index;
      i.erase(i.begin() + v->axis);
      return elementwise_reads(v->operands[0], i, visit);
    }
    case ValueKind::Broadcast: {
      std::vector<Expr> i = index;
      for (size_t d = 0; d < i.size(); ++d) {
        if (v->operands[0]->type.shape[d].is_int(1) && !v->type.shape[d].is_int(1)) i[d] = Expr(0);
      }
      return elementwise_reads(v->operands[0], i, visit);
    }
    default:
      return false;
  }
}

void Emitter::vector_hint(const std::vector<Value>& trees, const lower::TensorAccess* target,
                          const std::vector<Expr>& index, const std::string& inner) {
  bool wide = false;
  if (auto test = vector_hint_test(trees, target, index, inner, wide)) emit_vector_hint(*test, wide);
}

std::optional<std::string> Emitter::vector_hint_test(const std::vector<Value>& trees,
                                                     const lower::TensorAccess* target,
                                                     const std::vector<Expr>& index, const std::string& inner,
                                                     bool& wide) {
  std::set<std::string> macros;
  wide = false;
  // Every value steps through memory by one element (or none) along `inner`; a 64-bit one is wide.
  auto unit_step = [&](const Value& v, const std::vector<Expr>& at) {
    DType dt = v->type.dtype;
    // A 64-bit constant or scalar (a Python int) is one value for every lane, not a 64-bit vector.
    bool uniform = v->kind == ValueKind::Constant || v->kind == ValueKind::ScalarParam;
    if ((dt == DType::float64 || dt == DType::int64 || dt == DType::uint64) && !uniform) wide = true;
    if (v->kind != ValueKind::Load || materialized_.count(v.get())) return true;
    const lower::TensorAccess& a = access_of(v);
    if (a.never) return true;
    // vload_half and bfloat16's shifts at 16 lanes measured 2x slower than PoCL's own choice.
    DType stored = k_.params[v->param].dtype;
    if (stored == DType::float16 || stored == DType::bfloat16) return false;
    auto step = coefficient(simplify(a.offset_at(at), env_), inner);
    if (!step) return false;
    Expr s = simplify(*step, env_);
    if (s.is_int(0) || s.is_int(1)) return true;
    auto macro = unit_macro_of(s);
    if (!macro) return false;
    macros.insert(*macro);
    return true;
  };
  for (const Value& t : trees) {
    if (!elementwise_reads(t, index, unit_step)) return std::nullopt;
  }
  if (target) {
    auto step = coefficient(simplify(target->offset_at(index), env_), inner);
    if (!step) return std::nullopt;
    Expr s = simplify(*step, env_);
    if (!s.is_int(1)) {
      auto macro = unit_macro_of(s);
      if (!macro) return std::nullopt;
      macros.insert(*macro);
    }
  }
  std::string test = "defined(__clang__)";
  for (const std::string& m : macros) test += " && " + m;
  return test;
}

void Emitter::emit_vector_hint(const std::string& test, bool wide) {
  line_("#if " + test);
  line_(std::string("#pragma clang loop vectorize_width(") + (wide ? "8" : "16") + ")");
  line_("#endif");
}

}  // namespace nt::codegen
