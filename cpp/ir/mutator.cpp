#include "ir/mutator.h"

namespace nt::ir {

void IRVisitor::visit(const Value& value) {
  for (const Value& operand : value->operands) visit(operand);
}

void IRVisitor::visit(const Stmt& stmt) {
  if (stmt->value) visit(stmt->value);
  for (const Value& index : stmt->indices) visit(index);
  for (const Value* v : {&stmt->start, &stmt->stop, &stmt->step}) {
    if (*v) visit(*v);
  }
  visit(stmt->body);
  visit(stmt->orelse);
}

void IRVisitor::visit(const StmtList& stmts) {
  for (const Stmt& s : stmts) visit(s);
}

Value IRMutator::mutate(const Value& value) {
  bool changed = false;
  std::vector<Value> operands;
  operands.reserve(value->operands.size());
  for (const Value& operand : value->operands) {
    operands.push_back(mutate(operand));
    changed |= operands.back() != operand;
  }
  if (!changed) return value;
  ValueNode node = *value;
  node.operands = std::move(operands);
  return std::make_shared<const ValueNode>(std::move(node));
}

Stmt IRMutator::mutate(const Stmt& stmt) {
  StmtNode node = *stmt;
  bool changed = false;
  auto update = [&](Value& v) {
    if (!v) return;
    Value m = mutate(v);
    changed |= m != v;
    v = std::move(m);
  };
  update(node.value);
  for (Value& index : node.indices) update(index);
  update(node.start);
  update(node.stop);
  update(node.step);
  StmtList body = mutate(stmt->body), orelse = mutate(stmt->orelse);
  changed |= body != stmt->body || orelse != stmt->orelse;
  if (!changed) return stmt;
  node.body = std::move(body);
  node.orelse = std::move(orelse);
  return std::make_shared<const StmtNode>(std::move(node));
}

void IRMutator::mutate_into(const Stmt& stmt, StmtList& out) { out.push_back(mutate(stmt)); }

StmtList IRMutator::mutate(const StmtList& stmts) {
  StmtList out;
  out.reserve(stmts.size());
  for (const Stmt& s : stmts) mutate_into(s, out);
  return out;
}

}  // namespace nt::ir
