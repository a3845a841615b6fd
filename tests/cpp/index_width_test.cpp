// Which launches may build with 32-bit index arithmetic (driver/index_width.h): a tensor's
// elements, the memory they span and each level of its arrangement within 2^30; jagged tensors,
// unknown sizes and strides keep 64 bits; the build option that asks for 64 bits.
#include "driver/index_width.h"

#include <gtest/gtest.h>

namespace nt {
namespace {

constexpr int64_t kLimit = int64_t{1} << 30;

// A 2-D tensor of `rows` x `cols` with strides (`row_stride`, 1), tiled by 64 x 64 blocks.
PlanParam tiled_matrix() {
  PlanParam p;
  p.name = "x";
  p.source_shape = {var("rows"), var("cols")};
  p.stride_symbols = {"row_stride", "col_stride"};
  p.has_outer_level = true;
  p.outer_shape = {floordiv(add(var("rows"), int_const(63)), int_const(64)),
                   floordiv(add(var("cols"), int_const(63)), int_const(64))};
  p.block_shape = {int_const(64), int_const(64)};
  return p;
}

SymbolMap values(int64_t rows, int64_t cols, int64_t row_stride) {
  return {{"rows", int_const(rows)},
          {"cols", int_const(cols)},
          {"row_stride", int_const(row_stride)},
          {"col_stride", int_const(1)}};
}

TEST(IndexWidth, SmallTensorsFit) {
  EXPECT_TRUE(fits_index32({tiled_matrix()}, values(1000, 3000, 3000)));
  EXPECT_TRUE(fits_index32({tiled_matrix()}, values(1 << 15, 1 << 15, 1 << 15)));  // 2^30 elements
  PlanParam scalar;
  scalar.scalar = true;  // a scalar parameter has no index arithmetic
  EXPECT_TRUE(fits_index32({scalar, tiled_matrix()}, values(7, 9, -9)));
}

TEST(IndexWidth, TooManyElementsOrTooWideASpanKeepLong) {
  EXPECT_FALSE(fits_index32({tiled_matrix()}, values((1 << 15) + 1, 1 << 15, 1 << 15)));
  // Few elements, but rows 2^30 elements apart: their offsets pass 2^30.
  EXPECT_FALSE(fits_index32({tiled_matrix()}, values(3, 5, kLimit)));
  EXPECT_FALSE(fits_index32({tiled_matrix()}, values(3, 5, -kLimit)));
  EXPECT_TRUE(fits_index32({tiled_matrix()}, values(2, 5, kLimit / 2)));
  // One parameter too large is enough.
  EXPECT_FALSE(fits_index32({tiled_matrix(), tiled_matrix()}, values(1 << 16, 1 << 15, 1 << 15)));
}

TEST(IndexWidth, UnknownSizesStridesAndJaggedTensorsKeepLong) {
  SymbolMap no_stride = values(10, 10, 10);
  no_stride.erase("row_stride");
  EXPECT_FALSE(fits_index32({tiled_matrix()}, no_stride));
  SymbolMap no_size = values(10, 10, 10);
  no_size.erase("rows");
  EXPECT_FALSE(fits_index32({tiled_matrix()}, no_size));
  PlanParam jagged = tiled_matrix();
  jagged.jagged_dim = 0;
  EXPECT_FALSE(fits_index32({jagged}, values(10, 10, 10)));
}

TEST(IndexWidth, OptionsMayAskForLong) {
  EXPECT_TRUE(asks_index64("-DNT_NO_INDEX32"));
  EXPECT_TRUE(asks_index64("-cl-fast-relaxed-math  -DNT_NO_INDEX32 -cl-opt-disable"));
  EXPECT_TRUE(asks_index64("-cl-opt-disable -D NT_NO_INDEX32"));
  EXPECT_TRUE(asks_index64("-DNT_NO_INDEX32=1"));
  EXPECT_TRUE(asks_index64("-D NT_NO_INDEX32=1 -cl-opt-disable"));
  EXPECT_FALSE(asks_index64(""));
  EXPECT_FALSE(asks_index64("-cl-opt-disable"));
  EXPECT_FALSE(asks_index64("-DNT_NO_INDEX32X -DX_NT_NO_INDEX32 NT_NO_INDEX32 -DNT_INDEX32"));
}

}  // namespace
}  // namespace nt
