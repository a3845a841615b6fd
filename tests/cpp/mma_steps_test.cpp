// mma.sync k loops (codegen/c/mma_steps.h) written to a string: which fragment loads each operand
// form takes, the held a's packing, the TF32 splits, and balanced blocks.
#include "codegen/c/mma_steps.h"

#include <gtest/gtest.h>

#include <string>

#include "string_writer.h"

namespace nt::codegen {
namespace {

using testing::StringWriter;

StagedLayout rows_of(const std::string& pitch) { return {pitch, "", "R", "C"}; }

MmaSteps f16_steps() {
  MmaSteps s;
  s.type = "f16";
  s.layout = 2;
  s.tx = "nt_tx";
  s.ty = "nt_ty";
  s.acc = "nt_acc";
  s.A = "nt_a";
  s.B = "nt_b";
  s.K = "BK";
  s.la = rows_of("BK + 8");
  s.lb = rows_of("BN + 8");
  return s;
}

std::string written(const MmaSteps& s) {
  StringWriter out;
  write_mma_steps(out, s);
  EXPECT_EQ(out.indent, 0) << out.text;
  return out.text;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(MmaSteps, SixteenBitOperandsLoadByLdmatrix) {
  MmaSteps s = f16_steps();
  s.a16 = s.b16 = true;
  std::string t = written(s);
  EXPECT_TRUE(has(t, "for (nt_index nt_k0 = 0; nt_k0 < BK; nt_k0 += 16) {")) << t;
  EXPECT_TRUE(
      has(t,
          "nt_ldmatrix_x4(nt_fa[nt_i], nt_a + (NT_ROW2(nt_ty, 2 * nt_i) - nt_g + nt_l % 16) * (BK + 8) + "
          "nt_k0 + nt_l / 16 * 8);"))
      << t;
  // b as rows of k: two tiles a transposing load, the last odd one alone.
  EXPECT_TRUE(has(t, "nt_ldmatrix_x4_trans(nt_fb[nt_j], nt_fb[nt_j + 1], ")) << t;
  EXPECT_TRUE(has(t, "} else {\n")) << t;
  EXPECT_TRUE(has(t,
                  "NT_MMA_M16N8K16_f16(nt_acc[nt_s], nt_acc[nt_s + 1], nt_acc[nt_s + NT_C2], "
                  "nt_acc[nt_s + NT_C2 + 1], nt_fa[nt_i], nt_fb[nt_j]);"))
      << t;
  s.bt = true;  // b as rows of n: ldmatrix without .trans
  t = written(s);
  EXPECT_TRUE(has(t, "nt_ldmatrix_x4_pair(nt_fb[nt_j], nt_fb[nt_j + 1], ")) << t;
  EXPECT_FALSE(has(t, "_trans(")) << t;
}

TEST(MmaSteps, FloatOperandsArePackedInPairsOrOneByOne) {
  MmaSteps s = f16_steps();
  s.pairs = true;
  s.local_pointer = "__local ";
  std::string t = written(s);
  EXPECT_TRUE(has(t,
                  "{ const float2 nt_e = *(__local const float2*)(nt_a + nt_p); nt_fa[nt_i][0] = "
                  "nt_pack_f16x2(nt_e.x, nt_e.y); }"))
      << t;
  s.pairs = false;
  t = written(s);
  EXPECT_TRUE(has(t, "nt_fa[nt_i][3] = nt_pack_f16x2(nt_a[nt_q + 8], nt_a[nt_q + 8 + 1]);")) << t;
  EXPECT_FALSE(has(t, "ldmatrix")) << t;
}

TEST(MmaSteps, AHeldInRegistersIsPackedFromItsSlots) {
  HeldOperand held{"nt_let7", "NT_HELD_A", 4};
  MmaSteps s = f16_steps();
  s.b16 = true;
  s.held = &held;
  std::string t = written(s);
  EXPECT_TRUE(has(t,
                  "nt_fa[nt_i][1] = nt_pack_f16x2(nt_let7[(2 * nt_i + 1) * NT_C4 + nt_k0 / 4 + 0], "
                  "nt_let7[(2 * nt_i + 1) * NT_C4 + nt_k0 / 4 + 0 + 1]);"))
      << t;
  EXPECT_FALSE(has(t, "nt_ldmatrix_x4(nt_fa")) << t;
}

TEST(MmaSteps, Tf32x3AddsFiniteCorrectionsBeforeTheLargeProduct) {
  Tf32Steps s{true, 1, "nt_tx", "nt_ty", "nt_acc", "nt_a", "nt_b", "BK", "BK", "BN"};
  StringWriter out;
  write_tf32_steps(out, s);
  const std::string& t = out.text;
  EXPECT_EQ(out.indent, 0);
  EXPECT_TRUE(has(t, "for (nt_index nt_k0 = 0; nt_k0 < BK; nt_k0 += 8) {")) << t;
  size_t small = t.find("NT_MMA_M16N8K8_tf32(nt_c0, nt_c1, nt_c2, nt_c3, nt_la[nt_i], nt_fb[nt_j]);");
  size_t fix = t.find("nt_acc[nt_s] += isfinite(nt_c0) ? nt_c0 : 0.0f;");
  size_t large = t.find("NT_MMA_M16N8K8_tf32(nt_acc[nt_s], ");
  ASSERT_NE(small, std::string::npos) << t;
  EXPECT_TRUE(small < fix && fix < large) << t;
  s.x3 = false;
  StringWriter plain;
  write_tf32_steps(plain, s);
  EXPECT_FALSE(has(plain.text, "nt_la")) << plain.text;
  EXPECT_TRUE(has(plain.text, "nt_fa[nt_i][0] = nt_tf32(nt_a[nt_p]);")) << plain.text;
}

}  // namespace
}  // namespace nt::codegen
