#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/c/block_ops.h"
#include "codegen/c/c_expr.h"
#include "codegen/c/c_types.h"
#include "codegen/c/dot_kernel.h"
#include "codegen/c/emitter.h"
#include "codegen/c/math_calls.h"
#include "codegen/c/wgmma_ptx.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "lower/program_layout.h"
#include "lower/tensor_access.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

using namespace nt::ir;

void Emitter::emit_list(const StmtList& stmts) {
  for (const Stmt& s : stmts) emit_stmt(s);
}

void Emitter::emit_stmt(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Let: {
      std::string name = fresh("nt_let");
      declare(name, s->value->type, s->value, false, let_key(s->id));
      lets_[s->id] = name;
      break;
    }
    case StmtKind::DeclareLocal: {
      std::string name = fresh("nt_local");
      declare(name, k_.local_types[s->id], s->value, true, local_key(s->id));
      locals_[s->id] = name;
      break;
    }
    case StmtKind::Assign:
      emit_assign(s);
      break;
    case StmtKind::StorePointer:
    case StmtKind::AtomicAdd:
      emit_store_pointer(s);
      break;
    case StmtKind::Store:
      emit_store(s);
      break;
    case StmtKind::StoreAt:
      emit_scatter(s);
      break;
    case StmtKind::For:
      emit_for(s);
      break;
    case StmtKind::Atomic:
    case StmtKind::Print:
    case StmtKind::Assert:
      distributable_ = false;
      if (group_) {
        // Reductions and dots of its operands need the whole work-group.
        if (s->value) materialize_parts(s->value);
        for (const Value& v : s->indices) materialize_parts(v);
      }
      on_first_work_item([&] { emit_block_op_statement(*this, s); });
      if (s->kind == StmtKind::Atomic) after_store(s->param);
      break;
    case StmtKind::If: {
      materialize_parts(s->value);
      open("if (" + elem(s->value, {}) + ")");
      scoped([&] { emit_list(s->body); });
      if (!s->orelse.empty()) {
        close("} else {");
        ++indent_;
        scoped([&] { emit_list(s->orelse); });
      }
      close();
      break;
    }
  }
}

void Emitter::scoped(const std::function<void()>& f) {
  auto lets = lets_;
  auto locals = locals_;
  auto materialized = materialized_;
  auto accesses = accesses_;
  auto held = held_;
  f();
  lets_ = std::move(lets);
  locals_ = std::move(locals);
  materialized_ = std::move(materialized);
  accesses_ = std::move(accesses);
  // A block held in the scope is gone with it; one held outside stays, unless a store in the
  // scope forgot it (after_store()).
  for (auto it = held.begin(); it != held.end();) it = held_.count(it->first) ? ++it : held.erase(it);
  held_ = std::move(held);
}

const ValueNode* accumulated_dot(const Stmt& s) {
  if (s->kind != StmtKind::Assign) return nullptr;
  const Value& v = s->value;
  if (v->kind == ValueKind::Binary && static_cast<BinaryFn>(v->op) == BinaryFn::Add &&
      v->operands[0]->kind == ValueKind::LocalRef && v->operands[0]->id == s->id &&
      v->operands[1]->kind == ValueKind::Dot && v->operands[1]->type.dtype == v->operands[0]->type.dtype)
    return v->operands[1].get();
  return nullptr;
}

void Emitter::emit_assign(const Stmt& s) {
  const std::string& name = locals_.at(s->id);
  const Type& type = k_.local_types[s->id];
  const Value& v = s->value;
  open("");
  scoped([&] {
    // acc += dot(a, b): accumulate into the local.
    if (accumulated_dot(s)) {
      for (const Value& o : v->operands[1]->operands) materialize_parts(o);
      emit_dot(v->operands[1], name, /*accumulate=*/true);
      return;
    }
    materialize_parts(v);
    if (type.is_scalar()) {
      line_(name + " = " + elem(v, {}) + ";");
    } else if (reads_local_elsewhere(v, s->id)) {
      std::string tmp = fresh("nt_tmp");
      declare(tmp, type, v, false);
      if (group_) {  // shared: the local is read elsewhere
        barrier();
        loops(type.shape, [&](const std::vector<Expr>& i) {
          line_(element_of(name, type, i) + " = " + element_of(tmp, type, i) + ";");
        });
        barrier();
      } else {
        open("for (nt_index i = 0; i < " + array_size(type.shape, "a local") + "; ++i)");
        line_(name + "[i] = " + tmp + "[i];");
        close();
      }
    } else {
      write_array(name, type, v);
    }
  });
  close();
}

void Emitter::emit_store(const Stmt& s) {
  const Param& p = k_.params[s->param];
  if (!stored_params_.insert(s->param).second) distributable_ = false;  // stored twice
  open("");
  scoped([&] {
    materialize_parts(s->value);
    before_store(s->param);
    ValueNode target_node{ValueKind::Load, Type{p.dtype, p.block_shape()}};
    target_node.param = s->param;
    target_node.operands = s->indices;
    Value target = std::make_shared<const ValueNode>(target_node);
    const lower::TensorAccess& a = access_of(target);
    if (a.never) return;
    std::string ptr = "nt_p" + std::to_string(s->param);
    // A store to float16/bfloat16 rounds: a cast to that type before it is redundant.
    Value stored = s->value;
    if (stored->kind == ValueKind::Cast && stored->type.dtype == p.dtype &&
        (p.dtype == DType::float16 || p.dtype == DType::bfloat16)) {
      stored = stored->operands[0];
    }
    bool narrow = p.dtype == DType::float16 || p.dtype == DType::bfloat16;
    auto element = [&](const std::vector<Expr>& i) {
      std::string value = elem(stored, i);
      if (!stream_buffer_.empty()) {  // a streamed strip (strip_mined_loop())
        line_(stream_buffer_ + "[" + lane_of_last_ + "] = " + value + ";");
        return;
      }
      std::string offset = c(simplify(a.offset_at(i), env_));
      std::string mask = mask_of(a, i);
      std::string store = store_element(p, ptr, offset, value);
      if (mask.empty()) {
        line_(store);
      } else {
        line_("if (" + mask + ") " + store);
      }
    };
    std::function<void()> runs = store_row_runs(p, a, stored, p.block_shape(), ptr);
    if (!runs) runs = store_pairs(p, a, stored, p.block_shape(), ptr, element);
    stream_store_ = StreamedStore{s->param, &a};
    nest(p.block_shape(), {stored}, &a, element, /*hint=*/!narrow, runs, /*prefetch=*/true, /*strips=*/false,
         /*reorder=*/true);
    stream_store_.reset();
    keep_alive_.push_back(target);
  });
  close();
  after_store(s->param);
}

void Emitter::emit_scatter(const Stmt& s) {
  distributable_ = false;
  const Param& p = k_.params[s->param];
  open("");
  scoped([&] {
    materialize_parts(s->value);
    for (const Value& i : s->indices) materialize_parts(i);
    before_store(s->param);
    ValueNode target_node{ValueKind::Load, Type{p.dtype, p.block_shape()}};
    target_node.param = s->param;
    target_node.operands.assign(s->indices.begin(), s->indices.begin() + s->id);
    Value target = std::make_shared<const ValueNode>(target_node);
    const lower::TensorAccess& a = access_of(target);
    if (a.never) return;
    std::vector<Value> trees = s->indices;
    trees.push_back(s->value);
    nest(
        s->value->type.shape, trees, nullptr,
        [&](const std::vector<Expr>& i) {
          std::vector<Expr> at;
          std::string mask = block_positions(s->indices, s->id, a, i, at);
          // A lane outside the valid part of the target's own block (the padding of
          // a partial block, whose loaded positions and values are fill values)
          // writes nothing, when the scattered block has the target block's shape.
          if (i.size() == a.block_shape.size() && s->value->type.shape.size() == i.size()) {
            for (const Expr& cond : a.conditions_at(i, /*fast=*/false)) {
              std::string lane = c(simplify(cond, env_));
              if (lane != "1") mask += " && " + lane;
            }
          }
          std::string offset = c(simplify(a.offset_at(at), env_));
          line_("if (" + mask + ") " +
                store_element(p, "nt_p" + std::to_string(s->param), offset, elem(s->value, i)));
        },
        /*hint=*/false);
    keep_alive_.push_back(target);
  });
  close();
  after_store(s->param);
}

void Emitter::emit_store_pointer(const Stmt& s) {
  distributable_ = false;
  const Param& p = k_.params[s->param];
  std::string ptr = "nt_p" + std::to_string(s->param);
  const Value& pointers = s->indices[0];
  const Value& value = s->indices[1];
  const Value& mask = s->indices[2];
  open("");
  scoped([&] {
    for (const Value& v : s->indices) materialize_parts(v);
    before_store(s->param);
    nest(
        pointers->type.shape, s->indices, nullptr,
        [&](const std::vector<Expr>& i) {
          std::string offset = fresh("nt_o");
          line_("const long " + offset + " = " + elem(pointers, i) + ";");  // data: a pointer's offset
          std::string write = s->kind == StmtKind::AtomicAdd
                                  ? atomic_add_element(p, ptr, offset, elem(value, i))
                                  : store_element(p, ptr, offset, elem(value, i));
          line_("if (" + elem(mask, i) + " && " + in_extent(s->param, offset) + ") " + write);
        },
        /*hint=*/false);
  });
  close();
  after_store(s->param);
}

void Emitter::emit_for(const Stmt& s) {
  materialize_parts(s->start);
  materialize_parts(s->stop);
  materialize_parts(s->step);
  with_loop_scope([&] { emit_for_loop(s); });
}

std::string loop_counter_type(const Stmt& loop) {
  const bool index_range = loop->start->kind == ValueKind::Constant &&
                           loop->stop->kind == ValueKind::Constant && loop->step->kind == ValueKind::Constant;
  return index_range ? kIndexType : "long";
}

void Emitter::emit_for_loop(const Stmt& s) {
  std::string v = fresh("nt_" + s->var + "_");
  std::string start = elem(s->start, {}), stop = elem(s->stop, {}), step = elem(s->step, {});
  const std::string counter = loop_counter_type(s);
  std::string cond;
  std::optional<int64_t> step_value;
  if (s->step->kind == ValueKind::Constant) step_value = s->step->expr.as_int();
  if (step_value && *step_value == 0) throw ValueError("range() arg 3 must not be zero");
  if (step_value)
    cond = v + (*step_value > 0 ? " < " : " > ") + "(" + counter + ")(" + stop + ")";
  else
    cond = "(" + step + " > 0 ? " + v + " < (" + counter + ")(" + stop + ") : " + v + " > (" + counter +
           ")(" + stop + "))";
  // Tensor-core operands loaded ahead (emitter_pipeline.cpp): the first NT_STAGES - 1
  // iterations' copies start before the loop; `it` counts iterations.
  const std::vector<const ValueNode*> invariant = stage_invariant_operands(s);
  std::set<const ValueNode*> deferrable = deferrable_dots(s);
  const bool defers = !deferrable.empty();
  const std::string buffers = defers ? kAsyncBuffersMacro : "NT_STAGES";
  const std::vector<PipelinedOperand> ahead = pipelined_operands(s, buffers);
  std::string it;
  if (!ahead.empty()) {
    open("");
    open("for (int nt_stage = 0; nt_stage < NT_STAGES - 1; ++nt_stage)");
    stage_ahead(s, ahead, start + " + nt_stage * " + step, stop, "nt_stage");
    close();
    close();
    it = fresh("nt_it");
    line_(kIndexType + " " + it + " = 0;");
  }
  open("for (" + counter + " " + v + " = " + start + "; " + cond + "; " + v + " += " + step +
       (it.empty() ? "" : ", ++" + it) + ")");
  if (step_value && *step_value > 0 && s->start->kind == ValueKind::Constant &&
      s->stop->kind == ValueKind::Constant) {
    env_.set_symbolic(v, s->start->expr, sub(s->stop->expr, 1));
  }
  bool swizzled = false;  // read by wgmma, which needs what the copies and stores wrote fenced
  for (const PipelinedOperand& o : ahead) swizzled = swizzled || !o.layout.swizzled.empty();
  auto landed = [&](const std::string& pending) {  // this thread's copies but `pending` groups, everyone's
    line_("NT_CP_ASYNC_WAIT(" + pending + ");");
    if (swizzled) line_("NT_ASYNC_PROXY_FENCE();");
    barrier();
  };
  if (!ahead.empty()) {
    const std::string next_slot = "(" + it + " + NT_STAGES - 1) % " + buffers;
    if (defers) {  // one barrier an iteration, before the copy ahead
      landed("NT_STAGES > 1 ? NT_STAGES - 2 : 0");
      stage_ahead(s, ahead, v + " + (NT_STAGES - 1) * " + step, stop, next_slot);
      line_("#if NT_STAGES == 1");  // the copy was this iteration's own
      landed("0");
      line_("#endif");
    } else {  // the copy ahead first, then the wait; a barrier at the end too
      stage_ahead(s, ahead, v + " + (NT_STAGES - 1) * " + step, stop, next_slot);
      landed("NT_STAGES - 1");
    }
    for (const PipelinedOperand& o : ahead)
      staged_operands_[o.load.get()] = {"(" + o.array + " + " + it + " % " + buffers + " * (" + o.slot + "))",
                                        o.layout};
  }
  auto saved = loop_vars_;
  loop_vars_[s->var] = v;
  auto saved_deferrable = std::move(deferrable_dots_);
  auto saved_deferred = std::move(deferred_wgmma_);
  deferrable_dots_ = ahead.empty() ? std::set<const ValueNode*>{} : std::move(deferrable);
  deferred_wgmma_.clear();
  scoped([&] { emit_list(s->body); });
  deferrable_dots_ = std::move(saved_deferrable);
  const auto deferred = std::move(deferred_wgmma_);
  deferred_wgmma_ = std::move(saved_deferred);
  loop_vars_ = saved;
  // The wgmma groups the body's dots left running: all but this iteration's are done (the
  // buffers they read are free), and after the loop all are.
  auto wait_deferred = [&](int pending) {
    if (deferred.empty()) return;
    line_("#if NT_WGMMA_DEFER");
    line_("NT_WGMMA_WAIT(" + std::to_string(pending) + ");");
    for (const auto& [acc, layout] : deferred) hold_wgmma_accumulators(*this, acc, layout);
    line_("#endif");
  };
  wait_deferred(1);
  if (!ahead.empty() && !defers) barrier();  // every warp is done with the buffer the next copy overwrites
  for (const PipelinedOperand& o : ahead) staged_operands_.erase(o.load.get());
  close();
  wait_deferred(0);
  if (!ahead.empty()) line_("NT_CP_ASYNC_WAIT(0);");
  // The loop may run again: its first copies overwrite buffers its last dots read.
  if (!ahead.empty() && defers) barrier();
  for (const ValueNode* v : invariant) staged_operands_.erase(v);
}

}  // namespace nt::codegen
