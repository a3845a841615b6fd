// Prefetching the next program's blocks (Mode::WorkItem). A pass over a block that an earlier
// pass of the program read works from the cache (softmax's exp pass, a norm's scaling pass) while
// the memory is idle: a non-temporal read prefetch of the next program's elements, a hint that
// cannot fault, keeps it busy. A burst of prefetches before the pass measured slower (it evicts
// what the pass reads; docs/performance.md).
//
// In: a nest whose body re-reads blocks of parameters an earlier nest of the program read
// (reread_loads()), or whose body folds reductions by lane (write_array(), nest()'s `strips`),
// its innermost loop unit-stride and hinted 16 lanes wide. Out: that loop as strips of 16
// elements (the prefetches only where there are loads to prefetch),
//
//   for (long eo = 0; eo < n; eo += 16) {
//     if (nt_next_exists) NT_PREFETCH(&nt_p0[<offset of element eo, next program>]);
//     #pragma clang loop vectorize_width(16)
//     for (long e = eo; e < min(eo + 16L, (long)(n)); ++e) <body>
//   }
//
// and, once per kernel after the prologue, the next program's symbols (nt_next_pid_flat,
// nt_next_pid_<d>, nt_next_exists), so the strips divide nothing.
//
// Streamed stores: a store's (float32, int32 or uint32) unmasked, hinted innermost loop, where its target
// spans 16 MiB or more and the row starts at a 64-byte boundary (stream_test(), a run-time
// test), runs as strips whose elements go to a private buffer of 16 and from there to memory
// with one non-temporal vector store (the row's last strip, if shorter, element by element):
// written around the caches, a line costs no read for ownership. Elsewhere the loop as before.
// No fence follows them: the launch's completion synchronises through locked instructions,
// which drain x86's write-combining buffers, and a kernel's own later reads see its stores.
#include <string>
#include <vector>

#include "codegen/c/emitter.h"
#include "codegen/c/strips.h"

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
    next_program_lines_.push_back("const int nt_next_exists = nt_next_pid_flat < (long)" +
                                  std::string(d_.global_size) + ";");
  }
  // Locality 2 (x86: prefetcht1) asks for the line in L2. Intel's non-temporal hint (locality 0,
  // prefetchnta) fills L1 only: with the block being read and the private arrays there, the
  // line was evicted before its program read it and fetched twice (softmax 13.7 ms against
  // 7.2 with locality 2 on a Xeon; performance.md).
  line_("#if " + test);
  open("if (nt_next_exists)");
  for (const Value& load : loads) {
    Expr offset = substitute(access_of(load).offset_at(index), next_program_);
    line_("NT_PREFETCH(&nt_p" + std::to_string(load->param) + "[" + c(simplify(offset, env_)) + "]);");
  }
  close();
  line_("#endif");
}

void Emitter::strip_mined_loop(const std::vector<Expr>& shape,
                               const std::function<void(const std::vector<Expr>&)>& body, size_t d,
                               std::vector<Expr> index, bool plain, const std::vector<Value>& loads,
                               const std::string& test, bool stream) {
  const std::string extent = c(simplify(shape[d], env_));
  Expr strip = index_variable("eo", shape[d]);
  Strips strips;  // strips.h
  strips.strip = strip->name;
  strips.index = index.back()->name;
  strips.extent = extent;
  strips.before = [&] {
    if (!loads.empty()) {
      std::vector<Expr> first = index;
      first.back() = strip;
      emit_prefetches(loads, first, test);
    }
    if (stream) {
      stream_buffer_ = fresh("nt_sbuf");
      line_(strips.type + " " + stream_buffer_ + "[16];");
    }
  };
  strips.hint = [&] { emit_vector_hint(test, /*wide=*/false); };
  strips.body = [&] {
    lane_of_last_ = "(" + strips.index + " - " + strip->name + ")";  // the strip starts at a multiple of 16
    loops(shape, body, d + 1, index, plain);
  };
  Expr lane;
  if (stream) {
    strips.streamed = true;
    strips.type = compute_type(k_.params[stream_store_->param].dtype);
    strips.buffer = [&] { return stream_buffer_; };
    strips.global_pointer = d_.global_pointer;
    strips.element_at = [&](const std::string& at) {
      std::vector<Expr> e = index;
      e.back() = at.empty() ? strip : add(strip, lane);
      return "&nt_p" + std::to_string(stream_store_->param) + "[" +
             c(simplify(stream_store_->access->offset_at(e), env_)) + "]";
    };
    strips.lane = [&] {
      lane = index_variable("nt_l", Expr(16));
      return lane->name;
    };
  }
  write_strips(*this, strips);
  stream_buffer_.clear();
}

std::string Emitter::stream_test(const std::vector<Expr>& index) {
  // Streams are a CPU's (one work-item a program): none where the target has no such form.
  if (!d_.work_item_form || !stream_store_ || !fast_ || group_ || !stream_store_->access->per_element.empty())
    return "";
  const int param = stream_store_->param;
  DType dt = k_.params[param].dtype;
  if (dt != DType::float32 && dt != DType::int32 && dt != DType::uint32) return "";
  std::vector<Expr> row = index;
  row.back() = Expr(0);
  const std::string ptr = "nt_p" + std::to_string(param);
  // 16 MiB: more than a core's share of the caches, read again from memory whoever reads it.
  return ptr + "_extent >= (4L << 20) && ((ulong)&" + ptr + "[" +
         c(simplify(stream_store_->access->offset_at(row), env_)) + "] & 63) == 0";
}

}  // namespace nt::codegen
