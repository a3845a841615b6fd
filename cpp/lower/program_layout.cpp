#include "lower/program_layout.h"

namespace nt::lower {

ProgramLayout::ProgramLayout(std::vector<Expr> outermost_shape) : shape_(std::move(outermost_shape)) {}

Expr ProgramLayout::program_index(size_t d) const {
  SymbolAttrs attrs;
  attrs.lower_bound = 0;
  return var("nt_pid_" + std::to_string(d), attrs);
}

void ProgramLayout::add_bounds(BoundsEnv& env) const {
  for (size_t d = 0; d < shape_.size(); ++d) {
    env.set("nt_pid_" + std::to_string(d), 0, std::nullopt);
    env.set_symbolic("nt_pid_" + std::to_string(d), Expr(0), sub(shape_[d], 1));
  }
}

std::vector<std::string> ProgramLayout::prologue(const std::vector<std::string>& printed_shape) const {
  std::vector<std::string> lines;
  lines.push_back("long nt_program = get_global_id(0);");
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
