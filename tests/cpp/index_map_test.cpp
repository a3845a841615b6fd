// Meta-operations checked through their index maps: evaluate_offsets of an
// arranged tensor against offsets computed by plain loops in the test.
#include <gtest/gtest.h>

#include <functional>

#include "support/errors.h"
#include "symbolic/printer.h"
#include "tensor/eval.h"
#include "tensor/tensor.h"

namespace nt {
namespace {

using Index = std::vector<int64_t>;
using Expected = std::function<int64_t(const Index&)>;

TensorPtr source(const std::string& name, int64_t ndim) {
  TensorSpec spec;
  spec.ndim = ndim;
  spec.name = name;
  spec.dtype = DType::float32;
  return Tensor::create(spec);
}

TensorPtr source_with_shape(const std::string& name, const std::vector<std::optional<Expr>>& shape) {
  TensorSpec spec;
  spec.shape = shape;
  spec.name = name;
  spec.dtype = DType::float32;
  return Tensor::create(spec);
}

SymbolMap sizes(const std::string& name, const std::vector<int64_t>& shape) {
  SymbolMap subs;
  for (size_t d = 0; d < shape.size(); ++d)
    subs.emplace(name + "_size_" + std::to_string(d), int_const(shape[d]));
  return subs;
}

TensorPtr level(const TensorPtr& t) { return std::get<TensorPtr>(t->dtype()); }

// Every element of evaluate_offsets(t, subs) against `expected` over `shape`.
void expect_offsets(const TensorPtr& t, const SymbolMap& subs, const Index& shape, const Expected& expected) {
  OffsetArray result = evaluate_offsets(*t, subs);
  ASSERT_EQ(result.shape, shape);
  size_t total = 1;
  for (int64_t size : shape) total *= static_cast<size_t>(size);
  ASSERT_EQ(result.offsets.size(), total);
  Index index(shape.size(), 0);
  for (size_t flat = 0; flat < total; ++flat) {
    int64_t want = expected(index);
    if (result.offsets[flat] != want) {
      std::string where;
      for (int64_t i : index) where += std::to_string(i) + " ";
      ADD_FAILURE() << "at (" << where << "): got " << result.offsets[flat] << ", expected " << want;
      return;
    }
    for (size_t k = shape.size(); k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
}

// Row-major offset of (r, c) in a rows x cols source, -1 outside.
int64_t at2(int64_t r, int64_t c, int64_t rows, int64_t cols) {
  if (r < 0 || r >= rows || c < 0 || c >= cols) return -1;
  return r * cols + c;
}

int64_t at1(int64_t i, int64_t n) { return i < 0 || i >= n ? -1 : i; }

TEST(IndexMap, SourceTensor) {
  TensorPtr x = source("x", 2);
  expect_offsets(x, sizes("x", {3, 4}), {3, 4}, [](const Index& i) { return i[0] * 4 + i[1]; });
  // Given strides replace the contiguous ones.
  SymbolMap subs = sizes("x", {3, 4});
  subs.emplace("x_stride_0", int_const(10));
  subs.emplace("x_stride_1", int_const(2));
  expect_offsets(x, subs, {3, 4}, [](const Index& i) { return i[0] * 10 + i[1] * 2; });
}

TEST(IndexMap, TileWithOverhang) {
  TensorPtr x = source("x", 2);
  TensorPtr t = x->tile({4, 3});
  EXPECT_EQ(to_python(t->shape()[0]), "(x_size_0 - 3 - 1 + 4 - 1) // 4 + 1");
  EXPECT_EQ(t->levels().size(), 2u);
  expect_offsets(t, sizes("x", {10, 7}), {3, 3, 4, 3},
                 [](const Index& i) { return at2(i[0] * 4 + i[2], i[1] * 3 + i[3], 10, 7); });
  // Exact fit: nothing masked.
  expect_offsets(t, sizes("x", {8, 6}), {2, 2, 4, 3},
                 [](const Index& i) { return at2(i[0] * 4 + i[2], i[1] * 3 + i[3], 8, 6); });
}

TEST(IndexMap, TileWithSymbolicBlockSize) {
  TensorPtr x = source("x", 1);
  Expr block = var("BLOCK_SIZE");
  TensorPtr t = x->tile({block});
  EXPECT_EQ(to_python(t->shape()[0]), "(x_size_0 - (BLOCK_SIZE - 1) - 1 + BLOCK_SIZE - 1) // BLOCK_SIZE + 1");
  EXPECT_EQ(to_python(level(t)->shape()[0]), "BLOCK_SIZE");
  SymbolMap subs = sizes("x", {10});
  subs.emplace("BLOCK_SIZE", int_const(4));
  expect_offsets(t, subs, {3, 4}, [](const Index& i) { return at1(i[0] * 4 + i[1], 10); });
  // A tile of -1 is the whole dimension.
  TensorPtr whole = x->tile({-1});
  expect_offsets(whole, sizes("x", {5}), {1, 5}, [](const Index& i) { return i[1]; });
}

TEST(IndexMap, TileStridesDilationFloorMode) {
  TensorPtr x = source("x", 1);
  // Outer size (10 - 2*(3-1) - 1 + 2 - 1) // 2 + 1 = 4; element (o, i) is o*2 + i*2.
  TensorPtr t = x->tile({3}, std::vector<Expr>{2}, std::vector<Expr>{2});
  expect_offsets(t, sizes("x", {10}), {4, 3}, [](const Index& i) { return at1(i[0] * 2 + i[1] * 2, 10); });
  // floor_mode drops the overhanging window: (10 - 4 - 1) // 2 + 1 = 3.
  TensorPtr f = x->tile({3}, std::vector<Expr>{2}, std::vector<Expr>{2}, true);
  expect_offsets(f, sizes("x", {10}), {3, 3}, [](const Index& i) { return i[0] * 2 + i[1] * 2; });
  // Stride -1 is the tile size; overlapping windows with stride 1.
  // Overlapping windows with stride 1: (6 - 3 - 1 + 1 - 1) // 1 + 1 = 3, all inside.
  TensorPtr s = x->tile({4}, std::vector<Expr>{1});
  expect_offsets(s, sizes("x", {6}), {3, 4}, [](const Index& i) { return i[0] + i[1]; });
  TensorPtr d = x->tile({4}, std::vector<Expr>{-1});
  expect_offsets(d, sizes("x", {6}), {2, 4}, [](const Index& i) { return at1(i[0] * 4 + i[1], 6); });
}

TEST(IndexMap, TileOfTile) {
  TensorPtr x = source("x", 1);
  // 10 elements in tiles of 4 (3 tiles), the tiles in groups of 2 (2 groups,
  // the second one overhanging the 3 tiles).
  TensorPtr t = x->tile({4})->tile({2});
  ASSERT_EQ(t->levels().size(), 3u);
  expect_offsets(t, sizes("x", {10}), {2, 2, 4}, [](const Index& i) {
    int64_t tile = i[0] * 2 + i[1];
    if (tile >= 3) return int64_t{-1};
    return at1(tile * 4 + i[2], 10);
  });
}

TEST(IndexMap, TileOfTheInnerLevel) {
  TensorPtr x = source("x", 1);
  TensorPtr t = x->tile({8});
  t->set_dtype(level(t)->tile({2}));
  ASSERT_EQ(t->levels().size(), 3u);
  expect_offsets(t, sizes("x", {20}), {3, 4, 2},
                 [](const Index& i) { return at1(i[0] * 8 + i[1] * 2 + i[2], 20); });
  // The inner level alone: the outer index is taken as 0.
  TensorPtr inner = x->tile({8});
  expect_offsets(level(inner), sizes("x", {5}), {8}, [](const Index& i) { return at1(i[0], 5); });
}

TEST(IndexMap, ExpandSqueezeUnsqueeze) {
  TensorPtr row = source_with_shape("r", {Expr(1), std::nullopt});
  TensorPtr e = row->expand({5, -1});
  expect_offsets(e, {{"r_size_1", int_const(3)}}, {5, 3}, [](const Index& i) { return i[1]; });

  TensorPtr y = source_with_shape("y", {std::nullopt, Expr(1), std::nullopt});
  TensorPtr s = y->squeeze({1});
  ASSERT_EQ(s->ndim(), 2u);
  SymbolMap subs{{"y_size_0", int_const(3)}, {"y_size_2", int_const(4)}};
  expect_offsets(s, subs, {3, 4}, [](const Index& i) { return i[0] * 4 + i[1]; });
  TensorPtr negative = y->squeeze({-2});
  expect_offsets(negative, subs, {3, 4}, [](const Index& i) { return i[0] * 4 + i[1]; });

  TensorPtr x = source("x", 2);
  TensorPtr u = x->unsqueeze(1);
  ASSERT_EQ(u->ndim(), 3u);
  EXPECT_TRUE(u->shape()[1].is_int(1));
  expect_offsets(u, sizes("x", {3, 4}), {3, 1, 4}, [](const Index& i) { return i[0] * 4 + i[2]; });
  TensorPtr last = x->unsqueeze(-1);
  expect_offsets(last, sizes("x", {3, 4}), {3, 4, 1}, [](const Index& i) { return i[0] * 4 + i[1]; });
  // unsqueeze then expand: a broadcast.
  TensorPtr b = x->unsqueeze(0)->expand({6, -1, -1});
  expect_offsets(b, sizes("x", {2, 3}), {6, 2, 3}, [](const Index& i) { return i[1] * 3 + i[2]; });
}

TEST(IndexMap, Permute) {
  TensorPtr x = source("x", 3);
  TensorPtr p = x->permute({2, 0, 1});
  // Shape (C, A, B); element (k, a, b) is x[a, b, k].
  expect_offsets(p, sizes("x", {2, 3, 4}), {4, 2, 3},
                 [](const Index& i) { return i[1] * 12 + i[2] * 4 + i[0]; });
}

TEST(IndexMap, PermuteNegativeDims) {
  // Negative dims count from the end, as in torch.
  TensorPtr x = source("x", 2);
  expect_offsets(x->permute({-1, 0}), sizes("x", {3, 4}), {4, 3},
                 [](const Index& i) { return i[1] * 4 + i[0]; });
}

TEST(IndexMap, Flatten) {
  TensorPtr x = source("x", 3);
  SymbolMap subs = sizes("x", {2, 3, 4});
  expect_offsets(x->flatten(), subs, {24}, [](const Index& i) { return i[0]; });
  // end_dim is exclusive.
  expect_offsets(x->flatten(0, 2), subs, {6, 4}, [](const Index& i) { return i[0] * 4 + i[1]; });
  expect_offsets(x->flatten(1), subs, {2, 12}, [](const Index& i) { return i[0] * 12 + i[1]; });
  expect_offsets(x->flatten(-2, 3), subs, {2, 12}, [](const Index& i) { return i[0] * 12 + i[1]; });
  // Of a permuted tensor the flat index unravels over the permuted shape.
  TensorPtr pf = x->permute({2, 1, 0})->flatten();
  expect_offsets(pf, subs, {24}, [](const Index& i) {
    int64_t k = i[0] / 6, b = i[0] / 2 % 3, a = i[0] % 2;
    return a * 12 + b * 4 + k;
  });
  // Flatten, then tile with overhang.
  TensorPtr y = source("y", 2);
  expect_offsets(y->flatten()->tile({4}), sizes("y", {3, 5}), {4, 4},
                 [](const Index& i) { return at1(i[0] * 4 + i[1], 15); });
}

TEST(IndexMap, Ravel) {
  TensorPtr x = source("x", 2);
  TensorPtr r = x->tile({4, 3})->ravel();
  ASSERT_EQ(r->levels().size(), 1u);
  EXPECT_EQ(r->ndim(), 4u);
  EXPECT_EQ(r->name(), "x");
  expect_offsets(r, sizes("x", {10, 7}), {3, 3, 4, 3},
                 [](const Index& i) { return at2(i[0] * 4 + i[2], i[1] * 3 + i[3], 10, 7); });
  // A raveled tensor can be arranged further.
  TensorPtr f = r->flatten(2, 4);
  expect_offsets(f, sizes("x", {10, 7}), {3, 3, 12},
                 [](const Index& i) { return at2(i[0] * 4 + i[2] / 3, i[1] * 3 + i[2] % 3, 10, 7); });
}

TEST(IndexMap, Pad) {
  TensorPtr x = source("x", 2);
  TensorPtr p = x->pad({{1, 2}, {0, 3}});
  EXPECT_EQ(to_python(p->shape()[0]), "x_size_0 + 1 + 2");
  expect_offsets(p, sizes("x", {3, 4}), {6, 7}, [](const Index& i) { return at2(i[0] - 1, i[1], 3, 4); });
  // Padding, then tiling: the pad and the overhang are both masked.
  TensorPtr t = source("y", 1)->pad({{2, 0}})->tile({4});
  expect_offsets(t, sizes("y", {7}), {3, 4}, [](const Index& i) { return at1(i[0] * 4 + i[1] - 2, 7); });
}

// ---------------------------------------------------------------------------
// Indexing.

IndexItem at(Expr e) {
  IndexItem item;
  item.kind = IndexItem::Kind::Index;
  item.index = std::move(e);
  return item;
}

IndexItem slice(std::optional<Expr> start, std::optional<Expr> stop,
                std::optional<Expr> step = std::nullopt) {
  IndexItem item;
  item.kind = IndexItem::Kind::Slice;
  item.start = std::move(start);
  item.stop = std::move(stop);
  item.step = std::move(step);
  return item;
}

IndexItem new_axis() {
  IndexItem item;
  item.kind = IndexItem::Kind::NewAxis;
  return item;
}

IndexItem ellipsis() {
  IndexItem item;
  item.kind = IndexItem::Kind::Ellipsis;
  return item;
}

// Python's slice(start, stop, step).indices(n), as a list of positions.
std::vector<int64_t> python_slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                                  std::optional<int64_t> step, int64_t n) {
  int64_t s = step.value_or(1);
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t x = *v < 0 ? *v + n : *v;
    if (s > 0) return std::min(std::max(x, int64_t{0}), n);
    return std::min(std::max(x, int64_t{-1}), n - 1);
  };
  int64_t b = clamp(start, s > 0 ? 0 : n - 1);
  int64_t e = clamp(stop, s > 0 ? n : -1);
  std::vector<int64_t> positions;
  for (int64_t i = b; s > 0 ? i < e : i > e; i += s) positions.push_back(i);
  return positions;
}

TEST(IndexMap, SlicesOfKnownSizes) {
  TensorPtr x = source_with_shape("x", {Expr(10), Expr(8)});
  struct Case {
    std::optional<int64_t> start, stop, step;
  };
  const Case cases[] = {{1, 8, 2},
                        {std::nullopt, std::nullopt, -1},
                        {-3, std::nullopt, std::nullopt},
                        {5, 100, 1},
                        {-100, 2, std::nullopt},
                        {std::nullopt, std::nullopt, -2},
                        {8, 2, -3},
                        {2, 8, -1},
                        {-1, -11, -4},
                        {3, 3, 1},
                        {std::nullopt, -2, 3}};
  for (const auto& c : cases) {
    auto optional_expr = [](std::optional<int64_t> v) -> std::optional<Expr> {
      if (!v) return std::nullopt;
      return int_const(*v);
    };
    TensorPtr s = x->index({slice(optional_expr(c.start), optional_expr(c.stop), optional_expr(c.step))});
    std::vector<int64_t> rows = python_slice(c.start, c.stop, c.step, 10);
    SCOPED_TRACE(::testing::Message() << "x[" << c.start.value_or(999) << ":" << c.stop.value_or(999) << ":"
                                      << c.step.value_or(999) << "]");
    expect_offsets(s, {}, {static_cast<int64_t>(rows.size()), 8},
                   [&](const Index& i) { return rows[static_cast<size_t>(i[0])] * 8 + i[1]; });
  }
  // Integers drop the dimension; negative ones count from the end.
  expect_offsets(x->index({at(2)}), {}, {8}, [](const Index& i) { return 16 + i[0]; });
  expect_offsets(x->index({at(-1), at(-2)}), {}, {}, [](const Index&) { return 9 * 8 + 6; });
  // None inserts a size-1 dimension; the ellipsis stands for the rest.
  expect_offsets(x->index({new_axis(), ellipsis(), at(1)}), {}, {1, 10},
                 [](const Index& i) { return i[1] * 8 + 1; });
  expect_offsets(x->index({ellipsis(), slice(std::nullopt, std::nullopt, int_const(3))}), {}, {10, 3},
                 [](const Index& i) { return i[0] * 8 + i[1] * 3; });
  expect_offsets(x->index({slice(1, 3), ellipsis(), new_axis()}), {}, {2, 8, 1},
                 [](const Index& i) { return (i[0] + 1) * 8 + i[1]; });
}

TEST(IndexMap, SlicesOfSymbolicSizes) {
  // Sizes unknown when indexing: no clamping; positions past the end are masked.
  TensorPtr x = source("x", 1);
  TensorPtr s = x->index({slice(1, 8, 2)});
  expect_offsets(s, sizes("x", {6}), {4}, [](const Index& i) { return at1(1 + 2 * i[0], 6); });
  expect_offsets(x->index({slice(-3, std::nullopt)}), sizes("x", {10}), {3},
                 [](const Index& i) { return 7 + i[0]; });
  expect_offsets(x->index({slice(std::nullopt, std::nullopt, int_const(-1))}), sizes("x", {5}), {5},
                 [](const Index& i) { return 4 - i[0]; });
  expect_offsets(x->index({slice(std::nullopt, std::nullopt, int_const(-2))}), sizes("x", {5}), {3},
                 [](const Index& i) { return 4 - 2 * i[0]; });
  expect_offsets(x->index({slice(std::nullopt, -1)}), sizes("x", {5}), {4},
                 [](const Index& i) { return i[0]; });
  expect_offsets(x->index({slice(0, 100)}), sizes("x", {5}), {100},
                 [](const Index& i) { return at1(i[0], 5); });
  // A symbolic bound.
  expect_offsets(
      x->index({slice(var("START"), std::nullopt)}),
      [] {
        SymbolMap subs = sizes("x", {9});
        subs.emplace("START", int_const(4));
        return subs;
      }(),
      {5}, [](const Index& i) { return 4 + i[0]; });
  // An integer index past a symbolic size masks everything.
  TensorPtr y = source("y", 2);
  expect_offsets(y->index({at(2)}), sizes("y", {2, 3}), {3}, [](const Index&) { return int64_t{-1}; });
  expect_offsets(y->index({at(1)}), sizes("y", {2, 3}), {3}, [](const Index& i) { return 3 + i[0]; });
  expect_offsets(y->index({at(-1)}), sizes("y", {4, 3}), {3}, [](const Index& i) { return 9 + i[0]; });
}

TEST(IndexMap, PadOfADimensionWithoutSource) {
  // The dim made by unsqueeze reaches no source index, yet padding it masks
  // the padded rows.
  TensorPtr x = source("x", 1);
  TensorPtr p = x->unsqueeze(0)->pad({{1, 1}, {0, 0}});
  expect_offsets(p, sizes("x", {3}), {3, 3}, [](const Index& i) { return i[0] == 1 ? i[1] : -1; });
  // The same for an expanded dim sliced beyond its size (known, so clamped).
  TensorPtr e = source_with_shape("r", {Expr(1), std::nullopt})->expand({4, -1})->index({slice(1, 9)});
  expect_offsets(e, {{"r_size_1", int_const(2)}}, {3, 2}, [](const Index& i) { return i[1]; });
}

TEST(IndexMap, IndexingTiles) {
  TensorPtr x = source("x", 1);
  TensorPtr t = x->tile({4});
  // The third tile of 10 elements overhangs by two.
  expect_offsets(t->index({at(2)}), sizes("x", {10}), {4}, [](const Index& i) { return at1(8 + i[0], 10); });
  // Indexing the block level of every tile.
  t->set_dtype(level(t)->index({slice(1, std::nullopt, int_const(2))}));
  expect_offsets(t, sizes("x", {10}), {3, 2},
                 [](const Index& i) { return at1(i[0] * 4 + 1 + 2 * i[1], 10); });
}

TEST(IndexMap, Substituted) {
  TensorPtr x = source("x", 2);
  Expr block = var("BLOCK");
  TensorPtr t = x->tile({block, -1});
  SymbolMap subs = sizes("x", {5, 3});
  subs.emplace("BLOCK", int_const(2));
  TensorPtr s = t->substituted(subs);
  EXPECT_TRUE(s->shape()[0].is_int(3));
  EXPECT_TRUE(level(s)->shape()[0].is_int(2));
  expect_offsets(s, {}, {3, 1, 2, 3}, [](const Index& i) { return at2(i[0] * 2 + i[2], i[3], 5, 3); });
  // The receiver is unchanged.
  EXPECT_FALSE(t->shape()[0].is_int());
}

TEST(IndexMap, MetaOperationsLeaveTheirReceiver) {
  TensorPtr x = source("x", 2);
  std::string before = to_python(x->shape()[0]);
  x->tile({2, 2});
  x->permute({1, 0});
  x->flatten();
  x->pad({{1, 1}, {1, 1}});
  EXPECT_EQ(x->ndim(), 2u);
  EXPECT_EQ(to_python(x->shape()[0]), before);
  EXPECT_TRUE(x->is_source());
  EXPECT_EQ(x->tile({2, 2})->source().get(), x.get());
}

// ---------------------------------------------------------------------------
// Errors.

TEST(IndexMapErrors, Construction) {
  EXPECT_THROW(Tensor::create(TensorSpec{}), ValueError);  // neither ndim nor shape
  TensorSpec negative;
  negative.ndim = -1;
  EXPECT_THROW(Tensor::create(negative), ValueError);
  TensorSpec mismatch;
  mismatch.ndim = 3;
  mismatch.shape = std::vector<std::optional<Expr>>{Expr(2), Expr(3)};
  EXPECT_THROW(Tensor::create(mismatch), ValueError);
  TensorSpec constexpr_2d;
  constexpr_2d.ndim = 2;
  constexpr_2d.constexpr_ = true;
  EXPECT_THROW(Tensor::create(constexpr_2d), ValueError);
  TensorSpec negative_size;
  negative_size.shape = std::vector<std::optional<Expr>>{Expr(-2)};
  EXPECT_THROW(Tensor::create(negative_size), ValueError);
  TensorSpec options;
  options.ndim = 2;
  options.shape_options = {SymbolAttrs{}};
  EXPECT_THROW(Tensor::create(options), ValueError);
}

TEST(IndexMapErrors, MetaOperations) {
  TensorPtr x = source("x", 2);
  TensorPtr known = source_with_shape("k", {Expr(3), Expr(4)});
  EXPECT_THROW(x->tile({4}), ValueError);                                         // wrong length
  EXPECT_THROW(x->tile({4, 4}, std::vector<Expr>{1}), ValueError);                // strides length
  EXPECT_THROW(x->tile({4, 4}, std::nullopt, std::vector<Expr>{1}), ValueError);  // dilation length
  EXPECT_THROW(x->tile({0, 4}), ValueError);                                      // tile size 0
  EXPECT_THROW(x->tile({-2, 4}), ValueError);
  EXPECT_THROW(x->tile({4, 4}, std::vector<Expr>{0, 1}), ValueError);  // stride 0
  EXPECT_THROW(x->tile({4, 4}, std::nullopt, std::vector<Expr>{1, 0}), ValueError);
  EXPECT_THROW(known->expand({5, 4}), ValueError);  // size 3 cannot grow
  EXPECT_THROW(x->expand({5}), ValueError);         // wrong length
  EXPECT_THROW(x->expand({-3, -1}), ValueError);
  EXPECT_THROW(known->squeeze({0}), ValueError);  // size 3, not 1
  EXPECT_THROW(x->squeeze({2}), IndexError);
  EXPECT_THROW(x->squeeze({-3}), IndexError);
  EXPECT_THROW(x->unsqueeze(3), IndexError);
  EXPECT_THROW(x->unsqueeze(-4), IndexError);
  EXPECT_THROW(x->permute({0}), ValueError);
  EXPECT_THROW(x->permute({0, 0}), ValueError);
  EXPECT_THROW(x->permute({0, 2}), ValueError);
  EXPECT_THROW(x->permute({-3, 0}), ValueError);
  EXPECT_THROW(x->permute({-1, 1}), ValueError);  // -1 is 1
  EXPECT_THROW(x->flatten(1, 1), ValueError);     // empty range
  EXPECT_THROW(x->flatten(0, 3), IndexError);
  EXPECT_THROW(x->flatten(2), IndexError);
  EXPECT_THROW(source("s", 0)->flatten(), ValueError);
  EXPECT_THROW(x->pad({{1, 1}}), ValueError);
  EXPECT_THROW(known->pad({{-2, -2}, {0, 0}}), ValueError);  // negative size
  EXPECT_THROW(level(x->tile({2, 2}))->set_dtype(TensorPtr()), ValueError);
}

TEST(IndexMapErrors, Indexing) {
  TensorPtr x = source("x", 2);
  TensorPtr known = source_with_shape("k", {Expr(3), Expr(4)});
  EXPECT_THROW(x->index({at(0), at(0), at(0)}), IndexError);            // too many
  EXPECT_THROW(x->index({ellipsis(), at(0), ellipsis()}), IndexError);  // two ellipses
  EXPECT_THROW(known->index({at(3)}), IndexError);                      // out of bounds
  EXPECT_THROW(known->index({at(-4)}), IndexError);
  EXPECT_THROW(known->index({slice(std::nullopt, std::nullopt, int_const(0))}), ValueError);
  EXPECT_THROW(x->index({slice(std::nullopt, std::nullopt, var("STEP"))}), ValueError);
}

TEST(IndexMapErrors, SelfAsDtype) {
  TensorPtr x = source("x", 1);
  TensorPtr t = x->tile({2});
  EXPECT_THROW(level(t)->set_dtype(t), ValueError);  // a cycle of levels
}

TEST(IndexMapErrors, Evaluation) {
  TensorPtr x = source("x", 2);
  EXPECT_THROW(evaluate_offsets(*x, {}), ValueError);                                       // sizes unknown
  EXPECT_THROW(evaluate_offsets(*x->tile({var("B"), 2}), sizes("x", {4, 4})), ValueError);  // B unknown
  try {
    evaluate_offsets(*x->tile({var("BLOCK"), 2}), sizes("x", {4, 4}));
  } catch (const ValueError& error) {
    EXPECT_NE(std::string(error.what()).find("BLOCK"), std::string::npos) << error.what();
  }
  // Levels from different arrangements of one source cannot be combined.
  TensorPtr a = x->tile({2, 2});
  TensorPtr b = x->tile({2, 2});
  a->set_dtype(level(b));
  EXPECT_THROW(evaluate_offsets(*a, sizes("x", {4, 4})), ValueError);
}

}  // namespace
}  // namespace nt
