// Dots on Hopper's warpgroup MMAs (NT_WGMMA: CUDA C built for sm_90a).
//
// In: a float16 or bfloat16 dot whose result is in an mma tile layout with NT_WGMMA<n> (NT_WN = 1,
// NT_WM the warps, a multiple of 4: lower/program_layout.cpp) and whose operands are staged in
// wgmma's swizzled atoms (StagedLayout, operand_layout()). Out: its k loop as wgmma.mma_async
// instructions, 16 steps of k each, waited for before the accumulators are read
// (codegen/c/wgmma_ptx.h has the helpers). In a pipelined k loop, `acc += dot(a, b)` may leave
// its wgmma's running while the next iteration starts (Deferral, emitter_pipeline.cpp).
//
// Warpgroup g multiplies rows 64 g to 64 g + 63 of each 16 NT_WM rows (nt_i-th: the rows its
// warps hold in the tile layout) by all NT_COLS columns, in wgmma's of NT_WGMMA_N columns. a is
// k-major (rows of k, as it is staged); b is k-major where it is trans(x) staged as x, else
// n-major (rows of n), which wgmma transposes itself.
#include <string>

#include "codegen/c/emitter.h"

namespace nt::codegen {

void Emitter::hold_accumulators(const std::string& acc, int layout) {
  const std::string n = std::to_string(layout);
  line_("NT_UNROLL");
  open("for (int nt_s = 0; nt_s < NT_R" + n + " * NT_C" + n + "; ++nt_s)");
  line_("NT_WGMMA_HOLD(" + acc + "[nt_s]);");
  close();
}

void Emitter::emit_wgmma_steps(const std::string& type, int layout, const std::string& acc,
                               const std::string& A, const std::string& B, const StagedLayout& la,
                               const StagedLayout& lb, const std::string& K, bool bt, bool deferred) {
  const std::string n = std::to_string(layout);
  const std::string atom_a = "NT_WGMMA_ATOM(" + la.columns + ")";
  const std::string atom_b = "NT_WGMMA_ATOM(" + lb.columns + ")";
  const std::string width = "NT_WGMMA_N(NT_COLS" + n + ")";
  line_("const long nt_wg = NT_LANE / 128;  // this thread's warpgroup");
  hold_accumulators(acc, layout);  // as they are now: wgmma.fence orders their earlier writes
  line_("NT_WGMMA_FENCE();");
  line_("NT_UNROLL");
  open("for (long nt_k0 = 0; nt_k0 < " + K + "; nt_k0 += 16)");
  line_("NT_UNROLL");
  open("for (int nt_i = 0; nt_i < NT_R" + n + " / 2; ++nt_i)");
  line_("const ulong nt_da = nt_wgmma_desc_k(" + A + ", nt_wgmma_offset(16L * NT_WM" + n +
        " * nt_i + 64L * nt_wg, nt_k0, " + la.rows + ", " + atom_a + "), " + atom_a + ");");
  line_("NT_UNROLL");
  open("for (long nt_n0 = 0; nt_n0 < NT_COLS" + n + "; nt_n0 += " + width + ")");
  if (bt) {
    line_("const ulong nt_db = nt_wgmma_desc_k(" + B + ", nt_wgmma_offset(nt_n0, nt_k0, " + lb.rows + ", " +
          atom_b + "), " + atom_b + ");");
  } else {
    line_("const ulong nt_db = nt_wgmma_desc_mn(" + B + ", nt_wgmma_offset(nt_k0, nt_n0, " + lb.rows + ", " +
          atom_b + "), " + lb.rows + ", " + atom_b + ");");
  }
  // The first of the tile's accumulators: slot (2 nt_i, nt_n0 / 4) of the NT_C a row.
  const std::string args = "(" + acc + ", 2 * nt_i * NT_C" + n + " + nt_n0 / 4, NT_C" + n +
                           ", nt_da, nt_db, " + (bt ? "0" : "1") + ");";
  for (int w = 256; w > 16; w /= 2)
    line_(std::string(w == 256 ? "if" : "else if") + " (" + width + " == " + std::to_string(w) +
          ") NT_WGMMA_" + type + "_" + std::to_string(w) + args);
  line_("else NT_WGMMA_" + type + "_16" + args);
  close();
  close();
  close();
  line_("NT_WGMMA_COMMIT();");
  if (deferred) {
    // Left running into the next iteration, which waits for it before its copies overwrite the
    // buffers it reads (emit_for_loop(): one stage fewer ahead).
    line_("if (NT_STAGES >= 4 && !" + deferral_.last + ") NT_WGMMA_WAIT(1);");
    line_("else NT_WGMMA_WAIT(0);  // the last iteration's are waited for in it");
    deferral_.conditions.push_back(la.swizzled);
  } else {
    line_("NT_WGMMA_WAIT(0);");
  }
  hold_accumulators(acc, layout);
}

}  // namespace nt::codegen
