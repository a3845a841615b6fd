// Copies of symbolic tensors: Tensor.subs, copy.deepcopy and unpickling.
//
// A hierarchy is a graph: levels point to the next level (dtype) and to their
// source, and share index-map nodes. HierarchyCopier copies every level it
// reaches from the tensors it is given, each object once, so what several of
// them share (a source, a level, an index-map node) their copies share too.
// With replacements it substitutes symbols in shapes and index maps (then the
// index-map graph is copied as well); without, the immutable index-map nodes
// and expressions are shared with the originals. Copies keep the names of
// their index variables, so a copy's levels and the original's can be
// combined (`a.dtype = copy.dtype`) and resolve alike.
//
// Index variables are unique in one process, not across processes. A tensor
// pickled in one process and read in another gets fresh index variables
// there: imported_index_var maps each (origin, name) read from a pickle to a
// variable of this process, the same one for every read.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "symbolic/substitute.h"
#include "tensor/tensor.h"

namespace nt {

class HierarchyCopier {
 public:
  explicit HierarchyCopier(SymbolMap replacements = {});

  // The copy of `tensor` (and of everything it reaches), made once.
  TensorPtr copy(const Tensor& tensor);

  // The (original, copy) pairs made since the last call, in the order made.
  std::vector<std::pair<TensorPtr, TensorPtr>> take_new_copies();

 private:
  IndexMapRef copy_node(const IndexMapRef& node);

  SymbolMap replacements_;
  // Keyed by the originals, which are kept alive so that keys stay unique.
  std::unordered_map<const Tensor*, std::pair<TensorPtr, TensorPtr>> tensors_;
  std::unordered_map<const IndexMapNode*, std::pair<IndexMapRef, IndexMapRef>> nodes_;
  std::vector<std::pair<TensorPtr, TensorPtr>> new_copies_;
};

// Identifies this process's index variables in pickles (pid and a random
// number, made again after a fork).
std::string index_origin();

// The index variable of this process that stands for `name` read from a
// pickle made in `origin`: `name` itself when `origin` is this process, else a
// fresh variable, the same for every (origin, name).
Expr imported_index_var(const std::string& origin, const std::string& name);

}  // namespace nt
