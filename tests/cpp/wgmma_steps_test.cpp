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
  at(t,
     "if (NT_WGMMA_N(NT_COLS3) == 256) NT_WGMMA_f16_256(nt_acc, 2 * nt_i * NT_C3 + nt_n0 / 4, NT_C3, nt_da, "
     "nt_db, 1);");
  // Every width from 256 down to 16, the last one unconditional.
  for (const char* width : {"128", "64", "32"})
    at(t, std::string("else if (NT_WGMMA_N(NT_COLS3) == ") + width + ") NT_WGMMA_f16_" + width + "(");
  at(t, "else NT_WGMMA_f16_16(");
}

TEST(WgmmaSteps, AKMajorBIsReadByAKMajorDescriptor) {
  StringWriter out;
  write_wgmma_steps(out, steps(true));
  at(out.text,
     "nt_wgmma_desc_k(nt_b, nt_wgmma_offset(nt_n0, nt_k0, BN, NT_WGMMA_ATOM(BK)), NT_WGMMA_ATOM(BK));");
  EXPECT_EQ(out.text.find("nt_wgmma_desc_mn"), std::string::npos);
  at(out.text, ", nt_da, nt_db, 0);");
}

}  // namespace
}  // namespace nt::codegen
