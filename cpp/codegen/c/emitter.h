// The kernel emitter behind generate_opencl (kernel_source.h): one pass over a
// lowered kernel's statements that writes one __kernel body, in one of three
// modes (Mode below; lower/program_layout.h says what they mean).
//
// In: a lowered Kernel. Out: KernelSource (run()) and, for the work-group
// mode, which held values turned out to be read elsewhere (misaligned()).
// Its parts, one file each:
//   emitter.cpp              the kernel's parameters and prologue, output, arrays,
//                            the context the block operations use (emit_context.h)
//   emitter_nests.cpp        loop nests, the mask-free fast path, vector-width hints
//   emitter_loop_order.cpp   which dimension of a 2-D nest goes innermost
//   emitter_index_tables.cpp where index tables (index_tables.h) go: before which nests and loops
//   emitter_transposed_pack.cpp which dot operands are packed by register transposes, and how
//                            their elements are addressed (the tiles: transposed_tiles.h)
//   emitter_row_runs.cpp     which blocks of flattened rows (an implicit GEMM's) are packed and
//                            stored in runs (the runs' loops: row_runs.h)
//   emitter_prefetch.cpp     which loops go in strips of 16 (strips.h), what each prefetches of the
//                            next program's blocks, and where a streamed store's elements go
//   emitter_values.cpp       tensor accesses and the C of a value's element
//   emitter_materialize.cpp  reductions, dots and operands held in memory (shared: shared_packs.h)
//   emitter_statements.cpp   Lets, locals, stores, scatters, loops, ifs
//   emitter_work_group.cpp   tile layouts, shared values, work-group reductions
//   emitter_row_slices.cpp   row vectors held in the rows of their blocks' layout (slice layouts)
//   emitter_mma_staging.cpp  tensor-core operands staged in their own type (cp.async copies)
//   emitter_pipeline.cpp     k loops loading tensor-core operands NT_STAGES - 1 iterations ahead
//   emitter_pair_stores.cpp  16-bit results of tensor-core layouts stored a pair of columns a word
//   emitter_work_group_dot.cpp  work-group dots, on tensor cores where the device has them (their
//                            k loops: mma_steps.h, wgmma_ptx.h's write_wgmma_steps())
//   emitter_wgmma.cpp        which k loops' accumulations go on Hopper's warpgroup MMAs (sm_90a)
// Components with interfaces of their own: index_tables.h (IndexTables), mma_steps.h,
// write_wgmma_steps(), reduction_c.h, transposed_tiles.h, row_runs.h and strips.h (over
// code_writer.h's CodeWriter), block_ops.h (over EmitContext), shared_packs.h.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/c/block_ops.h"
#include "codegen/c/c_expr.h"
#include "codegen/c/c_types.h"
#include "codegen/c/dot_kernel.h"
#include "codegen/c/emit_context.h"
#include "codegen/c/index_tables.h"
#include "codegen/c/kernel_source.h"
#include "codegen/c/math_calls.h"
#include "codegen/c/mma_operands.h"
#include "codegen/c/reduction_c.h"
#include "codegen/c/shared_packs.h"
#include "codegen/dialect.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "lower/program_layout.h"
#include "lower/tensor_access.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/simplify.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

// The emitter's files only include this header: the IR's names are theirs.
using namespace nt::ir;

// Are all of `e`'s symbols constexpr or meta (known when a configuration is built)?
bool is_compile_time(const Expr& e);

// The C type of `loop`'s counter: index arithmetic (kIndexType, int under NT_INDEX32) where its
// range is the kernel's shapes and constants; long where run-time scalars or data give it.
std::string loop_counter_type(const Stmt& loop);

// How the emitted source runs a program (lower/program_layout.h).
enum class Mode {
  WorkItem,     // on one work-item
  Elementwise,  // on NT_WORK_ITEMS work-items, each taking every NT_WORK_ITEMS-th element of the
                // innermost dimension of every nest; or on one (distributable() says which)
  WorkGroup,    // on NT_WORK_ITEMS > 1 work-items in tile layouts, sharing through local memory
};

class Emitter : public EmitContext, private IndexTables::Host {
 public:
  // `shared` (Mode::WorkGroup): the values (let_key(), local_key(), node_key()) to hold in local memory
  // though read only where they are computed; see misaligned().
  Emitter(const Kernel& kernel, Mode mode, std::set<std::string> shared = {},
          const Dialect& dialect = opencl_dialect());
  KernelSource run();
  // Mode::Elementwise: could every nest of the kernel be spread over a work-group's
  // work-items with nothing shared between them? Only with no private arrays (blocks held
  // in memory), reductions, dots, block operations, scatters, pointer stores, atomics,
  // prints or asserts (those need Mode::WorkGroup's local memory and barriers), and no
  // parameter stored twice or both stored and loaded (what one work-item wrote another
  // could read). Parameters that alias at launch (one tensor passed
  // twice) are not seen: as in upstream, a program's reads of what it wrote are unordered.
  bool distributable() const;
  // The source without the preamble of helpers: the macros and the __kernel.
  const std::string& kernel_text() const;
  // KernelSource::runtime_meta of the kernel whose text (before its signature) is `text`.
  std::vector<std::string> runtime_meta(const std::string& text) const;
  // Mode::WorkGroup: the values held by the work-items that compute them (let_key(), local_key(), node_key())
  // which the kernel reads elsewhere too (another element, another shape, a reduction, a block operation):
  // the source is wrong until they are emitted again as shared.
  const std::set<std::string>& misaligned() const;

 private:
  // --- output -------------------------------------------------------------
  void line_(const std::string& s);
  void open(const std::string& s);
  void close(const std::string& s = "}");
  std::string fresh(const std::string& prefix);
  std::string c(const Expr& e, const std::string& widen = "");  // c_expr(): `widen` casts its symbols

  // --- shapes and arrays --------------------------------------------------
  // The element count of a private array of `shape`, which must be known at
  // build time; declaring one (`dtype` given) adds to the private bytes.
  std::string array_size(const std::vector<Expr>& shape, const std::string& what,
                         std::optional<DType> dtype = std::nullopt);
  Expr flat_index(const std::vector<Expr>& shape, const std::vector<Expr>& index);
  std::string element_of(const std::string& name, const Type& type, const std::vector<Expr>& index);

  // --- loop nests ---------------------------------------------------------
  // Emits loops over `shape`; `body` gets the element index.
  void loops(const std::vector<Expr>& shape, const std::function<void(const std::vector<Expr>&)>& body,
             size_t d = 0, std::vector<Expr> index = {}, bool plain = false);
  // A loop nest over `shape` whose body reads `trees` (and writes through `target`, if any): a
  // fast path without masks when every block involved is wholly in bounds.
  // `hint`: whether the innermost loop may get a vector-width hint (vector_hint()); not for
  // nests that write through positions or pointers, nor stores of float16/bfloat16.
  // `fast_path`: emits the unmasked path itself instead of loops over `body`.
  // `prefetch`: `body` writes one element and nothing else, so its unmasked innermost loop
  // may be strip-mined to prefetch the next program's blocks (reread_loads()); a nest with no
  // dimensions leaves the loads to prefetch to `body` (a reduction's lanes). `strips`: the
  // unmasked innermost loop is strip-mined whenever it is hinted 16 lanes wide (write_array()'s
  // folds index their partial results by lane_of_last_). `reorder`: ordered_loops() may swap.
  void nest(const std::vector<Expr>& shape, const std::vector<Value>& trees,
            const lower::TensorAccess* target, const std::function<void(const std::vector<Expr>&)>& body,
            bool hint = true, const std::function<void()>& fast_path = nullptr, bool prefetch = false,
            bool strips = false, bool reorder = false);
  // loops(), or also the rows innermost where strides put rows near, columns apart.
  void ordered_loops(const std::vector<Expr>& shape, const std::vector<Value>& trees,
                     const lower::TensorAccess* target,
                     const std::function<void(const std::vector<Expr>&)>& body);
  // A new index variable `prefix<n>` of a loop over [0, extent), its bounds in env_.
  Expr index_variable(const std::string& prefix, const Expr& extent);
  // Loads read by a tree where it is emitted (not inside materialised nodes).
  void for_each_load(const Value& v, const std::function<void(const Value&)>& f);

  // --- the vector width of unmasked inner loops ------------------------------
  // The NT_UNIT_ macro of `stride` when it is a stride symbol of this kernel (else nullopt).
  std::optional<std::string> unit_macro_of(const Expr& stride) const;
  // The coefficient of `v` in `e` when `e` is affine in `v` (else nullopt).
  static std::optional<Expr> coefficient(const Expr& e, const std::string& v);
  // Element `index` of `v`, read through elementwise operations only (broadcasts and new axes
  // followed to the index each operand is read at): `visit` sees every value; false where it says
  // so or the tree holds anything else (private arrays are read at the element).
  bool elementwise_reads(const Value& v, const std::vector<Expr>& index,
                         const std::function<bool(const Value&, const std::vector<Expr>&)>& visit);
  // Before the innermost loop of an unmasked nest whose loads and store step through memory by
  // one element (where the unit-stride macros say so): a hint to vectorise it 512 bits wide (PoCL
  // prefers 256 on AVX-512 CPUs; min_vector_width(512) in run() makes 512 legal).
  void vector_hint(const std::vector<Value>& trees, const lower::TensorAccess* target,
                   const std::vector<Expr>& index, const std::string& inner);
  // The test under which vector_hint() hints (nullopt: none); `wide`: 8 lanes (64-bit), not 16.
  std::optional<std::string> vector_hint_test(const std::vector<Value>& trees,
                                              const lower::TensorAccess* target,
                                              const std::vector<Expr>& index, const std::string& inner,
                                              bool& wide);
  void emit_vector_hint(const std::string& test, bool wide);

  // --- the next program's blocks (Mode::WorkItem; emitter_prefetch.cpp) -------------------
  // Where a nest opts in (nest()'s `prefetch`) and its innermost loop is unit-stride and hinted
  // 16 lanes wide, each strip of 16 elements first asks for the same elements of the next
  // program's block (ProgramLayout::next_program()); the file's header says why.
  //
  // The loads of `trees` (outside materialised nodes) of parameters in `read_before`, read at
  // their tree's own element (not through a broadcast), the first of each parameter.
  std::vector<Value> reread_loads(const std::vector<Value>& trees, const std::set<int>& read_before);
  // The prefetch statements of `loads` at `index` (the strip's first element), under `test`.
  void emit_prefetches(const std::vector<Value>& loads, const std::vector<Expr>& index,
                       const std::string& test);
  // loops()'s innermost dimension `d` (variable `index.back()`) as strips of 16, each after
  // the prefetches of `loads`.
  // `stream`: the strips are a store's (stream_store_), each written to a private buffer of
  // 16 and from there to memory with one non-temporal vector store.
  void strip_mined_loop(const std::vector<Expr>& shape,
                        const std::function<void(const std::vector<Expr>&)>& body, size_t d,
                        std::vector<Expr> index, bool plain, const std::vector<Value>& loads,
                        const std::string& test, bool stream = false);
  // The innermost loop of a nest (loops()), its index `index.back()` declared: the hint `test`
  // (if any), strips for prefetches, or the plain loop.
  void innermost_loop(const std::vector<Expr>& shape,
                      const std::function<void(const std::vector<Expr>&)>& body, size_t d,
                      const std::vector<Expr>& index, bool plain, const std::optional<std::string>& test,
                      bool wide, const std::vector<Value>& prefetch);
  // The run-time test under which a store's hinted innermost loop streams (emit_store(): a
  // float32, int32 or uint32 target of 16 MiB or more whose row starts at a 64-byte boundary), or "".
  std::string stream_test(const std::vector<Expr>& index);

  // --- index tables (index_tables.h; where they go: emitter_index_tables.cpp) ----------
  //
  // Runs `emit` with what it writes held apart; then writes `before()` and that text.
  void written_after(const std::function<void()>& emit, const std::function<std::string()>& before);
  // Emits the nest `emit_nest` writes with tables for its shape `shape` before it.
  void with_index_tables(const std::vector<Expr>& shape, const std::function<void()>& emit_nest);
  // Emits the loop statement (or a k step's copies) `emit_loop` writes, its tables hoisted before it.
  void with_loop_scope(const std::function<void()>& emit_loop);
  // Mode::WorkGroup: the nest over `index` (variables of `shape`) that `emit_nest` writes, with
  // tables in local memory; `fixed`: per dimension, where a work-item reads an entry once.
  void with_group_tables(const std::vector<Expr>& shape, const std::vector<std::string>& index,
                         const std::vector<IndexTables::OnceRead>& fixed,
                         const std::function<void()>& emit_nest);
  // IndexTables::Host.
  BoundsEnv& bounds() override { return env_; }
  void declare_shared_table(const std::string& name, const std::string& count, Expr bytes) override;
  void add_private_bytes(Expr bytes) override { private_bytes_ = add(private_bytes_, bytes); }

  // --- the work-group layout (Mode::WorkGroup) ---------------------------------
  //
  // Every nest over a block shape known at build time walks the elements that the tile
  // layout of that shape (lower::ProgramLayout::tile_layout) gives this work-item. A value
  // read only at the element where it is computed (a Let, a local, a dot's result) stays
  // with the work-items that compute it, in private slots ("distributed"); any other held
  // value (reduction results, dot operands, block operations' arrays, and values read
  // elsewhere: misaligned()) lives in local memory ("shared"), declared at kernel scope,
  // with a barrier before and after every nest that writes it. Block operations and
  // statements with side effects beyond stores run on work-item 0 (serial_).
  struct Aligned {
    std::string shape;               // shape_key() of the nest's shape
    std::vector<std::string> index;  // the nest's index variables
    std::string slot;                // the work-item's slot of the element, as C
    std::string row_slot;            // the slot's row r (0 <= r < NT_R), as C
  };
  std::string shape_key(const std::vector<Expr>& shape);
  void collect_equal_sizes();                      // equal_sizes_, from k_.assumed_equal
  std::string equal_size(std::string size) const;  // the size (C) its equals all name
  static bool same_index(const std::vector<std::string>& names, const std::vector<Expr>& index);
  // The key a held value goes by in must_share_/misaligned_.
  static std::string let_key(int id);
  static std::string local_key(int id);
  static std::string node_key(const Value& v);
  // A block load by what it reads (the tracer makes a node per use of a parameter).
  static std::string load_key(const Value& load);
  // The id of the tile layout of `shape` (its macros NT_TX<id>, ...).
  int tile_layout(const std::vector<Expr>& shape);
  // `const long tx = ..., ty = ...;`: this work-item's coordinates in tile layout `layout`.
  static std::string lane_coordinates(int layout, const std::string& tx, const std::string& ty);
  // The nest over `shape` (sizes known at build time) in its tile layout.
  void tile_loops(const std::vector<Expr>& shape, const std::function<void(const std::vector<Expr>&)>& body);
  void barrier();
  // A held block `name` of `shape`: in Mode::WorkGroup shared (at kernel scope, in local
  // memory) unless `key` names a value that may stay distributed, else a private array.
  void new_array(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                 const std::string& what, const std::string& key = "");
  // A scalar that work-item 0 may set for all (Mode::WorkGroup: in local memory).
  void new_scalar(const std::string& name, DType dtype);
  // Declares work-group memory at kernel scope: an array of `count` (C) elements of `type`, or a
  // scalar (`count` empty), of at most `bytes` bytes, in the dialect's form, `align`ed (bytes).
  void declare_local(const std::string& type, const std::string& name, const std::string& count, Expr bytes,
                     const std::string& attributes = "", int align = 16);
  static int c_size(const std::string& ct);
  bool is_distributed(const std::string& name) const;
  // Code that one work-item runs for the work-group (block operations, atomics, prints):
  // what it writes is shared, seen by all after the barrier.
  void on_first_work_item(const std::function<void()>& f);
  // Which parameters the kernel loads, and how often it stores each: a store to one that is
  // loaded or stored again ends with a barrier, so that no work-item reads an element before
  // another has written it.
  void count_accesses();
  // Before a store to a parameter that is loaded or stored again: a barrier, so that no
  // work-item overwrites an element another has yet to read.
  void before_store(int param);
  // After one: a barrier (what one work-item wrote another may read), and what was held of
  // the parameter is forgotten.
  void after_store(int param);
  // Is `v` a reduction of the last axis of a block known at build time (or of all axes when
  // only the last is longer than 1)? Then emit_reduce_rows() folds it in the block's tile layout.
  bool reduces_rows(const Value& v);
  // A reduction folded where the tile layout of its operand holds the elements: each work-item
  // folds its columns of each of its rows, then the NT_TX work-items of a row meet in local
  // memory in a tree. What the operand reads at its own element stays in registers.
  void emit_reduce_rows(const Value& v);
  // Loads in `x` (a reduction's operand of `shape`) that the kernel reads again elsewhere:
  // loaded once into the work-items' slots, not twice from global memory.
  void hold_loads(const Value& x, const std::vector<Expr>& shape);
  // A reduction over a work-group: each work-item folds a strided part of a row into a
  // partial result, the partials meet in local memory in a tree, and the result goes to a
  // shared array (a shared scalar for a full reduction). Rows: emit_reduce_rows().
  void emit_reduce_group(const Value& v);
  // The dot in the tile layout of its result: operands in local memory, each work-item's
  // NT_R x NT_C elements accumulated in registers, a row of a and a column of b read per k;
  // or, on tensor cores, 16 steps of k at a time (emitter_work_group_dot.cpp).
  void emit_dot_group(const Value& v, const std::string& result, bool accumulate);
  // The shapes of dots tensor cores could multiply (their tile layouts may be the mma one), and of
  // those that go on warpgroup MMAs (accumulated_dots()).
  void collect_mma_shapes();
  // A tensor-core dot's operand in local memory laid out as `layout`, unless it is held already
  // (dense rows); `used` says which. `native`: the array holds the operand's own values
  // (d_.mma_async_staging: 16-bit ones as their bits), not `dtype`'s compute type.
  std::string pitched_operand(const Value& v, DType dtype, const StagedLayout& layout, int pad,
                              StagedLayout& used, bool& native);
  // `v` copied, between barriers, into a new array `prefix<n>` of the above (its own type where
  // d_.mma_async_staging) for a tensor-core dot.
  std::string staged_operand(const Value& v, DType dtype, const StagedLayout& layout, int pad,
                             const std::string& prefix);
  // `dot`'s a, held in registers in its own tile layout (register_operand(); CUDA C), or no array.
  HeldOperand registers_of_a(const Value& dot);
  // What operand `which` of tensor-core dot `dot` is staged from: b = trans(x) as x (rows copied as
  // they lie, read by ldmatrix without .trans) where 16-bit operands are staged in their own type.
  Value staged_value(const Value& dot, int which);
  // Where operand `which` (0: a, 1: b) of the tensor-core dot `dot` lies in local memory, and
  // the padding its rows take in the mma layout (`pad`).
  StagedLayout operand_layout(const Value& dot, int which, int& pad);
  // Declares the local array `name` of `type` for a dot operand of `shape` laid out as `layout` (rows
  // padded by `pad` elements in the mma layout; 1024-byte aligned where swizzled), `copies` of it
  // where given (NT_STAGES or NT_ASYNC_BUFFERS; counted in local_bytes by kStagesSymbol and
  // kWgmmaDeferSymbol); returns one copy's elements.
  std::string declare_operand_array(const std::string& type, const std::string& name,
                                    const std::vector<Expr>& shape, const StagedLayout& layout, int pad,
                                    int element_bytes, const std::string& copies,
                                    const std::string& attributes = "");
  // In the unmasked path of the copy of operand `v` into `array`: where `v` is a block loaded with
  // contiguous, 16-byte aligned rows, 16 bytes a thread by cp.async; else `copy` element by element.
  void copy_staged_rows(const Value& v, const std::string& array, const StagedLayout& layout,
                        const std::function<void(const std::vector<Expr>&)>& copy);
  // C: the 2-D block `shape` accessed as `a` has contiguous rows a multiple of `rows_by` elements
  // apart, and `ptr` + its first offset is `align`-byte aligned; "" unless the offset is affine.
  std::string unit_rows_test(const lower::TensorAccess& a, const std::vector<Expr>& shape,
                             const std::string& ptr, int rows_by, int align);
  // The C test under which the block `load` (a Load, accessed as `a`) may be copied by
  // emit_async_rows(): unit_rows_test() at 16 bytes, and rows a multiple of 16 bytes long; or "".
  std::string async_rows_test(const Value& load, const lower::TensorAccess& a, const std::string& pitch);
  // The cp.async copies of the block (16 bytes a thread at a time, `masked`: zeros there), not committed.
  void emit_async_rows(const Value& load, const lower::TensorAccess& a, const std::string& array,
                       const StagedLayout& layout, bool masked = false);
  // Opens a work-item's copies `copy` of `total`, counted to a known bound and unrolled (two scopes).
  void open_counted_copies(const std::string& total, const std::string& copy);
  // `load`, accessed as `a`, into `array`: by cp.async (not committed) where it is in bounds and
  // async_rows_test() holds, else element by element (gathers in runs) with every mask tested.
  void stage_block(const Value& load, const lower::TensorAccess& a, const std::string& array,
                   const StagedLayout& layout);

  // --- row vectors in the rows of their blocks' layout (emitter_row_slices.cpp) -----------
  struct RowFamily {
    std::vector<std::vector<Expr>> members;  // 2-D row_warps shapes of one row count
    int head = -1;                           // the first member's layout id, once registered
  };
  // The row families (by the shape_key() of their row vectors) and their members' keys.
  void collect_row_families();
  // The layout id of `key` where it is a family member's or its row vectors' (registering the whole
  // family), else -1.
  int family_layout(const std::string& key);
  // The distributed row vector `name` read at the row of the family member whose nest is being
  // emitted: its slot there; else nullopt.
  std::optional<std::string> slice_element(const std::string& name, const Type& type,
                                           const std::vector<Expr>& index);
  // Is `v` a row reduction of a family member's block into its row vectors' slice layout?
  bool reduces_into_slice(const Value& v);
  std::map<std::string, RowFamily> row_families_;
  std::map<std::string, std::string> family_of_;  // member key -> its row vectors' key

  // --- k loops whose tensor-core operands are loaded ahead (emitter_pipeline.cpp) ---------
  struct PipelinedOperand {
    Value load;           // the operand: a block loaded at the loop's index
    std::string array;    // NT_STAGES buffers of `slot` elements each
    StagedLayout layout;  // where its elements lie (operand_layout())
    std::string slot;
  };
  // The operands of `loop` to load NT_STAGES - 1 iterations ahead: the blocks its tensor-core dots
  // multiply, where the body writes no tensor (none without d_.mma_async_staging); `buffers` of
  // each (NT_STAGES, or kAsyncBuffersMacro where the loop defers its wgmma waits).
  std::vector<PipelinedOperand> pipelined_operands(const Stmt& loop, const std::string& buffers);
  // `loop`'s own dots, where all are accumulations (`acc += dot(a, b)`) of warpgroup-MMA shapes,
  // whose wgmma groups may run on into the next iteration (emitter_pipeline.cpp); else none.
  std::set<const ir::ValueNode*> deferrable_dots(const Stmt& loop);
  // While a loop that defers its wgmma waits emits its body: its own accumulated dots, which may
  // leave their groups running where both operands are its buffers (loaded ahead or before it:
  // staged_operands_); those that do (write_wgmma_steps()'s defer_macro) add their accumulators and
  // tile layouts, which the loop waits for (NT_WGMMA_WAIT) at each iteration's end and after it.
  std::set<const ir::ValueNode*> deferrable_dots_;
  std::vector<std::pair<std::string, int>> deferred_wgmma_;
  // `loop`'s dots' operands bound before it (Lets), staged once before it (the keys to drop after).
  std::vector<const ir::ValueNode*> stage_invariant_operands(const Stmt& loop);
  // The copies of the operands' blocks at loop index `index` (C), where it is below `stop`, into
  // slot `slot`, committed as one cp.async group (empty past the loop's end).
  void stage_ahead(const Stmt& loop, const std::vector<PipelinedOperand>& operands, const std::string& index,
                   const std::string& stop, const std::string& slot);
  // Is the distributed array `name` in the tile layout of `shape`?
  bool aligned_layout(const std::string& name, const std::vector<Expr>& shape);

  // --- tensor accesses ----------------------------------------------------
  Expr index_expr(const Value& v);
  const lower::TensorAccess& access_of(const Value& load);
  std::string mask_of(const lower::TensorAccess& a, const std::vector<Expr>& index);
  // Positions in a block (operands from `first` on, at element `index`) as
  // variables declared here, in `at`; returns the C test that they lie in the
  // block and that the element there is inside the tensor.
  std::string block_positions(const std::vector<Value>& operands, size_t first, const lower::TensorAccess& a,
                              const std::vector<Expr>& index, std::vector<Expr>& at);
  std::string load_element(const Param& p, const std::string& ptr, const std::string& offset);
  std::string store_element(const Param& p, const std::string& ptr, const std::string& offset,
                            const std::string& value);
  // An element offset from the tensor's element (0, ..., 0) that lies inside
  // the memory the tensor spans: raw pointers never reach outside it.
  std::string in_extent(int param, const std::string& offset);
  std::string atomic_add_element(const Param& p, const std::string& ptr, const std::string& offset,
                                 const std::string& value);
  std::string other_of(const Param& p);

  // --- values -------------------------------------------------------------
  // The C expression of element `index` of `v`, in v's compute type.
  std::string elem(const Value& v, const std::vector<Expr>& index);
  std::string unary_c(UnaryFn fn, const std::string& x, DType dtype);
  // Integer `/` and `%` that never trap: x86 raises SIGFPE for a division by zero (which a
  // padding element's divisor, read as 0, may be) and for MIN / -1. A zero divisor gives the
  // dividend (quotient) or 0 (remainder), undefined as in OpenCL and upstream; MIN / -1 wraps.
  static std::string integer_division(bool remainder, const std::string& a, const std::string& b,
                                      DType operand);
  std::string binary_c(BinaryFn fn, const std::string& a, const std::string& b, DType operand);

  // --- materialisation ----------------------------------------------------
  // Computes the reductions and dots a tree needs (innermost first) into
  // private temporaries, so the tree's own nest can read them.
  void materialize_parts(const Value& v);
  // A block as a private array (itself if it already is one of `dtype`), filled by pack_into().
  std::string as_array(const Value& v, DType dtype, const std::string& what);
  void pack_into(const Value& v, DType dtype, const std::string& name);
  // Mode::WorkItem: as_array() of a dot operand, packed once per launch for the programs that
  // read the same block where the device gives a workspace (shared_packs.h).
  std::string as_shared_array(const Value& v, DType dtype, const std::string& what, bool& shared);
  // Mode::WorkItem: `v`, a float32 or float16 block read with unit stride down its columns
  // (a transposed operand: `x.t()`, a linear layer's weight, `trans(k)` of a row-major block),
  // packed row-major into the private array `name` by 16 x 16 register transposes where its
  // strides allow (emitter_transposed_pack.cpp). False (nothing emitted) where `v` is not such
  // a block. `copy` writes one element of the packed array (the edges and the other paths).
  bool pack_transposed(const Value& v, DType dtype, const std::string& name,
                       const std::function<void(const std::vector<Expr>&)>& copy);
  // pitched_operand(): operands a pipelined k loop has staged already (the iteration's slot).
  std::map<const ir::ValueNode*, std::pair<std::string, StagedLayout>> staged_operands_;
  bool pipelined_ = false;        // a k loop loads ahead: the source defines NT_STAGES
  bool async_buffers_ = false;    // and one keeps NT_ASYNC_BUFFERS
  bool uses_transposes_ = false;  // the kernel needs nt_transpose16() and nt_transpose8()
  // Mode::WorkItem: `v`, a dot's `a` operand (float32) whose rows unravel a flattened dimension
  // (offset R(m) + C(k), R dividing m: an implicit GEMM's output positions), packed
  // column-major (a[k][m]) into a new private array, named by the result, in chunks of 16
  // rows, each a masked vector load per k where a run-time check finds the chunk's rows
  // consecutive (emitter_row_runs.cpp). "" (nothing emitted) where `v` is not such a block.
  std::string pack_row_runs(const Value& v, DType dtype);
  // Mode::WorkItem: the unmasked path of a store of a 2-D float32 block whose target rows
  // unravel a flattened dimension the same way (an implicit GEMM's output positions): in
  // chunks of 16 rows, one vector store per column where the chunk's rows are consecutive.
  // Null where the store is not such a store.
  std::function<void()> store_row_runs(const Param& p, const lower::TensorAccess& a, const Value& value,
                                       const std::vector<Expr>& shape, const std::string& ptr);
  // Pair stores of 2-D 16-bit blocks in tensor-core layouts (emitter_pair_stores.cpp): the unmasked
  // path of such a store, two adjacent columns a word where they may be, else `element`; or null.
  std::function<void()> store_pairs(const Param& p, const lower::TensorAccess& a, const Value& value,
                                    const std::vector<Expr>& shape, const std::string& ptr,
                                    const std::function<void(const std::vector<Expr>&)>& element);
  // An offset as R(m) + C(k), R not affine in m; nullopt otherwise (emitter_row_runs.cpp).
  std::optional<std::pair<Expr, Expr>> row_run_parts(const Expr& offset, const Expr& m, const Expr& k);
  // Inside index tables for `shape`: chunks of 16 rows (index m) and, per chunk, the check
  // that R (`parts.first`, of `parts` = R + C as row_run_parts() splits an offset) is
  // consecutive over it; then, per k, either one vectorised loop over the chunk around
  // `run(at)`, `at` the element's offset, or `each()` for each row and k.
  void row_run_chunks(const std::vector<Expr>& shape, const Expr& m, const Expr& k,
                      const std::pair<Expr, Expr>& parts,
                      const std::function<void(const std::string& at)>& run,
                      const std::function<void()>& each);
  // The array already holding `v` whole as `dtype`, or "" (a distributed one is misaligned).
  std::string held_array(const Value& v, DType dtype);
  // The operands packed into private arrays of the result's compute type (each converted
  // once per block), then the register-blocked micro-kernel (dot_kernel.h).
  void emit_dot(const Value& v, const std::string& result, bool accumulate);
  void emit_reduce(const Value& v);
  // A named private value (a Let or a local) of `type` set to `value`.
  // `key`: what the value goes by (let_key(), local_key(), node_key()) if it may stay with the work-items
  // computing it.
  void declare(const std::string& name, const Type& type, const Value& value, bool mutable_,
               const std::string& key = "");
  // `let_id`: the Let being written (-1: none), whose whole-block reductions
  // (let_reductions_) are folded in the same pass.
  void write_array(const std::string& name, const Type& type, const Value& value, int let_id = -1);
  // Mode::WorkItem: the sum, max and min of a whole Let block to a scalar (a softmax's
  // sum(numerator)), by the Let they read (collect_let_reductions()). write_array() folds them
  // as it writes the Let, into 16 partial results by the last index modulo 16 (the order of
  // emit_reduce()'s own fold), instead of a pass of their own over the array; a pass over a
  // 16 KB row in the cache measured ~4% of a softmax.
  void collect_let_reductions();
  std::map<int, std::vector<Value>> let_reductions_;
  std::string lane_of_last_;  // loops() -> a body: the innermost index's partial result
  // Does `v` read local `id` at other elements than the one being written?
  bool reads_local_elsewhere(const Value& v, int id, bool remapped = false);

  // --- statements ---------------------------------------------------------
  void emit_list(const StmtList& stmts);
  void emit_stmt(const Stmt& s);
  // Runs `f` with bindings made inside it forgotten afterwards.
  void scoped(const std::function<void()>& f);
  void emit_assign(const Stmt& s);
  void emit_store(const Stmt& s);
  // p[positions] = value: each element of `value` to the block element at its positions.
  void emit_scatter(const Stmt& s);
  void emit_store_pointer(const Stmt& s);
  void emit_for(const Stmt& s);
  void emit_for_loop(const Stmt& s);  // emit_for() but for the tables hoisted before it

  // --- EmitContext: what the block operations' code generators use (block_ops.h) ---
 public:
  void emit_line(const std::string& s) override;
  void emit_open(const std::string& s) override;
  void emit_close() override;
  void emit_else() override;
  std::string fresh_name(const std::string& prefix) override;
  std::string index_c(const Expr& e) override;
  std::string element(const Value& v, const std::vector<Expr>& index) override;
  void each_index(const std::vector<Expr>& shape,
                  const std::function<void(const std::vector<Expr>&)>& body) override;
  std::string array_of(const Value& v, DType dtype, const std::string& what) override;
  void declare_array(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                     const std::string& what) override;
  void declare_scalar(const std::string& name, DType dtype) override;
  void declare_scratch(const std::string& name, const std::vector<Expr>& shape, DType dtype,
                       const std::string& what) override;
  std::string count_c(const std::vector<Expr>& shape) override;
  std::string flat_c(const std::vector<Expr>& shape, const std::vector<Expr>& index) override;
  void materialize(const Value& v) override;
  std::string materialized_name(const Value& v) override;
  void set_materialized(const Value& v, const std::string& name) override;
  void set_combine_args(const std::vector<std::string>& names) override;
  std::string combine_arg(int index) override;
  void bind_let(int id, const std::string& name) override;
  bool let_used(int id) override;
  const Param& param(int index) override;
  int program_dims() override;
  const Dialect& dialect() override;

 private:
  std::vector<std::string> combine_args_;
  std::optional<std::set<int>> let_uses_;
  const Kernel& k_;
  const Dialect& d_;
  lower::ProgramLayout layout_;
  BoundsEnv env_;
  std::ostringstream body_;
  int indent_ = 1;
  int counter_ = 0;
  bool fast_ = false;
  const bool distribute_;
  bool distributable_ = true;
  std::set<int> stored_params_, loaded_params_;
  const std::vector<Value>* vector_trees_ = nullptr;  // nest() -> loops(): hint the innermost loop
  const lower::TensorAccess* vector_target_ = nullptr;
  std::vector<Value> prefetch_loads_;  // nest() -> loops() or a reduction: reread_loads()
  bool strips_ = false;                // nest() -> loops(): strip-mine the hinted innermost loop
  // emit_store() -> loops(): the store whose unmasked, hinted innermost loop may stream (write
  // around the caches: its target is too big to be read from them again soon).
  struct StreamedStore {
    int param = -1;
    const lower::TensorAccess* access = nullptr;
  };
  std::optional<StreamedStore> stream_store_;
  std::string stream_buffer_;  // strip_mined_loop() -> the store's body: write here, at lane_of_last_
  SymbolMap next_program_;     // program symbol -> its nt_next_ name, once declared
  std::vector<std::string> next_program_lines_;  // their declarations, after the prologue
  std::streampos after_prologue_ = 0;
  std::set<std::string> declared_;
  std::map<std::string, SymbolAttrs> symbols_;
  Expr private_bytes_ = Expr(0);
  Workspace workspace_;                                               // as_shared_array()'s regions
  const SharedPackKernel shared_kernel_ = scan_for_shared_packs(k_);  // after k_
  std::vector<std::string> launch_macros_;  // 0 unless a launch defines them (unit strides, aligned rows)
  std::map<const ValueNode*, std::string> materialized_;
  std::map<const ValueNode*, lower::TensorAccess> accesses_;
  std::map<int, std::string> lets_, locals_;
  std::map<std::string, std::string> loop_vars_;
  std::vector<Value> keep_alive_;  // nodes whose addresses key the maps above
  // Mode::WorkGroup (see "the work-group layout" above).
  const bool group_ = false;
  bool serial_ = false;                                    // emitting for work-item 0 alone
  IndexTables tables_{*this, group_};                      // after group_, which it reads
  std::optional<Aligned> aligned_;                         // the innermost tile nest being emitted
  std::set<std::string> must_share_, misaligned_;          // value keys
  std::map<std::string, std::string> distributed_;         // array name -> value key
  std::map<std::string, std::string> distributed_shapes_;  // array name -> shape_key()
  std::map<std::string, int> layouts_;                     // shape_key() -> tile layout id
  std::map<std::string, std::string> equal_sizes_;         // a size (C) -> one it is asserted equal to
  std::set<std::string> mma_shapes_, wgmma_shapes_, row_warp_shapes_;  // collect_mma_shapes()
  std::string layout_macros_;
  std::vector<std::string> local_decls_;  // shared arrays and scalars, at kernel scope
  std::string local_end_ = "0";           // the dynamic buffer's bytes in use (C), where the dialect has one
  Expr local_bytes_ = Expr(0);
  std::set<int> reread_params_;  // stored and then loaded or stored again: before_store(), after_store()
  std::map<std::string, int> load_uses_;     // load_key() -> how many times the kernel reads it
  std::map<std::string, std::string> held_;  // load_key() -> the array holding it (hold_loads())
  std::string kernel_text_;
};

}  // namespace nt::codegen
