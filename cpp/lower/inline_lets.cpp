#include "lower/inline_lets.h"

#include <map>
#include <set>

#include "ir/mutator.h"

namespace nt::lower {

using namespace nt::ir;

namespace {

class LetUses : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Value& v) override {
    if (v->kind == ValueKind::LetRef) ++counts[v->id];
    IRVisitor::visit(v);
  }
  std::map<int, int> counts;
};

// What a value reads that statements may change.
struct Reads {
  std::set<int> params, locals;
};

class ReadCollector : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Value& v) override {
    if (v->kind == ValueKind::Load || v->kind == ValueKind::LoadAt || v->kind == ValueKind::LoadPointer) {
      reads.params.insert(v->param);
    }
    if (v->kind == ValueKind::LocalRef) reads.locals.insert(v->id);
    IRVisitor::visit(v);
  }
  Reads reads;
};

void collect_writes(const StmtList& stmts, Reads& writes) {
  for (const Stmt& s : stmts) {
    if (s->kind == StmtKind::Store || s->kind == StmtKind::StorePointer || s->kind == StmtKind::AtomicAdd ||
        s->kind == StmtKind::StoreAt || s->kind == StmtKind::Atomic) {
      writes.params.insert(s->param);
    }
    if (s->kind == StmtKind::Assign) writes.locals.insert(s->id);
    collect_writes(s->body, writes);
    collect_writes(s->orelse, writes);
  }
}

bool intersects(const std::set<int>& a, const std::set<int>& b) {
  for (int x : a) {
    if (b.count(x)) return true;
  }
  return false;
}

// The LetRefs used by a statement itself (not its nested blocks).
int direct_uses(const Stmt& s, int id) {
  LetUses uses;
  for (const Value* v : {&s->value, &s->start, &s->stop, &s->step}) {
    if (*v) uses.visit(*v);
  }
  for (const Value& i : s->indices) uses.visit(i);
  return uses.counts[id];
}

bool is_cheap(const Value& v) {
  return v->kind == ValueKind::Constant || v->kind == ValueKind::ScalarParam || v->kind == ValueKind::LoopVar;
}

class Inliner : public IRMutator {
 public:
  explicit Inliner(std::map<int, int> counts) : counts_(std::move(counts)) {}

  using IRMutator::mutate;
  Value mutate(const Value& v) override {
    if (v->kind == ValueKind::LetRef) {
      auto it = replacements_.find(v->id);
      if (it != replacements_.end()) return it->second;
    }
    return IRMutator::mutate(v);
  }

  StmtList run(const StmtList& stmts) {
    StmtList out;
    for (size_t i = 0; i < stmts.size(); ++i) {
      const Stmt& s = stmts[i];
      if (s->kind == StmtKind::Let) {
        if (counts_[s->id] == 0) continue;  // never read (`o, _ = f(x)`): values have no side effects
        Value value = mutate(s->value);
        if (is_cheap(value) || can_inline(stmts, i, value)) {
          replacements_[s->id] = value;
          continue;
        }
        StmtNode node = *s;
        node.value = value;
        out.push_back(std::make_shared<const StmtNode>(std::move(node)));
        continue;
      }
      out.push_back(mutate(s));
    }
    return out;
  }

  Stmt mutate(const Stmt& s) override {
    // Nested blocks are processed as lists of their own.
    StmtNode node = *s;
    auto update = [&](Value& v) {
      if (v) v = mutate(v);
    };
    update(node.value);
    for (Value& i : node.indices) update(i);
    update(node.start);
    update(node.stop);
    update(node.step);
    node.body = run(s->body);
    node.orelse = run(s->orelse);
    return std::make_shared<const StmtNode>(std::move(node));
  }

 private:
  bool can_inline(const StmtList& stmts, size_t i, const Value& value) {
    int id = stmts[i]->id;
    if (counts_[id] != 1) return false;
    ReadCollector reads;
    reads.visit(value);
    Reads writes;
    for (size_t j = i + 1; j < stmts.size(); ++j) {
      if (direct_uses(stmts[j], id) == 1) {
        return !intersects(reads.reads.params, writes.params) &&
               !intersects(reads.reads.locals, writes.locals);
      }
      collect_writes({stmts[j]}, writes);
    }
    return false;  // used in a nested block: computed once, here
  }

  std::map<int, int> counts_;
  std::map<int, Value> replacements_;
};

}  // namespace

Kernel inline_lets(const Kernel& kernel) {
  LetUses uses;
  uses.visit(kernel.body);
  Kernel out = kernel;
  out.body = Inliner(uses.counts).run(kernel.body);
  return out;
}

}  // namespace nt::lower
