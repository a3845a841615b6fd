// k loops whose tensor-core operands are loaded ahead (dialects with mma_async_staging: CUDA C).
//
// In: a For statement whose body multiplies, on tensor cores, blocks loaded at the loop's index
// (a matmul's `dot(input[k], other[k])`, attention's blocks of k and v) and writes no tensor.
// Out: that loop with each such operand in buffers of its own type (16-bit or float):
//
//   the copies of iterations 0 .. NT_STAGES - 2 start (one cp.async group each);
//   for each iteration t:
//     the copy of iteration t + NT_STAGES - 1 starts, into the buffer iteration t - 1 read;
//     this thread waits for its copies of iteration t (all but the NT_STAGES - 1 newest
//     groups), and the block for everyone's (a barrier);
//     the body runs, its dots reading buffer t % NT_STAGES (pitched_operand());
//     a barrier: every warp is done with the buffer the next iteration overwrites.
//
// Where every dot of the body is an accumulation on Hopper's warpgroup MMAs
// (deferrable_dots(), `acc += dot(a[k], b[k])`), the loop is written so that on two
// warpgroups or more (NT_WGMMA_DEFER: NT_WGMMA on 256 work-items or more) the dots need not wait
// for their wgmma groups:
//
//   for each iteration t:
//     this thread waits for its copies of iteration t (all but NT_STAGES - 2 groups), and the
//     block for everyone's: the only barrier, so every warp is past iteration t - 1's wait;
//     the copy of iteration t + NT_STAGES - 1 starts, into the buffer of iteration t - 2, which
//     that wait made free (NT_STAGES 1: the copy is iteration t's own, waited for at once);
//     the body runs, its wgmma group left running (NT_WGMMA_DEFER: a held accumulator whose
//     operands are both the loop's buffers, none staged in the iteration), and the iteration ends
//     waiting for all groups but its own (NT_WGMMA_WAIT(1));
//   after the loop, a wait for all groups, and a barrier: the loop may run again.
//
// Buffers: NT_ASYNC_BUFFERS (NT_STAGES + NT_WGMMA_DEFER). Without NT_WGMMA_DEFER (one warpgroup,
// or no wgmma) the dots wait for their own groups and the same order needs NT_STAGES buffers.
// On one warpgroup, two programs an SM on three buffers measured faster than one on four; on
// two, the groups left running measured 1.25x faster (docs/performance.md).
//
// Loads run no further than the loop does, and each reads what the iteration it belongs to
// would have read: a block in bounds, contiguous and aligned is copied by cp.async, any other
// element by element with its masks (stage_block(), emitter_mma_staging.cpp). NT_STAGES is 1
// (each iteration waits for its own copies: no overlap) up to what shared memory holds; the
// runtime sets it from num_stages (driver/compiled_kernel_cuda.cpp).
//
// An operand bound before the loop (attention's q, scaled) is staged once, before the loop, in its
// own type and its dot's layout, and every iteration's dot reads its fragments from there
// (stage_invariant_operands()).
#include <map>
#include <set>
#include <string>

#include "codegen/c/emitter.h"
#include "lower/tensor_access.h"

namespace nt::codegen {

using namespace nt::ir;

namespace {

// Does `body` write a tensor anywhere (a store, an atomic)? Then blocks loaded ahead might
// miss what an earlier iteration writes.
bool writes_memory(const StmtList& body) {
  for (const Stmt& s : body) {
    switch (s->kind) {
      case StmtKind::Store:
      case StmtKind::StorePointer:
      case StmtKind::AtomicAdd:
      case StmtKind::StoreAt:
      case StmtKind::Atomic:
        return true;
      default:
        break;
    }
    if (writes_memory(s->body) || writes_memory(s->orelse)) return true;
  }
  return false;
}

// The Lets `body` binds, in nested statements too.
void lets_of(const StmtList& body, std::set<int>& ids) {
  for (const Stmt& s : body) {
    if (s->kind == StmtKind::Let) ids.insert(s->id);
    lets_of(s->body, ids);
    lets_of(s->orelse, ids);
  }
}

// The dots of the body's own statements (not of nested loops or branches: those run a varying
// number of times).
std::vector<Value> body_dots(const Stmt& loop) {
  std::vector<Value> dots;
  struct Dots : IRVisitor {
    using IRVisitor::visit;
    void visit(const Value& v) override {
      if (v->kind == ValueKind::Dot) found->push_back(v);
      IRVisitor::visit(v);
    }
    std::vector<Value>* found = nullptr;
  } visitor;
  visitor.found = &dots;
  for (const Stmt& s : loop->body) {
    if ((s->kind == StmtKind::Let || s->kind == StmtKind::Assign || s->kind == StmtKind::DeclareLocal) &&
        s->value)
      visitor.visit(s->value);
  }
  return dots;
}

}  // namespace

std::vector<const ValueNode*> Emitter::stage_invariant_operands(const Stmt& loop) {
  std::vector<const ValueNode*> staged;
  if (!group_ || serial_ || !d_.mma_async_staging || mma_shapes_.empty()) return staged;
  std::set<int> inside;
  lets_of(loop->body, inside);
  std::map<int, std::pair<std::string, StagedLayout>> by_let;  // a Let's staged copy: array, layout
  for (const Value& dot : body_dots(loop)) {
    const std::string mma = mma_type(dot);
    if ((mma != "f16" && mma != "bf16") || !mma_shapes_.count(shape_key(dot->type.shape))) continue;
    for (int which = 0; which < 2; ++which) {
      const Value v = staged_value(dot, which);
      if (v->kind != ValueKind::LetRef || inside.count(v->id) || v->type.shape.size() != 2 ||
          staged_operands_.count(v.get()))
        continue;
      auto found = by_let.find(v->id);
      if (found == by_let.end()) {  // laid out as its first dot asks: the others read it so
        int pad = 0;
        const StagedLayout layout = operand_layout(dot, which, pad);
        const std::string name = staged_operand(v, v->type.dtype, layout, pad, "nt_invariant");
        found = by_let.emplace(v->id, std::make_pair(name, layout)).first;
      }
      staged_operands_[v.get()] = found->second;
      staged.push_back(v.get());
    }
  }
  return staged;
}

std::set<const ValueNode*> Emitter::deferrable_dots(const Stmt& loop) {
  std::set<const ValueNode*> accumulated;
  if (wgmma_shapes_.empty()) return accumulated;
  for (const StmtNode* s : accumulated_dots(loop)) accumulated.insert(s->value->operands[1].get());
  for (const Value& dot : body_dots(loop))
    if (!accumulated.count(dot.get()) || !wgmma_shapes_.count(shape_key(dot->type.shape))) return {};
  return accumulated;
}

std::vector<Emitter::PipelinedOperand> Emitter::pipelined_operands(const Stmt& loop,
                                                                   const std::string& buffers) {
  std::vector<PipelinedOperand> operands;
  if (!group_ || serial_ || !d_.mma_async_staging || mma_shapes_.empty()) return operands;
  if (loop->step->kind != ValueKind::Constant || loop->step->expr.as_int().value_or(0) <= 0) return operands;
  if (writes_memory(loop->body)) return operands;
  std::set<const ValueNode*> seen;
  for (const Value& dot : body_dots(loop)) {
    if (mma_type(dot).empty() || !mma_shapes_.count(shape_key(dot->type.shape))) continue;
    for (int which = 0; which < 2; ++which) {
      const Value load = staged_value(dot, which);
      if (load->kind != ValueKind::Load || load->type.shape.size() != 2 ||
          k_.params[load->param].dtype != load->type.dtype || materialized_.count(load.get()))
        continue;
      // Indexed by constants and loop indices, this loop's among them.
      bool indexable = true, by_this_loop = false;
      for (const Value& index : load->operands) {
        if (index->kind == ValueKind::LoopVar) {
          by_this_loop = by_this_loop || index->name == loop->var;
        } else if (index->kind != ValueKind::Constant) {
          indexable = false;
        }
      }
      if (!indexable || !by_this_loop || !seen.insert(load.get()).second) continue;
      int pad = 0;
      PipelinedOperand o;
      o.load = load;
      o.layout = operand_layout(dot, which, pad);
      o.array = fresh("nt_stages");
      o.slot = declare_operand_array(staged_type(load->type.dtype), o.array, load->type.shape, o.layout, pad,
                                     staged_size(load->type.dtype), buffers);
      operands.push_back(std::move(o));
    }
  }
  if (!operands.empty()) pipelined_ = true;
  if (!operands.empty() && buffers == kAsyncBuffersMacro) async_buffers_ = true;
  return operands;
}

void Emitter::stage_ahead(const Stmt& loop, const std::vector<PipelinedOperand>& operands,
                          const std::string& index, const std::string& stop, const std::string& slot) {
  const std::string ahead = fresh("nt_ahead"), counter = loop_counter_type(loop);  // as the loop's
  line_("const " + counter + " " + ahead + " = " + index + ";");
  // No less than the loop's start, the step being positive (pipelined_operands()): its divisions
  // (a flattened (C R S) step's) print as `/` and `%` where their divisors are positive.
  if (loop->start->kind == ValueKind::Constant) env_.set(ahead, loop->start->expr.as_int(), std::nullopt);
  open("if (" + ahead + " < (" + counter + ")(" + stop + "))");
  // The blocks' accesses at that index: this loop's variable read as `ahead`.
  auto saved = loop_vars_;
  loop_vars_[loop->var] = ahead;
  with_loop_scope([&] {  // the step's tables, for both operands (emitter_index_tables.cpp)
    for (const PipelinedOperand& o : operands) {
      std::vector<Expr> middle;
      for (const Value& i : o.load->operands) middle.push_back(index_expr(i));
      const lower::TensorAccess a = lower::lower_access(k_.params[o.load->param], layout_, middle, env_,
                                                        k_.own_programs.count(o.load->param) > 0);
      stage_block(o.load, a, "(" + o.array + " + (" + slot + ") * (" + o.slot + "))", o.layout);
    }
  });
  loop_vars_ = saved;
  close();
  line_("NT_CP_ASYNC_COMMIT();");  // a group each iteration, empty past the loop's end
}

}  // namespace nt::codegen
