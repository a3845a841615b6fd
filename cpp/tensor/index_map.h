// The index-map graph: how the indices of arranged levels reach the source.
//
// Every level of a symbolic tensor has one index variable per dimension. A
// meta-operation consumes the index variables of the level it acts on and
// introduces new ones; for each consumed variable it records an IndexBinding
// saying how its value is computed from the new variables (tile:
// `i = outer * stride + inner * dilation`; squeeze: `i = 0`; pad:
// `i = p - before`; ...). The bindings of one operation form an IndexMapNode
// whose inputs are the nodes of the operations before it: a graph that ends
// at the source tensor's own index variables.
//
// resolve_source_access() walks that graph backwards from the final levels.
// In: an arranged tensor (a chain of levels). Out: one expression per source
// dimension over the final levels' index variables, plus the conditions under
// which the element exists (every checked index within [0, size) at every node
// on the way, the source bounds included). Two consumers read it:
// Tensor eval (all indices concrete) and code generation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "symbolic/expr.h"

namespace nt {

class Tensor;

struct IndexBinding {
  std::string index;  // the consumed index variable
  Expr value;         // its value over newer index variables
  Expr size;          // the size of the consumed dimension
  bool checked;       // `value` may leave [0, size): the element is masked there
};

struct IndexMapNode {
  std::vector<IndexBinding> bindings;
  std::vector<std::shared_ptr<const IndexMapNode>> inputs;
};

using IndexMapRef = std::shared_ptr<const IndexMapNode>;

IndexMapRef make_index_map_node(std::vector<IndexBinding> bindings, std::vector<IndexMapRef> inputs);

struct SourceAccess {
  std::vector<Expr> coordinates;  // one per source dimension
  std::vector<Expr> conditions;   // all true <=> the element is in bounds
};

// Index variables of levels that are not part of `arranged` (a level taken out
// of its hierarchy) are taken as 0.
SourceAccess resolve_source_access(const Tensor& arranged);

}  // namespace nt
