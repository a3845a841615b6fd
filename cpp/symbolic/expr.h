// Expr: immutable, shared symbolic expressions over named symbols.
//
// An Expr is a handle to an immutable node: an integer, float or boolean
// constant, a named symbol (with the attributes NineToothed users give it:
// constexpr, meta, bounds, power of two), a unary or binary operation, or a
// call of `min`/`max`. Nodes are shared, never mutated.
//
// The free construction functions (`add`, `sub`, `mul`, ...) apply only the
// rules that keep printed output readable and identical to upstream
// NineToothed: integer constant folding and the identities
// `x + 0, 0 + x, x - 0, 0 - x -> -x, x * 1, 1 * x, x // 1`. Anything stronger
// belongs to the simplifier (simplify.h), which is for code generation only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nt {

enum class ExprKind { Int, Float, Bool, Var, Unary, Binary, Select };

enum class UnaryOp { Neg, Not };

enum class BinaryOp {
  Add,
  Sub,
  Mul,
  FloorDiv,
  Mod,
  TrueDiv,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,     // logical `and`
  Or,      // logical `or`
  BitAnd,  // `&`, as upstream builds masks
  BitOr,   // `|`
  Min,     // printed as `min(a, b)`
  Max,     // printed as `max(a, b)`
};

// What a user said about a named symbol.
struct SymbolAttrs {
  bool constexpr_ = false;
  bool meta = false;
  std::optional<int64_t> lower_bound;
  std::optional<int64_t> upper_bound;
  bool power_of_two = false;
};

class ExprNode;

class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

  // Implicit from integers so that `add(x, 1)` reads naturally.
  Expr(int value);      // NOLINT(google-explicit-constructor)
  Expr(int64_t value);  // NOLINT(google-explicit-constructor)

  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const ExprNode& operator*() const { return *node_; }
  bool defined() const { return node_ != nullptr; }
  bool same_as(const Expr& other) const { return node_ == other.node_; }

  bool is_int() const;
  bool is_int(int64_t value) const;
  bool is_const() const;  // int, float or bool constant
  bool is_var() const;
  std::optional<int64_t> as_int() const;

 private:
  std::shared_ptr<const ExprNode> node_;
};

class ExprNode {
 public:
  ExprKind kind;
  int64_t int_value = 0;      // Int, Bool (0/1)
  double float_value = 0.0;   // Float
  std::string name;           // Var
  SymbolAttrs attrs;          // Var
  UnaryOp unary_op{};         // Unary
  BinaryOp binary_op{};       // Binary
  std::vector<Expr> operands;  // Unary: 1, Binary: 2, Select: 3 (cond, a, b)
};

// Leaves.
Expr int_const(int64_t value);
Expr float_const(double value);
Expr bool_const(bool value);
Expr var(const std::string& name, const SymbolAttrs& attrs = {});

// Operations (with the light rules described above).
Expr unary(UnaryOp op, const Expr& a);
Expr binary(BinaryOp op, const Expr& a, const Expr& b);
Expr select(const Expr& cond, const Expr& a, const Expr& b);

inline Expr neg(const Expr& a) { return unary(UnaryOp::Neg, a); }
inline Expr logical_not(const Expr& a) { return unary(UnaryOp::Not, a); }
inline Expr add(const Expr& a, const Expr& b) { return binary(BinaryOp::Add, a, b); }
inline Expr sub(const Expr& a, const Expr& b) { return binary(BinaryOp::Sub, a, b); }
inline Expr mul(const Expr& a, const Expr& b) { return binary(BinaryOp::Mul, a, b); }
inline Expr floordiv(const Expr& a, const Expr& b) { return binary(BinaryOp::FloorDiv, a, b); }
inline Expr mod(const Expr& a, const Expr& b) { return binary(BinaryOp::Mod, a, b); }
inline Expr truediv(const Expr& a, const Expr& b) { return binary(BinaryOp::TrueDiv, a, b); }
inline Expr lt(const Expr& a, const Expr& b) { return binary(BinaryOp::Lt, a, b); }
inline Expr le(const Expr& a, const Expr& b) { return binary(BinaryOp::Le, a, b); }
inline Expr gt(const Expr& a, const Expr& b) { return binary(BinaryOp::Gt, a, b); }
inline Expr ge(const Expr& a, const Expr& b) { return binary(BinaryOp::Ge, a, b); }
inline Expr eq(const Expr& a, const Expr& b) { return binary(BinaryOp::Eq, a, b); }
inline Expr ne(const Expr& a, const Expr& b) { return binary(BinaryOp::Ne, a, b); }
inline Expr logical_and(const Expr& a, const Expr& b) { return binary(BinaryOp::And, a, b); }
inline Expr logical_or(const Expr& a, const Expr& b) { return binary(BinaryOp::Or, a, b); }
inline Expr min(const Expr& a, const Expr& b) { return binary(BinaryOp::Min, a, b); }
inline Expr max(const Expr& a, const Expr& b) { return binary(BinaryOp::Max, a, b); }

// Python semantics of integer `//` and `%` (rounding toward negative infinity).
// Throw ZeroDivisionError (support/errors.h) on a zero divisor.
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

// Structural equality (symbols are equal when their names are).
bool equal(const Expr& a, const Expr& b);
size_t structural_hash(const Expr& e);

// Is this operator a comparison (result is boolean)?
bool is_comparison(BinaryOp op);
const char* binary_op_token(BinaryOp op);  // "+", "//", "<", "and", "min", ...

}  // namespace nt
