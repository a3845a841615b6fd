// Blocks over flattened rows in runs of consecutive rows, written to a CodeWriter (the emitter
// decides which blocks: emitter_row_runs.cpp, pack_row_runs() and store_row_runs()).
//
// In: a 2-D block whose element (m, k) lies at R(m) + C(k), R not affine in m (a flattened
// dimension: an implicit GEMM's output positions (n, p, q)). Out: for each chunk of 16 rows, a
// run-time check that R is consecutive over the chunk (16 output positions along one output row);
// then, per k, one loop over the chunk's rows at `R(m0) + C(k) + (m - m0)`, which the C compiler
// makes one (masked) vector load or store; chunks that are not such a run, element by element:
//
//   for (long m0 = 0; m0 < M; m0 += 16) {
//     long nt_rbase = 0;
//     int nt_run = m0 + 16 <= M;
//     if (nt_run) for (long m = m0; m < m0 + 16; ++m) {   // R(m0) + (m - m0) == R(m)?
//       const long nt_row = R(m);
//       if (m == m0) nt_rbase = nt_row;
//       nt_run &= nt_row == nt_rbase + (m - m0);
//     }
//     if (nt_run) {
//       for (long k = 0; k < K; ++k) {
//         const long nt_base = nt_rbase + C(k);
//         for (long m = m0; m < m0 + 16; ++m) <element (m, k) at nt_base + (m - m0)>;
//       }
//     } else {
//       for (long m = m0; m < min(m0 + 16, M); ++m) for (long k = 0; k < K; ++k) <element (m, k)>;
//     }
//   }
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "codegen/c/code_writer.h"
#include "symbolic/expr.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

// `offset` as R + C, R free of the variable `k` and C free of `m`; nullopt where a term uses both.
std::optional<std::pair<Expr, Expr>> split_row_run(const Expr& offset, const std::string& m,
                                                   const std::string& k);

struct RowRunChunks {
  std::string m, k;           // the element's row and column variables (declared by the loops written)
  std::string rows, columns;  // M and K (C)
  // Names as the loops need them, in the order they are asked for (the emitter's fresh names).
  std::function<std::string(const std::string& prefix)> fresh;
  // R(m) and C(k) as C, printed where they are read (inside the chunk's loops).
  std::function<std::string()> row_part, column_part;
  // Writes what goes before a run's loop over rows (a vectoriser's hint), if anything.
  std::function<void()> hint;
  // Writes element (m, k) of a run, at offset `at` (C); and of a chunk that is none.
  std::function<void(const std::string& at)> run;
  std::function<void()> each;
};
void write_row_run_chunks(CodeWriter& out, const RowRunChunks& chunks);

}  // namespace nt::codegen
