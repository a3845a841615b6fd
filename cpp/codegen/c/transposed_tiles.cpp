#include "codegen/c/transposed_tiles.h"

namespace nt::codegen {

std::string transpose_helper(int w, const Dialect& d) {
  const std::string n = std::to_string(w);
  std::string s = "// r[i][j] <- r[j][i] for " + n + " float" + n +
                  " rows: at each scale s (1, 2, 4, ...) the s x s blocks\n"
                  "// off the diagonal of each 2s x 2s block trade places, two shuffles per pair of rows.\n"
                  "inline __attribute__((always_inline)) void nt_transpose" +
                  n + "(" + std::string(d.private_pointer) + "float" + n + "* r) {\n  float" + n + " x, y;\n";
  for (int scale = 1; scale < w; scale *= 2) {
    std::string keep, take;  // masks of shuffle2(r[i], r[i + scale]): w + j selects the second's j
    for (int j = 0; j < w; ++j) {
      bool high = (j & scale) != 0;
      keep += (j ? ", " : "") + std::to_string(high ? w + j - scale : j);
      take += (j ? ", " : "") + std::to_string(high ? w + j : j + scale);
    }
    for (int i = 0; i < w; ++i) {
      if (i & scale) continue;
      std::string a = "r[" + std::to_string(i) + "]", b = "r[" + std::to_string(i + scale) + "]";
      s += "  x = shuffle2(" + a + ", " + b + ", (uint" + n + ")(" + keep + "));\n";
      s += "  y = shuffle2(" + a + ", " + b + ", (uint" + n + ")(" + take + "));\n";
      s += "  " + a + " = x;\n  " + b + " = y;\n";
    }
  }
  return s + "}\n";
}

void write_transposed_tiles(CodeWriter& out, const TransposedTiles& t) {
  const std::string ws = std::to_string(t.width), &K = t.rows, &N = t.columns, &k0 = t.k0, &n0 = t.n0,
                    &r = t.registers;
  out.emit_open("for (long " + n0 + " = 0; " + n0 + " + " + ws + " <= " + N + "; " + n0 + " += " + ws + ")");
  out.emit_open("for (long " + k0 + " = 0; " + k0 + " + " + ws + " <= " + K + "; " + k0 + " += " + ws + ")");
  out.emit_line("float" + ws + " " + r + "[" + ws + "];");
  for (int i = 0; i < t.width; ++i)
    out.emit_line(r + "[" + std::to_string(i) + "] = " + t.vload + ws + "(0, " + t.pointer + " + " +
                  t.column_offset(i) + ");");
  out.emit_line("nt_transpose" + ws + "(" + r + ");");
  for (int i = 0; i < t.width; ++i)
    out.emit_line("vstore" + ws + "(" + r + "[" + std::to_string(i) + "], 0, " + t.array + " + (" + k0 +
                  " + " + std::to_string(i) + ") * " + N + " + " + n0 + ");");
  out.emit_close();
  out.emit_close();
  // The edges: past the last whole tile's columns of every row, and all columns of the rows past
  // the last whole tile's.
  out.emit_open("for (long " + t.ek + " = 0; " + t.ek + " < " + K + "; ++" + t.ek + ")");
  out.emit_open("for (long " + t.en + " = " + t.ek + " < " + K + " / " + ws + " * " + ws + " ? " + N + " / " +
                ws + " * " + ws + " : 0; " + t.en + " < " + N + "; ++" + t.en + ")");
  t.edge();
  out.emit_close();
  out.emit_close();
}

}  // namespace nt::codegen
