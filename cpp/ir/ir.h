// The kernel IR: what one program of a kernel does with its blocks.
//
// Block-level and imperative, close to what an application says. A Value is
// an immutable, shared node computing a block (a scalar is a 0-d block) of one
// dtype; its shape is a list of Exprs over integers and constexpr/meta symbols,
// so block sizes stay symbolic until a configuration is compiled. A Stmt is an
// immutable statement: binding a name (Let), declaring and assigning a mutable
// local (loop-carried values), storing into an arranged tensor, `for`, `if`.
// A Kernel is the parameters (arranged tensors and scalars) and a body.
//
// Values are built through builder.h, which infers types (promotion of
// dtypes, numpy broadcasting made explicit with ExpandDims/Broadcast), so every
// Binary/Where has operands of its own shape. Passes rewrite IR with the
// Mutator (mutator.h); IRPrinter (printer.h) shows it for debugging.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "symbolic/expr.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

namespace nt::ir {

struct Type {
  DType dtype = DType::float32;
  std::vector<Expr> shape;  // empty: a scalar
  bool weak = false;        // a Python number: takes the other operand's dtype
  int pointer = -1;         // >= 0: pointers into this param's source (the value: element offsets)

  bool is_scalar() const { return shape.empty(); }
  size_t ndim() const { return shape.size(); }
};

enum class ValueKind {
  Constant,     // expr: an int/float/bool constant or an integer expression over symbols
  ScalarParam,  // param: a 0-dim tensor parameter
  Load,         // param; operands: indices of the middle level (empty for two levels)
  LoopVar,      // name: the variable of an enclosing For
  LetRef,       // id: the value bound by Let `id`
  LocalRef,     // id: the current value of local `id`
  Arange,       // expr .. expr2 (constants or constexpr expressions)
  Full,         // operands[0]: a scalar, filling type.shape
  Unary,        // op: UnaryFn
  Binary,       // op: BinaryFn (operands have the result's shape)
  Where,        // operands: condition, a, b (all the result's shape)
  Cast,         // operands[0] converted to type.dtype
  ExpandDims,   // axis: a new dimension of size 1
  Broadcast,    // operands[0] with size-1 dimensions stretched to type.shape
  Trans,        // a 2-D block transposed
  Reduce,       // op: ReduceFn; axis (-1: everything); keep_dims
  Dot,          // operands: a (M x K), b (K x N); op: the DotPrecision of float32 operands
  Fma,          // operands: a * b + c rounded once (all the result's shape)
  ProgramId,    // axis: the current program's index along that outermost dimension
  Offsets,      // param, operands as Load; axis: source dim (-1: flat offsets per block element);
                // op: the block dim the 1-D result runs along (-1: the whole block, -2: constant)
  PointerBase,  // param: a pointer to its source's element (0, ..., 0) (`p.source.data_ptr()`)
  Random,       // operands: seed (scalar), offsets; op 0: uniform in [0, 1), 1: standard normal
  LoadPointer,  // operands: pointers, mask, other (all the result's shape)
  LoadAt,       // param; operands: the middle-level indices (`axis` of them), then one position
                // per block dim (the result's shape): the block's elements at those positions
                // (`x = p[idx]`); positions outside the block read the tensor's `other`
  // Block operations of the Triton language (ir/block_ops.h, ir/math_fns.h):
  Call,        // name: an elementwise function (math_fns.h); operands: its arguments
  Rearrange,   // op: RearrangeFn; ints: its dims; operands: the blocks it rearranges
  CombineArg,  // axis: the index of a combine function's argument (a scalar placeholder)
  Combine,     // op 0: reduce, 1: scan; operands: inputs; combine: results over CombineArgs;
               // axis (-1: everything); keep_dims; ints[0]: reverse (scan). Read with Extract.
  Extract,     // op: which output of its operand (a Combine)
  Sort,        // operands[0] sorted along axis (the last); op: 1 descending; ints[0]: k (topk) or -1
  Gather,      // operands: src, index; axis: out[i] = src[i with i[axis] = index[i]]
  Histogram,   // operands: input (1-D integers), mask; ints[0]: the number of bins
};

// How a Rearrange maps its result's elements to its operands' elements.
enum class RearrangeFn {
  Reshape,  // row-major order kept
  Permute,  // ints: the permutation (result dim d is operand dim ints[d])
  Flip,     // ints[0]: the dim reversed
  Cat,      // operands a, b joined along dim 0
  Join,     // operands a, b stacked along a new last dim of size 2
  Take,     // ints[0]: the element taken along the last dim (split)
};

enum class UnaryFn {
  Neg,
  Not,
  BitNot,
  Exp,
  Exp2,
  Log,
  Log2,
  Sqrt,
  Rsqrt,
  Abs,
  Sigmoid,
  Sin,
  Cos,
  Tanh,
  Erf,
  Floor,
  Ceil,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Log1p,
  Expm1,
  Cbrt,
  Log10,
  Exp10,
  Trunc,
  Round
};
enum class BinaryFn {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  LogicalAnd,
  LogicalOr,
  BitAnd,
  BitOr,
  BitXor,
  Maximum,
  Minimum,
  Pow,
  LShift,
  RShift,
};
enum class ReduceFn { Sum, Max, Min, ArgMax, ArgMin };

const char* unary_fn_name(UnaryFn fn);
const char* binary_fn_name(BinaryFn fn);
const char* reduce_fn_name(ReduceFn fn);
bool is_comparison(BinaryFn fn);

struct ValueNode;
using Value = std::shared_ptr<const ValueNode>;

struct ValueNode {
  ValueKind kind;
  Type type;
  std::vector<Value> operands;
  Expr expr, expr2;  // Constant; Arange bounds
  int param = -1;    // ScalarParam, Load
  int id = -1;       // LetRef, LocalRef
  int op = 0;        // UnaryFn / BinaryFn / ReduceFn
  int axis = -1;     // ExpandDims, Reduce
  bool keep_dims = false;
  std::string name;            // LoopVar; Call: the function
  std::vector<int> ints;       // Rearrange, Combine, Sort, Histogram (see ValueKind)
  std::vector<Value> combine;  // Combine: the combine function's results (not operands: closed terms)
};

enum class StmtKind {
  Let,
  DeclareLocal,
  Assign,
  Store,
  StorePointer,  // indices: pointers, value, mask (all one shape); param: the pointed-to source
  AtomicAdd,     // the same, adding atomically
  StoreAt,       // param; id: the number of middle-level indices; indices: those, then one
                 // position per block dim (value's shape): `p[idx] = value` into the block
  For,
  If,
  Atomic,  // id: the Let of the old values; op: AtomicFn; param; indices: pointers, value, mask, compare
  Print,   // var: the prefix; indices: the values printed; op: 1 hexadecimal
  Assert,  // value: the condition (a block); var: the message
};

// How a dot multiplies float32 operands (Triton's input_precision): in float ("ieee"); on tensor
// cores as TF32, 10 bits of mantissa ("tf32"); or as three TF32 products of the operands' high and
// low parts, close to float ("tf32x3"). Devices without tensor cores multiply in float: never less
// accurate than asked.
enum class DotPrecision { Ieee, Tf32, Tf32x3 };

enum class AtomicFn { Add, Max, Min, And, Or, Xor, Xchg, Cas };

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;
using StmtList = std::vector<Stmt>;

struct StmtNode {
  StmtKind kind;
  int id = -1;                 // Let, DeclareLocal, Assign
  int param = -1;              // Store
  Value value;                 // Let, DeclareLocal (initial value), Assign, Store; If: the condition
  std::vector<Value> indices;  // Store: indices of the middle level
  std::string var;             // For
  Value start, stop, step;     // For
  StmtList body, orelse;       // For: body; If: both branches
  int op = -1;                 // Atomic: AtomicFn; Print: 1 for hexadecimal
};

// A parameter of the kernel: an arranged tensor (ndim >= 1) or a scalar.
// An arranged tensor of two or more levels has an outermost level (one
// program per element) over its blocks; one of a single level (a source, a
// slice, a permuted or padded view: nothing tiled) is the block of every
// program, as upstream.
struct Param {
  std::string name;              // as in the application
  TensorPtr arranged;            // the outermost level
  DType dtype = DType::float32;  // element dtype
  bool scalar = false;           // a 0-dim tensor
  bool constexpr_ = false;       // constexpr 0-dim: its value is a macro

  // Whether the arranged tensor has an outermost level over its blocks.
  bool has_outer_level() const;
  // The outermost level's shape (empty for one level).
  std::vector<Expr> outer_shape() const;
  // The levels under the outermost (middle levels, then the block); the one
  // level itself when there is only one.
  std::vector<const Tensor*> inner_levels() const;
  // The innermost level's shape: the block one Load yields.
  std::vector<Expr> block_shape() const;
  // The levels between the outermost and the block, their shapes joined:
  // what the indices of a Load address (empty for two levels).
  std::vector<Expr> middle_shape() const;
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  StmtList body;
  std::vector<Type> let_types;    // by Let id
  std::vector<Type> local_types;  // by local id
  // Sizes that are different symbols but must be equal (a dot's inner sizes,
  // broadcast dimensions): checked when a configuration is built.
  std::vector<std::pair<Expr, Expr>> assumed_equal;
  // Parameters whose outermost shape is not the grid's at a launch (upstream allows that): they
  // unravel the program id over their own shape, and programs past their count leave them alone
  // (lower::lower_access). The driver sets them on a copy of the kernel for such launches.
  std::set<int> own_programs;
};

// The programs of a kernel: the outermost shape of its first parameter with
// an outermost level (upstream's rule: the grid comes from the first arranged
// tensor; every other one unravels the program id over its own outermost
// shape). Null / empty when no parameter is tiled: one program.
const Param* grid_param(const Kernel& kernel);
std::vector<Expr> grid_shape(const Kernel& kernel);

// The constexpr/meta symbols that are, by themselves, a size of a level
// under a parameter's outermost one (block sizes such as BLOCK_SIZE): they
// must be at least 1 at launch, and code generation may assume so.
std::vector<std::string> block_size_symbols(const Kernel& kernel);

}  // namespace nt::ir
