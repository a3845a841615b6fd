// Dots on Hopper's warpgroup MMAs (NT_WGMMA: CUDA C built for sm_90a): which dots
// (accumulated_dots()); their k loops are written by wgmma_ptx.h's write_wgmma_steps().
//
// In: a float16 or bfloat16 dot whose result is in an mma tile layout with NT_WGMMA<n> (NT_WN = 1,
// NT_WM the warps, a multiple of 4: lower/program_layout.cpp) and whose operands are staged in
// wgmma's swizzled atoms (StagedLayout, operand_layout()). Out: its k loop as wgmma.mma_async
// instructions, 16 steps of k each, waited for before the accumulators are read
// (codegen/c/wgmma_ptx.h has the helpers).
//
// The result shapes of k loops' accumulations (`acc += dot(a, b)`, accumulated_dots()) are wgmma
// shapes: any 16-bit dot of such a shape comes here where both its operands are staged in the
// atoms. Dots whose a registers may hold (flash attention's q kᵀ and p v, whose results are read
// at once) keep their tile layouts (rows a warp, lower/program_layout.h), which are wgmma's
// accumulators' where every warp holds 16 rows of every 16 NT_WM: there b is staged in the atoms
// (operand_layout()) and a is read from registers (p), or from its atoms where it is staged
// before the loop (q), and each dot waits for its own group. Leaving one group of a k loop's
// wgmma's running into the next iteration, with the copies one stage less ahead, measured slower
// than waiting for each, so each dot waits for its own.
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
