#include "symbolic/printer.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <ostream>

namespace nt {

namespace {

// Python's operator precedence levels, lowest first (as in `ast._Precedence`).
enum Precedence : int {
  kTest = 3,  // `a if c else b`
  kOr,
  kAnd,
  kNot,
  kCmp,
  kBitOr,
  kBitXor,
  kBitAnd,
  kShift,
  kArith,
  kTerm,
  kFactor,
  kPower,
  kAwait,
  kAtom,
};

int binary_precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: return kArith;
    case BinaryOp::Mul:
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
    case BinaryOp::TrueDiv: return kTerm;
    case BinaryOp::And: return kAnd;
    case BinaryOp::Or: return kOr;
    case BinaryOp::BitAnd: return kBitAnd;
    case BinaryOp::BitOr: return kBitOr;
    case BinaryOp::Min:
    case BinaryOp::Max: return kAtom;
    default: return kCmp;
  }
}

int precedence(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Int: return e->int_value < 0 ? kFactor : kAtom;
    case ExprKind::Float: return e->float_value < 0 ? kFactor : kAtom;
    case ExprKind::Bool:
    case ExprKind::Var: return kAtom;
    case ExprKind::Unary: return e->unary_op == UnaryOp::Neg ? kFactor : kNot;
    case ExprKind::Binary: return binary_precedence(e->binary_op);
    case ExprKind::Select: return kTest;
  }
  return kAtom;
}

class PythonPrinter {
 public:
  explicit PythonPrinter(std::string& out) : out_(out) {}

  // Print `e` in a context that needs at least precedence `context`.
  void print(const Expr& e, int context) {
    bool parens = precedence(e) < context;
    if (parens) out_ += '(';
    print_bare(e);
    if (parens) out_ += ')';
  }

 private:
  void print_bare(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Int: out_ += std::to_string(e->int_value); return;
      case ExprKind::Float: out_ += format_float(e->float_value); return;
      case ExprKind::Bool: out_ += e->int_value ? "True" : "False"; return;
      case ExprKind::Var: out_ += e->name; return;
      case ExprKind::Unary:
        if (e->unary_op == UnaryOp::Neg) {
          out_ += '-';
          print(e->operands[0], kFactor);
        } else {
          out_ += "not ";
          print(e->operands[0], kNot);
        }
        return;
      case ExprKind::Binary: print_binary(e); return;
      case ExprKind::Select:
        print(e->operands[1], kTest + 1);
        out_ += " if ";
        print(e->operands[0], kTest + 1);
        out_ += " else ";
        print(e->operands[2], kTest);
        return;
    }
  }

  void print_binary(const Expr& e) {
    BinaryOp op = e->binary_op;
    if (op == BinaryOp::Min || op == BinaryOp::Max) {
      out_ += binary_op_token(op);
      out_ += '(';
      print(e->operands[0], kTest);
      out_ += ", ";
      print(e->operands[1], kTest);
      out_ += ')';
      return;
    }
    int prec = binary_precedence(op);
    // Left-associative: the left operand may sit at the same level, the right
    // one must bind tighter. Comparisons and boolean operators are n-ary in
    // Python, so both sides need a tighter binding to keep a binary tree.
    // `ast.unparse` raises the level once more for each further value of a
    // boolean operator, so its right operand needs prec + 2 (`a and (not b)`).
    bool boolean = op == BinaryOp::And || op == BinaryOp::Or;
    bool n_ary = is_comparison(op) || boolean;
    print(e->operands[0], n_ary ? prec + 1 : prec);
    out_ += ' ';
    out_ += binary_op_token(op);
    out_ += ' ';
    print(e->operands[1], boolean ? prec + 2 : prec + 1);
  }

  std::string& out_;
};

}  // namespace

std::string format_float(double value) {
  if (std::isnan(value)) return "float('nan')";
  if (std::isinf(value)) return value > 0 ? "float('inf')" : "-float('inf')";
  // The shortest round-trip digits, laid out as Python's repr does: an
  // exponent when it is below -4 or at least 16, else positional with a `.0`.
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string text(buffer, result.ptr);
  size_t e_pos = text.find('e');
  int exponent = std::stoi(text.substr(e_pos + 1));
  if (exponent < -4 || exponent >= 16) return text;
  bool negative = text[0] == '-';
  std::string digits;
  for (char c : text.substr(0, e_pos)) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  std::string fixed;
  if (exponent < 0) {
    fixed = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else {
    auto point = static_cast<size_t>(exponent) + 1;
    if (digits.size() < point) digits.append(point - digits.size(), '0');
    std::string fraction = digits.substr(point);
    fixed = digits.substr(0, point) + "." + (fraction.empty() ? "0" : fraction);
  }
  return (negative ? "-" : "") + fixed;
}

std::string to_python(const Expr& e) {
  std::string out;
  PythonPrinter(out).print(e, 0);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_python(e); }

}  // namespace nt
