#include "tensor/eval.h"

#include <optional>
#include <utility>

#include "support/errors.h"
#include "symbolic/batch_eval.h"
#include "symbolic/printer.h"

namespace nt {

namespace {

int64_t require_int(const Expr& e, const std::string& what) {
  if (e.is_int()) return e->int_value;
  std::vector<Expr> vars = collect_vars(e);
  if (vars.empty()) {
    // A constant that did not fold, such as `3 // 0`: evaluating it says why.
    int64_t value = 0;
    int64_t* outputs[] = {&value};
    BatchProgram({}, {e}).run(nullptr, 1, outputs);
    return value;
  }
  std::string names;
  for (const auto& v : vars) names += (names.empty() ? "" : ", ") + v->name;
  throw ValueError(what + " is " + to_python(e) + ", which is not known; give " + names +
                   " a value in `subs`");
}

}  // namespace

OffsetArray evaluate_offsets(const Tensor& arranged, const SymbolMap& substitutions) {
  TensorPtr tensor = arranged.substituted(substitutions);
  const Tensor& source = tensor->source_ref();

  OffsetArray result;
  std::vector<Expr> indices;
  for (const Tensor* level : std::as_const(*tensor).levels()) {
    for (size_t d = 0; d < level->ndim(); ++d) {
      int64_t size = require_int(level->shape()[d], "size " + std::to_string(d) + " of " + level->name());
      result.shape.push_back(size < 0 ? 0 : size);
      indices.push_back(level->indices()[d]);
    }
  }

  // Source strides: given ones, else C-contiguous over the source shape.
  std::vector<int64_t> strides(source.ndim());
  int64_t contiguous = 1;
  for (size_t d = source.ndim(); d-- > 0;) {
    auto given = substitutions.find(source.stride_symbol(d)->name);
    strides[d] =
        given != substitutions.end() ? require_int(given->second, "stride " + std::to_string(d)) : contiguous;
    contiguous *= require_int(source.shape()[d], "size " + std::to_string(d) + " of the source");
  }

  SourceAccess access = resolve_source_access(*tensor);
  Expr offset = 0;
  for (size_t d = 0; d < source.ndim(); ++d) {
    offset = add(offset, mul(access.coordinates[d], Expr(strides[d])));
  }
  std::optional<Expr> in_bounds;
  for (const auto& condition : access.conditions) {
    in_bounds = in_bounds ? logical_and(*in_bounds, condition) : condition;
  }
  BatchProgram program(indices, {offset, in_bounds.value_or(bool_const(true))});

  size_t total = 1;
  for (int64_t size : result.shape) {
    if (__builtin_mul_overflow(total, static_cast<size_t>(size), &total)) {
      throw ValueError("the evaluated tensor would have more elements than can be counted");
    }
  }
  result.offsets.resize(total);

  const size_t ndim = indices.size();
  std::vector<std::vector<int64_t>> columns(ndim, std::vector<int64_t>(BatchProgram::kMaxBatch));
  std::vector<const int64_t*> column_ptrs;
  for (auto& column : columns) column_ptrs.push_back(column.data());
  std::vector<int64_t> offsets(BatchProgram::kMaxBatch), masks(BatchProgram::kMaxBatch);
  int64_t* outputs[] = {offsets.data(), masks.data()};

  std::vector<int64_t> position(ndim, 0);  // multi-index of the next element
  for (size_t begin = 0; begin < total; begin += BatchProgram::kMaxBatch) {
    size_t n = std::min(BatchProgram::kMaxBatch, total - begin);
    for (size_t p = 0; p < n; ++p) {
      for (size_t k = 0; k < ndim; ++k) columns[k][p] = position[k];
      for (size_t k = ndim; k-- > 0;) {
        if (++position[k] < result.shape[k]) break;
        position[k] = 0;
      }
    }
    program.run(column_ptrs.data(), n, outputs);
    for (size_t p = 0; p < n; ++p) result.offsets[begin + p] = masks[p] ? offsets[p] : -1;
  }
  return result;
}

}  // namespace nt
