// What the kernel emitter (kernel_source.cpp) offers the code generators of
// the Triton block operations (block_ops.h): writing lines, loop nests with
// their bounds known to the simplifier, the C of a value's element, private
// arrays, and the names of materialised values.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/c/code_writer.h"
#include "codegen/dialect.h"
#include "ir/ir.h"

namespace nt::codegen {

// Writing lines and blocks: CodeWriter's.
class EmitContext : public CodeWriter {
 public:
  virtual std::string fresh_name(const std::string& prefix) = 0;
  // An index expression (over loop variables and compile-time symbols), simplified, as C.
  virtual std::string index_c(const Expr& e) = 0;
  // Element `index` of `v` as a C expression in v's compute type.
  virtual std::string element(const ir::Value& v, const std::vector<Expr>& index) = 0;
  // Loops over `shape` (bounds registered); `body` gets the element index.
  virtual void each_index(const std::vector<Expr>& shape,
                          const std::function<void(const std::vector<Expr>&)>& body) = 0;
  // `v` as a private array of `dtype`'s compute type (itself if it already is one).
  virtual std::string array_of(const ir::Value& v, DType dtype, const std::string& what) = 0;
  // Declares the private array `name` of `shape` (sizes known at build time).
  virtual void declare_array(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                             const std::string& what) = 0;
  // Declares the private array `name` that only the code emitted next, in this scope, uses
  // (a block operation's scratch rows): private to the work-item running it.
  virtual void declare_scratch(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                               const std::string& what) = 0;
  // Declares the scalar `name` (a reduction's or an atomic's result), which a block
  // operation may set on one work-item for all of a work-group's.
  virtual void declare_scalar(const std::string& name, DType dtype) = 0;
  // The C element count of `shape`.
  virtual std::string count_c(const std::vector<Expr>& shape) = 0;
  // The row-major flat index of `index` in `shape`, as C.
  virtual std::string flat_c(const std::vector<Expr>& shape, const std::vector<Expr>& index) = 0;
  // Materialised values (their private arrays or scalars).
  virtual void materialize(const ir::Value& v) = 0;
  virtual std::string materialized_name(const ir::Value& v) = 0;  // "" if none
  virtual void set_materialized(const ir::Value& v, const std::string& name) = 0;
  // The C names combine-function arguments stand for while a combine is emitted.
  virtual void set_combine_args(const std::vector<std::string>& names) = 0;
  virtual std::string combine_arg(int index) = 0;
  // The array (or scalar) Let `id` names.
  virtual void bind_let(int id, const std::string& name) = 0;
  // Whether the kernel reads Let `id` anywhere (an atomic's old values may go unused).
  virtual bool let_used(int id) = 0;
  virtual const ir::Param& param(int index) = 0;
  // The number of program-id digits (`nt_pid_<d>` for d below it).
  virtual int program_dims() = 0;
  // How the target spells qualifiers, ids and barriers.
  virtual const Dialect& dialect() = 0;
};

}  // namespace nt::codegen
