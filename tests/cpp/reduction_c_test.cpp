// Reductions as C (codegen/c/reduction_c.h): folds' starts and steps, and the cross-lane combine of
// a work-group's row reductions written to a string.
#include "codegen/c/reduction_c.h"

#include <gtest/gtest.h>

#include <string>

#include "string_writer.h"

namespace nt::codegen {
namespace {

using testing::StringWriter;

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(ReductionC, FoldsStartAtTheIdentityAndStepByTheirFunction) {
  EXPECT_EQ(reduce_init(ReduceFn::Sum, DType::float32), "0");
  EXPECT_EQ(reduce_init(ReduceFn::Max, DType::float32), "-INFINITY");
  EXPECT_EQ(reduce_init(ReduceFn::ArgMin, DType::float16), "INFINITY");
  EXPECT_EQ(reduce_init(ReduceFn::Max, DType::boolean), "0");  // booleans compute in int
  EXPECT_EQ(reduce_init(ReduceFn::Min, DType::boolean), "1");
  EXPECT_EQ(combine_c(ReduceFn::Sum, true, "a", "b"), "(a + b)");
  EXPECT_EQ(combine_c(ReduceFn::Max, true, "a", "b"), "fmax(a, b)");
  EXPECT_EQ(combine_c(ReduceFn::Min, false, "a", "b"), "min(a, b)");
}

TEST(ReductionC, ArgReductionsKeepTheFirstIndexOfEqualValues) {
  StringWriter out;
  write_combine_partner(out, ReduceFn::ArgMax, true, "m", "t", "bm", "bt");
  EXPECT_EQ(out.text, "if (t > m || (t == m && bt < bm)) {\n  m = t;\n  bm = bt;\n}\n");
  StringWriter plain;
  write_combine_partner(plain, ReduceFn::Min, false, "m", "t", "", "");
  EXPECT_EQ(plain.text, "m = min(m, t);\n");
}

RowCombine row_sum(const std::string& span) {
  return {5,       ReduceFn::Sum, true,   false, "nt_acc", "nt_best", "nt_parts", "nt_bests",
          "nt_tx", "nt_ty",       "nt_s", span,  true,     "nt_red",  false,      "float"};
}

TEST(ReductionC, RowsCombineByShufflesThenATreeInLocalMemory) {
  StringWriter out;
  write_row_combine(out, row_sum("nt_span"));
  const std::string& t = out.text;
  EXPECT_EQ(out.indent, 0) << t;
  EXPECT_TRUE(has(t,
                  "const nt_index nt_span = NT_WORK_ITEMS % 32 == 0 ? (NT_MMA5 ? NT_MIN(NT_TX5, 4) : "
                  "NT_MIN(NT_TX5, 32)) : 1;"))
      << t;
  size_t shuffle = t.find("nt_acc[nt_r] = (nt_acc[nt_r] + NT_SHUFFLE_XOR(nt_acc[nt_r], nt_s));");
  size_t tree = t.find("if (NT_TX5 > nt_span) {");
  size_t store = t.find(
      "if (nt_row < NT_ROWS5) nt_red[nt_row] = (float)(NT_TX5 > nt_span ? "
      "nt_parts[nt_r * NT_WORK_ITEMS + NT_VLANE5] : nt_acc[nt_r]);");
  ASSERT_NE(shuffle, std::string::npos) << t;
  EXPECT_TRUE(shuffle < tree && tree < store) << t;
  EXPECT_TRUE(has(t, "for (nt_index nt_s = NT_TX5 / 2; nt_s >= nt_span; nt_s /= 2) {")) << t;
}

TEST(ReductionC, WithoutShufflesTheTreeTakesTheWholeRow) {
  RowCombine r = row_sum("");
  r.fn = ReduceFn::ArgMax;
  r.arg = true;
  r.scalar = true;
  r.result_type = "long";
  StringWriter out;
  write_row_combine(out, r);
  const std::string& t = out.text;
  EXPECT_EQ(out.indent, 0) << t;
  EXPECT_FALSE(has(t, "NT_SHUFFLE_XOR")) << t;
  EXPECT_TRUE(has(t, "for (nt_index nt_s = NT_TX5 / 2; nt_s > 0; nt_s /= 2) {")) << t;
  EXPECT_TRUE(has(t, "nt_bests[nt_r * NT_WORK_ITEMS + NT_VLANE5] = nt_best[nt_r];")) << t;
  EXPECT_TRUE(has(t, "if (nt_row < NT_ROWS5) nt_red = (long)nt_bests[nt_r * NT_WORK_ITEMS + NT_VLANE5];"))
      << t;
  EXPECT_EQ(t.rfind("NT_BARRIER();\n"), t.size() - std::string("NT_BARRIER();\n").size()) << t;
}

TEST(ReductionC, ARowHeldInItsSliceLayoutIsWrittenByEveryWorkItemOfTheRow) {
  RowCombine r = row_sum("nt_span");
  r.held = true;
  StringWriter out;
  write_row_combine(out, r);
  const std::string& t = out.text;
  EXPECT_EQ(out.indent, 0) << t;
  // The tree's result, from the row's first work-item's partial, to every work-item of the row; a
  // barrier before the partials are written again.
  size_t gather = t.find("nt_acc[nt_r] = nt_parts[nt_r * NT_WORK_ITEMS + NT_VLANE5 - nt_tx];");
  ASSERT_NE(gather, std::string::npos) << t;
  EXPECT_EQ(t.find("NT_BARRIER();\n", gather), t.rfind("NT_BARRIER();\n")) << t;
  // Every work-item writes its own slots, outside the tree's branch, with no test of its column.
  size_t write = t.find("nt_red[nt_r] = (float)nt_acc[nt_r];");
  ASSERT_NE(write, std::string::npos) << t;
  EXPECT_LT(t.rfind("NT_BARRIER();\n"), write) << t;
  EXPECT_FALSE(has(t, "if (nt_tx == 0)")) << t;
  EXPECT_FALSE(has(t, "nt_red[nt_row]")) << t;
}

}  // namespace
}  // namespace nt::codegen
