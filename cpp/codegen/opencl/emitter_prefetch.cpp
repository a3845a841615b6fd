// Prefetching the next program's blocks (Mode::WorkItem): see emitter.h.
//
// In: a nest whose body re-reads blocks of parameters an earlier nest of the program read
// (reread_loads()), or whose body folds reductions by lane (write_array(), nest()'s `strips`),
// its innermost loop unit-stride and hinted 16 lanes wide. Out: that loop as strips of 16
// elements (the prefetches only where there are loads to prefetch),
//
//   for (long eo = 0; eo < n; eo += 16) {
//     if (nt_next_exists) __builtin_prefetch(&nt_p0[<offset of element eo, next program>], 0, 2);
//     #pragma clang loop vectorize_width(16)
//     for (long e = eo; e < min(eo + 16L, (long)(n)); ++e) <body>
//   }
//
// and, once per kernel after the prologue, the next program's symbols (nt_next_pid_flat,
// nt_next_pid_<d>, nt_next_exists), so the strips divide nothing.
#include <string>
#include <vector>

#include "codegen/opencl/emitter.h"

namespace nt::codegen {

using namespace nt::ir;

std::vector<Value> Emitter::reread_loads(const std::vector<Value>& trees, const std::set<int>& read_before) {
  std::vector<Value> loads;
  if (group_ || distribute_) return loads;
  std::set<int> seen;
  for (const Value& t : trees) {
    for_each_load(t, [&](const Value& load) {
      // Read at the tree's own element (not through a broadcast or an expanded dimension), so
      // the nest's index is the load's.
      if (load->type.shape.size() != t->type.shape.size()) return;
      for (size_t d = 0; d < t->type.shape.size(); ++d) {
        if (c(simplify(load->type.shape[d], env_)) != c(simplify(t->type.shape[d], env_))) return;
      }
      if (!read_before.count(load->param) || !seen.insert(load->param).second) return;
      if (access_of(load).never || held_.count(load_key(load))) return;
      loads.push_back(load);
    });
  }
  return loads;
}

void Emitter::emit_prefetches(const std::vector<Value>& loads, const std::vector<Expr>& index,
                              const std::string& test) {
  if (next_program_.empty()) {
    SymbolAttrs attrs;
    attrs.lower_bound = 0;
    for (const auto& [symbol, value] : layout_.next_program()) {
      std::string name = "nt_next_" + symbol.substr(3);  // nt_pid_1 -> nt_next_pid_1
      next_program_lines_.push_back("const long " + name + " = " + c(simplify(value, env_)) + ";");
      env_.set(name, 0, std::nullopt);
      next_program_.emplace(symbol, var(name, attrs));
    }
    next_program_lines_.push_back("const int nt_next_exists = nt_next_pid_flat < (long)get_global_size(0);");
  }
  // Locality 2 (x86: prefetcht1) asks for the line in L2. Intel's non-temporal hint (locality 0,
  // prefetchnta) fills L1 only: with the block being read and the private arrays there, the
  // line was evicted before its program read it and fetched twice (softmax 13.7 ms against
  // 7.2 with locality 2 on a Xeon; performance.md).
  line_("#if " + test);
  open("if (nt_next_exists)");
  for (const Value& load : loads) {
    Expr offset = substitute(access_of(load).offset_at(index), next_program_);
    line_("__builtin_prefetch(&nt_p" + std::to_string(load->param) + "[" + c(simplify(offset, env_)) +
          "], 0, 2);");
  }
  close();
  line_("#endif");
}

void Emitter::strip_mined_loop(const std::vector<Expr>& shape,
                               const std::function<void(const std::vector<Expr>&)>& body, size_t d,
                               std::vector<Expr> index, bool plain, const std::vector<Value>& loads,
                               const std::string& test) {
  const std::string v = index.back()->name;
  const std::string extent = c(simplify(shape[d], env_));
  Expr strip = index_variable("eo", shape[d]);
  open("for (long " + strip->name + " = 0; " + strip->name + " < " + extent + "; " + strip->name + " += 16)");
  if (!loads.empty()) {
    std::vector<Expr> first = index;
    first.back() = strip;
    emit_prefetches(loads, first, test);
  }
  emit_vector_hint(test, /*wide=*/false);
  open("for (long " + v + " = " + strip->name + "; " + v + " < min(" + strip->name + " + 16L, (long)(" +
       extent + ")); ++" + v + ")");
  lane_of_last_ = "(" + v + " - " + strip->name + ")";  // the strip starts at a multiple of 16
  loops(shape, body, d + 1, index, plain);
  close();
  close();
}

}  // namespace nt::codegen
