// Hopper's warpgroup MMAs from CUDA C: inline PTX for sm_90a (wgmma.mma_async).
//
// NT_WGMMA is defined where NVRTC builds a tensor-core source for sm_90a (the CUDA dialect's
// header). wgmma multiplies a 64 x 16 tile of a by a 16 x N tile of b into float accumulators
// spread over a warpgroup (four consecutive warps), reading both operands from shared memory
// through 64-bit descriptors. The accumulators are mma.sync's m16n8 fragments, warp w of the
// group holding rows 16 w to 16 w + 15: the mma tile layout with NT_WN = 1 and NT_WM a multiple
// of 4 (lower/program_layout.cpp) is theirs.
//
// wgmma_helpers() is the text of what generated dots use (emitter_wgmma.cpp):
//   NT_WGMMA_ATOM(columns)      the elements (16-bit) of a row of a swizzled atom: 64, 32 or 16,
//                               the most that divides `columns` (128-, 64- or 32-byte rows);
//   nt_wgmma_offset(r, c, rows, atom)  element (r, c) of a rows x columns operand stored as
//                               columns / atom atoms of rows x atom, before swizzling;
//   nt_wgmma_at(r, c, rows, atom)      the same, its 16-byte chunks swizzled as wgmma reads them
//                               (Swizzle<B, 4, 3>: byte address bits 4.. ^= bits 7..);
//   NT_WGMMA_N(columns)         the widest wgmma (N of 16 to 256) a row of tiles is issued in;
//   nt_wgmma_desc_k(p, offset, atom)        a descriptor of a k-major operand (a, or b = trans(x)
//                               staged as x) from element `offset` of array p;
//   nt_wgmma_desc_mn(p, offset, rows, atom) of an n-major one (b staged as rows of k);
//   NT_WGMMA_FENCE()            before the first wgmma of a dot;
//   NT_WGMMA_COMMIT(), NT_WGMMA_WAIT(n)  the wgmma's since the last commit are a group; all but
//                               the n most recent groups are done (a constant n);
//   NT_WGMMA_HOLD(x)            x is read or written only after what came before (the wait);
//   nt_wgmma_<type><N, TB>::run(acc, base, C, da, db)  acc += a b for a 64 x N tile, type f16
//                               or bf16, TB 1 for an n-major b: register q of the warpgroup's
//                               fragment is acc[base + (q / 2 % 2) C + 2 (q / 4) + q % 2] (a
//                               template specialised for each N, so that only the widths used
//                               are built);
//   nt_wgmma_<type>_ra<N, TB>::run(acc, base, C, fa, db)  the same with a from registers: fa the
//                               warp's four of its 16 rows, as mma.sync's a fragment;
//   NT_WARPGROUP_MMA            1 where NT_WGMMA is defined, else 0 (for C conditions);
//   NT_ASYNC_PROXY_FENCE()      what this thread wrote to shared memory is seen by wgmma (no-op
//                               without NT_WGMMA).
//
// write_wgmma_steps() writes a dot's k loop in them.
#pragma once

#include <string>

#include "codegen/c/code_writer.h"
#include "codegen/c/mma_operands.h"

namespace nt::codegen {

std::string wgmma_helpers();

// A dot's k loop on warpgroup MMAs, written to `out`: acc (tile layout `layout`'s slots, NT_WGMMA)
// += a b over K (C) elements of k, 16 at a time. a is k-major in the staged array A, of A_rows
// rows (C) in atoms of rows of A_columns; b is in B likewise, k-major where `b_k_major` (trans(x)
// staged as x), else n-major (rows of k). `type`: f16 or bf16. Warpgroup g multiplies rows 64 g to
// 64 g + 63 of each 16 NT_WM rows by all NT_COLS columns, in wgmma's of NT_WGMMA_N columns, and
// waits for its group before the accumulators are read (unless defer_macro).
struct WgmmaSteps {
  std::string type;
  int layout = 0;
  std::string acc;
  std::string A, A_rows, A_columns;
  std::string B, B_rows, B_columns;
  std::string K;
  bool b_k_major = false;
  // Where this macro is 1 at build, leave the group running: the caller waits for it
  // (NT_WGMMA_WAIT) before acc is read, and before the operands' buffers are written again.
  std::string defer_macro;
  // a read from the registers that hold it in the result's rows (flash attention's q and p) instead
  // of A: its fragments packed as mma.sync's (held_a_register()), wgmma's a operand.
  const HeldOperand* held = nullptr;
};
void write_wgmma_steps(CodeWriter& out, const WgmmaSteps& steps);

// acc's registers (tile layout `layout`'s slots) read and written only after what came before
// (NT_WGMMA_HOLD): after a wait for the groups that write them.
void hold_wgmma_accumulators(CodeWriter& out, const std::string& acc, int layout);

}  // namespace nt::codegen
