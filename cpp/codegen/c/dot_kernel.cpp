#include "codegen/c/dot_kernel.h"

#include "codegen/c/c_types.h"

namespace nt::codegen {

namespace {

bool is_float_type(const std::string& type) { return type == "float" || type == "double"; }

// One micro-tile: `rows` rows from row `i` by `vectors` vectors of `lanes`
// columns from column `j` (vectors == 0: one scalar column).
void emit_tile(EmitContext& ctx, const DotArrays& d, const std::string& i, const std::string& j, int rows,
               int vectors, int lanes) {
  const bool scalar = vectors == 0;
  const int columns = scalar ? 1 : vectors;
  const std::string w = std::to_string(lanes);
  const std::string vt = scalar ? d.type : d.type + w;
  auto column = [&](int v) { return j + (v ? " + " + std::to_string(v * lanes) : ""); };
  auto load = [&](const std::string& base, const std::string& offset) {
    return scalar ? base + "[" + offset + "]" : "vload" + w + "(0, " + base + " + " + offset + ")";
  };
  std::string acc = ctx.fresh_name("nt_c");  // accumulators nt_c<n>_<row>_<vector>
  auto c = [&](int r, int v) { return acc + "_" + std::to_string(r) + "_" + std::to_string(v); };
  std::string rp = ctx.fresh_name("nt_ar");  // a's rows: nt_ar<n>_<row>
  for (int r = 0; r < rows; ++r) {
    std::string row = r ? "(" + i + " + " + std::to_string(r) + ")" : i;
    ctx.emit_line((d.a_space.empty() ? std::string(ctx.dialect().private_pointer) : d.a_space + " ") +
                  "const " + d.type + "* " + rp + "_" + std::to_string(r) + " = " + d.a + " + " + row +
                  (d.a_k_major ? "" : " * " + d.K) + ";");
    for (int v = 0; v < columns; ++v) {
      std::string init =
          d.accumulate ? load(d.result, row + " * " + d.N + " + " + column(v)) : "(" + vt + ")(0)";
      ctx.emit_line(vt + " " + c(r, v) + " = " + init + ";");
    }
  }
  std::string k = ctx.fresh_name("nt_k");
  // Unrolled by 4: the steps are independent but for the accumulators, which
  // 2 * rows chains keep busy.
  ctx.emit_line("#pragma unroll 4");
  ctx.emit_open("for (long " + k + " = 0; " + k + " < " + d.K + "; ++" + k + ")");
  std::string bv = ctx.fresh_name("nt_b");
  for (int v = 0; v < columns; ++v) {
    ctx.emit_line("const " + vt + " " + bv + "_" + std::to_string(v) + " = " +
                  load(d.b, k + " * " + d.N + " + " + column(v)) + ";");
  }
  for (int r = 0; r < rows; ++r) {
    std::string a = ctx.fresh_name("nt_a");
    ctx.emit_line("const " + vt + " " + a + " = (" + vt + ")(" + rp + "_" + std::to_string(r) + "[" + k +
                  (d.a_k_major ? " * " + d.M : "") + "]);");
    for (int v = 0; v < columns; ++v) {
      std::string b = bv + "_" + std::to_string(v);
      std::string update = is_float_type(d.type) ? "fma(" + a + ", " + b + ", " + c(r, v) + ")"
                                                 : c(r, v) + " + " + a + " * " + b;
      ctx.emit_line(c(r, v) + " = " + update + ";");
    }
  }
  ctx.emit_close();
  for (int r = 0; r < rows; ++r) {
    std::string row = r ? "(" + i + " + " + std::to_string(r) + ")" : i;
    for (int v = 0; v < columns; ++v) {
      std::string offset = row + " * " + d.N + " + " + column(v);
      ctx.emit_line(scalar ? d.result + "[" + offset + "] = " + c(r, v) + ";"
                           : "vstore" + w + "(" + c(r, v) + ", 0, " + d.result + " + " + offset + ");");
    }
  }
}

// `rows` rows from row `i`, all columns: two vectors at a time, then one, then half a vector
// (a block of 8 columns in 16-lane registers would otherwise be 8 scalar columns), then scalars.
void emit_rows(EmitContext& ctx, const DotArrays& d, const std::string& i, int rows, int lanes) {
  std::string j = ctx.fresh_name("nt_dj");
  std::string w = std::to_string(lanes), w2 = std::to_string(2 * lanes);
  ctx.emit_line("long " + j + " = 0;");
  ctx.emit_open("for (; " + j + " + " + w2 + " <= " + d.N + "; " + j + " += " + w2 + ")");
  emit_tile(ctx, d, i, j, rows, 2, lanes);
  ctx.emit_close();
  for (int width : {lanes, lanes / 2}) {
    if (width < 4) break;
    std::string n = std::to_string(width);
    ctx.emit_open("if (" + j + " + " + n + " <= " + d.N + ")");
    emit_tile(ctx, d, i, j, rows, 1, width);
    ctx.emit_line(j + " += " + n + ";");
    ctx.emit_close();
  }
  ctx.emit_open("for (; " + j + " < " + d.N + "; ++" + j + ")");
  emit_tile(ctx, d, i, j, rows, 0, lanes);
  ctx.emit_close();
}

// The micro-kernel for vectors of `vector_bytes` bytes.
void emit_dot_variant(EmitContext& ctx, const DotArrays& d, int vector_bytes) {
  const int lanes = dot_lanes(d.type, vector_bytes);
  const int rows = dot_rows(vector_bytes);
  std::string i = ctx.fresh_name("nt_di");
  std::string mr = std::to_string(rows);
  ctx.emit_open("");
  ctx.emit_line("// " + d.result + (d.accumulate ? " += " : " = ") + d.a + " @ " + d.b + ": micro-tiles of " +
                mr + " rows by 2 x " + std::to_string(lanes) + " columns");
  ctx.emit_line("long " + i + " = 0;");
  ctx.emit_open("for (; " + i + " + " + mr + " <= " + d.M + "; " + i + " += " + mr + ")");
  emit_rows(ctx, d, i, rows, lanes);
  ctx.emit_close();
  if (rows > 4) {  // a 4-row tile before single rows: 64 % 6 == 4
    ctx.emit_open("if (" + i + " + 4 <= " + d.M + ")");
    emit_rows(ctx, d, i, 4, lanes);
    ctx.emit_line(i + " += 4;");
    ctx.emit_close();
  }
  ctx.emit_open("for (; " + i + " < " + d.M + "; ++" + i + ")");
  emit_rows(ctx, d, i, 1, lanes);
  ctx.emit_close();
  ctx.emit_close();
}

}  // namespace

int dot_lanes(const std::string& type, int vector_bytes) {
  const bool wide = type == "double" || type == "long" || type == "ulong";
  return vector_bytes / (wide ? 8 : 4);
}

int dot_rows(int vector_bytes) { return vector_bytes >= 64 ? 8 : 6; }

void emit_dot_kernel(EmitContext& ctx, const DotArrays& d) {
  // One variant per register file; the build option NT_VECTOR_BYTES (the
  // device's preferred float vector, in bytes) picks one.
  ctx.emit_line(kIfWideVectors);
  emit_dot_variant(ctx, d, 64);
  ctx.emit_line("#else");
  emit_dot_variant(ctx, d, 32);
  ctx.emit_line("#endif");
}

}  // namespace nt::codegen
