// A column-read block packed by register transposes (codegen/c/transposed_tiles.h), written to a
// string: the tile loops, their vector loads and stores, the edges, and the transpose itself.
#include "codegen/c/transposed_tiles.h"

#include <gtest/gtest.h>

#include <string>

#include "string_writer.h"

namespace nt::codegen {
namespace {

using testing::StringWriter;

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(TransposedTiles, TilesLoadColumnsTransposeAndStoreRowsThenTheEdges) {
  StringWriter out;
  int edges = 0;
  const TransposedTiles t{
      .width = 8,
      .vload = "vload_half",
      .pointer = "nt_p1",
      .array = "nt_b",
      .rows = "40",
      .columns = "24",
      .k0 = "k0",
      .n0 = "n0",
      .registers = "r",
      .ek = "ek",
      .en = "en",
      .column_offset = [](int i) { return "k0 + (n0 + " + std::to_string(i) + ") * s"; },
      .edge =
          [&] {
            ++edges;
            out.emit_line("nt_b[ek * 24 + en] = nt_p1[ek + en * s];");
          },
  };
  write_transposed_tiles(out, t);
  const std::string& s = out.text;
  EXPECT_EQ(out.indent, 0) << s;
  EXPECT_EQ(edges, 1);
  EXPECT_TRUE(has(s, "for (long n0 = 0; n0 + 8 <= 24; n0 += 8) {")) << s;
  EXPECT_TRUE(has(s, "for (long k0 = 0; k0 + 8 <= 40; k0 += 8) {")) << s;
  // Column i of the tile: 8 consecutive k as one vector; the tile transposed; row i stored.
  EXPECT_TRUE(has(s, "r[0] = vload_half8(0, nt_p1 + k0 + (n0 + 0) * s);")) << s;
  EXPECT_TRUE(has(s, "r[7] = vload_half8(0, nt_p1 + k0 + (n0 + 7) * s);")) << s;
  EXPECT_FALSE(has(s, "r[8] =")) << s;
  size_t transpose = s.find("nt_transpose8(r);");
  ASSERT_NE(transpose, std::string::npos) << s;
  EXPECT_LT(s.find("vload_half8"), transpose);
  EXPECT_GT(s.find("vstore8(r[0], 0, nt_b + (k0 + 0) * 24 + n0);"), transpose) << s;
  EXPECT_TRUE(has(s, "vstore8(r[7], 0, nt_b + (k0 + 7) * 24 + n0);")) << s;
  // The edges: every row's columns past the last whole tile, all columns of the rows past it.
  EXPECT_TRUE(has(s, "for (long ek = 0; ek < 40; ++ek) {")) << s;
  EXPECT_TRUE(has(s, "for (long en = ek < 40 / 8 * 8 ? 24 / 8 * 8 : 0; en < 24; ++en) {")) << s;
  EXPECT_GT(s.find("nt_b[ek * 24 + en]"), s.find("for (long en = ")) << s;
}

TEST(TransposedTiles, TheTransposeTradesOffDiagonalBlocksAtEachScale) {
  // Two rows: x takes the first elements of both, y the second ones.
  const std::string two = transpose_helper(2, opencl_dialect());
  EXPECT_TRUE(has(two, "void nt_transpose2(__private float2* r) {")) << two;
  EXPECT_TRUE(has(two, "x = shuffle2(r[0], r[1], (uint2)(0, 2));")) << two;
  EXPECT_TRUE(has(two, "y = shuffle2(r[0], r[1], (uint2)(1, 3));")) << two;
  // Sixteen rows: four scales, eight pairs of rows each, two shuffles a pair.
  const std::string sixteen = transpose_helper(16, opencl_dialect());
  size_t shuffles = 0;
  for (size_t at = sixteen.find("shuffle2("); at != std::string::npos; at = sixteen.find("shuffle2(", at + 1))
    ++shuffles;
  EXPECT_EQ(shuffles, 4u * 8u * 2u);
  EXPECT_TRUE(has(
      sixteen, "x = shuffle2(r[0], r[8], (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));"))
      << sixteen;
}

}  // namespace
}  // namespace nt::codegen
