// Copies of hierarchies (tensor/copy.h): what copies share, that they evaluate
// like their originals, and index variables read from another process.
#include "tensor/copy.h"

#include <gtest/gtest.h>

#include "symbolic/printer.h"
#include "tensor/eval.h"

namespace nt {
namespace {

TensorPtr source(const std::string& name, int64_t ndim) {
  TensorSpec spec;
  spec.ndim = ndim;
  spec.name = name;
  return Tensor::create(spec);
}

TensorPtr level(const TensorPtr& t) { return std::get<TensorPtr>(t->dtype()); }

SymbolMap sizes_4_by_6(const std::string& name) {
  return {{name + "_size_0", int_const(4)}, {name + "_size_1", int_const(6)}};
}

TEST(HierarchyCopier, CopiesEveryLevelOnceAndSharesWhatTheOriginalsShare) {
  TensorPtr x = source("copied_x", 2);
  TensorPtr a = x->tile({2, 3});
  TensorPtr b = x->tile({1, 2});
  HierarchyCopier copier;
  TensorPtr a2 = copier.copy(*a);
  TensorPtr b2 = copier.copy(*b);
  EXPECT_NE(a2, a);
  EXPECT_NE(level(a2), level(a));
  EXPECT_NE(a2->source(), x);
  EXPECT_EQ(a2->source(), b2->source());
  EXPECT_EQ(copier.copy(*level(a)), level(a2));
  EXPECT_EQ(copier.copy(*a), a2);
  // Without substitutions, the immutable index-map nodes are shared.
  EXPECT_EQ(a2->index_map(), a->index_map());
  EXPECT_EQ(a2->indices()[0]->name, a->indices()[0]->name);
  // a, its block level, x; then b and its block level.
  EXPECT_EQ(copier.take_new_copies().size(), 5u);
  EXPECT_TRUE(copier.take_new_copies().empty());
}

TEST(HierarchyCopier, ACopyIsIndependentAndEvaluatesLikeItsOriginal) {
  TensorPtr x = source("independent_x", 2);
  TensorPtr tiled = x->tile({1, 3});
  TensorPtr copied = HierarchyCopier().copy(*tiled);
  SymbolMap subs = sizes_4_by_6("independent_x");
  EXPECT_EQ(evaluate_offsets(*copied, subs).offsets, evaluate_offsets(*tiled, subs).offsets);
  copied->set_dtype(level(copied)->squeeze({0}));
  EXPECT_EQ(level(tiled)->ndim(), 2u);
  EXPECT_EQ(level(copied)->ndim(), 1u);
}

TEST(HierarchyCopier, SubstitutionCopiesTheIndexMaps) {
  TensorPtr x = source("substituted_x", 2);
  TensorPtr tiled = x->tile({var("B"), 3});
  TensorPtr substituted = tiled->substituted({{"B", int_const(2)}});
  EXPECT_NE(substituted->index_map(), tiled->index_map());
  EXPECT_EQ(level(substituted)->index_map(), substituted->index_map());
  EXPECT_EQ(to_python(level(substituted)->shape()[0]), "2");
  EXPECT_EQ(to_python(level(tiled)->shape()[0]), "B");
}

TEST(Pickling, FieldsRestoreIntoABlankLevel) {
  TensorPtr x = source("restored_x", 2);
  TensorPtr tiled = x->tile({2, 3});
  TensorPtr outer = Tensor::blank();
  TensorPtr inner = Tensor::blank();
  TensorFields inner_fields = level(tiled)->fields();
  inner->restore(inner_fields);
  TensorFields outer_fields = tiled->fields();
  outer_fields.dtype = inner;
  outer->restore(outer_fields);
  SymbolMap subs = sizes_4_by_6("restored_x");
  EXPECT_EQ(evaluate_offsets(*outer, subs).offsets, evaluate_offsets(*tiled, subs).offsets);
  TensorFields bad = tiled->fields();
  bad.indices.pop_back();
  EXPECT_THROW(Tensor::blank()->restore(bad), std::invalid_argument);
}

TEST(Pickling, IndexVariablesOfAnotherProcessAreFreshAndStable) {
  Expr mine = fresh_index_var();
  EXPECT_EQ(imported_index_var(index_origin(), mine->name)->name, mine->name);
  Expr theirs = imported_index_var("elsewhere", mine->name);
  EXPECT_NE(theirs->name, mine->name);
  EXPECT_TRUE(is_index_var(theirs));
  EXPECT_EQ(imported_index_var("elsewhere", mine->name)->name, theirs->name);
  EXPECT_NE(imported_index_var("somewhere else", mine->name)->name, theirs->name);
  EXPECT_EQ(index_origin(), index_origin());
}

}  // namespace
}  // namespace nt
