#include "lower/program_layout.h"

namespace nt::lower {

ProgramLayout::ProgramLayout(std::vector<Expr> outermost_shape) : shape_(std::move(outermost_shape)) {}

Expr ProgramLayout::program_index(size_t d) const {
  SymbolAttrs attrs;
  attrs.lower_bound = 0;
  return var("nt_pid_" + std::to_string(d), attrs);
}

namespace {

Expr flat_program_id() {
  SymbolAttrs attrs;
  attrs.lower_bound = 0;
  return var("nt_pid_flat", attrs);
}

}  // namespace

std::vector<Expr> ProgramLayout::program_indices(const std::vector<Expr>& shape) const {
  std::vector<Expr> indices(shape.size());
  if (shape.size() == shape_.size()) {  // the same shape: checked at launch
    for (size_t d = 0; d < shape.size(); ++d) indices[d] = program_index(d);
    return indices;
  }
  Expr rest = flat_program_id();
  for (size_t d = shape.size(); d-- > 0;) {
    indices[d] = d == 0 ? rest : mod(rest, shape[d]);
    rest = floordiv(rest, shape[d]);
  }
  return indices;
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

std::string ProgramLayout::work_group_macros() {
  return "#ifndef NT_WORK_ITEMS\n#define NT_WORK_ITEMS 1\n#endif\n"
         "#if NT_WORK_ITEMS > 1\n"
         "#define NT_PROGRAM ((long)get_group_id(0))\n#define NT_LANE ((long)get_local_id(0))\n"
         "#else\n"
         "#define NT_PROGRAM ((long)get_global_id(0))\n#define NT_LANE 0\n"
         "#endif\n";
}

std::string ProgramLayout::tile_macros() {
  // The least power of two at least x (x <= 2^31), as a constant expression: array sizes
  // (a work-item's slots) depend on it.
  std::string pow2ceil = "#define NT_POW2CEIL(x) (";
  for (int k = 0; k < 32; ++k) {
    std::string p = std::to_string(int64_t{1} << k) + "L";
    pow2ceil += "(x) <= " + p + " ? " + p + " : ";
  }
  pow2ceil += "4294967296L)\n";
  return "#define NT_MIN(a, b) ((a) < (b) ? (a) : (b))\n"
         "#define NT_MAX(a, b) ((a) > (b) ? (a) : (b))\n" +
         pow2ceil +
         "#define NT_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)\n"
         // Unrolled, a work-item's slots are registers on GPUs; PoCL's CPU work-groups
         // compile far slower unrolled and gain nothing.
         "#ifdef cl_nv_pragma_unroll\n#define NT_UNROLL _Pragma(\"unroll\")\n#else\n#define "
         "NT_UNROLL\n#endif\n";
}

std::string ProgramLayout::tile_layout(int id, const std::string& rows, const std::string& columns) {
  std::string n = std::to_string(id);
  auto def = [&](const std::string& name, const std::string& value) {
    return "#define NT_" + name + n + " (" + value + ")\n";
  };
  // Columns: as many as the row has, up to the work-group, but no fewer than 16 (a 64-byte
  // run of floats) while the rows could use the rest: a 64 x 64 block takes 16 x 8 work-items
  // of 4 x 8 elements each, a 1 x 4096 one 128 x 1 of 32 elements each.
  return def("ROWS", "(long)(" + rows + ")") + def("COLS", "(long)(" + columns + ")") +
         def("TX", "NT_MAX(1L, NT_MIN((long)NT_WORK_ITEMS, NT_MIN(NT_POW2CEIL(NT_COLS" + n +
                       "), NT_MAX(16L, (long)NT_WORK_ITEMS / NT_POW2CEIL(NT_ROWS" + n + ")))))") +
         def("TY", "(long)NT_WORK_ITEMS / NT_TX" + n) +
         def("R", "(NT_ROWS" + n + " + NT_TY" + n + " - 1) / NT_TY" + n) +
         def("C", "(NT_COLS" + n + " + NT_TX" + n + " - 1) / NT_TX" + n);
}

std::vector<std::string> ProgramLayout::prologue(const std::vector<std::string>& printed_shape,
                                                 bool work_group) const {
  std::vector<std::string> lines;
  lines.push_back(work_group ? "const long nt_pid_flat = NT_PROGRAM;"
                             : "const long nt_pid_flat = get_global_id(0);");
  lines.push_back("long nt_program = nt_pid_flat;");
  for (size_t k = shape_.size(); k-- > 0;) {
    std::string digit = "nt_pid_" + std::to_string(k);
    if (k == 0) {
      lines.push_back("const long " + digit + " = nt_program;");
    } else {
      lines.push_back("const long " + digit + " = nt_program % (" + printed_shape[k] + ");");
      lines.push_back("nt_program /= (" + printed_shape[k] + ");");
    }
  }
  return lines;
}

}  // namespace nt::lower
