// Building kernel IR with types inferred.
//
// In: what the frontend traces (operations on blocks, statements in program
// order). Out: well-typed Values and a Kernel. Binary operations promote
// dtypes (a Python number takes its partner's dtype; float beats int; the
// wider type wins; float16 with bfloat16 is float32) and broadcast shapes by
// numpy rules, inserting ExpandDims/Broadcast so that every operand of a
// Binary/Where has the result's shape. Errors (shapes that do not broadcast,
// a dot of mismatched blocks, ...) throw ValueError/TypeError with a message
// for the user.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace nt::ir {

// Values that need no kernel context.
Value constant(const Expr& value);                     // weak int/float/bool, or an integer expression
Value typed_constant(const Expr& value, DType dtype);  // a scalar of `dtype`
Value loop_var(const std::string& name);
Value arange(const Expr& start, const Expr& end);
Value full(const std::vector<Expr>& shape, const Value& scalar, DType dtype);
Value unary(UnaryFn fn, const Value& x);
Value binary(BinaryFn fn, const Value& a, const Value& b);
Value where(const Value& condition, const Value& a, const Value& b);
Value cast(const Value& x, DType dtype);
Value expand_dims(const Value& x, int axis);
Value broadcast_to(const Value& x, const std::vector<Expr>& shape);
Value trans(const Value& x);
Value reduce(ReduceFn fn, const Value& x, std::optional<int> axis, bool keep_dims);
// `precision` counts for float32 operands only (others keep DotPrecision::Ieee).
Value dot(const Value& a, const Value& b, DotPrecision precision = DotPrecision::Ieee);
Value fma(const Value& a, const Value& b, const Value& c);
// Counter-based random numbers (Philox4x32-10): the same seed and offsets give
// the same float32 numbers everywhere.
Value random(const Value& seed, const Value& offsets, bool normal);

// The dtype two operands compute in.
DType promote(const Type& a, const Type& b);
// The shape two shapes broadcast to (numpy rules), or ValueError.
std::vector<Expr> broadcast_shapes(const std::vector<Expr>& a, const std::vector<Expr>& b);
bool same_size(const Expr& a, const Expr& b);
std::string shape_string(const std::vector<Expr>& shape);

class Builder {
 public:
  explicit Builder(std::string kernel_name);
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // Parameters, in the application's order.
  int add_param(Param param);
  const Param& param(int index) const { return kernel_.params.at(index); }

  // A parameter's block at middle-level `indices`: integer scalars, or one-element blocks (their
  // one value: a block of `indices.tile((1,))`). store/load_at/store_at take them alike.
  Value load(int param, const std::vector<Value>& indices);
  // The current program's index along outermost dimension `axis`, and the
  // number of programs along it.
  Value program_id(int axis) const;
  // The source coordinates along source dim `dim` (nullopt: the flat
  // offsets, over the source's strides) of a Load's block elements.
  Value offsets(const Value& load, std::optional<int> dim) const;
  Value num_programs(int axis) const;
  Value scalar_param(int param);

  // Raw pointers (`p.source.data_ptr()` plus element offsets). Accesses are
  // masked by `mask` and, always, by the extent of the pointed-to tensor.
  Value pointer_base(int param) const;
  Value load_pointer(const Value& pointers, const Value& mask, const Value& other) const;
  void store_pointer(const Value& pointers, const Value& value, const Value& mask, bool atomic_add);

  // Statements, appended to the innermost open block.
  Value let(const Value& value);            // returns the LetRef
  int declare_local(const Value& initial);  // a mutable local of the value's type
  Value local_ref(int id) const;
  void assign(int id, const Value& value);  // cast/broadcast to the local's type
  void store(int param, const std::vector<Value>& indices, const Value& value);
  // `p[positions]` / `p[positions] = value` with one integer position (a
  // scalar or a block) per dim of the block, after the middle-level indices:
  // gather and scatter of the block's elements, as upstream's pointer blocks.
  Value load_at(int param, const std::vector<Value>& middle, const std::vector<Value>& positions);
  void store_at(int param, const std::vector<Value>& middle, const std::vector<Value>& positions,
                const Value& value);
  void begin_for(const std::string& var, const Value& start, const Value& stop, const Value& step);
  void end_for();
  void begin_if(const Value& condition);
  void begin_else();
  void end_if();

  // Statements of the Triton language beyond stores (builder_ext.cpp).
  // Atomic read-modify-write through pointers (masked, kept inside the
  // tensor); returns the old values (0 where masked), a LetRef.
  Value atomic(AtomicFn fn, const Value& pointers, const Value& value, const Value& mask,
               const Value& compare);
  void device_print(const std::string& prefix, const std::vector<Value>& values, bool hex);
  void device_assert(const Value& condition, const std::string& message, const Value& mask);
  // A combine function traced between begin_capture and end_capture may
  // only compute values: its Lets are substituted into `results`, which are
  // returned; any other statement is a ValueError.
  void begin_capture();
  std::vector<Value> end_capture(const std::vector<Value>& results);

  // The finished kernel (all blocks closed).
  Kernel finish();

 private:
  struct Open {
    StmtNode stmt;  // For or If being built
    bool in_else = false;
  };
  StmtList& current();
  void append(Stmt stmt);

  Kernel kernel_;
  std::vector<Open> open_;
};

}  // namespace nt::ir
