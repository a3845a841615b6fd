// Dots on Hopper's warpgroup MMAs (NT_WGMMA: CUDA C built for sm_90a).
//
// In: a float16 or bfloat16 dot whose result is in an mma tile layout with NT_WGMMA<n> (NT_WN = 1,
// NT_WM the warps, a multiple of 4: lower/program_layout.cpp) and whose operands are staged in
// wgmma's swizzled atoms (StagedLayout, operand_layout()). Out: its k loop as wgmma.mma_async
// instructions, 16 steps of k each, waited for before the accumulators are read
// (codegen/c/wgmma_ptx.h has the helpers).
//
// The result shapes of k loops' accumulations (`acc += dot(a, b)`, accumulated_dots()) are wgmma
// shapes: any 16-bit dot of such a shape comes here where both its operands are staged in the
// atoms. Attention's dots, whose results are read at once, measured faster on mma.sync. Leaving
// one group of wgmma's running into the next iteration, with the copies one stage less ahead,
// measured slower than waiting for each, so each dot waits for its own.
//
// Warpgroup g multiplies rows 64 g to 64 g + 63 of each 16 NT_WM rows (nt_i-th: the rows its
// warps hold in the tile layout) by all NT_COLS columns, in wgmma's of NT_WGMMA_N columns. a is
// k-major (rows of k, as it is staged); b is k-major where it is trans(x) staged as x, else
// n-major (rows of n), which wgmma transposes itself.
#include <map>
#include <set>
#include <string>

#include "codegen/c/emitter.h"

namespace nt::codegen {

using namespace nt::ir;

void Emitter::emit_wgmma_steps(const std::string& type, int layout, const std::string& acc,
                               const std::string& A, const std::string& B, const StagedLayout& la,
                               const StagedLayout& lb, const std::string& K, bool bt) {
  const std::string n = std::to_string(layout);
  const std::string atom_a = "NT_WGMMA_ATOM(" + la.columns + ")";
  const std::string atom_b = "NT_WGMMA_ATOM(" + lb.columns + ")";
  const std::string width = "NT_WGMMA_N(NT_COLS" + n + ")";
  // The accumulators' registers, read and written only after what came before (the wait).
  auto hold = [&] {
    line_("NT_UNROLL");
    open("for (int nt_s = 0; nt_s < NT_R" + n + " * NT_C" + n + "; ++nt_s)");
    line_("NT_WGMMA_HOLD(" + acc + "[nt_s]);");
    close();
  };
  line_("const nt_index nt_wg = NT_LANE / 128;  // this thread's warpgroup");
  hold();  // as they are now: wgmma.fence orders their earlier writes
  line_("NT_WGMMA_FENCE();");
  line_("NT_UNROLL");
  open("for (nt_index nt_k0 = 0; nt_k0 < " + K + "; nt_k0 += 16)");
  line_("NT_UNROLL");
  open("for (int nt_i = 0; nt_i < NT_R" + n + " / 2; ++nt_i)");
  line_("const ulong nt_da = nt_wgmma_desc_k(" + A + ", nt_wgmma_offset(16L * NT_WM" + n +
        " * nt_i + 64L * nt_wg, nt_k0, " + la.rows + ", " + atom_a + "), " + atom_a + ");");
  line_("NT_UNROLL");
  open("for (nt_index nt_n0 = 0; nt_n0 < NT_COLS" + n + "; nt_n0 += " + width + ")");
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
  line_("NT_WGMMA_WAIT(0);");
  hold();
}

std::set<const StmtNode*> accumulated_dots(const Stmt& loop) {
  // The locals each statement of the body reads or assigns, nested ones too.
  struct Locals : IRVisitor {
    using IRVisitor::visit;
    void visit(const Value& v) override {
      if (v->kind == ValueKind::LocalRef) ids.insert(v->id);
      IRVisitor::visit(v);
    }
    void visit(const Stmt& s) override {
      if (s->kind == StmtKind::Assign) ids.insert(s->id);
      IRVisitor::visit(s);
    }
    std::set<int> ids;
  };
  std::map<int, int> uses;  // local -> the statements touching it
  for (const Stmt& s : loop->body) {
    Locals locals;
    locals.visit(s);
    for (int id : locals.ids) ++uses[id];
  }
  std::set<const StmtNode*> found;
  for (const Stmt& s : loop->body) {
    if (!accumulated_dot(s) || uses[s->id] != 1) continue;
    const std::string mma = mma_type(s->value->operands[1]);
    if (mma == "f16" || mma == "bf16") found.insert(s.get());
  }
  return found;
}

}  // namespace nt::codegen
