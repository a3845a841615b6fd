// Runs of consecutive flattened rows (codegen/c/row_runs.h) on their own: how an offset splits into
// a row part and a column part, and the chunks' loops written to a string.
#include "codegen/c/row_runs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "string_writer.h"
#include "symbolic/printer.h"

namespace nt::codegen {
namespace {

using testing::StringWriter;

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(RowRuns, AnOffsetSplitsIntoARowPartAndAColumnPart) {
  // An implicit GEMM's input: row m unravels (q = m % W, p = m // W), column k is a filter step.
  const Expr m = var("m"), k = var("k"), W = var("W"), s = var("s");
  const Expr offset = add(mul(add(floordiv(m, W), mod(m, W)), s), mul(k, Expr(9)));
  auto parts = split_row_run(offset, "m", "k");
  ASSERT_TRUE(parts);
  EXPECT_EQ(to_python(parts->first), to_python(mul(add(floordiv(m, W), mod(m, W)), s)));
  EXPECT_EQ(to_python(parts->second), to_python(mul(k, Expr(9))));
  // A term of both (m * k) does not split.
  EXPECT_FALSE(split_row_run(add(mul(m, k), k), "m", "k"));
  // Negations and differences split part by part.
  auto negated = split_row_run(sub(neg(floordiv(m, W)), k), "m", "k");
  ASSERT_TRUE(negated);
  EXPECT_EQ(to_python(negated->second), to_python(neg(k)));
}

TEST(RowRuns, ChunksCheckTheirRowsThenRunOrGoElementByElement) {
  StringWriter out;
  std::vector<std::string> asked;
  std::vector<std::string> runs;
  int each = 0, hints = 0;
  const RowRunChunks chunks{
      .m = "m",
      .k = "k",
      .rows = "64",
      .columns = "27",
      .fresh =
          [&](const std::string& prefix) {
            asked.push_back(prefix);
            return prefix + std::to_string(asked.size());
          },
      .row_part = [] { return std::string("R(m)"); },
      .column_part = [] { return std::string("C(k)"); },
      .hint = [&] { ++hints; },
      .run =
          [&](const std::string& at) {
            runs.push_back(at);
            out.emit_line("a[k * 64 + m] = x[" + at + "];");
          },
      .each =
          [&] {
            ++each;
            out.emit_line("a[k * 64 + m] = x[R(m) + C(k)];");
          },
  };
  write_row_run_chunks(out, chunks);
  const std::string& s = out.text;
  EXPECT_EQ(out.indent, 0) << s;
  EXPECT_EQ(asked, (std::vector<std::string>{"nt_m0", "nt_rbase", "nt_run", "nt_row", "nt_base"}));
  EXPECT_EQ(each, 1);
  EXPECT_EQ(hints, 1);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0], "nt_base5 + (m - nt_m01)");
  EXPECT_TRUE(has(s, "for (long nt_m01 = 0; nt_m01 < 64; nt_m01 += 16) {")) << s;
  // The check: a whole chunk whose R steps by one row at a time.
  EXPECT_TRUE(has(s, "int nt_run3 = nt_m01 + 16 <= 64;")) << s;
  EXPECT_TRUE(has(s, "const long nt_row4 = R(m);")) << s;
  EXPECT_TRUE(has(s, "nt_run3 &= nt_row4 == nt_rbase2 + (m - nt_m01);")) << s;
  // A run: per k, the chunk's base once, then the 16 rows at consecutive offsets.
  EXPECT_TRUE(has(s, "const long nt_base5 = nt_rbase2 + C(k);")) << s;
  EXPECT_TRUE(has(s, "for (long m = nt_m01; m < nt_m01 + 16; ++m) {")) << s;
  // Otherwise row by row, the last chunk cut at the block's end.
  EXPECT_TRUE(has(s, "} else {")) << s;
  EXPECT_TRUE(has(s, "for (long m = nt_m01; m < min(nt_m01 + 16L, (long)(64)); ++m) {")) << s;
  EXPECT_LT(s.find("x[nt_base5"), s.find("} else {")) << s;
  EXPECT_GT(s.find("x[R(m) + C(k)]"), s.find("} else {")) << s;
}

}  // namespace
}  // namespace nt::codegen
