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

void Emitter::collect_equal_sizes() {
  // Sizes the kernel asserts equal (checked at build time) name one size: a block of (BM, size
  // of q's last dimension) and one of (BM, size of v's) share a tile layout, so that a value
  // flowing between them stays in the work-items' registers. Each maps to a smaller one, so the
  // chains end.
  for (const auto& [a, b] : k_.assumed_equal) {
    const std::string ra = equal_size(c(simplify(a, env_))), rb = equal_size(c(simplify(b, env_)));
    if (ra != rb) equal_sizes_[std::max(ra, rb)] = std::min(ra, rb);
  }
}

std::string Emitter::equal_size(std::string size) const {
  for (auto it = equal_sizes_.find(size); it != equal_sizes_.end(); it = equal_sizes_.find(size))
    size = it->second;
  return size;
}

std::string Emitter::shape_key(const std::vector<Expr>& shape) {
  std::string key = "[";
  for (const Expr& s : shape) key += equal_size(c(simplify(s, env_))) + ",";
  return key + "]";
}

bool Emitter::same_index(const std::vector<std::string>& names, const std::vector<Expr>& index) {
  if (names.size() != index.size()) return false;
  for (size_t d = 0; d < names.size(); ++d) {
    if (!index[d].is_var() || index[d]->name != names[d]) return false;
  }
  return true;
}

std::string Emitter::let_key(int id) { return "let" + std::to_string(id); }

std::string Emitter::local_key(int id) { return "local" + std::to_string(id); }

std::string Emitter::load_key(const Value& load) {
  std::string key = "load" + std::to_string(load->param);
  for (const Value& o : load->operands) key += ":" + std::to_string(reinterpret_cast<uintptr_t>(o.get()));
  return key;
}

std::string Emitter::node_key(const Value& v) {
  return "node" + std::to_string(reinterpret_cast<uintptr_t>(v.get()));
}

int Emitter::tile_layout(const std::vector<Expr>& shape) {
  std::string key = shape_key(shape);
  auto it = layouts_.find(key);
  if (it != layouts_.end()) return it->second;
  if (int id = family_layout(key); id >= 0) return id;
  int id = static_cast<int>(layouts_.size());
  std::string rows = "1";
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows += " * (" + c(simplify(shape[d], env_)) + ")";
  std::string columns = shape.empty() ? "1" : c(simplify(shape.back(), env_));
  layout_macros_ +=
      lower::ProgramLayout::tile_layout(id, rows, columns, mma_shapes_.count(key) > 0,
                                        wgmma_shapes_.count(key) > 0, row_warp_shapes_.count(key) > 0);
  layouts_.emplace(key, id);
  return id;
}

std::string Emitter::lane_coordinates(int layout, const std::string& tx, const std::string& ty) {
  std::string n = std::to_string(layout);
  return "const nt_index " + tx + " = NT_VLANE" + n + " % NT_TX" + n + ", " + ty + " = NT_VLANE" + n +
         " / NT_TX" + n + ";";
}

void Emitter::tile_loops(const std::vector<Expr>& shape,
                         const std::function<void(const std::vector<Expr>&)>& body) {
  std::string n = std::to_string(tile_layout(shape));
  std::string tx = fresh("nt_tx"), ty = fresh("nt_ty"), r = fresh("nt_r"), col = fresh("nt_c");
  std::string row = fresh("nt_row");
  open("");
  line_(lane_coordinates(std::stoi(n), tx, ty));
  line_("NT_UNROLL");
  open("for (int " + r + " = 0; " + r + " < NT_R" + n + "; ++" + r + ")");
  line_("const nt_index " + row + " = NT_ROW" + n + "(" + ty + ", " + r + ");");
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
  line_("const nt_index " + names.back() + " = NT_COL" + n + "(" + tx + ", " + col + ");");
  open("if (NT_FULL" + n + " || (" + row + " < NT_ROWS" + n + " && " + names.back() + " < NT_COLS" + n +
       "))");
  // The row's digits over the leading sizes, the last fastest.
  std::string rest = row;
  for (size_t d = shape.size() - 1; d-- > 0;) {
    std::string size = c(simplify(shape[d], env_));
    line_("const nt_index " + names[d] + " = " + (d == 0 ? rest : rest + " % (" + size + ")") + ";");
    if (d > 0) {
      std::string next = fresh("nt_rest");
      line_("const nt_index " + next + " = " + rest + " / (" + size + ");");
      rest = next;
    }
  }
  auto saved = aligned_;
  aligned_ = Aligned{shape_key(shape), names, "(" + r + " * NT_C" + n + " + " + col + ")", r};
  body(index);
  aligned_ = saved;
  close();
  close();
  close();
  close();
}

void Emitter::barrier() {
  if (group_ && !serial_) line_("NT_BARRIER();");
}

void Emitter::new_array(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                        const std::string& what, const std::string& key) {
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
  declare_local(ct, name, count, mul(n, static_cast<int64_t>(c_size(ct))));
}

void Emitter::new_scalar(const std::string& name, DType dtype) {
  std::string ct = compute_type(dtype);
  if (!group_) {
    line_(ct + " " + name + ";");
    return;
  }
  declare_local(ct, name, "", Expr(static_cast<int64_t>(c_size(ct))));
}

void Emitter::declare_local(const std::string& type, const std::string& name, const std::string& count,
                            Expr bytes, const std::string& attributes, int align) {
  if (d_.dynamic_local_base.empty()) {
    local_bytes_ = add(local_bytes_, bytes);
    local_decls_.push_back(std::string(d_.local_declaration) + type + " " + name +
                           (count.empty() ? "" : "[" + count + "]") + attributes + ";");
    return;
  }
  // One dynamic buffer, carved into 16-byte-aligned pieces (`align`-byte ones where asked: the
  // buffer's base is as aligned as any); 15 bytes of padding counted each, and the alignment's.
  local_bytes_ = add(local_bytes_, add(bytes, int64_t{15} + (align > 16 ? align - 1 : 0)));
  const std::string start = align > 16 ? "(" + local_end_ + " + " + std::to_string(align - 1) + ") / " +
                                             std::to_string(align) + " * " + std::to_string(align)
                                       : local_end_;
  const std::string base = std::string(d_.dynamic_local_name) + " + " + start;
  if (count.empty())
    local_decls_.push_back(type + "& " + name + " = *(" + type + "*)(" + base + ");");
  else
    local_decls_.push_back(type + "* " + name + " = (" + type + "*)(" + base + ");");
  const std::string end = fresh("nt_local_end");
  local_decls_.push_back("const nt_index " + end + " = (" + start + " + (long)sizeof(" + type + ")" +
                         (count.empty() ? "" : " * (" + count + ")") + " + 15) / 16 * 16;");
  local_end_ = end;
}

int Emitter::c_size(const std::string& ct) { return ct == "double" || ct == "long" || ct == "ulong" ? 8 : 4; }

bool Emitter::is_distributed(const std::string& name) const { return distributed_.count(name) > 0; }

void Emitter::on_first_work_item(const std::function<void()>& f) {
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

void Emitter::count_accesses() {
  struct Accesses : IRVisitor {
    using IRVisitor::visit;
    void visit(const Value& v) override {
      if (v->kind == ValueKind::Load) ++uses[load_key(v)];
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
    std::map<std::string, int> uses;
  } accesses;
  accesses.visit(k_.body);
  load_uses_ = std::move(accesses.uses);
  for (const auto& [param, count] : accesses.stored) {
    if (count > 1 || accesses.loaded.count(param)) reread_params_.insert(param);
  }
}

void Emitter::before_store(int param) {
  if (group_ && reread_params_.count(param)) barrier();
}

void Emitter::after_store(int param) {
  if (!group_) return;
  if (reread_params_.count(param)) barrier();
  // What was held of the parameter may be stale now.
  std::string key = "load" + std::to_string(param);
  for (auto it = held_.begin(); it != held_.end();) {
    bool of_param = it->first == key || it->first.rfind(key + ":", 0) == 0;
    it = of_param ? held_.erase(it) : ++it;
  }
}

bool Emitter::reduces_rows(const Value& v) {
  const std::vector<Expr>& shape = v->operands[0]->type.shape;
  if (shape.empty()) return false;
  for (const Expr& s : shape) {
    if (!is_compile_time(s)) return false;
  }
  if (v->axis == static_cast<int>(shape.size()) - 1) return true;
  if (v->axis >= 0) return false;
  for (size_t d = 0; d + 1 < shape.size(); ++d) {
    if (!shape[d].is_int(1)) return false;
  }
  return true;
}

void Emitter::hold_loads(const Value& x, const std::vector<Expr>& shape) {
  std::string key = shape_key(shape);
  std::vector<Value> loads;
  for_each_load(x, [&](const Value& load) {
    if (load->kind == ValueKind::Load && load_uses_[load_key(load)] > 1 && !held_.count(load_key(load)) &&
        shape_key(load->type.shape) == key && !must_share_.count(load_key(load)))
      loads.push_back(load);
  });
  for (const Value& load : loads) {
    if (held_.count(load_key(load))) continue;  // read twice in `x` itself
    std::string name = fresh("nt_held");
    new_array(name, load->type.shape, load->type.dtype, "a block loaded once", load_key(load));
    nest(load->type.shape, {load}, nullptr, [&](const std::vector<Expr>& i) {
      line_(element_of(name, load->type, i) + " = " + elem(load, i) + ";");
    });
    held_[load_key(load)] = name;
  }
}

void Emitter::emit_reduce_rows(const Value& v) {
  auto fn = static_cast<ReduceFn>(v->op);
  const Value& x = v->operands[0];
  DType in = x->type.dtype;
  std::string ct = compute_type(v->type.dtype), xt = compute_type(in);
  bool f = dtype_is_float(in);
  bool arg = fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin;
  std::string at = arg ? xt : ct;  // the partials' type
  const std::vector<Expr>& shape = x->type.shape;
  std::string name = fresh("nt_red");
  bool scalar = v->type.is_scalar();
  if (scalar) {
    new_scalar(name, v->type.dtype);
  } else {
    // A row family member's rows: into the registers of the rows' work-items (emitter_row_slices.cpp).
    new_array(name, v->type.shape, v->type.dtype, "a reduction result",
              reduces_into_slice(v) ? node_key(v) : "");
  }
  const bool held = is_distributed(name);
  hold_loads(x, shape);
  std::string n = std::to_string(tile_layout(shape));
  std::string W = "NT_WORK_ITEMS", R = "NT_R" + n;
  std::string parts = fresh("nt_parts"), bests = fresh("nt_bests"), acc = fresh("nt_acc"),
              best = fresh("nt_best");
  Expr rows = Expr(1);
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows = mul(rows, shape[d]);
  // Bounds, in entries of the partials' type: NT_R <= rows, and NT_R W = ceil(rows / NT_TY) NT_TY NT_TX
  // <= rows NT_TX + W, where NT_TX (a power of two, at most W) is 4 NT_WN <= W / 8 in the mma layout,
  // else at most min(pow2ceil(columns), max(16, W / pow2ceil(rows))). Empty blocks count a row and a
  // column there: the layouts run at least one work-item along them. (Before these bounds, a 64 x 64
  // block's float partials on 128 work-items took 64 KB, not 4.6.)
  const Expr work_items = var(kWorkItemsSymbol);
  Expr columns = max(shape.empty() ? Expr(1) : shape.back(), Expr(int64_t{1}));
  // A row family's member takes its head's NT_TX (emitter_row_slices.cpp): bounded by the widest
  // member's columns, the head's among them. (Bounded by W alone, flash attention's two row
  // reductions took 64 KB each at 128 x 64 on 128 work-items, and its time went from 2.6 ms to 3.5.)
  if (auto member = family_of_.find(shape_key(shape)); member != family_of_.end())
    for (const std::vector<Expr>& other : row_families_.at(member->second).members)
      columns = max(columns, other.back());
  const Expr some_rows = max(rows, Expr(int64_t{1}));
  const Expr per_row = floordiv(add(work_items, add(some_rows, int64_t{-1})), some_rows);
  const Expr cyclic = min(mul(columns, int64_t{2}), max(Expr(int64_t{16}), per_row));
  const Expr tx_bound = min(work_items, max(floordiv(work_items, Expr(int64_t{8})), cyclic));
  const Expr entries = min(mul(some_rows, work_items), add(mul(some_rows, tx_bound), work_items));
  declare_local(at, parts, R + " * " + W, mul(entries, int64_t{c_size(at)}));
  if (arg) declare_local("int", bests, R + " * " + W, mul(entries, int64_t{4}));
  for_each_load(x, [&](const Value& load) { access_of(load); });  // their index variables, out here
  if (!held) barrier();                                           // the shared result's last readers are done
  open("");
  line_(at + " " + acc + "[" + R + "];");
  // The column of each row's best so far: argmax and argmin only (else set and never read).
  if (arg) line_("int " + best + "[" + R + "];");
  line_("for (int nt_r = 0; nt_r < " + R + "; ++nt_r) " + acc + "[nt_r] = " + reduce_init(fn, in) +
        (arg ? ", " + best + "[nt_r] = 0;" : ";"));
  nest(
      shape, {x}, nullptr,
      [&](const std::vector<Expr>& index) {
        std::string value = "(" + at + ")(" + elem(x, index) + ")";
        std::string a = acc + "[" + aligned_->row_slot + "]";
        if (arg) {
          line_("const " + xt + " nt_v = " + value + ";");
          open(std::string("if (nt_v ") + (fn == ReduceFn::ArgMax ? ">" : "<") + " " + a + ")");
          line_(a + " = nt_v;");
          line_(best + "[" + aligned_->row_slot + "] = (int)" + index.back()->name + ";");
          close();
        } else {
          line_(a + " = " + combine_c(fn, f, a, value) + ";");
        }
      },
      /*hint=*/false);
  std::string tx = fresh("nt_tx"), ty = fresh("nt_ty"), s = fresh("nt_s");
  line_(lane_coordinates(std::stoi(n), tx, ty));
  // Across the row's work-items (reduction_c.h): by shuffles first where a warp's work-items
  // exchange registers.
  static const std::set<std::string> shuffled = {"int", "uint", "long", "ulong", "float", "double"};
  const bool shuffles = d_.warp_shuffles && !arg && shuffled.count(at);
  const std::string span = shuffles ? fresh("nt_span") : "";
  write_row_combine(*this, {std::stoi(n), fn, f, arg, acc, best, parts, bests, tx, ty, s, span,
                            mma_shapes_.count(shape_key(shape)) > 0, name, scalar, ct, held});
  close();
  materialized_[v.get()] = name;
}

void Emitter::emit_reduce_group(const Value& v) {
  if (reduces_rows(v)) {
    emit_reduce_rows(v);
    return;
  }
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
  const Expr work_items = var(kWorkItemsSymbol);
  declare_local(at, parts, "NT_WORK_ITEMS", mul(work_items, int64_t{8}));
  if (arg) declare_local("int", best_parts, "NT_WORK_ITEMS", mul(work_items, int64_t{4}));
  for_each_load(x, [&](const Value& load) { access_of(load); });
  // Work-items per row (a power of two): as many as the row has elements, up to the
  // work-group, but fewer when there are many rows.
  std::string tr = fresh("nt_tr"), tk = fresh("nt_tk"), lanes = fresh("nt_lanes"), k0 = fresh("nt_k0");
  std::string k = fresh("nt_k"), r = fresh("nt_rr"), s = fresh("nt_s"), acc = fresh("nt_acc"),
              best = fresh("nt_best");
  barrier();
  open("");
  line_("const nt_index " + lanes + " = NT_MAX(1, NT_MIN(NT_POW2CEIL(" + R +
        "), NT_MAX(1, (nt_index)NT_WORK_ITEMS / NT_POW2CEIL(" + K + "))));");
  line_("const nt_index " + tr + " = NT_LANE % " + lanes + ", " + tk + " = NT_LANE / " + lanes + ";");
  open("for (nt_index " + k0 + " = 0; " + k0 + " < " + K + "; " + k0 + " += (nt_index)NT_WORK_ITEMS / " +
       lanes + ")");
  line_("const nt_index " + k + " = " + k0 + " + " + tk + ";");
  line_(at + " " + acc + " = " + init + ";");
  if (arg) line_("int " + best + " = 0;");
  open("if (" + k + " < " + K + ")");
  // The kept digits of k and the reduced digits of r, row-major.
  auto digits = [&](const std::string& flat, const std::vector<Expr>& sizes) {
    std::vector<Expr> index(sizes.size());
    std::string rest = flat;
    SymbolAttrs attrs;
    attrs.lower_bound = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      std::string name = fresh("e"), size = c(simplify(sizes[d], env_));
      line_("const nt_index " + name + " = " + (d == 0 ? rest : rest + " % (" + size + ")") + ";");
      env_.set(name, 0, std::nullopt);
      env_.set_symbolic(name, Expr(0), sub(sizes[d], 1));
      index[d] = var(name, attrs);
      if (d > 0) {
        std::string next = fresh("nt_rest");
        line_("const nt_index " + next + " = " + rest + " / (" + size + ");");
        rest = next;
      }
    }
    return index;
  };
  std::vector<Expr> outer = digits(k, kept);
  open("for (nt_index " + r + " = " + tr + "; " + r + " < " + R + "; " + r + " += " + lanes + ")");
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
  open("for (nt_index " + s + " = " + lanes + " / 2; " + s + " > 0; " + s + " /= 2)");
  open("if (" + tr + " < " + s + ")");
  const std::string partner = "[NT_LANE + " + s + "]";
  write_combine_partner(*this, fn, f, parts + "[NT_LANE]", parts + partner,
                        arg ? best_parts + "[NT_LANE]" : "", arg ? best_parts + partner : "");
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

bool Emitter::aligned_layout(const std::string& name, const std::vector<Expr>& shape) {
  auto it = distributed_shapes_.find(name);
  return it != distributed_shapes_.end() && it->second == shape_key(shape);
}

}  // namespace nt::codegen
