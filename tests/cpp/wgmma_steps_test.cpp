// A dot's k loop on Hopper's warpgroup MMAs (wgmma_ptx.h's write_wgmma_steps()), written to a string:
// the statements in their order, the descriptors of both operand layouts, the wgmma width dispatch.
#include <gtest/gtest.h>

#include <string>

#include "codegen/c/wgmma_ptx.h"
#include "string_writer.h"

namespace nt::codegen {
namespace {

using testing::StringWriter;

WgmmaSteps steps(bool b_k_major) {
  return {
      "f16", 3,        "nt_acc", "nt_a", "BM", "BK", "nt_b", b_k_major ? "BN" : "BK", b_k_major ? "BK" : "BN",
      "BK",  b_k_major};
}

size_t at(const std::string& text, const std::string& what) {
  size_t found = text.find(what);
  EXPECT_NE(found, std::string::npos) << what << " in\n" << text;
  return found;
}

TEST(WgmmaSteps, FenceStepsCommitAndWaitInOrder) {
  StringWriter out;
  write_wgmma_steps(out, steps(false));
  const std::string& t = out.text;
  // The accumulators held before the fence and after the wait; the k loop in steps of 16.
  size_t hold = at(t, "NT_WGMMA_HOLD(nt_acc[nt_s]);"), fence = at(t, "NT_WGMMA_FENCE();");
  size_t loop = at(t, "for (nt_index nt_k0 = 0; nt_k0 < BK; nt_k0 += 16) {");
  size_t commit = at(t, "NT_WGMMA_COMMIT();"), wait = at(t, "NT_WGMMA_WAIT(0);");
  EXPECT_TRUE(hold < fence && fence < loop && loop < commit && commit < wait);
  EXPECT_NE(t.find("NT_WGMMA_HOLD(nt_acc[nt_s]);", wait), std::string::npos) << t;
  EXPECT_NE(t.find("for (int nt_s = 0; nt_s < NT_R3 * NT_C3; ++nt_s) {"), std::string::npos) << t;
  EXPECT_EQ(out.indent, 0);
  // a k-major from its atoms; b n-major (rows of k, transposed by wgmma: tb = 1).
  at(t,
     "nt_wgmma_desc_k(nt_a, nt_wgmma_offset(16L * NT_WM3 * nt_i + 64L * nt_wg, nt_k0, BM, "
     "NT_WGMMA_ATOM(BK)), "
     "NT_WGMMA_ATOM(BK));");
  at(t,
     "nt_wgmma_desc_mn(nt_b, nt_wgmma_offset(nt_k0, nt_n0, BK, NT_WGMMA_ATOM(BN)), BK, NT_WGMMA_ATOM(BN));");
  // One call, the width a constant of the columns: only its specialisation is built.
  at(t,
     "nt_wgmma_f16<NT_WGMMA_N(NT_COLS3), 1>::run(nt_acc, 2 * nt_i * NT_C3 + nt_n0 / 4, NT_C3, nt_da, "
     "nt_db);");
  EXPECT_EQ(t.find("::run("), t.rfind("::run(")) << t;
}

TEST(WgmmaSteps, AKMajorBIsReadByAKMajorDescriptor) {
  StringWriter out;
  write_wgmma_steps(out, steps(true));
  at(out.text,
     "nt_wgmma_desc_k(nt_b, nt_wgmma_offset(nt_n0, nt_k0, BN, NT_WGMMA_ATOM(BK)), NT_WGMMA_ATOM(BK));");
  EXPECT_EQ(out.text.find("nt_wgmma_desc_mn"), std::string::npos);
  at(out.text, "nt_wgmma_f16<NT_WGMMA_N(NT_COLS3), 0>::run(");
}

TEST(WgmmaSteps, AHeldInRegistersIsPackedBeforeTheFence) {
  StringWriter out;
  HeldOperand held{"nt_let7", "NT_HELD_A", 4};
  WgmmaSteps s = steps(false);
  s.held = &held;
  write_wgmma_steps(out, s);
  const std::string& t = out.text;
  // Every step's fragments packed from the held slots (rows g and g + 8, columns 2 t and 8 + 2 t),
  // all of them before the fence: wgmma reads its a registers while it runs.
  size_t declared = at(t, "uint nt_fa[(BK) / 16][NT_MAX(1L, NT_R3 / 2)][4];");
  size_t packed =
      at(t,
         "nt_fa[nt_k0 / 16][nt_i][3] = nt_pack_f16x2(nt_let7[(2 * nt_i + 1) * NT_C4 + nt_k0 / 4 + 2], "
         "nt_let7[(2 * nt_i + 1) * NT_C4 + nt_k0 / 4 + 2 + 1]);");
  size_t fence = at(t, "NT_WGMMA_FENCE();");
  EXPECT_TRUE(declared < packed && packed < fence);
  // a from registers: no descriptor of its own, the RA form of the macro.
  EXPECT_EQ(t.find("nt_da"), std::string::npos) << t;
  EXPECT_EQ(t.find("nt_wg ="), std::string::npos) << t;
  size_t issued =
      at(t,
         "nt_wgmma_f16_ra<NT_WGMMA_N(NT_COLS3), 1>::run(nt_acc, 2 * nt_i * NT_C3 + nt_n0 / 4, NT_C3, "
         "nt_fa[nt_k0 / 16][nt_i], nt_db);");
  EXPECT_LT(fence, issued);
  EXPECT_LT(fence, t.find("NT_WGMMA_COMMIT();"));
  EXPECT_EQ(out.indent, 0);
}

TEST(WgmmaSteps, HelpersSpecialiseEveryWidthInBothForms) {
  const std::string h = wgmma_helpers();
  // a's four registers between the accumulators and b's descriptor; no transposition of a.
  at(h,
     "template <int TB> struct nt_wgmma_bf16_ra<16, TB> {\n  static NT_D void run(float* acc, int base, int "
     "C, "
     "const uint* fa, ulong db) {");
  at(h,
     "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, "
     "%11}, %12, p, 1, 1, %14;");
  at(h, "\"r\"(fa[0]), \"r\"(fa[1]), \"r\"(fa[2]), \"r\"(fa[3]), \"l\"(db), \"r\"(1), \"n\"(TB));");
  // The descriptor form keeps a's transposition (0); its accumulators' rows C apart.
  at(h, "m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, %11;");
  at(h,
     "\"+f\"(acc[base + 0]), \"+f\"(acc[base + 1]), \"+f\"(acc[base + C + 0]), \"+f\"(acc[base + C + 1]), "
     "\"+f\"(acc[base + 2])");
  for (const char* type : {"f16", "bf16"})
    for (const char* form : {"", "_ra"}) {
      const std::string name = std::string("nt_wgmma_") + type + form;
      at(h, "template <int N, int TB> struct " + name + ";\n");  // other widths: no such type
      for (const char* width : {"16", "32", "64", "128", "256"})
        at(h, "template <int TB> struct " + name + "<" + width + ", TB> {");
    }
  at(h, "#define NT_WARPGROUP_MMA 1\n");
  at(h, "#define NT_WARPGROUP_MMA 0\n");
}

}  // namespace
}  // namespace nt::codegen
