#include "ir/verifier.h"

#include <set>
#include <stdexcept>
#include <string>

#include "ir/builder.h"
#include "ir/printer.h"

namespace nt::ir {

namespace {

class Verifier {
 public:
  explicit Verifier(const Kernel& kernel) : kernel_(kernel) {}

  void check_list(const StmtList& stmts) {
    // Bindings made in a block end with it.
    auto lets = lets_;
    auto locals = locals_;
    for (const Stmt& s : stmts) check_stmt(s);
    lets_ = std::move(lets);
    locals_ = std::move(locals);
  }

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& where) {
    throw std::logic_error("IR verifier: " + what + " in " + where);
  }

  bool assumed_equal(const Expr& a, const Expr& b) const {
    for (const auto& [x, y] : kernel_.assumed_equal) {
      if ((equal(x, a) && equal(y, b)) || (equal(x, b) && equal(y, a))) return true;
    }
    return false;
  }

  void same_shape(const Type& a, const Type& b, const std::string& where) {
    if (a.ndim() != b.ndim()) fail("shape mismatch " + type_string(a) + " vs " + type_string(b), where);
    for (size_t i = 0; i < a.ndim(); ++i) {
      if (!same_size(a.shape[i], b.shape[i]) && !assumed_equal(a.shape[i], b.shape[i]))
        fail("shape mismatch " + type_string(a) + " vs " + type_string(b), where);
    }
  }

  void check_value(const Value& v) {
    for (const Value& o : v->operands) check_value(o);
    std::string where = to_string(v);
    switch (v->kind) {
      case ValueKind::ScalarParam:
      case ValueKind::Load:
      case ValueKind::Offsets:
        if (v->param < 0 || v->param >= static_cast<int>(kernel_.params.size())) fail("unknown param", where);
        if (v->kind != ValueKind::ScalarParam &&
            v->operands.size() != kernel_.params[v->param].middle_shape().size()) {
          fail("wrong number of level indices", where);
        }
        break;
      case ValueKind::LetRef:
        if (!lets_.count(v->id)) fail("let used outside its scope or before its definition", where);
        break;
      case ValueKind::LocalRef:
        if (!locals_.count(v->id)) fail("local used outside its scope or before its declaration", where);
        break;
      case ValueKind::LoopVar:
        if (!loop_vars_.count(v->name)) fail("loop variable outside its loop", where);
        break;
      case ValueKind::Binary:
      case ValueKind::Where:
      case ValueKind::Fma:
        for (const Value& o : v->operands) same_shape(o->type, v->type, where);
        break;
      case ValueKind::Full:
      case ValueKind::Cast:
      case ValueKind::ExpandDims:
      case ValueKind::Broadcast:
      case ValueKind::Trans:
      case ValueKind::Reduce:
        if (v->operands.size() != 1) fail("expected one operand", where);
        break;
      case ValueKind::Dot:
        if (v->operands.size() != 2) fail("expected two operands", where);
        break;
      case ValueKind::LoadAt: {
        const Param& p = kernel_.params.at(v->param);
        if (v->axis != static_cast<int>(p.middle_shape().size()) ||
            v->operands.size() != v->axis + p.block_shape().size()) {
          fail("wrong number of level indices or positions", where);
        }
        for (size_t i = v->axis; i < v->operands.size(); ++i)
          same_shape(v->operands[i]->type, v->type, where);
        break;
      }
      default:
        break;
    }
  }

  void check_stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Let:
        check_value(s->value);
        lets_.insert(s->id);
        break;
      case StmtKind::DeclareLocal:
        check_value(s->value);
        same_shape(s->value->type, kernel_.local_types.at(s->id), "local declaration");
        locals_.insert(s->id);
        break;
      case StmtKind::Assign:
        check_value(s->value);
        if (!locals_.count(s->id)) fail("assignment to an undeclared local", "assign");
        same_shape(s->value->type, kernel_.local_types.at(s->id), "assignment");
        break;
      case StmtKind::StorePointer:
      case StmtKind::AtomicAdd:
        for (const Value& i : s->indices) {
          check_value(i);
          same_shape(i->type, s->indices[0]->type, "store through pointers");
        }
        if (s->indices.size() != 3) fail("expected pointers, value and mask", "store through pointers");
        break;
      case StmtKind::Atomic:
        for (const Value& i : s->indices) {
          check_value(i);
          same_shape(i->type, s->indices[0]->type, "atomic");
        }
        lets_.insert(s->id);
        break;
      case StmtKind::Print:
        for (const Value& i : s->indices) check_value(i);
        break;
      case StmtKind::Assert:
        check_value(s->value);
        break;
      case StmtKind::Store: {
        check_value(s->value);
        for (const Value& i : s->indices) check_value(i);
        const Param& p = kernel_.params.at(s->param);
        if (s->indices.size() != p.middle_shape().size()) fail("wrong number of level indices", "store");
        same_shape(s->value->type, Type{p.dtype, p.block_shape()}, "store into " + p.name);
        break;
      }
      case StmtKind::StoreAt: {
        check_value(s->value);
        for (const Value& i : s->indices) check_value(i);
        const Param& p = kernel_.params.at(s->param);
        if (s->id != static_cast<int>(p.middle_shape().size()) ||
            s->indices.size() != s->id + p.block_shape().size()) {
          fail("wrong number of level indices or positions", "store_at");
        }
        for (size_t i = s->id; i < s->indices.size(); ++i)
          same_shape(s->indices[i]->type, s->value->type, "store_at");
        break;
      }
      case StmtKind::For:
        for (const Value* b : {&s->start, &s->stop, &s->step}) {
          check_value(*b);
          if (!(*b)->type.is_scalar()) fail("loop bound is not a scalar", "for " + s->var);
        }
        loop_vars_.insert(s->var);
        check_list(s->body);
        loop_vars_.erase(s->var);
        break;
      case StmtKind::If:
        check_value(s->value);
        if (!s->value->type.is_scalar()) fail("condition is not a scalar", "if");
        check_list(s->body);
        check_list(s->orelse);
        break;
    }
  }

  const Kernel& kernel_;
  std::set<int> lets_, locals_;
  std::set<std::string> loop_vars_;
};

}  // namespace

void verify(const Kernel& kernel) { Verifier(kernel).check_list(kernel.body); }

}  // namespace nt::ir
