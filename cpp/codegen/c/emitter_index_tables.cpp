// Where the emitter puts index tables (index_tables.h, the component that makes them): which
// nests and loop statements get them, and the tables' text written before them.
//
// In: a nest or loop statement being emitted. Out: its text, with the tables that the Exprs it
// printed (Emitter::c(), through IndexTables::tabulated()) asked for written before it.
//
// Mode::WorkItem: private tables before every nest of two or more dimensions (loops()), each
// filled by its work-item. Mode::WorkGroup: the element-by-element copies of a staged tensor-core
// operand (stage_block(): an implicit GEMM's gathered rows and its filter's flattened (C R S)
// rows), whose work-items each copy elements of many rows. Their tables are in local memory,
// filled by the work-group together, between barriers (with_group_tables()): the output
// positions' once per program, before the k loop; the reduction step's once per k step, at the
// start of the step's copies (stage_ahead() makes those a scope of their own), shared by both
// operands.
#include <functional>
#include <sstream>

#include "codegen/c/emitter.h"

namespace nt::codegen {

// An exception leaves these scopes as they are: the emitter that threw is not used again
// (generate_opencl() drops it).
void Emitter::written_after(const std::function<void()>& emit, const std::function<std::string()>& before) {
  std::ostringstream outer;
  outer.swap(body_);
  emit();
  std::string text = body_.str();
  body_.swap(outer);
  body_ << before() << text;
}

void Emitter::with_index_tables(const std::vector<Expr>& shape, const std::function<void()>& emit_nest) {
  std::vector<std::string> extents;
  for (const Expr& s : shape) extents.push_back(is_compile_time(s) ? c(simplify(s, env_)) : "");
  tables_.begin_nest(shape, std::move(extents), indent_);
  written_after(emit_nest, [&] { return tables_.end_nest(); });
}

void Emitter::with_loop_scope(const std::function<void()>& emit_loop) {
  tables_.begin_loop(indent_);
  written_after(emit_loop, [&] { return tables_.end_loop(); });
}

void Emitter::with_group_tables(const std::vector<Expr>& shape, const std::vector<std::string>& index,
                                const std::vector<IndexTables::OnceRead>& fixed,
                                const std::function<void()>& emit_nest) {
  if (!group_ || serial_ || tables_.in_nest()) {
    emit_nest();
    return;
  }
  with_index_tables(shape, [&] {  // its index variables declared already
    tables_.set_index(index, fixed);
    emit_nest();
  });
}

void Emitter::declare_shared_table(const std::string& name, const std::string& count, Expr bytes) {
  declare_local(kIndexType, name, count, std::move(bytes));
}

}  // namespace nt::codegen
