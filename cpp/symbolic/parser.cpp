#include "symbolic/parser.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <limits>
#include <stdexcept>
#include <string>

#include "support/errors.h"

namespace nt {

namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expr parse() {
    Expr e = test();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(what + " at position " + std::to_string(pos_) + " in expression '" +
                                std::string(text_) + "'");
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consume `token` if it comes next. Keywords must not run into a name.
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    size_t end = pos_ + token.size();
    if (is_name_start(token[0]) && end < text_.size() && is_name_char(text_[end])) return false;
    // Do not read `<` out of `<=`, `/` out of `//`, `*` out of `**`, `=` of `==`.
    if (!is_name_start(token[0]) && end < text_.size()) {
      char next = text_[end];
      if ((token == "<" || token == ">" || token == "=" || token == "!") && next == '=') return false;
      if ((token == "/" || token == "*") && next == token[0]) return false;
    }
    pos_ = end;
    return true;
  }

  void expect(std::string_view token) {
    if (!accept(token)) fail("expected '" + std::string(token) + "'");
  }

  Expr test() {
    Expr body = or_test();
    if (accept("if")) {
      Expr cond = or_test();
      expect("else");
      Expr orelse = test();
      return select(cond, body, orelse);
    }
    return body;
  }

  Expr or_test() {
    Expr e = and_test();
    while (accept("or")) e = logical_or(e, and_test());
    return e;
  }

  Expr and_test() {
    Expr e = not_test();
    while (accept("and")) e = logical_and(e, not_test());
    return e;
  }

  Expr not_test() {
    if (accept("not")) return logical_not(not_test());
    return comparison();
  }

  // Python chains comparisons: `a < b < c` means `a < b and b < c`.
  Expr comparison() {
    Expr left = bit_or();
    static constexpr std::pair<std::string_view, BinaryOp> kOps[] = {
        {"<=", BinaryOp::Le}, {">=", BinaryOp::Ge}, {"==", BinaryOp::Eq},
        {"!=", BinaryOp::Ne}, {"<", BinaryOp::Lt},  {">", BinaryOp::Gt}};
    std::optional<Expr> chain;
    for (bool found = true; found;) {
      found = false;
      for (const auto& [token, op] : kOps) {
        if (accept(token)) {
          Expr right = bit_or();
          Expr link = binary(op, left, right);
          chain = chain ? logical_and(*chain, link) : link;
          left = right;
          found = true;
          break;
        }
      }
    }
    return chain ? *chain : left;
  }

  Expr bit_or() {
    Expr e = bit_and();
    while (accept("|")) e = binary(BinaryOp::BitOr, e, bit_and());
    return e;
  }

  Expr bit_and() {
    Expr e = arith();
    while (accept("&")) e = binary(BinaryOp::BitAnd, e, arith());
    return e;
  }

  Expr arith() {
    Expr e = term();
    while (true) {
      if (accept("+")) {
        e = add(e, term());
      } else if (accept("-")) {
        e = sub(e, term());
      } else {
        return e;
      }
    }
  }

  Expr term() {
    Expr e = factor();
    while (true) {
      if (accept("//")) {
        e = floordiv(e, factor());
      } else if (accept("/")) {
        e = truediv(e, factor());
      } else if (accept("*")) {
        e = mul(e, factor());
      } else if (accept("%")) {
        e = mod(e, factor());
      } else {
        return e;
      }
    }
  }

  Expr factor() {
    if (accept("-")) {
      skip_space();
      // A negative literal is read whole, so the smallest int64 fits.
      if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) return number(true);
      return neg(factor());
    }
    if (accept("+")) return factor();
    return atom();
  }

  Expr atom() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Expr e = test();
      expect(")");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (is_name_start(c)) return name_or_call();
    fail(std::string("unexpected character '") + c + "'");
  }

  Expr number(bool negative = false) {
    size_t start = pos_;
    bool is_float = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '_') {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E') {
        is_float = true;
        ++pos_;
        if ((c == 'e' || c == 'E') && pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+'))
          ++pos_;
      } else {
        break;
      }
    }
    std::string digits = negative ? "-" : "";
    for (char c : text_.substr(start, pos_ - start)) {
      if (c != '_') digits += c;
    }
    try {
      size_t used = 0;
      if (is_float) {
        // strtod, not stod: subnormals are numbers, and Python reads 1e999 as inf.
        char* end = nullptr;
        double value = std::strtod(digits.c_str(), &end);
        if (end != digits.c_str() + digits.size()) fail("bad number");
        return float_const(value);
      }
      long long value = std::stoll(digits, &used);
      if (used != digits.size()) fail("bad number");
      return int_const(value);
    } catch (const std::out_of_range&) {
      fail("number out of range");
    } catch (const std::invalid_argument&) {
      fail("bad number");
    }
  }

  Expr name_or_call() {
    size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (name == "True") return bool_const(true);
    if (name == "False") return bool_const(false);
    static const char* kKeywords[] = {"if", "else", "or", "and", "not", "lambda", "in", "is"};
    for (const char* keyword : kKeywords) {
      if (name == keyword) {
        pos_ = start;
        fail("unexpected keyword '" + name + "'");
      }
    }
    if (!accept("(")) return var(name);
    if (name == "min" || name == "max") {
      Expr a = test();
      expect(",");
      Expr b = test();
      expect(")");
      return name == "min" ? min(a, b) : max(a, b);
    }
    if (name == "float") {
      skip_space();
      for (std::string_view quote : {"'", "\""}) {
        for (std::string_view word : {"inf", "-inf", "nan"}) {
          std::string literal = std::string(quote) + std::string(word) + std::string(quote);
          if (accept(literal)) {
            expect(")");
            if (word == "nan") return float_const(std::numeric_limits<double>::quiet_NaN());
            double inf = std::numeric_limits<double>::infinity();
            return float_const(word == "inf" ? inf : -inf);
          }
        }
      }
    }
    pos_ = start;
    fail("unsupported call '" + name + "(...)'");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Expr parse_python_expr(std::string_view text) { return Parser(text).parse(); }

bool is_identifier(std::string_view text) {
  if (text.empty() || !is_name_start(text[0])) return false;
  for (char c : text) {
    if (!is_name_char(c)) return false;
  }
  static const char* kKeywords[] = {"if", "else", "or", "and", "not", "True", "False", "None",
                                    "lambda", "in", "is", "for", "while", "def", "return"};
  for (const char* keyword : kKeywords) {
    if (text == keyword) return false;
  }
  return true;
}

}  // namespace nt
