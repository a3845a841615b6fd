#include "tensor/index_map.h"

#include <unordered_map>
#include <unordered_set>

#include "support/errors.h"
#include "symbolic/printer.h"
#include "tensor/tensor.h"

namespace nt {

namespace {

class SourceResolver {
 public:
  explicit SourceResolver(const Tensor& arranged) {
    for (const Tensor* level : arranged.levels()) {
      for (const auto& index : level->indices()) final_.emplace(index->name, index);
      gather(level->index_map());
    }
  }

  Expr resolve(const Expr& index) {
    auto final_it = final_.find(index->name);
    if (final_it != final_.end()) return final_it->second;
    auto memo = resolved_.find(index->name);
    if (memo != resolved_.end()) return memo->second;
    auto binding_it = bindings_.find(index->name);
    if (binding_it == bindings_.end()) {
      // A level outside this hierarchy: its first element.
      resolved_.emplace(index->name, Expr(0));
      return Expr(0);
    }
    const IndexBinding& binding = *binding_it->second;
    SymbolMap replacements;
    for (const Expr& v : collect_vars(binding.value)) {
      if (is_index_var(v)) replacements.emplace(v->name, resolve(v));
    }
    Expr value = substitute(binding.value, replacements);
    if (binding.checked) {
      add_condition(le(Expr(0), value));
      add_condition(lt(value, binding.size));
    }
    resolved_.emplace(index->name, value);
    return value;
  }

  // Resolves the checked bindings no source coordinate depends on: the dims
  // that unsqueeze, expand or `None` made reach no source index, yet a pad or
  // slice of them still masks what lies outside their range.
  void check_all_bindings() {
    for (const IndexBinding* binding : checked_) resolve(var(binding->index));
  }

  std::vector<Expr> take_conditions() { return std::move(conditions_); }

 private:
  void gather(const IndexMapRef& node) {
    if (!node || !visited_.insert(node.get()).second) return;
    for (const auto& binding : node->bindings) {
      auto [it, inserted] = bindings_.emplace(binding.index, &binding);
      if (!inserted && !equal(it->second->value, binding.value)) {
        throw ValueError("the levels of this tensor come from different arrangements (index " +
                         binding.index + " is both " + to_python(it->second->value) + " and " +
                         to_python(binding.value) + ")");
      }
      if (inserted && binding.checked) checked_.push_back(&binding);
    }
    for (const auto& input : node->inputs) gather(input);
  }

  void add_condition(const Expr& condition) {
    if (condition->kind == ExprKind::Bool && condition->int_value) return;
    for (const auto& existing : conditions_) {
      if (equal(existing, condition)) return;
    }
    conditions_.push_back(condition);
  }

  std::unordered_map<std::string, Expr> final_;
  std::unordered_map<std::string, const IndexBinding*> bindings_;
  std::vector<const IndexBinding*> checked_;  // in the order gathered
  std::unordered_set<const IndexMapNode*> visited_;
  std::unordered_map<std::string, Expr> resolved_;
  std::vector<Expr> conditions_;
};

}  // namespace

SourceAccess resolve_source_access(const Tensor& arranged) {
  SourceResolver resolver(arranged);
  SourceAccess access;
  for (const auto& index : arranged.source_ref().indices()) {
    access.coordinates.push_back(resolver.resolve(index));
  }
  resolver.check_all_bindings();
  access.conditions = resolver.take_conditions();
  return access;
}

}  // namespace nt
