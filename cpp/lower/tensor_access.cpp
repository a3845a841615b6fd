#include "lower/tensor_access.h"

#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"
#include "tensor/index_map.h"

namespace nt::lower {

namespace {

enum class Direction { Const, Up, Down, Unknown };

Direction flip(Direction d) {
  return d == Direction::Up ? Direction::Down : d == Direction::Down ? Direction::Up : d;
}

Direction combine(Direction a, Direction b) {
  if (a == Direction::Const) return b;
  if (b == Direction::Const || a == b) return a;
  return Direction::Unknown;
}

// How `e` changes as the symbol `name` grows (others fixed).
Direction direction(const Expr& e, const std::string& name, const BoundsEnv& env) {
  if (!mentions(e, name)) return Direction::Const;
  switch (e->kind) {
    case ExprKind::Var:
      return Direction::Up;
    case ExprKind::Unary:
      return e->unary_op == UnaryOp::Neg ? flip(direction(e->operands[0], name, env)) : Direction::Unknown;
    case ExprKind::Binary: {
      const Expr& a = e->operands[0];
      const Expr& b = e->operands[1];
      switch (e->binary_op) {
        case BinaryOp::Add:
          return combine(direction(a, name, env), direction(b, name, env));
        case BinaryOp::Sub:
          return combine(direction(a, name, env), flip(direction(b, name, env)));
        case BinaryOp::Min:
        case BinaryOp::Max:
          return combine(direction(a, name, env), direction(b, name, env));
        case BinaryOp::Mul: {
          for (int k = 0; k < 2; ++k) {
            const Expr& factor = e->operands[k];
            const Expr& other = e->operands[1 - k];
            if (mentions(factor, name)) continue;
            Interval bounds = bounds_of(factor, env);
            Direction d = direction(other, name, env);
            if (bounds.lo && *bounds.lo >= 0) return d;
            if (bounds.hi && *bounds.hi <= 0) return flip(d);
          }
          return Direction::Unknown;
        }
        case BinaryOp::FloorDiv: {
          if (mentions(b, name)) return Direction::Unknown;
          Interval bounds = bounds_of(b, env);
          if (bounds.lo && *bounds.lo > 0) return direction(a, name, env);
          return Direction::Unknown;
        }
        default:
          return Direction::Unknown;
      }
    }
    default:
      return Direction::Unknown;
  }
}

bool is_ordering(const Expr& c) {
  return c->kind == ExprKind::Binary && (c->binary_op == BinaryOp::Lt || c->binary_op == BinaryOp::Le ||
                                         c->binary_op == BinaryOp::Gt || c->binary_op == BinaryOp::Ge);
}

void split_conjunction(const Expr& c, std::vector<Expr>& out) {
  if (c->kind == ExprKind::Binary && (c->binary_op == BinaryOp::And || c->binary_op == BinaryOp::BitAnd)) {
    split_conjunction(c->operands[0], out);
    split_conjunction(c->operands[1], out);
  } else {
    out.push_back(c);
  }
}

Expr nonnegative_var(const std::string& name) {
  SymbolAttrs attrs;
  attrs.lower_bound = 0;
  return var(name, attrs);
}

}  // namespace

Expr jagged_seq_start(const Tensor& source) { return nonnegative_var(source.name() + "_seq_start"); }

Expr jagged_seq_len(const Tensor& source) { return nonnegative_var(source.name() + "_seq_len"); }

Expr element_index(size_t d) { return nonnegative_var("nt_e_" + std::to_string(d)); }

void add_element_bounds(BoundsEnv& env, const std::vector<Expr>& block_shape) {
  for (size_t d = 0; d < block_shape.size(); ++d) {
    std::string name = "nt_e_" + std::to_string(d);
    Interval size = bounds_of(block_shape[d], env);
    env.set(name, 0, size.hi ? std::optional<int64_t>(*size.hi - 1) : std::nullopt);
    env.set_symbolic(name, Expr(0), sub(block_shape[d], 1));
  }
}

std::vector<Expr> TensorAccess::conditions() const {
  std::vector<Expr> all = hoistable;
  all.insert(all.end(), per_element.begin(), per_element.end());
  return all;
}

Expr TensorAccess::offset_at(const std::vector<Expr>& index) const {
  SymbolMap m;
  for (size_t d = 0; d < index.size(); ++d) m.emplace("nt_e_" + std::to_string(d), index[d]);
  return substitute(offset, m);
}

Expr TensorAccess::coordinate_at(size_t dim, const std::vector<Expr>& index) const {
  SymbolMap m;
  for (size_t d = 0; d < index.size(); ++d) m.emplace("nt_e_" + std::to_string(d), index[d]);
  return substitute(coordinates.at(dim), m);
}

std::vector<Expr> TensorAccess::conditions_at(const std::vector<Expr>& index, bool fast) const {
  SymbolMap m;
  for (size_t d = 0; d < index.size(); ++d) m.emplace("nt_e_" + std::to_string(d), index[d]);
  std::vector<Expr> out;
  if (!fast) {
    for (const Expr& c : hoistable) out.push_back(substitute(c, m));
  }
  for (const Expr& c : per_element) out.push_back(substitute(c, m));
  return out;
}

TensorAccess lower_access(const ir::Param& param, const ProgramLayout& layout,
                          const std::vector<Expr>& middle_indices, const BoundsEnv& outer_env,
                          bool own_programs) {
  const Tensor& arranged = *param.arranged;
  std::vector<const Tensor*> levels = arranged.levels();
  const Tensor* block = levels.back();
  SourceAccess source = resolve_source_access(arranged);

  SymbolMap replacements;
  size_t first_inner = 0;  // one level: the whole arranged tensor is every program's block
  if (levels.size() >= 2) {
    const auto& outer = levels.front()->indices();
    std::vector<Expr> program = own_programs ? layout.own_program_indices(levels.front()->shape())
                                             : layout.program_indices(levels.front()->shape());
    for (size_t d = 0; d < outer.size(); ++d) replacements.emplace(outer[d]->name, program[d]);
    first_inner = 1;
  }
  size_t next = 0;  // middle levels take the indices in order
  for (size_t k = first_inner; k + 1 < levels.size(); ++k) {
    for (const Expr& index : levels[k]->indices()) {
      if (next == middle_indices.size()) throw std::logic_error("lower_access: too few indices");
      replacements.emplace(index->name, middle_indices[next++]);
    }
  }
  if (next != middle_indices.size()) throw std::logic_error("lower_access: too many indices");
  for (size_t d = 0; d < block->indices().size(); ++d)
    replacements.emplace(block->indices()[d]->name, element_index(d));

  BoundsEnv env = outer_env;
  layout.add_bounds(env);
  add_element_bounds(env, block->shape());

  TensorAccess access;
  access.block_shape = block->shape();
  const Tensor& src = arranged.source_ref();
  const std::optional<int64_t>& jagged = src.jagged_dim();
  // A jagged tensor's size in its jagged dimension is each sequence's own length wherever the
  // arrangement computes with it (x[:, -1] is each sequence's last element, as upstream's seq_len);
  // only its outermost shape, the grid, keeps the longest. Replaced before the program indices go
  // in, which unravel over that outermost shape.
  SymbolMap seq_len;
  if (jagged) {
    const Expr& size = src.shape()[static_cast<size_t>(*jagged)];
    if (!size.is_var()) {
      throw ValueError("'" + param.name + "' is a jagged tensor whose size in its jagged dimension is " +
                       to_python(size) + ": it must be a symbol, each sequence's length");
    }
    seq_len.emplace(size->name, jagged_seq_len(src));
  }
  Expr offset = Expr(0);
  for (size_t d = 0; d < source.coordinates.size(); ++d) {
    Expr coordinate = substitute(substitute(source.coordinates[d], seq_len), replacements);
    access.coordinates.push_back(simplify(coordinate, env));
    if (jagged && d == 0) continue;  // a sequence's place is its seq_start
    offset = add(offset, mul(coordinate, src.stride_symbol(d)));
  }
  if (jagged) {
    for (const Expr& v : collect_vars(access.coordinates.at(0))) {
      bool varies = v->name.rfind("nt_e_", 0) == 0;
      for (const Expr& m : middle_indices)
        for (const Expr& mv : collect_vars(m)) varies = varies || mv->name == v->name;
      if (varies) {
        throw ValueError("'" + param.name +
                         "' is a jagged tensor, and a program must read one sequence of it (its dimension 0 "
                         "the same over the program's blocks: tile it by 1 there), but its sequence is " +
                         to_python(access.coordinates[0]));
      }
    }
    offset = add(offset, mul(jagged_seq_start(src), src.stride_symbol(static_cast<size_t>(*jagged))));
  }
  access.offset = simplify(offset, env);
  std::vector<Expr> conditions;
  for (const Expr& condition : source.conditions) conditions.push_back(substitute(condition, seq_len));
  if (own_programs && levels.size() >= 2) {  // this program is one of the parameter's (its outermost shape)
    Expr count = Expr(1);
    for (const Expr& s : levels.front()->shape()) count = mul(count, s);
    conditions.push_back(lt(ProgramLayout::flat_program_id(), count));
  }
  for (const Expr& condition : conditions) {
    std::vector<Expr> parts;
    split_conjunction(simplify(substitute(condition, replacements), env), parts);
    for (const Expr& c : parts) {
      if (c->kind == ExprKind::Bool) {
        if (!c->int_value) access.never = true;
        continue;
      }
      // `a < b` (etc.) holds over the block iff it holds at the corner where
      // `a - b` is largest (smallest for > and >=).
      bool hoistable = is_ordering(c);
      SymbolMap corner;
      if (hoistable) {
        Expr diff = sub(c->operands[0], c->operands[1]);
        bool want_max = c->binary_op == BinaryOp::Lt || c->binary_op == BinaryOp::Le;
        for (size_t d = 0; hoistable && d < access.block_shape.size(); ++d) {
          std::string name = "nt_e_" + std::to_string(d);
          Direction dir = direction(diff, name, env);
          hoistable = dir != Direction::Unknown;
          if (dir == Direction::Up || dir == Direction::Down) {
            corner.emplace(name,
                           (dir == Direction::Up) == want_max ? sub(access.block_shape[d], 1) : Expr(0));
          }
        }
      }
      if (hoistable) {
        access.hoistable.push_back(c);
        access.block_test.push_back(simplify(substitute(c, corner), env));
      } else {
        access.per_element.push_back(c);
      }
    }
  }
  return access;
}

Expr jagged_sequence(const ir::Param& param, const ProgramLayout& layout, const BoundsEnv& env,
                     bool own_programs) {
  std::vector<const Tensor*> levels = static_cast<const Tensor&>(*param.arranged).levels();
  std::vector<Expr> middle;  // placeholders: the sequence must not depend on them
  for (size_t k = 1; k + 1 < levels.size(); ++k) {
    for (size_t i = 0; i < levels[k]->indices().size(); ++i)
      middle.push_back(var("nt_jagged_middle_" + std::to_string(middle.size())));
  }
  return lower_access(param, layout, middle, env, own_programs).coordinates.at(0);
}

}  // namespace nt::lower
