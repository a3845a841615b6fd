// Walking and rewriting kernel IR.
//
// IRVisitor visits every Value and Stmt reachable from what it is given
// (operands before their users; shared nodes once per path, not once per
// node). IRMutator returns a rewritten copy: each method's default rebuilds
// the node from its mutated children and returns the original node when
// nothing changed, so a pass overrides only the cases it cares about.
#pragma once

#include "ir/ir.h"

namespace nt::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Value& value);
  virtual void visit(const Stmt& stmt);
  void visit(const StmtList& stmts);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Value mutate(const Value& value);
  virtual Stmt mutate(const Stmt& stmt);
  // A list may grow or shrink: mutate_into appends the result of one stmt.
  virtual void mutate_into(const Stmt& stmt, StmtList& out);
  StmtList mutate(const StmtList& stmts);
};

}  // namespace nt::ir
