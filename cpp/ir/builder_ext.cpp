// Builder statements of the Triton language beyond stores: atomics that
// return old values, device_print, device_assert, and the capture of a
// combine function's values (see builder.h).
#include <map>

#include "ir/builder.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "support/errors.h"

namespace nt::ir {

namespace {

const char* atomic_name(AtomicFn fn) {
  static const char* names[] = {"atomic_add", "atomic_max", "atomic_min",  "atomic_and",
                                "atomic_or",  "atomic_xor", "atomic_xchg", "atomic_cas"};
  return names[static_cast<int>(fn)];
}

Value boolean(const Value& mask, const std::vector<Expr>& shape) {
  Value m = mask ? mask : constant(bool_const(true));
  if (m->type.dtype != DType::boolean) m = binary(BinaryFn::Ne, m, constant(int_const(0)));
  return broadcast_to(m, shape);
}

class LetSubstituter : public IRMutator {
 public:
  using IRMutator::mutate;
  Value mutate(const Value& v) override {
    if (v->kind == ValueKind::LetRef) {
      auto it = lets.find(v->id);
      if (it != lets.end()) return it->second;
    }
    return IRMutator::mutate(v);
  }
  std::map<int, Value> lets;
};

}  // namespace

Value Builder::atomic(AtomicFn fn, const Value& pointers, const Value& value, const Value& mask,
                      const Value& compare) {
  std::string what = std::string(atomic_name(fn)) + "()";
  if (pointers->type.pointer < 0) throw TypeError(what + " needs pointers (p.source.data_ptr() + offsets)");
  const Param& p = kernel_.params.at(pointers->type.pointer);
  DType d = p.dtype;
  bool wide = d == DType::int32 || d == DType::uint32 || d == DType::int64 || d == DType::uint64;
  bool floating = d == DType::float32 || d == DType::float64;
  bool ok = fn == AtomicFn::And || fn == AtomicFn::Or || fn == AtomicFn::Xor ? wide : wide || floating;
  if (!ok) {
    throw TypeError(what + " does not support " + std::string(dtype_name(d)) +
                    (floating ? " (bitwise atomics need integers)" : " (32- and 64-bit elements only)"));
  }
  std::vector<Expr> shape = broadcast_shapes(pointers->type.shape, value->type.shape);
  if (mask) shape = broadcast_shapes(shape, mask->type.shape);
  if (compare) shape = broadcast_shapes(shape, compare->type.shape);
  StmtNode s{StmtKind::Atomic};
  s.op = static_cast<int>(fn);
  s.param = pointers->type.pointer;
  s.indices = {broadcast_to(pointers, shape), broadcast_to(cast(value, d), shape), boolean(mask, shape),
               broadcast_to(cast(compare ? compare : constant(int_const(0)), d), shape)};
  int id = static_cast<int>(kernel_.let_types.size());
  Type type{d, shape};
  kernel_.let_types.push_back(type);
  s.id = id;
  append(std::make_shared<const StmtNode>(std::move(s)));
  ValueNode node{ValueKind::LetRef, type};
  node.id = id;
  return std::make_shared<const ValueNode>(std::move(node));
}

void Builder::device_print(const std::string& prefix, const std::vector<Value>& values, bool hex) {
  StmtNode s{StmtKind::Print};
  s.var = prefix;
  s.op = hex ? 1 : 0;
  for (const Value& v : values) {
    if (v->type.pointer >= 0) throw TypeError("device_print cannot print pointers");
    s.indices.push_back(v->type.weak ? cast(v, v->type.dtype) : v);
  }
  append(std::make_shared<const StmtNode>(std::move(s)));
}

void Builder::device_assert(const Value& condition, const std::string& message, const Value& mask) {
  StmtNode s{StmtKind::Assert};
  std::vector<Expr> shape = condition->type.shape;
  if (mask) shape = broadcast_shapes(shape, mask->type.shape);
  // Failing elements: where the mask holds and the condition does not.
  s.value =
      binary(BinaryFn::LogicalAnd, boolean(mask, shape), unary(UnaryFn::Not, boolean(condition, shape)));
  s.var = message;
  append(std::make_shared<const StmtNode>(std::move(s)));
}

void Builder::begin_capture() { open_.push_back(Open{StmtNode{StmtKind::Let}}); }

std::vector<Value> Builder::end_capture(const std::vector<Value>& results) {
  if (open_.empty() || open_.back().stmt.kind != StmtKind::Let)
    throw std::logic_error("end_capture without begin");
  StmtList captured = std::move(open_.back().stmt.body);
  open_.pop_back();
  LetSubstituter substitute;
  for (const Stmt& s : captured) {
    if (s->kind != StmtKind::Let) {
      throw ValueError(
          "a combine function may only compute values (no stores, loops or `if` on blocks; use ntl.where or "
          "a "
          "conditional expression)");
    }
    substitute.lets[s->id] = substitute.mutate(s->value);
  }
  std::vector<Value> out;
  for (const Value& r : results) out.push_back(substitute.mutate(r));
  return out;
}

}  // namespace nt::ir
