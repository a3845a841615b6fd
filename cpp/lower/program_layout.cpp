#include "lower/program_layout.h"

namespace nt::lower {

ProgramLayout::ProgramLayout(std::vector<Expr> outermost_shape) : shape_(std::move(outermost_shape)) {}

Expr ProgramLayout::program_index(size_t d) const {
  SymbolAttrs attrs;
  attrs.lower_bound = 0;
  return var("nt_pid_" + std::to_string(d), attrs);
}

Expr ProgramLayout::flat_program_id() {
  SymbolAttrs attrs;
  attrs.lower_bound = 0;
  return var("nt_pid_flat", attrs);
}

std::vector<Expr> ProgramLayout::program_indices(const std::vector<Expr>& shape) const {
  std::vector<Expr> indices(shape.size());
  if (shape.size() == shape_.size()) {  // the same shape: checked at launch
    for (size_t d = 0; d < shape.size(); ++d) indices[d] = program_index(d);
    return indices;
  }
  return own_program_indices(shape);
}

std::vector<Expr> ProgramLayout::own_program_indices(const std::vector<Expr>& shape) const {
  std::vector<Expr> indices(shape.size());
  Expr rest = flat_program_id();
  for (size_t d = shape.size(); d-- > 0;) {
    indices[d] = d == 0 ? rest : mod(rest, shape[d]);
    rest = floordiv(rest, shape[d]);
  }
  return indices;
}

std::vector<std::pair<std::string, Expr>> ProgramLayout::next_program() const {
  Expr next = add(flat_program_id(), Expr(1));
  std::vector<std::pair<std::string, Expr>> values{{"nt_pid_flat", next}};
  Expr rest = next;
  for (size_t d = shape_.size(); d-- > 0;) {
    values.emplace_back("nt_pid_" + std::to_string(d), d == 0 ? rest : mod(rest, shape_[d]));
    rest = floordiv(rest, shape_[d]);
  }
  return values;
}

void ProgramLayout::add_bounds(BoundsEnv& env) const {
  Expr count = Expr(1);
  for (const Expr& s : shape_) count = mul(count, s);
  env.set("nt_pid_flat", 0, std::nullopt);
  env.set_symbolic("nt_pid_flat", Expr(0), sub(count, 1));
  for (size_t d = 0; d < shape_.size(); ++d) {
    env.set("nt_pid_" + std::to_string(d), 0, std::nullopt);
    env.set_symbolic("nt_pid_" + std::to_string(d), Expr(0), sub(shape_[d], 1));
  }
}

std::string ProgramLayout::work_group_macros(std::string_view group_id, std::string_view local_id,
                                             std::string_view global_id) {
  return "#ifndef NT_WORK_ITEMS\n#define NT_WORK_ITEMS 1\n#endif\n"
         "#if NT_WORK_ITEMS > 1\n"
         "#define NT_PROGRAM ((nt_index)" +
         std::string(group_id) + ")\n#define NT_LANE ((nt_index)" + std::string(local_id) +
         ")\n"
         "#else\n"
         "#define NT_PROGRAM ((nt_index)" +
         std::string(global_id) +
         ")\n#define NT_LANE 0\n"
         "#endif\n";
}

std::string ProgramLayout::tile_macros(std::string_view barrier, std::string_view if_unrolls) {
  // The least power of two at least x (x <= 2^31), as a constant expression: array sizes
  // (a work-item's slots) depend on it.
  std::string pow2ceil = "#define NT_POW2CEIL(x) ((nt_index)(";
  for (int k = 0; k < 32; ++k) {
    std::string p = std::to_string(int64_t{1} << k) + "L";
    pow2ceil += "(x) <= " + p + " ? " + p + " : ";
  }
  pow2ceil += "4294967296L))\n";
  return "#define NT_MIN(a, b) ((a) < (b) ? (a) : (b))\n"
         "#define NT_MAX(a, b) ((a) > (b) ? (a) : (b))\n" +
         pow2ceil + "#define NT_BARRIER() " + std::string(barrier) +
         "\n"
         // Unrolled, a work-item's slots are registers on GPUs; PoCL's CPU work-groups
         // compile far slower unrolled and gain nothing.
         + std::string(if_unrolls) +
         "\n#define NT_UNROLL _Pragma(\"unroll\")\n#else\n#define NT_UNROLL\n#endif\n";
}

std::string ProgramLayout::tile_layout(int id, const std::string& rows, const std::string& columns, bool mma,
                                       bool warpgroups, bool row_warps, const RowFamily* family) {
  std::string n = std::to_string(id);
  auto name = [&](const std::string& macro) { return "NT_" + macro + n; };
  auto def = [&](const std::string& macro, const std::string& value) {
    return "#define " + name(macro) + " (" + value + ")\n";
  };
  // Columns: as many as the row has, up to the work-group, but no fewer than 16 (a 64-byte
  // run of floats) while the rows could use the rest: a 64 x 64 block takes 16 x 8 work-items
  // of 4 x 8 elements each, a 1 x 4096 one 128 x 1 of 32 elements each.
  const std::string cyclic_tx = "NT_MAX(1, NT_MIN((nt_index)NT_WORK_ITEMS, NT_MIN(NT_POW2CEIL(NT_COLS" + n +
                                "), NT_MAX(16, (nt_index)NT_WORK_ITEMS / NT_POW2CEIL(NT_ROWS" + n + ")))))";
  std::string out = def("ROWS", "(nt_index)(" + rows + ")") + def("COLS", "(nt_index)(" + columns + ")");
  // NT_FULL: every work-item's every (row, column) lies in the block, so that nests need not test
  // them (a constant the compiler folds): the work-items fill whole rows of NT_TX, and the rows
  // and columns are multiples of NT_TY and NT_TX (in the mma layout, of its warps' tiles).
  const std::string cyclic_full = "NT_WORK_ITEMS % NT_TX" + n + " == 0 && NT_ROWS" + n + " % NT_TY" + n +
                                  " == 0 && NT_COLS" + n + " % NT_TX" + n + " == 0";
  if (!mma) {
    return out + def("TX", cyclic_tx) + def("TY", "(nt_index)NT_WORK_ITEMS / NT_TX" + n) +
           def("FULL", cyclic_full) + def("R", "(NT_ROWS" + n + " + NT_TY" + n + " - 1) / NT_TY" + n) +
           def("C", "(NT_COLS" + n + " + NT_TX" + n + " - 1) / NT_TX" + n) + "#define " + name("VLANE") +
           " NT_LANE\n" + "#define " + name("ROW") + "(ty, r) ((ty) + NT_TY" + n + " * (r))\n" + "#define " +
           name("COL") + "(tx, c) ((tx) + NT_TX" + n + " * (c))\n";
  }
  // The warps' grid: NT_WM the largest power of two whose 16-row tiles divide the block and that
  // leaves the warps' tiles at least as tall as wide (rows / NT_WM >= columns / NT_WN): a's
  // fragments are read two floats at a time, b's one, so taller tiles load fewer per step of k.
  const std::string warps = "((nt_index)NT_WORK_ITEMS / 32)";
  std::string wm = "1";
  for (int c = 2; c <= 32; c *= 2) {
    std::string k = std::to_string(c);
    wm = "(" + k + " <= " + warps + " && " + k + " * " + k + " * NT_COLS" + n + " <= " + warps +
         " * NT_ROWS" + n + " && NT_ROWS" + n + " % (16 * " + k + ") == 0) ? " + k + " : " + wm;
  }
  if (row_warps) wm = "NT_HELD_A && NT_ROWS" + n + " % (16 * " + warps + ") == 0 ? " + warps + " : " + wm;
  // A family's members take its head's grid of warps and columns of work-items, so that their rows lie
  // alike; the head is an mma layout only where every member's columns fit its warps' tiles.
  const bool member = family && family->head != id;
  const std::string head = family ? std::to_string(family->head) : "";
  if (member) wm = "NT_WM" + head;
  std::string mma_test = "NT_WORK_ITEMS >= 32 && NT_WORK_ITEMS % 32 == 0 && NT_ROWS" + n + " % (16 * NT_WM" +
                         n + ") == 0 && NT_COLS" + n + " % (8 * NT_WN" + n + ") == 0";
  if (member) mma_test = "NT_MMA" + head;
  for (const std::string& other : family ? family->other_columns : std::vector<std::string>{})
    mma_test += " && (" + other + ") % (8 * NT_WN" + n + ") == 0";
  std::string wgmma;
  if (warpgroups) {
    wgmma = "#ifdef NT_WGMMA\n" +
            def("WGMMA", "NT_WORK_ITEMS % 128 == 0 && NT_ROWS" + n + " % (16 * " + warps +
                             ") == 0 && NT_COLS" + n + " % 16 == 0") +
            "#else\n" + def("WGMMA", "0") + "#endif\n";
    wm = "NT_WGMMA" + n + " ? " + warps + " : " + wm;
  }
  out += "#ifdef NT_MMA_LAYOUT\n" + wgmma + def("WM", wm) +
         def("WN", "NT_MAX(1, " + warps + " / NT_WM" + n + ")") + def("MMA", mma_test) + "#else\n" +
         (warpgroups ? def("WGMMA", "0") : "") + def("WM", "1") + def("WN", "1") + def("MMA", "0") +
         "#endif\n";
  const std::string on = "NT_MMA" + n + " ? ";
  out += def("TX", member ? "NT_TX" + head : on + "4 * NT_WN" + n + " : " + cyclic_tx) +
         def("TY", "(nt_index)NT_WORK_ITEMS / NT_TX" + n) +
         def("FULL", on + "NT_WORK_ITEMS / 32 == NT_WM" + n + " * NT_WN" + n + " : " + cyclic_full) +
         def("R", "(NT_ROWS" + n + " + NT_TY" + n + " - 1) / NT_TY" + n) +
         def("C", "(NT_COLS" + n + " + NT_TX" + n + " - 1) / NT_TX" + n);
  // Lane l of warp w is (ty, tx) = (8 (w / NT_WN) + l / 4, 4 (w % NT_WN) + l % 4).
  out += def("VLANE", on + "(8 * (NT_LANE / 32 / NT_WN" + n + ") + NT_LANE % 32 / 4) * NT_TX" + n +
                          " + 4 * (NT_LANE / 32 % NT_WN" + n + ") + NT_LANE % 4 : NT_LANE");
  out += "#define " + name("ROW") + "(ty, r) (" + on + "16 * ((ty) / 8 + NT_WM" + n +
         " * ((r) / 2)) + 8 * ((r) % 2) + (ty) % 8 : (ty) + NT_TY" + n + " * (r))\n";
  out += "#define " + name("COL") + "(tx, c) (" + on + "8 * ((tx) / 4 + NT_WN" + n +
         " * ((c) / 2)) + 2 * ((tx) % 4) + (c) % 2 : (tx) + NT_TX" + n + " * (c))\n";
  return out;
}

std::string ProgramLayout::slice_layout(int id, int parent) {
  const std::string n = std::to_string(id), p = std::to_string(parent);
  auto def = [&](const std::string& macro, const std::string& value) {
    return "#define NT_" + macro + n + " (" + value + ")\n";
  };
  return def("ROWS", "(nt_index)1") + def("COLS", "NT_ROWS" + p) + def("TX", "NT_TX" + p) +
         def("TY", "NT_TY" + p) +
         def("FULL", "NT_MMA" + p + " ? NT_WORK_ITEMS / 32 == NT_WM" + p + " * NT_WN" + p +
                         " : NT_WORK_ITEMS % NT_TX" + p + " == 0 && NT_ROWS" + p + " % NT_TY" + p + " == 0") +
         def("R", "1") + def("C", "NT_R" + p) + "#define NT_VLANE" + n + " NT_VLANE" + p + "\n" +
         "#define NT_ROW" + n + "(ty, r) 0\n" + "#define NT_COL" + n + "(tx, c) NT_ROW" + p + "(NT_VLANE" +
         p + " / NT_TX" + p + ", c)\n";
}

std::vector<std::string> ProgramLayout::prologue(const std::vector<std::string>& printed_shape,
                                                 bool work_group, std::string_view global_id) const {
  std::vector<std::string> lines;
  lines.push_back(work_group ? "const nt_index nt_pid_flat = NT_PROGRAM;"
                             : "const nt_index nt_pid_flat = " + std::string(global_id) + ";");
  lines.push_back("nt_index nt_program = nt_pid_flat;");
  for (size_t k = shape_.size(); k-- > 0;) {
    std::string digit = "nt_pid_" + std::to_string(k);
    if (k == 0) {
      lines.push_back("const nt_index " + digit + " = nt_program;");
    } else {
      lines.push_back("const nt_index " + digit + " = nt_program % (" + printed_shape[k] + ");");
      lines.push_back("nt_program /= (" + printed_shape[k] + ");");
    }
  }
  return lines;
}

}  // namespace nt::lower
